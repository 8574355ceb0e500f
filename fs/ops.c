/* The executor's caller-described operations: what a command line like
 * bubblewrap's asks for op by op, on an empty tmpfs root (FS_OP_NEWROOT).
 * Destinations resolve inside the new root and follow its symlinks without
 * ever leaving it (openat2 RESOLVE_IN_ROOT): a link planted in a bound
 * directory cannot carry a mount or a new file onto the host's tree
 * (bubblewrap's GHSA-pxhw-h44j-8pfx). Missing parents are made on the way,
 * as bubblewrap makes them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/exec.h"
#include "src/syscalls.h"
#include "src/util.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static int clone_fd(int fd)
{
    return nf_open_tree(fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
}

static int clone_path(const char *path)
{
    _cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);

    return fd < 0 ? -1 : clone_fd(fd);
}

/* What an fd the caller opened refers to: its mount belongs to the
 * caller's namespace, not to ours, and cannot be copied itself. The same
 * path in ours is, and must still be the same file (EXDEV otherwise: a
 * race, or an fd the path no longer reaches). */
static int clone_fd_path(int fd)
{
    char link[64], path[PATH_MAX];
    struct stat want, got;
    ssize_t n;
    int mnt;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof(path) - 1);
    if (n < 0 || fstat(fd, &want) < 0)
        return -1;
    path[n] = '\0';
    mnt = clone_path(path);
    if (mnt < 0)
        return -1;
    if (fstat(mnt, &got) < 0 || got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
        close(mnt);
        errno = EXDEV;
        return -1;
    }
    return mnt;
}

/* An overlay's directories, as the caller names them: the lower ones, then
 * its upper and work directories (-1 where it has none). */
static int open_layers(const struct fs_op *op, int **out, struct nf_err *err)
{
    const char *extra[2] = { op->upper, op->work };
    size_t n = op->n_lower + 2;
    int *v = malloc((n + 1) * sizeof(*v));

    if (!v)
        return nf_err_sys(err, "out of memory");
    v[0] = (int)n;
    for (size_t k = 0; k < n; k++)
        v[k + 1] = -1;
    *out = v;
    for (size_t k = 0; k < n; k++) {
        const char *path = k < op->n_lower ? op->lower[k] : extra[k - op->n_lower];

        if (!path)
            continue;
        v[k + 1] = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (v[k + 1] < 0)
            return nf_err_sys(err, "Can't find source path %s", path);
    }
    return 0;
}

int fs_ops_open_sources(const struct fs_plan *plan, struct fs_exec *x, struct nf_err *err)
{
    bool any = false;

    for (size_t i = 0; i < plan->n && !any; i++)
        any = plan->ops[i].kind == FS_OP_BIND || plan->ops[i].kind == FS_OP_BIND_FD ||
              plan->ops[i].kind == FS_OP_OVERLAY;
    if (!any)
        return 0;
    x->src = malloc(plan->n * sizeof(*x->src));
    x->layers = calloc(plan->n, sizeof(*x->layers));
    if (!x->src || !x->layers)
        return nf_err_sys(err, "out of memory");
    for (size_t i = 0; i < plan->n; i++)
        x->src[i] = -1;
    for (size_t i = 0; i < plan->n; i++) {
        const struct fs_op *op = &plan->ops[i];

        if (op->kind == FS_OP_OVERLAY) {
            if (open_layers(op, &x->layers[i], err) < 0)
                return -1;
            continue;
        }
        if (op->kind == FS_OP_BIND_FD) {
            x->src[i] = clone_fd_path(op->fd);
            if (x->src[i] < 0)
                return nf_err_sys(err, "Can't bind mount fd %d on %s", op->fd, op->dst);
            continue;
        }
        if (op->kind != FS_OP_BIND)
            continue;
        /* A host path, taken as the caller names it: its symlinks are the
         * caller's own to follow. Copied now, with whatever is mounted
         * below it, before anything of ours is mounted in this namespace. */
        x->src[i] = clone_path(op->src);
        if (x->src[i] < 0 && !(errno == ENOENT && (op->flags & FS_F_TRY)))
            return nf_err_sys(err, "Can't find source path %s", op->src);
    }
    return 0;
}

