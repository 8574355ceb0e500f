#include "proxy/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK      (1u << 20)   /* splice caps at the pipe's size anyway */
#define SMALL      (16u << 10)  /* a read that fills this turns to splice */
#define PIPE_SMALL (64u << 10)  /* the kernel's default */
#define PIPE_BULK  (1u << 20)   /* a direction carrying bulk */
#define PIPE_BULK2 (256u << 10) /* bulk past BULK_MAX */
#define BULK_MAX   16
#define POOL_MAX   32

/* A pipe as big as a direction's bulk moves more per splice pair. 1 MiB is
 * the most an unprivileged user may ask for (fs.pipe-max-size) and measured
 * best: a tunnel carried 5-25 % more than through 256 KiB, and 2-8 MiB
 * carried less (tests/bench/relay.c is the measure). A pipe counts its size
 * against its owner's pipe quota (64 MiB by default, shared with the
 * sandboxed command's own pipes) while it lives, so at most BULK_MAX pipes
 * of a pool are that big at once, the others 256 KiB; a pipe shrinks back to
 * the default before it is pooled. A refusal just leaves the size it has. */
static int take_pipe(struct px_half *h)
{
    struct px_pipe_pool *p = h->pool;

    if (p && p->n) {
        p->n--;
        h->pipe[0] = p->free[p->n][0];
        h->pipe[1] = p->free[p->n][1];
        return 0;
    }
    return pipe2(h->pipe, O_NONBLOCK | O_CLOEXEC);
}

static void grow_pipe(struct px_half *h)
{
    struct px_pipe_pool *p = h->pool;

    if (h->pipe_size)
        return; /* grown, or tried */
    if ((!p || p->bulk < BULK_MAX) && fcntl(h->pipe[1], F_SETPIPE_SZ, PIPE_BULK) >= 0) {
        h->pipe_size = PIPE_BULK;
        if (p)
            p->bulk++;
    } else if (fcntl(h->pipe[1], F_SETPIPE_SZ, PIPE_BULK2) >= 0) {
        h->pipe_size = PIPE_BULK2;
    } else {
        h->pipe_size = PIPE_SMALL;
    }
}

static void give_pipe(struct px_half *h)
{
    struct px_pipe_pool *p = h->pool;
    bool small = true;

    if (h->pipe[0] < 0)
        return;
    if (h->pipe_size == PIPE_BULK && p)
        p->bulk--;
    if (h->pipe_size > PIPE_SMALL && h->buffered == 0)
        small = fcntl(h->pipe[1], F_SETPIPE_SZ, PIPE_SMALL) >= 0;
    h->pipe_size = 0;
    if (p && small && h->buffered == 0 && p->n < POOL_MAX) {
        if (p->n == p->cap) {
            size_t cap = p->cap ? p->cap * 2 : 8;
            int(*v)[2] = realloc(p->free, cap * sizeof(*v));

            if (!v)
                goto close;
            p->free = v;
            p->cap = cap;
        }
        p->free[p->n][0] = h->pipe[0];
        p->free[p->n][1] = h->pipe[1];
        p->n++;
        h->pipe[0] = h->pipe[1] = -1;
        return;
    }
close:
    close(h->pipe[0]);
    close(h->pipe[1]);
    h->pipe[0] = h->pipe[1] = -1;
}

void px_half_init(struct px_half *h, int src, int dst, struct px_pipe_pool *pool)
{
    *h = (struct px_half){
        .src = src, .dst = dst, .pipe = { -1, -1 }, .state = PX_PUMP_WANT_READ, .pool = pool
    };
}

void px_half_release(struct px_half *h)
{
    give_pipe(h);
    free(h->spill);
    h->spill = NULL;
    h->spill_len = 0;
}

void px_pipe_pool_free(struct px_pipe_pool *p)
{
    for (size_t i = 0; i < p->n; i++) {
        close(p->free[i][0]);
        close(p->free[i][1]);
    }
    free(p->free);
    *p = (struct px_pipe_pool){ 0 };
}

