#include "fs/plan.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/gitconfig.h"
#include "fs/gitrepo.h"
#include "fs/glob.h"
#include "fs/mounts.h"
#include "fs/placeholder.h"
#include "fs/resolve.h"
#include "fs/scan.h"
#include "src/log.h"
#include "src/util.h"

/* Rules are sorted by depth, then by kind in this order, so that a deeper
 * rule always lands on top of a shallower one, and for the same path a deny
 * comes after a write root (deny wins) and a read carve-out after a read deny
 * (allow_read re-opens). */
enum rule_kind {
    R_TMP,
    R_WRITE,
    R_DENY,
    R_LINK,
    R_MASK_LINK,
    R_MASK_DIR,
    R_MASK_FILE,
    R_ALLOW,
};

struct rule {
    char *path;
    enum rule_kind kind;
    enum fs_placeholder ph;
    bool optional; /* found by the scan: may vanish before it is mounted */
    bool missing;  /* the last look at path, just before it was added, found nothing */
    const char *why;
    unsigned depth;
    size_t seq;
};

struct rules {
    struct rule *v;
    size_t n;
    size_t cap;
    struct fs_plan *plan; /* for what the scan finds besides rules */
    const struct policy *pol;
};

/* What the sandbox sees at a path, given the rules above it. */
enum state {
    S_RO,      /* host content, read-only */
    S_RO_DENY, /* read-only because a deny said so: no write root re-opens it */
    S_RW,      /* host content, writable */
    S_MASK,    /* an empty tmpfs (writable: the sandbox's own) */
    S_TMP,     /* the private /tmp */
};

struct done {
    const char *path;
    enum state state;
    const char *anchor; /* the write root that made it writable */
};

static int rules_add_opt(struct rules *r, const char *path, enum rule_kind kind,
                         enum fs_placeholder ph, bool optional, const char *why, struct nf_err *err)
{
    for (size_t i = 0; i < r->n; i++) {
        /* A masked link needs nothing else at its path: the mask holds it. */
        if ((kind == R_LINK || kind == R_MASK_LINK) &&
            (r->v[i].kind == R_LINK || r->v[i].kind == R_MASK_LINK) && r->v[i].kind != kind &&
            strcmp(r->v[i].path, path) == 0) {
            r->v[i].kind = R_MASK_LINK;
            r->v[i].optional = r->v[i].optional && optional;
            return 0;
        }
        if (r->v[i].kind == kind && strcmp(r->v[i].path, path) == 0) {
            /* Asked for twice: required if either asks so. */
            r->v[i].optional = r->v[i].optional && optional;
            r->v[i].missing = false;
            if (r->v[i].ph == FS_PH_NONE)
                r->v[i].ph = ph;
            return 0;
        }
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        struct rule *v = realloc(r->v, cap * sizeof(*v));

        if (!v)
            return nf_err_sys(err, "out of memory");
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n] = (struct rule){ .kind = kind,
                                .ph = ph,
                                .optional = optional,
                                .why = why,
                                .depth = pol_path_depth(path),
                                .seq = r->n };
    r->v[r->n].path = strdup(path);
    if (!r->v[r->n].path)
        return nf_err_sys(err, "out of memory");
    r->n++;
    return 0;
}

static int rules_add(struct rules *r, const char *path, enum rule_kind kind, enum fs_placeholder ph,
                     const char *why, struct nf_err *err)
{
    return rules_add_opt(r, path, kind, ph, false, why, err);
}

/* A deny of a path an lstat has just found missing: placeholder_role need
 * not look at it again (a system call per protected name). */
static int rules_add_missing(struct rules *r, const char *path, enum fs_placeholder ph,
                             const char *why, struct nf_err *err)
{
    if (rules_add(r, path, R_DENY, ph, why, err) < 0)
        return -1;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].kind == R_DENY && strcmp(r->v[i].path, path) == 0)
            r->v[i].missing = true;
    return 0;
}

static void rules_free(struct rules *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].path);
    free(r->v);
}

static int rule_cmp(const void *a, const void *b)
{
    const struct rule *x = a, *y = b;

    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct fs_op *fs_plan_push(struct fs_plan *p, enum fs_op_kind kind, const char *src,
                           const char *dst, const char *why, struct nf_err *err)
{
    struct fs_op *op;

    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        struct fs_op *v = realloc(p->ops, cap * sizeof(*v));

        if (!v) {
            nf_err_sys(err, "out of memory");
            return NULL;
        }
        p->ops = v;
        p->cap = cap;
    }
    op = &p->ops[p->n];
    *op = (struct fs_op){ .kind = kind, .why = why, .fd = -1 };
    if ((src && !(op->src = strdup(src))) || (dst && !(op->dst = strdup(dst)))) {
        free(op->src);
        free(op->dst);
        nf_err_sys(err, "out of memory");
        return NULL;
    }
    p->n++;
    return op;
}

static int plan_add(struct fs_plan *p, enum fs_op_kind kind, const char *src, const char *dst,
                    enum fs_placeholder ph, bool create, const char *why, struct nf_err *err)
{
    struct fs_op *op = fs_plan_push(p, kind, src, dst, why, err);

    if (!op)
        return -1;
    op->ph = ph;
    op->create = create;
    return 0;
}

static int strs_add(char ***v, size_t *n, const char *s, struct nf_err *err)
{
    char **nv;

    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i], s) == 0)
            return 0;
    nv = realloc(*v, (*n + 1) * sizeof(*nv));
    if (!nv)
        return nf_err_sys(err, "out of memory");
    *v = nv;
    nv[*n] = strdup(s);
    if (!nv[*n])
        return nf_err_sys(err, "out of memory");
    (*n)++;
    return 0;
}

/* A protected path that exists may be a placeholder an earlier run left
 * (killed with SIGKILL): adopt it, so this run removes it when done. */
static enum fs_placeholder left_behind(const char *path)
{
    struct stat st;

    if (!fs_placeholder_path(path, &st))
        return FS_PH_NONE;
    return S_ISDIR(st.st_mode) ? FS_PH_DIR : FS_PH_FILE;
}

/* Which protected paths a run must hold a lock on. Ours to create (missing),
 * or left behind by a killed run: shown as placeholders. Any other empty
 * file or directory may be a placeholder another run is making in place
 * (where a file system cannot rename without replacing) and has not marked
 * yet: held too, so that run cannot remove it under us; removed at the end
 * only if it carries the mark by then. seen_missing: an lstat just before
 * found nothing there (rules_add_missing), and it is not looked at again. */
static void placeholder_role(struct fs_op *op, enum fs_placeholder missing, bool seen_missing)
{
    struct stat st;

    op->ph = missing;
    op->ph_shown = missing != FS_PH_NONE;
    op->ph_missing = missing != FS_PH_NONE;
    if (seen_missing || lstat(op->dst, &st) < 0)
        return;
    op->ph_missing = false;
    if (fs_placeholder_path(op->dst, &st))
        op->ph_shown = true;
    if (S_ISDIR(st.st_mode))
        op->ph = FS_PH_DIR;
    else if (S_ISREG(st.st_mode) && st.st_size == 0)
        op->ph = FS_PH_FILE;
    else if (op->ph_shown && S_ISREG(st.st_mode))
        op->ph = FS_PH_DOTFILE;
    else
        op->ph = FS_PH_NONE;
}

/* A deny (explicit, mandatory or a config file): resolved through symlinks
 * so the mount lands on the real target; a path that does not exist yet
 * becomes a placeholder at its first missing component. */
struct link_ctx {
    struct rules *r;
    const char *why;
    bool optional;
    int rc;
    struct nf_err *err;
};

/* A deny spelled through a symlink inside a write root: removing the link
 * and making a real path in its place would escape the deny. */
static void protect_link(void *ctx, const char *link)
{
    struct link_ctx *l = ctx;

    if (l->rc == 0)
        l->rc = rules_add_opt(l->r, link, R_LINK, FS_PH_NONE, l->optional, l->why, l->err);
}

/* A denied path that cannot be made as things stand: a name on its way is
 * not a directory (.claude a file, a FIFO, or a link to one; real is where
 * the walk stopped). The command could remove that name, make a directory
 * there and then the path: the name is held as it is instead. */
static int hold_blocker(struct rules *r, char *real, bool optional, const char *why,
                        struct nf_err *err)
{
    struct stat st;

