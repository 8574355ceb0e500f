/* A connection's lifecycle and its driver: the event handlers read into the
 * buffers, step the state machine (conn_http.c, conn_socks.c,
 * conn_upstream.c, conn_tunnel.c do the work of each state), flush, and ask
 * epoll for what the new state needs. */
#include "proxy/conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/log.h"
#include "src/util.h"

static void free_conn(struct ev_deferred *d)
{
    struct conn *c = container_of(d, struct conn, gone);

    px_buf_free(&c->in);
    px_buf_free(&c->up);
    px_buf_free(&c->to_client);
    px_buf_free(&c->to_up);
    px_buf_free(&c->held);
    free(c);
}

void px_conn_close_fd(struct px_server *s, struct ev_io *io)
{
    if (io->fd < 0)
        return;
    ev_io_stop(s->loop, io);
    close(io->fd);
    io->fd = -1;
    io->events = 0;
}

void px_conn_close(struct conn *c)
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
    px_conn_close_fd(s, &c->cio);
    px_conn_close_fd(s, &c->uio);
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
        px_server_resume_accept(s);
}

void px_conn_close_upstream(struct conn *c)
{
    px_conn_close_fd(c->s, &c->uio);
    c->up_idle = false;
    c->up_host[0] = '\0';
    c->up.len = 0;
    c->to_up.len = 0;
}

int px_conn_arm(struct conn *c, uint64_t ms)
{
    /* Without a deadline a silent client, or an upstream that never
     * answers, would hold the connection (and a slot under
     * max_connections) for as long as it likes. */
    if (c->s->timer_start(c->s->loop, &c->timer, ms) < 0) {
        log_v("proxy: cannot start a connection's timer: closing it");
        px_conn_close(c);
        return -1;
    }
    return 0;
}

void px_conn_step(struct conn *c)
{
    for (int guard = 0; guard < 64 && !c->closed; guard++) {
        enum conn_state before = c->state;
        size_t in_before = c->in.len;

        switch (c->state) {
        case CS_HTTP_HEAD:
            if (c->in.len)
                px_conn_http_request(c);
            break;
        case CS_SOCKS_GREETING:
        case CS_SOCKS_REQUEST:
            px_conn_socks_step(c);
            break;
        case CS_HTTP_REQ_BODY:
            px_conn_http_req_body(c);
            break;
        case CS_HTTP_RESP_HEAD:
            px_conn_http_resp_head(c);
            break;
        case CS_HTTP_RESP_BODY:
            px_conn_http_resp_body(c);
            break;
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

void px_conn_update(struct conn *c)
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
        if (!c->up_final && !c->up_eof && c->to_client.len < BODY_CHUNK)
            ue |= EPOLLIN; /* interim responses */
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
        if (px_conn_tunnel_bound(c)) {
            ce |= PX_TUNNEL_EVENTS;
            ue |= PX_TUNNEL_EVENTS;
        }
        break;
    case CS_TUNNEL:
        px_conn_tunnel_events(c, &ce, &ue);
        break;
    case CS_RESOLVING:
        if (px_conn_tunnel_bound(c))
            ce |= PX_TUNNEL_EVENTS; /* edges noted, read once tunnelling */
        break;
    case CS_FLUSH_CLOSE:
    case CS_DRAIN:
        break;
    }
    if (c->state == CS_FLUSH_CLOSE && c->to_client.len == 0) {
        /* Half-close, then read until the client closes: closing with unread
         * bytes would send a reset that can destroy the answer in flight. */
        (void)shutdown(c->cio.fd, SHUT_WR);
        c->state = CS_DRAIN;
        if (px_conn_arm(c, DRAIN_TIMEOUT_MS) < 0)
            return;
    }
    if (c->state == CS_DRAIN)
        ce = EPOLLIN;
    if (c->state == CS_HTTP_HEAD && c->up_idle)
        ue |= EPOLLIN | EPOLLRDHUP; /* the kept upstream closing or talking out of turn */
    if (c->cio.fd >= 0 && ev_io_modify(c->s->loop, &c->cio, ce) < 0) {
        px_conn_close(c);
        return;
    }
    if (c->uio.fd >= 0 && ev_io_modify(c->s->loop, &c->uio, ue) < 0)
        px_conn_close(c);
}

static void on_client(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct conn *c = container_of(io, struct conn, cio);

    (void)loop;
    px_conn_tunnel_note(c, io, revents);
    if (revents & EPOLLOUT) {
        if (px_buf_flush(&c->to_client, io->fd) < 0) {
            px_conn_close(c);
            return;
        }
    }
    if (c->state == CS_DRAIN) {
        char sink[4096];
        ssize_t n = recv(io->fd, sink, sizeof(sink), 0);

        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            px_conn_close(c);
        return;
    }
    if (c->state == CS_TUNNEL) {
        if (revents & EPOLLERR) {
            px_conn_close(c);
            return;
        }
        px_conn_tunnel_pump(c, revents, 0);
    } else if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        bool reading = c->state == CS_HTTP_HEAD || c->state == CS_SOCKS_GREETING ||
                       c->state == CS_SOCKS_REQUEST || c->state == CS_HTTP_REQ_BODY;

        if (reading) {
            size_t limit = c->socks ? SOCKS_MAX : PX_HTTP_HEAD_MAX + 1;
            ssize_t n;

            if (c->state == CS_HTTP_REQ_BODY)
                limit = c->in.len + BODY_CHUNK;
            n = px_buf_read(&c->in, io->fd, limit);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != ENOBUFS)) {
                px_conn_close(c); /* client gone */
                return;
            }
            if (c->state == CS_HTTP_HEAD && c->timer.idx == 0 &&
                px_conn_arm(c, HEAD_TIMEOUT_MS) < 0)
                return;
        } else if (revents & (EPOLLHUP | EPOLLERR)) {
            px_conn_close(c);
            return;
        }
    }
    px_conn_step(c);
    if (!c->closed && c->to_up.len && c->uio.fd >= 0 && c->state != CS_CONNECTING &&
        px_buf_flush(&c->to_up, c->uio.fd) < 0) {
        px_conn_close(c);
        return;
    }
    px_conn_step(c);
    px_conn_update(c);
}

