/* proxy/socks5.c: RFC 1928 greeting, request and reply. Inputs are copied into
 * heap buffers of exactly their length so that ASan catches over-reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "proxy/socks5.h"

#define B(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })

static uint8_t *dup_exact(const uint8_t *s, size_t n)
{
    uint8_t *p = malloc(n ? n : 1);

    assert_non_null(p);
    if (n) {
        memcpy(p, s, n);
    }
    return p;
}

static const char *result_name(enum px_socks_result r)
{
    switch (r) {
    case PX_SOCKS_INCOMPLETE:
        return "INCOMPLETE";
    case PX_SOCKS_OK:
        return "OK";
    case PX_SOCKS_BAD:
        return "BAD";
    }
    return "?";
}

/* ---- greeting -------------------------------------------------------- */

struct greet_case {
    const char *name;
    const uint8_t *in;
    size_t len;
    enum px_socks_result want;
    size_t consumed;
    bool no_auth;
};

static const struct greet_case greet_cases[] = {
    { "no_auth_only", B(5, 1, 0), PX_SOCKS_OK, 3, true },
    { "user_pass_and_gssapi", B(5, 2, 2, 1), PX_SOCKS_OK, 4, false },
    { "no_auth_among_others", B(5, 3, 2, 0, 1), PX_SOCKS_OK, 5, true },
    { "request_pipelined_after", B(5, 1, 0, 5, 1, 0, 1), PX_SOCKS_OK, 3, true },
    { "empty", NULL, 0, PX_SOCKS_INCOMPLETE, 0, false },
    { "version_only", B(5), PX_SOCKS_INCOMPLETE, 0, false },
    { "methods_missing", B(5, 2, 0), PX_SOCKS_INCOMPLETE, 0, false },
    { "socks4", B(4, 1, 0, 80, 127, 0, 0, 1, 0), PX_SOCKS_BAD, 0, false },
    { "http", B('G', 'E', 'T'), PX_SOCKS_BAD, 0, false },
    { "zero_methods", B(5, 0), PX_SOCKS_BAD, 0, false },
    { "zero_methods_with_bytes", B(5, 0, 0), PX_SOCKS_BAD, 0, false },
};

static void greeting_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(greet_cases) / sizeof(greet_cases[0]); i++) {
        const struct greet_case *c = &greet_cases[i];
        size_t len = c->len;
        uint8_t *buf = dup_exact(c->in, len);
        size_t consumed = 99;
        bool no_auth = true;
        enum px_socks_result r = px_socks_parse_greeting(buf, len, &consumed, &no_auth);

        if (r != c->want) {
            fail_msg("%s: %s, want %s", c->name, result_name(r), result_name(c->want));
        }
        if (r == PX_SOCKS_OK && (consumed != c->consumed || no_auth != c->no_auth)) {
            fail_msg("%s: consumed %zu no_auth %d", c->name, consumed, no_auth);
        }
        free(buf);
    }
}

static void greeting_all_255_methods(void **state)
{
    uint8_t buf[257];
    size_t consumed;
    bool no_auth;

    (void)state;
    buf[0] = 5;
    buf[1] = 255;
    for (int i = 0; i < 255; i++) {
        buf[2 + i] = (uint8_t)(254 - i); /* 0xfe down to 0x00, last */
    }
    assert_int_equal(px_socks_parse_greeting(buf, 256, &consumed, &no_auth), PX_SOCKS_INCOMPLETE);
    assert_int_equal(px_socks_parse_greeting(buf, 257, &consumed, &no_auth), PX_SOCKS_OK);
    assert_int_equal(consumed, 257);
    assert_true(no_auth);
}

static void greeting_byte_at_a_time(void **state)
{
    static const uint8_t in[] = { 5, 3, 2, 1, 0 };
    size_t consumed;
    bool no_auth;

    (void)state;
    for (size_t k = 0; k < sizeof(in); k++) {
        uint8_t *buf = dup_exact(in, k);

        assert_int_equal(px_socks_parse_greeting(buf, k, &consumed, &no_auth), PX_SOCKS_INCOMPLETE);
        free(buf);
    }
    assert_int_equal(px_socks_parse_greeting(in, sizeof(in), &consumed, &no_auth), PX_SOCKS_OK);
    assert_int_equal(consumed, sizeof(in));
}

/* ---- request --------------------------------------------------------- */

struct req_case {
    const char *name;
    const uint8_t *in;
    size_t len;
    enum px_socks_result want;
    size_t consumed;
    uint8_t cmd;
    uint8_t atyp;
    const char *host;
    size_t host_len;
    unsigned port;
};

