#include "fs/perform.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/landlock.h"
#include "src/util.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

#define MAX_LINKS 40

/* Where a walk ended: a directory and one name in it, or (a procfs link
 * followed by the kernel) the object itself. */
struct spot {
    int parent;
    char name[NAME_MAX + 1];
    int obj; /* O_PATH, or -1 */
    bool must_dir;
};

static void spot_close(struct spot *s)
{
    if (s->parent >= 0)
        close(s->parent);
    if (s->obj >= 0)
        close(s->obj);
    s->parent = s->obj = -1;
}

static bool on_proc(int fd)
{
    struct statfs sf;

    return fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

static bool same_inode(int a, int b)
{
    struct stat sa, sb;

    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Replace *fd by nfd. */
static void move_to(int *fd, int nfd)
{
    close(*fd);
    *fd = nfd;
}

/* rem := text + "/" + rem (a symlink's target spliced in). */
static int splice_path(char *rem, size_t sz, const char *text)
{
    size_t tl = strlen(text), rl = strlen(rem);

    if (tl + 1 + rl + 1 > sz)
        return -ENAMETOOLONG;
    memmove(rem + tl + 1, rem, rl + 1);
    memcpy(rem, text, tl);
    rem[tl] = '/';
    return 0;
}

/* Take the next component off the front of rem into comp; returns whether
 * one was left after it (a trailing slash counts as none, but sets
 * *slash). */
static bool next_component(char *rem, char *comp, size_t compsz, bool *last, bool *slash, int *rc)
{
    char *p = rem, *end;
    size_t n;

    while (*p == '/')
        p++;
    end = strchrnul(p, '/');
    n = (size_t)(end - p);
    if (n >= compsz) {
        *rc = -ENAMETOOLONG;
        return false;
    }
    memcpy(comp, p, n);
    comp[n] = '\0';
    while (*end == '/')
        end++;
    *last = *end == '\0';
    *slash = *last && end > p + n;
    memmove(rem, end, strlen(end) + 1);
    return true;
}

/* Walk path (relative to start, or absolute: to root) as the kernel would
 * for the command. follow: the last component too. */
static int walk(const struct wreq *rq, int root, int start, const char *path, bool follow,
                struct spot *out)
{
    _cleanup_free_ char *rem = malloc(PATH_MAX * 2);
    char comp[NAME_MAX + 1];
    int cur, links = 0, rc = 0;

    out->parent = out->obj = -1;
    out->must_dir = false;
    if (!rem)
        return -ENOMEM;
    if (!path[0])
        return -ENOENT;
    if (strlen(path) >= PATH_MAX)
        return -ENAMETOOLONG;
    strcpy(rem, path);
    cur = fcntl(path[0] == '/' ? root : start, F_DUPFD_CLOEXEC, 0);
    if (cur < 0)
        return -errno;
    for (;;) {
        bool last, slash;
        struct stat st;
        int nfd;

        if (rem[0] == '/')
            move_to(&cur, fcntl(root, F_DUPFD_CLOEXEC, 0));
        if (cur < 0)
            return -errno;
        if (!next_component(rem, comp, sizeof(comp), &last, &slash, &rc))
            break;
        if (slash)
            out->must_dir = true;
        if (!comp[0]) /* the path was "/" or ended in it */
            strcpy(comp, ".");
        if (last && (!(follow || slash) || strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0)) {
            if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
                /* The directory itself: an object, not a name. */
                if (strcmp(comp, "..") == 0 && same_inode(cur, root))
                    strcpy(comp, ".");
                out->obj = openat(cur, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
                close(cur);
                return out->obj < 0 ? -errno : 0;
            }
            out->parent = cur;
            strcpy(out->name, comp);
            return 0;
        }
        if (strcmp(comp, ".") == 0)
            continue;
        if (strcmp(comp, "..") == 0) {
            if (!same_inode(cur, root))
                move_to(&cur, openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (cur < 0)
                return -errno;
            continue;
        }
        if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            rc = -errno;
            if (last && rc == -ENOENT) {
                /* Missing: the name to create. */
                out->parent = cur;
                strcpy(out->name, comp);
                return 0;
            }
            break;
        }
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t n;

            if (++links > MAX_LINKS) {
                rc = -ELOOP;
                break;
            }
            if (on_proc(cur)) {
                struct stat pst;

                if (fstat(cur, &pst) == 0 && pst.st_ino == 1 &&
                    (strcmp(comp, "self") == 0 || strcmp(comp, "thread-self") == 0)) {
                    /* Ours would name the helper: the command's instead. */
                    if (strcmp(comp, "self") == 0)
                        snprintf(target, sizeof(target), "%d", (int)rq->tgid);
                    else
                        snprintf(target, sizeof(target), "%d/task/%d", (int)rq->tgid, (int)rq->pid);
                    rc = splice_path(rem, PATH_MAX * 2, target);
                    if (rc < 0)
                        break;
                    continue;
                }
                /* A magic link (cwd, root, fd/N): the kernel follows it. */
                nfd = openat(cur, comp, O_PATH | O_CLOEXEC);
                if (nfd < 0) {
                    rc = -errno;
                    break;
                }
                if (last) {
                    close(cur);
                    out->obj = nfd;
                    return 0;
                }
                move_to(&cur, nfd);
                continue;
            }
            n = readlinkat(cur, comp, target, sizeof(target) - 1);
            if (n < 0) {
                rc = -errno;
                break;
            }
            target[n] = '\0';
            rc = splice_path(rem, PATH_MAX * 2, target);
            if (rc < 0)
                break;
            if (last && !slash) {
                /* The target is what is left: drop the "/" splice_path put
                 * after it, so its last component stays the last. */
                size_t l = strlen(rem);

                if (l > 1 && rem[l - 1] == '/')
                    rem[l - 1] = '\0';
            }
            continue;
        }
        if (last) {
            out->parent = cur;
            strcpy(out->name, comp);
            return 0;
        }
        if (!S_ISDIR(st.st_mode)) {
            rc = -ENOTDIR;
            break;
        }
        nfd = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0) {
            rc = -errno;
            break;
        }
        move_to(&cur, nfd);
    }
    close(cur);
    return rc ? rc : -ENOENT;
}

