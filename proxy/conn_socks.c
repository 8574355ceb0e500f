/* A SOCKS5 connection's start: the greeting (no authentication, or a
 * refusal) and the CONNECT request, decided by the same rules as HTTP; what
 * follows is a tunnel (conn_tunnel.c). */
#include "proxy/conn.h"

#include <stdio.h>
#include <string.h>

#include "proxy/rules.h"
#include "proxy/socks5.h"

/* A name the rules refused as malformed, as sent: every byte outside
 * printable ASCII as \\xNN, so that one cut at a NUL never reads as the
 * allowed name before it. out holds 4 bytes a byte of the longest name. */
#define SHOWN_MAX (4 * 255 + 1)

static void show_raw(const char *host, size_t len, char *out, size_t outsz)
{
    size_t o = 0;

    for (size_t i = 0; i < len && o + 5 < outsz; i++) {
        unsigned char b = (unsigned char)host[i];

        if (b > 0x20 && b < 0x7f && b != '\\')
            out[o++] = (char)b;
        else
            o += (size_t)snprintf(out + o, outsz - o, "\\x%02x", b);
    }
    out[o] = '\0';
}

void px_conn_socks_step(struct conn *c)
{
    size_t used;

    if (c->state == CS_SOCKS_GREETING) {
        bool no_auth;
        static const uint8_t accept_none[2] = { 5, 0 }, refuse[2] = { 5, 0xff };

        switch (px_socks_parse_greeting((const uint8_t *)c->in.data, c->in.len, &used, &no_auth)) {
        case PX_SOCKS_INCOMPLETE:
            return;
        case PX_SOCKS_BAD:
            px_conn_close(c);
            return;
        case PX_SOCKS_OK:
            break;
        }
        px_buf_consume(&c->in, used);
        if (!no_auth) {
            px_conn_respond(c, refuse, sizeof(refuse));
            return;
        }
        if (px_buf_append(&c->to_client, accept_none, sizeof(accept_none)) < 0) {
            px_conn_close(c);
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
            px_conn_close(c);
            return;
        case PX_SOCKS_OK:
            break;
        }
        px_buf_consume(&c->in, used);
        c->port = r.port;
        if (r.cmd != PX_SOCKS_CMD_CONNECT) {
            px_conn_socks_reply(c, PX_SOCKS_REP_CMD_UNSUPPORTED);
            return;
        }
        c->rules = c->s->cfg.rules;
        px_rules_decide(c->rules, r.host, r.host_len, r.port, &d);
        if (!d.allow || r.port == 0) {
            char shown[SHOWN_MAX];

            if (d.host[0])
                snprintf(shown, sizeof(shown), "%s", d.host);
            else
                show_raw(r.host, r.host_len, shown, sizeof(shown));
            px_conn_deny(c, shown, d.allow ? "port 0 is no destination" : d.reason);
            return;
        }
        memcpy(c->host, d.host, sizeof(c->host));
        c->is_ip = d.is_ip;
        c->addr = d.addr;
        px_conn_start_resolve(c);
    }
}