static const struct req_case req_cases[] = {
    { "connect_ipv4", B(5, 1, 0, 1, 127, 0, 0, 1, 0, 80), PX_SOCKS_OK, 10, 1, 1, "127.0.0.1", 9,
      80 },
    { "connect_ipv4_high_port", B(5, 1, 0, 1, 10, 1, 2, 3, 0xff, 0xff), PX_SOCKS_OK, 10, 1, 1,
      "10.1.2.3", 8, 65535 },
    { "connect_ipv6",
      B(5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x01, 0xbb),
      PX_SOCKS_OK, 22, 1, 4, "2001:db8::1", 11, 443 },
    { "connect_ipv6_loopback", B(5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 22),
      PX_SOCKS_OK, 22, 1, 4, "::1", 3, 22 },
    { "connect_ipv4_mapped",
      B(5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4, 0, 80), PX_SOCKS_OK, 22,
      1, 4, "::ffff:1.2.3.4", 14, 80 },
    { "connect_domain",
      B(5, 1, 0, 3, 11, 'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'c', 'o', 'm', 0x01, 0xbb),
      PX_SOCKS_OK, 18, 1, 3, "example.com", 11, 443 },
    { "domain_with_nul_kept_whole",
      B(5, 1, 0, 3, 9, 'a', '.', 'c', 'o', 'm', 0, 'e', 'v', 'l', 0, 80), PX_SOCKS_OK, 16, 1, 3,
      "a.com\0evl", 9, 80 },
    { "domain_raw_bytes", B(5, 1, 0, 3, 3, 0xff, '\r', '\n', 0, 80), PX_SOCKS_OK, 10, 1, 3,
      "\xff\r\n", 3, 80 },
    { "bind_parses", B(5, 2, 0, 1, 0, 0, 0, 0, 0, 0), PX_SOCKS_OK, 10, 2, 1, "0.0.0.0", 7, 0 },
    { "udp_associate_parses", B(5, 3, 0, 1, 0, 0, 0, 0, 0, 0), PX_SOCKS_OK, 10, 3, 1, "0.0.0.0", 7,
      0 },
    { "unknown_cmd_parses", B(5, 9, 0, 3, 1, 'h', 0, 80), PX_SOCKS_OK, 8, 9, 3, "h", 1, 80 },
    { "trailing_data_not_consumed", B(5, 1, 0, 1, 1, 2, 3, 4, 0, 80, 'G', 'E', 'T'), PX_SOCKS_OK,
      10, 1, 1, "1.2.3.4", 7, 80 },
    { "wrong_version", B(4, 1, 0, 1, 1, 2, 3, 4, 0, 80), PX_SOCKS_BAD, 0, 0, 0, NULL, 0, 0 },
    { "wrong_version_alone", B(6), PX_SOCKS_BAD, 0, 0, 0, NULL, 0, 0 },
    { "reserved_not_zero", B(5, 1, 1, 1, 1, 2, 3, 4, 0, 80), PX_SOCKS_BAD, 0, 0, 0, NULL, 0, 0 },
    { "reserved_not_zero_early", B(5, 1, 1), PX_SOCKS_BAD, 0, 0, 0, NULL, 0, 0 },
    { "atyp_0", B(5, 1, 0, 0, 1, 2, 3, 4, 0, 80), PX_SOCKS_BAD, 0, 0, 0, NULL, 0, 0 },
    { "atyp_2", B(5, 1, 0, 2, 1, 2, 3, 4, 0, 80), PX_SOCKS_BAD, 0, 0, 0, NULL, 0, 0 },
    { "atyp_5_early", B(5, 1, 0, 5), PX_SOCKS_BAD, 0, 0, 0, NULL, 0, 0 },
    { "empty_domain", B(5, 1, 0, 3, 0, 0, 80), PX_SOCKS_BAD, 0, 0, 0, NULL, 0, 0 },
    { "empty_domain_early", B(5, 1, 0, 3, 0), PX_SOCKS_BAD, 0, 0, 0, NULL, 0, 0 },
    { "truncated_ipv4", B(5, 1, 0, 1, 127, 0, 0, 1, 0), PX_SOCKS_INCOMPLETE, 0, 0, 0, NULL, 0, 0 },
    { "truncated_ipv6", B(5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1),
      PX_SOCKS_INCOMPLETE, 0, 0, 0, NULL, 0, 0 },
    { "truncated_domain", B(5, 1, 0, 3, 200, 'a', 'b'), PX_SOCKS_INCOMPLETE, 0, 0, 0, NULL, 0, 0 },
    { "header_only", B(5, 1, 0, 3), PX_SOCKS_INCOMPLETE, 0, 0, 0, NULL, 0, 0 },
};

static void check_req(const struct req_case *c, const uint8_t *buf, size_t len)
{
    struct px_socks_request r;
    size_t consumed = 99;
    enum px_socks_result res = px_socks_parse_request(buf, len, &consumed, &r);

    if (res != c->want) {
        fail_msg("%s: %s, want %s", c->name, result_name(res), result_name(c->want));
    }
    if (res != PX_SOCKS_OK) {
        return;
    }
    if (consumed != c->consumed || r.cmd != c->cmd || r.atyp != c->atyp || r.port != c->port ||
        r.host_len != c->host_len || memcmp(r.host, c->host, c->host_len) != 0 ||
        r.host[r.host_len] != '\0') {
        fail_msg("%s: consumed %zu cmd %u atyp %u port %u host_len %zu", c->name, consumed, r.cmd,
                 r.atyp, r.port, r.host_len);
    }
    if (c->atyp == 1 && (r.addr.family != AF_INET || memcmp(r.addr.b, buf + 4, 4) != 0)) {
        fail_msg("%s: addr not the IPv4 sent", c->name);
    }
    if (c->atyp == 4 && (r.addr.family != AF_INET6 || memcmp(r.addr.b, buf + 4, 16) != 0)) {
        fail_msg("%s: addr not the IPv6 sent", c->name);
    }
}

static void request_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(req_cases) / sizeof(req_cases[0]); i++) {
        uint8_t *buf = dup_exact(req_cases[i].in, req_cases[i].len);

        check_req(&req_cases[i], buf, req_cases[i].len);
        free(buf);
    }
}

