/* Placeholders: the empty files and directories a bind needs as mount points
 * where a protected name does not exist yet. They live on the host only while
 * a run needs them. Each run holds a shared flock on every placeholder it
 * uses; the last run to finish (the one that gets the exclusive lock) removes
 * it, so two runs in one directory never unmask each other, and what a run
 * killed with SIGKILL left behind is recognised (empty, marked mtime) and
 * removed by the next run. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "fs/plan.h"
#include "src/err.h"

/* An unusual, even (FAT has 2 s granularity) mtime marks our placeholders. */
#define FS_PH_MTIME 315545146

struct fs_ph_hold {
    char *path;
    int fd;
};

struct fs_ph_set {
    struct fs_ph_hold *v;
    size_t n;
};

bool fs_placeholder_is(const struct stat *st);

/* Make (or adopt) every placeholder the plan asks for and lock it shared.
 * A name the caller cannot create (EACCES, EPERM, EROFS) cannot be created
 * inside the sandbox either: that op is marked skip. */
int fs_placeholders_prepare(struct fs_plan *plan, struct fs_ph_set *set, struct nf_err *err);

/* Remove the placeholders no other run holds; close every lock. */
void fs_placeholders_release(struct fs_ph_set *set);
