#include "fs/scan.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/placeholder.h"
#include "src/syscalls.h"
#include "src/util.h"

/* srt's DANGEROUS_FILES and dangerous directories, plus git's hooks and
 * config (which run code on the host's next git command). */
const struct fs_mandatory_name fs_mandatory_names[] = {
    { ".bashrc" },        { ".bash_profile" }, { ".zshrc" },      { ".zprofile" },
    { ".profile" },       { ".gitconfig" },    { ".gitmodules" }, { ".ripgreprc" },
    { ".mcp.json" },      { ".vscode" },       { ".idea" },       { ".claude/commands" },
    { ".claude/agents" }, { ".git/hooks" },    { ".git/config" },
};
const size_t fs_n_mandatory_names = NF_ARRAY_SIZE(fs_mandatory_names);

/* How deep submodules (modules/NAME/modules/...) and worktrees are followed
 * inside one git directory, and how many slashes a submodule's name may
 * hold (modules/vendor/libs/foo). */
#define GIT_NEST_MAX       4
#define MODULES_NAME_DEPTH 8

/* Git's control files: where it reads its configuration and hooks, and
 * which directory it takes as the common one (config, hooks and refs of a
 * linked worktree come from there). */
static const char *const git_control[] = { "config", "hooks", "commondir", "config.worktree" };

bool fs_git_control_name(const char *name)
{
    for (size_t i = 0; i < NF_ARRAY_SIZE(git_control); i++)
        if (strcmp(git_control[i], name) == 0)
            return true;
    return false;
}

/* name is want, compared as a case-folding filesystem would. Called for
 * every entry the scan reads: the first byte turns most names away before
 * any strcasecmp. */
static bool is_name(const char *name, const char *want)
{
    return tolower((unsigned char)name[0]) == tolower((unsigned char)want[0]) &&
           strcasecmp(name, want) == 0;
}

/* Whether name is one of the single-component mandatory names. */
static bool is_protected_leaf(const char *name)
{
    for (size_t i = 0; i < fs_n_mandatory_names; i++)
        if (is_name(name, fs_mandatory_names[i].name) && !strchr(fs_mandatory_names[i].name, '/'))
            return true;
    return false;
}

static int found_push(struct fs_found_list *l, const char *path, enum fs_found_kind kind,
                      struct fs_found **slot, struct nf_err *err)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].path, path) == 0) {
            *slot = NULL;
            return 0;
        }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        struct fs_found *v = realloc(l->v, cap * sizeof(*v));

        if (!v)
            return nf_err_sys(err, "out of memory");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = (struct fs_found){ .kind = kind };
    l->v[l->n].path = strdup(path);
    if (!l->v[l->n].path)
        return nf_err_sys(err, "out of memory");
    *slot = &l->v[l->n++];
    return 0;
}

int fs_found_add(struct fs_found_list *l, const char *path, enum fs_found_kind kind,
                 struct nf_err *err)
{
    struct fs_found *slot;

    return found_push(l, path, kind, &slot, err);
}

void fs_found_free(struct fs_found_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].path);
        free(l->v[i].target);
    }
    free(l->v);
    for (size_t i = 0; i < l->n_git; i++)
        free(l->git[i]);
    free(l->git);
    memset(l, 0, sizeof(*l));
}

static int git_seen(struct fs_found_list *l, const char *path, struct nf_err *err)
{
    char **v = realloc(l->git, (l->n_git + 1) * sizeof(*v));

    if (!v)
        return nf_err_sys(err, "out of memory");
    l->git = v;
    v[l->n_git] = strdup(path);
    if (!v[l->n_git])
        return nf_err_sys(err, "out of memory");
    l->n_git++;
    return 0;
}

static enum fs_found_kind kind_of(mode_t m)
{
    if (S_ISLNK(m))
        return FS_FOUND_SYMLINK;
    return S_ISDIR(m) ? FS_FOUND_DIR : FS_FOUND_FILE;
}

static int join(char *out, size_t outsz, const char *dir, const char *name)
{
    return snprintf(out, outsz, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name) < (int)outsz ? 0
                                                                                               : -1;
}

/* Append dir/name as kind; a regular file carries its inode, for the other
 * names of a hard-linked one. */
static int add_child(struct fs_found_list *out, int dirfd, const char *dir, const char *name,
                     enum fs_found_kind kind, struct nf_err *err)
{
    char path[PATH_MAX];
    struct fs_found *f;
    struct stat st;

