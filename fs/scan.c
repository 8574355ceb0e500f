#include "fs/scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util.h"

/* srt's DANGEROUS_FILES and dangerous directories, plus git's hooks and
 * config (which run code on the host's next git command). */
const struct fs_mandatory_name fs_mandatory_names[] = {
    { ".bashrc", false },       { ".bash_profile", false }, { ".zshrc", false },
    { ".zprofile", false },     { ".profile", false },      { ".gitconfig", false },
    { ".gitmodules", false },   { ".ripgreprc", false },    { ".mcp.json", false },
    { ".vscode", true },        { ".idea", true },          { ".claude/commands", true },
    { ".claude/agents", true }, { ".git/hooks", true },     { ".git/config", false },
};
const size_t fs_n_mandatory_names = NF_ARRAY_SIZE(fs_mandatory_names);

static bool is_protected_leaf(const char *name)
{
    for (size_t i = 0; i < fs_n_mandatory_names; i++)
        if (!strchr(fs_mandatory_names[i].name, '/') &&
            strcmp(fs_mandatory_names[i].name, name) == 0)
            return true;
    return false;
}

int fs_found_add(struct fs_found_list *l, const char *path, enum fs_found_kind kind,
                 struct nf_err *err)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].path, path) == 0)
            return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        struct fs_found *v = realloc(l->v, cap * sizeof(*v));

        if (!v)
            return nf_err_sys(err, "out of memory");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].path = strdup(path);
    if (!l->v[l->n].path)
        return nf_err_sys(err, "out of memory");
    l->v[l->n].kind = kind;
    l->n++;
    return 0;
}

void fs_found_free(struct fs_found_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].path);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static enum fs_found_kind kind_of(mode_t m)
{
    if (S_ISLNK(m))
        return FS_FOUND_SYMLINK;
    return S_ISDIR(m) ? FS_FOUND_DIR : FS_FOUND_FILE;
}

/* An entry that exists under dirfd: its kind, or -1 when absent. */
static int probe(int dirfd, const char *name, enum fs_found_kind *kind)
{
    struct stat st;

    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
    *kind = kind_of(st.st_mode);
    return 0;
}

static int add_child(struct fs_found_list *out, const char *dir, const char *name,
                     enum fs_found_kind kind, struct nf_err *err)
{
    char path[PATH_MAX];

    if (snprintf(path, sizeof(path), "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name) >=
        (int)sizeof(path))
        return 0; /* cannot be opened by anyone either */
    return fs_found_add(out, path, kind, err);
}

/* A git directory's hooks and config run code on the host's next git
 * command; so do a submodule's, kept under .git/modules/NAME (nested for
 * nested submodules). depth bounds the nesting. */
static int probe_gitdir(int fd, const char *dir, const char *rel, unsigned depth,
                        struct fs_found_list *out, struct nf_err *err)
{
    static const char *const subs[] = { "hooks", "config" };
    _cleanup_close_ int mods = -1;
    _cleanup_(closedirp) DIR *d = NULL;
    struct dirent *e;

    for (size_t i = 0; i < NF_ARRAY_SIZE(subs); i++) {
        enum fs_found_kind k;
        char sub[PATH_MAX];

        if (probe(fd, subs[i], &k) < 0)
            continue;
        snprintf(sub, sizeof(sub), "%s/%s", rel, subs[i]);
        if (add_child(out, dir, sub, k, err) < 0)
            return -1;
    }
    if (depth == 0)
        return 0;
    mods = openat(fd, "modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (mods < 0 || !(d = fdopendir(mods)))
        return 0;
    mods = -1; /* owned by d */
    while ((e = readdir(d))) {
        char sub[PATH_MAX];
        int m;

        if (e->d_name[0] == '.')
            continue;
        m = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (m < 0)
            continue;
        snprintf(sub, sizeof(sub), "%s/modules/%s", rel, e->d_name);
        if (probe_gitdir(m, dir, sub, depth - 1, out, err) < 0) {
            close(m);
            return -1;
        }
        close(m);
    }
    return 0;
}

/* `.git` and `.claude` hold protected names one level down. */
static int probe_compound(int dirfd, const char *dir, const char *name, enum fs_found_kind kind,
                          struct fs_found_list *out, struct nf_err *err)
{
    static const char *const claude[] = { "commands", "agents" };
    bool git = strcmp(name, ".git") == 0;
    _cleanup_close_ int fd = -1;

