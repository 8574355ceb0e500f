/* One direction of a tunnel: bytes move socket → pipe → socket with splice,
 * never through user space. At most one pipeful is in flight, so a slow
 * reader pushes back on a fast writer (back-pressure); EOF on the source
 * becomes a shutdown(SHUT_WR) on the destination (half-close). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum px_pump {
    PX_PUMP_WANT_READ,  /* waiting for the source to be readable */
    PX_PUMP_WANT_WRITE, /* waiting for the destination to be writable */
    PX_PUMP_DONE,       /* source at EOF, destination shut down */
    PX_PUMP_ERROR,      /* errno says why */
};

/* Pipes are borrowed while bytes move and given back when a direction has
 * drained and waits for its source: an idle tunnel holds no pipe (two
 * descriptors, not six), and the per-user pipe quota is not spent on idle
 * tunnels. */
struct px_pipe_pool {
    int (*free)[2];
    size_t n;
    size_t cap;
};

struct px_half {
    int src;
    int dst;
    int pipe[2];
    size_t buffered; /* bytes in the pipe */
    bool eof;
    bool shut;
    enum px_pump state;
    unsigned long long bytes;
    struct px_pipe_pool *pool;
};

void px_half_init(struct px_half *h, int src, int dst, struct px_pipe_pool *pool);
enum px_pump px_half_pump(struct px_half *h);
void px_half_release(struct px_half *h);

void px_pipe_pool_free(struct px_pipe_pool *p);
