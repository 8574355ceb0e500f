/* The filesystem policy as data: an ordered list of mount operations that
 * `explain` prints and the executor (fs/mount.c) runs, in this order. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "fs/scan.h"
#include "src/err.h"
#include "src/policy.h"

enum fs_op_kind {
    FS_OP_ROOT,       /* the host tree, recursively read-only, nosuid, nodev
                         (FS_F_RW: writable, still nosuid, nodev) */
    FS_OP_PIN,        /* an ancestor of a protected path bound onto itself beneath
                         everything: invisible, but renaming or removing it is EBUSY */
    FS_OP_TMPFS,      /* a private, writable tmpfs (the sandbox's /tmp) */
    FS_OP_BIND_RW,    /* a write root, nosuid, nodev */
    FS_OP_BIND_RO,    /* a protected path or a read carve-out, read-only */
    FS_OP_BIND_LINK,  /* a protected name that is a symlink, bound onto itself so
                         it cannot be removed or replaced */
    FS_OP_MASK_DIR,   /* a denied-read directory: an empty, writable tmpfs */
    FS_OP_MASK_FILE,  /* a denied-read file: an empty read-only file */
    FS_OP_MASK_LINK,  /* a protected name whose symlinks cannot be resolved (a loop):
                         an empty read-only file over the symlink itself, so nothing
                         is reachable through it and it cannot be replaced */
    FS_OP_REMOUNT_RO, /* dst made read-only (not what is mounted below it) */
    FS_OP_DEV,        /* a minimal /dev (FS_F_RO: itself read-only) */
    FS_OP_PROC,       /* a fresh /proc of the sandbox's PID namespace (FS_F_HOST:
                         the host's, where there is none) */

    /* What a caller describes op by op (bubblewrap's command line): */
    FS_OP_NEWROOT,   /* an empty tmpfs as the new root, instead of the host's */
    FS_OP_BIND,      /* src onto dst, recursive, nosuid; FS_F_RO, FS_F_DEV, FS_F_TRY */
    FS_OP_BIND_FD,   /* what fd refers to onto dst; FS_F_RO */
    FS_OP_MKTMPFS,   /* a tmpfs (perms, size) */
    FS_OP_MQUEUE,    /* a POSIX message queue file system */
    FS_OP_MKDIR,     /* a directory (perms); an existing one is left as it is */
    FS_OP_MKFILE,    /* a new file holding data (perms) */
    FS_OP_BIND_DATA, /* data in a file of its own, bound onto dst; FS_F_RO */
    FS_OP_SYMLINK,   /* dst, a symlink to src (an identical one may exist) */
    FS_OP_CHMOD,     /* perms onto an existing dst */
    FS_OP_OVERLAY,   /* overlayfs of lower over upper/work; no upper: read-only;
                        FS_F_TMP: a tmpfs upper */
};

#define FS_F_RO        0x1u  /* read-only */
#define FS_F_DEV       0x2u  /* device nodes work there (no nodev) */
#define FS_F_TRY       0x4u  /* a missing source skips the op */
#define FS_F_HOST      0x8u  /* /proc: a bind of the host's */
#define FS_F_TMP       0x10u /* overlay: its upper layer on a tmpfs */
#define FS_F_HIDE_KEYS 0x20u /* /proc: keys and key-users masked */
#define FS_F_RW        0x40u /* the host root: writable (srt's filesystem.disabled) */

/* A protected path that does not exist yet: the host side creates an empty
 * placeholder before the sandbox starts (so the bind has a mount point) and
 * removes it when the run ends. */
enum fs_placeholder {
    FS_PH_NONE,
    FS_PH_FILE,
    FS_PH_DIR,
    FS_PH_DOTFILE, /* a file holding ".": what git reads in commondir as "here" */
};

struct fs_op {
    enum fs_op_kind kind;
    char *src;              /* host path (binds, pins); NULL otherwise */
    char *dst;              /* path inside the sandbox */
    enum fs_placeholder ph; /* the host side holds (and if missing, makes) it */
    bool ph_shown;          /* ours: missing, or left behind by a killed run */
    bool ph_missing;        /* missing when planned: made, not adopted */
    bool create;            /* dst may be created: it lies on a tmpfs of ours */
    bool optional;          /* found by the scan: skipped if it vanishes before its mount */
    char *anchor;           /* the write root it lies in (placeholders, protections) */
    const char *why;        /* the rule that asked for it */

    /* The caller-described kinds' parameters. */
    unsigned flags; /* FS_F_* */
    unsigned perms; /* mode of what is made (mkdir, mkfile, bind-data, tmpfs, chmod) */
    bool has_perms; /* perms given; otherwise each kind's default */
    size_t size;    /* tmpfs size in bytes, 0: the kernel's default */
    int fd;         /* bind-fd: the descriptor, open in the caller */
    char *data;     /* mkfile, bind-data: the content */
    size_t len;
    char **lower; /* overlay: lower layers, the lowest first */
    size_t n_lower;
    char *upper, *work; /* overlay: its upper and work directories (host paths) */
};

/* A temporary a killed run left at the top of a write root. */
struct fs_stale {
    char *anchor;
    char *name;
};

struct fs_plan {
    struct fs_op *ops;
    size_t n;
    size_t cap;
    /* Destinations follow symlinks, without leaving the new root (the
     * caller's plan, as bubblewrap's are); otherwise no symlink at all. */
    bool dst_follow;
    char *cwd; /* the command's working directory */
    /* No filesystem rules: the host tree is writable everywhere. */
    bool unrestricted;
    /* Write roots as the observer sees them (effective, resolved). */
    char **write_roots;
    size_t n_write_roots;
    /* Protected paths (resolved), for the observer's reports. */
    char **protected_paths;
    size_t n_protected;
    /* Denied-read directories: empty tmpfs the command may write. */
    char **scratch;
    size_t n_scratch;
    /* Read-only inside those: allow_read carve-outs and masked files. */
    char **read_only;
    size_t n_read_only;
    /* Half-made placeholders of killed runs, removed before this run makes its own. */
    struct fs_stale *stale;
    size_t n_stale;
    /* Git directories and gitfiles that existed within the scan's depth of
     * each write root before the run: one created there during the run is
     * reported afterwards (git there obeys what the command wrote). */
    char **git_seen;
    size_t n_git_seen;
    /* The directories that scan read: the look after the run reads again
     * only those changed since. */
    struct fs_dirsnap dirsnap;
};

/* Pure: whether the command can write at abs by the plan's lists (the
 * deepest write root, masked directory or read-only carve-out holding it
 * decides; a protected path never; the private /tmp always). */
bool fs_plan_writable(const struct fs_plan *plan, const char *abs);

/* Build the plan from the policy. Reads the file system (lstat, readlink,
 * readdir) but changes nothing on it. */
int fs_plan_build(const struct policy *pol, struct fs_plan *plan, struct nf_err *err);
void fs_plan_free(struct fs_plan *plan);

/* Append one op (src, dst copied; the rest zero, fd -1) for the caller to
 * fill in; NULL with err set when out of memory. */
struct fs_op *fs_plan_push(struct fs_plan *p, enum fs_op_kind kind, const char *src,
                           const char *dst, const char *why, struct nf_err *err);

const char *fs_op_kind_name(enum fs_op_kind kind);

/* One line: "bind-ro     /src -> /dst  (deny_write)". */
void fs_op_format(const struct fs_op *op, char *buf, size_t sz);
