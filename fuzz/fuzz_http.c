/* libFuzzer target for proxy/http.c. Input: one flags byte, two bytes that
 * choose a split point, then the bytes a client or upstream would send. The
 * same bytes go to the request parser, the response parser and the chunked
 * framer, and each result is checked against what the API promises: pointers
 * inside the head, a prefix never disagreeing with the whole, a rebuilt
 * request with no room for a second one, and framing independent of how the
 * bytes were split across reads. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz/fuzz.h"
#include "proxy/http.h"

static bool inside(const char *p, size_t n, const char *buf, size_t len)
{
    return p != NULL && p >= buf && n <= len && (size_t)(p - buf) <= len - n;
}

static void check_head(const char *buf, size_t len, size_t head_len, const struct px_http_header *h,
                       size_t n)
{
    CHECK(head_len > 0 && head_len <= len && head_len <= PX_HTTP_HEAD_MAX);
    CHECK(buf[head_len - 1] == '\n');
    CHECK(n <= PX_HTTP_MAX_HEADERS);
    for (size_t i = 0; i < n; i++) {
        CHECK(h[i].name_len > 0 && inside(h[i].name, h[i].name_len, buf, head_len));
        CHECK(inside(h[i].value, h[i].value_len, buf, head_len));
        CHECK(memchr(h[i].value, '\r', h[i].value_len) == NULL);
        CHECK(memchr(h[i].value, '\n', h[i].value_len) == NULL);
        CHECK(memchr(h[i].value, '\0', h[i].value_len) == NULL);
        if (h[i].value_len > 0) {
            char first = h[i].value[0], last = h[i].value[h[i].value_len - 1];

            CHECK(first != ' ' && first != '\t' && last != ' ' && last != '\t');
        }
    }
}

/* The rebuilt request: CRLF lines only, one Host, at most one framing header
 * matching the body, and the only blank line at the very end, so nothing the
 * client sent can become a second request upstream. */
static void check_built(const struct px_http_request *req, const char *out, size_t n)
{
    size_t pos = 0, lines = 0, hosts = 0, te = 0, cl = 0;

    CHECK(n >= 4 && memcmp(out + n - 4, "\r\n\r\n", 4) == 0);
    CHECK(memchr(out, '\0', n) == NULL);
    while (pos < n) {
        const char *lf = memchr(out + pos, '\n', n - pos);
        size_t len;

        CHECK(lf != NULL);
        len = (size_t)(lf - (out + pos));
        CHECK(len >= 1 && out[pos + len - 1] == '\r');
        CHECK(memchr(out + pos, '\r', len - 1) == NULL);
        if (len == 1) {
            CHECK(pos + 2 == n);
        } else if (lines > 0) {
            hosts += strncasecmp(out + pos, "host:", 5) == 0;
            te += strncasecmp(out + pos, "transfer-encoding:", 18) == 0;
            cl += strncasecmp(out + pos, "content-length:", 15) == 0;
            CHECK(strncasecmp(out + pos, "connection:", 11) != 0);
            CHECK(strncasecmp(out + pos, "proxy-authorization:", 20) != 0);
        }
        lines++;
        pos += len + 1;
    }
    CHECK(hosts == 1);
    CHECK(te == (req->body == PX_BODY_CHUNKED));
    CHECK(cl == (req->body == PX_BODY_LENGTH));
}

static void fuzz_build(const struct px_http_request *r, size_t small)
{
    char host[PX_HTTP_HEAD_MAX + 1];
    size_t cap = r->head_len * 2 + 256;
    char *out = malloc(cap);
    char *tiny;
    ssize_t n, m;

    CHECK(out != NULL);
    memcpy(host, r->host, r->host_len);
    host[r->host_len] = '\0';
    n = px_http_build_request(r, host, r->port, out, cap);
    CHECK(n > 0 && (size_t)n <= cap);
    check_built(r, out, (size_t)n);
    /* A buffer of any other size holds all of it or none of it, and is
     * never written past its end (ASan watches the exact allocation). */
    small %= (size_t)n + 1;
    tiny = malloc(small ? small : 1);
    CHECK(tiny != NULL);
    m = px_http_build_request(r, host, r->port, tiny, small);
    CHECK(small == (size_t)n ? m == n : m == -1);
    CHECK(m < 0 || memcmp(tiny, out, (size_t)n) == 0);
    free(tiny);
    free(out);
}

