/* proxy/conn*.c, proxy/answer.c, proxy/server.c: the proxy's connections run
 * on the real event loop, with socketpairs standing in for the client inside
 * the sandbox and for the upstream server (or the parent proxy): the server's
 * connect seam hands out one end of a fresh socketpair for every upstream
 * connection. The tests check the bytes each side sees, and that every
 * descriptor is given back. Destinations are IP literals on the allow list,
 * so nothing is resolved. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "proxy/conn.h"
#include "proxy/parent.h"
#include "proxy/rules.h"
#include "proxy/socks5.h"
#include "src/loop.h"
#include "src/violations.h"

#define MAX_UP 8

struct harness {
    struct ev_loop loop;
    struct px_server *s;
    struct px_pattern allow[1];
    struct px_rules rules;
    struct px_parent parent;
    struct vio_list vio;
    int fds_before;
    /* Our ends of the upstream socketpairs, in the order the proxy
     * connected, and where it meant to connect. */
    int up[MAX_UP];
    char up_addr[MAX_UP][64];
    size_t n_up;
    /* The timer seam: starts so far, and which one fails (1-based; 0: none). */
    int timer_starts;
    int timer_fail_at;
    bool timers_fail; /* every start fails */
};

/* The connect seam has no context argument: one harness at a time. */
static struct harness *cur;

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;

    assert_non_null(d);
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static int fake_connect(const struct px_addr *a, unsigned port)
{
    int sv[2];
    char ip[48];

    assert_non_null(cur);
    assert_true(cur->n_up < MAX_UP);
    assert_non_null(inet_ntop(a->family, a->b, ip, sizeof(ip)));
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    snprintf(cur->up_addr[cur->n_up], sizeof(cur->up_addr[0]), "%s:%u", ip, port);
    cur->up[cur->n_up++] = sv[0];
    return sv[1];
}

/* Like ev_timer_start when its heap cannot grow: the timer is stopped, and
 * the start fails. */
static int fake_timer_start(struct ev_loop *l, struct ev_timer *t, uint64_t after_ms)
{
    if (++cur->timer_starts == cur->timer_fail_at || cur->timers_fail) {
        ev_timer_stop(l, t);
        return -1;
    }
    return ev_timer_start(l, t, after_ms);
}

/* parent: a parent proxy's URL or NULL. Allowed: 10.0.0.1, any port. */
static struct harness *harness_new(const char *parent, unsigned max_connections)
{
    struct harness *h = calloc(1, sizeof(*h));
    struct nf_err err = { 0 };
    struct px_server_config cfg = { 0 };

    assert_non_null(h);
    h->fds_before = count_fds();
    assert_int_equal(ev_loop_init(&h->loop, &err), 0);
    assert_int_equal(px_pattern_parse("10.0.0.1", false, &h->allow[0], &err), 0);
    h->rules.allow = h->allow;
    h->rules.n_allow = 1;
    h->vio.log_fd = -1;
    if (parent && px_parent_parse(parent, &h->parent, &err) < 0)
        fail_msg("px_parent_parse %s: %s", parent, err.msg);
    cfg.rules = &h->rules;
    cfg.parent = &h->parent;
    cfg.max_connections = max_connections;
    cfg.violations = &h->vio;
    assert_int_equal(px_server_new(&h->s, &h->loop, &cfg, &err), 0);
    h->s->connect_upstream = fake_connect;
    h->s->timer_start = fake_timer_start;
    cur = h;
    return h;
}

/* Frees everything, and checks that every descriptor the proxy opened is
 * closed: the test's own ends must have been closed by then. */
static void harness_free(struct harness *h)
{
    px_server_free(h->s);
    ev_loop_close(&h->loop);
    vio_free(&h->vio);
    assert_int_equal(count_fds(), h->fds_before);
    cur = NULL;
    free(h);
}

static void on_stop(struct ev_loop *l, struct ev_timer *t)
{
    (void)t;
    ev_stop(l);
}

/* Run the loop until what the socketpairs hold has been dealt with: each
 * round dispatches what is ready without waiting. */
static void spin(struct harness *h)
{
    struct ev_timer stop = { .cb = on_stop };
    struct nf_err err = { 0 };

    for (int i = 0; i < 16; i++) {
        assert_int_equal(ev_timer_start(&h->loop, &stop, 0), 0);
        assert_int_equal(ev_run(&h->loop, &err), 0);
    }
    ev_timer_stop(&h->loop, &stop);
}

