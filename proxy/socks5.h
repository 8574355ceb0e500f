/* SOCKS5 (RFC 1928), no-auth CONNECT only. Pure functions over buffers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy/host.h"

enum px_socks_result {
    PX_SOCKS_INCOMPLETE,
    PX_SOCKS_OK,
    PX_SOCKS_BAD, /* wrong version or malformed: close the connection */
};

enum {
    PX_SOCKS_REP_OK = 0x00,
    PX_SOCKS_REP_FAILURE = 0x01,
    PX_SOCKS_REP_NOT_ALLOWED = 0x02,
    PX_SOCKS_REP_HOST_UNREACHABLE = 0x04,
    PX_SOCKS_REP_CMD_UNSUPPORTED = 0x07,
    PX_SOCKS_REP_ATYP_UNSUPPORTED = 0x08,
};

enum {
    PX_SOCKS_CMD_CONNECT = 1,
    PX_SOCKS_CMD_BIND = 2,
    PX_SOCKS_CMD_UDP = 3,
};

/* VER=5 NMETHODS(1..255) METHODS. *consumed is the greeting's length;
 * *no_auth tells whether method 0x00 was offered. */
enum px_socks_result px_socks_parse_greeting(const uint8_t *buf, size_t len, size_t *consumed,
                                             bool *no_auth);

struct px_socks_request {
    uint8_t cmd;
    uint8_t atyp;           /* 1 IPv4, 3 domain, 4 IPv6 */
    char host[PX_HOST_MAX]; /* domain bytes as sent (NUL-terminated copy;
                               may contain any byte, see host_len), or the
                               address as text */
    size_t host_len;
    struct px_addr addr; /* atyp 1 or 4 */
    unsigned port;
};

/* VER=5 CMD RSV=0 ATYP DST.ADDR DST.PORT. An unknown ATYP is BAD; a zero-length
 * domain is BAD. */
enum px_socks_result px_socks_parse_request(const uint8_t *buf, size_t len, size_t *consumed,
                                            struct px_socks_request *out);

/* The 10-byte reply: 05 REP 00 01 00 00 00 00 00 00. */
void px_socks_reply(uint8_t rep, uint8_t out[10]);
