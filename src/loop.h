/* The host side's one event loop: epoll, single-threaded, with a timer heap.
 * The proxy, the seccomp observer, signals and the sandbox's exit all run on
 * it. Watchers are embedded in their owners (container_of). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/err.h"

struct ev_loop;

struct ev_io {
    int fd;
    uint32_t events;
    void (*cb)(struct ev_loop *loop, struct ev_io *io, uint32_t revents);
};

struct ev_timer {
    uint64_t deadline; /* ms, CLOCK_MONOTONIC */
    size_t idx;        /* position in the heap + 1; 0 when stopped */
    void (*cb)(struct ev_loop *loop, struct ev_timer *t);
};

/* Work to run once the current batch of events is dispatched: freeing an
 * object whose watcher may still be in this batch. */
struct ev_deferred {
    struct ev_deferred *next;
    void (*cb)(struct ev_deferred *d);
};

struct ev_loop {
    int epfd;
    bool stop;
    uint64_t now;
    struct ev_timer **heap;
    size_t n_timers;
    size_t cap_timers;
    struct ev_deferred *deferred;
};

int ev_loop_init(struct ev_loop *l, struct nf_err *err);
void ev_loop_close(struct ev_loop *l);

int ev_io_start(struct ev_loop *l, struct ev_io *io, uint32_t events);
int ev_io_modify(struct ev_loop *l, struct ev_io *io, uint32_t events);
void ev_io_stop(struct ev_loop *l, struct ev_io *io);

/* after_ms from now; restarting a running timer moves it. */
int ev_timer_start(struct ev_loop *l, struct ev_timer *t, uint64_t after_ms);
void ev_timer_stop(struct ev_loop *l, struct ev_timer *t);

void ev_defer(struct ev_loop *l, struct ev_deferred *d);

/* Dispatch until ev_stop. */
int ev_run(struct ev_loop *l, struct nf_err *err);
void ev_stop(struct ev_loop *l);

uint64_t ev_clock_ms(void);
