#include "fs/placeholder.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "src/log.h"
#include "src/syscalls.h"
#include "src/util.h"

#define BENEATH (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* What git reads from a commondir file as "this very directory": an empty
 * commondir makes git fail, so a placeholder must say this. */
static const char dot_content[] = ".\n";

bool fs_placeholder_is(const struct stat *st)
{
    if (st->st_mtim.tv_sec != FS_PH_MTIME)
        return false;
    if (S_ISREG(st->st_mode))
        return st->st_size == 0 || st->st_size == (off_t)(sizeof(dot_content) - 1);
    return S_ISDIR(st->st_mode);
}

/* How deep placeholders nest in one: .claude/commands in another run's
 * .claude, .git/hooks in another's .git. */
#define PH_NEST_MAX 3

/* Whether the directory at fd holds nothing but placeholders. */
static bool holds_only_placeholders(int fd, unsigned depth)
{
    _cleanup_(closedirp) DIR *d = NULL;
    int rd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (rd < 0)
        return false;
    if (!(d = fdopendir(rd))) {
        close(rd);
        return false;
    }
    for (;;) {
        _cleanup_close_ int sub = -1;
        struct dirent *e;
        struct stat st;

        errno = 0;
        if (!(e = readdir(d)))
            return errno == 0;
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !fs_placeholder_is(&st))
            return false;
        if (!S_ISDIR(st.st_mode))
            continue;
        if (depth == 0)
            return false;
        sub = openat(dirfd(d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0 || !holds_only_placeholders(sub, depth - 1))
            return false;
    }
}

bool fs_placeholder_at(int fd, const struct stat *st)
{
    if (!fs_placeholder_is(st))
        return false;
    return !S_ISDIR(st->st_mode) || holds_only_placeholders(fd, PH_NEST_MAX);
}

bool fs_placeholder_path(const char *path, struct stat *st)
{
    _cleanup_close_ int fd = -1;
    struct stat now;

    if (lstat(path, st) < 0 || !fs_placeholder_is(st))
        return false;
    if (!S_ISDIR(st->st_mode))
        return true;
    fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino)
        return false; /* replaced meanwhile: not taken for ours */
    return holds_only_placeholders(fd, PH_NEST_MAX);
}

