/* Plain HTTP through the proxy: each request head is parsed and decided by
 * the rules, rewritten to origin form and sent upstream; the request body,
 * the response head (after any interim 1xx) and the response body are
 * framed as they pass, so that a kept-alive connection knows where the next
 * message starts and the next request is decided again. */
#include "proxy/conn.h"

#include <stdio.h>
#include <string.h>

#include "proxy/rules.h"

static const char bad_request[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                                  "Connection: close\r\n\r\n";

static bool host_header_agrees(const struct px_http_request *r, const char *canon, unsigned port)
{
    const char *h = r->host_header;
    size_t n = r->host_header_len, hl = n;
    char hc[PX_HOST_MAX];
    unsigned hp = 80;

    if (!h)
        return true;
    /* "host", "host:port", "[v6]", "[v6]:port" */
    if (n && h[0] == '[') {
        const char *rb = memchr(h, ']', n);

        if (!rb)
            return false;
        hl = (size_t)(rb - h) + 1;
    } else {
        const char *colon = memchr(h, ':', n);

        if (colon)
            hl = (size_t)(colon - h);
    }
    if (hl < n) {
        unsigned long v = 0;

        if (h[hl] != ':' || hl + 1 == n)
            return false;
        for (size_t i = hl + 1; i < n; i++) {
            if (h[i] < '0' || h[i] > '9' || v > 65535)
                return false;
            v = v * 10 + (unsigned long)(h[i] - '0');
        }
        hp = (unsigned)v;
    }
    if (px_host_canon(h, hl, hc, NULL, NULL) < 0)
        return false;
    return hp == port && strcmp(hc, canon) == 0;
}

void px_conn_http_request(struct conn *c)
{
    struct px_http_request r;
    struct px_decision d;
    char head[PX_HTTP_HEAD_MAX + 512];
    ssize_t hlen;

    switch (px_http_parse_request(c->in.data, c->in.len, &r)) {
    case PX_HTTP_INCOMPLETE:
        if (c->in.len >= PX_HTTP_HEAD_MAX)
            goto too_large;
        return;
    case PX_HTTP_TOO_LARGE:
        goto too_large;
    case PX_HTTP_BAD:
        px_conn_respond_text(c, bad_request);
        return;
    case PX_HTTP_OK:
        break;
    }
    c->is_connect = r.is_connect;
    c->port = r.port;
    c->rules = c->s->cfg.rules;
    px_rules_decide(c->rules, r.host, r.host_len, r.port, &d);
    if (!d.allow) {
        char shown[PX_HOST_MAX];

        if (d.host[0])
            snprintf(shown, sizeof(shown), "%s", d.host);
        else
            snprintf(shown, sizeof(shown), "%.*s", (int)(r.host_len < 200 ? r.host_len : 200),
                     r.host);
        c->in.len = 0;
        px_conn_deny(c, shown, d.reason);
        return;
    }
    memcpy(c->host, d.host, sizeof(c->host));
    c->is_ip = d.is_ip;
    c->addr = d.addr;
    if (r.is_connect) {
        px_buf_consume(&c->in, r.head_len);
        px_conn_close_upstream(c);
        px_conn_start_resolve(c);
        return;
    }
    /* A Host header naming another host than the URL would let a request
     * that passed the rules reach a different virtual host upstream. */
    if (!host_header_agrees(&r, c->host, c->port)) {
        px_conn_respond_text(c, bad_request);
        return;
    }
    hlen = px_http_build_request(&r, c->host, c->port, head, sizeof(head));
    if (hlen < 0)
        goto too_large;
    c->client_keep_alive = r.keep_alive;
    c->head_request = r.method_len == 4 && memcmp(r.method, "HEAD", 4) == 0;
    c->req_body = r.body;
    c->req_left = r.content_length;
    memset(&c->req_chunk, 0, sizeof(c->req_chunk));
    px_buf_consume(&c->in, r.head_len);
    c->to_up.len = 0;
    c->up.len = 0;
    c->up_eof = false;
    c->up_final = false;
    if (px_buf_append(&c->to_up, head, (size_t)hlen) < 0) {
        px_conn_close(c);
        return;
    }
    if (c->uio.fd >= 0 && c->up_idle && c->up_port == c->port && strcmp(c->up_host, c->host) == 0) {
        c->up_idle = false;
        c->state = CS_HTTP_REQ_BODY;
        ev_timer_stop(c->s->loop, &c->timer);
        return;
    }
    px_conn_close_fd(c->s, &c->uio);
    c->up_idle = false;
    px_conn_start_resolve(c);
    return;
too_large:
    px_conn_respond_text(c, "HTTP/1.1 431 Request Header Fields Too Large\r\n"
                            "Content-Length: 0\r\nConnection: close\r\n\r\n");
}

/* Move what belongs to a message's body from `from` to `to`. Returns 1 when
 * the body is complete (a close-delimited one never is), 0 when more is
 * needed, -1 when malformed. */
static int move_body(enum px_http_body *body, uint64_t *left, struct px_chunked *chunk,
                     struct px_buf *from, struct px_buf *to)
{
    size_t take = 0;

    switch (*body) {
    case PX_BODY_NONE:
        return 1;
    case PX_BODY_CLOSE:
        take = from->len;
        break;
    case PX_BODY_LENGTH:
        take = from->len < *left ? from->len : (size_t)*left;
        *left -= take;
        break;
    case PX_BODY_CHUNKED: {
        bool done = false;
        ssize_t n = px_chunked_feed(chunk, from->data, from->len, &done);

        if (n < 0)
            return -1;
        take = (size_t)n;
        if (done)
            *body = PX_BODY_NONE;
        break;
    }
    }
    if (take && px_buf_append(to, from->data, take) < 0)
        return -1;
    px_buf_consume(from, take);
    if (*body == PX_BODY_LENGTH)
        return *left == 0;
    return *body == PX_BODY_NONE;
}

/* The current request's body, c->in to c->to_up. A request has no
 * close-delimited body: nothing follows its head. */
static int move_request_body(struct conn *c)
{
    if (c->req_body == PX_BODY_CLOSE)
        return 1;
    return move_body(&c->req_body, &c->req_left, &c->req_chunk, &c->in, &c->to_up);
}

/* The current response's body, c->up to c->to_client; a close-delimited one
 * is complete when the upstream has closed. */
static int move_response_body(struct conn *c)
{
    int r = move_body(&c->resp_body, &c->resp_left, &c->resp_chunk, &c->up, &c->to_client);

    if (r == 0 && c->resp_body == PX_BODY_CLOSE)
        return c->up_eof;
    return r;
}

/* Interim (1xx) responses that come while the request body is still going
 * up are passed on at once: a client that sent `Expect: 100-continue` waits
 * for the 100 before it sends the body. A final response waits for the
 * body's end, so that what is left of the body is never read as the next
 * request. */
static int pass_interim(struct conn *c)
{
    while (!c->up_final && c->up.len) {
        struct px_http_response r;

        switch (px_http_parse_response(c->up.data, c->up.len, c->head_request, &r)) {
        case PX_HTTP_INCOMPLETE:
            if (c->up.len > PX_HTTP_HEAD_MAX)
                c->up_final = true; /* px_conn_http_resp_head says it is bad */
            return 0;
        case PX_HTTP_BAD:
        case PX_HTTP_TOO_LARGE:
            c->up_final = true;
            return 0;
        case PX_HTTP_OK:
            break;
        }
        if (r.status < 100 || r.status >= 200) {
            c->up_final = true;
            return 0;
        }
        if (px_buf_append(&c->to_client, c->up.data, r.head_len) < 0)
            return -1;
        px_buf_consume(&c->up, r.head_len);
    }
    return 0;
}

void px_conn_http_req_body(struct conn *c)
{
    int rc;

    if (pass_interim(c) < 0) {
        px_conn_close(c);
        return;
    }
    rc = move_request_body(c);
    if (rc < 0) {
        px_conn_respond_text(c, bad_request);
        return;
    }
    if (rc == 1 && c->to_up.len == 0) {
        c->up_final = false;
        c->state = CS_HTTP_RESP_HEAD;
    }
}

void px_conn_http_resp_head(struct conn *c)
{
    struct px_http_response r;

    switch (px_http_parse_response(c->up.data, c->up.len, c->head_request, &r)) {
    case PX_HTTP_INCOMPLETE:
        if (c->up_eof)
            goto bad;
        return;
    case PX_HTTP_BAD:
    case PX_HTTP_TOO_LARGE:
        goto bad;
    case PX_HTTP_OK:
        break;
    }
    if (px_buf_append(&c->to_client, c->up.data, r.head_len) < 0) {
        px_conn_close(c);
        return;
    }
    px_buf_consume(&c->up, r.head_len);
    if (r.status >= 100 && r.status < 200)
        return; /* an interim response: the final one follows */
    c->resp_body = r.body;
    c->resp_left = r.content_length;
    c->resp_keep_alive = r.keep_alive && r.body != PX_BODY_CLOSE;
    memset(&c->resp_chunk, 0, sizeof(c->resp_chunk));
    c->state = CS_HTTP_RESP_BODY;
    return;
bad:
    if (c->to_client.len == 0) {
        px_conn_upstream_failed(c);
        return;
    }
    px_conn_close(c);
}

static void response_done(struct conn *c)
{
    if (!c->client_keep_alive || !c->resp_keep_alive) {
        px_conn_close_upstream(c);
        c->state = CS_FLUSH_CLOSE;
        (void)px_conn_arm(c, HEAD_TIMEOUT_MS);
        return;
    }
    /* Kept alive: the next request is checked against the rules again. */
    c->up_idle = true;
    c->state = CS_HTTP_HEAD;
    (void)px_conn_arm(c, c->in.len ? HEAD_TIMEOUT_MS : IDLE_TIMEOUT_MS);
}

void px_conn_http_resp_body(struct conn *c)
{
    int rc = move_response_body(c);

    if (rc < 0) {
        px_conn_close(c);
        return;
    }
    if (rc == 1 && c->to_client.len == 0)
        response_done(c);
    else if (c->up_eof && c->up.len == 0 && rc == 0 && c->resp_body != PX_BODY_CLOSE)
        px_conn_close(c); /* upstream died mid-body */
    else if (c->up_eof && c->resp_body == PX_BODY_CLOSE && c->to_client.len == 0) {
        px_conn_close_upstream(c);
        c->state = CS_FLUSH_CLOSE;
    }
}
