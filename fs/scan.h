/* The mandatory-deny scan: files that run code later, outside the sandbox
 * (shell rc files, git hooks and config, editor task folders, agent config),
 * found wherever they exist within `depth` directory levels of a write root.
 * No program is spawned, ignore files do not count, node_modules is skipped,
 * names match case-insensitively (`.BashRC` is what a case-insensitive file
 * system opens as `.bashrc`), and nothing is followed: the walk opens each
 * directory beneath its parent's descriptor with O_NOFOLLOW, so a symlink
 * loop in a project cannot break a run and a concurrent swap cannot redirect
 * it. */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "src/err.h"

enum fs_found_kind {
    FS_FOUND_FILE, /* a regular file (or other non-directory) */
    FS_FOUND_DIR,
    FS_FOUND_SYMLINK, /* the name is a symlink: protect the link and its target */
    FS_FOUND_LINK,    /* a symlinked .git or .claude: protect the link itself only
                         (what it holds is reported through it) */
    FS_FOUND_ABSENT,  /* a git control file that does not exist: git would obey one
                         the command creates (placeholder kind in `absent_dir`/`dot`) */
    FS_FOUND_GITFILE, /* a .git file (worktree, submodule): protected itself; `target`
                         is the git directory it names, as written */
    FS_FOUND_STALE,   /* a temporary a killed run left at the top (name only) */
};

struct fs_found {
    char *path;
    enum fs_found_kind kind;
    bool absent_dir; /* FS_FOUND_ABSENT: a directory (hooks) */
    bool dot;        /* FS_FOUND_ABSENT: a commondir, which must read "." */
    char *target;    /* FS_FOUND_GITFILE: "gitdir: X" as written; NULL if unreadable */
    dev_t dev;       /* FS_FOUND_FILE: for other hard links to it */
    ino_t ino;
    nlink_t nlink;
};

struct fs_found_list {
    struct fs_found *v;
    size_t n;
    size_t cap;
    /* Every .git (directory, file or link) seen, any depth the scan reached,
     * and every directory laid out as a bare repository (HEAD with objects
     * and refs, or with commondir): git's discovery takes it as a git
     * directory. */
    char **git;
    size_t n_git;
};

/* Names protected at the top of a write root even when absent. `.git/...`
 * names apply only when `.git` is a directory. As in srt, a missing one is
 * held by a placeholder file, whatever it holds when it exists (.vscode
 * too): a directory only where another protected name lies beneath it
 * (.claude for .claude/commands). A file costs nothing to remove; on ext4
 * mounted with discard, freeing a directory's block takes 0.2-2 ms. */
struct fs_mandatory_name {
    const char *name;
};
extern const struct fs_mandatory_name fs_mandatory_names[];
extern const size_t fs_n_mandatory_names;

/* The git directory entries that decide where git reads configuration,
 * hooks and its common directory (config, hooks, commondir, config.worktree;
 * modules/NAME and worktrees/NAME hold more of them). */
bool fs_git_control_name(const char *name);

/* The directories the mandatory scan read, as it read them, for the look
 * for new repositories after the run (fs_scan_git): a directory whose ctime
 * then is older than the scan still holds the names the scan read, and they
 * are taken from here instead of read again. In a 10,000-file tree that look
 * read every name again after any command that created one (4 ms).
 *
 * Only on a local file system (ext4, xfs, tmpfs), and only for a ctime
 * FS_DIRSNAP_AGE_S older than the scan's start: an entry made, removed or
 * renamed in a directory (or the directory renamed) sets its ctime to the
 * time then, which even through the kernel's coarse clock and a file
 * system that keeps whole seconds is later than that; a writer racing the
 * scan from a concurrent run too. Nobody but the kernel sets a ctime; a
 * clock stepped back by more than that during the run could hide a change.
 * An encrypted directory is always read (a key added or removed changes
 * its names, not its ctime). A record is keyed by the inode its parent
 * listed, for a directory reached without crossing a mount (the look
 * statx()es what it opens); two records of one inode that differ void it. */
#define FS_DIRSNAP_AGE_S 2

struct fs_dirsnap_dir {
    dev_t dev;
    ino_t ino;
    bool whole;  /* read to its end, and no other record of its inode differs */
    bool bare;   /* laid out as a bare repository (HEAD with objects and refs, or commondir) */
    char *names; /* what the look acts on: 'd' (a directory to descend) or
                    'g' (a .git), then the name and its NUL, one after another */
    size_t len, cap;
};

struct fs_dirsnap {
    struct fs_dirsnap_dir *v;
    size_t n, cap;
    uint32_t *slots;        /* by dev and inode: an index into v plus 1, 0 where none */
    size_t n_slots;         /* a power of two, over twice n */
    struct timespec before; /* unchanged: a ctime before this */
};

void fs_dirsnap_free(struct fs_dirsnap *s);

/* Scan root (an existing directory, realpath) for mandatory names at levels
 * 0..depth-1 and append what exists to out. Directories the scan cannot read
 * are appended whole (a writable but unlistable directory could hide a new
 * .bashrc). snap, if not NULL, gets the directories it read in full. */
int fs_scan_mandatory(const char *root, unsigned depth, struct fs_found_list *out,
                      struct fs_dirsnap *snap, struct nf_err *err);

/* The git control files of the git directory gitdir (absolute, resolved),
 * and of its submodules (modules/NAME) and linked worktrees
 * (worktrees/NAME), appended to out like the scan's. */
int fs_scan_gitdir(const char *gitdir, struct fs_found_list *out, struct nf_err *err);

/* The symlinks directly in dir (a hooks directory), appended to out as
 * FS_FOUND_SYMLINK: a hook that is a link runs what it leads to. */
int fs_scan_links(const char *dir, struct fs_found_list *out, struct nf_err *err);

/* Every .git within depth levels of root, appended to out->git (for the
 * check after the run). A directory snap holds unchanged is not read again
 * (snap may be NULL). */
int fs_scan_git(const char *root, unsigned depth, const struct fs_dirsnap *snap,
                struct fs_found_list *out, struct nf_err *err);

/* Other names of the given inodes (dev, ino pairs) within depth levels of
 * root: appended to out as FS_FOUND_FILE. */
struct fs_inode {
    dev_t dev;
    ino_t ino;
};
int fs_scan_inodes(const char *root, unsigned depth, const struct fs_inode *inodes, size_t n,
                   struct fs_found_list *out, struct nf_err *err);

/* Pure: the gitdir a .git file names ("gitdir: X", trailing newline and
 * spaces dropped), copied to out; -1 when buf is not a gitfile. */
int fs_gitfile_parse(const char *buf, size_t len, char *out, size_t outsz);

int fs_found_add(struct fs_found_list *l, const char *path, enum fs_found_kind kind,
                 struct nf_err *err);
void fs_found_free(struct fs_found_list *l);

/* A directory read with getdents64 into a buffer of its own: fdopendir
 * would add an fstat and two fcntls to each directory the scan reads (three
 * of its seven calls there), and readdir gives the scan nothing more. Set fd
 * and zero pos and len before the first read. */
struct fs_dir_reader {
    int fd;
    size_t pos, len;
    char buf[16384] __attribute__((aligned(8)));
};

/* The next entry, or NULL: at the end with errno 0 (a directory removed
 * since it was opened ends there too, as readdir has it), else errno set. */
struct dirent64 *fs_dir_next(struct fs_dir_reader *r);
