/* Glob patterns in deny_read and allow_read, read as srt 0.0.83 reads them
 * (parseGlob), and expanded once, at start, by a bounded walk of the disk
 * from the pattern's literal directory prefix.
 *
 * Syntax: `*` is any run of characters but '/'; `**` is any run, '/'
 * included; `**` followed by '/' is zero or more whole directories; `?` is
 * one character but '/'; `[set]` runs from '[' to the first ']', its members
 * are literal ('*', '?' and '/' included), `a-z` is a range, and '^' or '!'
 * do not negate. An empty `[]` or a set with a backwards range is literal
 * text, and so is a '[' with no ']' after it. There are no escapes. A
 * character is a UTF-8 sequence (a byte that is not part of one counts
 * alone), so `?` matches "é" as srt's `[^/]` does.
 *
 * A deny pattern also covers what lies beneath a match (srt's regex is the
 * pattern + `(/.*)?$`). Patterns are absolute and lexically normal: the
 * caller took relative ones against the working directory. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "src/err.h"

/* The bounds struct fs_glob_opts uses when its fields are 0, and the most
 * max_depth can ask for (the walk holds a fd or two open per level). */
#define FS_GLOB_MAX_DIRS    10000
#define FS_GLOB_MAX_DEPTH   32
#define FS_GLOB_DEPTH_LIMIT 128

/* Whether s holds glob syntax: a `*`, a `?`, or a '[' that opens a valid
 * set. "a[]" and "a[z-a]" are literal names. */
bool fs_glob_is_pattern(const char *s);

/* Whether the whole of path matches pattern. Pure; the work is bounded by
 * strlen(pattern) * strlen(path) whatever the input. A pattern of PATH_MAX
 * bytes or more matches nothing (no path that long can be opened). */
bool fs_glob_match(const char *pattern, const char *path);

/* Whether path matches pattern or lies beneath a match: the rule of a deny
 * (`*.d` in /a covers /a/x.d/y). */
bool fs_glob_match_beneath(const char *pattern, const char *path);

/* The length of pattern's literal directory prefix, the components before
 * the first one that holds a wildcard: 4 ("/a/b") for `*.txt` in /a/b. 0
 * when only the root comes before it (a wildcard in the first component:
 * `**` then /x, or `e*` at the root); such a pattern would walk the whole
 * file system, and fs_glob_expand refuses it. A pattern without wildcards is
 * its own prefix (strlen). For an absolute pattern, pattern[result] is '/'
 * or the terminating NUL. */
size_t fs_glob_prefix_len(const char *pattern);

enum fs_glob_kind {
    FS_GLOB_FILE, /* a match that is not a directory */
    FS_GLOB_DIR,  /* a match that is a directory */
    /* A directory that could hold matches but was not walked: the walk
     * reached its bound. A deny must cover it whole (fail closed). */
    FS_GLOB_UNWALKED,
    /* A directory that could hold matches but cannot be listed (EACCES):
     * a deny must cover it whole, and restore nothing beneath it. */
    FS_GLOB_UNLISTABLE,
};

struct fs_glob_hit {
    char *path; /* real: absolute, no symlink in it */
    enum fs_glob_kind kind;
};

/* Sorted by path, each path once. A path found as more than one kind keeps
 * the last in enum order: a directory that matched but could not be listed
 * is UNLISTABLE, since what lies beneath it was never seen. */
struct fs_glob_hits {
    struct fs_glob_hit *v;
    size_t n;
    size_t cap;
};

struct fs_glob_opts {
    /* A deny walk follows symlinks to directories (never back up the tree it
     * is walking) and reports a matched symlink where it leads. An allow
     * walk neither follows nor reports symlinks: an allow must not re-open
     * whatever a planted link points at. (The prefix is the caller's, and
     * is opened as spelled, links and all.) */
    bool follow_links;
    unsigned max_dirs;  /* directories listed, the prefix included; 0: FS_GLOB_MAX_DIRS */
    unsigned max_depth; /* levels listed below the prefix; 0: FS_GLOB_MAX_DEPTH */
};

/* Walk the disk from pattern's literal prefix and add what matches to out;
 * also the pattern itself taken as a literal path, when that exists (srt
 * reads "a[1].txt" both ways). Every step opens one name beneath a held
 * directory fd. A missing prefix adds nothing; a prefix that cannot be
 * resolved (EACCES on an ancestor, ELOOP) is an error, and so is a pattern
 * that is not absolute and normal, holds no glob syntax, or whose
 * prefix_len is 0. On error the hits this call added are dropped. opts is
 * required. An allow walk's UNWALKED and UNLISTABLE hits say where matches
 * may be missing: they are not matches. */
int fs_glob_expand(const char *pattern, const struct fs_glob_opts *opts, struct fs_glob_hits *out,
                   struct nf_err *err);

void fs_glob_hits_free(struct fs_glob_hits *h);
