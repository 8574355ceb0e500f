/* The mandatory-deny scan: files that run code later, outside the sandbox
 * (shell rc files, git hooks and config, editor task folders, agent config),
 * found wherever they exist within `depth` directory levels of a write root.
 * No program is spawned, ignore files do not count, node_modules is skipped,
 * and nothing is followed: entries are lstat'ed, so a symlink loop in a
 * project cannot break a run. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "src/err.h"

enum fs_found_kind {
    FS_FOUND_FILE, /* a regular file (or other non-directory) */
    FS_FOUND_DIR,
    FS_FOUND_SYMLINK, /* the name is a symlink: protect the link and its target */
    FS_FOUND_LINK,    /* a symlinked .git or .claude: protect the link itself only
                         (what it holds is reported through it) */
};

struct fs_found {
    char *path;
    enum fs_found_kind kind;
};

struct fs_found_list {
    struct fs_found *v;
    size_t n;
    size_t cap;
};

/* Names protected at the top of a write root even when absent, with whether
 * their placeholder is a directory. `.git/...` names apply only when `.git`
 * is a directory. */
struct fs_mandatory_name {
    const char *name;
    bool dir;
};
extern const struct fs_mandatory_name fs_mandatory_names[];
extern const size_t fs_n_mandatory_names;

/* Scan root (an existing directory, realpath) for mandatory names at levels
 * 0..depth-1 and append what exists to out. Directories the scan cannot read
 * are appended whole (a writable but unlistable directory could hide a new
 * .bashrc). */
int fs_scan_mandatory(const char *root, unsigned depth, struct fs_found_list *out,
                      struct nf_err *err);

int fs_found_add(struct fs_found_list *l, const char *path, enum fs_found_kind kind,
                 struct nf_err *err);
void fs_found_free(struct fs_found_list *l);
