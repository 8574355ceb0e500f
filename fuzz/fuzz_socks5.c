/* libFuzzer target for proxy/socks5.c. The input is what a client sends
 * after connecting: a greeting, then (when the greeting parses) a request.
 * Checked: nothing consumed past the input, the host copy always
 * terminated and within PX_HOST_MAX, the address matching ATYP, and every
 * prefix either INCOMPLETE or the final verdict. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz/fuzz.h"
#include "proxy/socks5.h"

static void fuzz_greeting(const uint8_t *buf, size_t len)
{
    size_t consumed;
    bool no_auth;
    enum px_socks_result r = px_socks_parse_greeting(buf, len, &consumed, &no_auth);

    if (r == PX_SOCKS_OK) {
        CHECK(consumed >= 3 && consumed <= len && consumed == (size_t)buf[1] + 2);
        CHECK(no_auth == (memchr(buf + 2, 0, consumed - 2) != NULL));
    }
    for (size_t k = 0; k < len && k < 300; k++) {
        uint8_t *pre = fuzz_copy(buf, k);
        enum px_socks_result p = px_socks_parse_greeting(pre, k, &consumed, &no_auth);

        CHECK(p != PX_SOCKS_OK || (r == PX_SOCKS_OK && k >= consumed));
        CHECK(p == PX_SOCKS_INCOMPLETE || p == r);
        free(pre);
    }
}

static void fuzz_request(const uint8_t *buf, size_t len)
{
    struct px_socks_request req, pre_req;
    size_t consumed = 0, pc;
    enum px_socks_result r = px_socks_parse_request(buf, len, &consumed, &req);

    if (r == PX_SOCKS_OK) {
        CHECK(consumed >= 8 && consumed <= len);
        CHECK(req.host_len > 0 && req.host_len < PX_HOST_MAX && req.host[req.host_len] == '\0');
        CHECK(req.port <= 65535 &&
              req.port == ((unsigned)buf[consumed - 2] << 8 | buf[consumed - 1]));
        CHECK(req.cmd == buf[1]);
        switch (req.atyp) {
        case 1:
            CHECK(consumed == 10 && req.addr.family == AF_INET);
            CHECK(memcmp(req.addr.b, buf + 4, 4) == 0);
            CHECK(strlen(req.host) == req.host_len);
            break;
        case 4:
            CHECK(consumed == 22 && req.addr.family == AF_INET6);
            CHECK(memcmp(req.addr.b, buf + 4, 16) == 0);
            CHECK(strlen(req.host) == req.host_len);
            break;
        case 3:
            CHECK(consumed == 7 + (size_t)buf[4] && req.host_len == buf[4]);
            CHECK(memcmp(req.host, buf + 5, req.host_len) == 0);
            break;
        default:
            CHECK(!"unknown atyp accepted");
        }
    }
    for (size_t k = 0; k < len && k < 300; k++) {
        uint8_t *pre = fuzz_copy(buf, k);
        enum px_socks_result p = px_socks_parse_request(pre, k, &pc, &pre_req);

        CHECK(p != PX_SOCKS_OK || (r == PX_SOCKS_OK && k >= consumed && pc == consumed));
        CHECK(p == PX_SOCKS_INCOMPLETE || p == r);
        free(pre);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t consumed;
    bool no_auth;
    uint8_t reply[10];

    fuzz_greeting(data, size);
    /* The request as sent right after a greeting, and on its own. */
    if (px_socks_parse_greeting(data, size, &consumed, &no_auth) == PX_SOCKS_OK) {
        fuzz_request(data + consumed, size - consumed);
    }
    fuzz_request(data, size);
    if (size > 0) {
        px_socks_reply(data[0], reply);
        CHECK(reply[0] == 5 && reply[1] == data[0] && reply[2] == 0 && reply[3] == 1);
        for (int i = 4; i < 10; i++) {
            CHECK(reply[i] == 0);
        }
    }
    return 0;
}