/* The mode of a parent made on the way: 0755, without the group's or the
 * others' bits where the op's own mode gives them none. An op without a
 * mode counts as 0 here, as in bubblewrap: the parents of a bind are 0700. */
static mode_t parent_mode(const struct fs_op *op)
{
    unsigned perms = op->has_perms ? op->perms : 0;
    mode_t m = 0755;

    if (!(perms & 0070))
        m &= ~(mode_t)0050;
    if (!(perms & 0007))
        m &= ~(mode_t)0005;
    return m;
}

/* The directory dst lies in, made as needed; leaf gets dst's last name. */
static int open_parent(struct fs_exec *x, const struct fs_op *op, char *leaf, size_t leafsz,
                       struct nf_err *err)
{
    char path[PATH_MAX];
    size_t len;
    char *slash;
    int dir;

    if (snprintf(path, sizeof(path), "%s", fs_rel(op->dst)) >= (int)sizeof(path))
        return nf_err_set(err, ENAMETOOLONG, "%s: path too long", op->dst);
    for (len = strlen(path); len > 1 && path[len - 1] == '/'; len--)
        path[len - 1] = '\0';
    slash = strrchr(path, '/');
    if (snprintf(leaf, leafsz, "%s", slash ? slash + 1 : path) >= (int)leafsz)
        return nf_err_set(err, ENAMETOOLONG, "%s: name too long", op->dst);
    dir = fcntl(x->root, F_DUPFD_CLOEXEC, 3);
    if (dir < 0)
        return nf_err_sys(err, "dup");
    if (!slash)
        return dir;
    *slash = '\0';
    /* One component at a time: the prefix resolved inside the root, the
     * next name made in what it resolved to. */
    for (char *p = path;; p++) {
        char *end = strchr(p, '/');
        int next;

        if (end)
            *end = '\0';
        next = nf_openat2(x->root, path, O_PATH | O_DIRECTORY | O_CLOEXEC, x->resolve);
        if (next < 0 && errno == ENOENT && *p) {
            const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

            if (mkdirat(dir, name, parent_mode(op)) < 0 && errno != EEXIST) {
                close(dir);
                return nf_err_sys(err, "Can't mkdir parents for %s", op->dst);
            }
            next = nf_openat2(x->root, path, O_PATH | O_DIRECTORY | O_CLOEXEC, x->resolve);
        }
        if (next < 0) {
            close(dir);
            return nf_err_sys(err, "Can't mkdir parents for %s", op->dst);
        }
        close(dir);
        dir = next;
        if (!end)
            return dir;
        *end = '/';
        p = end;
    }
}

/* dst itself: a directory or an empty file made if missing (a mount point
 * made on the host, inside a bound directory, is 0755 or 0444 there too),
 * then resolved. */
