/* HTTP/1.x for the proxy: request and response heads, body framing, and the
 * rebuilt request sent upstream. Pure functions over buffers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PX_HTTP_HEAD_MAX    65536 /* past this: 431 */
#define PX_HTTP_MAX_HEADERS 128

enum px_http_result {
    PX_HTTP_INCOMPLETE, /* need more bytes (no CRLFCRLF yet, still under the limit) */
    PX_HTTP_OK,
    PX_HTTP_BAD,       /* malformed: 400 */
    PX_HTTP_TOO_LARGE, /* head past PX_HTTP_HEAD_MAX or too many headers: 431 */
};

struct px_http_header {
    const char *name; /* points into the parsed buffer */
    size_t name_len;
    const char *value; /* leading/trailing whitespace trimmed */
    size_t value_len;
};

enum px_http_body {
    PX_BODY_NONE,
    PX_BODY_LENGTH,  /* content_length bytes */
    PX_BODY_CHUNKED, /* Transfer-Encoding: chunked (last coding) */
    PX_BODY_CLOSE,   /* response only: until the upstream closes */
};

struct px_http_request {
    const char *method;
    size_t method_len;
    bool is_connect;
    /* CONNECT host:port, or the authority of an absolute-form http:// URL.
     * host excludes brackets; points into the buffer; not canonicalised. */
    const char *host;
    size_t host_len;
    unsigned port; /* CONNECT: required; absolute-form: default 80 */
    /* absolute-form only: path and query ("/" when the URL has none);
     * the fragment, if any, is dropped */
    const char *target;
    size_t target_len;
    int version_minor; /* HTTP/1.0 or HTTP/1.1 */
    struct px_http_header headers[PX_HTTP_MAX_HEADERS];
    size_t n_headers;
    size_t head_len; /* bytes up to and including the blank line */
    bool keep_alive; /* HTTP/1.1 unless "Connection: close"; 1.0 only with keep-alive */
    enum px_http_body body;
    uint64_t content_length;
    /* The Host header, if present (value as sent). */
    const char *host_header;
    size_t host_header_len;
};

/* Parse a request head from a proxy client. Only CONNECT authority-form and
 * absolute-form http:// requests are accepted; origin-form, other schemes,
 * bare LF line ends inside the request line, obs-fold, whitespace before a
 * colon, duplicate or conflicting Content-Length, Transfer-Encoding together
 * with Content-Length, and Transfer-Encoding other than chunked are BAD
 * (request smuggling vectors). */
enum px_http_result px_http_parse_request(const char *buf, size_t len, struct px_http_request *out);

struct px_http_response {
    int status;
    int version_minor;
    struct px_http_header headers[PX_HTTP_MAX_HEADERS];
    size_t n_headers;
    size_t head_len;
    bool keep_alive;
    enum px_http_body body;
    uint64_t content_length;
};

/* Parse an upstream response head. head_request: the request was HEAD (no
 * body whatever the headers say); 1xx, 204 and 304 have no body either. */
enum px_http_result px_http_parse_response(const char *buf, size_t len, bool head_request,
                                           struct px_http_response *out);

/* Case-insensitive header lookup; returns the first match or NULL. */
const struct px_http_header *px_http_find(const struct px_http_header *h, size_t n,
                                          const char *name);

/* Hop-by-hop headers (connection, keep-alive, proxy-authenticate,
 * proxy-authorization, proxy-connection, te, trailer, transfer-encoding,
 * upgrade) and any header named in Connection. */
bool px_http_is_hop_by_hop(const struct px_http_request *req, const struct px_http_header *h);

/* The request sent upstream: "METHOD target HTTP/1.1\r\nHost: host[:port]\r\n"
 * (port only when not 80; IPv6 bracketed), the end-to-end headers in order
 * (Host and hop-by-hop ones dropped), "Transfer-Encoding: chunked" when the
 * body is chunked, then "\r\n". host is canonical. Returns the length
 * written, or -1 if out is too small. */
ssize_t px_http_build_request(const struct px_http_request *req, const char *host, unsigned port,
                              char *out, size_t outsz);

/* Incremental framing of a chunked body (the bytes are relayed unchanged;
 * this only finds where the body ends, trailers included). */
struct px_chunked {
    int state;
    uint64_t remaining;
    unsigned line_len;
};

/* Consume bytes of a chunked body. Returns how many of buf[0..len) belong to
 * the body (all of them unless it ends inside buf), sets *done when the last
 * chunk and trailers are complete; -1 when malformed. */
ssize_t px_chunked_feed(struct px_chunked *c, const char *buf, size_t len, bool *done);
