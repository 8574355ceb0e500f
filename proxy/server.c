#include "proxy/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/http.h"
#include "proxy/relay.h"
#include "proxy/resolve.h"
#include "proxy/socks5.h"
#include "src/log.h"
#include "src/util.h"

#define HEAD_TIMEOUT_MS    10000 /* to the first byte and to a complete head */
#define IDLE_TIMEOUT_MS    60000 /* between requests on a kept-alive connection */
#define CONNECT_TIMEOUT_MS 30000 /* resolve and connect upstream */
#define SOCKS_MAX          (4 + 1 + 255 + 2 + 255 + 2)
#define BODY_CHUNK         (64 * 1024)
#define DRAIN_TIMEOUT_MS   2000
#define LOCAL_TTL_MS       1000
#define MAX_LOCAL          64

#define BLOCKED_BODY "Connection blocked by network allowlist"

struct buf {
    char *data;
    size_t len;
    size_t cap;
};

enum conn_state {
    CS_HTTP_HEAD,
    CS_SOCKS_GREETING,
    CS_SOCKS_REQUEST,
    CS_RESOLVING,
    CS_CONNECTING,
    CS_PARENT_REPLY,
    CS_HTTP_REQ_BODY,
    CS_HTTP_RESP_HEAD,
    CS_HTTP_RESP_BODY,
    CS_TUNNEL,
    CS_FLUSH_CLOSE, /* writing a final answer */
    CS_DRAIN,       /* answer written and shut: read what is left, then close */
};

struct listener {
    struct ev_io io;
    struct px_server *s;
    bool socks;
    unsigned relay_port; /* non-zero: an external proxy's endpoint */
    struct listener *next;
};

struct conn {
    struct px_server *s;
    struct conn *prev, *next;
    struct ev_io cio; /* the client, inside the sandbox */
    struct ev_io uio; /* upstream, from the host */
    struct ev_timer timer;
    struct ev_deferred gone;
    bool socks;
    bool relay; /* to an external proxy: no request of ours, no answer */
    bool closed;
    enum conn_state state;

    struct buf in;        /* from the client, not yet used */
    struct buf up;        /* from upstream, not yet used */
    struct buf to_client; /* pending writes */
    struct buf to_up;
    struct buf held; /* the request, while a parent proxy answers our CONNECT */

    /* The destination of the current request, and the rule table that
     * allowed it: its resolved addresses are checked against the same one,
     * whatever a control-fd update has swapped in meanwhile. */
    const struct px_rules *rules;
    char host[PX_HOST_MAX];
    unsigned port;
    bool is_ip;
    struct px_addr addr;
    bool via_parent;
    struct px_addr addrs[PX_RESOLVE_MAX_ADDRS];
    size_t naddrs, next_addr;
    struct px_resolve_req *req;

    /* Plain HTTP. */
    bool is_connect;
    char up_host[PX_HOST_MAX]; /* where the open upstream connection goes */
    unsigned up_port;
    bool up_idle; /* an upstream connection kept for the next request */
    bool client_keep_alive;
    bool head_request;
    enum px_http_body req_body;
    uint64_t req_left;
    struct px_chunked req_chunk;
    enum px_http_body resp_body;
    uint64_t resp_left;
    struct px_chunked resp_chunk;
    bool resp_keep_alive;
    bool up_eof;

    struct px_half c2u, u2c;
};

struct px_server {
    struct ev_loop *loop;
    struct px_server_config cfg;
    struct px_resolver *resolver;
    struct listener *listeners;
    bool paused;
    struct conn *conns;
    unsigned nconns;
    struct ev_timer retry_accept;
    struct px_pipe_pool pipes;
    /* This host's own addresses, for the guard, refreshed once a second. */
    struct px_addr local[MAX_LOCAL];
    size_t nlocal;
    uint64_t local_at;
    bool local_valid;
};

/* ---- buffers ------------------------------------------------------------- */