static void fuzz_request(const char *buf, size_t len, size_t cut, size_t small)
{
    struct px_http_request *r = malloc(sizeof(*r));
    struct px_http_request *p = malloc(sizeof(*p));
    enum px_http_result res, pres;
    char *pre;

    CHECK(r != NULL && p != NULL);
    res = px_http_parse_request(buf, len, r);
    if (res == PX_HTTP_OK) {
        check_head(buf, len, r->head_len, r->headers, r->n_headers);
        CHECK(inside(r->method, r->method_len, buf, r->head_len) && r->method_len > 0);
        CHECK(inside(r->host, r->host_len, buf, r->head_len) && r->host_len > 0);
        CHECK(r->port >= 1 && r->port <= 65535);
        CHECK(r->version_minor == 0 || r->version_minor == 1);
        CHECK(r->body != PX_BODY_CLOSE);
        CHECK(r->body == PX_BODY_LENGTH || r->content_length == 0);
        CHECK(r->content_length <= (uint64_t)INT64_MAX);
        if (r->host_header) {
            CHECK(inside(r->host_header, r->host_header_len, buf, r->head_len));
        }
        if (r->is_connect) {
            CHECK(r->target == NULL && r->body == PX_BODY_NONE);
        } else {
            CHECK(r->target_len > 0);
            CHECK(inside(r->target, r->target_len, buf, r->head_len) ||
                  (r->target_len == 1 && r->target[0] == '/'));
            CHECK(memchr(r->target, '#', r->target_len) == NULL);
            fuzz_build(r, small);
        }
    }
    /* A prefix (as a separate, exact allocation) is INCOMPLETE or already
     * the final verdict, and an accepted head parses the same without what
     * follows it. */
    cut %= len + 1;
    pre = fuzz_copy(buf, cut);
    pres = px_http_parse_request(pre, cut, p);
    if (res == PX_HTTP_OK) {
        CHECK(pres == (cut >= r->head_len ? PX_HTTP_OK : PX_HTTP_INCOMPLETE));
        if (pres == PX_HTTP_OK) {
            CHECK(p->head_len == r->head_len && p->n_headers == r->n_headers);
            CHECK(p->body == r->body && p->keep_alive == r->keep_alive);
            CHECK(p->port == r->port && p->content_length == r->content_length);
        }
    } else {
        CHECK(pres == PX_HTTP_INCOMPLETE || pres == res);
    }
    free(pre);
    free(p);
    free(r);
}

static void fuzz_response(const char *buf, size_t len, size_t cut, bool head_request)
{
    struct px_http_response *r = malloc(sizeof(*r));
    struct px_http_response *p = malloc(sizeof(*p));
    enum px_http_result res, pres;
    char *pre;

    CHECK(r != NULL && p != NULL);
    res = px_http_parse_response(buf, len, head_request, r);
    if (res == PX_HTTP_OK) {
        check_head(buf, len, r->head_len, r->headers, r->n_headers);
        CHECK(r->status >= 100 && r->status <= 599);
        CHECK(r->version_minor == 0 || r->version_minor == 1);
        CHECK(!head_request || r->body == PX_BODY_NONE);
        CHECK(r->body != PX_BODY_CLOSE || !r->keep_alive);
        CHECK(r->body == PX_BODY_LENGTH || r->content_length == 0);
        CHECK(r->status >= 200 || r->body == PX_BODY_NONE);
    }
    cut %= len + 1;
    pre = fuzz_copy(buf, cut);
    pres = px_http_parse_response(pre, cut, head_request, p);
    if (res == PX_HTTP_OK) {
        CHECK(pres == (cut >= r->head_len ? PX_HTTP_OK : PX_HTTP_INCOMPLETE));
        CHECK(pres != PX_HTTP_OK || (p->head_len == r->head_len && p->body == r->body));
    } else {
        CHECK(pres == PX_HTTP_INCOMPLETE || pres == res);
    }
    free(pre);
    free(p);
    free(r);
}

/* However the body is split across reads, the framer finds the same end. */
static void fuzz_chunked(const char *buf, size_t len, size_t cut)
{
    struct px_chunked whole = { 0 }, split = { 0 };
    bool done_w, done_a, done_b = false;
    ssize_t nw, na, nb = 0;

    nw = px_chunked_feed(&whole, buf, len, &done_w);
    CHECK(nw >= -1 && nw <= (ssize_t)len);
    CHECK(nw != -1 || !done_w);
    CHECK(done_w || nw == -1 || nw == (ssize_t)len);

    cut %= len + 1;
    na = px_chunked_feed(&split, buf, cut, &done_a);
    CHECK(na >= -1 && na <= (ssize_t)cut);
    if (na >= 0 && !done_a) {
        CHECK(na == (ssize_t)cut);
        nb = px_chunked_feed(&split, buf + cut, len - cut, &done_b);
    }
    if (nw == -1) {
        /* Refused whole: refused split too, unless it already ended. */
        CHECK(na == -1 || nb == -1);
    } else if (done_w) {
        CHECK(na != -1 && nb != -1);
        CHECK(done_a ? na == nw : (done_b && na + nb == nw));
    } else {
        CHECK(na == (ssize_t)cut && nb == (ssize_t)(len - cut) && !done_a && !done_b);
    }

    /* Byte at a time, for small inputs. */
    if (len <= 512) {
        struct px_chunked one = { 0 };
        bool done = false;
        size_t i;

        for (i = 0; i < len && !done; i++) {
            ssize_t n = px_chunked_feed(&one, buf + i, 1, &done);

            if (n == -1) {
                CHECK(nw == -1);
                return;
            }
            CHECK(n == 1);
        }
        CHECK(done == done_w && (!done || (ssize_t)i == nw));
        CHECK(done || nw == (ssize_t)len);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf;
    size_t len, cut;
    uint8_t flags;

    if (size < 3) {
        return 0;
    }
    flags = data[0];
    cut = (size_t)data[1] << 8 | data[2];
    buf = (const char *)data + 3;
    len = size - 3;

    fuzz_request(buf, len, cut, (size_t)flags * 7);
    fuzz_response(buf, len, cut, flags & 1);
    fuzz_chunked(buf, len, cut);
    return 0;
}
