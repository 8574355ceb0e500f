/* A minimal /dev, as bubblewrap's --dev builds it: the harmless device nodes
 * bound from the host, the usual links, a private devpts instance and a
 * private /dev/shm. No disks, no /dev/mem, no console. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/mount.h"
#include "src/log.h"
#include "src/syscalls.h"
#include "src/util.h"

/* host is "/dev/NAME": the host's node, bound at NAME in devfd. */
static int bind_node(int devfd, const char *host, struct nf_err *err)
{
    const char *name = host + strlen("/dev/");
    _cleanup_close_ int mnt = -1;
    _cleanup_close_ int dst = -1;

    mnt = nf_open_tree(AT_FDCWD, host, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (mnt < 0) {
        if (errno == ENOENT) {
            log_v("%s: not on the host, skipped", host);
            return 0;
        }
        return nf_err_sys(err, "open_tree %s", host);
    }
    {
        struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC };

        if (nf_mount_setattr(mnt, "", AT_EMPTY_PATH, &a) < 0)
            return nf_err_sys(err, "mount_setattr %s", host);
    }
    /* Our own tmpfs: the file just made is the mount point, by its fd. */
    dst = openat(devfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (dst < 0)
        return nf_err_sys(err, "create %s", host);
    if (nf_move_mount(mnt, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        return nf_err_sys(err, "bind %s", host);
    return 0;
}

static int mount_fs(int devfd, const char *dir, const char *type, const char *const *opts,
                    unsigned attr, struct nf_err *err)
{
    _cleanup_close_ int fs = -1;
    _cleanup_close_ int mnt = -1;
    _cleanup_close_ int dst = -1;

    if (mkdirat(devfd, dir, 0755) < 0)
        return nf_err_sys(err, "mkdir /dev/%s", dir);
    fs = nf_fsopen(type, FSOPEN_CLOEXEC);
    if (fs < 0)
        return nf_err_sys(err, "fsopen %s", type);
    for (; opts && opts[0]; opts += 2) {
        int rc = opts[1] ? nf_fsconfig(fs, FSCONFIG_SET_STRING, opts[0], opts[1], 0)
                         : nf_fsconfig(fs, FSCONFIG_SET_FLAG, opts[0], NULL, 0);

        if (rc < 0)
            return nf_err_sys(err, "%s option %s", type, opts[0]);
    }
    if (nf_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        return nf_err_sys(err, "create %s for /dev/%s", type, dir);
    mnt = nf_fsmount(fs, FSMOUNT_CLOEXEC, attr);
    if (mnt < 0)
        return nf_err_sys(err, "fsmount /dev/%s", dir);
    dst = openat(devfd, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dst < 0)
        return nf_err_sys(err, "open /dev/%s", dir);
    if (nf_move_mount(mnt, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        return nf_err_sys(err, "mount /dev/%s", dir);
    return 0;
}

int fs_dev_populate(int devfd, struct nf_err *err)
{
    static const char *const nodes[] = { "/dev/null",   "/dev/zero",    "/dev/full",
                                         "/dev/random", "/dev/urandom", "/dev/tty" };
    static const char *const links[][2] = {
        { "fd", "/proc/self/fd" },       { "stdin", "/proc/self/fd/0" },
        { "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
        { "ptmx", "pts/ptmx" },          { "core", "/proc/kcore" },
    };
    /* A new devpts instance: the command's ptys are its own, and it cannot
     * open the caller's. */
    static const char *const pts[] = {
        "newinstance", NULL, "ptmxmode", "0666", "mode", "0620", NULL
    };
    static const char *const shm[] = { "mode", "1777", NULL };
    _cleanup_close_ int dir = openat(devfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (dir < 0)
        return nf_err_sys(err, "open /dev");
    for (size_t i = 0; i < NF_ARRAY_SIZE(nodes); i++)
        if (bind_node(dir, nodes[i], err) < 0)
            return -1;
    for (size_t i = 0; i < NF_ARRAY_SIZE(links); i++)
        if (symlinkat(links[i][1], dir, links[i][0]) < 0)
            return nf_err_sys(err, "symlink /dev/%s", links[i][0]);
    if (mount_fs(dir, "pts", "devpts", pts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err) < 0)
        return -1;
    return mount_fs(dir, "shm", "tmpfs", shm, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
}
