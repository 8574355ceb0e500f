#include "fs/placeholder.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "src/log.h"
#include "src/util.h"

bool fs_placeholder_is(const struct stat *st)
{
    if (st->st_mtim.tv_sec != FS_PH_MTIME)
        return false;
    if (S_ISREG(st->st_mode))
        return st->st_size == 0;
    return S_ISDIR(st->st_mode);
}

static int mark(int fd, const char *path, struct nf_err *err)
{
    struct timespec ts[2] = { { .tv_sec = FS_PH_MTIME }, { .tv_sec = FS_PH_MTIME } };

    if (futimens(fd, ts) < 0)
        return nf_err_sys(err, "placeholder %s: set mtime", path);
    return 0;
}

/* Returns the held fd; -2 when the name cannot be made here; -3 when it
 * exists but cannot be opened (not ours, and no run of this user can have
 * made it: nothing to hold); -1 on error. */
static int hold_one(const char *path, enum fs_placeholder kind, struct nf_err *err)
{
    int oflags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;

    for (int attempt = 0; attempt < 8; attempt++) {
        _cleanup_close_ int fd = -1;
        bool created = false;
        struct stat fst, lst;

        if (kind == FS_PH_DIR) {
            if (mkdir(path, 0755) == 0)
                created = true;
            else if (errno != EEXIST)
                goto create_failed;
            fd = open(path, oflags | O_DIRECTORY);
        } else {
            fd = open(path, oflags | O_CREAT | O_EXCL, 0644);
            if (fd >= 0)
                created = true;
            else if (errno == EEXIST)
                fd = open(path, oflags);
            else
                goto create_failed;
        }
        if (fd < 0) {
            if (errno == ENOENT)
                continue; /* removed by a finishing run meanwhile */
            if (!created && (errno == EACCES || errno == EPERM))
                return -3;
            return nf_err_sys(err, "placeholder %s", path);
        }
        /* Lock before marking: a mark must never be seen unlocked, or a
         * finishing run could remove a mount point another run is about to
         * use. */
        if (RETRY_EINTR(flock(fd, LOCK_SH)) < 0)
            return nf_err_sys(err, "placeholder %s: flock", path);
        if (created && mark(fd, path, err) < 0)
            return -1;
        /* Still linked at path? A finishing run may have removed it between
         * our open and our lock. */
        if (fstat(fd, &fst) < 0)
            return nf_err_sys(err, "placeholder %s", path);
        if (lstat(path, &lst) < 0 || fst.st_ino != lst.st_ino || fst.st_dev != lst.st_dev ||
            fst.st_nlink == 0)
            continue;
        return steal_fd(&fd);
    create_failed:
        if (errno == EACCES || errno == EPERM || errno == EROFS)
            return -2;
        return nf_err_sys(err, "placeholder %s", path);
    }
    return nf_err_set(err, EAGAIN, "placeholder %s: keeps changing under us", path);
}

int fs_placeholders_prepare(struct fs_plan *plan, struct fs_ph_set *set, struct nf_err *err)
{
    set->v = NULL;
    set->n = 0;
    for (size_t i = 0; i < plan->n; i++) {
        struct fs_op *op = &plan->ops[i];
        struct fs_ph_hold *v;
        int fd;

        if (op->ph == FS_PH_NONE)
            continue;
        fd = hold_one(op->dst, op->ph, err);
        if (fd == -3)
            continue;
        if (fd == -2) {
            log_v("placeholder %s skipped: cannot be created here, nor inside", op->dst);
            op->skip = true;
            continue;
        }
        if (fd < 0)
            return -1;
        v = realloc(set->v, (set->n + 1) * sizeof(*v));
        if (!v) {
            close(fd);
            return nf_err_sys(err, "out of memory");
        }
        set->v = v;
        set->v[set->n].fd = fd;
        set->v[set->n].path = strdup(op->dst);
        if (!set->v[set->n].path) {
            close(fd);
            return nf_err_sys(err, "out of memory");
        }
        set->n++;
    }
    return 0;
}

/* A placeholder directory (.claude) can hold another run's placeholders
 * (.claude/commands) when that run saw it before it was marked: the run that
 * empties it removes it too, unless someone still holds it. */
static void remove_empty_parent(const char *path)
{
    char dir[PATH_MAX];
    char *slash;
    struct stat fst, lst;
    int fd;

    snprintf(dir, sizeof(dir), "%s", path);
    slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return;
    *slash = '\0';
    if (lstat(dir, &lst) < 0 || !S_ISDIR(lst.st_mode) || !fs_placeholder_is(&lst))
        return;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &fst) == 0 && fst.st_ino == lst.st_ino &&
        fst.st_dev == lst.st_dev && rmdir(dir) < 0 && errno != ENOTEMPTY && errno != ENOENT)
        log_warn("could not remove placeholder %s: %m", dir);
    close(fd);
}

void fs_placeholders_release(struct fs_ph_set *set)
{
    /* Deepest first, so a placeholder directory is empty when its turn comes. */
    for (size_t i = set->n; i-- > 0;) {
        struct fs_ph_hold *h = &set->v[i];
        struct stat fst, lst;

        if (fstat(h->fd, &fst) == 0 && fs_placeholder_is(&fst) &&
            flock(h->fd, LOCK_EX | LOCK_NB) == 0 && lstat(h->path, &lst) == 0 &&
            lst.st_ino == fst.st_ino && lst.st_dev == fst.st_dev) {
            int rc = S_ISDIR(fst.st_mode) ? rmdir(h->path) : unlink(h->path);

            if (rc < 0 && errno != ENOTEMPTY && errno != ENOENT)
                log_warn("could not remove placeholder %s: %m", h->path);
            if (rc == 0)
                remove_empty_parent(h->path);
        }
        close(h->fd);
        free(h->path);
    }
    free(set->v);
    set->v = NULL;
    set->n = 0;
}
