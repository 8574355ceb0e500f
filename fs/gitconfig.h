/* git's config files, read the way git 2.39 reads them, and the paths in
 * them that git (or a program git starts) will run or read as config later,
 * outside the sandbox. A sandboxed command that can write one of those paths
 * gets its code run by the user's own git on the host, so the planner
 * write-protects every one of them.
 *
 * Hand-written: no packaged library parses git config the way git does.
 * libgit2 is large, has its own reader whose corner cases (NUL bytes,
 * partial BOMs, error lines, include rules) differ from git's, and would
 * still not tell us which values name programs. The syntax is small; the
 * unit tests check this reader against the installed git, byte for byte. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "src/err.h"
#include "src/policy.h"

/* git refuses to nest includes deeper than this (MAX_INCLUDE_DEPTH). */
#define FS_GITCFG_MAX_DEPTH 10
/* A bigger config file is an error: the caller fails closed rather than
 * miss a path. git has no such limit; no real config comes near it. */
#define FS_GITCFG_MAX_SIZE (1024 * 1024)
/* The same for all the files one load reads (an include may repeat). */
#define FS_GITCFG_MAX_TOTAL (16 * 1024 * 1024)

/* Parse buf as git parses a config file, calling fn for every entry with
 * the key as `git config --list` prints it ("section.key" or
 * "section.subsection.key"; section and key lowercased) and the value, NULL
 * for a key with no '=' (boolean true). Like git, a key or value holding a
 * NUL byte is seen cut at that byte. A syntax error returns -1 with
 * "bad config line N" in err (git refuses the whole file); a negative
 * return from fn stops the parse and is returned as is, err untouched (fn
 * reports its own error). Pure: no I/O, no globals. */
int fs_gitcfg_parse(const char *buf, size_t len,
                    int (*fn)(void *ctx, const char *key, const char *value), void *ctx,
                    struct nf_err *err);

struct fs_gitcfg_env {
    const char *home;   /* `~` in include paths; NULL: such includes are unresolved */
    const char *prefix; /* git's `%(prefix)/` (e.g. /usr); NULL: unresolved */
};

enum fs_gitcfg_src_state {
    FS_GITCFG_READ,        /* a regular file, parsed */
    FS_GITCFG_ABSENT,      /* ENOENT or ENOTDIR: git ignores a missing include */
    FS_GITCFG_UNREADABLE,  /* EACCES: skipped like an absent file (git 2.39 dies on it,
                              "unable to access"); the caller decides */
    FS_GITCFG_NOT_REGULAR, /* a directory, FIFO or device: skipped, never read */
    FS_GITCFG_UNRESOLVED,  /* `~user/`, or `~`/`%(prefix)/` without env: path is the value */
};

/* A file the loader was given or led to by an include directive, followed
 * or not: the caller protects an absent include target too, as a command
 * could create it. */
struct fs_gitcfg_src {
    char *path; /* absolute, lexically normalised (UNRESOLVED: as written) */
    enum fs_gitcfg_src_state state;
    unsigned depth; /* 0: the file fs_gitcfg_load was given; n: included n levels down */
    bool dir;       /* NOT_REGULAR and a directory */
};

struct fs_gitcfg_entry {
    char *key;
    char *value;      /* NULL: no '=' (boolean true) */
    const char *file; /* the path of the src it came from (owned by the list) */
};

struct fs_gitcfg_list {
    struct fs_gitcfg_entry *v; /* in git's order, includes expanded in place */
    size_t n, cap;
    struct fs_gitcfg_src *src; /* in the order they were met */
    size_t n_src, cap_src;
};

/* Read the config file at path (absolute) and, recursively, every
 * include.path and includeIf.<anything>.path it names, whatever the
 * condition (a sandboxed command can make any condition true, e.g. switch
 * to the branch an onbranch: names). Entries are appended to out as
 * `git config --includes --list` shows them; every file met is recorded in
 * out->src. Only regular files are read, and nothing can block: an absent
 * file is no error (git ignores a missing include), nor is EACCES (the
 * user's own git may read what we cannot). A file over FS_GITCFG_MAX_SIZE,
 * a syntax error, includes nested deeper than FS_GITCFG_MAX_DEPTH and any
 * other error are errors. Files are read through symlinks, as git reads
 * them. */
int fs_gitcfg_load(const char *path, const struct fs_gitcfg_env *env, struct fs_gitcfg_list *out,
                   struct nf_err *err);

/* fs_gitcfg_parse into out as if buf were the file `file` (absolute),
 * recorded as a src of depth 0; includes are not followed. Pure. */
int fs_gitcfg_parse_list(const char *buf, size_t len, const char *file, struct fs_gitcfg_list *out,
                         struct nf_err *err);

void fs_gitcfg_list_free(struct fs_gitcfg_list *l);

struct fs_gitcfg_path {
    char *path; /* absolute, lexically normalised */
    bool dir;
};

struct fs_gitcfg_paths {
    struct fs_gitcfg_path *v; /* sorted by path, each once */
    size_t n, cap;
    /* Paths that could not be resolved without I/O or more context
     * (`~user/x`, `$VAR/x`, `%(prefix)/x`, `~` without a home), as
     * written: the caller decides whether to fail. */
    struct pol_strv unresolved;
};

/* The paths that git, or a program git runs, would execute or read as
 * config or hooks later: core.hooksPath (a directory; with husky's `.husky/_`
 * its parent too), every include target in cfg->src, and every word that
 * looks like a path (holds a '/' or starts with '~') in the values that
 * name a program (core.editor, credential helpers, diff and merge drivers,
 * filters, `!` aliases, ...). Relative paths are taken against worktree (git
 * runs these from the top of the worktree), `~` against home (may be NULL).
 * Pure: no I/O. */
int fs_gitcfg_code_paths(const struct fs_gitcfg_list *cfg, const char *worktree, const char *home,
                         struct fs_gitcfg_paths *out, struct nf_err *err);

void fs_gitcfg_paths_free(struct fs_gitcfg_paths *p);
