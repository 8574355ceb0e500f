#include "fs/mount.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/exec.h"
#include "src/log.h"
#include "src/syscalls.h"
#include "src/util.h"

#define exec fs_exec

/* Destinations are resolved inside the new root and never through a symlink
 * (a planted link must not carry a mount onto the host: bubblewrap
 * GHSA-pxhw-h44j-8pfx). */
#define DST_RESOLVE (RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

const char *fs_rel(const char *path)
{
    while (*path == '/')
        path++;
    return *path ? path : ".";
}

int fs_set_attr(int fd, unsigned attr, bool recursive, const char *what, struct nf_err *err)
{
    struct mount_attr a = { .attr_set = attr };

    if (nf_mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a) < 0)
        return nf_err_sys(err, "mount_setattr %s", what);
    return 0;
}

/* mkdir -p inside a tmpfs of ours; the last component is a directory, or an
 * empty file when leaf_is_file. */
static int make_mount_point(int root, const char *dst, bool leaf_is_file, struct nf_err *err)
{
    char path[PATH_MAX];
    char *p;

    snprintf(path, sizeof(path), "%s", fs_rel(dst));
    for (p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        if (mkdirat(root, path, 0755) < 0 && errno != EEXIST)
            return nf_err_sys(err, "mkdir %s", path);
        *p = '/';
    }
    if (leaf_is_file) {
        int fd = openat(root, path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0444);

        if (fd < 0 && errno != EEXIST)
            return nf_err_sys(err, "create mount point %s", dst);
        if (fd >= 0)
            close(fd);
    } else if (mkdirat(root, path, 0755) < 0 && errno != EEXIST) {
        return nf_err_sys(err, "mkdir %s", dst);
    }
    return 0;
}