static int buf_reserve(struct buf *b, size_t more)
{
    size_t cap;
    char *d;

    if (b->len + more <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 1024;
    while (cap < b->len + more)
        cap *= 2;
    d = realloc(b->data, cap);
    if (!d)
        return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

static int buf_append(struct buf *b, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (buf_reserve(b, n) < 0)
        return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static void buf_consume(struct buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

static void buf_free(struct buf *b)
{
    free(b->data);
    *b = (struct buf){ 0 };
}

/* Read what the socket has into b, up to limit bytes held. Returns bytes
 * read, 0 on EOF, -1 on EAGAIN (errno) or error. */
static ssize_t buf_read(struct buf *b, int fd, size_t limit)
{
    ssize_t n;
    size_t room;

    if (b->len >= limit) {
        errno = ENOBUFS;
        return -1;
    }
    room = limit - b->len;
    /* Start small and grow with what arrives: most heads are a few hundred
     * bytes, and 10,000 idle connections must not each keep 64 KiB. */
    if (room > (b->len < 2048 ? 2048 : b->len))
        room = b->len < 2048 ? 2048 : b->len;
    if (room > BODY_CHUNK)
        room = BODY_CHUNK;
    if (buf_reserve(b, room) < 0)
        return -1;
    n = RETRY_EINTR(recv(fd, b->data + b->len, room, 0));
    if (n > 0)
        b->len += (size_t)n;
    return n;
}

/* Write as much of b as the socket takes. Returns 0 (maybe partial), -1 on
 * error. */
static int buf_flush(struct buf *b, int fd)
{
    while (b->len) {
        ssize_t n = RETRY_EINTR(send(fd, b->data, b->len, MSG_NOSIGNAL));

        if (n < 0)
            return errno == EAGAIN ? 0 : -1;
        buf_consume(b, (size_t)n);
    }
    return 0;
}

/* ---- helpers -------------------------------------------------------------- */

void px_status_phrase(const char *reason, char *out, size_t outsz)
{
    size_t o = 0;
    const unsigned char *p = (const unsigned char *)(reason ? reason : "");

    while (*p && o + 1 < outsz && o < 500) {
        size_t inv = vio_invisible_len(p), len;

        if (inv) {
            /* controls and invisible formatting (bidi, zero-width) */
            out[o++] = ' ';
            p += inv;
            continue;
        }
        if (*p == '<' || *p == '>') {
            p++;
            continue;
        }
        if (*p < 0x80) {
            out[o++] = (char)*p++;
            continue;
        }
        /* A status line is ASCII: one '?' per character, and an invalid
         * byte swallows nothing after it. */
        len = vio_utf8_len(p);
        if (!len) {
            /* An invalid sequence is one character: its lead and the
             * continuation bytes that follow it, never more. */
            size_t want = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 1;

            for (len = 1; len < want && (p[len] & 0xc0) == 0x80; len++)
                ;
        }
        out[o++] = '?';
        p += len;
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    {
        size_t lead = 0;

        while (lead < o && out[lead] == ' ')
            lead++;
        memmove(out, out + lead, o - lead);
        o -= lead;
    }
    if (o == 0)
        snprintf(out, outsz, "Forbidden");
    else
        out[o] = '\0';
}

/* "host:port", IPv6 bracketed. */
static void authority(const char *host, unsigned port, char *out, size_t outsz)
{
    if (strchr(host, ':'))
        snprintf(out, outsz, "[%s]:%u", host, port);
    else
        snprintf(out, outsz, "%s:%u", host, port);
}

static void refresh_local(struct px_server *s)
{
    struct ifaddrs *ifa, *i;

    if (s->local_valid && s->loop->now - s->local_at < LOCAL_TTL_MS)
        return;
    s->nlocal = 0;
    s->local_at = s->loop->now;
    s->local_valid = true;
    if (getifaddrs(&ifa) < 0)
        return;
    for (i = ifa; i && s->nlocal < MAX_LOCAL; i = i->ifa_next) {
        struct px_addr *a = &s->local[s->nlocal];

        if (!i->ifa_addr)
            continue;
        if (i->ifa_addr->sa_family == AF_INET) {
            a->family = AF_INET;
            memset(a->b, 0, sizeof(a->b));
            memcpy(a->b, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
            s->nlocal++;
        } else if (i->ifa_addr->sa_family == AF_INET6) {
            a->family = AF_INET6;
            memcpy(a->b, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
            s->nlocal++;
        }
    }
    freeifaddrs(ifa);
}

/* ---- connection lifecycle ------------------------------------------------- */

static void conn_update(struct conn *c);
static void conn_step(struct conn *c);
static void start_resolve(struct conn *c);

static void free_conn(struct ev_deferred *d)
{
    struct conn *c = container_of(d, struct conn, gone);

    buf_free(&c->in);
    buf_free(&c->up);
    buf_free(&c->to_client);
    buf_free(&c->to_up);
    buf_free(&c->held);
    free(c);
}

static void resume_accept(struct px_server *s);

static void close_fd(struct px_server *s, struct ev_io *io)
{
    if (io->fd < 0)
        return;
    ev_io_stop(s->loop, io);
    close(io->fd);
    io->fd = -1;
    io->events = 0;
}

static void conn_close(struct conn *c)
{
    struct px_server *s = c->s;

    if (c->closed)
        return;
    c->closed = true;
    px_resolve_cancel(c->req);
    c->req = NULL;
    ev_timer_stop(s->loop, &c->timer);
    px_half_release(&c->c2u);
    px_half_release(&c->u2c);
    close_fd(s, &c->cio);
    close_fd(s, &c->uio);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
    c->gone.cb = free_conn;
    ev_defer(s->loop, &c->gone);
    if (s->paused && s->nconns < s->cfg.max_connections)
        resume_accept(s);
}

static void close_upstream(struct conn *c)
{
    close_fd(c->s, &c->uio);
    c->up_idle = false;
    c->up_host[0] = '\0';
    c->up.len = 0;
    c->to_up.len = 0;
}

static void arm(struct conn *c, uint64_t ms)
{
    (void)ev_timer_start(c->s->loop, &c->timer, ms);
}

/* A final answer to the client, then close. */
static void respond_and_close(struct conn *c, const void *data, size_t len)
{
    c->to_client.len = 0;
    if (buf_append(&c->to_client, data, len) < 0) {
        conn_close(c);
        return;
    }
    close_upstream(c);
    c->state = CS_FLUSH_CLOSE;
    arm(c, HEAD_TIMEOUT_MS);
}

static void respond_text(struct conn *c, const char *text)
{
    respond_and_close(c, text, strlen(text));
}

static void socks_reply_close(struct conn *c, uint8_t rep)
{
    uint8_t r[10];

    px_socks_reply(rep, r);
    respond_and_close(c, r, sizeof(r));
}

static void deny(struct conn *c, const char *shown_host, const char *reason)
{
    char msg[1024];

    vio_add_network(c->s->cfg.violations, shown_host, c->port, reason);
    if (c->socks) {
        socks_reply_close(c, PX_SOCKS_REP_NOT_ALLOWED);
        return;
    }
    if (c->is_connect) {
        char phrase[512];

        px_status_phrase(reason, phrase, sizeof(phrase));
        snprintf(msg, sizeof(msg),
                 "HTTP/1.1 403 %s\r\nContent-Type: text/plain\r\n"
                 "X-Proxy-Error: blocked-by-allowlist\r\n\r\n" BLOCKED_BODY,
                 phrase);
    } else {
        snprintf(msg, sizeof(msg),
                 "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                 "X-Proxy-Error: blocked-by-allowlist\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n" BLOCKED_BODY "\n",
                 sizeof(BLOCKED_BODY));
    }
    respond_text(c, msg);
}

static void guard_deny(struct conn *c, unsigned classes)
{
    char cls[512], reason[600], body[1024], msg[2048];

    px_class_text(classes, cls, sizeof(cls));
    snprintf(reason, sizeof(reason), "resolved to %s", cls);
    vio_add_network(c->s->cfg.violations, c->host, c->port, reason);
    if (c->socks) {
        socks_reply_close(c, PX_SOCKS_REP_NOT_ALLOWED);
        return;
    }
    snprintf(body, sizeof(body), "Connection to %s blocked: %s", c->host, reason);
    if (c->is_connect)
        snprintf(msg, sizeof(msg),
                 "HTTP/1.1 403 %s\r\nContent-Type: text/plain\r\n"
                 "X-Proxy-Error: blocked-by-sandbox-runtime\r\n\r\n%s",
                 reason, body);
    else
        snprintf(msg, sizeof(msg),
                 "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                 "X-Proxy-Error: blocked-by-sandbox-runtime\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n%s\n",
                 strlen(body) + 1, body);
    respond_text(c, msg);
}

static void upstream_failed(struct conn *c)
{
    /* srt's bridge closes when the external proxy cannot be reached; an
     * answer of ours would be bytes that proxy never sent. */
    if (c->relay)
        conn_close(c);
    else if (c->socks)
        socks_reply_close(c, PX_SOCKS_REP_HOST_UNREACHABLE);
    else
        respond_text(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n"
                        "Connection: close\r\n\r\n");
}

/* ---- connecting upstream ------------------------------------------------- */

static void on_upstream(struct ev_loop *loop, struct ev_io *io, uint32_t revents);

static void try_next_addr(struct conn *c)
{
    union {
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } sa;
    socklen_t len;
    int one = 1;
    unsigned port = c->via_parent ? c->s->cfg.parent->port : c->port;

    close_fd(c->s, &c->uio);
    while (c->next_addr < c->naddrs) {
        const struct px_addr *a = &c->addrs[c->next_addr++];
        int fd;

        memset(&sa, 0, sizeof(sa));
        if (a->family == AF_INET) {
            sa.v4.sin_family = AF_INET;
            sa.v4.sin_port = htons((uint16_t)port);
            memcpy(&sa.v4.sin_addr, a->b, 4);
            len = sizeof(sa.v4);
        } else {
            sa.v6.sin6_family = AF_INET6;
            sa.v6.sin6_port = htons((uint16_t)port);
            memcpy(&sa.v6.sin6_addr, a->b, 16);
            len = sizeof(sa.v6);
        }
        fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fd, (struct sockaddr *)&sa, len) < 0 && errno != EINPROGRESS) {
            close(fd);
            continue;
        }
        c->uio.fd = fd;
        c->uio.cb = on_upstream;
        c->uio.events = 0;
        if (ev_io_start(c->s->loop, &c->uio, EPOLLOUT) < 0) {
            close(fd);
            c->uio.fd = -1;
            continue;
        }
        c->state = CS_CONNECTING;
        return;
    }
    upstream_failed(c);
}

static void connected(struct conn *c)
{
    static const char established[] = "HTTP/1.1 200 Connection Established\r\n\r\n";

    snprintf(c->up_host, sizeof(c->up_host), "%s", c->host);
    c->up_port = c->port;
    if (c->relay || c->socks || c->is_connect) {
        uint8_t ok[10];

        if (c->relay) {
            /* The external proxy answers the client itself. */
        } else if (c->socks) {
            px_socks_reply(PX_SOCKS_REP_OK, ok);
            if (buf_append(&c->to_client, ok, sizeof(ok)) < 0)
                goto oom;
        } else if (buf_append(&c->to_client, established, sizeof(established) - 1) < 0) {
            goto oom;
        }
        /* Bytes the client sent after its request (a TLS hello, say) and
         * bytes a parent proxy sent after its reply start the tunnel. */
        if (buf_append(&c->to_up, c->in.data, c->in.len) < 0 ||
            buf_append(&c->to_client, c->up.data, c->up.len) < 0)
            goto oom;
        c->in.len = c->up.len = 0;
        px_half_init(&c->c2u, c->cio.fd, c->uio.fd, &c->s->pipes);
        px_half_init(&c->u2c, c->uio.fd, c->cio.fd, &c->s->pipes);
        ev_timer_stop(c->s->loop, &c->timer);
        c->state = CS_TUNNEL;
        return;
    }
    c->up.len = 0;
    c->state = CS_HTTP_REQ_BODY;
    ev_timer_stop(c->s->loop, &c->timer);
    return;
oom:
    conn_close(c);
}

static void send_parent_connect(struct conn *c)
{
    char auth[600] = "", target[PX_HOST_MAX + 8], req[2048];
    int n;

    authority(c->host, c->port, target, sizeof(target));
    if (c->s->cfg.parent->auth[0])
        snprintf(auth, sizeof(auth), "Proxy-Authorization: %s\r\n", c->s->cfg.parent->auth);
    n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", target, target,
                 auth);
    /* A plain request waits until the parent has opened the tunnel. */
    {
        struct buf t = c->held;

        c->held = c->to_up;
        c->to_up = t;
        c->to_up.len = 0;
    }
    if (buf_append(&c->to_up, req, (size_t)n) < 0) {
        conn_close(c);
        return;
    }
    c->up.len = 0;
    c->state = CS_PARENT_REPLY;
}

static void on_resolved(void *arg, int status, const char *msg, const struct px_addr *addrs,
                        size_t n)
{
    struct conn *c = arg;
    unsigned dropped = 0;

    c->req = NULL;
    if (status != 0) {
        log_v("proxy: resolve %s: %s", c->via_parent ? c->s->cfg.parent->host : c->host, msg);
        upstream_failed(c);
        conn_update(c);
        return;
    }
    c->naddrs = c->next_addr = 0;
    if (c->via_parent) {
        memcpy(c->addrs, addrs, n * sizeof(*addrs));
        c->naddrs = n;
    } else {
        refresh_local(c->s);
        for (size_t i = 0; i < n; i++) {
            unsigned cls =
                px_guard_check(c->rules, c->host, c->port, &addrs[i], c->s->local, c->s->nlocal);

            if (cls)
                dropped |= cls;
            else
                c->addrs[c->naddrs++] = addrs[i];
        }
    }
    if (c->naddrs == 0) {
        if (dropped)
            guard_deny(c, dropped);
        else
            upstream_failed(c);
        conn_update(c);
        return;
    }
    try_next_addr(c);
    conn_update(c);
}

static void start_resolve(struct conn *c)
{
    const struct px_parent *p = c->s->cfg.parent;

    c->via_parent = p->enabled && !px_no_proxy_match(p->no_proxy, c->host, c->port);
    arm(c, CONNECT_TIMEOUT_MS);
    c->naddrs = c->next_addr = 0;
    if (c->via_parent ? p->host_is_ip : c->is_ip) {
        /* IP literals pass only by an explicit allow entry: no guard. */
        c->addrs[0] = c->via_parent ? p->addr : c->addr;
        c->naddrs = 1;
        try_next_addr(c);
        return;
    }
    c->state = CS_RESOLVING;
    /* c-ares reads resolv.conf and opens sockets: only once a name needs it,
     * not for every sandboxed command that never touches the network. */
    if (!c->s->resolver) {
        struct nf_err e = { 0 };

        if (px_resolver_new(&c->s->resolver, c->s->loop, &e) < 0) {
            log_warn("proxy: %s", e.msg);
            upstream_failed(c);
            return;
        }
    }
    c->req = px_resolve(c->s->resolver, c->via_parent ? p->host : c->host, on_resolved, c);
    if (!c->req)
        upstream_failed(c);
}

/* ---- HTTP ------------------------------------------------------------------ */

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

static void start_request(struct conn *c)
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
        respond_text(c, bad_request);
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
        deny(c, shown, d.reason);
        return;
    }
    memcpy(c->host, d.host, sizeof(c->host));
    c->is_ip = d.is_ip;
    c->addr = d.addr;
    if (r.is_connect) {
        buf_consume(&c->in, r.head_len);
        close_upstream(c);
        start_resolve(c);
        return;
    }
    /* A Host header naming another host than the URL would let a request
     * that passed the rules reach a different virtual host upstream. */
    if (!host_header_agrees(&r, c->host, c->port)) {
        respond_text(c, bad_request);
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
    buf_consume(&c->in, r.head_len);
    c->to_up.len = 0;
    if (buf_append(&c->to_up, head, (size_t)hlen) < 0) {
        conn_close(c);
        return;
    }
    if (c->uio.fd >= 0 && c->up_idle && c->up_port == c->port && strcmp(c->up_host, c->host) == 0) {
        c->up_idle = false;
        c->state = CS_HTTP_REQ_BODY;
        ev_timer_stop(c->s->loop, &c->timer);
        return;
    }
    close_fd(c->s, &c->uio);
    c->up_idle = false;
    start_resolve(c);
    return;
too_large:
    respond_text(c, "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n"
                    "Connection: close\r\n\r\n");
}

/* Move what belongs to a message's body from `from` to `to`. Returns 1 when
 * the body is complete (a close-delimited one never is), 0 when more is
 * needed, -1 when malformed. */
static int move_body(enum px_http_body *body, uint64_t *left, struct px_chunked *chunk,
                     struct buf *from, struct buf *to)
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
    if (take && buf_append(to, from->data, take) < 0)
        return -1;
    buf_consume(from, take);
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

static void response_head(struct conn *c)
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
    if (buf_append(&c->to_client, c->up.data, r.head_len) < 0) {
        conn_close(c);
        return;
    }
    buf_consume(&c->up, r.head_len);
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
        upstream_failed(c);
        return;
    }
    conn_close(c);
}

static void response_done(struct conn *c)
{
    if (!c->client_keep_alive || !c->resp_keep_alive) {
        close_upstream(c);
        c->state = CS_FLUSH_CLOSE;
        arm(c, HEAD_TIMEOUT_MS);
        return;
    }
    /* Kept alive: the next request is checked against the rules again. */
    c->up_idle = true;
    c->state = CS_HTTP_HEAD;
    arm(c, c->in.len ? HEAD_TIMEOUT_MS : IDLE_TIMEOUT_MS);
}

/* ---- SOCKS5 ---------------------------------------------------------------- */

static void socks_step(struct conn *c)
{
    size_t used;

    if (c->state == CS_SOCKS_GREETING) {
        bool no_auth;
        static const uint8_t accept_none[2] = { 5, 0 }, refuse[2] = { 5, 0xff };

        switch (px_socks_parse_greeting((const uint8_t *)c->in.data, c->in.len, &used, &no_auth)) {
        case PX_SOCKS_INCOMPLETE:
            return;
        case PX_SOCKS_BAD:
            conn_close(c);
            return;
        case PX_SOCKS_OK:
            break;
        }
        buf_consume(&c->in, used);
        if (!no_auth) {
            respond_and_close(c, refuse, sizeof(refuse));
            return;
        }
        if (buf_append(&c->to_client, accept_none, sizeof(accept_none)) < 0) {
            conn_close(c);
            return;
        }
        c->state = CS_SOCKS_REQUEST;
    }
    if (c->state == CS_SOCKS_REQUEST) {
        struct px_socks_request r;
        struct px_decision d;

        switch (px_socks_parse_request((const uint8_t *)c->in.data, c->in.len, &used, &r)) {
        case PX_SOCKS_INCOMPLETE:
            return;
        case PX_SOCKS_BAD:
            conn_close(c);
            return;
        case PX_SOCKS_OK:
            break;
        }
        buf_consume(&c->in, used);
        c->port = r.port;
        if (r.cmd != PX_SOCKS_CMD_CONNECT) {
            socks_reply_close(c, PX_SOCKS_REP_CMD_UNSUPPORTED);
            return;
        }
        c->rules = c->s->cfg.rules;
        px_rules_decide(c->rules, r.host, r.host_len, r.port, &d);
        if (!d.allow || r.port == 0) {
            char shown[PX_HOST_MAX];

            snprintf(shown, sizeof(shown), "%s", d.host[0] ? d.host : r.host);
            deny(c, shown, d.allow ? "malformed host" : d.reason);
            return;
        }
        memcpy(c->host, d.host, sizeof(c->host));
        c->is_ip = d.is_ip;
        c->addr = d.addr;
        start_resolve(c);
    }
}

/* ---- relaying to an external proxy -------------------------------------------- */

/* The endpoint is an external proxy's (srt's httpProxyPort/socksProxyPort):
 * connect to it on the host's loopback and splice, reading nothing. That
 * proxy judges every request; nsfence's rules, guard and parent do not, so
 * none of its denials appear among nsfence's violations. */
static void start_relay(struct conn *c, unsigned port)
{
    static const uint8_t loopback[4] = { 127, 0, 0, 1 };

    c->relay = true;
    snprintf(c->host, sizeof(c->host), "127.0.0.1");
    c->port = port;
    c->is_ip = true;
    c->via_parent = false;
    memset(&c->addrs[0], 0, sizeof(c->addrs[0]));
    c->addrs[0].family = AF_INET;
    memcpy(c->addrs[0].b, loopback, sizeof(loopback));
    c->naddrs = 1;
    c->next_addr = 0;
    arm(c, CONNECT_TIMEOUT_MS);
    try_next_addr(c);
}

/* ---- driving ---------------------------------------------------------------- */

/* Advance the state machine as far as buffered data allows. */
static void conn_step(struct conn *c)
{
    for (int guard = 0; guard < 64 && !c->closed; guard++) {
        enum conn_state before = c->state;
        size_t in_before = c->in.len;

        switch (c->state) {
        case CS_HTTP_HEAD:
            if (c->in.len)
                start_request(c);
            break;
        case CS_SOCKS_GREETING:
        case CS_SOCKS_REQUEST:
            socks_step(c);
            break;
        case CS_HTTP_REQ_BODY: {
            int rc = move_request_body(c);

            if (rc < 0) {
                respond_text(c, bad_request);
                break;
            }
            if (rc == 1 && c->to_up.len == 0) {
                c->up.len = 0;
                c->up_eof = false;
                c->state = CS_HTTP_RESP_HEAD;
            }
            break;
        }
        case CS_HTTP_RESP_HEAD:
            response_head(c);
            break;
        case CS_HTTP_RESP_BODY: {
            int rc = move_response_body(c);

            if (rc < 0) {
                conn_close(c);
                break;
            }
            if (rc == 1 && c->to_client.len == 0)
                response_done(c);
            else if (c->up_eof && c->up.len == 0 && rc == 0 && c->resp_body != PX_BODY_CLOSE)
                conn_close(c); /* upstream died mid-body */
            else if (c->up_eof && c->resp_body == PX_BODY_CLOSE && c->to_client.len == 0) {
                close_upstream(c);
                c->state = CS_FLUSH_CLOSE;
            }
            break;
        }
        case CS_RESOLVING:
        case CS_CONNECTING:
        case CS_PARENT_REPLY:
        case CS_TUNNEL:
        case CS_FLUSH_CLOSE:
        case CS_DRAIN:
            break;
        }
        if (c->closed || (c->state == before && c->in.len == in_before))
            break;
    }
}

static void pump_tunnel(struct conn *c)
{
    enum px_pump a, b;

    if (c->to_client.len || c->to_up.len)
        return; /* the 200 or SOCKS reply and early bytes go first */
    if (c->in.cap || c->up.cap || c->to_client.cap || c->to_up.cap || c->held.cap) {
        /* From here on bytes never touch user space: give the memory back. */
        buf_free(&c->in);
        buf_free(&c->up);
        buf_free(&c->to_client);
        buf_free(&c->to_up);
        buf_free(&c->held);
    }
    a = c->c2u.state == PX_PUMP_DONE ? PX_PUMP_DONE : px_half_pump(&c->c2u);
    b = c->u2c.state == PX_PUMP_DONE ? PX_PUMP_DONE : px_half_pump(&c->u2c);
    if (a == PX_PUMP_ERROR || b == PX_PUMP_ERROR || (a == PX_PUMP_DONE && b == PX_PUMP_DONE))
        conn_close(c);
}

static void conn_update(struct conn *c)
{
    uint32_t ce = 0, ue = 0;
    bool limit_out = c->to_client.len >= BODY_CHUNK;

    if (c->closed)
        return;
    if (c->to_client.len)
        ce |= EPOLLOUT;
    if (c->to_up.len)
        ue |= EPOLLOUT;
    switch (c->state) {
    case CS_HTTP_HEAD:
    case CS_SOCKS_GREETING:
    case CS_SOCKS_REQUEST:
        if (!limit_out)
            ce |= EPOLLIN;
        break;
    case CS_HTTP_REQ_BODY:
        if (c->to_up.len < BODY_CHUNK)
            ce |= EPOLLIN;
        break;
    case CS_HTTP_RESP_HEAD:
    case CS_PARENT_REPLY:
        ue |= EPOLLIN;
        break;
    case CS_HTTP_RESP_BODY:
        if (!limit_out && !c->up_eof)
            ue |= EPOLLIN;
        break;
    case CS_CONNECTING:
        ue |= EPOLLOUT;
        break;
    case CS_TUNNEL:
        if (c->to_client.len || c->to_up.len)
            break;
        if (c->c2u.state == PX_PUMP_WANT_READ)
            ce |= EPOLLIN;
        if (c->c2u.state == PX_PUMP_WANT_WRITE)
            ue |= EPOLLOUT;
        if (c->u2c.state == PX_PUMP_WANT_READ)
            ue |= EPOLLIN;
        if (c->u2c.state == PX_PUMP_WANT_WRITE)
            ce |= EPOLLOUT;
        break;
    case CS_RESOLVING:
    case CS_FLUSH_CLOSE:
    case CS_DRAIN:
        break;
    }
    if (c->state == CS_FLUSH_CLOSE && c->to_client.len == 0) {
        /* Half-close, then read until the client closes: closing with unread
         * bytes would send a reset that can destroy the answer in flight. */
        (void)shutdown(c->cio.fd, SHUT_WR);
        c->state = CS_DRAIN;
        arm(c, DRAIN_TIMEOUT_MS);
    }
    if (c->state == CS_DRAIN)
        ce = EPOLLIN;
    if (c->state == CS_HTTP_HEAD && c->up_idle)
        ue |= EPOLLIN | EPOLLRDHUP; /* the kept upstream closing or talking out of turn */
    if (c->cio.fd >= 0 && ev_io_modify(c->s->loop, &c->cio, ce) < 0) {
        conn_close(c);
        return;
    }
    if (c->uio.fd >= 0 && ev_io_modify(c->s->loop, &c->uio, ue) < 0)
        conn_close(c);
}

static void on_client(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct conn *c = container_of(io, struct conn, cio);

    (void)loop;
    if (revents & EPOLLOUT) {
        if (buf_flush(&c->to_client, io->fd) < 0) {
            conn_close(c);
            return;
        }
    }
    if (c->state == CS_DRAIN) {
        char sink[4096];
        ssize_t n = recv(io->fd, sink, sizeof(sink), 0);

        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            conn_close(c);
        return;
    }
    if (c->state == CS_TUNNEL) {
        if (revents & EPOLLERR) {
            conn_close(c);
            return;
        }
        pump_tunnel(c);
    } else if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        bool reading = c->state == CS_HTTP_HEAD || c->state == CS_SOCKS_GREETING ||
                       c->state == CS_SOCKS_REQUEST || c->state == CS_HTTP_REQ_BODY;

        if (reading) {
            size_t limit = c->socks ? SOCKS_MAX : PX_HTTP_HEAD_MAX + 1;
            ssize_t n;

            if (c->state == CS_HTTP_REQ_BODY)
                limit = c->in.len + BODY_CHUNK;
            n = buf_read(&c->in, io->fd, limit);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != ENOBUFS)) {
                conn_close(c); /* client gone */
                return;
            }
            if (c->state == CS_HTTP_HEAD && c->timer.idx == 0)
                arm(c, HEAD_TIMEOUT_MS);
        } else if (revents & (EPOLLHUP | EPOLLERR)) {
            conn_close(c);
            return;
        }
    }
    conn_step(c);
    if (!c->closed && c->to_up.len && c->uio.fd >= 0 && c->state != CS_CONNECTING &&
        buf_flush(&c->to_up, c->uio.fd) < 0) {
        conn_close(c);
        return;
    }
    conn_step(c);
    conn_update(c);
}