    while (lstat(real, &st) < 0) {
        char *slash = strrchr(real, '/');

        if ((errno != ENOTDIR && errno != ENOENT) || !slash || slash == real)
            return 0;
        *slash = '\0';
    }
    if (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))
        return 0;
    return rules_add_opt(r, real, R_DENY, FS_PH_NONE, optional, why, err);
}

/* missing: the placeholder when the path itself is the first missing name
 * (a deeper missing name needs a directory). */
static int add_deny_opt(struct rules *r, const char *path, enum fs_placeholder missing,
                        bool optional, const char *why, struct nf_err *err)
{
    char real[PATH_MAX];
    enum fs_res res;
    size_t missing_at = 0;
    struct link_ctx lc = { .r = r, .why = why, .optional = optional, .err = err };

    if (fs_resolve_links(path, real, sizeof(real), &res, &missing_at, protect_link, &lc, err) < 0)
        return nf_err_prefix(err, "%s %s", why, path);
    if (lc.rc < 0)
        return -1;
    switch (res) {
    case FS_RES_EXISTS:
        return rules_add_opt(r, real, R_DENY, FS_PH_NONE, optional, why, err);
    case FS_RES_MISSING: {
        bool deeper = real[missing_at] != '\0';
        char *slash;

        real[missing_at] = '\0';
        /* An empty placeholder directory a killed run left (.claude for
         * .claude/commands) is where the mount point goes again. */
        while ((slash = strrchr(real, '/')) && slash != real) {
            *slash = '\0';
            if (left_behind(real) != FS_PH_DIR) {
                *slash = '/';
                break;
            }
            deeper = true;
        }
        return rules_add_opt(r, real, R_DENY, deeper ? FS_PH_DIR : missing, optional, why, err);
    }
    case FS_RES_IMPOSSIBLE:
        return hold_blocker(r, real, optional, why, err);
    }
    return 0;
}

static int add_deny(struct rules *r, const char *path, bool dir_if_missing, const char *why,
                    struct nf_err *err)
{
    return add_deny_opt(r, path, dir_if_missing ? FS_PH_DIR : FS_PH_FILE, false, why, err);
}

/* The real location of path's last component (its parent resolved). */
static int real_parent(const char *path, char *out, size_t outsz)
{
    char dir[PATH_MAX];
    const char *base = strrchr(path, '/');
    enum fs_res res;
    struct nf_err ignored;

    if (!base || base == path || snprintf(dir, sizeof(dir), "%.*s", (int)(base - path), path) < 0)
        return snprintf(out, outsz, "%s", path) < (int)outsz ? 0 : -1;
    if (fs_resolve(dir, out, outsz, &res, NULL, &ignored) < 0 || res != FS_RES_EXISTS)
        return -1;
    if (strlen(out) + strlen(base) + 1 > outsz)
        return -1;
    strcat(out, strcmp(out, "/") == 0 ? base + 1 : base);
    return 0;
}

/* The first symlink on path's way below root (root itself resolved), or -1
 * when there is none. */
static int first_link_below(const char *root, const char *path, char *out, size_t outsz)
{
    size_t n = strcmp(root, "/") == 0 ? 0 : strlen(root);

    if (!pol_path_within(path, root) || snprintf(out, outsz, "%s", path) >= (int)outsz)
        return -1;
    for (char *p = out + n + 1; p <= out + strlen(path); p++) {
        struct stat st;
        char c = *p;

        if (c != '/' && c != '\0')
            continue;
        *p = '\0';
        if (lstat(out, &st) < 0)
            return -1;
        if (S_ISLNK(st.st_mode))
            return 0;
        *p = c;
    }
    return -1;
}

/* A protected name whose symlinks cannot be resolved (a loop such as
 * `.claude -> loopa -> .claude`, or a link we cannot read through): the
 * command could replace a later link in the chain and write through the
 * name. An empty read-only file over its first symlink inside the write
 * root makes nothing reachable through it and the link unreplaceable. */
static int mask_unresolvable(struct rules *r, const char *root, const char *path,
                             const struct nf_err *why, bool optional, struct nf_err *err)
{
    char link[PATH_MAX];

    if (first_link_below(root, path, link, sizeof(link)) < 0) {
        if (optional) {
            log_v("mandatory deny %s: %s", path, why->msg);
            return 0;
        }
        *err = *why;
        return -1;
    }
    log_v("mandatory deny %s: %s; masking %s", path, why->msg, link);
    if (rules_add_opt(r, link, R_MASK_LINK, FS_PH_NONE, optional, "unresolvable symlink", err) < 0)
        return -1;
    /* The other links of the chain stay as they are too: replacing `loopa`
     * with a directory would otherwise plant what the name leads to once the
     * run is over. */
    {
        struct link_ctx lc = {
            .r = r, .why = "unresolvable symlink", .optional = optional, .err = err
        };
        char real[PATH_MAX];
        enum fs_res res;
        struct nf_err ignored = { 0 };

        (void)fs_resolve_links(path, real, sizeof(real), &res, NULL, protect_link, &lc, &ignored);
        return lc.rc;
    }
}

static int add_link_itself(struct rules *r, const char *path, bool optional, struct nf_err *err)
{
    char real[PATH_MAX];

    if (real_parent(path, real, sizeof(real)) < 0) {
        log_v("mandatory deny %s: cannot resolve its directory", path);
        return 0;
    }
    return rules_add_opt(r, real, R_LINK, FS_PH_NONE, optional, "mandatory", err);
}

/* A mandatory name found by the scan (or at the top): protected where it
 * really is; a name that cannot be resolved is masked. */
static int add_mandatory_path(struct rules *r, const char *root, const char *path,
                              enum fs_placeholder missing, bool optional, struct nf_err *err)
{
    struct nf_err e = { 0 };

    if (add_deny_opt(r, path, missing, optional, "mandatory", &e) == 0)
        return 0;
    if (e.code == ENOMEM) {
        *err = e;
        return -1;
    }
    return mask_unresolvable(r, root, path, &e, optional, err);
}

static int add_mandatory_link(struct rules *r, const char *root, const char *path, bool optional,
                              struct nf_err *err)
{
    struct nf_err e = { 0 };
    char real[PATH_MAX];
    enum fs_res res;

    if (fs_resolve(path, real, sizeof(real), &res, NULL, &e) < 0)
        return mask_unresolvable(r, root, path, &e, optional, err);
    if (add_link_itself(r, path, optional, err) < 0)
        return -1;
    return add_mandatory_path(r, root, path, FS_PH_FILE, optional, err);
}

/* Below the top, what the scan finds may vanish before it is mounted (a
 * build removing its directories): skipped then. At the top, and in the
 * top's own .git and .claude, it is required. */
static bool scan_optional(const char *root, const char *path)
{
    const char *rel = path + (strcmp(root, "/") == 0 ? 1 : strlen(root) + 1);
    size_t first = strcspn(rel, "/");

    if (!rel[first])
        return false;
    return !((first == 4 && strncasecmp(rel, ".git", 4) == 0) ||
             (first == 7 && strncasecmp(rel, ".claude", 7) == 0));
}

static int add_found(struct rules *r, const char *root, const struct fs_found_list *found,
                     struct nf_err *err);

static bool in_write_root(const struct rules *r, const char *path)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].kind == R_WRITE && pol_path_within(path, r->v[i].path))
            return true;
    return false;
}

/* The write root path lies in (the deepest), or NULL. */
static const char *root_of(const struct rules *r, const char *path)
{
    const char *best = NULL;

    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].kind == R_WRITE && pol_path_within(path, r->v[i].path) &&
            (!best || strlen(r->v[i].path) > strlen(best)))
            best = r->v[i].path;
    return best;
}

/* The control files of a git directory the scan did not walk into (a
 * worktree's common directory, the repository a write root lies in), where
 * it falls in a write root. */
static int add_gitdir_at(struct rules *r, const char *gitdir, struct nf_err *err)
{
    struct fs_found_list sub = { 0 };
    const char *root = root_of(r, gitdir);
    int rc;

    if (!root)
        return 0; /* read-only already */
    if (fs_scan_gitdir(gitdir, &sub, err) < 0)
        return -1;
    rc = add_found(r, root, &sub, err);
    fs_found_free(&sub);
    return rc;
}

/* A .git file names the git directory git really uses (a linked worktree's
 * or a submodule's): inside a write root, its control files are protected
 * as a .git directory's would be. */