static bool is_file(int mnt)
{
    struct stat st;

    return fstat(mnt, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* What open_dst makes a missing mount point as: a directory, a file, or,
 * given the mount's descriptor, what its root is (looked at only then). */
#define LEAF_DIR  (-1)
#define LEAF_FILE (-2)

static int open_dst(struct exec *x, const struct fs_op *op, int like, bool nofollow,
                    struct nf_err *err)
{
    int fd = nf_openat2(x->root, fs_rel(op->dst), O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
                        x->resolve);

    if (fd < 0 && errno == ENOENT && op->create) {
        bool leaf_is_file = like == LEAF_FILE || (like >= 0 && is_file(like));

        /* Following symlinks (a caller's plan): made one name at a time
         * inside the new root, never through the host's. */
        if (!(x->resolve & RESOLVE_NO_SYMLINKS))
            return fs_ensure_dst(x, op, leaf_is_file, err);
        if (make_mount_point(x->root, op->dst, leaf_is_file, err) < 0)
            return -1;
        fd = nf_openat2(x->root, fs_rel(op->dst), O_PATH | O_CLOEXEC, x->resolve);
    }
    if (fd < 0)
        return nf_err_sys(err, "%s %s: open mount point", fs_op_kind_name(op->kind), op->dst);
    return fd;
}

int fs_attach(int mnt, int dst, const struct fs_op *op, struct nf_err *err)
{
    if (nf_move_mount(mnt, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        return nf_err_sys(err, "%s %s: move_mount", fs_op_kind_name(op->kind), op->dst);
    return 0;
}

/* A clone of a host path, opened without following any symlink on the way:
 * the plan resolved it, so a link appearing now is a race to refuse. */
static int clone_src(const char *src, bool recursive, bool link_itself, struct nf_err *err)
{
    _cleanup_close_ int fd =
        nf_openat2(AT_FDCWD, src, O_PATH | O_CLOEXEC | (link_itself ? O_NOFOLLOW : 0),
                   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    int mnt;

    if (fd < 0)
        return nf_err_sys(err, "open %s", src);
    mnt = nf_open_tree(fd, "",
                       AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
                           (recursive ? AT_RECURSIVE : 0));
    if (mnt < 0)
        return nf_err_sys(err, "open_tree %s", src);
    return mnt;
}

static int do_bind(struct exec *x, const struct fs_op *op, unsigned attr, struct nf_err *err)
{
    bool link = op->kind == FS_OP_BIND_LINK;
    _cleanup_close_ int mnt = clone_src(op->src, !link, link, err);
    _cleanup_close_ int dst = -1;

    if (mnt < 0)
        return -1;
    if (fs_set_attr(mnt, attr, !link, op->src, err) < 0)
        return -1;
    dst = open_dst(x, op, mnt, link, err);
    if (dst < 0)
        return -1;
    return fs_attach(mnt, dst, op, err);
}

int fs_new_tmpfs(const char *mode, size_t size, unsigned attr, struct nf_err *err)
{
    _cleanup_close_ int fs = nf_fsopen("tmpfs", FSOPEN_CLOEXEC);
    char bytes[32];
    int mnt;

    if (fs < 0)
        return nf_err_sys(err, "fsopen tmpfs");
    if (size)
        snprintf(bytes, sizeof(bytes), "%zu", size);
    if (nf_fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
        (size && nf_fsconfig(fs, FSCONFIG_SET_STRING, "size", bytes, 0) < 0) ||
        nf_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        return nf_err_sys(err, "tmpfs");
    mnt = nf_fsmount(fs, FSMOUNT_CLOEXEC, attr);
    if (mnt < 0)
        return nf_err_sys(err, "fsmount tmpfs");
    return mnt;
}

static int do_tmpfs(struct exec *x, const struct fs_op *op, const char *mode, unsigned attr,
                    struct nf_err *err)
{
    _cleanup_close_ int mnt = fs_new_tmpfs(mode, 0, attr, err);
    _cleanup_close_ int dst = -1;

    if (mnt < 0)
        return -1;
    dst = open_dst(x, op, LEAF_DIR, false, err);
    if (dst < 0)
        return -1;
    return fs_attach(mnt, dst, op, err);
}

/* An empty read-only file over a denied file, or over a symlink (the
 * kernel mounts a non-directory on any non-directory, a symlink included). */
static int do_mask_file(struct exec *x, const struct fs_op *op, struct nf_err *err)
{
    _cleanup_close_ int mnt =
        nf_open_tree(x->scratch, "empty", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    _cleanup_close_ int dst = -1;

    if (mnt < 0)
        return nf_err_sys(err, "open_tree empty file");
    if (fs_set_attr(mnt, ATTR_RO | MOUNT_ATTR_NOEXEC, false, "empty file", err) < 0)
        return -1;
    dst = open_dst(x, op, LEAF_FILE, op->kind == FS_OP_MASK_LINK, err);
    if (dst < 0)
        return -1;
    return fs_attach(mnt, dst, op, err);
}

static int do_remount_ro(struct exec *x, const struct fs_op *op, struct nf_err *err)
{
    _cleanup_close_ int dst = open_dst(x, op, LEAF_DIR, false, err);

    if (dst < 0)
        return -1;
    return fs_set_attr(dst, MOUNT_ATTR_RDONLY, false, op->dst, err);
}

static int do_dev(struct exec *x, const struct fs_op *op, struct nf_err *err)
{
    _cleanup_close_ int mnt = fs_new_tmpfs("0755", 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
    _cleanup_close_ int dst = -1;
    _cleanup_close_ int dev = -1;

    if (mnt < 0)
        return -1;
    dst = open_dst(x, op, LEAF_DIR, false, err);
    if (dst < 0 || fs_attach(mnt, dst, op, err) < 0)
        return -1;
    dev = nf_openat2(x->root, fs_rel(op->dst), O_PATH | O_DIRECTORY | O_CLOEXEC, x->resolve);
    if (dev < 0)
        return nf_err_sys(err, "open %s", op->dst);
    if (fs_dev_populate(dev, err) < 0)
        return -1;
    /* Nothing in /dev itself is the command's to change; /dev/shm and
     * /dev/pts are their own mounts and stay writable. */
    if (op->flags & FS_F_RO)
        return fs_set_attr(dev, MOUNT_ATTR_RDONLY, false, op->dst, err);
    return 0;
}

/* /proc/keys and /proc/key-users list every key the caller's uid may view,
 * names and sizes included (its Kerberos and token caches), whatever
 * keyring the sandbox joined: an empty file over each. */
static int mask_proc_keys(struct exec *x, int procfd, struct nf_err *err)
{
    static const char *const hidden[] = { "keys", "key-users" };

    for (size_t i = 0; i < NF_ARRAY_SIZE(hidden); i++) {
        _cleanup_close_ int fd = nf_openat2(procfd, hidden[i], O_PATH | O_CLOEXEC | O_NOFOLLOW,
                                            RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
        _cleanup_close_ int mnt = -1;

        if (fd < 0) {
            if (errno == ENOENT)
                continue; /* a kernel without keys */
            return nf_err_sys(err, "open /proc/%s", hidden[i]);
        }
        mnt = nf_open_tree(x->scratch, "empty", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (mnt < 0)
            return nf_err_sys(err, "open_tree empty file");
        if (fs_set_attr(mnt, ATTR_RO | MOUNT_ATTR_NOEXEC, false, "empty file", err) < 0)
            return -1;
        if (nf_move_mount(mnt, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
            return nf_err_sys(err, "mask /proc/%s", hidden[i]);
    }
    return 0;
}

/* A new procfs (made in fs_exec_begin, while the host's was visible), or a
 * bind of the host's where there is no PID namespace of our own; the parts
 * that reach the kernel itself read-only. */
static int do_proc(struct exec *x, const struct fs_op *op, struct nf_err *err)
{
    static const char *const ro[] = { "sys", "sysrq-trigger", "irq", "bus" };
    _cleanup_close_ int host = -1;
    _cleanup_close_ int dst = -1;
    _cleanup_close_ int procfd = -1;
    int mnt = x->proc;

    if (op->flags & FS_F_HOST) {
        /* The first takes the copy made before the scratch covered /proc
         * (a copy made now would carry the scratch stacked on it); a later
         * one copies that, attached by then. */
        if (x->host_proc_attached) {
            host = nf_open_tree(x->host_proc, "",
                                AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
            if (host < 0)
                return nf_err_sys(err, "open_tree /proc");
            mnt = host;
        } else {
            mnt = x->host_proc;
        }
    } else if (mnt < 0) {
        return nf_err_set(err, EINVAL, "%s: only one new /proc per sandbox", op->dst);
    }
    dst = open_dst(x, op, LEAF_DIR, false, err);
    if (dst < 0 || fs_attach(mnt, dst, op, err) < 0)
        return -1;
    if (op->flags & FS_F_HOST) {
        x->host_proc_attached = true;
    } else {
        close(x->proc);
        x->proc = -1;
    }
    procfd = nf_openat2(x->root, fs_rel(op->dst), O_PATH | O_DIRECTORY | O_CLOEXEC, x->resolve);
    if (procfd < 0)
        return nf_err_sys(err, "open %s", op->dst);
    if ((op->flags & FS_F_HIDE_KEYS) && mask_proc_keys(x, procfd, err) < 0)
        return -1;
    for (size_t i = 0; i < NF_ARRAY_SIZE(ro); i++) {
        _cleanup_close_ int fd = -1;
        _cleanup_close_ int sub = -1;

        fd = nf_openat2(procfd, ro[i], O_PATH | O_CLOEXEC | O_NOFOLLOW,
                        RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
        if (fd < 0) {
            if (errno == ENOENT)
                continue;
            return nf_err_sys(err, "open %s/%s", op->dst, ro[i]);
        }
        sub = nf_open_tree(fd, "",
                           AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        if (sub < 0)
            return nf_err_sys(err, "open_tree %s/%s", op->dst, ro[i]);
        if (fs_set_attr(sub, ATTR_RO | MOUNT_ATTR_NOEXEC, true, ro[i], err) < 0)
            return -1;
        if (nf_move_mount(sub, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
            return nf_err_sys(err, "read-only %s/%s", op->dst, ro[i]);
    }
    return 0;
}

static int new_proc(struct nf_err *err)
{
    _cleanup_close_ int fs = nf_fsopen("proc", FSOPEN_CLOEXEC);
    int mnt;

    if (fs < 0)
        return nf_err_sys(err, "fsopen proc");
    if (nf_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
        nf_err_sys(err, "mount a new /proc");
        if (err->code == EPERM)
            nf_err_hint(err, "the kernel refuses a new procfs where /proc is partly masked, as in "
                             "a nested container: run the outer one with --security-opt "
                             "systempaths=unconfined, or see `nsfence doctor`");
        return -1;
    }
    mnt = nf_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (mnt < 0)
        return nf_err_sys(err, "fsmount proc");
    return mnt;
}

/* The scratch tmpfs covers the old root's /proc in this (private) mount
 * namespace: a directory that surely exists, and that the pivot detaches
 * together with the old root. */
static int setup_scratch(struct exec *x, struct nf_err *err)
{
    x->scratch =
        fs_new_tmpfs("0700", 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
    if (x->scratch < 0)
        return -1;
    if (mkdirat(x->scratch, "root", 0755) < 0)
        return nf_err_sys(err, "scratch: mkdir root");
    {
        /* The source of every empty-file mask (denied files, /proc/keys). */
        int fd = openat(x->scratch, "empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);

        if (fd < 0)
            return nf_err_sys(err, "scratch: empty file");
        close(fd);
    }
    if (nf_move_mount(x->scratch, "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH) < 0)
        return nf_err_sys(err, "scratch: move_mount");
    return 0;
}

static int setup_root(struct exec *x, const struct fs_op *op, struct nf_err *err)
{
    _cleanup_close_ int mnt =
        nf_open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);

    if (mnt < 0)
        return nf_err_sys(err, "open_tree /");
    /* Read-only, nosuid and nodev pushed into every submount at once
     * (writable only when the policy has no filesystem rules: bwrap's
     * `--bind / /` still adds nosuid and nodev). */
    if (fs_set_attr(mnt, (op->flags & FS_F_RW) ? ATTR_RW : ATTR_RO, true, "/", err) < 0)
        return -1;
    if (nf_move_mount(mnt, "", x->scratch, "root", MOVE_MOUNT_F_EMPTY_PATH) < 0)
        return nf_err_sys(err, "move_mount new root");
    x->root = steal_fd(&mnt);
    return 0;
}

static int setup_newroot(struct exec *x, struct nf_err *err)
{
    _cleanup_close_ int mnt = fs_new_tmpfs("0755", 0, ATTR_RW, err);

    if (mnt < 0)
        return -1;
    if (nf_move_mount(mnt, "", x->scratch, "root", MOVE_MOUNT_F_EMPTY_PATH) < 0)
        return nf_err_sys(err, "move_mount new root");
    x->root = steal_fd(&mnt);
    return 0;
}

int fs_reopen_root(struct exec *x, struct nf_err *err)
{
    int fd = openat(x->scratch, "root", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return nf_err_sys(err, "open the new root");
    close(x->root);
    x->root = fd;
    return 0;
}

static int run_op(struct exec *x, const struct fs_op *op, size_t index, struct nf_err *err)
{
    switch (op->kind) {
    case FS_OP_ROOT:
        return setup_root(x, op, err);
    case FS_OP_PIN:
        return do_bind(x, op, ATTR_RO, err);
    case FS_OP_TMPFS:
        return do_tmpfs(x, op, "1777", ATTR_RW, err);
    case FS_OP_BIND_RW:
        return do_bind(x, op, ATTR_RW, err);
    case FS_OP_BIND_RO:
    case FS_OP_BIND_LINK:
        return do_bind(x, op, ATTR_RO, err);
    case FS_OP_MASK_DIR:
        return do_tmpfs(x, op, "0755", ATTR_RW, err); /* writable and executable, as srt's */
    case FS_OP_MASK_FILE:
    case FS_OP_MASK_LINK:
        return do_mask_file(x, op, err);
    case FS_OP_REMOUNT_RO:
        return do_remount_ro(x, op, err);
    case FS_OP_DEV:
        return do_dev(x, op, err);
    case FS_OP_PROC:
        return do_proc(x, op, err);
    case FS_OP_NEWROOT:
        return setup_newroot(x, err);
    case FS_OP_BIND:
    case FS_OP_BIND_FD:
    case FS_OP_MKTMPFS:
    case FS_OP_MQUEUE:
    case FS_OP_MKDIR:
    case FS_OP_MKFILE:
    case FS_OP_BIND_DATA:
    case FS_OP_SYMLINK:
    case FS_OP_CHMOD:
    case FS_OP_OVERLAY:
        return fs_ops_run(x, op, index, err);
    }
    return nf_err_set(err, EINVAL, "unknown mount operation");
}

static void exec_close(struct exec *x, size_t n_ops)
{
    if (x->root >= 0)
        close(x->root);
    if (x->scratch >= 0)
        close(x->scratch);
    if (x->proc >= 0)
        close(x->proc);
    if (x->host_proc >= 0)
        close(x->host_proc);
    for (size_t i = 0; x->src && i < n_ops; i++)
        if (x->src[i] >= 0)
            close(x->src[i]);
    free(x->src);
    x->src = NULL;
    for (size_t i = 0; x->layers && i < n_ops; i++) {
        for (int k = 1; x->layers[i] && k <= x->layers[i][0]; k++)
            if (x->layers[i][k] >= 0)
                close(x->layers[i][k]);
        free(x->layers[i]);
    }
    free(x->layers);
    x->layers = NULL;
    x->root = x->scratch = x->proc = x->host_proc = -1;
    umask(x->umask);
}

/* What the plan's /proc ops need made or opened while the host's /proc is
 * still visible. */
static int open_procs(const struct fs_plan *plan, struct exec *x, struct nf_err *err)
{
    bool fresh = false, host = false;

    for (size_t i = 0; i < plan->n; i++)
        if (plan->ops[i].kind == FS_OP_PROC) {
            if (plan->ops[i].flags & FS_F_HOST)
                host = true;
            else
                fresh = true;
        }
    /* procfs must be created while the host's /proc is still visible
     * (the kernel refuses a new proc where none is fully visible). */
    if (fresh && (x->proc = new_proc(err)) < 0)
        return -1;
    /* Copied now, with what is mounted below it (a container's masks over
     * /proc/kcore and the like), before the scratch is stacked on it. */
    if (host && (x->host_proc = nf_open_tree(
                     AT_FDCWD, "/proc", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE)) < 0)
        return nf_err_sys(err, "open_tree /proc");
    return 0;
}

/* Out of line: its buffer stays off the stack of every op below. */
static __attribute__((noinline)) void log_op(const struct fs_op *op)
{
    char line[PATH_MAX * 2 + 64];

    fs_op_format(op, line, sizeof(line));
    log_verbose("mount: %s", line);
}

static int run_until(const struct fs_plan *plan, const uint8_t *skip, struct exec *x,
                     bool stop_at_placeholder, struct nf_err *err)
{
    for (; x->next < plan->n; x->next++) {
        const struct fs_op *op = &plan->ops[x->next];

        if (stop_at_placeholder && op->ph != FS_PH_NONE)
            return 0;
        if (skip && skip[x->next])
            continue;
        if (log_verbose_enabled)
            log_op(op);
        if (run_op(x, op, x->next, err) < 0) {
            /* What the scan found below the top of a write root may vanish
             * before its mount (a build removing its directories): the scan
             * is a snapshot, and a name absent now is unprotected in any
             * case. Explicit denies and the top stay fail-closed. */
            /* EINVAL: what is there now is another kind than was planned
             * (a directory swapped for a symlink). */
            if (op->optional && (err->code == ENOENT || err->code == ENOTDIR ||
                                 err->code == ELOOP || err->code == EINVAL)) {
                log_v("mount: %s skipped: it vanished or changed meanwhile", op->dst);
                err->msg[0] = '\0';
                err->code = 0;
                continue;
            }
            return -1;
        }
    }
    return 0;
}

int fs_exec_begin(const struct fs_plan *plan, struct exec *x, struct nf_err *err)
{
    *x = (struct exec){ .root = -1,
                        .scratch = -1,
                        .proc = -1,
                        .host_proc = -1,
                        .resolve = plan->dst_follow ? RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
                                                    : DST_RESOLVE,
                        /* What the plan makes has exactly the modes it says. */
                        .umask = umask(0) };
    /* Nothing we mount may propagate back to the host, and nothing the host
     * mounts later may appear unprotected inside. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        nf_err_sys(err, "make / private");
        /* The first mount in the new namespace: the caller names the cause. */
        x->mounts_refused = err->code == EPERM || err->code == EACCES;
        exec_close(x, plan->n);
        return -1;
    }
    if (open_procs(plan, x, err) < 0 || fs_ops_open_sources(plan, x, err) < 0 ||
        setup_scratch(x, err) < 0 || run_until(plan, NULL, x, true, err) < 0) {
        exec_close(x, plan->n);
        return -1;
    }
    return 0;
}

int fs_exec_finish(const struct fs_plan *plan, const uint8_t *skip, struct exec *x,
                   struct nf_err *err)
{
    int rc = -1;

    if (run_until(plan, skip, x, false, err) < 0 || fs_reopen_root(x, err) < 0)
        goto out;
    /* Pivot into the new root and detach the old one with the scratch
     * space: nothing inside can name them afterwards. */
    if (fchdir(x->root) < 0)
        goto sys;
    if (nf_pivot_root(".", ".") < 0) {
        nf_err_sys(err, "pivot_root");
        goto out;
    }
    if (umount2(".", MNT_DETACH) < 0) {
        nf_err_sys(err, "detach old root");
        goto out;
    }
    if (chdir("/") < 0)
        goto sys;
    rc = 0;
    goto out;
sys:
    nf_err_sys(err, "enter new root");
out:
    exec_close(x, plan->n);
    return rc;
}

int fs_plan_execute(const struct fs_plan *plan, struct nf_err *err)
{
    struct exec x;

    if (fs_exec_begin(plan, &x, err) < 0)
        return -1;
    return fs_exec_finish(plan, NULL, &x, err);
}
