/* The repositories in a write root, as the user's own git will find them
 * later: where a .git leads (its git directory and common directory), and
 * every path the configs git reads for it name as something to run or to
 * read as config or hooks. The plan protects those paths where they fall
 * in a write root: a command that could write one would get its code run
 * by the host's next git command. */
#pragma once

#include <limits.h>
#include <stdbool.h>

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