int fs_open_beneath_root(const char *dir)
{
    return nf_openat2(AT_FDCWD, dir, O_PATH | O_DIRECTORY | O_CLOEXEC,
                      RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* rel's last component. */
static const char *leaf_of(const char *rel)
{
    const char *slash = strrchr(rel, '/');

    return slash ? slash + 1 : rel;
}

int fs_open_parent_beneath(int root, const char *rel, char *leaf, size_t leafsz)
{
    const char *slash = strrchr(rel, '/');
    char dir[PATH_MAX];

    if (snprintf(leaf, leafsz, "%s", leaf_of(rel)) >= (int)leafsz) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!slash)
        return fcntl(root, F_DUPFD_CLOEXEC, 3);
    if ((size_t)(slash - rel) >= sizeof(dir)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(dir, rel, (size_t)(slash - rel));
    dir[slash - rel] = '\0';
    return nf_openat2(root, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, BENEATH);
}

/* The path below the write root; NULL when path is not beneath it. */
static const char *below(const char *path, const char *root)
{
    size_t n = strlen(root);

    if (strcmp(root, "/") == 0)
        return path[1] ? path + 1 : NULL;
    if (strncmp(path, root, n) != 0 || path[n] != '/' || !path[n + 1])
        return NULL;
    return path + n + 1;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* name in dir is still the file fd holds: nobody removed or replaced it
 * between our open and our lock. fst gets what fd holds. */
static bool still_linked_as(int dir, const char *name, int fd, struct stat *fst)
{
    struct stat lst;

    return fstat(fd, fst) == 0 && fst->st_nlink > 0 &&
           fstatat(dir, name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && same_file(fst, &lst);
}

static bool still_linked(int dir, const char *name, int fd)
{
    struct stat st;

    return still_linked_as(dir, name, fd, &st);
}

static int mark(int fd, bool dot)
{
    struct timespec ts[2] = { { .tv_sec = FS_PH_MTIME }, { .tv_sec = FS_PH_MTIME } };

    if (dot && write(fd, dot_content, sizeof(dot_content) - 1) != sizeof(dot_content) - 1)
        return -1;
    return futimens(fd, ts);
}

/* How long a run waits for another that is making the same placeholder
 * (it holds the temporary locked until it renames it into place): on a
 * loaded machine that run may be descheduled for a while. */
#define WAIT_OTHER_MAX_US (10 * 1000 * 1000)

enum stale_rc {
    STALE_GONE, /* removed, or not there */
    STALE_BUSY, /* a live run holds it: it is making that placeholder now */
    STALE_JUNK, /* something else under our name (content, a FIFO): left alone */
};

/* A temporary of ours at the top of the write root, not held by any live
 * run (a creator holds its lock from birth): what a killed run left. Only an
 * empty file or directory, or a symlink planted under our name, goes. */
static enum stale_rc remove_stale(int root, const char *name)
{
    _cleanup_close_ int fd = -1;
    struct stat st;

    if (fstatat(root, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return STALE_GONE;
    if (S_ISLNK(st.st_mode))
        return unlinkat(root, name, 0) == 0 || errno == ENOENT ? STALE_GONE : STALE_JUNK;
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
        return STALE_JUNK;
    fd = openat(root, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? STALE_GONE : STALE_JUNK;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0)
        return STALE_BUSY;
    if (!still_linked_as(root, name, fd, &st))
        return STALE_GONE;
    if (S_ISDIR(st.st_mode)) {
        if (unlinkat(root, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
            return STALE_GONE;
    } else if (st.st_size <= (off_t)(sizeof(dot_content) - 1)) {
        if (unlinkat(root, name, 0) == 0 || errno == ENOENT)
            return STALE_GONE;
    }
    return STALE_JUNK;
}

enum hold_rc {
    HOLD_OK = 0,
    HOLD_ERROR = -1,
    HOLD_CANNOT = -2, /* this user cannot create it here: nor can the command */
    HOLD_NONE = -3,   /* exists, but not ours to hold (unreadable) */
    HOLD_GONE = -4,   /* its directory vanished or changed under us */
};

struct making {
    int root;         /* the write root */
    const char *rel;  /* below it */
    const char *path; /* the whole path, for messages */
    enum fs_placeholder kind;
    bool fresh;    /* the plan saw it missing: try to create first */
    bool optional; /* found by the scan: gone now means skip, never make */
    int parent;    /* out: its own descriptor, or root itself */
    char name[NAME_MAX + 1];
};

static void close_parent(struct making *m)
{
    if (m->parent >= 0 && m->parent != m->root)
        close(m->parent);
    m->parent = -1;
}

static int open_existing(struct making *m)
{
    int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;

    return openat(m->parent, m->name, m->kind == FS_PH_DIR ? flags | O_DIRECTORY : flags);
}

/* The kernel refused to link a descriptor by itself (AT_EMPTY_PATH). */
static bool flink_refused;

void fs_placeholders_flink(bool allowed)
{
    flink_refused = !allowed;
}

/* A file made without a name (O_TMPFILE) in its own directory, locked and
 * marked, then linked in place: nobody else can reach it before the link,
 * and a run killed before it leaves nothing. Half the directory updates of
 * a temporary renamed into place. -ENOSYS: this file system or kernel
 * cannot; make it the other way. */
static int create_linked(struct making *m, struct nf_err *err)
{
    _cleanup_close_ int fd = openat(m->parent, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
    char self[32];
    struct stat st;

    if (fd < 0)
        return -ENOSYS;
    if (flock(fd, LOCK_SH | LOCK_NB) < 0)
        return -ENOSYS;
    if (mark(fd, m->kind == FS_PH_DOTFILE) < 0)
        return nf_err_sys(err, "placeholder %s: mark", m->rel);
    /* Our own descriptor's link: by the descriptor itself where the kernel
     * lets its opener (6.10 and later), else through /proc, which costs a
     * path walk through procfs each time. Before 6.10 AT_EMPTY_PATH needs
     * CAP_DAC_READ_SEARCH and says ENOENT without it: not asked again. */
    if (!flink_refused) {
        if (linkat(fd, "", m->parent, m->name, AT_EMPTY_PATH) == 0)
            return steal_fd(&fd);
        if (errno == EEXIST)
            return -EEXIST;
    }
    snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, self, m->parent, m->name, AT_SYMLINK_FOLLOW) == 0) {
        flink_refused = true;
        return steal_fd(&fd);
    }
    if (errno == EEXIST)
        return -EEXIST;
    if ((errno == ENOENT || errno == ENOTDIR) && fstat(m->parent, &st) == 0 && st.st_nlink == 0)
        return HOLD_GONE; /* its directory went */
    return -ENOSYS;       /* no /proc, a link refused: the other way decides */
}

/* Create under a temporary name at the top of the write root, locked and
 * marked, then move it into place: nobody ever sees it half made where it
 * belongs. Returns the held fd, HOLD_* otherwise; -EEXIST when the name
 * appeared meanwhile (adopt it). */
static int create_complete(struct making *m, struct nf_err *err)
{
    char tmp[NAME_MAX + 1];
    _cleanup_close_ int fd = -1;
    size_t n;

    if (m->kind != FS_PH_DIR) {
        int linked = create_linked(m, err);

        if (linked != -ENOSYS)
            return linked;
    }
    n = (size_t)snprintf(tmp, sizeof(tmp), "%s%s", FS_PH_TMP_PREFIX, m->rel);
    if (n >= sizeof(tmp))
        return -EINVAL; /* too long for one name: create in place */
    for (char *p = tmp; *p; p++)
        if (*p == '/')
            *p = '~';
    if (m->kind == FS_PH_DIR) {
        if (mkdirat(m->root, tmp, 0755) == 0)
            fd = openat(m->root, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    } else {
        fd = openat(m->root, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        if (errno == EEXIST) {
            /* Another run is making the same one (it holds the lock): wait
             * for it. A killed run left it: remove it and retry. Something
             * planted under our name that is not ours to remove must not
             * stop every later run: make this one in place instead. */
            switch (remove_stale(m->root, tmp)) {
            case STALE_BUSY:
                return -EBUSY;
            case STALE_GONE:
                return -EAGAIN;
            case STALE_JUNK:
                return -EINVAL;
            }
        }
        if (errno == ENOENT)
            return -EAGAIN; /* removed by a cleaner before we opened it */
        /* The top may be closed to us where the placeholder's own directory
         * is not: whether the name can be made is that directory's answer. */
        if (errno == EACCES || errno == EPERM || errno == EROFS || errno == ENOSPC ||
            errno == EDQUOT)
            return -EINVAL;
        return nf_err_sys(err, "placeholder %s: create %s", m->rel, tmp);
    }
    /* Exclusive until it is marked: a directory is opened by name after its
     * mkdir, and a cleaner may have removed ours and another run made the
     * name again meanwhile. Two runs must not both take one temporary for
     * their own: one would rename it into place, the other find it gone.
     * Held by someone else: a creator about to rename it, or a cleaner. */
    if (flock(fd, LOCK_EX | LOCK_NB) < 0)
        return -EBUSY;
    if (!still_linked(m->root, tmp, fd))
        return -EAGAIN;
    if (mark(fd, m->kind == FS_PH_DOTFILE) < 0) {
        nf_err_sys(err, "placeholder %s: mark", m->rel);
        (void)unlinkat(m->root, tmp, m->kind == FS_PH_DIR ? AT_REMOVEDIR : 0);
        return HOLD_ERROR;
    }
    /* Shared before it is in place, as every holder's: a cleaner or a
     * finishing run needs it exclusive. Not atomic: whoever took it in
     * between has it now. */
    if (flock(fd, LOCK_SH | LOCK_NB) < 0)
        return -EBUSY;
    if (!still_linked(m->root, tmp, fd))
        return -EAGAIN;
    if (renameat2(m->root, tmp, m->parent, m->name, RENAME_NOREPLACE) == 0)
        return steal_fd(&fd);
    {
        int e = errno;

        (void)unlinkat(m->root, tmp, m->kind == FS_PH_DIR ? AT_REMOVEDIR : 0);
        if (e == EEXIST)
            return -EEXIST;
        /* No RENAME_NOREPLACE here, another mount, or a directory we may
         * not rename into: make it in place, where that directory decides. */
        if (e == EINVAL || e == EXDEV || e == EACCES || e == EPERM || e == EROFS)
            return -EINVAL;
        if (e == ENOENT) {
            struct stat st;

            /* Our temporary went (another run took the same name for its
             * own in a window of its own): try again. Or the directory it
             * was going to went. */
            if (fstat(m->parent, &st) == 0 && st.st_nlink > 0)
                return -EAGAIN;
            return HOLD_GONE;
        }
        if (e == ENOTDIR)
            return HOLD_GONE;
        errno = e;
        return nf_err_sys(err, "placeholder %s: rename into place", m->rel);
    }
}

/* Whether the directory open at dir belongs to this process's user: its
 * owner may chmod it whatever its mode says. */
static bool owned_by_us(int dir)
{
    struct stat st;

    return fstat(dir, &st) == 0 && st.st_uid == geteuid();
}

/* Where a file system cannot rename without replacing, or the directory is
 * another mount: an exclusive create in place, then the lock and the mark. */
static int create_in_place(struct making *m, struct nf_err *err)
{
    _cleanup_close_ int fd = -1;

    if (m->kind == FS_PH_DIR) {
        if (mkdirat(m->parent, m->name, 0755) < 0)
            goto failed;
        fd = open_existing(m);
    } else {
        fd = openat(m->parent, m->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    }
    if (fd < 0)
        goto failed;
    if (flock(fd, LOCK_SH | LOCK_NB) < 0 || !still_linked(m->parent, m->name, fd))
        return -EAGAIN;
    if (mark(fd, m->kind == FS_PH_DOTFILE) < 0)
        return nf_err_sys(err, "placeholder %s: mark", m->rel);
    return steal_fd(&fd);
failed:
    if (errno == EEXIST)
        return -EEXIST;
    if (errno == ENOENT || errno == ENOTDIR)
        return HOLD_GONE;
    if (errno == EACCES && owned_by_us(m->parent)) {
        /* Not writable, but ours: the command, as its owner, can make it
         * writable again (chmod) and create the name. */
        errno = EACCES;
        nf_err_sys(err,
                   "cannot protect %s: its directory is read-only but owned by this user, "
                   "so the command could make it writable and create it",
                   m->path ? m->path : m->rel);
        nf_err_hint(err, "make the directory writable (chmod u+w), or remove it from the write "
                         "roots");
        return HOLD_ERROR;
    }
    if (errno == EACCES || errno == EPERM || errno == EROFS)
        return HOLD_CANNOT;
    return nf_err_sys(err, "placeholder %s", m->rel);
}

/* An existing entry at the placeholder's place: ours, another run's, or one
 * the plan chose to hold. */
static int adopt(struct making *m, struct nf_err *err)
{
    _cleanup_close_ int fd = open_existing(m);

    if (fd < 0) {
        if (errno == ENOENT)
            return -EAGAIN;
        if (errno == ELOOP || errno == ENOTDIR)
            return HOLD_GONE; /* replaced by a symlink or another kind */
        if (errno == EACCES || errno == EPERM)
            return HOLD_NONE;
        return nf_err_sys(err, "placeholder %s", m->rel);
    }
    /* Blocks while a finishing run holds it exclusive; it is then gone. */
    if (RETRY_EINTR(flock(fd, LOCK_SH)) < 0)
        return nf_err_sys(err, "placeholder %s: flock", m->rel);
    if (!still_linked(m->parent, m->name, fd))
        return -EAGAIN;
    return steal_fd(&fd);
}

static int hold_one(struct making *m, struct nf_err *err)
{
    bool in_place = false;
    bool create = m->fresh;
    long waited = 0, pause = 200;

    for (int attempt = 0; attempt < 16;) {
        int fd;

        if (m->parent < 0 && !strchr(m->rel, '/')) {
            /* At the top of the root: the root is its parent, no copy. */
            if (strlen(m->rel) >= sizeof(m->name))
                return nf_err_set(err, ENAMETOOLONG, "placeholder %s", m->rel);
            strcpy(m->name, m->rel);
            m->parent = m->root;
        }
        if (m->parent < 0) {
            m->parent = fs_open_parent_beneath(m->root, m->rel, m->name, sizeof(m->name));
            if (m->parent < 0) {
                if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == EXDEV)
                    return HOLD_GONE;
                if (errno == EACCES)
                    return HOLD_NONE;
                return nf_err_sys(err, "placeholder %s", m->rel);
            }
        }
        if (create)
            fd = in_place ? create_in_place(m, err) : create_complete(m, err);
        else
            fd = adopt(m, err);
        if (fd >= 0 || fd == HOLD_ERROR || fd == HOLD_CANNOT || fd == HOLD_NONE || fd == HOLD_GONE)
            return fd;
        if (fd == -EBUSY) {
            /* Another run is making this very one: it appears in a moment. */
            struct timespec ts = { .tv_nsec = pause * 1000 };

            if (waited > WAIT_OTHER_MAX_US)
                break;
            nanosleep(&ts, NULL);
            waited += pause;
            pause = pause < 20000 ? pause * 2 : pause;
            continue;
        }
        attempt++;
        if (fd == -EINVAL)
            in_place = true;
        /* Held because it existed (another run's, or a user's empty one)
         * and gone now: below the top nothing is protected that does not
         * exist, so nothing is made in its place. */
        if (fd == -EAGAIN && !create && m->optional)
            return HOLD_GONE;
        /* -EEXIST: it appeared, adopt it; -EAGAIN after an adopt: it went,
         * make it. */
        create = fd == -EEXIST ? false : fd == -EAGAIN && !create ? true : create;
    }
    return nf_err_set(err, EAGAIN, "placeholder %s: keeps changing under us", m->rel);
}

/* The set's array has room for every op (counted before the first hold):
 * nothing is allocated per placeholder. */
static void set_add(struct fs_ph_set *set, struct making *m, const char *path, int fd)
{
    set->v[set->n++] = (struct fs_ph_hold){
        .path = path,
        .parent = m->parent,
        .name = leaf_of(m->rel),
        .fd = fd,
        .anchor = m->root,
        .rel = m->rel,
    };
    m->parent = -1;
}

/* The write root's descriptor, opened once per root and kept by the set. */
static int root_fd(struct fs_ph_set *set, const char *anchor, struct nf_err *err)
{
    struct fs_ph_root *roots;
    int fd;

    for (size_t i = 0; i < set->n_roots; i++)
        if (strcmp(set->roots[i].path, anchor) == 0)
            return set->roots[i].fd;
    roots = realloc(set->roots, (set->n_roots + 1) * sizeof(*roots));
    if (!roots)
        return nf_err_sys(err, "out of memory");
    set->roots = roots;
    fd = fs_open_beneath_root(anchor);
    if (fd < 0)
        return nf_err_sys(err, "write root %s", anchor);
    set->roots[set->n_roots++] = (struct fs_ph_root){ .path = anchor, .fd = fd };
    return fd;
}

int fs_placeholders_prepare(const struct fs_plan *plan, struct fs_ph_set *set, uint8_t *skip,
                            struct nf_err *err)
{
    size_t room = 0;

    *set = (struct fs_ph_set){ 0 };
    memset(skip, 0, plan->n);
    for (size_t i = 0; i < plan->n; i++)
        room += plan->ops[i].ph != FS_PH_NONE;
    if (room && !(set->v = calloc(room, sizeof(*set->v))))
        return nf_err_sys(err, "out of memory");
    for (size_t i = 0; i < plan->n_stale; i++) {
        int root = root_fd(set, plan->stale[i].anchor, err);

        if (root < 0)
            return -1;
        (void)remove_stale(root, plan->stale[i].name);
    }
    for (size_t i = 0; i < plan->n; i++) {
        const struct fs_op *op = &plan->ops[i];
        struct making m = { .parent = -1, .kind = op->ph, .path = op->dst };
        int root, fd;

        if (op->ph == FS_PH_NONE)
            continue;
        /* A deny of a write root itself: the root exists and is no
         * placeholder; nothing to hold. */
        if (op->anchor && strcmp(op->dst, op->anchor) == 0)
            continue;
        if (!op->anchor || !(m.rel = below(op->dst, op->anchor)))
            return nf_err_set(err, EINVAL, "placeholder %s: not inside a write root", op->dst);
        root = root_fd(set, op->anchor, err);
        if (root < 0)
            return -1;
        m.root = root;
        m.fresh = op->ph_missing;
        m.optional = op->optional;
        fd = hold_one(&m, err);
        if (fd < 0)
            close_parent(&m);
        switch (fd) {
        case HOLD_NONE:
            continue;
        case HOLD_CANNOT:
            log_v("placeholder %s skipped: cannot be created here, nor inside", op->dst);
            skip[i] = 1;
            continue;
        case HOLD_GONE:
            if (op->optional) {
                log_v("%s skipped: it vanished meanwhile", op->dst);
                skip[i] = 1;
                continue;
            }
            return nf_err_set(err, EAGAIN,
                              "placeholder %s: a directory on its way vanished or changed while "
                              "the sandbox was set up (another run in the same directory?); try "
                              "again",
                              op->dst);
        case HOLD_ERROR:
            return -1;
        default:
            break;
        }
        set_add(set, &m, op->dst, fd);
    }
    return 0;
}

/* unlinkat where the directory refused it (EACCES): a command may make a
 * directory of its own read-only during the run (chmod 555 .), and its
 * owner is who made the placeholders in it. The owner lends itself the
 * write and search bits for the removal and puts the mode back as the
 * command left it. Only for a directory of this user's: it then takes
 * nothing the command could not take itself. */
static int unlink_in_readonly(int dir, const char *name, int flags)
{
    _cleanup_close_ int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    int rc, e;

    if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
        (st.st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR) ||
        fchmod(fd, (st.st_mode & 07777) | S_IWUSR | S_IXUSR) < 0) {
        errno = EACCES;
        return -1;
    }
    rc = unlinkat(dir, name, flags);
    e = errno;
    if (fchmod(fd, st.st_mode & 07777) < 0)
        log_warn("could not give a directory back its mode %04o: %m", st.st_mode & 07777);
    errno = e;
    return rc;
}

/* A placeholder directory (.claude) can hold another run's placeholders
 * (.claude/commands) when that run saw it before it was marked: the run that
 * empties it removes it too, unless someone still holds it. */
static void remove_empty_parent(const struct fs_ph_hold *h)
{
    char leaf[NAME_MAX + 1];
    _cleanup_close_ int pp = -1;
    _cleanup_close_ int fd = -1;
    char dir[PATH_MAX];
    const char *slash = strrchr(h->rel, '/');
    struct stat st;

    if (!slash || (size_t)(slash - h->rel) >= sizeof(dir))
        return;
    memcpy(dir, h->rel, (size_t)(slash - h->rel));
    dir[slash - h->rel] = '\0';
    pp = fs_open_parent_beneath(h->anchor, dir, leaf, sizeof(leaf));
    if (pp < 0 || fstatat(pp, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
        !fs_placeholder_is(&st))
        return;
    fd = openat(pp, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && still_linked(pp, leaf, fd) &&
        unlinkat(pp, leaf, AT_REMOVEDIR) < 0 &&
        (errno != EACCES || unlink_in_readonly(pp, leaf, AT_REMOVEDIR) < 0) && errno != ENOTEMPTY &&
        errno != ENOENT)
        log_warn("could not remove placeholder %s/%s: %m", dir, leaf);
}

void fs_placeholders_release(struct fs_ph_set *set)
{
    /* Deepest first, so a placeholder directory is empty when its turn comes. */
    for (size_t i = set->n; i-- > 0;) {
        struct fs_ph_hold *h = &set->v[i];
        struct stat st;

        /* Looked at once it is ours alone: no other run holds it now; still
         * marked (nobody wrote to it meanwhile). */
        if (h->fd >= 0 && h->name && flock(h->fd, LOCK_EX | LOCK_NB) == 0 &&
            still_linked_as(h->parent, h->name, h->fd, &st) && fs_placeholder_is(&st)) {
            int flags = S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0;
            int rc = unlinkat(h->parent, h->name, flags);

            if (rc < 0 && errno == EACCES)
                rc = unlink_in_readonly(h->parent, h->name, flags);
            if (rc < 0 && errno != ENOTEMPTY && errno != ENOENT)
                log_warn("could not remove placeholder %s: %m", h->path);
            /* Only a name below another has a parent to look at: asked
             * here, the look's path buffers touch no stack otherwise. */
            if (rc == 0 && h->rel && h->anchor >= 0 && strchr(h->rel, '/'))
                remove_empty_parent(h);
        }
        if (h->fd >= 0)
            close(h->fd);
        if (h->parent >= 0 && h->parent != h->anchor)
            close(h->parent);
    }
    for (size_t i = 0; i < set->n_roots; i++)
        close(set->roots[i].fd);
    free(set->v);
    free(set->roots);
    *set = (struct fs_ph_set){ 0 };
}
