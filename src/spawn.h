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
    STAGE_MOUNTED,   /* init: new root pivoted */
    STAGE_LOOPBACK,  /* init: lo up */
    STAGE_ENDPOINTS, /* init: proxy listeners made */
    STAGE_FILTERS,   /* command: capabilities dropped, seccomp loaded */
    STAGE_EXEC,      /* command: about to execve */
    STAGE_EXITED,    /* host: init exited */
    STAGE_DONE,      /* host: teardown finished */
    STAGE_COUNT,
};

struct spawn_hooks {
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
    const struct sc_set *filters; /* built on the host, loaded by the command */
    char **argv;
    char **envp;
    struct ev_loop *loop;
    struct spawn_hooks hooks;
    struct rlimit nofile;        /* the caller's RLIMIT_NOFILE, for the command */
    uint64_t times[STAGE_COUNT]; /* filled in as stages complete */
};

/* Run the sandbox to completion. Returns the exit status for nsfence (the
 * command's, 128+N, or 125 with err set when the sandbox could not be
 * built). */
int spawn_run(struct spawn_config *cfg, struct nf_err *err);

/* Block the signals the host side serves through signalfd; call before
 * anything spawns threads or children. */
int spawn_block_signals(struct nf_err *err);