static void on_parent_reply(struct conn *c)
{
    struct px_http_response r;

    switch (px_http_parse_response(c->up.data, c->up.len, true, &r)) {
    case PX_HTTP_INCOMPLETE:
        if (c->up_eof)
            upstream_failed(c);
        return;
    case PX_HTTP_BAD:
    case PX_HTTP_TOO_LARGE:
        upstream_failed(c);
        return;
    case PX_HTTP_OK:
        break;
    }
    if (r.status < 200 || r.status > 299) {
        log_v("proxy: parent proxy refused CONNECT %s:%u with %d", c->host, c->port, r.status);
        upstream_failed(c);
        return;
    }
    buf_consume(&c->up, r.head_len);
    if (buf_append(&c->to_up, c->held.data, c->held.len) < 0) {
        conn_close(c);
        return;
    }
    c->held.len = 0;
    connected(c);
}

static void on_upstream(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct conn *c = container_of(io, struct conn, uio);

    (void)loop;
    if (c->state == CS_CONNECTING) {
        int soerr = 0;
        socklen_t len = sizeof(soerr);

        if (!(revents & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        if (getsockopt(io->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr) {
            log_v("proxy: connect %s:%u: %s", c->host, c->port, strerror(soerr ? soerr : errno));
            try_next_addr(c);
            conn_update(c);
            return;
        }
        if (c->via_parent)
            send_parent_connect(c);
        else
            connected(c);
        revents = EPOLLOUT;
    }
    if (revents & EPOLLOUT) {
        if (buf_flush(&c->to_up, io->fd) < 0) {
            if (c->state == CS_TUNNEL)
                conn_close(c);
            else
                upstream_failed(c);
            conn_update(c);
            return;
        }
    }
    if (c->state == CS_HTTP_HEAD && c->up_idle) {
        close_upstream(c); /* kept alive, now closing (or babbling): drop it */
        conn_update(c);
        return;
    }
    if (c->state == CS_TUNNEL) {
        if (revents & EPOLLERR) {
            conn_close(c);
            return;
        }
        pump_tunnel(c);
    } else if ((revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) &&
               (c->state == CS_PARENT_REPLY || c->state == CS_HTTP_RESP_HEAD ||
                c->state == CS_HTTP_RESP_BODY)) {
        ssize_t n =
            buf_read(&c->up, io->fd,
                     c->state == CS_HTTP_RESP_BODY ? c->up.len + BODY_CHUNK : PX_HTTP_HEAD_MAX + 1);

        if (n == 0)
            c->up_eof = true;
        else if (n < 0 && errno != EAGAIN && errno != ENOBUFS)
            c->up_eof = true;
        if (c->state == CS_PARENT_REPLY)
            on_parent_reply(c);
    }
    conn_step(c);
    if (!c->closed && c->to_client.len && c->cio.fd >= 0 && buf_flush(&c->to_client, c->cio.fd) < 0)
        conn_close(c);
    conn_step(c);
    conn_update(c);
}

static void on_timeout(struct ev_loop *loop, struct ev_timer *t)
{
    struct conn *c = container_of(t, struct conn, timer);

    (void)loop;
    switch (c->state) {
    case CS_RESOLVING:
    case CS_CONNECTING:
    case CS_PARENT_REPLY:
        upstream_failed(c);
        conn_update(c);
        return;
    case CS_HTTP_HEAD:
    case CS_SOCKS_GREETING:
    case CS_SOCKS_REQUEST:
    case CS_FLUSH_CLOSE:
    case CS_DRAIN:
    case CS_HTTP_REQ_BODY:
    case CS_HTTP_RESP_HEAD:
    case CS_HTTP_RESP_BODY:
    case CS_TUNNEL:
        /* A slow or silent client only ever holds its own connection. */
        conn_close(c);
        return;
    }
}

/* ---- accepting ---------------------------------------------------------------- */

static void pause_accept(struct px_server *s)
{
    for (struct listener *l = s->listeners; l; l = l->next)
        (void)ev_io_modify(s->loop, &l->io, 0);
    s->paused = true;
}

static void resume_accept(struct px_server *s)
{
    for (struct listener *l = s->listeners; l; l = l->next)
        (void)ev_io_modify(s->loop, &l->io, EPOLLIN);
    s->paused = false;
}

static void on_retry_accept(struct ev_loop *loop, struct ev_timer *t)
{
    struct px_server *s = container_of(t, struct px_server, retry_accept);

    (void)loop;
    if (s->nconns < s->cfg.max_connections)
        resume_accept(s);
}

static void on_accept(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct listener *l = container_of(io, struct listener, io);
    struct px_server *s = l->s;

    (void)loop;
    (void)revents;
    while (!s->paused) {
        int one = 1;
        int fd = accept4(io->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct conn *c;

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* Out of descriptors: stop accepting for a moment instead of
                 * spinning on a readable listener. */
                log_v("proxy: accept: %s", strerror(errno));
                pause_accept(s);
                (void)ev_timer_start(s->loop, &s->retry_accept, 100);
            }
            return;
        }
        c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            return;
        }
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        c->s = s;
        c->socks = l->socks;
        c->state = l->socks ? CS_SOCKS_GREETING : CS_HTTP_HEAD;
        c->cio.fd = fd;
        c->cio.cb = on_client;
        c->uio.fd = -1;
        c->uio.cb = on_upstream;
        c->timer.cb = on_timeout;
        px_half_init(&c->c2u, -1, -1, NULL);
        px_half_init(&c->u2c, -1, -1, NULL);
        if (ev_io_start(s->loop, &c->cio, EPOLLIN) < 0) {
            close(fd);
            free(c);
            return;
        }
        c->next = s->conns;
        if (s->conns)
            s->conns->prev = c;
        s->conns = c;
        s->nconns++;
        if (l->relay_port) {
            start_relay(c, l->relay_port);
            conn_update(c); /* the client waits until the tunnel is up */
        } else {
            arm(c, HEAD_TIMEOUT_MS);
        }
        if (s->nconns >= s->cfg.max_connections) {
            log_v("proxy: %u connections, the configured cap: not accepting more for now",
                  s->nconns);
            pause_accept(s);
        }
    }
}

int px_server_new(struct px_server **out, struct ev_loop *loop, const struct px_server_config *cfg,
                  struct nf_err *err)
{
    struct px_server *s = calloc(1, sizeof(*s));

    if (!s)
        return nf_err_sys(err, "out of memory");
    s->loop = loop;
    s->cfg = *cfg;
    s->retry_accept.cb = on_retry_accept;
    *out = s;
    return 0;
}

void px_server_set_rules(struct px_server *s, const struct px_rules *rules)
{
    s->cfg.rules = rules;
}

int px_server_listen(struct px_server *s, int fd, bool socks, struct nf_err *err)
{
    struct listener *l = calloc(1, sizeof(*l));
    bool said = false;

    if (!l) {
        close(fd);
        return nf_err_sys(err, "out of memory");
    }
    l->s = s;
    l->socks = socks;
    l->relay_port = socks ? s->cfg.socks_relay_port : s->cfg.http_relay_port;
    for (struct listener *o = s->listeners; o; o = o->next)
        if (o->socks == socks)
            said = true; /* the endpoint's other address family */
    if (l->relay_port && !said)
        log_v("proxy: the %s endpoint relays every connection to 127.0.0.1:%u, an external "
              "proxy: nsfence's rules do not judge them and report no violation for them",
              socks ? "SOCKS5" : "HTTP", l->relay_port);
    l->io.fd = fd;
    l->io.cb = on_accept;
    if (ev_io_start(s->loop, &l->io, s->paused ? 0 : EPOLLIN) < 0) {
        close(fd);
        free(l);
        return nf_err_sys(err, "epoll_ctl");
    }
    l->next = s->listeners;
    s->listeners = l;
    return 0;
}

void px_server_free(struct px_server *s)
{
    if (!s)
        return;
    while (s->conns)
        conn_close(s->conns);
    while (s->listeners) {
        struct listener *l = s->listeners;

        s->listeners = l->next;
        ev_io_stop(s->loop, &l->io);
        close(l->io.fd);
        free(l);
    }
    ev_timer_stop(s->loop, &s->retry_accept);
    px_pipe_pool_free(&s->pipes);
    px_resolver_free(s->resolver);
    free(s);
}
