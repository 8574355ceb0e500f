/* HTTP/1.x heads for the proxy. Every byte here comes either from the
 * sandboxed command or from an arbitrary upstream server, and the proxy sits
 * between two parsers it does not control, so any input two reasonable HTTP
 * implementations could frame differently is refused rather than guessed at:
 * that difference is what request smuggling and response splitting exploit. */
#include "proxy/http.h"

#include <limits.h>
#include <string.h>

#include "src/util.h"

/* A chunk-size line (size and extensions) longer than this is refused:
 * nothing legitimate needs it, and an unbounded extension lets a client make
 * the proxy scan forever for a line end that a peer may place elsewhere. */
#define CHUNK_LINE_MAX 4096

/* Content-Length and chunk sizes above this are refused: they fit a uint64_t,
 * but a peer or our own arithmetic holding them in off_t/ssize_t would wrap. */
#define BODY_SIZE_MAX ((uint64_t)INT64_MAX)

static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool ascii_caseeq(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen != blen) {
        return false;
    }
    for (size_t i = 0; i < alen; i++) {
        if (ascii_lower(a[i]) != ascii_lower(b[i])) {
            return false;
        }
    }
    return true;
}

static bool is_name(const struct px_http_header *h, const char *name)
{
    return ascii_caseeq(h->name, h->name_len, name, strlen(name));
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_ows(unsigned char c)
{
    return c == ' ' || c == '\t';
}

/* RFC 9110 token characters. */
static bool is_tchar(unsigned char c)
{
    if (is_alpha(c) || is_digit(c)) {
        return true;
    }
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* field-vchar / SP / HTAB. Every other control byte is refused: NUL, CR and
 * LF end a line early in some parsers, and VT/FF count as whitespace in
 * others ("Transfer-Encoding:\x0bchunked" smuggling). */
static bool is_field_char(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* RFC 3986 reg-name without pct-encoded: unreserved and sub-delims. '%' is
 * out because WHATWG URL parsers decode it in hosts ("127%2e0.0.1" is
 * 127.0.0.1 to them, an unparsable name to us); '@' (userinfo), '\\' (a
 * slash to WHATWG), '/', '?', '#' and ':' are structure, never host bytes,
 * and letting them through is how "allowed.com@evil.com" and
 * "evil.com\\allowed.com" slip past a host filter. */
static bool is_regname_char(unsigned char c)
{
    if (is_alpha(c) || is_digit(c)) {
        return true;
    }
    return c != 0 && strchr("-._~!$&'()*+,;=", c) != NULL;
}

static bool is_v6_char(unsigned char c)
{
    /* No '%': a zone id ("fe80::1%25eth0") names a host interface. */
    return is_hex(c) || c == ':' || c == '.';
}

static size_t trim_start(const char *p, size_t i, size_t end)
{
    while (i < end && is_ows((unsigned char)p[i])) {
        i++;
    }
    return i;
}

static size_t trim_end(const char *p, size_t start, size_t end)
{
    while (end > start && is_ows((unsigned char)p[end - 1])) {
        end--;
    }
    return end;
}

/* ---- lines ---------------------------------------------------------------- */

enum line_status {
    LINE_OK,
    LINE_MORE,
    LINE_BAD,
};

struct line {
    const char *p;
    size_t len; /* without the terminator */
    bool crlf;  /* ended by CRLF rather than a bare LF */
};

/* The next line of buf[pos..end). A bare CR (one not followed by LF) and NUL
 * are refused even in a line not yet complete: some parsers end lines at CR
 * or at NUL, and so would see a header we do not. */
static enum line_status next_line(const char *buf, size_t pos, size_t end, struct line *ln,
                                  size_t *next)
{
    for (size_t i = pos; i < end; i++) {
        unsigned char c = (unsigned char)buf[i];

        if (c == '\n') {
            ln->p = buf + pos;
            ln->crlf = i > pos && buf[i - 1] == '\r';
            ln->len = i - pos - (ln->crlf ? 1 : 0);
            *next = i + 1;
            return LINE_OK;
        }
        if (c == '\0') {
            return LINE_BAD;
        }
        if (c == '\r' && i + 1 < end && buf[i + 1] != '\n') {
            return LINE_BAD;
        }
    }
    return LINE_MORE;
}

/* No complete head within what we have: wait, unless we already hold as much
 * as a head may take (a client trickling an endless header must not pin the
 * proxy's buffer). */
static enum px_http_result need_more(size_t len)
{
    return len >= PX_HTTP_HEAD_MAX ? PX_HTTP_TOO_LARGE : PX_HTTP_INCOMPLETE;
}

/* name ":" OWS value OWS. A line starting with whitespace is obs-fold (a
 * continuation some parsers glue onto the previous header and others treat
 * as a header of its own); whitespace between name and colon makes
 * "Transfer-Encoding : chunked" a header to some parsers and noise to others.
 * RFC 9112 says to reject both, and we do. */
static bool parse_header_line(const struct line *ln, struct px_http_header *h)
{
    const char *p = ln->p;
    size_t n = ln->len;
    size_t i = 0;
    size_t vs, ve;

    while (i < n && is_tchar((unsigned char)p[i])) {
        i++;
    }
    if (i == 0 || i == n || p[i] != ':') {
        return false;
    }
    for (size_t k = i + 1; k < n; k++) {
        if (!is_field_char((unsigned char)p[k])) {
            return false;
        }
    }
    vs = trim_start(p, i + 1, n);
    ve = trim_end(p, vs, n);
    h->name = p;
    h->name_len = i;
    h->value = p + vs;
    h->value_len = ve - vs;
    return true;
}

/* Header lines from pos up to and including the empty line. A header line may
 * end in a bare LF (as nginx accepts); the rebuilt request always uses CRLF,
 * so the upstream never sees one. */
static enum px_http_result parse_headers(const char *buf, size_t len, size_t pos,
                                         struct px_http_header *hdrs, size_t *n_hdrs,
                                         size_t *head_len)
{
    size_t end = len < PX_HTTP_HEAD_MAX ? len : PX_HTTP_HEAD_MAX;

    for (;;) {
        struct line ln;
        size_t next;

        switch (next_line(buf, pos, end, &ln, &next)) {
        case LINE_BAD:
            return PX_HTTP_BAD;
        case LINE_MORE:
            return need_more(len);
        case LINE_OK:
            break;
        }
        if (ln.len == 0) {
            *head_len = next;
            return PX_HTTP_OK;
        }
        if (*n_hdrs == PX_HTTP_MAX_HEADERS) {
            return PX_HTTP_TOO_LARGE;
        }
        if (!parse_header_line(&ln, &hdrs[*n_hdrs])) {
            return PX_HTTP_BAD;
        }
        (*n_hdrs)++;
        pos = next;
    }
}

/* "HTTP/1.0" or "HTTP/1.1"; the minor version, or -1. */
static int parse_version(const char *p, size_t n)
{
    if (n != 8 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1')) {
        return -1;
    }
    return p[7] - '0';
}

/* 1*DIGIT, 1..65535. */
static bool parse_port(const char *p, size_t n, unsigned *port)
{
    unsigned v = 0;

    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!is_digit((unsigned char)p[i])) {
            return false;
        }
        v = v * 10 + (unsigned)(p[i] - '0');
        if (v > 65535) {
            return false;
        }
    }
    if (v == 0) {
        return false;
    }
    *port = v;
    return true;
}

/* host [":" port] or "[" v6 "]" [":" port]. */
static bool parse_authority(const char *p, size_t n, bool port_required, const char **host,
                            size_t *host_len, unsigned *port)
{
    size_t i;

    if (n == 0) {
        return false;
    }
    if (p[0] == '[') {
        bool colon = false;

        for (i = 1; i < n && p[i] != ']'; i++) {
            if (!is_v6_char((unsigned char)p[i])) {
                return false;
            }
            colon = colon || p[i] == ':';
        }
        if (i == n || !colon) {
            return false;
        }
        *host = p + 1;
        *host_len = i - 1;
        i++;
    } else {
        for (i = 0; i < n && p[i] != ':'; i++) {
            if (!is_regname_char((unsigned char)p[i])) {
                return false;
            }
        }
        if (i == 0) {
            return false;
        }
        *host = p;
        *host_len = i;
    }
    if (i == n) {
        if (port_required) {
            return false;
        }
        *port = 80;
        return true;
    }
    if (p[i] != ':') {
        return false;
    }
    return parse_port(p + i + 1, n - i - 1, port);
}

/* http://authority[/path][?query][#fragment]. */
static bool parse_absolute(const char *p, size_t n, struct px_http_request *out)
{
    size_t a = 7, e;

    /* Only plain http: https goes through CONNECT, and any other scheme
     * (ftp:, file:, gopher:) would make the upstream request mean something
     * else than the filter saw. */
    if (n < 7 || !ascii_caseeq(p, 4, "http", 4) || memcmp(p + 4, "://", 3) != 0) {
        return false;
    }
    e = a;
    while (e < n && p[e] != '/' && p[e] != '?' && p[e] != '#') {
        e++;
    }
    /* userinfo: "http://allowed.example@evil.example/" reads as the allowed
     * host to a careless filter and connects to the other one. */
    if (memchr(p + a, '@', e - a) != NULL) {
        return false;
    }
    if (!parse_authority(p + a, e - a, false, &out->host, &out->host_len, &out->port)) {
        return false;
    }
    if (e == n || p[e] == '#') {
        out->target = "/";
        out->target_len = 1;
    } else {
        const char *hash = memchr(p + e, '#', n - e);

        /* The fragment is the client's business, never sent upstream. A
         * query right after the authority ("http://h?q") keeps its '?'
         * first; px_http_build_request puts the '/' in front. */
        out->target = p + e;
        out->target_len = (hash ? (size_t)(hash - p) : n) - e;
    }
    return true;
}

/* method SP request-target SP HTTP-version, exactly one SP each. */
static bool parse_request_line(const struct line *ln, struct px_http_request *out)
{
    const char *p = ln->p;
    size_t n = ln->len;
    size_t i = 0, ts, te;

    while (i < n && is_tchar((unsigned char)p[i])) {
        i++;
    }
    if (i == 0 || i == n || p[i] != ' ') {
        return false;
    }
    out->method = p;
    out->method_len = i;
    ts = ++i;
    while (i < n && (unsigned char)p[i] > 0x20 && (unsigned char)p[i] < 0x7f) {
        i++;
    }
    te = i;
    if (te == ts || i == n || p[i] != ' ') {
        return false;
    }
    out->version_minor = parse_version(p + i + 1, n - i - 1);
    if (out->version_minor < 0) {
        return false;
    }
    /* CONNECT is case-sensitive (RFC 9110 9.1); "connect" is some other
     * method and then must carry an absolute URL. */
    if (out->method_len == 7 && memcmp(p, "CONNECT", 7) == 0) {
        out->is_connect = true;
        return parse_authority(p + ts, te - ts, true, &out->host, &out->host_len, &out->port);
    }
    /* Origin-form ("/path") names no host to filter; asterisk-form and
     * authority-form belong to OPTIONS and CONNECT only. */
    return parse_absolute(p + ts, te - ts, out);
}

/* ---- framing ------------------------------------------------------------ */

struct framing {
    bool has_cl;
    uint64_t cl;
    bool has_te;
    unsigned te_chunked;   /* how many codings are "chunked" */
    bool te_only_chunked;  /* every coding is "chunked" */
    bool te_chunked_final; /* the last coding is "chunked" */
    bool conn_close;
    bool conn_keep_alive;
    size_t n_host;
    const struct px_http_header *host;
};

/* 1*DIGIT up to BODY_SIZE_MAX. A list ("5, 5"), a sign or spaces inside are
 * refused: parsers that take the first number, the last, or the sum of a
 * list disagree on where the body ends (CL.CL smuggling). */
static bool parse_content_length(const char *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;

    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned d;

        if (!is_digit((unsigned char)p[i])) {
            return false;
        }
        d = (unsigned)(p[i] - '0');
        if (v > (BODY_SIZE_MAX - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* Calls fn for each non-empty, OWS-trimmed element of a comma list. */
static void each_element(const struct px_http_header *h,
                         void (*fn)(const char *e, size_t n, void *arg), void *arg)
{
    size_t i = 0;

    while (i <= h->value_len) {
        size_t s = i, e;

        while (i < h->value_len && h->value[i] != ',') {
            i++;
        }
        s = trim_start(h->value, s, i);
        e = trim_end(h->value, s, i);
        if (e > s) {
            fn(h->value + s, e - s, arg);
        }
        i++;
    }
}

static void te_element(const char *e, size_t n, void *arg)
{
    struct framing *f = arg;
    bool chunked = ascii_caseeq(e, n, "chunked", 7);

    f->te_chunked += chunked ? 1 : 0;
    f->te_only_chunked = f->te_only_chunked && chunked;
    f->te_chunked_final = chunked;
}

static void conn_element(const char *e, size_t n, void *arg)
{
    struct framing *f = arg;

    if (ascii_caseeq(e, n, "close", 5)) {
        f->conn_close = true;
    } else if (ascii_caseeq(e, n, "keep-alive", 10)) {
        f->conn_keep_alive = true;
    }
}

static bool has_element(const struct px_http_header *h)
{
    for (size_t i = 0; i < h->value_len; i++) {
        if (h->value[i] != ',' && !is_ows((unsigned char)h->value[i])) {
            return true;
        }
    }
    return false;
}

static enum px_http_result read_framing(const struct px_http_header *hdrs, size_t n,
                                        struct framing *f)
{
    memset(f, 0, sizeof(*f));
    f->te_only_chunked = true;
    for (size_t i = 0; i < n; i++) {
        const struct px_http_header *h = &hdrs[i];

        if (is_name(h, "content-length")) {
            /* Even two equal values are refused: RFC 9110 lets a recipient
             * merge them, but not every peer does. */
            if (f->has_cl || !parse_content_length(h->value, h->value_len, &f->cl)) {
                return PX_HTTP_BAD;
            }
            f->has_cl = true;
        } else if (is_name(h, "transfer-encoding")) {
            /* An empty coding list frames nothing and means nothing. */
            if (!has_element(h)) {
                return PX_HTTP_BAD;
            }
            f->has_te = true;
            each_element(h, te_element, f);
        } else if (is_name(h, "connection")) {
            each_element(h, conn_element, f);
        } else if (is_name(h, "host")) {
            f->n_host++;
            if (!f->host) {
                f->host = h;
            }
        }
    }
    /* Both framings at once is the classic CL.TE / TE.CL desync: the proxy
     * and the peer each pick one. RFC 9112 6.1 allows treating it as an
     * error; we always do, for requests and responses alike. */
    if (f->has_cl && f->has_te) {
        return PX_HTTP_BAD;
    }
    /* "chunked" applied twice is forbidden (RFC 9112 7), and peers decode
     * it once or twice. */
    if (f->te_chunked > 1) {
        return PX_HTTP_BAD;
    }
    return PX_HTTP_OK;
}

static bool keep_alive(int version_minor, const struct framing *f)
{
    if (f->conn_close) {
        return false;
    }
    return version_minor >= 1 || f->conn_keep_alive;
}

enum px_http_result px_http_parse_request(const char *buf, size_t len, struct px_http_request *out)
{
    size_t end = len < PX_HTTP_HEAD_MAX ? len : PX_HTTP_HEAD_MAX;
    struct framing f;
    struct line ln;
    size_t pos;
    enum px_http_result r;

    memset(out, 0, sizeof(*out));
    switch (next_line(buf, 0, end, &ln, &pos)) {
    case LINE_BAD:
        return PX_HTTP_BAD;
    case LINE_MORE:
        return need_more(len);
    case LINE_OK:
        break;
    }
    /* A bare LF ending the request line, or empty lines before it, are
     * where parsers that resynchronise differently part ways. */
    if (!ln.crlf || !parse_request_line(&ln, out)) {
        return PX_HTTP_BAD;
    }
    r = parse_headers(buf, len, pos, out->headers, &out->n_headers, &out->head_len);
    if (r != PX_HTTP_OK) {
        return r;
    }
    r = read_framing(out->headers, out->n_headers, &f);
    if (r != PX_HTTP_OK) {
        return r;
    }
    /* Two Host headers: the filter may check one and the upstream route by
     * the other (RFC 9112 3.2 requires a 400). */
    if (f.n_host > 1) {
        return PX_HTTP_BAD;
    }
    if (f.host) {
        out->host_header = f.host->value;
        out->host_header_len = f.host->value_len;
    }
    if (f.has_te) {
        /* A request coding we cannot frame ("gzip", "chunked, gzip",
         * "xchunked") leaves the body length unknown: RFC 9112 6.3 demands a
         * 400. An HTTP/1.0 request has no Transfer-Encoding at all, and a
         * 1.0 peer would frame it by Content-Length or not at all. */
        if (!f.te_only_chunked || out->version_minor == 0) {
            return PX_HTTP_BAD;
        }
        out->body = PX_BODY_CHUNKED;
    } else if (f.has_cl) {
        out->body = PX_BODY_LENGTH;
        out->content_length = f.cl;
    } else {
        out->body = PX_BODY_NONE;
    }
    /* After CONNECT the bytes are the tunnel; a CONNECT "body" would be
     * tunnel bytes to one side and a body to the other. */
    if (out->is_connect) {
        if (f.has_te || (f.has_cl && f.cl != 0)) {
            return PX_HTTP_BAD;
        }
        out->body = PX_BODY_NONE;
        out->content_length = 0;
    }
    out->keep_alive = keep_alive(out->version_minor, &f);
    return PX_HTTP_OK;
}

/* HTTP-version SP 3DIGIT [SP reason-phrase]. The missing SP before an empty
 * reason is tolerated: servers send "HTTP/1.1 200\r\n". */
static bool parse_status_line(const struct line *ln, struct px_http_response *out)
{
    const char *p = ln->p;
    size_t n = ln->len;

    if (n < 12 || p[8] != ' ') {
        return false;
    }
    out->version_minor = parse_version(p, 8);
    if (out->version_minor < 0) {
        return false;
    }
    if (p[9] < '1' || p[9] > '5' || !is_digit((unsigned char)p[10]) ||
        !is_digit((unsigned char)p[11])) {
        return false;
    }
    out->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    if (n == 12) {
        return true;
    }
    if (p[12] != ' ') {
        return false;
    }
    for (size_t i = 13; i < n; i++) {
        if (!is_field_char((unsigned char)p[i])) {
            return false;
        }
    }
    return true;
}

enum px_http_result px_http_parse_response(const char *buf, size_t len, bool head_request,
                                           struct px_http_response *out)
{
    size_t end = len < PX_HTTP_HEAD_MAX ? len : PX_HTTP_HEAD_MAX;
    struct framing f;
    struct line ln;
    size_t pos;
    enum px_http_result r;

    memset(out, 0, sizeof(*out));
    switch (next_line(buf, 0, end, &ln, &pos)) {
    case LINE_BAD:
        return PX_HTTP_BAD;
    case LINE_MORE:
        return need_more(len);
    case LINE_OK:
        break;
    }
    if (!ln.crlf || !parse_status_line(&ln, out)) {
        return PX_HTTP_BAD;
    }
    r = parse_headers(buf, len, pos, out->headers, &out->n_headers, &out->head_len);
    if (r != PX_HTTP_OK) {
        return r;
    }
    r = read_framing(out->headers, out->n_headers, &f);
    if (r != PX_HTTP_OK) {
        return r;
    }
    out->keep_alive = keep_alive(out->version_minor, &f);
    /* RFC 9112 6.3, in its order. */
    if (head_request || out->status < 200 || out->status == 204 || out->status == 304) {
        out->body = PX_BODY_NONE;
    } else if (f.has_te) {
        /* A 1.0 message with Transfer-Encoding has faulty framing (RFC 9112
         * 6.1), and a final coding other than chunked has none: both run
         * to the close. */
        out->body =
            (f.te_chunked_final && out->version_minor >= 1) ? PX_BODY_CHUNKED : PX_BODY_CLOSE;
    } else if (f.has_cl) {
        out->body = PX_BODY_LENGTH;
        out->content_length = f.cl;
    } else {
        out->body = PX_BODY_CLOSE;
    }
    /* The connection cannot be reused after a body framed by the close, nor
     * after a 1.0 message whose framing was faulty. */
    if (out->body == PX_BODY_CLOSE || (f.has_te && out->version_minor == 0)) {
        out->keep_alive = false;
    }
    return PX_HTTP_OK;
}

const struct px_http_header *px_http_find(const struct px_http_header *h, size_t n,
                                          const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (is_name(&h[i], name)) {
            return &h[i];
        }
    }
    return NULL;
}

struct conn_match {
    const struct px_http_header *h;
    bool found;
};

static void conn_names(const char *e, size_t n, void *arg)
{
    struct conn_match *m = arg;

    if (ascii_caseeq(e, n, m->h->name, m->h->name_len)) {
        m->found = true;
    }
}

bool px_http_is_hop_by_hop(const struct px_http_request *req, const struct px_http_header *h)
{
    static const char *const hop[] = {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    };
    struct conn_match m = { .h = h, .found = false };

    for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++) {
        if (is_name(h, hop[i])) {
            return true;
        }
    }
    /* "Connection: content-length" must not strip the framing header while
     * the body is still forwarded: the upstream would read the body as the
     * next request (smuggling through hop-by-hop stripping). */
    if (!req || is_name(h, "content-length")) {
        return false;
    }
    for (size_t i = 0; i < req->n_headers && i < PX_HTTP_MAX_HEADERS; i++) {
        if (is_name(&req->headers[i], "connection")) {
            each_element(&req->headers[i], conn_names, &m);
        }
    }
    return m.found;
}

/* ---- building ----------------------------------------------------------- */

struct out_buf {
    char *p;
    size_t size;
    size_t len;
    bool overflow;
};

static void put(struct out_buf *b, const char *s, size_t n)
{
    if (b->overflow || n > b->size - b->len) {
        b->overflow = true;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void put_str(struct out_buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_uint(struct out_buf *b, unsigned v)
{
    char d[12];
    size_t i = sizeof(d);

    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    put(b, d + i, sizeof(d) - i);
}

/* The canonical host becomes a header line: a CR, LF or space in it would
 * inject headers or a second request, so anything but visible ASCII (and
 * brackets, which we add ourselves) is refused. */
static bool host_is_safe(const char *host)
{
    if (host[0] == '\0') {
        return false;
    }
    for (const char *c = host; *c; c++) {
        unsigned char u = (unsigned char)*c;

        if (u <= 0x20 || u >= 0x7f || u == '[' || u == ']' || u == '/' || u == '@') {
            return false;
        }
    }
    return true;
}

ssize_t px_http_build_request(const struct px_http_request *req, const char *host, unsigned port,
                              char *out, size_t outsz)
{
    struct out_buf b = { .p = out, .size = outsz, .len = 0, .overflow = false };
    bool v6;

    if (req->is_connect || !req->method || !req->target || req->target_len == 0 || !host ||
        !host_is_safe(host) || port == 0 || port > 65535) {
        return -1;
    }
    v6 = strchr(host, ':') != NULL;
    put(&b, req->method, req->method_len);
    put_str(&b, " ");
    if (req->target[0] != '/') {
        put_str(&b, "/");
    }
    put(&b, req->target, req->target_len);
    put_str(&b, " HTTP/1.1\r\nHost: ");
    put_str(&b, v6 ? "[" : "");
    put_str(&b, host);
    put_str(&b, v6 ? "]" : "");
    if (port != 80) {
        put_str(&b, ":");
        put_uint(&b, port);
    }
    put_str(&b, "\r\n");
    for (size_t i = 0; i < req->n_headers && i < PX_HTTP_MAX_HEADERS; i++) {
        const struct px_http_header *h = &req->headers[i];

        /* The client's Host may name another host than the URL; the
         * upstream must route by what the filter checked. */
        if (is_name(h, "host") || px_http_is_hop_by_hop(req, h)) {
            continue;
        }
        put(&b, h->name, h->name_len);
        put_str(&b, ": ");
        put(&b, h->value, h->value_len);
        put_str(&b, "\r\n");
    }
    if (req->body == PX_BODY_CHUNKED) {
        put_str(&b, "Transfer-Encoding: chunked\r\n");
    }
    put_str(&b, "\r\n");
    if (b.overflow || b.len > SSIZE_MAX) {
        return -1;
    }
    return (ssize_t)b.len;
}

/* ---- chunked bodies ------------------------------------------------------ */

enum chunk_state {
    CH_SIZE_FIRST = 0, /* a zeroed struct px_chunked starts here */
    CH_SIZE,
    CH_SIZE_WS,
    CH_EXT,
    CH_SIZE_LF,
    CH_DATA,
    CH_DATA_CR,
    CH_DATA_LF,
    CH_TRAILER_START,
    CH_TRAILER_NAME,
    CH_TRAILER_VALUE,
    CH_TRAILER_LF,
    CH_END_LF,
    CH_DONE,
    CH_ERROR,
};

/* One byte of the framing (anything but chunk data). Returns the next state.
 * Every line must end in CRLF: the bytes are relayed unchanged, and a peer
 * that ends a chunk line at a bare LF, or reads "0x5", "+5" or " 5" as a size,
 * would frame a different body (TE.TE smuggling). */
static enum chunk_state chunk_step(struct px_chunked *c, enum chunk_state s, unsigned char ch)
{
    int v;

    switch (s) {
    case CH_SIZE_FIRST:
    case CH_SIZE:
        v = nf_hex_value(ch);
        if (v >= 0) {
            /* Sizes past 63 bits wrap in a peer that holds them signed,
             * and past 64 bits in everyone. */
            if (c->remaining > (BODY_SIZE_MAX - (uint64_t)v) / 16) {
                return CH_ERROR;
            }
            c->remaining = c->remaining * 16 + (uint64_t)v;
            return CH_SIZE;
        }
        if (s == CH_SIZE_FIRST) {
            return CH_ERROR;
        }
        if (ch == '\r') {
            return CH_SIZE_LF;
        }
        if (ch == ';') {
            return CH_EXT;
        }
        return is_ows(ch) ? CH_SIZE_WS : CH_ERROR;
    case CH_SIZE_WS:
        /* BWS is allowed before ';' only (RFC 9112 7.1.1). */
        if (ch == ';') {
            return CH_EXT;
        }
        return is_ows(ch) ? CH_SIZE_WS : CH_ERROR;
    case CH_EXT:
        if (ch == '\r') {
            return CH_SIZE_LF;
        }
        return is_field_char(ch) ? CH_EXT : CH_ERROR;
    case CH_SIZE_LF:
        if (ch != '\n') {
            return CH_ERROR;
        }
        c->line_len = 0;
        return c->remaining == 0 ? CH_TRAILER_START : CH_DATA;
    case CH_DATA_CR:
        /* Data longer than its size line said is a second request hidden
         * in the body to any peer that trusts the size. */
        return ch == '\r' ? CH_DATA_LF : CH_ERROR;
    case CH_DATA_LF:
        if (ch != '\n') {
            return CH_ERROR;
        }
        c->line_len = 0;
        return CH_SIZE_FIRST;
    case CH_TRAILER_START:
        if (ch == '\r') {
            return CH_END_LF;
        }
        /* A trailer line starting with whitespace is obs-fold. */
        return is_tchar(ch) ? CH_TRAILER_NAME : CH_ERROR;
    case CH_TRAILER_NAME:
        if (ch == ':') {
            return CH_TRAILER_VALUE;
        }
        return is_tchar(ch) ? CH_TRAILER_NAME : CH_ERROR;
    case CH_TRAILER_VALUE:
        if (ch == '\r') {
            return CH_TRAILER_LF;
        }
        return is_field_char(ch) ? CH_TRAILER_VALUE : CH_ERROR;
    case CH_TRAILER_LF:
        return ch == '\n' ? CH_TRAILER_START : CH_ERROR;
    case CH_END_LF:
        return ch == '\n' ? CH_DONE : CH_ERROR;
    case CH_DATA:
    case CH_DONE:
    case CH_ERROR:
        break;
    }
    return CH_ERROR;
}

/* How long the line a byte in state s belongs to may grow; 0 when the byte is
 * not counted (data, line ends). A size line is short; a trailer section is
 * bounded like a head. Without a bound a peer streams an endless line and
 * the two ends of the relay never agree where it stops. */
static unsigned line_limit(enum chunk_state s)
{
    switch (s) {
    case CH_SIZE:
    case CH_SIZE_WS:
    case CH_EXT:
        return CHUNK_LINE_MAX;
    case CH_TRAILER_START:
    case CH_TRAILER_NAME:
    case CH_TRAILER_VALUE:
    case CH_TRAILER_LF:
    case CH_END_LF:
        return PX_HTTP_HEAD_MAX;
    case CH_SIZE_FIRST:
    case CH_SIZE_LF:
    case CH_DATA:
    case CH_DATA_CR:
    case CH_DATA_LF:
    case CH_DONE:
    case CH_ERROR:
        break;
    }
    return 0;
}

ssize_t px_chunked_feed(struct px_chunked *c, const char *buf, size_t len, bool *done)
{
    size_t i = 0;

    *done = false;
    if (len > SSIZE_MAX) {
        len = SSIZE_MAX;
    }
    if (c->state < (int)CH_SIZE_FIRST || c->state > (int)CH_ERROR) {
        c->state = CH_ERROR;
    }
    while (i < len) {
        enum chunk_state s = (enum chunk_state)c->state;
        unsigned limit;

        if (s == CH_DONE) {
            break;
        }
        if (s == CH_ERROR) {
            return -1;
        }
        if (s == CH_DATA) {
            size_t take = len - i;

            if ((uint64_t)take > c->remaining) {
                take = (size_t)c->remaining;
            }
            i += take;
            c->remaining -= take;
            if (c->remaining == 0) {
                c->state = CH_DATA_CR;
            }
            continue;
        }
        s = chunk_step(c, s, (unsigned char)buf[i]);
        i++;
        limit = line_limit(s);
        if (limit != 0 && ++c->line_len > limit) {
            s = CH_ERROR;
        }
        c->state = (int)s;
        if (s == CH_ERROR) {
            return -1;
        }
    }
    if (c->state == CH_ERROR) {
        return -1;
    }
    *done = c->state == CH_DONE;
    return (ssize_t)i;
}