    if (join(path, sizeof(path), dir, name) < 0)
        return 0; /* cannot be opened by anyone either */
    if (found_push(out, path, kind, &f, err) < 0)
        return -1;
    if (f && kind == FS_FOUND_FILE && dirfd >= 0 &&
        fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        f->nlink = st.st_nlink;
    }
    return 0;
}

static int add_absent(struct fs_found_list *out, const char *dir, const char *name, bool is_dir,
                      bool dot, struct nf_err *err)
{
    char path[PATH_MAX];
    struct fs_found *f;

    if (join(path, sizeof(path), dir, name) < 0)
        return 0;
    if (found_push(out, path, FS_FOUND_ABSENT, &f, err) < 0)
        return -1;
    if (f) {
        f->absent_dir = is_dir;
        f->dot = dot;
    }
    return 0;
}

int fs_gitfile_parse(const char *buf, size_t len, char *out, size_t outsz)
{
    static const char tag[] = "gitdir:";
    size_t i = sizeof(tag) - 1, end;

    if (len < i || memcmp(buf, tag, i) != 0)
        return -1;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
        i++;
    end = i;
    while (end < len && buf[end] != '\n' && buf[end] != '\r' && buf[end] != '\0')
        end++;
    while (end > i && (buf[end - 1] == ' ' || buf[end - 1] == '\t'))
        end--;
    if (end == i || end - i >= outsz)
        return -1;
    memcpy(out, buf + i, end - i);
    out[end - i] = '\0';
    return 0;
}

/* A .git file's target, as written; NULL target when it cannot be read as
 * one (git would refuse it too). follow: a symlinked .git is read through. */
static int add_gitfile(struct fs_found_list *out, int dirfd, const char *dir, const char *name,
                       bool follow, struct nf_err *err)
{
    _cleanup_close_ int fd =
        openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
    char path[PATH_MAX], buf[PATH_MAX + 16], target[PATH_MAX];
    struct fs_found *f;
    struct stat st;
    ssize_t n = -1;

    if (join(path, sizeof(path), dir, name) < 0)
        return 0;
    if (found_push(out, path, FS_FOUND_GITFILE, &f, err) < 0 || !f)
        return f ? -1 : 0;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        n = read(fd, buf, sizeof(buf) - 1);
    if (n > 0 && fs_gitfile_parse(buf, (size_t)n, target, sizeof(target)) == 0 &&
        !(f->target = strdup(target)))
        return nf_err_sys(err, "out of memory");
    return 0;
}

/* The symlinks in a hooks directory: a hook that is a link into the
 * worktree (scripts/pre-commit) runs whatever is written there. Reported
 * as protected names that are symlinks: the link held, its target
 * protected. */
static int probe_links(int fd, const char *dir, struct fs_found_list *out, struct nf_err *err)
{
    _cleanup_(closedirp) DIR *d = NULL;
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    struct dirent *e;

    if (dup < 0 || !(d = fdopendir(dup))) {
        if (dup >= 0)
            close(dup);
        return 0;
    }
    while ((e = readdir(d))) {
        struct stat st;

        if (e->d_type != DT_LNK && e->d_type != DT_UNKNOWN)
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
            continue;
        if (add_child(out, -1, dir, e->d_name, FS_FOUND_SYMLINK, err) < 0)
            return -1;
    }
    return 0;
}

static int probe_gitdir(int fd, const char *dir, unsigned nest, struct fs_found_list *out,
                        struct nf_err *err);

