/* CONNECT and SOCKS tunnels, and relays to an external proxy: once upstream
 * is connected, the reply and any early bytes go first through the buffers,
 * then the two directions are spliced (relay.c) and the buffers' memory is
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
    px_half_init(&c->c2u, c->cio.fd, c->uio.fd, &c->s->pipes);
    px_half_init(&c->u2c, c->uio.fd, c->cio.fd, &c->s->pipes);
    ev_timer_stop(c->s->loop, &c->timer);
    c->state = CS_TUNNEL;
    return;
oom:
    px_conn_close(c);
}

void px_conn_tunnel_pump(struct conn *c)
{
    enum px_pump a, b;

    if (c->to_client.len || c->to_up.len)
        return; /* the 200 or SOCKS reply and early bytes go first */
    if (c->in.cap || c->up.cap || c->to_client.cap || c->to_up.cap || c->held.cap) {
        /* From here on bytes never touch user space: give the memory back. */
        px_buf_free(&c->in);
        px_buf_free(&c->up);
        px_buf_free(&c->to_client);
        px_buf_free(&c->to_up);
        px_buf_free(&c->held);
    }
    a = c->c2u.state == PX_PUMP_DONE ? PX_PUMP_DONE : px_half_pump(&c->c2u);
    b = c->u2c.state == PX_PUMP_DONE ? PX_PUMP_DONE : px_half_pump(&c->u2c);
    if (a == PX_PUMP_ERROR || b == PX_PUMP_ERROR || (a == PX_PUMP_DONE && b == PX_PUMP_DONE))
        px_conn_close(c);
}

void px_conn_tunnel_events(const struct conn *c, uint32_t *client, uint32_t *upstream)
{
    if (c->to_client.len || c->to_up.len)
        return;
    if (c->c2u.state == PX_PUMP_WANT_READ)
        *client |= EPOLLIN;
    if (c->c2u.state == PX_PUMP_WANT_WRITE)
        *upstream |= EPOLLOUT;
    if (c->u2c.state == PX_PUMP_WANT_READ)
        *upstream |= EPOLLIN;
    if (c->u2c.state == PX_PUMP_WANT_WRITE)
        *client |= EPOLLOUT;
}
