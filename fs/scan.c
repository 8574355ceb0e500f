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
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
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
    struct fs_dirsnap *snap;         /* WALK_MANDATORY: record what is read, if
                                        the root's file system is one to */
    const struct fs_dirsnap *cached; /* WALK_GIT: what need not be read again */
    dev_t snap_dev;                  /* the root's file system */
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

/* A directory holding HEAD, objects and refs is a git directory to git's
 * discovery (a bare repository): git run in it, or below it where no .git
 * comes first, reads its config and runs its hooks. So is one holding HEAD
 * and commondir, whose objects, refs and config git takes from the
 * directory commondir names. As git's is_git_directory: HEAD is read (a
 * file, or a symlink it follows); objects and refs are only access()ed, so
 * an executable file serves as well as a directory; commondir is read. On a
 * case-insensitive directory any case opens them. */
enum bare_marks {
    BARE_HEAD = 1,
    BARE_OBJECTS = 2,
    BARE_REFS = 4,
    BARE_COMMONDIR = 8,
};

static unsigned bare_mark(const char *name, enum fs_found_kind kind)
{
    bool readable = kind == FS_FOUND_FILE || kind == FS_FOUND_SYMLINK;

    if (readable && is_name(name, "HEAD"))
        return BARE_HEAD;
    if (is_name(name, "objects"))
        return BARE_OBJECTS;
    if (is_name(name, "refs"))
        return BARE_REFS;
    if (readable && is_name(name, "commondir"))
        return BARE_COMMONDIR;
    return 0;
}

static bool bare_repo(unsigned marks)
{
    const unsigned layout = BARE_HEAD | BARE_OBJECTS | BARE_REFS;
    const unsigned common = BARE_HEAD | BARE_COMMONDIR;

    return (marks & layout) == layout || (marks & common) == common;
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

void fs_dirsnap_free(struct fs_dirsnap *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].names);
    free(s->v);
    free(s->slots);
    memset(s, 0, sizeof(*s));
}

static size_t snap_hash(dev_t dev, ino_t ino, size_t n_slots)
{
    return (size_t)((((uint64_t)ino ^ ((uint64_t)dev << 32)) * 0x9E3779B97F4A7C15ULL) >> 32) &
           (n_slots - 1);
}

static bool same_names(const struct fs_dirsnap_dir *a, const struct fs_dirsnap_dir *b)
{
    return a->whole && b->whole && a->bare == b->bare && a->len == b->len &&
           (!a->len || memcmp(a->names, b->names, a->len) == 0);
}

/* The table of the records by dev and inode, made again once a scan ends.
 * A directory two roots share is recorded twice, alike; two records of one
 * inode that differ (one read in part, or two directories numbered alike:
 * a 32-bit tmpfs wraps its inode numbers) leave it out. */
static int snap_index(struct fs_dirsnap *s, struct nf_err *err)
{
    size_t n_slots = 16;

    while (n_slots < 2 * s->n)
        n_slots *= 2;
    free(s->slots);
    s->n_slots = 0;
    if (!(s->slots = calloc(n_slots, sizeof(*s->slots))))
        return nf_err_sys(err, "out of memory");
    s->n_slots = n_slots;
    for (size_t i = 0; i < s->n; i++) {
        struct fs_dirsnap_dir *r = &s->v[i];
        size_t h = snap_hash(r->dev, r->ino, n_slots);

        while (s->slots[h]) {
            struct fs_dirsnap_dir *o = &s->v[s->slots[h] - 1];

            if (o->dev == r->dev && o->ino == r->ino) {
                if (!same_names(o, r))
                    o->whole = false;
                break;
            }
            h = (h + 1) & (n_slots - 1);
        }
        if (!s->slots[h])
            s->slots[h] = (uint32_t)i + 1;
    }
    return 0;
}

/* The file systems whose directories get a new ctime at every change of
 * their entries, locally, and whose listing gives a subdirectory's own
 * inode unless a mount covers it (not btrfs: a subvolume in a listing is
 * another device's inode 256, and no mount). */
static bool snap_fs(int fd)
{
    struct statfs sf;

    if (fstatfs(fd, &sf) < 0)
        return false;
    switch ((unsigned long)sf.f_type) {
    case EXT4_SUPER_MAGIC: /* ext2 and ext3 too */
    case XFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
        return true;
    default:
        return false;
    }
}

/* A new record for the directory ino on the root's file system; its
 * index, -1 for none (no snapshot taken), -2 on error. */
static ssize_t snap_begin(struct walk *w, ino_t ino, struct nf_err *err)
{
    struct fs_dirsnap *s = w->snap;

    if (!s || !ino)
        return -1;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct fs_dirsnap_dir *v = realloc(s->v, cap * sizeof(*v));

        if (!v) {
            nf_err_sys(err, "out of memory");
            return -2;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n] = (struct fs_dirsnap_dir){ .dev = w->snap_dev, .ino = ino };
    return (ssize_t)s->n++;
}

