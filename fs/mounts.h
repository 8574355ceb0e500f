/* The host's mount table as /proc/self/mountinfo shows it: a pure parser of
 * one line, and the procfs instances mounted elsewhere in the host tree (a
 * chroot's or a container's /proc). The sandbox's root is a recursive clone
 * of the host's, so each of those would show it every host process and its
 * command line; the plan masks them. /proc itself, and what lies beneath
 * it, the sandbox covers with its own procfs. */
#pragma once

#include <limits.h>
#include <stddef.h>

#include "src/err.h"
#include "src/policy.h"

#define FS_FSTYPE_MAX 256

/* One line of mountinfo, the fields the plan needs. */
struct fs_mountinfo {
    unsigned mount_id;
    unsigned parent_id;
    unsigned major, minor;
    char mount_point[PATH_MAX]; /* decoded; absolute and lexically normal */
    char fstype[FS_FSTYPE_MAX]; /* decoded: "proc", "tmpfs", "fuse.sshfs"... */
};

/* Parse one line, with or without its '\n':
 *   ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
 * decoding the kernel's octal escapes (\040 space, \011 tab, \012 newline,
 * \134 backslash) in the mount point and the type. SOURCE may be empty (the
 * kernel prints an empty one as is). Pure: no I/O.
 * Returns 0; -EINVAL for a malformed line (a missing field or separator, a
 * bad number or escape, a NUL, a mount point that is not absolute and
 * normal); -ENAMETOOLONG for a well-formed line whose mount point or type
 * does not fit, with mount_point empty and fstype set if it fits. */
int fs_mountinfo_parse(const char *line, size_t len, struct fs_mountinfo *out);

/* Append to out the mount point of every procfs in the mountinfo text but
 * /proc and anything beneath it, each once, in the table's order. A
 * malformed line, or a procfs whose mount point is too long to name, is an
 * error: either could hide a procfs the plan would then leave unmasked. On
 * error out keeps what was appended so far; the caller frees it. Pure. */
int fs_foreign_procfs_in(const char *text, size_t len, struct pol_strv *out, struct nf_err *err);

/* The same over this process's /proc/self/mountinfo. */
int fs_foreign_procfs(struct pol_strv *out, struct nf_err *err);