/* The path the kernel gives fd: 0 and the path; 1 and "" when it names no
 * file at all (a pipe, a socket, an anonymous inode: "pipe:[...]"); -errno
 * and "" when the kernel cannot give it (longer than PATH_MAX): a file all
 * the same, which must not pass for a pipe. */
static int fd_path(int fd, char *out, size_t sz)
{
    char link[64];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, out, sz - 1);
    if (n < 0 || n >= (ssize_t)sz - 1) {
        int e = n < 0 ? errno : ENAMETOOLONG;

        out[0] = '\0';
        return -e;
    }
    out[n] = '\0';
    if (out[0] != '/') {
        out[0] = '\0';
        return 1;
    }
    return 0;
}

static bool deleted(const char *path)
{
    size_t l = strlen(path);

    return l > 10 && strcmp(path + l - 10, " (deleted)") == 0;
}

/* The spot's path: its directory's and its name. */
static int spot_path(const struct spot *s, char *out, size_t sz)
{
    char dir[PATH_MAX];
    int rc = fd_path(s->obj >= 0 ? s->obj : s->parent, dir, sizeof(dir));

    if (rc < 0)
        return rc;
    if (rc > 0 || deleted(dir))
        return -ENOENT;
    if (s->obj >= 0) {
        snprintf(out, sz, "%s", dir);
        return 0;
    }
    if ((size_t)snprintf(out, sz, "%s/%s", strcmp(dir, "/") ? dir : "", s->name) >= sz)
        return -ENAMETOOLONG;
    return 0;
}

