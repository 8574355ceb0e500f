/* SOCKS5 (RFC 1928) greeting and request. The bytes come from the sandboxed
 * command; a short read is INCOMPLETE, never a guess, and every length field
 * is checked against the buffer before it is used. */
#include "proxy/socks5.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#define SOCKS_VERSION 5

enum px_socks_result px_socks_parse_greeting(const uint8_t *buf, size_t len, size_t *consumed,
                                             bool *no_auth)
{
    size_t n;

    *consumed = 0;
    *no_auth = false;
    if (len < 1) {
        return PX_SOCKS_INCOMPLETE;
    }
    /* SOCKS4 (0x04) has no authentication and no domain names we could
     * filter the same way; anything else is not SOCKS at all. */
    if (buf[0] != SOCKS_VERSION) {
        return PX_SOCKS_BAD;
    }
    if (len < 2) {
        return PX_SOCKS_INCOMPLETE;
    }
    n = buf[1];
    if (n == 0) {
        return PX_SOCKS_BAD;
    }
    if (len < 2 + n) {
        return PX_SOCKS_INCOMPLETE;
    }
    for (size_t i = 0; i < n; i++) {
        if (buf[2 + i] == 0x00) {
            *no_auth = true;
        }
    }
    *consumed = 2 + n;
    return PX_SOCKS_OK;
}

enum px_socks_result px_socks_parse_request(const uint8_t *buf, size_t len, size_t *consumed,
                                            struct px_socks_request *out)
{
    size_t addr_len, need;
    const uint8_t *a;

    *consumed = 0;
    memset(out, 0, sizeof(*out));
    /* Refuse as early as the bytes allow: a peer that is not speaking
     * SOCKS5 should not hold the connection open waiting for more. */
    if (len >= 1 && buf[0] != SOCKS_VERSION) {
        return PX_SOCKS_BAD;
    }
    /* RSV must be zero (RFC 1928 4); a non-zero byte means the framing is
     * not what we think it is. */
    if (len >= 3 && buf[2] != 0x00) {
        return PX_SOCKS_BAD;
    }
    if (len < 5) {
        if (len == 4 && buf[3] != 1 && buf[3] != 3 && buf[3] != 4) {
            return PX_SOCKS_BAD;
        }
        return PX_SOCKS_INCOMPLETE;
    }
    /* Every CMD parses: BIND, UDP ASSOCIATE and unknown ones are answered
     * 07 by the caller, as RFC 1928 asks, rather than with a dropped
     * connection. */
    out->cmd = buf[1];
    out->atyp = buf[3];
    switch (out->atyp) {
    case 1:
        addr_len = 4;
        a = buf + 4;
        break;
    case 4:
        addr_len = 16;
        a = buf + 4;
        break;
    case 3:
        /* A zero-length name would reach the filter as "" and the resolver
         * as the local host. */
        addr_len = buf[4];
        if (addr_len == 0) {
            return PX_SOCKS_BAD;
        }
        a = buf + 5;
        break;
    default:
        return PX_SOCKS_BAD;
    }
    need = (size_t)(a - buf) + addr_len + 2;
    if (len < need) {
        return PX_SOCKS_INCOMPLETE;
    }
    if (out->atyp == 3) {
        /* Kept byte for byte, NULs included (host_len counts them): the
         * host check must see the name the client sent, and a C-string view
         * that stopped at the NUL would check "allowed.example" for
         * "allowed.example\0.evil.example". */
        memcpy(out->host, a, addr_len);
        out->host[addr_len] = '\0';
        out->host_len = addr_len;
    } else {
        out->addr.family = out->atyp == 1 ? AF_INET : AF_INET6;
        memcpy(out->addr.b, a, addr_len);
        if (!inet_ntop(out->addr.family, out->addr.b, out->host, sizeof(out->host))) {
            return PX_SOCKS_BAD;
        }
        out->host_len = strlen(out->host);
    }
    out->port = (unsigned)a[addr_len] << 8 | a[addr_len + 1];
    *consumed = need;
    return PX_SOCKS_OK;
}

void px_socks_reply(uint8_t rep, uint8_t out[10])
{
    /* BND.ADDR 0.0.0.0:0: the client has no use for our outbound address,
     * and telling it would leak the host's. */
    static const uint8_t tmpl[10] = { SOCKS_VERSION, 0, 0x00, 0x01, 0, 0, 0, 0, 0, 0 };

    memcpy(out, tmpl, sizeof(tmpl));
    out[1] = rep;
}
