/* Wrappers for the syscalls glibc 2.36 does not wrap (or wraps behind headers
 * that clash with <linux/mount.h>): the new mount API, openat2, pivot_root,
 * pidfd, close_range, clone, keyctl. Header only. */
#pragma once

#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MOUNT_ATTR_SIZE_VER0
#define MOUNT_ATTR_SIZE_VER0 32
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static inline int nf_open_tree(int dfd, const char *path, unsigned flags)
{
    return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static inline int nf_move_mount(int from_dfd, const char *from, int to_dfd, const char *to,
                                unsigned flags)
{
    return (int)syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

static inline int nf_mount_setattr(int dfd, const char *path, unsigned flags,
                                   const struct mount_attr *attr)
{
    return (int)syscall(SYS_mount_setattr, dfd, path, flags, attr, sizeof(*attr));
}

static inline int nf_fsopen(const char *fs, unsigned flags)
{
    return (int)syscall(SYS_fsopen, fs, flags);
}

static inline int nf_fsconfig(int fd, unsigned cmd, const char *key, const void *value, int aux)
{
    return (int)syscall(SYS_fsconfig, fd, cmd, key, value, aux);
}

static inline int nf_fsmount(int fd, unsigned flags, unsigned attrs)
{
    return (int)syscall(SYS_fsmount, fd, flags, attrs);
}

static inline int nf_pivot_root(const char *new_root, const char *put_old)
{
    return (int)syscall(SYS_pivot_root, new_root, put_old);
}

static inline int nf_openat2(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
    struct open_how how = { .flags = flags, .resolve = resolve };

    return (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
}

static inline int nf_close_range(unsigned first, unsigned last, unsigned flags)
{
    return (int)syscall(SYS_close_range, first, last, flags);
}

static inline int nf_pidfd_send_signal(int pidfd, int sig)
{
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static inline int nf_pidfd_open(pid_t pid, unsigned flags)
{
    return (int)syscall(SYS_pidfd_open, pid, flags);
}

/* A new anonymous session keyring, joined by the calling process (libkeyutils'
 * keyctl_join_session_keyring(NULL), without the library). */
static inline long nf_join_new_session_keyring(void)
{
    return syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, (const char *)NULL, 0UL, 0UL, 0UL);
}

/* fork(2) semantics with namespace flags: no new stack, the child returns 0.
 * glibc's cached thread id in the child is stale afterwards, so the child
 * must not use robust or PI mutexes; nothing of ours does. */
static inline pid_t nf_clone(unsigned long flags, int *pidfd)
{
    return (pid_t)syscall(SYS_clone, flags, NULL, pidfd, NULL, 0UL);
}
