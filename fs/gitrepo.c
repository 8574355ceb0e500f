#include "fs/gitrepo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/placeholder.h"
#include "fs/resolve.h"
#include "fs/scan.h"
#include "src/policy.h"
#include "src/syscalls.h"
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

static int add_dir(struct fs_gitcfg_paths *out, const char *path, struct nf_err *err)
{
    if (add_file(out, path, err) < 0)
        return -1;
    out->v[out->n - 1].dir = true;
    return 0;
}

/* With extensions.worktreeConfig, each worktree's config.worktree is read
 * too (the main one's in the common directory, a linked one's in its own
 * git directory): existing or not, config a command must not write. */
static int worktree_configs(const struct fs_gitrepo *repo, struct fs_gitcfg_paths *out,
                            struct nf_err *err)
{
    char path[PATH_MAX + NAME_MAX + 32];
    _cleanup_(closedirp) DIR *d = NULL;
    struct dirent *e;

    snprintf(path, sizeof(path), "%s/config.worktree", repo->commondir);
    if (add_file(out, path, err) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/config.worktree", repo->gitdir);
    if (add_file(out, path, err) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/worktrees", repo->commondir);
    if (!(d = opendir(path)))
        return 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(path, sizeof(path), "%s/worktrees/%s/config.worktree", repo->commondir,
                     e->d_name) >= PATH_MAX)
            continue;
        if (add_file(out, path, err) < 0)
            return -1;
    }
    return 0;
}

/* A submodule listed in .gitmodules whose git directory does not exist yet
 * (a fresh clone): git submodule update would take one the command planted
 * at modules/NAME, hooks and all. Its place is held. */
static int absent_modules(const struct fs_gitrepo *repo, const struct fs_gitcfg_env *env,
                          struct fs_gitcfg_paths *out, struct nf_err *err)
{
    struct fs_gitcfg_list mods = { 0 };
    char path[PATH_MAX + 32];
    int rc = 0;

    snprintf(path, sizeof(path), "%s/.gitmodules", repo->worktree);
    if (fs_gitcfg_load(path, env, &mods, err) < 0) {
        fs_gitcfg_list_free(&mods);
        return nf_err_prefix(err, "%s", path);
    }
    for (size_t i = 0; rc == 0 && i < mods.n; i++) {
        const char *k = mods.v[i].key;
        size_t len = strlen(k);
        struct stat st;

        if (strncmp(k, "submodule.", 10) != 0 || len < 16 || strcmp(k + len - 5, ".path") != 0)
            continue;
        /* git refuses names that climb out of modules/ (CVE-2018-11235) */
        snprintf(path, sizeof(path), "%s/modules/%.*s", repo->commondir, (int)(len - 15), k + 10);
        if (strstr(k, "..") || lstat(path, &st) == 0)
            continue;
        rc = add_dir(out, path, err);
    }
    fs_gitcfg_list_free(&mods);
    return rc;
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
    v = last_value(&cfg, "extensions.worktreeconfig", &found);
    if (found && is_true(v)) {
        snprintf(path, sizeof(path), "%s/config.worktree", repo->gitdir);
        if (worktree_configs(repo, out, err) < 0 || fs_gitcfg_load(path, env, &cfg, err) < 0)
            goto out;
    }
    if (fs_gitcfg_code_paths(&cfg, repo->worktree, env->home, out, err) < 0 ||
        fs_gitcfg_code_paths(host, repo->worktree, env->home, out, err) < 0 ||
        absent_modules(repo, env, out, err) < 0 ||
        modules_code_paths(repo->commondir, MODULES_NEST_MAX, env, out, err) < 0)
        goto out;
    rc = 0;
out:
    if (rc < 0)
        nf_err_prefix(err, "repository %s", repo->worktree);
    fs_gitcfg_list_free(&cfg);
    return rc;
}

/* How many rename destinations are scanned after a run: a package manager
 * renames thousands; the report is a warning, the scan's depth its bound. */
#define WATCH_SCANS_MAX 64

static bool top_of_a_root(const struct fs_plan *plan, const char *path)
{
    const char *slash = strrchr(path, '/');

    for (size_t i = 0; slash && i < plan->n_write_roots; i++) {
        const char *root = plan->write_roots[i];
        size_t n = strcmp(root, "/") == 0 ? 0 : strlen(root);

        if ((size_t)(slash - path) == n && strncmp(path, root, n) == 0)
            return true;
    }
    return false;
}

