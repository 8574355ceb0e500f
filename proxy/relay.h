/* One direction of a tunnel. Small reads (a request, an echo, a TLS
 * record) go recv → send through a buffer on the stack: two syscalls where
 * splice needs four. Once a read fills that buffer the direction carries
 * bulk, and bytes move socket → pipe → socket with splice, never through
 * user space, until a read comes short again. At most one pipeful is in
 * flight, so a slow reader pushes back on a fast writer (back-pressure):
 * what the destination does not take at once waits in a pipe, or, of a small
 * read, in a spill of at most that read. EOF on the source becomes a
 * shutdown(SHUT_WR) on the destination (half-close).
 *
 * A pump returns once the source is drained or the destination is full, so
 * the sockets can be watched edge-triggered: a short read counts as
 * drained (more data makes a new edge) unless the source has already
 * signalled its end (src_hup), which makes no new edge. */
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
    size_t bulk; /* pipes out of the pool grown to 1 MiB */
};

struct px_half {
    int src;
    int dst;
    int pipe[2];
    size_t buffered;  /* bytes in the pipe */
    size_t pipe_size; /* 0: as made, not grown yet */
    char *spill;      /* the rest of a small read the destination did not take */
    size_t spill_off;
    size_t spill_len;
    bool eof;
    bool shut;
    bool bulk;      /* splicing; else recv/send */
    bool src_hup;   /* the source reported EPOLLRDHUP, EPOLLHUP or EPOLLERR */
    bool src_ready; /* an edge on the source since the last pump */
    enum px_pump state;
    unsigned long long bytes;
    struct px_pipe_pool *pool;
};

void px_half_init(struct px_half *h, int src, int dst, struct px_pipe_pool *pool);
enum px_pump px_half_pump(struct px_half *h);
void px_half_release(struct px_half *h);

void px_pipe_pool_free(struct px_pipe_pool *p);
