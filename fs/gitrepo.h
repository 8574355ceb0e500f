/* The repositories in a write root, as the user's own git will find them
 * later: where a .git leads (its git directory and common directory), and
 * every path the configs git reads for it name as something to run or to
 * read as config or hooks. The plan protects those paths where they fall
 * in a write root: a command that could write one would get its code run
 * by the host's next git command. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "fs/gitconfig.h"
#include "fs/plan.h"
#include "src/err.h"
#include "src/policy.h"

struct fs_gitrepo {
    char worktree[PATH_MAX];  /* the directory holding .git */
    char gitdir[PATH_MAX];    /* real path */
    char commondir[PATH_MAX]; /* real path; gitdir when there is no commondir */
};

/* Where dotgit (a .git directory, a gitfile, or a symlink to either) leads.
 * Returns 0, or 1 when git would not take it as a repository (a gitfile
 * naming nothing, an empty placeholder directory): nothing to read. */
int fs_gitrepo_locate(const char *dotgit, struct fs_gitrepo *out, struct nf_err *err);

/* The paths git will run or read later for repo: from its common config,
 * its config.worktree when extensions.worktreeConfig is on (that file
 * too, existing or not), its submodules' configs (modules/NAME, with their
 * core.worktree), and the host's configs (host: the global and system
 * ones, loaded by the caller), relative ones taken against the worktree.
 * Appended to out. */
int fs_gitrepo_code_paths(const struct fs_gitrepo *repo, const struct fs_gitcfg_list *host,
                          const struct fs_gitcfg_env *env, struct fs_gitcfg_paths *out,
                          struct nf_err *err);

/* What each repository the plan saw in a write root is on disk once the
 * placeholders are made: the inode of its .git (or of its bare directory,
 * with that one's HEAD), and of config, hooks, commondir and
 * config.worktree in it, or their absence. The command cannot change any
 * of them: each is bound read-only, or held. Another process can remove
 * what a bind is on, and the bind with it: a concurrent run that made the
 * repository after this one's scan, and removed it before its own look so
 * as to report nothing, leaves this run free to make it again, at a path
 * this run's look took for one seen before.
 *
 * Each inode is held open until the look after the run, so that none can
 * be freed and its number given to a replacement: the first
 * FS_GIT_ID_HELD of them, none within FS_GIT_ID_RESERVE of the descriptor
 * limit (those are the run's). One not held is told from a replacement by
 * its birth time. Parallel to plan->git_seen. */
#define FS_GIT_ID_PARTS   5
#define FS_GIT_ID_HELD    128
#define FS_GIT_ID_RESERVE 256 /* descriptors left to the run below its limit */

struct fs_inode_id {
    bool present;
    int fd; /* O_PATH, holding the inode (-1: not held) */
    dev_t dev;
    ino_t ino;
    struct timespec born; /* statx's btime; ctime where the file system has none */
};

struct fs_git_id {
    struct fs_inode_id self; /* not present: elsewhere than a write root, or not there */
    struct fs_inode_id part[FS_GIT_ID_PARTS];
};

struct fs_git_ids {
    struct fs_git_id *v;
    size_t n;
};

int fs_git_ids_take(const struct fs_plan *plan, struct fs_git_ids *ids, struct nf_err *err);
void fs_git_ids_free(struct fs_git_ids *ids);

/* After a run: the repositories the command made below the top of a write
 * root, which git run there later obeys (config, hooks). Found by a second
 * scan within depth (immune to the races of the observer's memory reads),
 * and from watch (the observer's .git creations, anywhere, and rename
 * destinations, scanned in turn); each checked on disk beneath its write
 * root, never through a symlink. What the plan saw before the run, the top
 * of a write root (not creatable unless allowed) and our own placeholders
 * are not reported. Appended to out. */
int fs_git_created(const struct fs_plan *plan, unsigned depth, const struct pol_strv *watch,
                   struct pol_strv *out, struct nf_err *err);

/* After a run: the repositories the plan saw (ids, taken before it) that
 * are no longer what they were, whoever changed them. Appended to out. */
int fs_git_changed(const struct fs_plan *plan, const struct fs_git_ids *ids, struct pol_strv *out,
                   struct nf_err *err);
