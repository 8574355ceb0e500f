/* Reaching upstream: the destination (or the parent proxy) is resolved on
 * the host, each address the resolved-address guard lets through is tried
 * in turn, and through a parent proxy our own CONNECT must be answered 2xx
 * before the client's request or tunnel goes on. */
#include "proxy/conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/host.h"
#include "proxy/parent.h"
#include "proxy/rules.h"
#include "src/log.h"

#define LOCAL_TTL_MS 1000

/* "host:port", IPv6 bracketed. */
static void authority(const char *host, unsigned port, char *out, size_t outsz)
{
    if (strchr(host, ':'))
        snprintf(out, outsz, "[%s]:%u", host, port);
    else
        snprintf(out, outsz, "%s:%u", host, port);
}

/* This host's own addresses, re-read at most once a second. False when
 * they cannot be read (getifaddrs needs a descriptor): the guard cannot
 * tell them then, and the caller refuses rather than guess. */
static bool refresh_local(struct px_server *s)
{
    struct ifaddrs *ifa, *i;

    if (s->local_valid && s->loop->now - s->local_at < LOCAL_TTL_MS)
        return true;
    if (getifaddrs(&ifa) < 0) {
        s->local_valid = false;
        return false;
    }
    s->nlocal = 0;
    s->local_at = s->loop->now;
    s->local_valid = true;
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
    return true;
}

/* This host's addresses, read for the guard; when they cannot be, the
 * connection is refused (and updated) and false returned. */
static bool guard_ready(struct conn *c)
{
    if (refresh_local(c->s))
        return true;
    log_warn("proxy: %s: this host's addresses cannot be read (%m): refused", c->host);
    px_conn_upstream_failed(c);
    px_conn_update(c);
    return false;
}

int px_conn_connect_tcp(const struct px_addr *a, unsigned port)
{
    union {
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } sa;
    socklen_t len;
    int one = 1;
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
        return -1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&sa, len) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

void px_conn_try_next_addr(struct conn *c)
{
    unsigned port = c->via_parent ? c->s->cfg.parent->port : c->port;

    px_conn_close_fd(c->s, &c->uio);
    while (c->next_addr < c->naddrs) {
        int fd = c->s->connect_upstream(&c->addrs[c->next_addr++], port);

        if (fd < 0)
            continue;
        c->uio.fd = fd;
        c->uio.events = 0;
        if (ev_io_start(c->s->loop, &c->uio,
                        EPOLLOUT | (px_conn_tunnel_bound(c) ? PX_TUNNEL_EVENTS : 0)) < 0) {
            close(fd);
            c->uio.fd = -1;
            continue;
        }
        c->state = CS_CONNECTING;
        return;
    }
    px_conn_upstream_failed(c);
}

void px_conn_connected(struct conn *c)
{
    snprintf(c->up_host, sizeof(c->up_host), "%s", c->host);
    c->up_port = c->port;
    if (c->relay || c->socks || c->is_connect) {
        px_conn_tunnel_start(c);
        return;
    }
    c->up.len = 0;
    c->state = CS_HTTP_REQ_BODY;
    ev_timer_stop(c->s->loop, &c->timer);
}

void px_conn_parent_connect(struct conn *c)
{
    char auth[600] = "", pinned[64], target[PX_HOST_MAX + 8], req[2048];
    int n;

    if (c->pin_checked)
        px_addr_format(&c->checked, pinned, sizeof(pinned));
    authority(c->pin_checked ? pinned : c->host, c->port, target, sizeof(target));
    if (c->s->cfg.parent->auth[0])
        snprintf(auth, sizeof(auth), "Proxy-Authorization: %s\r\n", c->s->cfg.parent->auth);
    n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", target, target,
                 auth);
    /* A plain request waits until the parent has opened the tunnel. */
    {
        struct px_buf t = c->held;

        c->held = c->to_up;
        c->to_up = t;
        c->to_up.len = 0;
    }
    if (px_buf_append(&c->to_up, req, (size_t)n) < 0) {
        px_conn_close(c);
        return;
    }
    c->up.len = 0;
    c->state = CS_PARENT_REPLY;
}

void px_conn_parent_reply(struct conn *c)
{
    struct px_http_response r;

    switch (px_http_parse_response(c->up.data, c->up.len, true, &r)) {
    case PX_HTTP_INCOMPLETE:
        if (c->up_eof)
            px_conn_upstream_failed(c);
        return;
    case PX_HTTP_BAD:
    case PX_HTTP_TOO_LARGE:
        px_conn_upstream_failed(c);
        return;
    case PX_HTTP_OK:
        break;
    }
    if (r.status < 200 || r.status > 299) {
        log_v("proxy: parent proxy refused CONNECT %s:%u with %d", c->host, c->port, r.status);
        px_conn_upstream_failed(c);
        return;
    }
    px_buf_consume(&c->up, r.head_len);
    if (px_buf_append(&c->to_up, c->held.data, c->held.len) < 0) {
        px_conn_close(c);
        return;
    }
    c->held.len = 0;
    px_conn_connected(c);
}

/* A parent on this host's loopback or own addresses reaches this host's
 * services as they are: a second lookup there could answer differently
 * from the one the guard checked (DNS rebinding to 127.0.0.1), so such a
 * parent is asked for the checked address itself. A parent elsewhere is
 * asked for the name, for its own rules by name; what its loopback holds
 * is its own. */