static int add_gitfile_target(struct rules *r, const char *root, const struct fs_found *f,
                              bool optional, struct nf_err *err)
{
    char joined[PATH_MAX * 2], real[PATH_MAX];
    const char *slash = strrchr(f->path, '/');
    struct link_ctx lc = { .r = r, .why = "gitfile", .optional = optional, .err = err };
    struct nf_err e = { 0 };
    struct stat st;
    enum fs_res res;
    char *dot;
    int rc;

    if (!f->target || !slash)
        return 0;
    if (f->target[0] == '/')
        snprintf(joined, sizeof(joined), "%s", f->target);
    else
        snprintf(joined, sizeof(joined), "%.*s/%s", (int)(slash - f->path), f->path, f->target);
    if (strlen(joined) >= PATH_MAX)
        return 0; /* nor can git open it */
    /* Resolved as the kernel will for git (a ".." after a symlink goes up
     * from where the link leads), the links on the way held. */
    rc = fs_resolve_links(joined, real, sizeof(real), &res, NULL, protect_link, &lc, &e);
    if (lc.rc < 0)
        return -1;
    if (rc == 0 && res == FS_RES_EXISTS && stat(real, &st) == 0 && S_ISDIR(st.st_mode))
        return add_gitdir_at(r, real, err);
    if (rc < 0 && !in_write_root(r, joined))
        return 0; /* unresolvable outside: nothing there is the command's */
    /* No git directory there now (missing, a file, a FIFO, a link loop):
     * whatever a command made there would become the repository git obeys
     * (git init --bare). Held as a protected name is: empty, as it is, or
     * masked at its first link. A ".." after a missing name resolves once
     * that name exists: holding the name is enough. */
    for (dot = joined; e.code == EINVAL && (dot = strchr(dot, '/'));) {
        size_t n = strcspn(dot + 1, "/");

        if ((n == 1 && dot[1] == '.') || (n == 2 && dot[1] == '.' && dot[2] == '.')) {
            struct nf_err ignored;

            *dot = '\0';
            if (fs_resolve(joined, real, sizeof(real), &res, NULL, &ignored) == 0 &&
                res == FS_RES_MISSING)
                break; /* the first "." or ".." after the missing name */
            *dot = '/';
        }
        dot += 1 + n;
    }
    return add_mandatory_path(r, root, joined, FS_PH_DIR, optional, err);
}

/* What a scan of root found, each as its kind asks. */
/* A repository's own config, `.git/config` (srt's allowGitConfig lets it be
 * written: a remote URL update; its hooks stay protected). */
static bool names_git_config(const char *path)
{
    size_t len = strlen(path);

    return len >= 12 && strcmp(path + len - 7, "/config") == 0 &&
           strncasecmp(path + len - 12, "/.git", 5) == 0;
}

static int add_found(struct rules *r, const char *root, const struct fs_found_list *found,
                     struct nf_err *err)
{
    for (size_t i = 0; i < found->n; i++) {
        const struct fs_found *f = &found->v[i];
        bool optional = pol_path_within(f->path, root) && scan_optional(root, f->path);
        const char *slash = strrchr(f->path, '/');

        if (r->pol->allow_git_config && names_git_config(f->path))
            continue;

        switch (f->kind) {
        case FS_FOUND_STALE:
            if (slash && r->plan) {
                struct fs_stale *v = realloc(r->plan->stale, (r->plan->n_stale + 1) * sizeof(*v));

                if (!v)
                    return nf_err_sys(err, "out of memory");
                r->plan->stale = v;
                v[r->plan->n_stale] =
                    (struct fs_stale){ .anchor = strdup(root), .name = strdup(slash + 1) };
                if (!v[r->plan->n_stale++].anchor || !v[r->plan->n_stale - 1].name)
                    return nf_err_sys(err, "out of memory");
            }
            break;
        case FS_FOUND_SYMLINK:
            if (add_mandatory_link(r, root, f->path, optional, err) < 0)
                return -1;
            break;
        case FS_FOUND_LINK: {
            char real[PATH_MAX];
            enum fs_res res;
            struct nf_err e = { 0 };

            /* A symlinked .git or .claude that leads nowhere it can be
             * resolved: masked, so a later link in its chain cannot be
             * swapped for a directory the command writes. */
            if (fs_resolve(f->path, real, sizeof(real), &res, NULL, &e) < 0) {
                if (mask_unresolvable(r, root, f->path, &e, optional, err) < 0)
                    return -1;
                break;
            }
            if (add_link_itself(r, f->path, optional, err) < 0)
                return -1;
            /* A dangling one: whatever the command makes where it leads
             * becomes the repository (or the agent config) the name
             * stands for. Held empty, as a missing top-level name is. */
            if (res == FS_RES_MISSING &&
                add_mandatory_path(r, root, f->path, FS_PH_DIR, optional, err) < 0)
                return -1;
            break;
        }
        case FS_FOUND_GITFILE:
            if (add_mandatory_path(r, root, f->path, FS_PH_FILE, optional, err) < 0 ||
                add_gitfile_target(r, root, f, optional, err) < 0)
                return -1;
            break;
        case FS_FOUND_ABSENT:
            if (add_mandatory_path(r, root, f->path,
                                   f->absent_dir ? FS_PH_DIR
                                   : f->dot      ? FS_PH_DOTFILE
                                                 : FS_PH_FILE,
                                   optional, err) < 0)
                return -1;
            break;
        case FS_FOUND_FILE:
        case FS_FOUND_DIR:
            /* Resolved: a name found through a symlinked .claude or .git
             * lands where it really is. */
            if (add_mandatory_path(r, root, f->path,
                                   f->kind == FS_FOUND_DIR ? FS_PH_DIR : FS_PH_FILE, optional,
                                   err) < 0)
                return -1;
            break;
        }
    }
    return 0;
}

/* A mandatory deny of path, held by a placeholder, when nothing is there
 * or a placeholder a killed run left (adopted, so this run removes it).
 * Returns 1 when held, 0 when something else is there, -1 on error. */
static int hold_absent_or_ours(struct rules *r, const char *path, enum fs_placeholder ph,
                               struct nf_err *err)
{
    struct stat st;

    if (lstat(path, &st) < 0) {
        if (errno != ENOENT)
            return 0;
        return rules_add_missing(r, path, ph, "mandatory", err) < 0 ? -1 : 1;
    }
    if (!fs_placeholder_path(path, &st))
        return 0;
    return rules_add(r, path, R_DENY, ph, "mandatory", err) < 0 ? -1 : 1;
}

/* What is at the parent of a name below the top (.claude of
 * .claude/commands). */
enum parent_state {
    PARENT_ABSENT,   /* nothing: the name's placeholder directory goes there */
    PARENT_DANGLING, /* a symlink to nothing: resolved name by name */
    PARENT_DIR,      /* a directory, or a symlink to one */
    PARENT_NONDIR,   /* a file, a FIFO, ..., or a link to or through one: held */
    PARENT_OTHER,    /* unreadable, or a link loop (the scan masks those) */
};

static enum parent_state parent_state(const char *path)
{
    struct stat st;

    if (lstat(path, &st) < 0)
        return errno == ENOENT ? PARENT_ABSENT : PARENT_OTHER;
    if (S_ISLNK(st.st_mode) && stat(path, &st) < 0)
        return errno == ENOENT ? PARENT_DANGLING : errno == ENOTDIR ? PARENT_NONDIR : PARENT_OTHER;
    return S_ISDIR(st.st_mode) ? PARENT_DIR : PARENT_NONDIR;
}

/* A HEAD of the user's own at the top, where git would take the top for a
 * bare repository once objects/ and refs/ are directories beside it (and
 * HEAD valid): the first of those that is not a directory yet is held as
 * it is, an empty file where absent. Both directories already, the top is
 * such a layout, which the scan takes as a git directory (its config and
 * hooks held). */
static int hold_bare_layout(struct rules *r, const char *root, struct nf_err *err)
{
    static const char *const names[] = { "objects", "refs" };

    for (size_t i = 0; i < NF_ARRAY_SIZE(names); i++) {
        char path[PATH_MAX];
        struct stat st;
        int held;

        if (snprintf(path, sizeof(path), "%s%s%s", root, strcmp(root, "/") ? "/" : "", names[i]) >=
            (int)sizeof(path))
            return 0;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            continue;
        held = hold_absent_or_ours(r, path, FS_PH_FILE, err);
        if (held != 0)
            return held < 0 ? -1 : 0;
        return add_mandatory_path(r, root, path, FS_PH_FILE, false, err);
    }
    return 0;
}