static bool looks_like_gitdir(int fd)
{
    static const char *const marks[] = { "HEAD", "config", "hooks", "objects", "refs" };
    struct stat st;

    for (size_t i = 0; i < NF_ARRAY_SIZE(marks); i++)
        if (fstatat(fd, marks[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
            return true;
    return false;
}

/* Submodules' git directories under modules/: a submodule's name may hold
 * slashes (git's default is its path), so they nest as directories. A
 * directory with any of a git directory's names is one; any other is
 * walked, to a bound. levels 0: every entry is one (worktrees/NAME). */
static int probe_modules(int fd, const char *dir, unsigned nest, unsigned levels,
                         struct fs_found_list *out, struct nf_err *err)
{
    _cleanup_(closedirp) DIR *d = NULL;
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    struct dirent *e;

    if (dup < 0 || !(d = fdopendir(dup))) {
        if (dup >= 0)
            close(dup);
        return 0;
    }
    while ((e = readdir(d))) {
        _cleanup_close_ int m = -1;
        char path[PATH_MAX];
        int rc;

        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        m = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (m < 0 || join(path, sizeof(path), dir, e->d_name) < 0)
            continue;
        if (!levels || looks_like_gitdir(m))
            rc = probe_gitdir(m, path, nest, out, err);
        else
            rc = probe_modules(m, path, nest, levels - 1, out, err);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* A git directory's control files, and those of its submodules and linked
 * worktrees, nested to `nest` levels. A name that does not exist is one git
 * would obey if the command created it: reported absent, except config and
 * hooks where a commondir sends git elsewhere for them. */
static int probe_gitdir(int fd, const char *dir, unsigned nest, struct fs_found_list *out,
                        struct nf_err *err)
{
    bool has_common;
    struct stat st;

    has_common = fstatat(fd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0;
    for (size_t i = 0; i < NF_ARRAY_SIZE(git_control); i++) {
        const char *name = git_control[i];
        bool is_hooks = strcmp(name, "hooks") == 0;

        if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            if (add_child(out, fd, dir, name, kind_of(st.st_mode), err) < 0)
                return -1;
            if (is_hooks && S_ISDIR(st.st_mode)) {
                _cleanup_close_ int h =
                    openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                char hooks[PATH_MAX];

                if (h >= 0 && join(hooks, sizeof(hooks), dir, name) == 0 &&
                    probe_links(h, hooks, out, err) < 0)
                    return -1;
            }
            continue;
        }
        if (errno != ENOENT)
            continue;
        if (strcmp(name, "commondir") == 0) {
            if (add_absent(out, dir, name, false, true, err) < 0)
                return -1;
        } else if (!has_common && (is_hooks || strcmp(name, "config") == 0)) {
            if (add_absent(out, dir, name, is_hooks, false, err) < 0)
                return -1;
        }
    }
    if (nest == 0)
        return 0;
    {
        static const char *const nested[] = { "modules", "worktrees" };

        for (size_t k = 0; k < NF_ARRAY_SIZE(nested); k++) {
            _cleanup_close_ int sub =
                openat(fd, nested[k], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            char path[PATH_MAX];

            if (sub < 0 || join(path, sizeof(path), dir, nested[k]) < 0)
                continue;
            if (probe_modules(sub, path, nest - 1, k == 0 ? MODULES_NAME_DEPTH : 0, out, err) < 0)
                return -1;
        }
    }
    return 0;
}

/* .claude holds protected names one level down. */
static int probe_claude(int fd, const char *dir, struct fs_found_list *out, struct nf_err *err)
{
    static const char *const claude[] = { "commands", "agents" };

    for (size_t i = 0; i < NF_ARRAY_SIZE(claude); i++) {
        struct stat st;

        if (fstatat(fd, claude[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (add_child(out, fd, dir, claude[i], kind_of(st.st_mode), err) < 0)
            return -1;
    }
    return 0;
}

/* `.git` and `.claude`, whatever their case: as themselves, a directory, a
 * gitfile, or a symlink to either. */
static int probe_compound(int dirfd, const char *dir, const char *name, enum fs_found_kind kind,
                          bool git, struct fs_found_list *out, struct nf_err *err)
{
    _cleanup_close_ int fd = -1;
    char path[PATH_MAX];

    if (join(path, sizeof(path), dir, name) < 0)
        return 0;
    if (kind == FS_FOUND_FILE)
        return git ? add_gitfile(out, dirfd, dir, name, false, err) : 0;
    if (kind == FS_FOUND_SYMLINK) {
        /* The link must not be repointed; what it leads to is protected as
         * its names, reported through the link (resolved by the plan). A
         * loop or a dangling link holds nothing: the plan masks it. */
        if (add_child(out, dirfd, dir, name, FS_FOUND_LINK, err) < 0)
            return -1;
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            if (git && errno == ENOTDIR)
                return add_gitfile(out, dirfd, dir, name, true, err);
            return 0;
        }
    } else {
        struct stat st;

        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
                return 0;                                            /* replaced meanwhile */
            return add_child(out, -1, dir, name, FS_FOUND_DIR, err); /* unreadable: whole */
        }
        /* Our own placeholder (another run's, or a killed one's): nothing
         * but placeholders inside, no repository, nothing to protect. The
         * mark alone is not ours: the command can set it on a repository. */
        if (fstat(fd, &st) == 0 && fs_placeholder_at(fd, &st))
            return 0;
    }
    return git ? probe_gitdir(fd, path, GIT_NEST_MAX, out, err) : probe_claude(fd, path, out, err);
}

enum walk_mode {
    WALK_MANDATORY,
    WALK_GIT,
    WALK_INODES,
};

struct walk {
    enum walk_mode mode;
    unsigned depth;
    struct fs_found_list *out;
    const struct fs_inode *inodes;
    size_t n_inodes;
};

/* Pseudo file systems hold no project files and /proc is huge. */
static bool skip_dir(const char *path, const char *name)
{
    return strcmp(name, "node_modules") == 0 || strcmp(path, "/proc") == 0 ||
           strcmp(path, "/sys") == 0 || strcmp(path, "/dev") == 0;
}

static bool wanted_inode(const struct walk *w, int dirfd, const char *name, ino_t ino)
{
    struct stat st;

    for (size_t i = 0; i < w->n_inodes; i++)
        if (w->inodes[i].ino == ino)
            return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
                   st.st_ino == w->inodes[i].ino && st.st_dev == w->inodes[i].dev;
    return false;
}

/* Whether dirfd's entry name is a placeholder (fs_placeholder_at). */
static bool placeholder_entry(int dirfd, const char *name)
{
    _cleanup_close_ int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;

    return fd >= 0 && fstat(fd, &st) == 0 && fs_placeholder_at(fd, &st);
}

/* One entry; *descend says whether to walk into it. */
static int visit(struct walk *w, int dirfd, const char *dir, unsigned level, const char *name,
                 enum fs_found_kind kind, ino_t ino, bool *descend, struct nf_err *err)
{
    bool git = is_name(name, ".git");
    char path[PATH_MAX];

    *descend = !git;
    /* A .git already there is no repository the command made; a
     * placeholder (or one marked to look like one) is nothing yet, and a
     * repository built in it during the run must still be reported. */
    if (git && !placeholder_entry(dirfd, name) && join(path, sizeof(path), dir, name) == 0 &&
        git_seen(w->out, path, err) < 0)
        return -1;
    switch (w->mode) {
    case WALK_GIT:
        return 0;
    case WALK_INODES:
        if (kind == FS_FOUND_FILE && wanted_inode(w, dirfd, name, ino))
            return add_child(w->out, dirfd, dir, name, FS_FOUND_FILE, err);
        return 0;
    case WALK_MANDATORY:
        break;
    }
    if (level == 0 && strncmp(name, FS_PH_TMP_PREFIX, sizeof(FS_PH_TMP_PREFIX) - 1) == 0) {
        *descend = false;
        return join(path, sizeof(path), dir, name) == 0
                   ? fs_found_add(w->out, path, FS_FOUND_STALE, err)
                   : 0;
    }
    if (is_protected_leaf(name)) {
        *descend = false; /* protected whole: nothing inside matters */
        return add_child(w->out, dirfd, dir, name, kind, err);
    }
    if (git || is_name(name, ".claude"))
        return probe_compound(dirfd, dir, name, kind, git, w->out, err);
    return 0;
}

/* A directory holding HEAD, objects/ and refs/ is a git directory to git's
 * discovery (a bare repository): git run in it, or below it where no .git
 * comes first, reads its config and runs its hooks. */
enum bare_marks {
    BARE_HEAD = 1,
    BARE_OBJECTS = 2,
    BARE_REFS = 4,
    BARE_ALL = 7,
};

static unsigned bare_mark(const char *name, enum fs_found_kind kind)
{
    /* git follows symlinks for all three (HEAD -> refs/heads/main is a
     * valid HEAD; objects and refs are only access()ed). */
    if ((kind == FS_FOUND_FILE || kind == FS_FOUND_SYMLINK) && strcmp(name, "HEAD") == 0)
        return BARE_HEAD;
    if ((kind == FS_FOUND_DIR || kind == FS_FOUND_SYMLINK) && strcmp(name, "objects") == 0)
        return BARE_OBJECTS;
    if ((kind == FS_FOUND_DIR || kind == FS_FOUND_SYMLINK) && strcmp(name, "refs") == 0)
        return BARE_REFS;
    return 0;
}

static void dir_reader_free(struct fs_dir_reader **r)
{
    if (*r) {
        close((*r)->fd);
        free(*r);
    }
}

struct dirent64 *fs_dir_next(struct fs_dir_reader *r)
{
    struct dirent64 *e;

    if (r->pos >= r->len) {
        ssize_t n = getdents64(r->fd, r->buf, sizeof(r->buf));

        /* A directory removed since it was opened reads ENOENT: its end,
         * as readdir (and POSIX) has it. */
        if (n <= 0) {
            errno = n < 0 && errno != ENOENT ? errno : 0;
            return NULL;
        }
        r->len = (size_t)n;
        r->pos = 0;
    }
    e = (struct dirent64 *)(void *)(r->buf + r->pos);
    if (e->d_reclen == 0 || e->d_reclen > r->len - r->pos) {
        errno = EIO; /* not what the kernel gives: stop rather than loop */
        return NULL;
    }
    r->pos += e->d_reclen;
    return e;
}

static int walk_dir(struct walk *w, int fd, const char *dir, unsigned level, struct nf_err *err)
{
    _cleanup_(dir_reader_free) struct fs_dir_reader *d = malloc(sizeof(*d));
    struct dirent64 *e;
    unsigned bare = 0;

    if (!d) {
        close(fd);
        return nf_err_sys(err, "scan %s", dir);
    }
    d->fd = fd;
    d->pos = d->len = 0;
    while ((e = fs_dir_next(d))) {
        enum fs_found_kind kind;
        char child[PATH_MAX];
        bool descend;
        int cfd;

        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (e->d_type == DT_UNKNOWN) {
            struct stat st;

            if (fstatat(d->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                continue;
            kind = kind_of(st.st_mode);
        } else {
            kind = e->d_type == DT_DIR   ? FS_FOUND_DIR
                   : e->d_type == DT_LNK ? FS_FOUND_SYMLINK
                                         : FS_FOUND_FILE;
        }
        bare |= bare_mark(e->d_name, kind);
        if (visit(w, d->fd, dir, level, e->d_name, kind, e->d_ino, &descend, err) < 0)
            return -1;
        if (!descend || kind != FS_FOUND_DIR || level + 1 >= w->depth)
            continue;
        if (join(child, sizeof(child), dir, e->d_name) < 0 || skip_dir(child, e->d_name))
            continue;
        cfd = openat(d->fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd < 0) {
            if (errno == ELOOP || errno == ENOTDIR || errno == ENOENT || w->mode != WALK_MANDATORY)
                continue; /* replaced meanwhile */
            /* Writable but unlistable: protect it whole. */
            if (add_child(w->out, -1, dir, e->d_name, FS_FOUND_DIR, err) < 0)
                return -1;
            continue;
        }
        if (walk_dir(w, cfd, child, level + 1, err) < 0)
            return -1;
    }
    if (errno)
        return nf_err_sys(err, "scan %s", dir);
    if (bare == BARE_ALL && w->mode != WALK_INODES) {
        if (git_seen(w->out, dir, err) < 0)
            return -1;
        if (w->mode == WALK_MANDATORY && probe_gitdir(d->fd, dir, GIT_NEST_MAX, w->out, err) < 0)
            return -1;
    }
    return 0;
}

static int walk_root(struct walk *w, const char *root, struct nf_err *err)
{
    int fd;

    if (w->depth == 0)
        return 0;
    /* The write root itself was resolved by the plan: a symlink on the way
     * now is a swap to refuse. */
    fd = nf_openat2(AT_FDCWD, root, O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                    RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    if (fd < 0) {
        if (errno == EACCES && w->mode == WALK_MANDATORY)
            return fs_found_add(w->out, root, FS_FOUND_DIR, err);
        return nf_err_sys(err, "scan %s", root);
    }
    return walk_dir(w, fd, root, 0, err);
}

int fs_scan_mandatory(const char *root, unsigned depth, struct fs_found_list *out,
                      struct nf_err *err)
{
    struct walk w = { .mode = WALK_MANDATORY, .depth = depth, .out = out };

    return walk_root(&w, root, err);
}

int fs_scan_git(const char *root, unsigned depth, struct fs_found_list *out, struct nf_err *err)
{
    struct walk w = { .mode = WALK_GIT, .depth = depth, .out = out };

    return walk_root(&w, root, err);
}

int fs_scan_inodes(const char *root, unsigned depth, const struct fs_inode *inodes, size_t n,
                   struct fs_found_list *out, struct nf_err *err)
{
    struct walk w = {
        .mode = WALK_INODES, .depth = depth, .out = out, .inodes = inodes, .n_inodes = n
    };

    return walk_root(&w, root, err);
}

int fs_scan_links(const char *dir, struct fs_found_list *out, struct nf_err *err)
{
    _cleanup_close_ int fd = nf_openat2(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                                        RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

    if (fd < 0)
        return 0; /* missing: held by a placeholder; unreadable: nor can git run from it */
    return probe_links(fd, dir, out, err);
}

int fs_scan_gitdir(const char *gitdir, struct fs_found_list *out, struct nf_err *err)
{
    _cleanup_close_ int fd = nf_openat2(AT_FDCWD, gitdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                                        RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0; /* nothing there: git would refuse the gitfile */
        return nf_err_sys(err, "git directory %s", gitdir);
    }
    return probe_gitdir(fd, gitdir, GIT_NEST_MAX, out, err);
}
