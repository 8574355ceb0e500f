#include "proxy/resolve.h"

#include <ares.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "src/util.h"

/* Answers are kept for their TTL, so that a burst of connections to one
 * host costs one lookup: a DNS answer for its records' smallest TTL (at most
 * CACHE_MAX_TTL_MS; a TTL of 0 is not kept), a hosts-file answer (c-ares
 * 1.18 reads /etc/hosts anew for every lookup; such an answer has no TTL
 * and comes back inside ares_getaddrinfo) for HOSTS_TTL_MS, so that an edit
 * to the file is seen within a second, as the interface addresses are.
 * Failures are not kept. */
#define CACHE_SIZE       64
#define CACHE_MAX_TTL_MS (300 * 1000)
#define HOSTS_TTL_MS     1000

struct cache_entry {
    char host[PX_HOST_MAX];
    uint64_t expires; /* loop ms; 0: empty */
    struct px_addr addrs[PX_RESOLVE_MAX_ADDRS];
    size_t n;
};

struct resolver_fd {
    struct ev_io io;
    struct px_resolver *r;
};

struct px_resolver {
    ares_channel ch;
    struct ev_loop *loop;
    struct ev_timer timer;
    struct resolver_fd **fds;
    size_t nfds;
    bool in_call; /* inside ares_getaddrinfo: a result now is synchronous */
    struct cache_entry cache[CACHE_SIZE];
};

struct px_resolve_req {
    px_resolve_cb cb;
    void *arg; /* NULL once cancelled */
    struct px_resolver *r;
    struct ev_deferred later;
    int status;
    struct px_addr addrs[PX_RESOLVE_MAX_ADDRS];
    size_t n;
    char host[PX_HOST_MAX]; /* the cache's key */
};

static struct cache_entry *cache_find(struct px_resolver *r, const char *host)
{
    for (size_t i = 0; i < CACHE_SIZE; i++) {
        struct cache_entry *e = &r->cache[i];

        if (e->expires && strcmp(e->host, host) == 0) {
            if (e->expires > r->loop->now)
                return e;
            e->expires = 0;
            return NULL;
        }
    }
    return NULL;
}

static void cache_put(struct px_resolver *r, const char *host, uint64_t ttl_ms,
                      const struct px_addr *addrs, size_t n)
{
    struct cache_entry *e = NULL;

    if (ttl_ms == 0 || strlen(host) >= sizeof(e->host))
        return;
    /* The same host's, else an empty or expired slot, else the one that
     * expires first. */
    for (size_t i = 0; i < CACHE_SIZE && !e; i++)
        if (r->cache[i].expires && strcmp(r->cache[i].host, host) == 0)
            e = &r->cache[i];
    for (size_t i = 0; i < CACHE_SIZE && !e; i++) {
        if (r->cache[i].expires <= r->loop->now) {
            e = &r->cache[i];
            break;
        }
    }
    if (!e) {
        e = &r->cache[0];
        for (size_t i = 1; i < CACHE_SIZE; i++)
            if (r->cache[i].expires < e->expires)
                e = &r->cache[i];
    }
    snprintf(e->host, sizeof(e->host), "%s", host);
    e->expires = r->loop->now + ttl_ms;
    memcpy(e->addrs, addrs, n * sizeof(*addrs));
    e->n = n;
}

static void rearm(struct px_resolver *r)
{
    struct timeval tv, *t = ares_timeout(r->ch, NULL, &tv);

    if (!t) {
        ev_timer_stop(r->loop, &r->timer);
        return;
    }
    (void)ev_timer_start(r->loop, &r->timer,
                         (uint64_t)t->tv_sec * 1000u + (uint64_t)t->tv_usec / 1000u + 1);
}

static void on_fd(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct resolver_fd *f = container_of(io, struct resolver_fd, io);
    struct px_resolver *r = f->r;
    int fd = io->fd;

    (void)loop;
    ares_process_fd(r->ch, revents & (EPOLLIN | EPOLLERR | EPOLLHUP) ? fd : ARES_SOCKET_BAD,
                    revents & EPOLLOUT ? fd : ARES_SOCKET_BAD);
    rearm(r);
}

static void on_timer(struct ev_loop *loop, struct ev_timer *t)
{
    struct px_resolver *r = container_of(t, struct px_resolver, timer);

    (void)loop;
    ares_process_fd(r->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    rearm(r);
}

/* c-ares tells us which of its sockets to watch. */
static void sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
    struct px_resolver *r = data;
    uint32_t events = (readable ? EPOLLIN : 0u) | (writable ? EPOLLOUT : 0u);
    size_t i;

    for (i = 0; i < r->nfds; i++)
        if (r->fds[i]->io.fd == fd)
            break;
    if (i < r->nfds) {
        if (events) {
            (void)ev_io_modify(r->loop, &r->fds[i]->io, events);
            return;
        }
        ev_io_stop(r->loop, &r->fds[i]->io);
        free(r->fds[i]);
        r->fds[i] = r->fds[--r->nfds];
        return;
    }
    if (!events)
        return;
    {
        struct resolver_fd **v = realloc(r->fds, (r->nfds + 1) * sizeof(*v));
        struct resolver_fd *f = calloc(1, sizeof(*f));

        if (!v || !f) {
            free(f);
            if (v)
                r->fds = v;
            return; /* the query times out */
        }
        r->fds = v;
        f->r = r;
        f->io.fd = fd;
        f->io.cb = on_fd;
        if (ev_io_start(r->loop, &f->io, events) < 0) {
            free(f);
            return;
        }
        r->fds[r->nfds++] = f;
    }
}