/* path (absolute, beneath one of plan's write roots) opened O_PATH beneath
 * that root, one component at a time, never through a symlink (a final one
 * is opened itself); -1 if elsewhere or not there. */
static int open_in_root(const struct fs_plan *plan, const char *path)
{
    for (size_t i = 0; i < plan->n_write_roots; i++) {
        const char *root = plan->write_roots[i];
        size_t n = strcmp(root, "/") == 0 ? 0 : strlen(root);
        _cleanup_close_ int rfd = -1;

        if (!pol_path_within(path, root))
            continue;
        rfd = fs_open_beneath_root(root);
        if (rfd < 0)
            return -1;
        if (strcmp(path, root) == 0)
            return fcntl(rfd, F_DUPFD_CLOEXEC, 3);
        return nf_openat2(rfd, path + n + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC,
                          RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
    }
    errno = ENOENT;
    return -1;
}

/* path exists beneath its write root, reached without a symlink, and is
 * not one of our placeholders. */
static bool made_there(const struct fs_plan *plan, const char *path)
{
    _cleanup_close_ int fd = open_in_root(plan, path);
    struct stat st;

    return fd >= 0 && fstat(fd, &st) == 0 && !fs_placeholder_at(fd, &st);
}

/* What a git directory holds that git obeys or takes it by; HEAD only for
 * a bare layout (a .git's is the user's to rewrite, switching branches). */
static const char *const id_parts[FS_GIT_ID_PARTS] = { "config", "hooks", "commondir",
                                                       "config.worktree", "HEAD" };

/* fd's identity, the descriptor kept in id if held. */
static bool inode_id(int fd, bool held, struct fs_inode_id *id)
{
    struct statx sx;

    if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME | STATX_CTIME, &sx) < 0)
        return false;
    id->present = true;
    id->fd = held ? fd : -1;
    id->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    id->ino = sx.stx_ino;
    if (sx.stx_mask & STATX_BTIME)
        id->born =
            (struct timespec){ .tv_sec = sx.stx_btime.tv_sec, .tv_nsec = sx.stx_btime.tv_nsec };
    else
        id->born =
            (struct timespec){ .tv_sec = sx.stx_ctime.tv_sec, .tv_nsec = sx.stx_ctime.tv_nsec };
    return true;
}

/* How many more inodes may be held, and below which descriptor number. */
struct hold {
    size_t left;
    int fd_max;
};

/* Whether fd is to be kept in its id (h NULL: none is). */
static bool may_hold(const struct hold *h, int fd)
{
    return h && h->left > 0 && fd < h->fd_max;
}

/* fd's identity into id, the descriptor kept there if h allows, else
 * closed. */
static void take_fd(int fd, struct hold *h, struct fs_inode_id *id)
{
    bool held = may_hold(h, fd);

    if (inode_id(fd, held, id) && held)
        h->left--;
    else
        close(fd);
}

/* path's identity; each inode kept open in id as h allows. */
static void id_take(const struct fs_plan *plan, const char *path, struct hold *h,
                    struct fs_git_id *id)
{
    int fd = open_in_root(plan, path);
    size_t parts = pol_path_names_git(path) ? FS_GIT_ID_PARTS - 1 : FS_GIT_ID_PARTS;
    struct stat st;

    memset(id, 0, sizeof(*id));
    id->self.fd = -1;
    for (size_t k = 0; k < FS_GIT_ID_PARTS; k++)
        id->part[k].fd = -1;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        for (size_t k = 0; k < parts; k++) {
            int pfd = openat(fd, id_parts[k], O_PATH | O_NOFOLLOW | O_CLOEXEC);

            if (pfd >= 0)
                take_fd(pfd, h, &id->part[k]);
        }
    }
    take_fd(fd, h, &id->self);
}

static void id_free(struct fs_git_id *id)
{
    if (id->self.fd >= 0)
        close(id->self.fd);
    for (size_t k = 0; k < FS_GIT_ID_PARTS; k++)
        if (id->part[k].fd >= 0)
            close(id->part[k].fd);
}

