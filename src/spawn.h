/* Process orchestration on the host side: clone into the new namespaces,
 * write the id maps, drive the sync protocol, then serve the event loop
 * until the sandbox's init exits. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "fs/plan.h"
#include "seccomp/filters.h"
#include "src/err.h"
#include "src/loop.h"
#include "src/policy.h"
#include "src/sync.h"

/* Setup stages, timed by the tool itself (--timings). */
enum spawn_stage {
    STAGE_START,     /* nsfence's main() */
    STAGE_PLANNED,   /* policy and plan built, placeholders made */
    STAGE_CLONED,    /* clone returned and id maps written (host side) */
    STAGE_PREPARED,  /* host: placeholders made, filters compiled (overlaps the mounts) */
    STAGE_FIXED,     /* init: the fixed part of the root built */
    STAGE_LOOPBACK,  /* init: lo up */
    STAGE_ENDPOINTS, /* init: proxy listeners made */
    STAGE_MOUNTED,   /* init: the rest mounted, new root pivoted */
    STAGE_FILTERS,   /* command: capabilities dropped, seccomp loaded */
    STAGE_EXEC,      /* command: about to execve */
    STAGE_EXITED,    /* host: init exited */
    STAGE_DONE,      /* host: teardown finished */
    STAGE_COUNT,
};

/* What the host side makes while init builds the fixed part of the new root
 * (the two run on separate CPUs): placeholders — so, which ops to skip — and
 * the compiled filters. It lives in memory shared with init until the
 * command is forked; the host side writes it once, before SYNC_PREPARED. */
struct spawn_shared {
    uint32_t n_ops;
    uint32_t n_progs;
    struct {
        uint32_t kind;
        uint32_t len;
        uint32_t off;
    } progs[SC_FILTER_COUNT];
    uint32_t used;
    uint8_t data[]; /* n_ops skip flags, then the programs */
};

#define SPAWN_SHARED_SIZE (1024 * 1024)

/* Host side: record the plan's skip flags and the programs. */
int spawn_shared_put(struct spawn_shared *sh, const struct fs_plan *plan, const struct sc_set *set,
                     struct nf_err *err);

struct spawn_hooks {
    /* Runs on the host side right after init is let go. */
    int (*prepare)(void *user, struct spawn_shared *sh, struct nf_err *err);
    /* Descriptors sent out of the sandbox (endpoints, observer). */
    int (*on_fds)(void *user, enum sync_tag tag, int *fds, const uint8_t *kinds, size_t n,
                  struct nf_err *err);
    /* The command is about to execve: the host side may start serving. */
    void (*on_running)(void *user);
    void *user;
};

struct spawn_config {
    const struct policy *pol;
    const struct fs_plan *plan;
    struct spawn_shared *shared; /* placeholders' skip flags and the filters, from the host */
    char **argv;
    char **envp;
    struct ev_loop *loop;
    struct spawn_hooks hooks;
    struct rlimit nofile;        /* the caller's RLIMIT_NOFILE, for the command */
    int init_pidfd;              /* after spawn_run: init, to reap (-1 if none) */
    uint64_t times[STAGE_COUNT]; /* filled in as stages complete */
};

/* Run the sandbox to completion. Returns the exit status for nsfence (the
 * command's, 128+N, or 125 with err set when the sandbox could not be
 * built). */
int spawn_run(struct spawn_config *cfg, struct nf_err *err);

/* Wait for init to be gone (it reports the status before tearing the
 * namespaces down) and reap it: no zombie is left for the host's PID 1. */
void spawn_reap(struct spawn_config *cfg);

/* Block the signals the host side serves through signalfd; call before
 * anything spawns threads or children. */
int spawn_block_signals(struct nf_err *err);