static int snap_name(struct walk *w, ssize_t rec, char tag, const char *name, struct nf_err *err)
{
    struct fs_dirsnap_dir *r = &w->snap->v[rec];
    size_t n = strlen(name) + 2;

    if (r->len + n > r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        char *v;

        while (cap < r->len + n)
            cap *= 2;
        if (!(v = realloc(r->names, cap)))
            return nf_err_sys(err, "out of memory");
        r->names = v;
        r->cap = cap;
    }
    r->names[r->len] = tag;
    memcpy(r->names + r->len + 1, name, n - 1);
    r->len += n;
    return 0;
}

/* The record of the directory sx says, if nothing changed in it since
 * before the scan began: its ctime is older, and its names are not
 * encrypted (adding or removing an fscrypt key changes what a directory
 * lists, not its ctime). */
static const struct fs_dirsnap_dir *snap_find(const struct fs_dirsnap *s, const struct statx *sx)
{
    const unsigned want = STATX_TYPE | STATX_INO | STATX_CTIME;
    dev_t dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);

    if ((sx->stx_mask & want) != want || !S_ISDIR(sx->stx_mode) ||
        (sx->stx_attributes & STATX_ATTR_ENCRYPTED) || sx->stx_ctime.tv_sec > s->before.tv_sec ||
        (sx->stx_ctime.tv_sec == s->before.tv_sec && sx->stx_ctime.tv_nsec >= s->before.tv_nsec))
        return NULL;
    for (size_t h = snap_hash(dev, sx->stx_ino, s->n_slots); s->slots[h];
         h = (h + 1) & (s->n_slots - 1)) {
        const struct fs_dirsnap_dir *r = &s->v[s->slots[h] - 1];

        if (r->dev == dev && r->ino == sx->stx_ino)
            return r->whole ? r : NULL;
    }
    return NULL;
}

/* The record of dirfd's entry name ("" with AT_EMPTY_PATH: dirfd itself),
 * if unchanged. */
static const struct fs_dirsnap_dir *snap_at(const struct walk *w, int dirfd, const char *name,
                                            int flags)
{
    struct statx sx;

    if (!w->cached || !w->cached->n_slots ||
        statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO | STATX_CTIME, &sx) <
            0)
        return NULL;
    return snap_find(w->cached, &sx);
}

/* Whether dirfd's subdirectory name is unchanged and holds nothing the look
 * acts on: no need to open it. */
static bool snap_nothing_in(const struct walk *w, int dirfd, const char *name)
{
    const struct fs_dirsnap_dir *r = snap_at(w, dirfd, name, 0);

    return r && !r->len && !r->bare;
}

static int walk_dir(struct walk *w, int fd, ino_t ino, const char *dir, unsigned level,
                    struct nf_err *err);

/* A directory nobody changed since the mandatory scan read it: its .git
 * entries and subdirectories from the record, each as it is now. */
static int replay(struct walk *w, int fd, const struct fs_dirsnap_dir *r, const char *dir,
                  unsigned level, struct nf_err *err)
{
    for (const char *p = r->names; p < r->names + r->len; p += strlen(p) + 1) {
        const char *name = p + 1;
        char child[PATH_MAX];
        bool descend;
        int cfd;

        if (*p == 'g') {
            if (visit(w, fd, dir, level, name, FS_FOUND_FILE, 0, &descend, err) < 0)
                return -1;
            continue;
        }
        if (level + 1 >= w->depth || join(child, sizeof(child), dir, name) < 0 ||
            skip_dir(child, name) || snap_nothing_in(w, fd, name))
            continue;
        cfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd < 0)
            continue; /* replaced meanwhile */
        if (walk_dir(w, cfd, 0, child, level + 1, err) < 0)
            return -1;
    }
    return r->bare ? git_seen(w->out, dir, err) : 0;
}

/* The subdirectory name of the directory open at dirfd, not followed if a
 * symlink. *ino gets ino, its inode as its parent listed it, where it is to
 * be recorded: reached without crossing a mount, it is that inode (across
 * one, the parent lists what the mount covers); 0 otherwise. */
static int open_child(const struct walk *w, int dirfd, const char *name, ino_t *ino, ino_t listed)
{
    const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd;

    *ino = 0;
    if (!w->snap || !listed)
        return openat(dirfd, name, flags);
    fd = nf_openat2(dirfd, name, flags, RESOLVE_NO_XDEV);
    if (fd >= 0)
        *ino = listed;
    else if (errno == EXDEV)
        fd = openat(dirfd, name, flags);
    return fd;
}

/* The directory open at fd at dir; ino (0: none) is its inode on the root's
 * file system, if it is to be recorded. */