int fs_ensure_dst(struct fs_exec *x, const struct fs_op *op, bool file, struct nf_err *err)
{
    char leaf[NAME_MAX + 1];
    _cleanup_close_ int dir = open_parent(x, op, leaf, sizeof(leaf), err);
    int fd;

    if (dir < 0)
        return -1;
    if (file) {
        fd = openat(dir, leaf, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
        if (fd >= 0)
            close(fd);
        else if (errno != EEXIST)
            return nf_err_sys(err, "Can't create file at %s", op->dst);
    } else if (mkdirat(dir, leaf, 0755) < 0 && errno != EEXIST) {
        return nf_err_sys(err, "Can't mkdir %s", op->dst);
    }
    fd = nf_openat2(x->root, fs_rel(op->dst), O_PATH | O_CLOEXEC, x->resolve);
    if (fd < 0)
        return nf_err_sys(err, file ? "Can't create file at %s" : "Can't mkdir %s", op->dst);
    return fd;
}

static int mount_on(struct fs_exec *x, const struct fs_op *op, int mnt, bool file,
                    struct nf_err *err)
{
    _cleanup_close_ int dst = fs_ensure_dst(x, op, file, err);

    if (dst < 0 || fs_attach(mnt, dst, op, err) < 0)
        return -1;
    /* Mounted over the root itself (--bind / /): what follows resolves in
     * the new top mount, not in the tmpfs under it. */
    return strcmp(fs_rel(op->dst), ".") == 0 ? fs_reopen_root(x, err) : 0;
}

static bool is_dir(int fd)
{
    struct stat st;

    return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A recursive copy (mnt), nosuid and (unless FS_F_DEV) nodev, read-only
 * on every submount with FS_F_RO: flags are only ever added, so the
 * kernel's locked ones stay as they are. */
static int bind_copy(struct fs_exec *x, const struct fs_op *op, int mnt, struct nf_err *err)
{
    unsigned attr = MOUNT_ATTR_NOSUID | (op->flags & FS_F_DEV ? 0 : MOUNT_ATTR_NODEV) |
                    (op->flags & FS_F_RO ? MOUNT_ATTR_RDONLY : 0);

    if (fs_set_attr(mnt, attr, true, op->dst, err) < 0)
        return -1;
    return mount_on(x, op, mnt, !is_dir(mnt), err);
}

static int do_tmpfs(struct fs_exec *x, const struct fs_op *op, struct nf_err *err)
{
    char mode[16];
    _cleanup_close_ int mnt = -1;

    snprintf(mode, sizeof(mode), "%o", op->has_perms ? op->perms : 0755);
    mnt = fs_new_tmpfs(mode, op->size, ATTR_RW, err);
    if (mnt < 0)
        return nf_err_prefix(err, "Can't mount tmpfs on %s", op->dst);
    return mount_on(x, op, mnt, false, err);
}

static int do_mqueue(struct fs_exec *x, const struct fs_op *op, struct nf_err *err)
{
    _cleanup_close_ int fs = nf_fsopen("mqueue", FSOPEN_CLOEXEC);
    _cleanup_close_ int mnt = -1;

    if (fs < 0 || nf_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
        (mnt = nf_fsmount(fs, FSMOUNT_CLOEXEC, 0)) < 0)
        return nf_err_sys(err, "Can't mount mqueue on %s", op->dst);
    return mount_on(x, op, mnt, false, err);
}

static int do_mkdir(struct fs_exec *x, const struct fs_op *op, struct nf_err *err)
{
    char leaf[NAME_MAX + 1];
    _cleanup_close_ int dir = open_parent(x, op, leaf, sizeof(leaf), err);
    _cleanup_close_ int fd = -1;

    if (dir < 0)
        return -1;
    if (mkdirat(dir, leaf, op->has_perms ? op->perms : 0755) == 0)
        return 0;
    if (errno != EEXIST)
        return nf_err_sys(err, "Can't mkdir %s", op->dst);
    /* An existing directory is left as it is. */
    fd = nf_openat2(x->root, fs_rel(op->dst), O_PATH | O_DIRECTORY | O_CLOEXEC, x->resolve);
    if (fd < 0)
        return nf_err_sys(err, "Can't mkdir %s", op->dst);
    return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = write(fd, data, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int do_mkfile(struct fs_exec *x, const struct fs_op *op, struct nf_err *err)
{
    char leaf[NAME_MAX + 1];
    struct stat st;
    _cleanup_close_ int dir = open_parent(x, op, leaf, sizeof(leaf), err);
    _cleanup_close_ int fd = -1;

    if (dir < 0)
        return -1;
    /* Non-blocking: a FIFO planted there must not hang the setup. */
    fd = openat(dir, leaf, O_CREAT | O_TRUNC | O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                op->has_perms ? op->perms : 0666);
    if (fd < 0)
        return nf_err_sys(err, "Can't create file at %s", op->dst);
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return nf_err_set(err, EEXIST, "Can't create file at %s: not a regular file", op->dst);
    if (write_all(fd, op->data, op->len) < 0)
        return nf_err_sys(err, "Can't write data to file %s", op->dst);
    return 0;
}

/* The data in a file of its own on the scratch space (unreachable from the
 * sandbox), bound onto dst and unlinked: the mount keeps it alive. */
static int do_bind_data(struct fs_exec *x, const struct fs_op *op, size_t index, struct nf_err *err)
{
    char name[32];
    _cleanup_close_ int fd = -1;
    _cleanup_close_ int mnt = -1;
    int rc;

    snprintf(name, sizeof(name), "data-%zu", index);
    fd = openat(x->scratch, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
                op->has_perms ? op->perms : 0600);
    if (fd < 0)
        return nf_err_sys(err, "Can't create tmpfile for %s", op->dst);
    if (write_all(fd, op->data, op->len) < 0) {
        (void)unlinkat(x->scratch, name, 0);
        return nf_err_sys(err, "Can't write data to file %s", op->dst);
    }
    mnt = nf_open_tree(x->scratch, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (mnt < 0) {
        (void)unlinkat(x->scratch, name, 0);
        return nf_err_sys(err, "Can't bind mount data on %s", op->dst);
    }
    {
        /* The scratch space is noexec; the data (a script, say) is not. */
        struct mount_attr a = { .attr_set = ATTR_RW | (op->flags & FS_F_RO ? MOUNT_ATTR_RDONLY : 0),
                                .attr_clr = MOUNT_ATTR_NOEXEC };

        rc = nf_mount_setattr(mnt, "", AT_EMPTY_PATH, &a);
        if (rc < 0)
            nf_err_sys(err, "mount_setattr %s", op->dst);
    }
    if (rc == 0)
        rc = mount_on(x, op, mnt, true, err);
    /* Mounted, the file lives on: its name on the scratch space goes. */
    (void)unlinkat(x->scratch, name, 0);
    return rc;
}

static int do_symlink(struct fs_exec *x, const struct fs_op *op, struct nf_err *err)
{
    char leaf[NAME_MAX + 1], have[PATH_MAX];
    _cleanup_close_ int dir = open_parent(x, op, leaf, sizeof(leaf), err);
    ssize_t n;

    if (dir < 0)
        return -1;
    if (symlinkat(op->src, dir, leaf) == 0)
        return 0;
    if (errno != EEXIST)
        return nf_err_sys(err, "Can't make symlink at %s", op->dst);
    /* The same link already there is fine (bubblewrap 0.9). */
    n = readlinkat(dir, leaf, have, sizeof(have) - 1);
    if (n < 0)
        return nf_err_set(err, EEXIST,
                          "Can't make symlink at %s: destination exists and is not "
                          "a symlink",
                          op->dst);
    have[n] = '\0';
    if (strcmp(have, op->src) != 0)
        return nf_err_set(err, EEXIST, "Can't make symlink at %s: existing destination is %s",
                          op->dst, have);
    return 0;
}

static int do_chmod(struct fs_exec *x, const struct fs_op *op, struct nf_err *err)
{
    _cleanup_close_ int fd = nf_openat2(x->root, fs_rel(op->dst), O_PATH | O_CLOEXEC, x->resolve);
    _cleanup_close_ int dir = -1;

    if (fd < 0)
        return nf_err_sys(err, "Can't chmod %#o %s", op->perms, op->dst);
    if (syscall(SYS_fchmodat2, fd, "", op->perms, AT_EMPTY_PATH) == 0)
        return 0;
    /* Before Linux 6.6: a directory can be opened for fchmod. */
    if ((errno == ENOSYS || errno == EINVAL) &&
        (dir = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 &&
        fchmod(dir, op->perms) == 0)
        return 0;
    return nf_err_sys(err, "Can't chmod %#o %s", op->perms, op->dst);
}

/* One overlay layer by its descriptor (Linux 6.13 takes them so: no path to
 * escape or to race). */
static int layer(int fs, const char *key, int fd)
{
    return nf_fsconfig(fs, FSCONFIG_SET_FD, key, NULL, fd);
}

/* Lower layers from the top one down; an upper and a work directory given,
 * or made on the scratch space (FS_F_TMP: invisible, gone with the
 * sandbox), or none (read-only). */
static int do_overlay(struct fs_exec *x, const struct fs_op *op, const int *layers, size_t index,
                      struct nf_err *err)
{
    _cleanup_close_ int fs = nf_fsopen("overlay", FSOPEN_CLOEXEC);
    _cleanup_close_ int upper = -1;
    _cleanup_close_ int work = -1;
    _cleanup_close_ int mnt = -1;
    size_t n = op->n_lower;

    if (fs < 0)
        return nf_err_sys(err, "Can't make overlay mount on %s", op->dst);
    for (size_t k = n; k-- > 0;)
        if (layer(fs, "lowerdir+", layers[1 + k]) < 0)
            return nf_err_sys(err, "Can't make overlay mount on %s (layer %s)", op->dst,
                              op->lower[k]);
    if (op->flags & FS_F_TMP) {
        char up[32], wk[32];

        snprintf(up, sizeof(up), "overlay-upper-%zu", index);
        snprintf(wk, sizeof(wk), "overlay-work-%zu", index);
        if (mkdirat(x->scratch, up, 0755) < 0 || mkdirat(x->scratch, wk, 0755) < 0 ||
            (upper = openat(x->scratch, up, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
            (work = openat(x->scratch, wk, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
            return nf_err_sys(err, "Can't make overlay mount on %s", op->dst);
    }
    if (layers[1 + n] >= 0 && ((upper = dup(layers[1 + n])) < 0 || (work = dup(layers[2 + n])) < 0))
        return nf_err_sys(err, "dup");
    if (upper >= 0 && (layer(fs, "upperdir", upper) < 0 || layer(fs, "workdir", work) < 0))
        return nf_err_sys(err, "Can't make overlay mount on %s (upper and work directories)",
                          op->dst);
    if (nf_fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
        nf_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
        (mnt = nf_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0)
        return nf_err_sys(err, "Can't make overlay mount on %s", op->dst);
    return mount_on(x, op, mnt, false, err);
}

int fs_ops_run(struct fs_exec *x, const struct fs_op *op, size_t index, struct nf_err *err)
{
    switch (op->kind) {
    case FS_OP_BIND:
        if (x->src[index] < 0)
            return 0; /* a --*-try whose source is missing */
        return bind_copy(x, op, x->src[index], err);
    case FS_OP_BIND_FD:
        return bind_copy(x, op, x->src[index], err);
    case FS_OP_MKTMPFS:
        return do_tmpfs(x, op, err);
    case FS_OP_MQUEUE:
        return do_mqueue(x, op, err);
    case FS_OP_MKDIR:
        return do_mkdir(x, op, err);
    case FS_OP_MKFILE:
        return do_mkfile(x, op, err);
    case FS_OP_BIND_DATA:
        return do_bind_data(x, op, index, err);
    case FS_OP_SYMLINK:
        return do_symlink(x, op, err);
    case FS_OP_CHMOD:
        return do_chmod(x, op, err);
    case FS_OP_OVERLAY:
        return do_overlay(x, op, x->layers[index], index, err);
    case FS_OP_ROOT:
    case FS_OP_PIN:
    case FS_OP_TMPFS:
    case FS_OP_BIND_RW:
    case FS_OP_BIND_RO:
    case FS_OP_BIND_LINK:
    case FS_OP_MASK_DIR:
    case FS_OP_MASK_FILE:
    case FS_OP_MASK_LINK:
    case FS_OP_REMOUNT_RO:
    case FS_OP_DEV:
    case FS_OP_PROC:
    case FS_OP_NEWROOT:
        break;
    }
    return nf_err_set(err, EINVAL, "unknown mount operation");
}
