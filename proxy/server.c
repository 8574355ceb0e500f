/* The proxy's listeners: accepting connections (conn.c serves each) up to
 * the configured cap, pausing when it is reached or descriptors run out. */
#include "proxy/server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/conn.h"
#include "src/log.h"
#include "src/util.h"

static void pause_accept(struct px_server *s)
{
    for (struct listener *l = s->listeners; l; l = l->next)
        (void)ev_io_modify(s->loop, &l->io, 0);
    s->paused = true;
}

void px_server_resume_accept(struct px_server *s)
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
        px_server_resume_accept(s);
}

static void on_accept(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct listener *l = container_of(io, struct listener, io);
    struct px_server *s = l->s;

    (void)loop;
    (void)revents;
    while (!s->paused) {
        int fd = accept4(io->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* Out of descriptors: stop accepting for a moment instead of
                 * spinning on a readable listener. */
                log_v("proxy: accept: %s", strerror(errno));
                pause_accept(s);
                /* Without the retry timer only a connection's close
                 * resumes accepting; with none open, nothing would:
                 * stay armed and try again on the next readiness. */
                if (s->timer_start(s->loop, &s->retry_accept, 100) < 0 && s->nconns == 0)
                    px_server_resume_accept(s);
            }
            return;
        }
        if (px_conn_new(s, fd, l->socks, l->relay_port) < 0)
            return;
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
    s->connect_upstream = px_conn_connect_tcp;
    s->timer_start = ev_timer_start;
    *out = s;
    return 0;
}
int px_server_adopt(struct px_server *s, int fd, bool socks, struct nf_err *err)
{
    if (s->nconns >= s->cfg.max_connections) {
        close(fd);
        return nf_err_set(err, EAGAIN, "proxy: %u connections, the configured cap", s->nconns);
    }
    if (px_conn_new(s, fd, socks, socks ? s->cfg.socks_relay_port : s->cfg.http_relay_port) < 0)
        return nf_err_set(err, ENOMEM, "proxy: cannot serve a new connection");
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
        px_conn_close(s->conns);
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
    px_resolver_free(s->parent_resolver);
    free(s);
}
