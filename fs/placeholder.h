/* Placeholders: the empty files and directories a bind needs as mount points
 * where a protected name does not exist yet. They live on the host only while
 * a run needs them. Each run holds a shared flock on every placeholder it
 * uses; the last run to finish (the one that gets the exclusive lock) removes
 * it, so two runs in one directory never unmask each other.
 *
 * Every operation resolves beneath a descriptor held on the write root
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, then *at calls on the held
 * parent): the sandboxed command of a concurrent run may swap any directory
 * on the way for a symlink, and must not make us create or remove anything
 * outside the write root. A placeholder appears under its name only complete
 * and marked: a file is made unnamed (O_TMPFILE) in its directory and linked
 * in place; a directory, or a file where that cannot be done, is made under a
 * temporary name at the top of its write root (FS_PH_TMP_PREFIX...) and
 * renamed into place with RENAME_NOREPLACE. A run killed at any instant
 * leaves either nothing, a marked placeholder, or a temporary that the next
 * run's scan finds and removes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fs/plan.h"
#include "src/err.h"

/* An unusual, even (FAT has 2 s granularity) mtime marks our placeholders. */
#define FS_PH_MTIME 315545146

/* Temporaries are named this, then the path below the write root with '/'
 * spelled '~'. */
#define FS_PH_TMP_PREFIX ".nsfence-ph~"

/* The names are the plan's (op->dst and parts of it): the plan outlives the
 * set. */
struct fs_ph_hold {
    const char *path;
    int parent;       /* O_PATH descriptor of the directory holding it: its
                         own, or the write root's when it is the anchor */
    const char *name; /* its name there */
    int fd;           /* the placeholder itself, flocked shared */
    int anchor;       /* the write root (O_PATH), the set's, for the parent's parent */
    const char *rel;  /* path below the write root */
};

/* One descriptor per write root, shared by the holds below it: a placeholder
 * at the top of its root (.bashrc, .vscode) has the root itself for parent. */
struct fs_ph_root {
    const char *path; /* the plan's */
    int fd;
};

struct fs_ph_set {
    struct fs_ph_hold *v;
    size_t n;
    struct fs_ph_root *roots;
    size_t n_roots;
};

/* A marked placeholder: an empty directory, or a regular file that is empty
 * or holds ".\n" (git's commondir). By its stat alone: see fs_placeholder_at
 * for what a directory holds. */
bool fs_placeholder_is(const struct stat *st);

/* The same, of the entry open at fd (any mode, O_PATH too) whose stat is
 * st, and a directory must hold nothing but placeholders (another run's,
 * made in ours before it was marked), a few levels down. The command can
 * set the mark itself on anything it may write (utimensat): a marked
 * directory holding anything else is a real one, a repository still a
 * repository. */
bool fs_placeholder_at(int fd, const struct stat *st);

/* fs_placeholder_at of path, not followed if a symlink; st gets its lstat.
 * False if it cannot be read. */
bool fs_placeholder_path(const char *path, struct stat *st);

/* Remove what killed runs left half-made (plan->stale), then make (or
 * adopt) every placeholder the plan asks for and lock it shared. A name the
 * caller cannot create (EACCES, EPERM, EROFS) cannot be created inside the
 * sandbox either: that op's byte in skip (one per op) is set, as is an optional op whose
 * directory vanished; but a directory the caller owns, the command can make
 * writable again: EACCES there fails the run. A required one whose directory vanished or changed
 * into a symlink fails the run. */
int fs_placeholders_prepare(const struct fs_plan *plan, struct fs_ph_set *set, uint8_t *skip,
                            struct nf_err *err);

/* Remove the placeholders no other run holds; close every lock. */
void fs_placeholders_release(struct fs_ph_set *set);

/* Whether a file placeholder may be linked in place by its descriptor
 * (AT_EMPTY_PATH) before /proc/self/fd is tried; it may until the kernel
 * refuses. For tests of the other ways. */
void fs_placeholders_flink(bool allowed);

/* The descriptor of dir (absolute, no symlink on the way), for *at calls
 * beneath it. */
int fs_open_beneath_root(const char *dir);

/* rel's directory beneath root (O_PATH, no symlink followed, never leaving
 * root); its last component is copied to leaf. "" or a bare name gives a
 * duplicate of root. */
int fs_open_parent_beneath(int root, const char *rel, char *leaf, size_t leafsz);