int fs_git_ids_take(const struct fs_plan *plan, struct fs_git_ids *ids, struct nf_err *err)
{
    struct hold h = { .left = FS_GIT_ID_HELD };
    struct rlimit nofile;

    *ids = (struct fs_git_ids){ 0 };
    if (plan->n_git_seen == 0)
        return 0;
    ids->v = calloc(plan->n_git_seen, sizeof(*ids->v));
    if (!ids->v)
        return nf_err_sys(err, "out of memory");
    /* Descriptors are taken lowest first: none is held past the caller's
     * limit less a reserve for the run (the placeholders hold two each). */
    if (getrlimit(RLIMIT_NOFILE, &nofile) < 0 || nofile.rlim_cur == RLIM_INFINITY)
        nofile.rlim_cur = 1024;
    h.fd_max = nofile.rlim_cur > FS_GIT_ID_RESERVE ? (int)(nofile.rlim_cur - FS_GIT_ID_RESERVE) : 0;
    ids->n = plan->n_git_seen;
    for (size_t i = 0; i < ids->n; i++)
        id_take(plan, plan->git_seen[i], &h, &ids->v[i]);
    return 0;
}

void fs_git_ids_free(struct fs_git_ids *ids)
{
    for (size_t i = 0; i < ids->n; i++)
        id_free(&ids->v[i]);
    free(ids->v);
    *ids = (struct fs_git_ids){ 0 };
}

/* then's inode, held, cannot be another's now; one not held is told from
 * a replacement that took its number by its birth time (work inside a
 * directory leaves that as it was). */
static bool inode_same(const struct fs_inode_id *then, const struct fs_inode_id *now)
{
    if (then->present != now->present || then->dev != now->dev || then->ino != now->ino)
        return false;
    return then->fd >= 0 ||
           (then->born.tv_sec == now->born.tv_sec && then->born.tv_nsec == now->born.tv_nsec);
}

static bool id_same(const struct fs_git_id *then, const struct fs_git_id *now)
{
    if (!inode_same(&then->self, &now->self))
        return false;
    for (size_t k = 0; k < FS_GIT_ID_PARTS; k++)
        if (!inode_same(&then->part[k], &now->part[k]))
            return false;
    return true;
}

int fs_git_changed(const struct fs_plan *plan, const struct fs_git_ids *ids, struct pol_strv *out,
                   struct nf_err *err)
{
    for (size_t i = 0; i < ids->n && i < plan->n_git_seen; i++) {
        struct fs_git_id now;

        /* Not taken: outside the write roots, or not there then. Gone now:
         * no repository for git to obey. */
        if (!ids->v[i].self.present)
            continue;
        id_take(plan, plan->git_seen[i], NULL, &now);
        if (!now.self.present || id_same(&ids->v[i], &now) ||
            pol_strv_contains(out, plan->git_seen[i]))
            continue;
        if (pol_strv_add(out, plan->git_seen[i], err) < 0)
            return -1;
    }
    return 0;
}

int fs_git_created(const struct fs_plan *plan, unsigned depth, const struct pol_strv *watch,
                   struct pol_strv *out, struct nf_err *err)
{
    struct fs_found_list now = { 0 };
    size_t scans = 0;
    int rc = 0;

    for (size_t i = 0; i < plan->n_write_roots; i++)
        (void)fs_scan_git(plan->write_roots[i], depth, &plan->dirsnap, &now, err);
    for (size_t i = 0; i < watch->n; i++) {
        if (pol_path_names_git(watch->v[i])) {
            char **v = realloc(now.git, (now.n_git + 1) * sizeof(*v));

            if (v)
                now.git = v;
            if (!v || !(v[now.n_git] = strdup(watch->v[i]))) {
                rc = nf_err_sys(err, "out of memory");
                goto out;
            }
            now.n_git++;
        } else if (scans < WATCH_SCANS_MAX && !strstr(watch->v[i], "/node_modules/") &&
                   made_there(plan, watch->v[i])) {
            scans++;
            (void)fs_scan_git(watch->v[i], depth, &plan->dirsnap, &now, err);
        }
    }
    for (size_t k = 0; k < now.n_git; k++) {
        const char *c = now.git[k];
        bool seen = pol_strv_contains(out, c);
        char head[PATH_MAX + 8];

        for (size_t i = 0; i < plan->n_git_seen && !seen; i++)
            seen = strcmp(plan->git_seen[i], c) == 0;
        if (seen)
            continue;
        if (pol_path_names_git(c)) {
            if (top_of_a_root(plan, c) || !made_there(plan, c))
                continue;
        } else {
            /* A bare layout: its HEAD must be the command's, not the
             * placeholder that keeps the top from becoming one. */
            snprintf(head, sizeof(head), "%s/HEAD", c);
            if (!made_there(plan, head))
                continue;
        }
        if (pol_strv_add(out, c, err) < 0) {
            rc = -1;
            break;
        }
    }
out:
    fs_found_free(&now);
    return rc;
}
