/* Inside fs/: what the executor's two files (mount.c, the host-policy
 * kinds and the sequence; ops.c, the caller-described kinds) share. */
#pragma once

#include <stdbool.h>

#include "fs/mount.h"
#include "fs/plan.h"
#include "src/err.h"

#define ATTR_RO (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define ATTR_RW (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

/* dst without its leading slashes; "." for the root itself. */
const char *fs_rel(const char *path);
int fs_set_attr(int fd, unsigned attr, bool recursive, const char *what, struct nf_err *err);
int fs_new_tmpfs(const char *mode, size_t size, unsigned attr, struct nf_err *err);
/* Move the detached mount mnt onto the mount point dst (an O_PATH fd). */
int fs_attach(int mnt, int dst, const struct fs_op *op, struct nf_err *err);

/* x->root again, as the topmost mount at the new root's place. */
int fs_reopen_root(struct fs_exec *x, struct nf_err *err);

/* dst made where missing (a directory, or an empty file), its parents too,
 * one name at a time inside the new root; then opened O_PATH. */
int fs_ensure_dst(struct fs_exec *x, const struct fs_op *op, bool file, struct nf_err *err);

/* The caller-described kinds (fs/ops.c). */
/* Before the scratch space covers /proc: open what the plan's binds read. */
int fs_ops_open_sources(const struct fs_plan *plan, struct fs_exec *x, struct nf_err *err);
int fs_ops_run(struct fs_exec *x, const struct fs_op *op, size_t index, struct nf_err *err);
