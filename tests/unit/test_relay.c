/* proxy/relay.c: one direction of a tunnel over socketpairs. Checks the pipe
 * a direction borrows while it carries bulk: grown to 1 MiB (at most 16 of a
 * pool's at once, the others to 256 KiB), shrunk back to the default before
 * the pool takes it; that the rest of a short send waits without a pipe,
 * whatever pipe the pool holds (one made past its user's pipe quota holds
 * less than that rest); and every byte delivered in order. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "proxy/relay.h"

#define MIB (1u << 20)

/* A direction from src[0] (the source the pump reads) to dst[0] (the
 * destination it writes); the test writes into src[1] and reads dst[1]. */
struct dir {
    int src[2];
    int dst[2];
    struct px_half h;
};

static void dir_open(struct dir *d, struct px_pipe_pool *pool)
{
    int small = 32768;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, d->src), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, d->dst), 0);
    /* A destination that takes one small read whole but fills soon after,
     * so the direction turns to splice and bytes wait in its pipe. */
    assert_int_equal(setsockopt(d->dst[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
    px_half_init(&d->h, d->src[0], d->dst[0], pool);
}

static void dir_close(struct dir *d)
{
    px_half_release(&d->h);
    for (int i = 0; i < 2; i++) {
        close(d->src[i]);
        close(d->dst[i]);
    }
}

/* Writes what the source takes of a pattern starting at *off. */
static size_t fill(struct dir *d, size_t *off)
{
    char buf[16384];
    size_t total = 0;

    for (;;) {
        ssize_t n;

        for (size_t i = 0; i < sizeof(buf); i++)
            buf[i] = (char)((*off + i) % 251);
        n = send(d->src[1], buf, sizeof(buf), MSG_DONTWAIT);
        if (n <= 0) {
            assert_true(n < 0 && errno == EAGAIN);
            return total;
        }
        *off += (size_t)n;
        total += (size_t)n;
    }
}

/* Reads what the destination holds, checking the pattern from *off. */
static size_t drain(struct dir *d, size_t *off)
{
    char buf[16384];
    size_t total = 0;

    for (;;) {
        ssize_t n = recv(d->dst[1], buf, sizeof(buf), MSG_DONTWAIT);

        if (n <= 0) {
            assert_true(n < 0 && errno == EAGAIN);
            return total;
        }
        for (ssize_t i = 0; i < n; i++)
            assert_int_equal((unsigned char)buf[i], (*off + (size_t)i) % 251);
        *off += (size_t)n;
        total += (size_t)n;
    }
}

/* Pumps until the destination is full with bytes left in the pipe. */
static void pump_to_full(struct dir *d)
{
    size_t wrote = 0;

    while (fill(d, &wrote) > 0 || d->h.buffered == 0) {
        enum px_pump st = px_half_pump(&d->h);

        assert_int_not_equal(st, PX_PUMP_ERROR);
        if (st == PX_PUMP_WANT_WRITE && d->h.buffered)
            return;
    }
}

static void bulk_grows_the_pipe_and_the_pool_gets_it_back_at_the_default(void **state)
{
    struct px_pipe_pool pool = { 0 };
    struct dir d;
    size_t wrote = 0, got = 0;

    (void)state;
    dir_open(&d, &pool);
    fill(&d, &wrote);
    assert_int_equal(px_half_pump(&d.h), PX_PUMP_WANT_WRITE);
    assert_true(d.h.bulk);
    assert_true(d.h.buffered > 0);
    assert_int_equal(fcntl(d.h.pipe[1], F_GETPIPE_SZ), MIB);
    assert_int_equal(pool.bulk, 1);
    /* The reader catches up: everything arrives, in order, and the
     * drained direction gives its pipe back, at the default size. */
    for (int i = 0; i < 10000 && got < wrote; i++) {
        drain(&d, &got);
        (void)px_half_pump(&d.h);
    }
    assert_int_equal(got, wrote);
    assert_int_equal(px_half_pump(&d.h), PX_PUMP_WANT_READ);
    assert_int_equal(d.h.pipe[0], -1);
    assert_int_equal(pool.bulk, 0);
    assert_int_equal(pool.n, 1);
    assert_int_equal(fcntl(pool.free[0][1], F_GETPIPE_SZ), 64 * 1024);
    dir_close(&d);
    px_pipe_pool_free(&pool);
}

static void at_most_sixteen_pipes_of_a_pool_are_1_mib(void **state)
{
    enum { N = 18 };
    struct px_pipe_pool pool = { 0 };
    struct dir d[N];

    (void)state;
    for (int i = 0; i < N; i++) {
        dir_open(&d[i], &pool);
        pump_to_full(&d[i]);
        assert_int_equal(fcntl(d[i].h.pipe[1], F_GETPIPE_SZ), i < 16 ? MIB : 256 * 1024);
    }
    assert_int_equal(pool.bulk, 16);
    /* A 1 MiB pipe given back makes room for the next one. */
    dir_close(&d[0]);
    assert_int_equal(pool.bulk, 15);
    dir_open(&d[0], &pool);
    pump_to_full(&d[0]);
    assert_int_equal(fcntl(d[0].h.pipe[1], F_GETPIPE_SZ), MIB);
    assert_int_equal(pool.bulk, 16);
    for (int i = 0; i < N; i++)
        dir_close(&d[i]);
    assert_int_equal(pool.bulk, 0);
    px_pipe_pool_free(&pool);
}

/* A pipe made while its user is past the pipe quota's soft limit holds 8
 * KiB; here the pool holds one of 4. The rest of a 16 KiB read the
 * destination did not take is larger: it waits in the spill, not in that
 * pipe, and arrives whole and in order (later bulk borrows the small pipe
 * and grows it). */
static void the_rest_of_a_short_send_waits_whole_beside_a_small_pipe(void **state)
{
    struct px_pipe_pool pool = { 0 };
    int tiny[2], page = 4096;
    size_t wrote = 0, got = 0;
    struct dir d;

    (void)state;
    assert_int_equal(pipe2(tiny, O_NONBLOCK | O_CLOEXEC), 0);
    assert_int_equal(fcntl(tiny[1], F_SETPIPE_SZ, page), page);
    pool.free = malloc(sizeof(*pool.free));
    assert_non_null(pool.free);
    pool.free[0][0] = tiny[0];
    pool.free[0][1] = tiny[1];
    pool.n = pool.cap = 1;
    dir_open(&d, &pool);
    page = 2048; /* the destination takes less than a 16 KiB read */
    assert_int_equal(setsockopt(d.dst[0], SOL_SOCKET, SO_SNDBUF, &page, sizeof(page)), 0);
    fill(&d, &wrote);
    assert_int_equal(px_half_pump(&d.h), PX_PUMP_WANT_WRITE);
    assert_int_equal(d.h.pipe[0], -1);
    assert_int_equal(d.h.buffered, 0);
    assert_true(d.h.spill_len > 4096);
    assert_int_equal(pool.n, 1);
    for (int i = 0; i < 100000 && got < wrote; i++) {
        drain(&d, &got);
        assert_int_not_equal(px_half_pump(&d.h), PX_PUMP_ERROR);
    }
    assert_int_equal(got, wrote);
    assert_null(d.h.spill);
    dir_close(&d);
    px_pipe_pool_free(&pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bulk_grows_the_pipe_and_the_pool_gets_it_back_at_the_default),
        cmocka_unit_test(at_most_sixteen_pipes_of_a_pool_are_1_mib),
        cmocka_unit_test(the_rest_of_a_short_send_waits_whole_beside_a_small_pipe),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