int px_resolver_new(struct px_resolver **out, struct ev_loop *loop, bool search, struct nf_err *err)
{
    int mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES;
    struct ares_options o = { 0 };
    struct px_resolver *r;
    int rc;

    rc = ares_library_init(ARES_LIB_INIT_ALL);
    if (rc != ARES_SUCCESS)
        return nf_err_set(err, EIO, "c-ares: %s", ares_strerror(rc));
    r = calloc(1, sizeof(*r));
    if (!r)
        return nf_err_sys(err, "out of memory");
    r->loop = loop;
    r->timer.cb = on_timer;
    o.sock_state_cb = sock_state;
    o.sock_state_cb_data = r;
    o.timeout = 2000;
    o.tries = 2;
    if (!search) {
        /* No search list: the name the rules checked is the only name
         * looked up. With resolv.conf's `search corp.example` (and a
         * Kubernetes pod's ndots:5, tried first), allowed.test would be
         * reached at allowed.test.corp.example's address, a name no rule
         * allowed. (ARES_FLAG_NOSEARCH does not reach ares_getaddrinfo in
         * c-ares 1.18, and a trailing dot would miss the hosts file.) */
        o.domains = NULL;
        o.ndomains = 0;
        mask |= ARES_OPT_DOMAINS;
    }
    rc = ares_init_options(&r->ch, &o, mask);
    if (rc != ARES_SUCCESS) {
        free(r);
        return nf_err_set(err, EIO, "c-ares: %s", ares_strerror(rc));
    }
    *out = r;
    return 0;
}

void px_resolver_free(struct px_resolver *r)
{
    if (!r)
        return;
    /* Pending callbacks run with ARES_EDESTRUCTION; cancelled ones are no-ops. */
    ares_destroy(r->ch);
    ev_timer_stop(r->loop, &r->timer);
    for (size_t i = 0; i < r->nfds; i++) {
        ev_io_stop(r->loop, &r->fds[i]->io);
        free(r->fds[i]);
    }
    free(r->fds);
    free(r);
}

static void deliver(struct px_resolve_req *req)
{
    if (req->arg)
        req->cb(req->arg, req->status,
                req->status == ARES_SUCCESS ? NULL : ares_strerror(req->status), req->addrs,
                req->n);
    free(req);
}

static void deliver_later(struct ev_deferred *d)
{
    deliver(container_of(d, struct px_resolve_req, later));
}

static void on_result(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
    struct px_resolve_req *req = arg;
    struct px_resolver *r = req->r;

    (void)timeouts;
    req->status = status;
    if (status == ARES_SUCCESS && res) {
        uint64_t ttl_ms = CACHE_MAX_TTL_MS;

        for (struct ares_addrinfo_node *a = res->nodes; a && req->n < PX_RESOLVE_MAX_ADDRS;
             a = a->ai_next) {
            struct px_addr *o = &req->addrs[req->n];

            if ((uint64_t)(a->ai_ttl < 0 ? 0 : a->ai_ttl) * 1000u < ttl_ms)
                ttl_ms = (uint64_t)(a->ai_ttl < 0 ? 0 : a->ai_ttl) * 1000u;

            if (a->ai_family == AF_INET) {
                o->family = AF_INET;
                memset(o->b, 0, sizeof(o->b));
                memcpy(o->b, &((struct sockaddr_in *)a->ai_addr)->sin_addr, 4);
                req->n++;
            } else if (a->ai_family == AF_INET6) {
                o->family = AF_INET6;
                memcpy(o->b, &((struct sockaddr_in6 *)a->ai_addr)->sin6_addr, 16);
                req->n++;
            }
        }
        if (req->n == 0)
            req->status = ARES_ENODATA;
        else if (r->in_call && ttl_ms == 0)
            cache_put(r, req->host, HOSTS_TTL_MS, req->addrs, req->n);
        else
            cache_put(r, req->host, ttl_ms, req->addrs, req->n);
    }
    if (res)
        ares_freeaddrinfo(res);
    /* A hosts-file hit or an early error completes inside ares_getaddrinfo:
     * deliver it from the loop, never into the caller that is still
     * setting up. */
    if (r->in_call) {
        req->later.cb = deliver_later;
        ev_defer(r->loop, &req->later);
        return;
    }
    deliver(req);
}

struct px_resolve_req *px_resolve(struct px_resolver *r, const char *host, px_resolve_cb cb,
                                  void *arg)
{
    struct ares_addrinfo_hints hints = { .ai_family = AF_UNSPEC,
                                         .ai_flags = ARES_AI_NOSORT,
                                         .ai_socktype = SOCK_STREAM };
    struct px_resolve_req *req = calloc(1, sizeof(*req));
    struct cache_entry *e;

    if (!req)
        return NULL;
    req->cb = cb;
    req->arg = arg;
    req->r = r;
    snprintf(req->host, sizeof(req->host), "%s", host);
    e = cache_find(r, host);
    if (e) {
        memcpy(req->addrs, e->addrs, e->n * sizeof(*e->addrs));
        req->n = e->n;
        req->status = ARES_SUCCESS;
        req->later.cb = deliver_later;
        ev_defer(r->loop, &req->later);
        return req;
    }
    r->in_call = true;
    ares_getaddrinfo(r->ch, host, NULL, &hints, on_result, req);
    r->in_call = false;
    rearm(r);
    return req;
}

void px_resolve_cancel(struct px_resolve_req *req)
{
    if (req)
        req->arg = NULL;
}