static int add_mandatory(struct rules *r, const char *root, unsigned depth, struct nf_err *err)
{
    struct fs_found_list found = { 0 };
    bool root_left_behind = left_behind(root) == FS_PH_DIR;
    struct stat st;
    char git[PATH_MAX];
    /* The last parent looked at, for the names that share it. */
    const char *parent = NULL;
    size_t parent_len = 0;
    enum parent_state state = PARENT_OTHER;
    int rc = -1;

    if (fs_scan_mandatory(root, depth, &found, r->plan ? &r->plan->dirsnap : NULL, err) < 0)
        goto out;
    if (add_found(r, root, &found, err) < 0)
        goto out;
    for (size_t i = 0; i < found.n_git && r->plan; i++)
        if (strs_add(&r->plan->git_seen, &r->plan->n_git_seen, found.git[i], err) < 0)
            goto out;
    /* At the top of the root, names that do not exist yet cannot be created
     * either. `.git/...` only when .git is a directory (the scan probed it). */
    for (size_t i = 0; i < fs_n_mandatory_names; i++) {
        const struct fs_mandatory_name *m = &fs_mandatory_names[i];
        char path[PATH_MAX];

        if (r->pol->allow_git_config && strcmp(m->name, ".git/config") == 0)
            continue;

        const char *slash = strchr(m->name, '/');

        if (slash) {
            /* .claude/commands: only under a directory (a link to one is
             * followed; the scan protects the link itself). */
            size_t len = (size_t)(slash - m->name);
            bool seen = parent && parent_len == len && strncmp(parent, m->name, len) == 0;

            if (!seen) {
                snprintf(path, sizeof(path), "%s%s%.*s", root, strcmp(root, "/") ? "/" : "",
                         (int)len, m->name);
                parent = m->name;
                parent_len = len;
                state = parent_state(path);
            }
            if (state == PARENT_NONDIR) {
                /* Nothing can be made below it as it is; a command that
                 * could replace it with a directory could. Held as it is
                 * (a gitfile is the scan's already), once for its names. */
                if (!seen && add_mandatory_path(r, root, path, FS_PH_FILE, false, err) < 0)
                    goto out;
                continue;
            }
            if (state == PARENT_OTHER || (state != PARENT_DIR && strncmp(m->name, ".git/", 5) == 0))
                continue;
            if (state == PARENT_ABSENT && !root_left_behind) {
                /* Missing right under the root, which is resolved already:
                 * the placeholder directory goes here, once for all the
                 * names below it. */
                if (!seen && rules_add_missing(r, path, FS_PH_DIR, "mandatory", err) < 0)
                    goto out;
                continue;
            }
        }
        if (snprintf(path, sizeof(path), "%s%s%s", root, strcmp(root, "/") ? "/" : "", m->name) >=
            (int)sizeof(path))
            continue;
        /* Not left to the scan: the name may have appeared since its
         * readdir (another run's placeholder), and must be held either way. */
        if (lstat(path, &st) == 0) {
            if (S_ISLNK(st.st_mode)) {
                if (add_mandatory_link(r, root, path, false, err) < 0)
                    goto out;
                continue;
            }
        } else if (errno == ENOENT && !slash && !root_left_behind) {
            /* Missing right under the root, which is resolved already:
             * nothing to walk, the placeholder goes here. */
            if (rules_add_missing(r, path, FS_PH_FILE, "mandatory", err) < 0)
                goto out;
            continue;
        }
        if (add_mandatory_path(r, root, path, FS_PH_FILE, false, err) < 0)
            goto out;
    }
    /* A repository planted at the top, with core.fsmonitor or a hook, would
     * run on the user's next git command there: `.git` is not creatable
     * unless allowed. The placeholder is a directory: an empty one is no
     * repository to git, which looks further up as if it were absent. */
    if (snprintf(git, sizeof(git), "%s%s.git", root, strcmp(root, "/") ? "/" : "") <
            (int)sizeof(git) &&
        !r->pol->allow_git_init) {
        int held = hold_absent_or_ours(r, git, FS_PH_DIR, err);

        if (held < 0)
            goto out;
        /* Nor can the top become a bare repository, which git's discovery
         * takes when .git is no repository to it: absent, an empty
         * directory, anything but a gitfile (which git obeys or dies on),
         * and a repository whose .git/HEAD the command overwrote. An empty
         * HEAD is no valid one. */
        if (!held && (stat(git, &st) < 0 || !S_ISREG(st.st_mode)))
            held = 1;
        snprintf(git, sizeof(git), "%s%sHEAD", root, strcmp(root, "/") ? "/" : "");
        if (held) {
            int head = hold_absent_or_ours(r, git, FS_PH_FILE, err);

            if (head < 0 || (head == 0 && hold_bare_layout(r, root, err) < 0))
                goto out;
        }
    }
    rc = 0;
out:
    fs_found_free(&found);
    return rc;
}

/* A protected file with more than one name: a write through another name
 * changes it too. The other names the scan can reach are protected; what
 * it cannot account for is said. */
static int add_hard_links(struct rules *r, const struct policy *pol, struct nf_err *err)
{
    struct fs_inode *inodes = NULL;
    nlink_t *nlinks = NULL;
    char **names = NULL;
    size_t n = 0;
    int rc = -1;

    for (size_t i = 0; i < r->n; i++) {
        struct stat st;
        void *p;

        if (r->v[i].kind != R_DENY || r->v[i].ph != FS_PH_NONE)
            continue;
        if (!in_write_root(r, r->v[i].path) || lstat(r->v[i].path, &st) < 0 ||
            !S_ISREG(st.st_mode) || st.st_nlink < 2)
            continue;
        if (!(p = realloc(inodes, (n + 1) * sizeof(*inodes))))
            goto oom;
        inodes = p;
        if (!(p = realloc(nlinks, (n + 1) * sizeof(*nlinks))))
            goto oom;
        nlinks = p;
        if (!(p = realloc(names, (n + 1) * sizeof(*names))))
            goto oom;
        names = p;
        inodes[n] = (struct fs_inode){ .dev = st.st_dev, .ino = st.st_ino };
        nlinks[n] = st.st_nlink;
        names[n] = r->v[i].path;
        n++;
    }
    if (n == 0) {
        rc = 0;
        goto out;
    }
    {
        struct fs_found_list found = { 0 };

        for (size_t i = 0; i < r->n; i++) {
            struct stat st;

            if (r->v[i].kind != R_WRITE || stat(r->v[i].path, &st) < 0 || !S_ISDIR(st.st_mode))
                continue;
            if (fs_scan_inodes(r->v[i].path, pol->mandatory_deny_depth, inodes, n, &found, err) <
                0) {
                fs_found_free(&found);
                goto out;
            }
        }
        for (size_t k = 0; k < n; k++) {
            nlink_t seen = 0;

            for (size_t i = 0; i < found.n; i++) {
                struct stat st;

                if (lstat(found.v[i].path, &st) < 0 || st.st_ino != inodes[k].ino ||
                    st.st_dev != inodes[k].dev)
                    continue;
                seen++;
                if (rules_add_opt(r, found.v[i].path, R_DENY, FS_PH_NONE, true, "hard link", err) <
                    0) {
                    fs_found_free(&found);
                    goto out;
                }
            }
            if (seen < nlinks[k])
                log_warn("%s has %lu names and only %lu are within the write roots' scanned "
                         "depth: a write through another name can change it",
                         names[k], (unsigned long)nlinks[k], (unsigned long)seen);
        }
        fs_found_free(&found);
    }
    rc = 0;
    goto out;
oom:
    nf_err_sys(err, "out of memory");
out:
    free(inodes);
    free(nlinks);
    free(names);
    return rc;
}

/* `deny_read = /`: every top-level entry but the pseudo file systems, as srt
 * does, so that carve-outs still have the host tree beneath them. */