static void pin_for_local_parent(struct conn *c, const struct px_addr *parent, size_t n)
{
    for (size_t i = 0; c->checked_valid && i < n; i++) {
        bool local = px_addr_builtin_classes(&parent[i]) & PX_CLASS_LOOPBACK;

        for (size_t k = 0; !local && k < c->s->nlocal; k++)
            local = px_addr_equal(&parent[i], &c->s->local[k]);
        if (local) {
            c->pin_checked = true;
            return;
        }
    }
}

static void on_resolved(void *arg, int status, const char *msg, const struct px_addr *addrs,
                        size_t n)
{
    struct conn *c = arg;
    unsigned dropped = 0;

    c->req = NULL;
    if (status != 0) {
        log_v("proxy: resolve %s: %s", c->via_parent ? c->s->cfg.parent->host : c->host, msg);
        px_conn_upstream_failed(c);
        px_conn_update(c);
        return;
    }
    c->naddrs = c->next_addr = 0;
    if (c->via_parent) {
        pin_for_local_parent(c, addrs, n);
        memcpy(c->addrs, addrs, n * sizeof(*addrs));
        c->naddrs = n;
    } else {
        if (!guard_ready(c))
            return;
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
            px_conn_guard_deny(c, dropped);
        else
            px_conn_upstream_failed(c);
        px_conn_update(c);
        return;
    }
    px_conn_try_next_addr(c);
    px_conn_update(c);
}

/* The server's resolver for the sandbox's names (parent: for the parent
 * proxy's own name, which the user wrote and resolv.conf's search list may
 * complete), made when first needed: c-ares reads resolv.conf and opens
 * sockets only once a name needs it, not for every sandboxed command that
 * never touches the network. NULL (said) if it cannot be made. */
static struct px_resolver *resolver(struct conn *c, bool parent)
{
    struct px_resolver **r = parent ? &c->s->parent_resolver : &c->s->resolver;
    struct nf_err e = { 0 };

    if (!*r && px_resolver_new(r, c->s->loop, parent, &e) < 0)
        log_warn("proxy: %s", e.msg);
    return *r;
}

/* The parent proxy's own address: as written, or resolved. */
static void reach_parent(struct conn *c)
{
    const struct px_parent *p = c->s->cfg.parent;
    struct px_resolver *r;

    if (p->host_is_ip) {
        pin_for_local_parent(c, &p->addr, 1);
        c->addrs[0] = p->addr;
        c->naddrs = 1;
        px_conn_try_next_addr(c);
        return;
    }
    c->state = CS_RESOLVING;
    r = resolver(c, true);
    c->req = r ? px_resolve(r, p->host, on_resolved, c) : NULL;
    if (!c->req)
        px_conn_upstream_failed(c);
}

/* Through a parent proxy, the parent resolves the name and connects, and
 * may pick any of its answers: the name is resolved here too, and refused
 * if any answer here is one the guard refuses (a parent on this host's
 * loopback would otherwise reach its services). A name that does not
 * resolve here, where the parent is the only way to outside names, is the
 * parent's to judge. */
static void on_target_resolved(void *arg, int status, const char *msg, const struct px_addr *addrs,
                               size_t n)
{
    struct conn *c = arg;
    unsigned dropped = 0;

    c->req = NULL;
    if (status == 0) {
        if (!guard_ready(c))
            return;
        for (size_t i = 0; i < n; i++)
            dropped |=
                px_guard_check(c->rules, c->host, c->port, &addrs[i], c->s->local, c->s->nlocal);
        if (dropped) {
            px_conn_guard_deny(c, dropped);
            px_conn_update(c);
            return;
        }
        if (n) {
            c->checked = addrs[0];
            c->checked_valid = true;
        }
    } else {
        log_v("proxy: resolve %s here: %s; left to the parent proxy", c->host, msg);
    }
    reach_parent(c);
    px_conn_update(c);
}

void px_conn_start_resolve(struct conn *c)
{
    const struct px_parent *p = c->s->cfg.parent;
    struct px_resolver *r;

    c->via_parent = p->enabled && !px_no_proxy_match(p->no_proxy, c->host, c->port);
    c->checked_valid = false;
    c->pin_checked = false;
    if (px_conn_arm(c, CONNECT_TIMEOUT_MS) < 0)
        return;
    c->naddrs = c->next_addr = 0;
    if (c->is_ip && !c->via_parent) {
        /* IP literals pass only by an explicit allow entry: no guard. */
        c->addrs[0] = c->addr;
        c->naddrs = 1;
        px_conn_try_next_addr(c);
        return;
    }
    if (c->via_parent && c->is_ip) {
        /* The parent is asked for the address itself: only its own name,
         * if any, is looked up. */
        reach_parent(c);
        return;
    }
    c->state = CS_RESOLVING;
    r = resolver(c, false);
    c->req = !r              ? NULL
             : c->via_parent ? px_resolve(r, c->host, on_target_resolved, c)
                             : px_resolve(r, c->host, on_resolved, c);
    if (!c->req)
        px_conn_upstream_failed(c);
}

/* The endpoint is an external proxy's (srt's httpProxyPort/socksProxyPort):
 * connect to it on the host's loopback and splice, reading nothing. That
 * proxy judges every request; nsfence's rules, guard and parent do not, so
 * none of its denials appear among nsfence's violations. */
void px_conn_start_relay(struct conn *c, unsigned port)
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
    if (px_conn_arm(c, CONNECT_TIMEOUT_MS) < 0)
        return;
    px_conn_try_next_addr(c);
}
