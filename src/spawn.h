/* Process orchestration on the host side: clone into the new namespaces,
 * write the id maps, drive the sync protocol, then serve the event loop
 * until the sandbox's init exits. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "src/err.h"
#include "src/loop.h"
#include "src/runplan.h"
#include "src/sync.h"

/* Setup stages, timed by the tool itself (--timings). */
enum spawn_stage {
    STAGE_START,     /* nsfence's main() */
    STAGE_PLANNED,   /* policy compiled into the run plan, filters included */
    STAGE_CLONED,    /* clone returned and id maps written (host side) */
    STAGE_PREPARED,  /* host: placeholders made (overlaps the mounts) */
    STAGE_NETLINK,   /* host: init's netlink socket received */
    STAGE_LOOPBACK,  /* host: lo up, through that socket */
    STAGE_FIXED,     /* init: the fixed part of the root built */
    STAGE_ENDPOINTS, /* init: proxy listeners made, once lo is up */
    STAGE_MOUNTED,   /* init: the rest mounted, new root pivoted */
    STAGE_FILTERS,   /* command: capabilities dropped, seccomp loaded */
    STAGE_EXEC,      /* command: about to execve */
    STAGE_EXITED,    /* host: init exited */
    STAGE_DONE,      /* host: teardown finished */
    STAGE_COUNT,
};

struct spawn_hooks {
    /* Right after clone, before the id maps: pid is the cloned process as
     * the host side sees it. */
    int (*cloned)(void *user, pid_t pid, struct nf_err *err);
    /* Runs on the host side right after init is let go, while init builds
     * the fixed part of the root: fills in the per-operation results. */
    int (*prepare)(void *user, struct run_results *res, struct nf_err *err);
    /* Descriptors sent out of the sandbox (endpoints, observer). */
    int (*on_fds)(void *user, enum sync_tag tag, int *fds, const uint8_t *kinds, size_t n,
                  struct nf_err *err);
    /* The command is about to execve: the host side may start serving. */
    void (*on_running)(void *user);
    void *user;
};

struct spawn_config {
    const struct run_plan *plan;
    struct ev_loop *loop;
    struct spawn_hooks hooks;
    struct run_results results;  /* in memory shared with init until the command runs */
    int init_pidfd;              /* after spawn_run: init, to reap (-1 if none) */
    int proc_fd;                 /* inside: a /proc from before the pivot (-1) */
    bool exec_failed;            /* the command's execve failed: no command ran */
    int signal_received;         /* the first signal the host side was sent (0: none) */
    uint64_t times[STAGE_COUNT]; /* filled in as stages complete */
    cpu_set_t cpus;              /* the CPUs nsfence may run on, while held */
    bool cpus_held;              /* the run is held on one CPU (see spawn.c) */
};

/* Run the sandbox to completion. Returns the exit status for nsfence (the
 * command's, 128+N, or 125 with err set when the sandbox could not be
 * built). */
int spawn_run(struct spawn_config *cfg, struct nf_err *err);

/* Give the calling process every CPU nsfence was started with back, when
 * the run is held on one (spawn.c says why). Nothing if not held. */
void spawn_cpus_release(const struct spawn_config *cfg);

/* Wait for init to be gone (it reports the status before tearing the
 * namespaces down) and reap it: no zombie is left for the host's PID 1. */
void spawn_reap(struct spawn_config *cfg);

/* Block the signals the host side serves through signalfd; call before
 * anything spawns threads or children. */
int spawn_block_signals(struct nf_err *err);