    if (kind == FS_FOUND_FILE) {
        /* A .git file (worktree, submodule) points git elsewhere: protect the
         * pointer itself. */
        return git ? add_child(out, dir, name, FS_FOUND_FILE, err) : 0;
    }
    if (kind == FS_FOUND_SYMLINK) {
        /* The link must not be repointed; what it leads to is protected as
         * its names, reported through the link (resolved by the plan). */
        if (add_child(out, dir, name, FS_FOUND_LINK, err) < 0)
            return -1;
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            /* A .git link to a gitfile: protect what it points to. A loop or
             * a dangling link holds nothing. */
            if (git && errno == ENOTDIR)
                return add_child(out, dir, name, FS_FOUND_FILE, err);
            return 0;
        }
    } else {
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return add_child(out, dir, name, FS_FOUND_DIR, err); /* unreadable: protect it whole */
    }
    if (git)
        return probe_gitdir(fd, dir, name, 3, out, err);
    for (size_t i = 0; i < NF_ARRAY_SIZE(claude); i++) {
        enum fs_found_kind k;
        char sub[NAME_MAX + 16];

        if (probe(fd, claude[i], &k) < 0)
            continue;
        snprintf(sub, sizeof(sub), "%s/%s", name, claude[i]);
        if (add_child(out, dir, sub, k, err) < 0)
            return -1;
    }
    return 0;
}

/* Pseudo file systems hold no project files and /proc is huge. */
static bool skip_dir(const char *path, const char *name)
{
    return strcmp(name, "node_modules") == 0 || strcmp(path, "/proc") == 0 ||
           strcmp(path, "/sys") == 0 || strcmp(path, "/dev") == 0;
}

static int scan_dir(int fd, const char *dir, unsigned level, unsigned depth,
                    struct fs_found_list *out, struct nf_err *err)
{
    _cleanup_(closedirp) DIR *d = NULL;
    struct dirent *e;

    d = fdopendir(fd);
    if (!d) {
        close(fd);
        return nf_err_sys(err, "scan %s", dir);
    }
    while ((errno = 0, e = readdir(d))) {
        enum fs_found_kind kind;
        char child[PATH_MAX];
        int cfd;

        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (e->d_type == DT_UNKNOWN) {
            if (probe(dirfd(d), e->d_name, &kind) < 0)
                continue;
        } else {
            kind = e->d_type == DT_DIR   ? FS_FOUND_DIR
                   : e->d_type == DT_LNK ? FS_FOUND_SYMLINK
                                         : FS_FOUND_FILE;
        }
        if (is_protected_leaf(e->d_name)) {
            if (add_child(out, dir, e->d_name, kind, err) < 0)
                return -1;
            continue; /* protected whole: nothing inside matters */
        }
        if (strcmp(e->d_name, ".git") == 0 || strcmp(e->d_name, ".claude") == 0) {
            if (probe_compound(dirfd(d), dir, e->d_name, kind, out, err) < 0)
                return -1;
            if (strcmp(e->d_name, ".git") == 0)
                continue; /* objects and refs hold no protected names */
        }
        if (kind != FS_FOUND_DIR || level + 1 >= depth)
            continue;
        if (snprintf(child, sizeof(child), "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", e->d_name) >=
            (int)sizeof(child))
            continue;
        if (skip_dir(child, e->d_name))
            continue;
        cfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd < 0) {
            if (errno == ELOOP || errno == ENOTDIR || errno == ENOENT)
                continue; /* replaced meanwhile */
            /* Writable but unlistable: protect it whole. */
            if (add_child(out, dir, e->d_name, FS_FOUND_DIR, err) < 0)
                return -1;
            continue;
        }
        if (scan_dir(cfd, child, level + 1, depth, out, err) < 0)
            return -1;
    }
    if (errno)
        return nf_err_sys(err, "scan %s", dir);
    return 0;
}

int fs_scan_mandatory(const char *root, unsigned depth, struct fs_found_list *out,
                      struct nf_err *err)
{
    int fd;

    if (depth == 0)
        return 0;
    fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == EACCES)
            return fs_found_add(out, root, FS_FOUND_DIR, err);
        return nf_err_sys(err, "scan %s", root);
    }
    return scan_dir(fd, root, 0, depth, out, err);
}
