#include "fs/gitrepo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/resolve.h"
#include "fs/scan.h"
#include "src/policy.h"
#include "src/util.h"

/* How deep submodules of submodules are followed. */
#define MODULES_NEST_MAX 4

/* The first line of a small regular file (a gitfile, a commondir); -1 when
 * it is not one. Never blocks on a FIFO. */
static int read_small(const char *path, char *out, size_t outsz)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    ssize_t n;

    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return -1;
    n = read(fd, out, outsz - 1);
    if (n < 0)
        return -1;
    out[n] = '\0';
    out[strcspn(out, "\r\n")] = '\0';
    return 0;
}

/* rel against dir (rel absolute: itself), normalised and resolved; -1 when
 * it does not exist. */
static int resolve_against(const char *dir, const char *rel, char *out, size_t outsz)
{
    char joined[PATH_MAX * 2], norm[PATH_MAX];
    struct nf_err ignored;
    enum fs_res res;

    if (rel[0] == '/')
        snprintf(joined, sizeof(joined), "%s", rel);
    else
        snprintf(joined, sizeof(joined), "%s/%s", dir, rel);
    if (pol_path_normalize(joined, "/", NULL, norm, sizeof(norm), &ignored) < 0 ||
        fs_resolve(norm, out, outsz, &res, NULL, &ignored) < 0 || res != FS_RES_EXISTS)
        return -1;
    return 0;
}

static int dirname_of(const char *path, char *out, size_t outsz)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return -1;
    if (slash == path)
        return snprintf(out, outsz, "/") < (int)outsz ? 0 : -1;
    return snprintf(out, outsz, "%.*s", (int)(slash - path), path) < (int)outsz ? 0 : -1;
}

int fs_gitrepo_locate(const char *dotgit, struct fs_gitrepo *out, struct nf_err *err)
{
    char real[PATH_MAX], buf[PATH_MAX + 16], target[PATH_MAX], head[PATH_MAX + 16];
    enum fs_res res;
    struct stat st;
    struct nf_err ignored;

    (void)err;
    memset(out, 0, sizeof(*out));
    if (dirname_of(dotgit, out->worktree, sizeof(out->worktree)) < 0 ||
        fs_resolve(dotgit, real, sizeof(real), &res, NULL, &ignored) < 0 || res != FS_RES_EXISTS ||
        stat(real, &st) < 0)
        return 1; /* a loop or a dangling link: the plan masks it */
    if (S_ISDIR(st.st_mode)) {
        snprintf(out->gitdir, sizeof(out->gitdir), "%s", real);
    } else {
        /* A gitfile's relative target is taken from where the .git is. */
        if (read_small(real, buf, sizeof(buf)) < 0 ||
            fs_gitfile_parse(buf, strlen(buf), target, sizeof(target)) < 0 ||
            resolve_against(out->worktree, target, out->gitdir, sizeof(out->gitdir)) < 0)
            return 1;
    }
    /* An empty directory (our own placeholder where none may be made) is
     * no repository to git. */
    snprintf(head, sizeof(head), "%s/HEAD", out->gitdir);
    if (lstat(head, &st) < 0)
        return 1;
    snprintf(head, sizeof(head), "%s/commondir", out->gitdir);
    if (read_small(head, buf, sizeof(buf)) < 0 || !buf[0] ||
        resolve_against(out->gitdir, buf, out->commondir, sizeof(out->commondir)) < 0)
        snprintf(out->commondir, sizeof(out->commondir), "%s", out->gitdir);
    return 0;
}

static bool is_true(const char *v)
{
    return !v || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
           strcasecmp(v, "on") == 0 || strcmp(v, "1") == 0;
}

static const char *last_value(const struct fs_gitcfg_list *l, const char *key, bool *found)
{
    const char *v = NULL;

    *found = false;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].key, key) == 0) {
            v = l->v[i].value;
            *found = true;
        }
    return v;
}

static int add_file(struct fs_gitcfg_paths *out, const char *path, struct nf_err *err)
{
    struct fs_gitcfg_path *v = realloc(out->v, (out->n + 1) * sizeof(*v));

    if (!v)
        return nf_err_sys(err, "out of memory");
    out->v = v;
    out->v[out->n] = (struct fs_gitcfg_path){ .path = strdup(path) };
    if (!out->v[out->n].path)
        return nf_err_sys(err, "out of memory");
    out->n++;
    out->cap = out->n;
    return 0;
}

/* A submodule's git directory: its config names paths relative to its own
 * worktree (core.worktree, relative to the git directory). */
static int modules_code_paths(const char *gitdir, unsigned nest, const struct fs_gitcfg_env *env,
                              struct fs_gitcfg_paths *out, struct nf_err *err)
{
    char dir[PATH_MAX];
    _cleanup_(closedirp) DIR *d = NULL;
    struct dirent *e;

    if (nest == 0 || snprintf(dir, sizeof(dir), "%s/modules", gitdir) >= (int)sizeof(dir) ||
        !(d = opendir(dir)))
        return 0;
    while ((e = readdir(d))) {
        struct fs_gitcfg_list cfg = { 0 };
        char mod[PATH_MAX], conf[PATH_MAX + 8], worktree[PATH_MAX];
        const char *wt;
        bool found;
        int rc = 0;

        if (e->d_name[0] == '.' ||
            snprintf(mod, sizeof(mod), "%s/%s", dir, e->d_name) >= (int)sizeof(mod))
            continue;
        snprintf(conf, sizeof(conf), "%s/config", mod);
        if (fs_gitcfg_load(conf, env, &cfg, err) < 0) {
            fs_gitcfg_list_free(&cfg);
            return nf_err_prefix(err, "submodule git directory %s", mod);
        }
        wt = last_value(&cfg, "core.worktree", &found);
        if (found && wt && resolve_against(mod, wt, worktree, sizeof(worktree)) == 0)
            rc = fs_gitcfg_code_paths(&cfg, worktree, env->home, out, err);
        fs_gitcfg_list_free(&cfg);
        if (rc < 0 || modules_code_paths(mod, nest - 1, env, out, err) < 0)
            return -1;
    }
    return 0;
}

int fs_gitrepo_code_paths(const struct fs_gitrepo *repo, const struct fs_gitcfg_list *host,
                          const struct fs_gitcfg_env *env, struct fs_gitcfg_paths *out,
                          struct nf_err *err)
{
    struct fs_gitcfg_list cfg = { 0 };
    char path[PATH_MAX + 32];
    bool found;
    const char *v;
    int rc = -1;

    snprintf(path, sizeof(path), "%s/config", repo->commondir);
    if (fs_gitcfg_load(path, env, &cfg, err) < 0)
        goto out;
    /* With extensions.worktreeConfig, config.worktree is read too: existing
     * or not, it is config a command must not write. */
    v = last_value(&cfg, "extensions.worktreeconfig", &found);
    if (found && is_true(v)) {
        snprintf(path, sizeof(path), "%s/config.worktree", repo->gitdir);
        if (add_file(out, path, err) < 0 || fs_gitcfg_load(path, env, &cfg, err) < 0)
            goto out;
    }
    if (fs_gitcfg_code_paths(&cfg, repo->worktree, env->home, out, err) < 0 ||
        fs_gitcfg_code_paths(host, repo->worktree, env->home, out, err) < 0 ||
        modules_code_paths(repo->commondir, MODULES_NEST_MAX, env, out, err) < 0)
        goto out;
    rc = 0;
out:
    if (rc < 0)
        nf_err_prefix(err, "repository %s", repo->worktree);
    fs_gitcfg_list_free(&cfg);
    return rc;
}