/* One small read and its write. Returns true when the pump stops, in the
 * state *stop; false to go on. */
static bool pump_small(struct px_half *h, enum px_pump *stop)
{
    char buf[SMALL];
    ssize_t n, sent;

    n = recv(h->src, buf, sizeof(buf), 0);
    if (n < 0) {
        if (errno == EINTR)
            return false;
        if (errno != EAGAIN) {
            *stop = PX_PUMP_ERROR;
            return true;
        }
        give_pipe(h);
        *stop = PX_PUMP_WANT_READ;
        return true;
    }
    if (n == 0) {
        h->eof = true;
        return false;
    }
    do
        sent = send(h->dst, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (sent < 0 && errno == EINTR);
    if (sent < 0) {
        if (errno != EAGAIN) {
            *stop = PX_PUMP_ERROR;
            return true;
        }
        sent = 0;
    }
    h->bytes += (unsigned long long)sent;
    if (sent < n) {
        /* The destination is full: the rest waits in the spill, sent when
         * the destination takes more. A pipe would hold it without a copy,
         * but one made while its user is past the pipe quota's soft limit
         * holds only 8 KiB, and the rest is already read. */
        h->spill_len = (size_t)(n - sent);
        h->spill_off = 0;
        h->spill = malloc(h->spill_len);
        if (!h->spill) {
            h->spill_len = 0;
            *stop = PX_PUMP_ERROR;
            return true;
        }
        memcpy(h->spill, buf + sent, h->spill_len);
        *stop = PX_PUMP_WANT_WRITE;
        return true;
    }
    if ((size_t)n == sizeof(buf)) {
        h->bulk = true; /* more is likely waiting: splice it */
        return false;
    }
    if (h->src_hup)
        return false; /* read on to the end: no edge will say so */
    give_pipe(h);
    *stop = PX_PUMP_WANT_READ; /* drained, see relay.h */
    return true;
}

enum px_pump px_half_pump(struct px_half *h)
{
    h->src_ready = false; /* read until drained from here */
    for (;;) {
        ssize_t n;

        if (h->buffered) {
            n = splice(h->pipe[0], NULL, h->dst, NULL, h->buffered,
                       SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return h->state = errno == EAGAIN ? PX_PUMP_WANT_WRITE : PX_PUMP_ERROR;
            }
            h->buffered -= (size_t)n;
            h->bytes += (unsigned long long)n;
            continue;
        }
        if (h->spill_len) {
            n = send(h->dst, h->spill + h->spill_off, h->spill_len, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return h->state = errno == EAGAIN ? PX_PUMP_WANT_WRITE : PX_PUMP_ERROR;
            }
            h->spill_off += (size_t)n;
            h->spill_len -= (size_t)n;
            h->bytes += (unsigned long long)n;
            if (!h->spill_len) {
                free(h->spill);
                h->spill = NULL;
            }
            continue;
        }
        if (h->eof) {
            if (!h->shut) {
                if (shutdown(h->dst, SHUT_WR) < 0 && errno != ENOTCONN)
                    return h->state = PX_PUMP_ERROR;
                h->shut = true;
            }
            give_pipe(h);
            return h->state = PX_PUMP_DONE;
        }
        if (!h->bulk) {
            enum px_pump stop;

            if (pump_small(h, &stop))
                return h->state = stop;
            continue;
        }
        if (h->pipe[0] < 0 && take_pipe(h) < 0)
            return h->state = PX_PUMP_ERROR;
        grow_pipe(h);
        n = splice(h->src, NULL, h->pipe[1], NULL, CHUNK, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                give_pipe(h);
                return h->state = PX_PUMP_WANT_READ;
            }
            return h->state = PX_PUMP_ERROR;
        }
        if (n == 0)
            h->eof = true;
        else if ((size_t)n < SMALL)
            h->bulk = false; /* the burst is over: back to recv/send */
        h->buffered = (size_t)n;
    }
}
