/* The one executor of a mount plan. Runs in the sandbox's init, inside the
 * new user and mount namespaces, before anything of the command exists. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs/plan.h"
#include "src/err.h"

/* The executor's state between its two halves. */
struct fs_exec {
    int root;      /* the new root, attached under the scratch tmpfs */
    int scratch;   /* the scratch tmpfs: mount point for the root, the empty file */
    int proc;      /* the new procfs, made while the host's /proc is visible */
    int host_proc; /* the host's /proc, copied with its submounts before the scratch
                      covers it; once attached, the copy later binds clone */
    bool host_proc_attached;
    bool mounts_refused; /* fs_exec_begin failed: no mount at all is allowed here */
    int *src;            /* per op: its bind source, opened before the scratch covers /proc */
    int **layers;        /* per op: an overlay's layers, lowest first, then upper and
                            work: [0] is how many follow */
    uint64_t resolve;    /* how destinations resolve (RESOLVE_*) */
    mode_t umask;        /* the caller's, restored when done */
    size_t next;         /* the first op not run yet */
};

/* First half: the ops that need nothing from the host side (the root, pins,
 * /dev, /proc, ...), up to the first placeholder, which the host side may
 * still be making. */
int fs_exec_begin(const struct fs_plan *plan, struct fs_exec *x, struct nf_err *err);

/* Second half: the rest (ops whose skip byte is set are not run; skip may be
 * NULL), then pivot into the
 * new root: afterwards "/" is the sandbox's root and no path reaches the
 * host's root or the scratch space. Closes x's descriptors either way. */
int fs_exec_finish(const struct fs_plan *plan, const uint8_t *skip, struct fs_exec *x,
                   struct nf_err *err);

/* Both halves, for callers with nothing to overlap. */
int fs_plan_execute(const struct fs_plan *plan, struct nf_err *err);

/* Used by the executor for FS_OP_DEV (fs/dev.c): populate the /dev at the
 * tmpfs devfd (attached in the new root), device nodes cloned from the
 * host's /dev. */
int fs_dev_populate(int devfd, struct nf_err *err);