static int walk_dir(struct walk *w, int fd, ino_t ino, const char *dir, unsigned level,
                    struct nf_err *err)
{
    _cleanup_(dir_reader_free) struct fs_dir_reader *d = NULL;
    const struct fs_dirsnap_dir *same = snap_at(w, fd, "", AT_EMPTY_PATH);
    struct dirent64 *e;
    unsigned bare = 0;
    ssize_t rec;

    if (same) {
        int rc = replay(w, fd, same, dir, level, err);

        close(fd);
        return rc;
    }
    if ((rec = snap_begin(w, ino, err)) == -2 || !(d = malloc(sizeof(*d)))) {
        close(fd);
        return rec == -2 ? -1 : nf_err_sys(err, "scan %s", dir);
    }
    d->fd = fd;
    d->pos = d->len = 0;
    while ((e = fs_dir_next(d))) {
        enum fs_found_kind kind;
        char child[PATH_MAX];
        ino_t child_ino;
        bool descend;
        int cfd;

        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (e->d_type == DT_UNKNOWN) {
            struct stat st;

            if (fstatat(d->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                rec = -1; /* some name not as read: keep no record */
                continue;
            }
            kind = kind_of(st.st_mode);
        } else {
            kind = e->d_type == DT_DIR   ? FS_FOUND_DIR
                   : e->d_type == DT_LNK ? FS_FOUND_SYMLINK
                                         : FS_FOUND_FILE;
        }
        bare |= bare_mark(e->d_name, kind);
        if (rec >= 0 && (kind == FS_FOUND_DIR || is_name(e->d_name, ".git")) &&
            snap_name(w, rec, is_name(e->d_name, ".git") ? 'g' : 'd', e->d_name, err) < 0)
            return -1;
        if (visit(w, d->fd, dir, level, e->d_name, kind, e->d_ino, &descend, err) < 0)
            return -1;
        if (!descend || kind != FS_FOUND_DIR || level + 1 >= w->depth)
            continue;
        if (join(child, sizeof(child), dir, e->d_name) < 0 || skip_dir(child, e->d_name) ||
            snap_nothing_in(w, d->fd, e->d_name))
            continue;
        cfd = open_child(w, d->fd, e->d_name, &child_ino, rec >= 0 ? e->d_ino : 0);
        if (cfd < 0) {
            if (errno == ELOOP || errno == ENOTDIR || errno == ENOENT || w->mode != WALK_MANDATORY)
                continue; /* replaced meanwhile */
            /* Writable but unlistable: protect it whole. */
            if (add_child(w->out, -1, dir, e->d_name, FS_FOUND_DIR, err) < 0)
                return -1;
            continue;
        }
        if (walk_dir(w, cfd, child_ino, child, level + 1, err) < 0)
            return -1;
    }
    if (errno)
        return nf_err_sys(err, "scan %s", dir);
    if (rec >= 0) {
        w->snap->v[rec].whole = true;
        w->snap->v[rec].bare = bare_repo(bare);
    }
    if (bare_repo(bare) && w->mode != WALK_INODES) {
        if (git_seen(w->out, dir, err) < 0)
            return -1;
        if (w->mode == WALK_MANDATORY && probe_gitdir(d->fd, dir, GIT_NEST_MAX, w->out, err) < 0)
            return -1;
    }
    return 0;
}

static int walk_root(struct walk *w, const char *root, struct nf_err *err)
{
    struct stat st;
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
    if (w->snap) {
        struct fs_dirsnap *s = w->snap;
        struct timespec now;

        /* Taken before the first name is read; the first scan's time
         * holds for all (it is the earliest). */
        if (fstat(fd, &st) < 0 || !snap_fs(fd) || clock_gettime(CLOCK_REALTIME, &now) < 0) {
            w->snap = NULL;
        } else {
            w->snap_dev = st.st_dev;
            now.tv_sec -= FS_DIRSNAP_AGE_S;
            if (!s->before.tv_sec && !s->before.tv_nsec)
                s->before = now;
        }
    }
    return walk_dir(w, fd, w->snap ? st.st_ino : 0, root, 0, err);
}

int fs_scan_mandatory(const char *root, unsigned depth, struct fs_found_list *out,
                      struct fs_dirsnap *snap, struct nf_err *err)
{
    struct walk w = { .mode = WALK_MANDATORY, .depth = depth, .out = out, .snap = snap };
    int rc = walk_root(&w, root, err);

    if (rc == 0 && w.snap && w.snap->n && snap_index(w.snap, err) < 0)
        return -1;
    return rc;
}

int fs_scan_git(const char *root, unsigned depth, const struct fs_dirsnap *snap,
                struct fs_found_list *out, struct nf_err *err)
{
    struct walk w = { .mode = WALK_GIT, .depth = depth, .out = out, .cached = snap };

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
