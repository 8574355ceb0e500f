/* Landlock mode: one write-intent call the supervisor (seccomp/supervisor.c)
 * took from the command, as plain data, for the helper that performs it
 * (fs/perform.c) inside the command's own Landlock domain, with its
 * credentials. Paths are copied out of the command's memory once, here;
 * nothing is re-read from it. Descriptors travel beside the message
 * (SCM_RIGHTS): the command's root, the directory each path is relative to,
 * or the object a descriptor call acts on. */
#pragma once

#include <limits.h>
#include <stdint.h>

enum wreq_op {
    WREQ_OPEN,        /* flags, mode: the file descriptor comes back */
    WREQ_MKDIR,       /* mode */
    WREQ_MKNOD,       /* mode, arg: dev (regular files and FIFOs only) */
    WREQ_UNLINK,      /* flags: AT_REMOVEDIR */
    WREQ_RENAME,      /* flags: renameat2's */
    WREQ_LINK,        /* flags: AT_SYMLINK_FOLLOW */
    WREQ_SYMLINK,     /* data: the target */
    WREQ_TRUNCATE,    /* arg: length */
    WREQ_CHMOD,       /* mode */
    WREQ_CHOWN,       /* arg: uid | gid << 32 */
    WREQ_UTIMENS,     /* times (has_times 0: now) */
    WREQ_SETXATTR,    /* data: name, NUL, value (value_len bytes); flags: XATTR_* */
    WREQ_REMOVEXATTR, /* data: name */
    WREQ_COUNT,
};

#define WREQ_DATA_MAX (65536 + 256)

/* Where the object a call acts on is found. */
enum wreq_at {
    WREQ_AT_PATH,   /* path[i] beneath fd dir[i] (or the root, absolute) */
    WREQ_AT_OBJECT, /* the descriptor itself (fchmod, fchown, fsetxattr, futimens) */
};

struct wreq {
    uint64_t id; /* the notification's */
    uint32_t op;
    uint32_t at;
    int32_t pid; /* the calling thread, for /proc/self in its paths */
    int32_t tgid;
    uint32_t follow; /* the last component is followed when a symlink */
    uint32_t flags;
    uint32_t mode;
    uint32_t has_times;
    uint32_t umask; /* the command's, for what is created */
    uint64_t arg;
    int64_t times[4];
    uint32_t value_len;
    uint32_t data_len;
    char path[2][PATH_MAX];
    char data[WREQ_DATA_MAX];
};

/* How the helper judged the path (for the violation report). */
enum wreq_verdict {
    WREQ_DONE,      /* performed: result is the call's */
    WREQ_OUTSIDE,   /* outside every write root */
    WREQ_PROTECTED, /* a protected path, or one that holds one */
    WREQ_PTY,       /* a pseudo-terminal's slave, result its index: opened by the
                       supervisor only if the caller holds its master */
};

struct wresp {
    uint64_t id;
    int32_t result; /* >= 0, or -errno */
    uint32_t verdict;
    char path[PATH_MAX]; /* what was judged, as the kernel names it */
    /* A rename's second path, when it too was refused ("" otherwise). */
    uint32_t verdict2;
    char path2[PATH_MAX];
};