static int add_read_deny_root(struct rules *r, struct nf_err *err)
{
    _cleanup_(closedirp) DIR *d = opendir("/");
    struct dirent *e;

    if (!d)
        return nf_err_sys(err, "deny_read /");
    while ((e = readdir(d))) {
        char path[NAME_MAX + 2];
        char real[PATH_MAX];
        enum fs_res res;
        struct stat st;

        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (!strcmp(e->d_name, "proc") || !strcmp(e->d_name, "dev") || !strcmp(e->d_name, "sys"))
            continue;
        snprintf(path, sizeof(path), "/%s", e->d_name);
        if (fs_resolve(path, real, sizeof(real), &res, NULL, err) < 0)
            return nf_err_prefix(err, "deny_read /");
        if (res != FS_RES_EXISTS || stat(real, &st) < 0)
            continue;
        if (rules_add(r, real, S_ISDIR(st.st_mode) ? R_MASK_DIR : R_MASK_FILE, FS_PH_NONE,
                      "deny_read", err) < 0)
            return -1;
    }
    return 0;
}

/* The repositories a write root lies in (a package of a monorepo): git run
 * in the write root reads the config of the first it takes, which may name
 * paths inside. Every .git above is listed, not only the nearest: git
 * passes over one it does not take as a repository (an empty directory, a
 * dangling link, another run's placeholder), and a command could make the
 * nearest such a one. */
static int add_enclosing_repo(const char *root, struct pol_strv *repos, struct nf_err *err)
{
    /* One buffer, "DIR/.git" written over the root's tail at each step up:
     * the plan's frames stay shallow (each stack page is a fault). */
    char dotgit[PATH_MAX + 8];
    size_t len = strlen(root);

    if (len >= PATH_MAX)
        return 0;
    memcpy(dotgit, root, len + 1);
    while (len > 1) {
        struct stat st;

        while (len > 0 && dotgit[len - 1] != '/')
            len--;
        if (len == 0)
            return 0;
        /* dotgit[0, len) is the parent, with its '/' (just "/" at the top). */
        memcpy(dotgit + len, ".git", 5);
        if (lstat(dotgit, &st) == 0 && !pol_strv_contains(repos, dotgit) &&
            pol_strv_add(repos, dotgit, err) < 0)
            return -1;
        if (len > 1)
            len--; /* the '/' */
    }
    return 0;
}

/* A config we cannot read whole is reported, not fatal: one that git
 * refuses too (a syntax error, includes too deep) runs nothing; a planted
 * one must not stop every later run in its directory. */
static int config_trouble(struct nf_err *err)
{
    if (err->code == ENOMEM)
        return -1;
    log_warn("%s; the paths it names are not protected", err->msg);
    err->msg[0] = '\0';
    err->code = 0;
    return 0;
}

/* One repository of add_git_code_paths: its git directories held, and what
 * its configs name appended to paths. Out of line: its three PATH_MAX
 * paths would otherwise sit in every run's stack below the caller, and the
 * global config's parse with them. */
static __attribute__((noinline)) int add_repo_code_paths(struct rules *r, const char *p,
                                                         const struct fs_gitcfg_list *host,
                                                         const struct fs_gitcfg_env *env,
                                                         struct fs_gitcfg_paths *paths,
                                                         struct nf_err *err)
{
    struct fs_gitrepo repo;
    char dotgit[PATH_MAX + 8];
    size_t len = strlen(p);

    /* A bare layout the scan found is its own git directory. */
    if (len < 5 || strcmp(p + len - 5, "/.git") != 0)
        snprintf(dotgit, sizeof(dotgit), "%s/.", p);
    else
        snprintf(dotgit, sizeof(dotgit), "%s", p);
    if (fs_gitrepo_locate(dotgit, &repo, err) != 0)
        return 0;
    if (strcmp(repo.commondir, repo.gitdir) != 0 && add_gitdir_at(r, repo.commondir, err) < 0)
        return -1;
    if (!in_write_root(r, repo.worktree) && add_gitdir_at(r, repo.gitdir, err) < 0)
        return -1;
    if (fs_gitrepo_code_paths(&repo, host, env, paths, err) < 0 && config_trouble(err) < 0)
        return -1;
    return 0;
}

/* What the configs the user's git reads name as something to run, or to
 * read as config or hooks (core.hooksPath, includes, core.fsmonitor,
 * drivers, helpers, ...), for every repository in the write roots and the
 * ones they lie in, and the global and system configs themselves:
 * protected where they fall in a write root, held by placeholders where
 * absent (a command could create them). */
static int add_git_code_paths(struct rules *r, const struct policy *pol, struct nf_err *err)
{
    struct fs_gitcfg_env env = { .home = pol->home, .prefix = "/usr" };
    struct fs_gitcfg_list host = { 0 };
    struct fs_gitcfg_paths paths = { 0 };
    struct pol_strv repos = { 0 };
    int rc = -1;

    for (size_t i = 0; i < pol->git_config_files.n; i++)
        if (fs_gitcfg_load(pol->git_config_files.v[i], &env, &host, err) < 0 &&
            config_trouble(err) < 0)
            goto out;
    for (size_t i = 0; i < host.n_src; i++) {
        const struct fs_gitcfg_src *s = &host.src[i];

        if (s->state != FS_GITCFG_UNRESOLVED && in_write_root(r, s->path) &&
            add_deny_opt(r, s->path, s->dir ? FS_PH_DIR : FS_PH_FILE, false, "git config", err) < 0)
            goto out;
    }
    /* The host's configs name paths for any repository: each write root
     * stands in for a worktree (what they name absolutely is the same). */
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].kind == R_WRITE &&
            (fs_gitcfg_code_paths(&host, r->v[i].path, pol->home, &paths, err) < 0 ||
             add_enclosing_repo(r->v[i].path, &repos, err) < 0))
            goto out;
    for (size_t i = 0; r->plan && i < r->plan->n_git_seen; i++)
        if (!pol_strv_contains(&repos, r->plan->git_seen[i]) &&
            pol_strv_add(&repos, r->plan->git_seen[i], err) < 0)
            goto out;
    for (size_t i = 0; i < repos.n; i++)
        if (add_repo_code_paths(r, repos.v[i], &host, &env, &paths, err) < 0)
            goto out;
    for (size_t i = 0; i < paths.n; i++) {
        struct fs_found_list links = { 0 };
        int lrc;

        if (!in_write_root(r, paths.v[i].path))
            continue;
        for (size_t k = 0; k < r->n; k++)
            if (r->v[k].kind == R_WRITE && pol_path_within(r->v[k].path, paths.v[i].path))
                log_warn("git config names %s as code to run, which holds the write root %s: "
                         "it is read-only for this run",
                         paths.v[i].path, r->v[k].path);
        if (add_deny_opt(r, paths.v[i].path, paths.v[i].dir ? FS_PH_DIR : FS_PH_FILE, false,
                         "git config", err) < 0)
            goto out;
        /* A hook in a hooks directory that is a link runs what it leads to. */
        if (!paths.v[i].dir)
            continue;
        lrc = fs_scan_links(paths.v[i].path, &links, err);
        if (lrc == 0)
            lrc = add_found(r, root_of(r, paths.v[i].path), &links, err);
        fs_found_free(&links);
        if (lrc < 0)
            goto out;
    }
    for (size_t i = 0; i < paths.unresolved.n; i++)
        log_v("git config names %s, which cannot be resolved here: not protected",
              paths.unresolved.v[i]);
    rc = 0;
out:
    if (rc < 0)
        nf_err_prefix(err, "git config");
    fs_gitcfg_list_free(&host);
    fs_gitcfg_paths_free(&paths);
    pol_strv_free(&repos);
    return rc;
}

/* A glob in deny_read or allow_read, expanded now, as srt does: what it
 * matches on disk at start (files made later are not covered). A deny walk
 * that reaches its bound, or meets a directory it cannot list, denies that
 * directory whole; an allow walk re-opens only what it saw. */
static int add_read_glob(struct rules *r, const char *pattern, bool deny, struct nf_err *err)
{
    struct fs_glob_opts opts = { .follow_links = deny };
    struct fs_glob_hits hits = { 0 };
    const char *why = deny ? "deny_read" : "allow_read";
    size_t prefix = fs_glob_prefix_len(pattern);
    int rc = 0;

    if (fs_glob_expand(pattern, &opts, &hits, err) < 0)
        return nf_err_prefix(err, "%s %s", why, pattern);
    for (size_t i = 0; rc == 0 && i < hits.n; i++) {
        const struct fs_glob_hit *h = &hits.v[i];
        enum rule_kind kind = R_MASK_DIR;

        switch (h->kind) {
        case FS_GLOB_FILE:
            kind = deny ? R_MASK_FILE : R_ALLOW;
            break;
        case FS_GLOB_DIR:
            kind = deny ? R_MASK_DIR : R_ALLOW;
            break;
        case FS_GLOB_UNWALKED:
        case FS_GLOB_UNLISTABLE:
            if (!deny) {
                log_v("allow_read %s: %s not walked; nothing beneath it re-opened", pattern,
                      h->path);
                continue;
            }
            log_warn("deny_read %s: %s %s; denied whole", pattern, h->path,
                     h->kind == FS_GLOB_UNWALKED ? "is past the walk's bound" : "cannot be listed");
            kind = R_MASK_DIR;
            break;
        }
        /* A matched symlink leads where it leads: say so when that is not
         * below the pattern's own directory. */
        if (deny && (strncmp(h->path, pattern, prefix) != 0 ||
                     (h->path[prefix] != '/' && h->path[prefix] != '\0')))
            log_warn("deny_read %s: a symlink leads to %s, which is denied", pattern, h->path);
        rc = rules_add(r, h->path, kind, FS_PH_NONE, why, err);
    }
    fs_glob_hits_free(&hits);
    return rc;
}

