/* CONNECT and SOCKS tunnels, and relays to an external proxy: once upstream
 * is connected, the reply and any early bytes go first through the buffers,
 * then the two directions are relayed (relay.c) and the buffers' memory is
 * given back. */
#include "proxy/conn.h"

#include <sys/epoll.h>

#include "proxy/socks5.h"

void px_conn_tunnel_start(struct conn *c)
{
    static const char established[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
    uint8_t ok[10];

    if (c->relay) {
        /* The external proxy answers the client itself. */
    } else if (c->socks) {
        px_socks_reply(PX_SOCKS_REP_OK, ok);
        if (px_buf_append(&c->to_client, ok, sizeof(ok)) < 0)
            goto oom;
    } else if (px_buf_append(&c->to_client, established, sizeof(established) - 1) < 0) {
        goto oom;
    }
    /* Bytes the client sent after its request (a TLS hello, say) and
     * bytes a parent proxy sent after its reply start the tunnel. */
    if (px_buf_append(&c->to_up, c->in.data, c->in.len) < 0 ||
        px_buf_append(&c->to_client, c->up.data, c->up.len) < 0)
        goto oom;
    c->in.len = c->up.len = 0;
    {
        /* Edges noted before the tunnel started (a relayed client talks
         * first, while upstream is still connecting) come only once. */
        struct px_half c2u = c->c2u, u2c = c->u2c;

        px_half_init(&c->c2u, c->cio.fd, c->uio.fd, &c->s->pipes);
        px_half_init(&c->u2c, c->uio.fd, c->cio.fd, &c->s->pipes);
        c->c2u.src_ready = c2u.src_ready;
        c->c2u.src_hup = c2u.src_hup;
        c->u2c.src_ready = u2c.src_ready;
        c->u2c.src_hup = u2c.src_hup;
    }
    ev_timer_stop(c->s->loop, &c->timer);
    c->state = CS_TUNNEL;
    return;
oom:
    px_conn_close(c);
}

bool px_conn_tunnel_bound(const struct conn *c)
{
    return c->relay || ((c->socks || c->is_connect) && !c->via_parent);
}

void px_conn_tunnel_note(struct conn *c, const struct ev_io *io, uint32_t revents)
{
    struct px_half *h = io == &c->cio ? &c->c2u : &c->u2c;

    if (!(io->events & EPOLLET))
        return;
    /* An edge comes once: it is remembered until the direction is pumped,
     * even when it came before the tunnel started. */
    if (revents & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        h->src_ready = true;
    if (revents & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        h->src_hup = true;
}

/* Whether a direction has work: its source has had an edge while it waits
 * to read, its destination is writable while it waits to write. */
static bool wakes(const struct px_half *h, uint32_t dst_ev)
{
    switch (h->state) {
    case PX_PUMP_WANT_READ:
        return h->src_ready;
    case PX_PUMP_WANT_WRITE:
        return dst_ev & EPOLLOUT;
    case PX_PUMP_DONE:
    case PX_PUMP_ERROR:
        return false;
    }
    return false;
}

void px_conn_tunnel_pump(struct conn *c, uint32_t cev, uint32_t uev)
{
    enum px_pump a, b;

    if (c->to_client.len || c->to_up.len)
        return; /* the 200 or SOCKS reply and early bytes go first */
    if (c->in.cap || c->up.cap || c->to_client.cap || c->to_up.cap || c->held.cap) {
        /* From here on bytes never touch these buffers: give the memory
         * back. */
        px_buf_free(&c->in);
        px_buf_free(&c->up);
        px_buf_free(&c->to_client);
        px_buf_free(&c->to_up);
        px_buf_free(&c->held);
    }
    a = wakes(&c->c2u, uev) ? px_half_pump(&c->c2u) : c->c2u.state;
    b = wakes(&c->u2c, cev) ? px_half_pump(&c->u2c) : c->u2c.state;
    if (a == PX_PUMP_ERROR || b == PX_PUMP_ERROR || (a == PX_PUMP_DONE && b == PX_PUMP_DONE))
        px_conn_close(c);
}

/* Edge-triggered from the start of the tunnel: the pumps run each side
 * until it would block (relay.h), and a socket's mask never changes again
 * but to add EPOLLOUT the first time a direction waits to write, which then
 * stays: an edge comes only when a full socket drains. Level-triggered,
 * every wait to write and every return to reading was two epoll_ctl. */
void px_conn_tunnel_events(const struct conn *c, uint32_t *client, uint32_t *upstream)
{
    const uint32_t base = PX_TUNNEL_EVENTS;

    if (c->to_client.len || c->to_up.len)
        return;
    *client |= base;
    *upstream |= base;
    if ((c->cio.events & (EPOLLET | EPOLLOUT)) == (EPOLLET | EPOLLOUT) ||
        c->u2c.state == PX_PUMP_WANT_WRITE)
        *client |= EPOLLOUT;
    if ((c->uio.events & (EPOLLET | EPOLLOUT)) == (EPOLLET | EPOLLOUT) ||
        c->c2u.state == PX_PUMP_WANT_WRITE)
        *upstream |= EPOLLOUT;
}
