/* Resolving a policy path to the real location a mount must land on. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "src/err.h"

enum fs_res {
    FS_RES_EXISTS,     /* out is the realpath */
    FS_RES_MISSING,    /* out is realpath(deepest existing ancestor) + the rest;
                        *missing_at is the length of out's first missing component */
    FS_RES_IMPOSSIBLE, /* a non-directory sits on the way: the path can never exist */
};

/* Like realpath(3) for an absolute, normalised path, but a missing tail is
 * kept, and a dangling symlink is followed name by name to where a write
 * through it would land. A loop, EACCES, ENAMETOOLONG or any other error is
 * an error: a deny we cannot resolve must fail the run, never be dropped. */
int fs_resolve(const char *path, char *out, size_t outsz, enum fs_res *res, size_t *missing_at,
               struct nf_err *err);

/* The same, calling on_link with the real location of every symlink it
 * follows on the way (a deny spelled through a link must keep that link from
 * being replaced, too). */
int fs_resolve_links(const char *path, char *out, size_t outsz, enum fs_res *res,
                     size_t *missing_at, void (*on_link)(void *ctx, const char *link), void *ctx,
                     struct nf_err *err);