/* A procfs mounted elsewhere in the host tree (a container's or a chroot's
 * /proc) would show every host process and its command line inside: each
 * is masked by an empty directory, as a denied read is. */
static int add_foreign_procfs(struct rules *r, struct nf_err *err)
{
    struct pol_strv procs = { 0 };
    int rc = fs_foreign_procfs(&procs, err);

    for (size_t i = 0; rc == 0 && i < procs.n; i++) {
        struct stat st;

        /* One bound on a file (/proc/1/environ onto F) is masked as a file;
         * one whose mount point is gone is reachable by no path. */
        if (stat(procs.v[i], &st) < 0) {
            log_v("another procfs at %s: %m; not reachable, nothing to mask", procs.v[i]);
            continue;
        }
        rc = rules_add(r, procs.v[i], S_ISDIR(st.st_mode) ? R_MASK_DIR : R_MASK_FILE, FS_PH_NONE,
                       "another procfs", err);
    }
    pol_strv_free(&procs);
    return rc;
}

/* An allow_write path that resolves through a symlink to somewhere not at
 * or under the path as written is skipped: a command can plant `out ->
 * ~/.ssh` in one run, where `out` did not exist, for the next run that
 * names `out` to follow. Said every time, not only under -v. */
static int add_write_root(struct rules *r, const char *p, struct nf_err *err)
{
    char real[PATH_MAX];
    enum fs_res res;
    struct nf_err e = { 0 };

    if (fs_resolve(p, real, sizeof(real), &res, NULL, &e) < 0) {
        log_warn("allow_write %s skipped: %s", p, e.msg);
        return 0;
    }
    if (res != FS_RES_EXISTS) {
        log_v("allow_write %s skipped: it does not exist", p);
        return 0;
    }
    if (strcmp(real, p) != 0 && !pol_path_within(real, p)) {
        log_warn("allow_write %s skipped: it resolves through a symlink to %s; name that path "
                 "itself if it is meant to be writable",
                 p, real);
        return 0;
    }
    return rules_add(r, real, R_WRITE, FS_PH_NONE, "allow_write", err);
}

static int collect(const struct policy *pol, struct rules *r, struct nf_err *err)
{
    char real[PATH_MAX];
    enum fs_res res;
    struct stat st;

    if (fs_resolve("/tmp", real, sizeof(real), &res, NULL, err) == 0 && res == FS_RES_EXISTS)
        if (rules_add(r, real, R_TMP, FS_PH_NONE, "private /tmp", err) < 0)
            return -1;

    for (size_t i = 0; i < pol->allow_write.n; i++)
        if (add_write_root(r, pol->allow_write.v[i], err) < 0)
            return -1;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].kind == R_WRITE && stat(r->v[i].path, &st) == 0 && S_ISDIR(st.st_mode))
            if (add_mandatory(r, r->v[i].path, pol->mandatory_deny_depth, err) < 0)
                return -1;

    if (add_git_code_paths(r, pol, err) < 0)
        return -1;
    for (size_t i = 0; i < pol->deny_write.n; i++)
        if (add_deny(r, pol->deny_write.v[i], false, "deny_write", err) < 0)
            return -1;
    for (size_t i = 0; i < pol->config_files.n; i++) {
        struct nf_err e = { 0 };

        /* A config path this user cannot even resolve (EACCES on a parent)
         * cannot be written by the command either. */
        if (add_deny(r, pol->config_files.v[i], false, "nsfence config", &e) < 0) {
            if (e.code != EACCES) {
                *err = e;
                return -1;
            }
            log_v("%s", e.msg);
        }
    }
    if (add_hard_links(r, pol, err) < 0)
        return -1;
    if (add_foreign_procfs(r, err) < 0)
        return -1;

    for (size_t i = 0; i < pol->deny_read.n; i++) {
        const char *p = pol->deny_read.v[i];

        if (fs_glob_is_pattern(p) && !pol_strv_contains(&pol->literal_paths, p)) {
            if (add_read_glob(r, p, true, err) < 0)
                return -1;
            continue;
        }
        if (strcmp(p, "/") == 0) {
            if (add_read_deny_root(r, err) < 0)
                return -1;
            continue;
        }
        if (fs_resolve(p, real, sizeof(real), &res, NULL, err) < 0)
            return nf_err_prefix(err, "deny_read %s", p);
        if (res != FS_RES_EXISTS)
            continue; /* nothing to hide */
        if (stat(real, &st) < 0)
            return nf_err_sys(err, "deny_read %s", real);
        if (strcmp(real, "/") == 0) {
            if (add_read_deny_root(r, err) < 0)
                return -1;
            continue;
        }
        if (rules_add(r, real, S_ISDIR(st.st_mode) ? R_MASK_DIR : R_MASK_FILE, FS_PH_NONE,
                      "deny_read", err) < 0)
            return -1;
    }
    for (size_t i = 0; i < pol->allow_read.n; i++) {
        const char *p = pol->allow_read.v[i];
        struct nf_err e = { 0 };

        if (fs_glob_is_pattern(p) && !pol_strv_contains(&pol->literal_paths, p)) {
            if (add_read_glob(r, p, false, err) < 0)
                return -1;
            continue;
        }

        if (fs_resolve(p, real, sizeof(real), &res, NULL, &e) < 0 || res != FS_RES_EXISTS) {
            log_v("allow_read %s skipped: %s", p, e.msg[0] ? e.msg : "it does not exist");
            continue;
        }
        if (rules_add(r, real, R_ALLOW, FS_PH_NONE, "allow_read", err) < 0)
            return -1;
    }
    return 0;
}

/* The state at path: that of the deepest rule already placed at or above it. */
static const struct done *state_at(const struct done *done, size_t n, const char *path)
{
    const struct done *best = NULL;

    for (size_t i = 0; i < n; i++)
        /* >=: of two rules at one path, the one placed later is on top. */
        if (pol_path_within(path, done[i].path) &&
            (!best || strlen(done[i].path) >= strlen(best->path)))
            best = &done[i];
    return best;
}

static bool under_pseudo(const char *path)
{
    return pol_path_within(path, "/proc") || pol_path_within(path, "/dev");
}

/* Ancestors strictly between anchor and path, so `mv .git x` fails. */
static int add_pins(struct fs_plan *pins, const char *path, const char *anchor, bool optional,
                    struct nf_err *err)
{
    char dir[PATH_MAX];

    snprintf(dir, sizeof(dir), "%s", path);
    for (;;) {
        char *slash = strrchr(dir, '/');

        if (!slash || slash == dir)
            return 0;
        *slash = '\0';
        if (!pol_path_within(dir, anchor) || strcmp(dir, anchor) == 0)
            return 0;
        for (size_t i = 0; i < pins->n; i++)
            if (strcmp(pins->ops[i].dst, dir) == 0) {
                /* Needed by a required protection: required itself. */
                pins->ops[i].optional = pins->ops[i].optional && optional;
                goto next;
            }
        if (plan_add(pins, FS_OP_PIN, dir, dir, FS_PH_NONE, false, "pin", err) < 0)
            return -1;
        pins->ops[pins->n - 1].optional = optional;
    next:;
    }
}

static int pin_cmp(const void *a, const void *b)
{
    const struct fs_op *x = a, *y = b;
    unsigned dx = pol_path_depth(x->dst), dy = pol_path_depth(y->dst);

    if (dx != dy)
        return dx < dy ? -1 : 1;
    return strcmp(x->dst, y->dst);
}