/* Judge a path the call would change: 0, or -EROFS with the verdict. */
static int judge(const struct fs_perform_ctx *c, const char *path, bool moves, struct wresp *out)
{
    snprintf(out->path, sizeof(out->path), "%s", path);
    if (!fs_ll_writable(c->fp, c->tmpdir, path)) {
        bool prot = false;

        for (size_t i = 0; i < c->fp->n_protected; i++)
            if (pol_path_within(path, c->fp->protected_paths[i]))
                prot = true;
        out->verdict = prot ? WREQ_PROTECTED : WREQ_OUTSIDE;
        return -EROFS;
    }
    if (moves && fs_ll_holds_protected(c->fp, path)) {
        out->verdict = WREQ_PROTECTED;
        return -EROFS;
    }
    return 0;
}

/* An object's own path, for calls on a descriptor or a procfs link: one
 * that names no file (a pipe, an unlinked file with no other name) changes
 * nothing anyone will run later. One whose path the kernel cannot give is
 * refused: a file outside the write roots more than PATH_MAX deep is still
 * outside them (Landlock covers none of chmod, chown, utimes, xattrs). */
static int judge_object(const struct fs_perform_ctx *c, int obj, struct wresp *out)
{
    char path[PATH_MAX];
    struct stat st;
    int rc = fd_path(obj, path, sizeof(path));

    if (rc > 0)
        return 0;
    if (rc < 0) {
        snprintf(out->path, sizeof(out->path), "(a path the kernel cannot give: %s)",
                 strerror(-rc));
        out->verdict = WREQ_OUTSIDE;
        return -EROFS;
    }
    if (deleted(path)) {
        if (fstat(obj, &st) == 0 && st.st_nlink == 0)
            return 0;
        snprintf(out->path, sizeof(out->path), "%s", path);
        out->verdict = WREQ_OUTSIDE;
        return -EROFS;
    }
    return judge(c, path, false, out);
}

