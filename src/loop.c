#include "src/loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define BATCH 256

uint64_t ev_clock_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int ev_loop_init(struct ev_loop *l, struct nf_err *err)
{
    memset(l, 0, sizeof(*l));
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0)
        return nf_err_sys(err, "epoll_create1");
    l->now = ev_clock_ms();
    return 0;
}

static void run_deferred(struct ev_loop *l);

void ev_loop_close(struct ev_loop *l)
{
    run_deferred(l);
    if (l->epfd >= 0)
        close(l->epfd);
    free(l->heap);
    l->epfd = -1;
    l->heap = NULL;
}

int ev_io_start(struct ev_loop *l, struct ev_io *io, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = io };

    io->events = events;
    return epoll_ctl(l->epfd, EPOLL_CTL_ADD, io->fd, &ev);
}

int ev_io_modify(struct ev_loop *l, struct ev_io *io, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = io };

    if (io->events == events)
        return 0;
    io->events = events;
    return epoll_ctl(l->epfd, EPOLL_CTL_MOD, io->fd, &ev);
}

void ev_io_stop(struct ev_loop *l, struct ev_io *io)
{
    if (io->fd >= 0)
        (void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, io->fd, NULL);
}

/* A binary min-heap of timers on their deadlines. */
static void heap_swap(struct ev_loop *l, size_t a, size_t b)
{
    struct ev_timer *t = l->heap[a];

    l->heap[a] = l->heap[b];
    l->heap[b] = t;
    l->heap[a]->idx = a + 1;
    l->heap[b]->idx = b + 1;
}

static void heap_up(struct ev_loop *l, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;

        if (l->heap[p]->deadline <= l->heap[i]->deadline)
            break;
        heap_swap(l, i, p);
        i = p;
    }
}

static void heap_down(struct ev_loop *l, size_t i)
{
    for (;;) {
        size_t a = 2 * i + 1, b = a + 1, m = i;

        if (a < l->n_timers && l->heap[a]->deadline < l->heap[m]->deadline)
            m = a;
        if (b < l->n_timers && l->heap[b]->deadline < l->heap[m]->deadline)
            m = b;
        if (m == i)
            return;
        heap_swap(l, i, m);
        i = m;
    }
}

void ev_timer_stop(struct ev_loop *l, struct ev_timer *t)
{
    size_t i;

    if (!t->idx)
        return;
    i = t->idx - 1;
    t->idx = 0;
    l->n_timers--;
    if (i == l->n_timers)
        return;
    l->heap[i] = l->heap[l->n_timers];
    l->heap[i]->idx = i + 1;
    heap_down(l, i);
    heap_up(l, i);
}

int ev_timer_start(struct ev_loop *l, struct ev_timer *t, uint64_t after_ms)
{
    ev_timer_stop(l, t);
    if (l->n_timers == l->cap_timers) {
        size_t cap = l->cap_timers ? l->cap_timers * 2 : 64;
        struct ev_timer **h = realloc(l->heap, cap * sizeof(*h));

        if (!h)
            return -1;
        l->heap = h;
        l->cap_timers = cap;
    }
    t->deadline = l->now + after_ms;
    l->heap[l->n_timers] = t;
    t->idx = ++l->n_timers;
    heap_up(l, l->n_timers - 1);
    return 0;
}

void ev_defer(struct ev_loop *l, struct ev_deferred *d)
{
    d->next = l->deferred;
    l->deferred = d;
}

void ev_stop(struct ev_loop *l)
{
    l->stop = true;
}

static void run_deferred(struct ev_loop *l)
{
    while (l->deferred) {
        struct ev_deferred *d = l->deferred;

        l->deferred = d->next;
        d->cb(d);
    }
}

int ev_run(struct ev_loop *l, struct nf_err *err)
{
    struct epoll_event evs[BATCH];

    l->stop = false;
    while (!l->stop) {
        int timeout = -1;
        int n;

        if (l->n_timers) {
            uint64_t d = l->heap[0]->deadline;

            timeout = d <= l->now ? 0 : (int)(d - l->now > 60000 ? 60000 : d - l->now);
        }
        n = epoll_wait(l->epfd, evs, BATCH, timeout);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return nf_err_sys(err, "epoll_wait");
        }
        l->now = ev_clock_ms();
        for (int i = 0; i < n && !l->stop; i++) {
            struct ev_io *io = evs[i].data.ptr;

            /* Closed earlier in this batch (its owner set fd to -1 and
             * deferred the free): skip the stale event. */
            if (io->fd >= 0)
                io->cb(l, io, evs[i].events);
        }
        while (l->n_timers && l->heap[0]->deadline <= l->now && !l->stop) {
            struct ev_timer *t = l->heap[0];

            ev_timer_stop(l, t);
            t->cb(l, t);
        }
        run_deferred(l);
    }
    run_deferred(l);
    return 0;
}