static int place(struct fs_plan *plan, struct fs_plan *pins, struct rules *r, struct nf_err *err)
{
    _cleanup_free_ struct done *done = calloc(r->n + 1, sizeof(*done));
    size_t nd = 0;

    if (!done)
        return nf_err_sys(err, "out of memory");
    done[nd++] = (struct done){ .path = "/", .state = S_RO };
    for (size_t i = 0; i < r->n; i++) {
        const struct rule *ru = &r->v[i];
        const struct done *at = state_at(done, nd, ru->path);
        enum state prev = at->state, next = prev;
        const char *anchor = at->anchor;
        bool create = prev == S_MASK || prev == S_TMP;
        struct fs_op *op;
        int rc = 0;

        if (under_pseudo(ru->path)) {
            log_v("%s %s skipped: /dev and /proc are the sandbox's own", ru->why, ru->path);
            continue;
        }
        switch (ru->kind) {
        case R_TMP:
            next = S_TMP;
            rc = plan_add(plan, FS_OP_TMPFS, NULL, ru->path, FS_PH_NONE, false, ru->why, err);
            break;
        case R_WRITE:
            if (prev == S_RO_DENY) {
                log_v("allow_write %s skipped: a deny above it wins", ru->path);
                break;
            }
            next = S_RW;
            anchor = ru->path;
            if (prev != S_RW)
                rc = plan_add(plan, FS_OP_BIND_RW, ru->path, ru->path, FS_PH_NONE, create, ru->why,
                              err);
            if (rc == 0)
                rc = strs_add(&plan->write_roots, &plan->n_write_roots, ru->path, err);
            break;
        case R_DENY:
        case R_LINK:
        case R_MASK_LINK:
            if (prev == S_MASK || prev == S_TMP)
                break; /* not the host's, or not visible */
            next = ru->kind == R_MASK_LINK ? S_MASK : S_RO_DENY;
            if (ru->kind != R_LINK)
                rc = strs_add(&plan->protected_paths, &plan->n_protected, ru->path, err);
            if (prev != S_RW || rc < 0)
                break; /* already read-only */
            rc = plan_add(plan,
                          ru->kind == R_DENY   ? FS_OP_BIND_RO
                          : ru->kind == R_LINK ? FS_OP_BIND_LINK
                                               : FS_OP_MASK_LINK,
                          ru->kind == R_MASK_LINK ? NULL : ru->path, ru->path, FS_PH_NONE, false,
                          ru->why, err);
            if (rc < 0)
                break;
            op = &plan->ops[plan->n - 1];
            op->optional = ru->optional;
            if (ru->kind == R_DENY)
                placeholder_role(op, ru->ph, ru->missing);
            if (op->ph != FS_PH_NONE && !(op->anchor = strdup(anchor)))
                rc = nf_err_sys(err, "out of memory");
            if (rc == 0)
                rc = add_pins(pins, ru->path, anchor, ru->optional, err);
            break;
        case R_MASK_DIR:
        case R_MASK_FILE:
            if (prev == S_MASK || prev == S_TMP)
                break;
            next = S_MASK;
            rc = plan_add(plan, ru->kind == R_MASK_DIR ? FS_OP_MASK_DIR : FS_OP_MASK_FILE, NULL,
                          ru->path, FS_PH_NONE, false, ru->why, err);
            /* A masked directory takes writes (nothing reaches the host); a
             * masked file stays read-only. The observer is told which. */
            if (rc == 0)
                rc = ru->kind == R_MASK_DIR
                         ? strs_add(&plan->scratch, &plan->n_scratch, ru->path, err)
                         : strs_add(&plan->read_only, &plan->n_read_only, ru->path, err);
            /* In a write root, `mv config x` would carry a masked
             * config/credentials away from its name, readable in the next
             * run that masks that name: its directories are pinned too. */
            if (rc == 0 && prev == S_RW)
                rc = add_pins(pins, ru->path, anchor, false, err);
            break;
        case R_ALLOW:
            if (prev != S_MASK)
                break; /* readable already */
            next = S_RO;
            rc = plan_add(plan, FS_OP_BIND_RO, ru->path, ru->path, FS_PH_NONE, true, ru->why, err);
            if (rc == 0)
                rc = strs_add(&plan->read_only, &plan->n_read_only, ru->path, err);
            break;
        }
        if (rc < 0)
            return -1;
        done[nd++] = (struct done){ .path = ru->path, .state = next, .anchor = anchor };
    }
    return 0;
}

static int add_pseudo(struct fs_plan *plan, const struct policy *pol, struct nf_err *err)
{
    struct fs_op *dev = fs_plan_push(plan, FS_OP_DEV, NULL, "/dev", "minimal /dev", err);
    struct fs_op *proc;

    if (!dev)
        return -1;
    dev->flags = FS_F_RO;
    proc = fs_plan_push(plan, FS_OP_PROC, NULL, "/proc", "sandbox /proc", err);
    if (!proc)
        return -1;
    proc->flags = FS_F_HIDE_KEYS;
    if (pol->proc_host) {
        /* The host's /proc, where a fresh one cannot be mounted (nested in a
         * container whose /proc is masked): every host process shows. */
        proc->flags |= FS_F_HOST;
        proc->why = "host /proc (enableWeakerNestedSandbox)";
        log_v("enableWeakerNestedSandbox: the host's /proc is bound in place of a fresh one; "
              "the command sees every host process");
    }
    return 0;
}

/* srt's filesystem.disabled: the host tree writable as it is (bwrap's
 * `--bind / /`), with no write roots, protections, masks, private /tmp or
 * placeholders; only /dev and /proc are the sandbox's own. */
static int build_disabled(const struct policy *pol, struct fs_plan *plan, struct nf_err *err)
{
    struct fs_op *root;

    /* srt drops its lists when disabled; a deny asked for and then not
     * applied would run the command less sandboxed than asked: refused. */
    if (pol->deny_read.n || pol->deny_write.n)
        return nf_err_set(err, EINVAL,
                          "filesystem.disabled turns every filesystem rule off, but %s %s was "
                          "asked for too; remove one or the other",
                          pol->deny_read.n ? "deny_read" : "deny_write",
                          pol->deny_read.n ? pol->deny_read.v[0] : pol->deny_write.v[0]);
    root =
        fs_plan_push(plan, FS_OP_ROOT, "/", "/", "host root, writable (filesystem.disabled)", err);
    if (!root)
        return -1;
    root->flags = FS_F_RW;
    /* No write roots: nothing to scan for repositories made during the run
     * (the whole host would be one); the run turns the observer off. */
    plan->unrestricted = true;
    log_v("filesystem.disabled: no filesystem rules; the host tree is writable, no path is "
          "protected or hidden, and no write is reported");
    /* What only opens more has nothing left to open. */
    if (pol->allow_read.n || pol->allow_write.n > 1)
        log_v("filesystem.disabled: %zu allow_read and %zu allow_write entries have nothing to "
              "open",
              pol->allow_read.n, pol->allow_write.n);
    return add_pseudo(plan, pol, err);
}