/* A client connection handed to the server as if accepted; returns our end. */
static int client_new(struct harness *h, bool socks)
{
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    assert_int_equal(px_conn_new(h->s, sv[1], socks, 0), 0);
    return sv[0];
}

static void put(int fd, const void *p, size_t n)
{
    assert_int_equal(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

static void puts_(int fd, const char *s)
{
    put(fd, s, strlen(s));
}

/* What fd holds now; *eof when the peer has shut down its side. */
static size_t take(int fd, char *out, size_t outsz, bool *eof)
{
    size_t n = 0;

    *eof = false;
    for (;;) {
        ssize_t r = recv(fd, out + n, outsz - 1 - n, 0);

        if (r == 0) {
            *eof = true;
            break;
        }
        if (r < 0) {
            assert_true(errno == EAGAIN);
            break;
        }
        n += (size_t)r;
        assert_true(n < outsz - 1);
    }
    out[n] = '\0';
    return n;
}

static void expect_bytes(int fd, const void *want, size_t wlen, bool want_eof)
{
    char got[65536];
    bool eof;
    size_t n = take(fd, got, sizeof(got), &eof);

    if (n != wlen || memcmp(got, want, n) != 0)
        fail_msg("got %zu bytes \"%s\", want %zu \"%.*s\"", n, got, wlen, (int)wlen,
                 (const char *)want);
    if (eof != want_eof)
        fail_msg("end of stream %s, want %s", eof ? "seen" : "not seen",
                 want_eof ? "seen" : "not seen");
}

static void expect(int fd, const char *want, bool want_eof)
{
    expect_bytes(fd, want, strlen(want), want_eof);
}

/* The client closes; the proxy closes both sides and forgets the
 * connection. */
static void client_close(struct harness *h, int client)
{
    close(client);
    spin(h);
    assert_int_equal(h->s->nconns, 0);
}

static void close_upstreams(struct harness *h)
{
    for (size_t i = 0; i < h->n_up; i++)
        close(h->up[i]);
    h->n_up = 0;
}

/* ---- plain HTTP --------------------------------------------------------- */

static void chunked_request_body_is_forwarded_to_its_end(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "POST http://10.0.0.1/up HTTP/1.1\r\nHost: 10.0.0.1\r\n"
             "Transfer-Encoding: chunked\r\n\r\n5\r\nhel");
    spin(h);
    assert_int_equal(h->n_up, 1);
    assert_string_equal(h->up_addr[0], "10.0.0.1:80");
    expect(h->up[0],
           "POST /up HTTP/1.1\r\nHost: 10.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
           false);
    /* The last chunk, a trailer, and the next request pipelined behind: the
     * next request waits until this one's response is done. */
    puts_(c,
          "lo\r\n0\r\nX-Sum: 1\r\n\r\nGET http://10.0.0.1/next HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    expect(h->up[0], "lo\r\n0\r\nX-Sum: 1\r\n\r\n", false);
    puts_(h->up[0], "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    spin(h);
    expect(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false);
    assert_int_equal(h->n_up, 1);
    expect(h->up[0], "GET /next HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", false);
    client_close(h, c);
    expect(h->up[0], "", true);
    close_upstreams(h);
    harness_free(h);
}

static void malformed_chunked_request_body_is_a_400(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "POST http://10.0.0.1/up HTTP/1.1\r\nHost: 10.0.0.1\r\n"
             "Transfer-Encoding: chunked\r\n\r\nzz\r\n");
    spin(h);
    expect(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", true);
    expect(h->up[0], "POST /up HTTP/1.1\r\nHost: 10.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n",
           true);
    client_close(h, c);
    close_upstreams(h);
    harness_free(h);
}

static void chunked_response_body_is_relayed_and_the_upstream_kept(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "GET http://10.0.0.1/a HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    expect(h->up[0], "GET /a HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", false);
    puts_(h->up[0], "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
    spin(h);
    expect(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", false);
    puts_(h->up[0], "0\r\n\r\n");
    spin(h);
    expect(c, "0\r\n\r\n", false);
    /* The body's end was found: the next request goes over the same
     * upstream connection, and its answer is the next response. */
    puts_(c, "GET http://10.0.0.1/b HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    assert_int_equal(h->n_up, 1);
    expect(h->up[0], "GET /b HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", false);
    puts_(h->up[0], "HTTP/1.1 204 No Content\r\n\r\n");
    spin(h);
    expect(c, "HTTP/1.1 204 No Content\r\n\r\n", false);
    client_close(h, c);
    expect(h->up[0], "", true);
    close_upstreams(h);
    harness_free(h);
}

static void upstream_dying_mid_chunked_body_closes_the_client(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "GET http://10.0.0.1/a HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    expect(h->up[0], "GET /a HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", false);
    puts_(h->up[0], "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab");
    close_upstreams(h);
    spin(h);
    /* A truncated body is never passed off as a complete one. */
    expect(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab", true);
    assert_int_equal(h->s->nconns, 0);
    close(c);
    harness_free(h);
}

static void interim_100_continue_precedes_the_final_response(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "POST http://10.0.0.1/p HTTP/1.1\r\nHost: 10.0.0.1\r\nContent-Length: 4\r\n\r\nbody");
    spin(h);
    expect(h->up[0], "POST /p HTTP/1.1\r\nHost: 10.0.0.1\r\nContent-Length: 4\r\n\r\nbody", false);
    puts_(h->up[0], "HTTP/1.1 100 Continue\r\n\r\n");
    spin(h);
    expect(c, "HTTP/1.1 100 Continue\r\n\r\n", false);
    puts_(h->up[0], "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    spin(h);
    expect(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false);
    client_close(h, c);
    close_upstreams(h);
    harness_free(h);
}

static void interim_and_final_response_in_one_read(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);
    static const char answer[] = "HTTP/1.1 100 Continue\r\n\r\n"
                                 "HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nnew";

    (void)state;
    puts_(c, "PUT http://10.0.0.1/p HTTP/1.1\r\nHost: 10.0.0.1\r\nContent-Length: 1\r\n\r\nx");
    spin(h);
    expect(h->up[0], "PUT /p HTTP/1.1\r\nHost: 10.0.0.1\r\nContent-Length: 1\r\n\r\nx", false);
    puts_(h->up[0], answer);
    spin(h);
    expect(c, answer, false);
    client_close(h, c);
    close_upstreams(h);
    harness_free(h);
}

static void expect_100_continue_reaches_a_client_that_waits_for_it(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    /* The client sends its head and waits for the 100 before the body. */
    puts_(c, "PUT http://10.0.0.1/p HTTP/1.1\r\nHost: 10.0.0.1\r\nExpect: 100-continue\r\n"
             "Content-Length: 4\r\n\r\n");
    spin(h);
    expect(h->up[0],
           "PUT /p HTTP/1.1\r\nHost: 10.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n",
           false);
    puts_(h->up[0], "HTTP/1.1 100 Continue\r\n\r\n");
    spin(h);
    expect(c, "HTTP/1.1 100 Continue\r\n\r\n", false);
    puts_(c, "body");
    spin(h);
    expect(h->up[0], "body", false);
    puts_(h->up[0], "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
    spin(h);
    expect(c, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", false);
    client_close(h, c);
    close_upstreams(h);
    harness_free(h);
}

static void final_response_before_the_body_ends_waits_for_the_body(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "PUT http://10.0.0.1/p HTTP/1.1\r\nHost: 10.0.0.1\r\nContent-Length: 4\r\n\r\nbo");
    spin(h);
    expect(h->up[0], "PUT /p HTTP/1.1\r\nHost: 10.0.0.1\r\nContent-Length: 4\r\n\r\nbo", false);
    /* An early final answer is framed as before: after the request body,
     * so the rest of the body is never taken for the next request. */
    puts_(h->up[0], "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    spin(h);
    expect(c, "HTTP/1.1 100 Continue\r\n\r\n", false);
    puts_(c, "dy");
    spin(h);
    expect(h->up[0], "dy", false);
    expect(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false);
    client_close(h, c);
    close_upstreams(h);
    harness_free(h);
}

static void head_response_has_no_body_despite_content_length(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "HEAD http://10.0.0.1/h HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    expect(h->up[0], "HEAD /h HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", false);
    puts_(h->up[0], "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
    spin(h);
    expect(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", false);
    /* Not waiting for 1000 bytes: the next exchange is a new message. */
    puts_(c, "GET http://10.0.0.1/g HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    assert_int_equal(h->n_up, 1);
    expect(h->up[0], "GET /g HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", false);
    puts_(h->up[0], "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
    spin(h);
    expect(c, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", false);
    client_close(h, c);
    close_upstreams(h);
    harness_free(h);
}

static void request_to_a_host_off_the_allow_list_is_a_403(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "GET http://10.0.0.2/ HTTP/1.1\r\nHost: 10.0.0.2\r\n\r\n");
    spin(h);
    expect(c,
           "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
           "X-Proxy-Error: blocked-by-allowlist\r\nContent-Length: 40\r\n"
           "Connection: close\r\n\r\nConnection blocked by network allowlist\n",
           true);
    assert_int_equal(h->n_up, 0);
    assert_int_equal(h->vio.n, 1);
    assert_string_equal(h->vio.lines[0],
                        "deny network-outbound 10.0.0.2:80 (host is not on the allow list)");
    client_close(h, c);
    harness_free(h);
}

/* ---- tunnels -------------------------------------------------------------- */

static void connect_tunnel_carries_early_bytes_and_half_closes(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\n\r\nHELLO");
    spin(h);
    assert_string_equal(h->up_addr[0], "10.0.0.1:443");
    expect(c, "HTTP/1.1 200 Connection Established\r\n\r\n", false);
    expect(h->up[0], "HELLO", false);
    puts_(h->up[0], "server bytes");
    puts_(c, "client bytes");
    spin(h);
    expect(c, "server bytes", false);
    expect(h->up[0], "client bytes", false);
    /* Each direction ends on its own; the connection when both have. */
    assert_int_equal(shutdown(c, SHUT_WR), 0);
    spin(h);
    expect(h->up[0], "", true);
    puts_(h->up[0], "last");
    close_upstreams(h);
    spin(h);
    expect(c, "last", true);
    assert_int_equal(h->s->nconns, 0);
    close(c);
    harness_free(h);
}

static void tunnel_carries_bulk_past_a_full_destination_intact(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);
    static char chunk[4096];
    size_t sent = 0, got = 0;
    bool eof = false;

    (void)state;
    puts_(c, "CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\n\r\n");
    spin(h);
    expect(c, "HTTP/1.1 200 Connection Established\r\n\r\n", false);
    /* More than the upstream socket takes before it is read: the relay
     * must hold the rest and go on when the upstream drains, with reads
     * both small and large, losing and reordering nothing. */
    for (int round = 0; round < 64; round++) {
        for (;;) {
            for (size_t i = 0; i < sizeof(chunk); i++)
                chunk[i] = (char)((sent + i) % 251);
            ssize_t n = send(c, chunk, 1 + (size_t)round * 61 % sizeof(chunk), MSG_NOSIGNAL);

            if (n < 0) {
                assert_true(errno == EAGAIN);
                break;
            }
            sent += (size_t)n;
            if (sent > (size_t)(round + 1) * 32768)
                break;
        }
        spin(h);
        for (;;) {
            ssize_t n = recv(h->up[0], chunk, sizeof(chunk), 0);

            if (n <= 0) {
                assert_true(n < 0 && errno == EAGAIN);
                break;
            }
            for (ssize_t i = 0; i < n; i++)
                if (chunk[i] != (char)((got + (size_t)i) % 251))
                    fail_msg("byte %zu differs", got + (size_t)i);
            got += (size_t)n;
        }
    }
    assert_int_equal(shutdown(c, SHUT_WR), 0);
    while (!eof) {
        ssize_t n;

        spin(h);
        n = recv(h->up[0], chunk, sizeof(chunk), 0);
        if (n == 0)
            eof = true;
        else if (n > 0) {
            for (ssize_t i = 0; i < n; i++)
                if (chunk[i] != (char)((got + (size_t)i) % 251))
                    fail_msg("byte %zu differs", got + (size_t)i);
            got += (size_t)n;
        } else
            assert_true(errno == EAGAIN);
    }
    assert_int_equal(got, sent);
    close_upstreams(h);
    spin(h);
    expect(c, "", true);
    client_close(h, c);
    harness_free(h);
}

static void relayed_client_that_talks_first_reaches_the_external_proxy(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int sv[2];

    (void)state;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    /* The request is there before upstream has even been dialled. */
    puts_(sv[0], "GET http://example.invalid/ HTTP/1.1\r\n\r\n");
    assert_int_equal(px_conn_new(h->s, sv[1], false, 8080), 0);
    spin(h);
    assert_string_equal(h->up_addr[0], "127.0.0.1:8080");
    expect(h->up[0], "GET http://example.invalid/ HTTP/1.1\r\n\r\n", false);
    puts_(h->up[0], "answer");
    close_upstreams(h);
    spin(h);
    expect(sv[0], "answer", true);
    client_close(h, sv[0]);
    harness_free(h);
}

static void socks_connect_is_answered_and_tunnelled(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, true);
    static const uint8_t greeting[] = { 5, 1, 0 }, chosen[] = { 5, 0 };
    static const uint8_t request[] = { 5, 1, 0, 1, 10, 0, 0, 1, 0x01, 0xbb };
    uint8_t ok[10];

    (void)state;
    put(c, greeting, sizeof(greeting));
    spin(h);
    expect_bytes(c, chosen, sizeof(chosen), false);
    put(c, request, sizeof(request));
    spin(h);
    assert_int_equal(h->n_up, 1);
    assert_string_equal(h->up_addr[0], "10.0.0.1:443");
    px_socks_reply(PX_SOCKS_REP_OK, ok);
    expect_bytes(c, ok, sizeof(ok), false);
    puts_(c, "ping");
    spin(h);
    expect(h->up[0], "ping", false);
    puts_(h->up[0], "pong");
    close_upstreams(h);
    spin(h);
    expect(c, "pong", true);
    client_close(h, c);
    harness_free(h);
}

static void socks_connect_to_a_denied_host_is_refused_and_reported(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, true);
    static const uint8_t greeting[] = { 5, 1, 0 }, chosen[] = { 5, 0 };
    static const uint8_t request[] = { 5, 1, 0, 1, 10, 0, 0, 2, 0x01, 0xbb };
    uint8_t refused[10];

    (void)state;
    put(c, greeting, sizeof(greeting));
    spin(h);
    expect_bytes(c, chosen, sizeof(chosen), false);
    put(c, request, sizeof(request));
    spin(h);
    px_socks_reply(PX_SOCKS_REP_NOT_ALLOWED, refused);
    expect_bytes(c, refused, sizeof(refused), true);
    assert_int_equal(h->n_up, 0);
    assert_int_equal(h->vio.n, 1);
    assert_string_equal(h->vio.lines[0],
                        "deny network-outbound 10.0.0.2:443 (host is not on the allow list)");
    client_close(h, c);
    harness_free(h);
}

static void socks_greeting_and_refused_request_in_one_read_answer_in_order(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, true);
    /* The greeting and a BIND request (refused at once) in one write: the
     * method choice must still come first, then the refusal. */
    static const uint8_t both[] = { 5, 1, 0, 5, 2, 0, 1, 10, 0, 0, 1, 0x01, 0xbb };
    uint8_t want[12];

    (void)state;
    want[0] = 5;
    want[1] = 0;
    px_socks_reply(PX_SOCKS_REP_CMD_UNSUPPORTED, want + 2);
    put(c, both, sizeof(both));
    spin(h);
    expect_bytes(c, want, sizeof(want), true);
    assert_int_equal(h->n_up, 0);
    client_close(h, c);
    harness_free(h);
}

/* ---- a parent proxy --------------------------------------------------------- */

static const char bad_gateway[] = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n"
                                  "Connection: close\r\n\r\n";

static void parent_refusing_connect_is_a_502_and_no_byte_goes_through(void **state)
{
    struct harness *h = harness_new("http://10.9.9.9:3128", 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\n\r\nHELLO");
    spin(h);
    assert_int_equal(h->n_up, 1);
    assert_string_equal(h->up_addr[0], "10.9.9.9:3128");
    expect(h->up[0], "CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\n\r\n", false);
    expect(c, "", false);
    puts_(h->up[0], "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n");
    spin(h);
    expect(c, bad_gateway, true);
    /* The client's early bytes never reach the parent that refused. */
    expect(h->up[0], "", true);
    client_close(h, c);
    close_upstreams(h);
    harness_free(h);
}

static void parent_refusing_connect_never_sees_the_held_request(void **state)
{
    struct harness *h = harness_new("http://user:pw@10.9.9.9:3128", 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "GET http://10.0.0.1/x HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    expect(h->up[0],
           "CONNECT 10.0.0.1:80 HTTP/1.1\r\nHost: 10.0.0.1:80\r\n"
           "Proxy-Authorization: Basic dXNlcjpwdw==\r\n\r\n",
           false);
    puts_(h->up[0], "HTTP/1.1 403 Forbidden\r\n\r\n");
    spin(h);
    expect(c, bad_gateway, true);
    expect(h->up[0], "", true);
    client_close(h, c);
    close_upstreams(h);
    harness_free(h);
}

static void parent_accepting_connect_gets_the_held_request(void **state)
{
    struct harness *h = harness_new("http://10.9.9.9:3128", 16);
    int c = client_new(h, false);

    (void)state;
    puts_(c, "GET http://10.0.0.1/x HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    expect(h->up[0], "CONNECT 10.0.0.1:80 HTTP/1.1\r\nHost: 10.0.0.1:80\r\n\r\n", false);
    puts_(h->up[0], "HTTP/1.1 200 Connection established\r\n\r\n");
    spin(h);
    expect(c, "", false);
    expect(h->up[0], "GET /x HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", false);
    puts_(h->up[0], "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
    spin(h);
    expect(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", false);
    client_close(h, c);
    close_upstreams(h);
    harness_free(h);
}

/* ---- accepting ------------------------------------------------------------ */

/* A listening unix socket with an abstract name the kernel picks; *addr
 * and *len say how to reach it. */
static int listener_new(struct sockaddr_un *addr, socklen_t *len)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    /* Binding just the family autobinds an abstract name. */
    assert_int_equal(bind(fd, (struct sockaddr *)addr, sizeof(sa_family_t)), 0);
    assert_int_equal(listen(fd, 8), 0);
    *len = sizeof(*addr);
    assert_int_equal(getsockname(fd, (struct sockaddr *)addr, len), 0);
    return fd;
}

static int dial(const struct sockaddr_un *addr, socklen_t len)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (const struct sockaddr *)addr, len), 0);
    return fd;
}

static void connection_over_the_cap_waits_until_one_closes(void **state)
{
    struct harness *h = harness_new(NULL, 1);
    struct sockaddr_un addr;
    socklen_t len;
    struct nf_err err = { 0 };
    int a, b;

    (void)state;
    assert_int_equal(px_server_listen(h->s, listener_new(&addr, &len), false, &err), 0);
    a = dial(&addr, len);
    spin(h);
    assert_int_equal(h->s->nconns, 1);
    /* The second connection stays in the listener's backlog: its request
     * goes nowhere and it gets no answer, not even a refusal. */
    b = dial(&addr, len);
    puts_(b, "GET http://10.0.0.1/b HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    assert_int_equal(h->s->nconns, 1);
    assert_int_equal(h->n_up, 0);
    expect(b, "", false);
    /* One closes: the waiting one is taken on and served. */
    close(a);
    spin(h);
    assert_int_equal(h->s->nconns, 1);
    assert_int_equal(h->n_up, 1);
    expect(h->up[0], "GET /b HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", false);
    puts_(h->up[0], "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb");
    spin(h);
    expect(b, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb", false);
    client_close(h, b);
    close_upstreams(h);
    harness_free(h);
}

static void accepting_resumes_after_running_out_of_descriptors_without_a_timer(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    struct sockaddr_un addr;
    socklen_t len;
    struct nf_err err = { 0 };
    struct rlimit was, low;
    int a, probe;

    (void)state;
    assert_int_equal(px_server_listen(h->s, listener_new(&addr, &len), false, &err), 0);
    a = dial(&addr, len);
    /* No descriptor is left for accept, and the retry timer cannot start:
     * with no connection open whose close would resume accepting. */
    h->timers_fail = true;
    probe = dup(0);
    assert_true(probe >= 0);
    close(probe);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    low = was;
    low.rlim_cur = (rlim_t)probe;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    spin(h);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    h->timers_fail = false;
    assert_true(h->timer_starts >= 1);
    assert_int_equal(h->s->nconns, 0);
    /* Descriptors are back: the waiting connection is taken on. */
    spin(h);
    assert_int_equal(h->s->nconns, 1);
    puts_(a, "GET http://10.0.0.1/a HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    expect(h->up[0], "GET /a HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", false);
    client_close(h, a);
    close_upstreams(h);
    harness_free(h);
}

/* ---- a timer that cannot start ------------------------------------------- */

static void failed_timer_start_on_accept_closes_the_connection(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int sv[2];

    (void)state;
    h->timer_fail_at = 1; /* the head timeout */
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    assert_int_equal(px_conn_new(h->s, sv[1], false, 0), -1);
    spin(h);
    assert_int_equal(h->s->nconns, 0);
    expect(sv[0], "", true);
    close(sv[0]);
    harness_free(h);
}

static void failed_timer_start_before_connecting_dials_nothing(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, false);

    (void)state;
    h->timer_fail_at = 2; /* the connect timeout */
    puts_(c, "GET http://10.0.0.1/ HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
    spin(h);
    assert_int_equal(h->timer_starts, 2);
    assert_int_equal(h->n_up, 0);
    assert_int_equal(h->s->nconns, 0);
    expect(c, "", true);
    close(c);
    harness_free(h);
}

static void failed_timer_start_for_the_drain_still_closes(void **state)
{
    struct harness *h = harness_new(NULL, 16);
    int c = client_new(h, true);
    static const uint8_t greeting[] = { 5, 1, 0 }, chosen[] = { 5, 0 };
    static const uint8_t bind_req[] = { 5, 2, 0, 1, 10, 0, 0, 1, 0x01, 0xbb };
    uint8_t refused[10];

    (void)state;
    put(c, greeting, sizeof(greeting));
    spin(h);
    expect_bytes(c, chosen, sizeof(chosen), false);
    /* Head timeout, the answer's timeout, then the drain's: the answer is
     * written, and the client that never closes does not keep the
     * connection without a deadline. */
    h->timer_fail_at = 3;
    put(c, bind_req, sizeof(bind_req));
    spin(h);
    px_socks_reply(PX_SOCKS_REP_CMD_UNSUPPORTED, refused);
    expect_bytes(c, refused, sizeof(refused), true);
    assert_int_equal(h->timer_starts, 3);
    assert_int_equal(h->s->nconns, 0);
    close(c);
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chunked_request_body_is_forwarded_to_its_end),
        cmocka_unit_test(malformed_chunked_request_body_is_a_400),
        cmocka_unit_test(chunked_response_body_is_relayed_and_the_upstream_kept),
        cmocka_unit_test(upstream_dying_mid_chunked_body_closes_the_client),
        cmocka_unit_test(interim_100_continue_precedes_the_final_response),
        cmocka_unit_test(interim_and_final_response_in_one_read),
        cmocka_unit_test(expect_100_continue_reaches_a_client_that_waits_for_it),
        cmocka_unit_test(final_response_before_the_body_ends_waits_for_the_body),
        cmocka_unit_test(head_response_has_no_body_despite_content_length),
        cmocka_unit_test(request_to_a_host_off_the_allow_list_is_a_403),
        cmocka_unit_test(connect_tunnel_carries_early_bytes_and_half_closes),
        cmocka_unit_test(tunnel_carries_bulk_past_a_full_destination_intact),
        cmocka_unit_test(relayed_client_that_talks_first_reaches_the_external_proxy),
        cmocka_unit_test(socks_connect_is_answered_and_tunnelled),
        cmocka_unit_test(socks_connect_to_a_denied_host_is_refused_and_reported),
        cmocka_unit_test(socks_greeting_and_refused_request_in_one_read_answer_in_order),
        cmocka_unit_test(parent_refusing_connect_is_a_502_and_no_byte_goes_through),
        cmocka_unit_test(parent_refusing_connect_never_sees_the_held_request),
        cmocka_unit_test(parent_accepting_connect_gets_the_held_request),
        cmocka_unit_test(connection_over_the_cap_waits_until_one_closes),
        cmocka_unit_test(accepting_resumes_after_running_out_of_descriptors_without_a_timer),
        cmocka_unit_test(failed_timer_start_on_accept_closes_the_connection),
        cmocka_unit_test(failed_timer_start_before_connecting_dials_nothing),
        cmocka_unit_test(failed_timer_start_for_the_drain_still_closes),
    };

    return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}