static bool exists(const struct spot *s, struct stat *st)
{
    return fstatat(s->parent, s->name, st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The object at a spot (O_PATH, not followed: the walk followed what the
 * call follows). */
static int spot_object(const struct spot *s)
{
    if (s->obj >= 0)
        return fcntl(s->obj, F_DUPFD_CLOEXEC, 0);
    return openat(s->parent, s->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

static int via_proc(int fd, char *buf, size_t sz)
{
    return snprintf(buf, sz, "/proc/self/fd/%d", fd) >= (int)sz ? -1 : 0;
}

/* A pseudo-terminal slave (Unix98: majors 136-143): the helper cannot open
 * one (Landlock gives no right on /dev/pts, the host's, where every
 * terminal of the user is), the supervisor may. Its index, or -1. */
static int pty_index(int obj)
{
    struct stat st;

    if (fstat(obj, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) < 136 ||
        major(st.st_rdev) > 143)
        return -1;
    return (int)((major(st.st_rdev) - 136) * 256 + minor(st.st_rdev));
}

static int pty_answer(int index, struct wresp *out)
{
    out->verdict = WREQ_PTY;
    snprintf(out->path, sizeof(out->path), "/dev/pts/%d", index);
    return index;
}

/* A character device the ruleset lets the command write (namespace mode's
 * /dev holds only those). */
static bool writable_device(const struct fs_perform_ctx *c, int obj)
{
    char path[PATH_MAX];
    struct stat st;

    if (!c->ll || fstat(obj, &st) < 0 || !S_ISCHR(st.st_mode))
        return false;
    if (fd_path(obj, path, sizeof(path)) != 0 || !pol_path_within(path, "/dev"))
        return false;
    for (size_t i = 0; i < c->ll->n; i++)
        if ((c->ll->rules[i].access & FS_LL_WRITE_FILE) &&
            pol_path_within(c->ll->rules[i].path, "/dev") &&
            pol_path_within(path, c->ll->rules[i].path))
            return true;
    return false;
}

static int do_open(const struct fs_perform_ctx *c, const struct wreq *rq, struct spot *s,
                   struct wresp *out, int *fd_out)
{
    int flags = (int)rq->flags | O_CLOEXEC;
    bool tmpfile = (flags & __O_TMPFILE) == __O_TMPFILE, there;
    struct stat st;
    char path[PATH_MAX];
    int rc, fd;

    if (s->obj >= 0 || tmpfile) {
        _cleanup_close_ int obj = spot_object(s);
        char link[64];

        if (obj < 0)
            return -errno;
        /* A procfs link's object, or the directory an unnamed file is
         * made in (judged as a name in it). */
        if (!tmpfile && pty_index(obj) >= 0)
            return pty_answer(pty_index(obj), out);
        if (!tmpfile && writable_device(c, obj)) {
            rc = 0;
        } else if (tmpfile) {
            if (fd_path(obj, path, sizeof(path)) != 0 || deleted(path))
                return -ENOENT;
            strncat(path, "/.tmpfile", sizeof(path) - strlen(path) - 1);
            rc = judge(c, path, false, out);
        } else {
            rc = judge_object(c, obj, out);
        }
        if (rc < 0)
            return rc;
        if (via_proc(obj, link, sizeof(link)) < 0)
            return -ENAMETOOLONG;
        fd = open(link, tmpfile ? flags : flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW), rq->mode);
        if (fd < 0)
            return -errno;
        *fd_out = fd;
        return 0;
    }
    there = exists(s, &st);
    if (there) {
        if ((flags & O_CREAT) && (flags & O_EXCL))
            return -EEXIST;
        if (S_ISLNK(st.st_mode))
            return -ELOOP; /* O_NOFOLLOW asked, or a link swapped in meanwhile */
        if (S_ISDIR(st.st_mode) && (flags & O_ACCMODE) != O_RDONLY)
            return -EISDIR;
    } else if (!(flags & O_CREAT)) {
        return -ENOENT;
    } else if (s->must_dir) {
        return -EISDIR;
    }
    if (there && S_ISCHR(st.st_mode)) {
        _cleanup_close_ int obj = spot_object(s);

        if (obj >= 0 && pty_index(obj) >= 0)
            return pty_answer(pty_index(obj), out);
        if (obj >= 0 && writable_device(c, obj)) {
            fd = openat(s->parent, s->name, flags | O_NOFOLLOW, rq->mode);
            if (fd < 0)
                return -errno;
            *fd_out = fd;
            return 0;
        }
    }
    rc = spot_path(s, path, sizeof(path));
    if (rc == 0)
        rc = judge(c, path, false, out);
    if (rc < 0)
        return rc;
    fd = openat(s->parent, s->name, flags | O_NOFOLLOW, rq->mode);
    if (fd < 0)
        return -errno;
    *fd_out = fd;
    return 0;
}

/* A call on an existing object (chmod, chown, utimes, xattrs, truncate). */
static int on_object(const struct fs_perform_ctx *c, const struct wreq *rq, struct spot *s,
                     struct wresp *out)
{
    _cleanup_close_ int obj = -1;
    char link[PATH_MAX + 64];
    struct stat st;
    bool islink;
    int rc;

    obj = spot_object(s);
    if (obj < 0)
        return -errno;
    if (fstat(obj, &st) < 0)
        return -errno;
    if (s->must_dir && !S_ISDIR(st.st_mode))
        return -ENOTDIR;
    islink = S_ISLNK(st.st_mode);
    if (s->obj >= 0 || rq->at == WREQ_AT_OBJECT) {
        rc = judge_object(c, obj, out);
    } else {
        char path[PATH_MAX];

        rc = spot_path(s, path, sizeof(path));
        if (rc == 0)
            rc = judge(c, path, false, out);
    }
    if (rc < 0)
        return rc;
    /* A symlink itself (not followed): by its name in the pinned
     * directory; anything else through the pinned object. */
    if (islink && s->obj < 0)
        snprintf(link, sizeof(link), "/proc/self/fd/%d/%s", s->parent, s->name);
    else
        via_proc(obj, link, sizeof(link));
    switch ((enum wreq_op)rq->op) {
    case WREQ_TRUNCATE: {
        int fd;

        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        if (!S_ISREG(st.st_mode))
            return -EINVAL;
        fd = open(link, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        rc = ftruncate(fd, (off_t)rq->arg) < 0 ? -errno : 0;
        close(fd);
        return rc;
    }
    case WREQ_CHMOD:
        if (islink)
            return -EOPNOTSUPP;
        return fchmodat(AT_FDCWD, link, rq->mode, 0) < 0 ? -errno : 0;
    case WREQ_CHOWN:
        return fchownat(obj, "", (uid_t)(rq->arg & 0xffffffffu), (gid_t)(rq->arg >> 32),
                        AT_EMPTY_PATH) < 0
                   ? -errno
                   : 0;
    case WREQ_UTIMENS: {
        struct timespec ts[2] = { { rq->times[0], rq->times[1] }, { rq->times[2], rq->times[3] } };

        return utimensat(AT_FDCWD, link, rq->has_times ? ts : NULL,
                         islink ? AT_SYMLINK_NOFOLLOW : 0) < 0
                   ? -errno
                   : 0;
    }
    case WREQ_SETXATTR: {
        const char *name = rq->data, *value = rq->data + strlen(rq->data) + 1;

        return (islink ? lsetxattr : setxattr)(link, name, value, rq->value_len, (int)rq->flags) < 0
                   ? -errno
                   : 0;
    }
    case WREQ_REMOVEXATTR:
        return (islink ? lremovexattr : removexattr)(link, rq->data) < 0 ? -errno : 0;
    case WREQ_OPEN:
    case WREQ_MKDIR:
    case WREQ_MKNOD:
    case WREQ_UNLINK:
    case WREQ_RENAME:
    case WREQ_LINK:
    case WREQ_SYMLINK:
    case WREQ_COUNT:
        break;
    }
    return -ENOSYS;
}

/* A call that makes a new name (mkdir, mknod, symlink, link's second). */
static int creates(const struct fs_perform_ctx *c, struct spot *s, struct wresp *out)
{
    struct stat st;
    char path[PATH_MAX];
    int rc;

    if (s->obj >= 0 || exists(s, &st))
        return -EEXIST;
    rc = spot_path(s, path, sizeof(path));
    if (rc == 0)
        rc = judge(c, path, false, out);
    return rc;
}

/* A call that removes or moves a name. */
static int moves(const struct fs_perform_ctx *c, struct spot *s, bool must_exist, struct wresp *out)
{
    struct stat st;
    char path[PATH_MAX];
    int rc;

    if (s->obj >= 0)
        return -EBUSY; /* ".", "..", or a procfs link */
    if (!exists(s, &st)) {
        if (must_exist)
            return -ENOENT;
    }
    rc = spot_path(s, path, sizeof(path));
    if (rc == 0)
        rc = judge(c, path, true, out);
    return rc;
}

static bool follows(const struct wreq *rq)
{
    return rq->follow != 0;
}

void fs_perform(const struct fs_perform_ctx *c, const struct wreq *rq, int root, const int dir[2],
                struct wresp *out, int *fd_out)
{
    struct spot s[2] = { { .parent = -1, .obj = -1 }, { .parent = -1, .obj = -1 } };
    int rc = 0;

    *fd_out = -1;
    (void)umask((mode_t)rq->umask & 0777);
    memset(out, 0, sizeof(*out));
    out->id = rq->id;
    out->verdict = WREQ_DONE;
    if (rq->at == WREQ_AT_OBJECT) {
        s[0].obj = fcntl(dir[0], F_DUPFD_CLOEXEC, 0);
        if (s[0].obj < 0)
            rc = -errno;
    } else {
        rc = walk(rq, root, dir[0], rq->path[0], follows(rq), &s[0]);
    }
    if (rc == 0 && (rq->op == WREQ_RENAME || rq->op == WREQ_LINK))
        rc = walk(rq, root, dir[1], rq->path[1], false, &s[1]);
    if (rc < 0)
        goto done;
    switch ((enum wreq_op)rq->op) {
    case WREQ_OPEN:
        rc = do_open(c, rq, &s[0], out, fd_out);
        break;
    case WREQ_MKDIR:
        rc = creates(c, &s[0], out);
        if (rc == 0)
            rc = mkdirat(s[0].parent, s[0].name, rq->mode) < 0 ? -errno : 0;
        break;
    case WREQ_MKNOD:
        if (!S_ISREG(rq->mode) && !S_ISFIFO(rq->mode) && !S_ISSOCK(rq->mode) &&
            (rq->mode & S_IFMT) != 0) {
            rc = -EPERM;
            break;
        }
        rc = creates(c, &s[0], out);
        if (rc == 0)
            rc = mknodat(s[0].parent, s[0].name, rq->mode, (dev_t)rq->arg) < 0 ? -errno : 0;
        break;
    case WREQ_SYMLINK:
        rc = creates(c, &s[0], out);
        if (rc == 0)
            rc = symlinkat(rq->data, s[0].parent, s[0].name) < 0 ? -errno : 0;
        break;
    case WREQ_UNLINK:
        rc = moves(c, &s[0], true, out);
        if (rc == 0)
            rc = unlinkat(s[0].parent, s[0].name, (int)rq->flags) < 0 ? -errno : 0;
        break;
    case WREQ_RENAME:
        rc = moves(c, &s[0], true, out);
        if (rc == -EROFS) {
            /* Both names are reported when both are refused, as the
             * observer does in namespace mode. */
            struct wresp second = { 0 };

            if (moves(c, &s[1], false, &second) == -EROFS) {
                out->verdict2 = second.verdict;
                snprintf(out->path2, sizeof(out->path2), "%s", second.path);
            }
        } else if (rc == 0) {
            rc = moves(c, &s[1], false, out);
        }
        if (rc == 0)
            rc = renameat2(s[0].parent, s[0].name, s[1].parent, s[1].name, rq->flags) < 0 ? -errno
                                                                                          : 0;
        break;
    case WREQ_LINK: {
        /* The existing file gets a new name: it must be one the command may
         * change (a protected file linked elsewhere would be writable
         * there). */
        _cleanup_close_ int obj = spot_object(&s[0]);
        char link[64];

        if (obj < 0) {
            rc = -errno;
            break;
        }
        rc = s[0].obj >= 0 ? judge_object(c, obj, out) : moves(c, &s[0], true, out);
        if (rc == 0)
            rc = creates(c, &s[1], out);
        if (rc == 0 && via_proc(obj, link, sizeof(link)) == 0)
            rc = linkat(AT_FDCWD, link, s[1].parent, s[1].name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
        break;
    }
    case WREQ_TRUNCATE:
    case WREQ_CHMOD:
    case WREQ_CHOWN:
    case WREQ_UTIMENS:
    case WREQ_SETXATTR:
    case WREQ_REMOVEXATTR:
        rc = on_object(c, rq, &s[0], out);
        break;
    case WREQ_COUNT:
        rc = -ENOSYS;
        break;
    }
done:
    spot_close(&s[0]);
    spot_close(&s[1]);
    out->result = rc;
}

bool fs_perform_may_block(const struct wreq *rq, int root, const int dir[2])
{
    struct spot s;
    struct stat st;
    bool block = false;

    if (rq->op != WREQ_OPEN || (rq->flags & O_NONBLOCK))
        return false;
    if (rq->at == WREQ_AT_OBJECT)
        return false;
    if (walk(rq, root, dir[0], rq->path[0], follows(rq), &s) < 0)
        return false;
    if (s.obj >= 0)
        block = fstat(s.obj, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
    else
        block = exists(&s, &st) && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
    spot_close(&s);
    return block;
}