int fs_plan_build(const struct policy *pol, struct fs_plan *plan, struct nf_err *err)
{
    struct rules r = { 0 };
    struct fs_plan body = { 0 };
    struct fs_plan pins = { 0 };
    bool pseudo_last = false;
    int rc = -1;

    memset(plan, 0, sizeof(*plan));
    plan->cwd = strdup(pol->cwd);
    if (!plan->cwd) {
        nf_err_sys(err, "out of memory");
        goto out;
    }
    if (pol->fs_disabled) {
        rc = build_disabled(pol, plan, err);
        goto out;
    }
    r.plan = plan;
    r.pol = pol;
    if (collect(pol, &r, err) < 0)
        goto out;
    if (r.n)
        qsort(r.v, r.n, sizeof(*r.v), rule_cmp);
    if (place(&body, &pins, &r, err) < 0)
        goto out;
    if (pins.n)
        qsort(pins.ops, pins.n, sizeof(*pins.ops), pin_cmp);

    if (plan_add(plan, FS_OP_ROOT, "/", "/", FS_PH_NONE, false, "host root", err) < 0)
        goto out;
    for (size_t i = 0; i < pins.n; i++) {
        if (plan_add(plan, FS_OP_PIN, pins.ops[i].src, pins.ops[i].dst, FS_PH_NONE, false,
                     pins.ops[i].why, err) < 0)
            goto out;
        plan->ops[plan->n - 1].optional = pins.ops[i].optional;
    }
    /* /dev and /proc early, unless a write root is / itself (its bind would
     * cover them): everything up to the first placeholder can be built
     * while the host side is still making the placeholders. */
    for (size_t i = 0; i < body.n; i++)
        if (strcmp(body.ops[i].dst, "/") == 0)
            pseudo_last = true;
    if (!pseudo_last && add_pseudo(plan, pol, err) < 0)
        goto out;
    for (size_t i = 0; i < body.n; i++) {
        const struct fs_op *o = &body.ops[i];

        struct fs_op *c;

        if (plan_add(plan, o->kind, o->src, o->dst, o->ph, o->create, o->why, err) < 0)
            goto out;
        c = &plan->ops[plan->n - 1];
        c->ph_shown = o->ph_shown;
        c->ph_missing = o->ph_missing;
        c->optional = o->optional;
        if (o->anchor && !(c->anchor = strdup(o->anchor))) {
            nf_err_sys(err, "out of memory");
            goto out;
        }
    }
    /* A masked directory stays writable, as srt's tmpfs is: tools that
     * cache into a denied directory keep working, and what they write dies
     * with the sandbox. Its carve-outs are read-only binds of their own, on
     * mount points made in the tmpfs; moving those around inside it shows
     * nothing new. */
    plan->write_roots = steal_pointer(&body.write_roots);
    plan->n_write_roots = body.n_write_roots;
    body.n_write_roots = 0;
    plan->protected_paths = steal_pointer(&body.protected_paths);
    plan->n_protected = body.n_protected;
    body.n_protected = 0;
    plan->scratch = steal_pointer(&body.scratch);
    plan->n_scratch = body.n_scratch;
    body.n_scratch = 0;
    plan->read_only = steal_pointer(&body.read_only);
    plan->n_read_only = body.n_read_only;
    body.n_read_only = 0;
    if (pseudo_last && add_pseudo(plan, pol, err) < 0)
        goto out;
    rc = 0;
out:
    rules_free(&r);
    fs_plan_free(&body);
    fs_plan_free(&pins);
    if (rc < 0)
        fs_plan_free(plan);
    return rc;
}

bool fs_plan_writable(const struct fs_plan *plan, const char *abs)
{
    ssize_t rw, ro;

    if (plan->unrestricted)
        return true;
    if (pol_path_deepest(plan->protected_paths, plan->n_protected, abs) >= 0)
        return false;
    rw = pol_path_deepest(plan->write_roots, plan->n_write_roots, abs);
    ro = pol_path_deepest(plan->scratch, plan->n_scratch, abs);
    if (ro > rw)
        rw = ro;
    ro = pol_path_deepest(plan->read_only, plan->n_read_only, abs);
    if (rw >= 0 || ro >= 0)
        return rw > ro; /* same path: the read-only op came after */
    return pol_path_within(abs, "/tmp");
}

void fs_plan_free(struct fs_plan *plan)
{
    for (size_t i = 0; i < plan->n; i++) {
        struct fs_op *op = &plan->ops[i];

        free(op->src);
        free(op->dst);
        free(op->anchor);
        free(op->data);
        for (size_t k = 0; k < op->n_lower; k++)
            free(op->lower[k]);
        free(op->lower);
        free(op->upper);
        free(op->work);
    }
    for (size_t i = 0; i < plan->n_stale; i++) {
        free(plan->stale[i].anchor);
        free(plan->stale[i].name);
    }
    free(plan->stale);
    for (size_t i = 0; i < plan->n_git_seen; i++)
        free(plan->git_seen[i]);
    free(plan->git_seen);
    fs_dirsnap_free(&plan->dirsnap);
    free(plan->ops);
    free(plan->cwd);
    for (size_t i = 0; i < plan->n_write_roots; i++)
        free(plan->write_roots[i]);
    free(plan->write_roots);
    for (size_t i = 0; i < plan->n_protected; i++)
        free(plan->protected_paths[i]);
    free(plan->protected_paths);
    for (size_t i = 0; i < plan->n_scratch; i++)
        free(plan->scratch[i]);
    free(plan->scratch);
    for (size_t i = 0; i < plan->n_read_only; i++)
        free(plan->read_only[i]);
    free(plan->read_only);
    memset(plan, 0, sizeof(*plan));
}

const char *fs_op_kind_name(enum fs_op_kind kind)
{
    switch (kind) {
    case FS_OP_ROOT:
        return "root-ro";
    case FS_OP_PIN:
        return "pin";
    case FS_OP_TMPFS:
        return "tmpfs";
    case FS_OP_BIND_RW:
        return "bind-rw";
    case FS_OP_BIND_RO:
        return "bind-ro";
    case FS_OP_BIND_LINK:
        return "bind-link";
    case FS_OP_MASK_DIR:
        return "mask-dir";
    case FS_OP_MASK_FILE:
        return "mask-file";
    case FS_OP_MASK_LINK:
        return "mask-link";
    case FS_OP_REMOUNT_RO:
        return "remount-ro";
    case FS_OP_DEV:
        return "dev";
    case FS_OP_PROC:
        return "proc";
    case FS_OP_NEWROOT:
        return "root-tmpfs";
    case FS_OP_BIND:
        return "bind";
    case FS_OP_BIND_FD:
        return "bind-fd";
    case FS_OP_MKTMPFS:
        return "tmpfs";
    case FS_OP_MQUEUE:
        return "mqueue";
    case FS_OP_MKDIR:
        return "dir";
    case FS_OP_MKFILE:
        return "file";
    case FS_OP_BIND_DATA:
        return "bind-data";
    case FS_OP_SYMLINK:
        return "symlink";
    case FS_OP_CHMOD:
        return "chmod";
    case FS_OP_OVERLAY:
        return "overlay";
    }
    return "?";
}

/* What a caller-described op carries beyond its paths: " [ro, try, 0700]". */
static void op_details(const struct fs_op *op, char *buf, size_t sz)
{
    static const struct {
        unsigned flag;
        const char *name;
    } flags[] = { { FS_F_RO, "ro" },     { FS_F_DEV, "dev" }, { FS_F_TRY, "try" },
                  { FS_F_HOST, "host" }, { FS_F_TMP, "tmp" }, { FS_F_HIDE_KEYS, "keys hidden" } };
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (op->flags & flags[i].flag)
            n += (size_t)snprintf(buf + n, sz - n, "%s%s", n ? ", " : " [", flags[i].name);
    if (op->has_perms && n < sz)
        n += (size_t)snprintf(buf + n, sz - n, "%s%04o", n ? ", " : " [", op->perms);
    if (op->size && n < sz)
        n += (size_t)snprintf(buf + n, sz - n, "%ssize %zu", n ? ", " : " [", op->size);
    if (op->kind == FS_OP_BIND_FD && n < sz)
        n += (size_t)snprintf(buf + n, sz - n, "%sfd %d", n ? ", " : " [", op->fd);
    if (op->data && n < sz)
        n += (size_t)snprintf(buf + n, sz - n, "%s%zu bytes", n ? ", " : " [", op->len);
    for (size_t i = 0; i < op->n_lower && n < sz; i++)
        n += (size_t)snprintf(buf + n, sz - n, "%slower %s", n ? ", " : " [", op->lower[i]);
    if (op->upper && n < sz)
        n += (size_t)snprintf(buf + n, sz - n, "%supper %s, work %s", n ? ", " : " [", op->upper,
                              op->work);
    if (n && n < sz)
        snprintf(buf + n, sz - n, "]");
}

void fs_op_format(const struct fs_op *op, char *buf, size_t sz)
{
    const char *ph = !op->ph_shown         ? ""
                     : op->ph == FS_PH_DIR ? " [placeholder dir]"
                                           : " [placeholder file]";
    char details[PATH_MAX];

    op_details(op, details, sizeof(details));
    if (op->kind == FS_OP_ROOT && (op->flags & FS_F_RW))
        snprintf(buf, sz, "%-10s %s  (%s)", "root-rw", op->dst, op->why);
    else if (op->src && strcmp(op->src, op->dst) != 0)
        snprintf(buf, sz, "%-10s %s -> %s%s%s  (%s)", fs_op_kind_name(op->kind), op->src, op->dst,
                 ph, details, op->why);
    else
        snprintf(buf, sz, "%-10s %s%s%s  (%s)", fs_op_kind_name(op->kind), op->dst, ph, details,
                 op->why);
}