static void on_upstream(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct conn *c = container_of(io, struct conn, uio);

    (void)loop;
    px_conn_tunnel_note(c, io, revents);
    if (c->state == CS_CONNECTING) {
        int soerr = 0;
        socklen_t len = sizeof(soerr);

        if (!(revents & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        if (getsockopt(io->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr) {
            log_v("proxy: connect %s:%u: %s", c->host, c->port, strerror(soerr ? soerr : errno));
            px_conn_try_next_addr(c);
            px_conn_update(c);
            return;
        }
        if (c->via_parent)
            px_conn_parent_connect(c);
        else
            px_conn_connected(c);
        revents = EPOLLOUT;
    }
    if (revents & EPOLLOUT) {
        if (px_buf_flush(&c->to_up, io->fd) < 0) {
            if (c->state == CS_TUNNEL)
                px_conn_close(c);
            else
                px_conn_upstream_failed(c);
            px_conn_update(c);
            return;
        }
    }
    if (c->state == CS_HTTP_HEAD && c->up_idle) {
        px_conn_close_upstream(c); /* kept alive, now closing (or babbling): drop it */
        px_conn_update(c);
        return;
    }
    if (c->state == CS_TUNNEL) {
        if (revents & EPOLLERR) {
            px_conn_close(c);
            return;
        }
        px_conn_tunnel_pump(c, 0, revents);
    } else if ((revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) &&
               (c->state == CS_PARENT_REPLY || c->state == CS_HTTP_REQ_BODY ||
                c->state == CS_HTTP_RESP_HEAD || c->state == CS_HTTP_RESP_BODY)) {
        ssize_t n = px_buf_read(&c->up, io->fd,
                                c->state == CS_HTTP_RESP_BODY ? c->up.len + BODY_CHUNK
                                                              : PX_HTTP_HEAD_MAX + 1);

        if (n == 0)
            c->up_eof = true;
        else if (n < 0 && errno != EAGAIN && errno != ENOBUFS)
            c->up_eof = true;
        if (c->state == CS_PARENT_REPLY)
            px_conn_parent_reply(c);
    }
    px_conn_step(c);
    if (!c->closed && c->to_client.len && c->cio.fd >= 0 &&
        px_buf_flush(&c->to_client, c->cio.fd) < 0)
        px_conn_close(c);
    px_conn_step(c);
    px_conn_update(c);
}

static void on_timeout(struct ev_loop *loop, struct ev_timer *t)
{
    struct conn *c = container_of(t, struct conn, timer);

    (void)loop;
    switch (c->state) {
    case CS_RESOLVING:
    case CS_CONNECTING:
    case CS_PARENT_REPLY:
        px_conn_upstream_failed(c);
        px_conn_update(c);
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
        px_conn_close(c);
        return;
    }
}

int px_conn_new(struct px_server *s, int fd, bool socks, unsigned relay_port)
{
    int one = 1;
    struct conn *c = calloc(1, sizeof(*c));

    if (!c) {
        close(fd);
        return -1;
    }
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->s = s;
    c->socks = socks;
    c->state = socks ? CS_SOCKS_GREETING : CS_HTTP_HEAD;
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
        return -1;
    }
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    if (relay_port) {
        px_conn_start_relay(c, relay_port);
        px_conn_update(c); /* the client waits until the tunnel is up */
    } else if (px_conn_arm(c, HEAD_TIMEOUT_MS) < 0) {
        return -1;
    }
    return 0;
}