/* Every strict prefix of a good request is INCOMPLETE; of a bad one,
 * INCOMPLETE or BAD, never OK. */
static void request_prefixes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(req_cases) / sizeof(req_cases[0]); i++) {
        const struct req_case *c = &req_cases[i];
        size_t end = c->want == PX_SOCKS_OK ? c->consumed : c->len;

        for (size_t k = 0; k < end; k++) {
            struct px_socks_request r;
            size_t consumed;
            uint8_t *buf = dup_exact(c->in, k);
            enum px_socks_result res = px_socks_parse_request(buf, k, &consumed, &r);

            if (res == PX_SOCKS_OK || (c->want != PX_SOCKS_BAD && res != PX_SOCKS_INCOMPLETE)) {
                fail_msg("%s: prefix %zu gives %s", c->name, k, result_name(res));
            }
            free(buf);
        }
    }
}

static void request_longest_domain(void **state)
{
    uint8_t buf[5 + 255 + 2];
    struct px_socks_request r;
    size_t consumed;

    (void)state;
    buf[0] = 5;
    buf[1] = 1;
    buf[2] = 0;
    buf[3] = 3;
    buf[4] = 255;
    memset(buf + 5, 'a', 255);
    buf[260] = 0x1f;
    buf[261] = 0x90;
    assert_int_equal(px_socks_parse_request(buf, sizeof(buf) - 1, &consumed, &r),
                     PX_SOCKS_INCOMPLETE);
    assert_int_equal(px_socks_parse_request(buf, sizeof(buf), &consumed, &r), PX_SOCKS_OK);
    assert_int_equal(consumed, sizeof(buf));
    assert_int_equal(r.host_len, 255);
    assert_int_equal(r.host[255], '\0');
    assert_int_equal(r.port, 8080);
}

/* ---- reply ----------------------------------------------------------- */

static void reply_bytes(void **state)
{
    static const uint8_t reps[] = { PX_SOCKS_REP_OK,
                                    PX_SOCKS_REP_FAILURE,
                                    PX_SOCKS_REP_NOT_ALLOWED,
                                    PX_SOCKS_REP_HOST_UNREACHABLE,
                                    PX_SOCKS_REP_CMD_UNSUPPORTED,
                                    PX_SOCKS_REP_ATYP_UNSUPPORTED };

    (void)state;
    for (size_t i = 0; i < sizeof(reps); i++) {
        uint8_t want[10] = { 5, reps[i], 0, 1, 0, 0, 0, 0, 0, 0 };
        uint8_t out[10];

        memset(out, 0xaa, sizeof(out));
        px_socks_reply(reps[i], out);
        assert_memory_equal(out, want, sizeof(want));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(greeting_table),
        cmocka_unit_test(greeting_all_255_methods),
        cmocka_unit_test(greeting_byte_at_a_time),
        cmocka_unit_test(request_table),
        cmocka_unit_test(request_prefixes),
        cmocka_unit_test(request_longest_domain),
        cmocka_unit_test(reply_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
