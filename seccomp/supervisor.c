#include "seccomp/supervisor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utime.h>

#include "seccomp/filters.h"
#include "src/log.h"
#include "src/util.h"
#include "src/wreq.h"

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

enum how {
    H_FS,      /* performed by the helper */
    H_CONNECT, /* a socket connected to the proxy, or refused */
    H_ENOSYS,  /* a newer call libc falls back from */
};

/* Where each call keeps what the helper needs; -1: not there. Constant
 * flags for the calls that take none (rmdir is unlinkat's AT_REMOVEDIR). */
struct sys {
    const char *name;
    int nr;
    enum how how;
    enum wreq_op op;
    signed char dir[2], path[2];
    signed char flags, mode, arg, arg2, data, times;
    uint32_t const_flags;
    signed char follow; /* 1: the last component is followed; 0: never; -1: per flags */
    signed char object; /* the argument holding a descriptor acted on itself */
    enum { T_NONE, T_UTIMBUF, T_TIMEVAL, T_TIMESPEC } time_kind;
};

#define F(n, o, d0, p0, fl, fo)                                                                    \
    {                                                                                              \
        .name = n, .how = H_FS, .op = o, .dir = { d0, -1 }, .path = { p0, -1 }, .flags = fl,       \
        .mode = -1, .arg = -1, .arg2 = -1, .data = -1, .times = -1, .follow = fo, .object = -1     \
    }

static struct sys table[] = {
    F("open", WREQ_OPEN, -1, 0, 1, -1),
    F("openat", WREQ_OPEN, 0, 1, 2, -1),
    F("creat", WREQ_OPEN, -1, 0, -1, 1),
    F("truncate", WREQ_TRUNCATE, -1, 0, -1, 1),
    F("unlink", WREQ_UNLINK, -1, 0, -1, 0),
    F("unlinkat", WREQ_UNLINK, 0, 1, 2, 0),
    F("rmdir", WREQ_UNLINK, -1, 0, -1, 0),
    F("mkdir", WREQ_MKDIR, -1, 0, -1, 0),
    F("mkdirat", WREQ_MKDIR, 0, 1, -1, 0),
    F("mknod", WREQ_MKNOD, -1, 0, -1, 0),
    F("mknodat", WREQ_MKNOD, 0, 1, -1, 0),
    F("symlink", WREQ_SYMLINK, -1, 1, -1, 0),
    F("symlinkat", WREQ_SYMLINK, 1, 2, -1, 0),
    F("link", WREQ_LINK, -1, 0, -1, 0),
    F("linkat", WREQ_LINK, 0, 1, 4, -1),
    F("rename", WREQ_RENAME, -1, 0, -1, 0),
    F("renameat", WREQ_RENAME, 0, 1, -1, 0),
    F("renameat2", WREQ_RENAME, 0, 1, 4, 0),
    F("chmod", WREQ_CHMOD, -1, 0, -1, 1),
    F("fchmod", WREQ_CHMOD, -1, -1, -1, 1),
    F("fchmodat", WREQ_CHMOD, 0, 1, -1, 1),
    F("fchmodat2", WREQ_CHMOD, 0, 1, 3, -1),
    F("chown", WREQ_CHOWN, -1, 0, -1, 1),
    F("lchown", WREQ_CHOWN, -1, 0, -1, 0),
    F("fchown", WREQ_CHOWN, -1, -1, -1, 1),
    F("fchownat", WREQ_CHOWN, 0, 1, 4, -1),
    F("utime", WREQ_UTIMENS, -1, 0, -1, 1),
    F("utimes", WREQ_UTIMENS, -1, 0, -1, 1),
    F("futimesat", WREQ_UTIMENS, 0, 1, -1, 1),
    F("utimensat", WREQ_UTIMENS, 0, 1, 3, -1),
    F("setxattr", WREQ_SETXATTR, -1, 0, -1, 1),
    F("lsetxattr", WREQ_SETXATTR, -1, 0, -1, 0),
    F("fsetxattr", WREQ_SETXATTR, -1, -1, -1, 1),
    F("removexattr", WREQ_REMOVEXATTR, -1, 0, -1, 1),
    F("lremovexattr", WREQ_REMOVEXATTR, -1, 0, -1, 0),
    F("fremovexattr", WREQ_REMOVEXATTR, -1, -1, -1, 1),
    { .name = "setxattrat", .how = H_ENOSYS },
    { .name = "removexattrat", .how = H_ENOSYS },
    { .name = "connect", .how = H_CONNECT },
};

/* The per-call extras F() leaves at -1. */
static void complete_table(void)
{
    for (size_t i = 0; i < NF_ARRAY_SIZE(table); i++) {
        struct sys *s = &table[i];
        const char *n = s->name;

        if (s->how != H_FS)
            continue;
        if (strcmp(n, "open") == 0 || strcmp(n, "creat") == 0 || strcmp(n, "mkdir") == 0 ||
            strcmp(n, "mknod") == 0 || strcmp(n, "chmod") == 0 || strcmp(n, "fchmod") == 0)
            s->mode = strcmp(n, "open") == 0 ? 2 : 1;
        else if (strcmp(n, "openat") == 0)
            s->mode = 3;
        else if (strcmp(n, "mkdirat") == 0 || strcmp(n, "mknodat") == 0 ||
                 strcmp(n, "fchmodat") == 0 || strcmp(n, "fchmodat2") == 0)
            s->mode = 2;
        if (strcmp(n, "mknod") == 0)
            s->arg = 2;
        else if (strcmp(n, "mknodat") == 0)
            s->arg = 3;
        else if (strcmp(n, "truncate") == 0)
            s->arg = 1;
        if (strcmp(n, "creat") == 0)
            s->const_flags = O_CREAT | O_WRONLY | O_TRUNC;
        if (strcmp(n, "rmdir") == 0)
            s->const_flags = AT_REMOVEDIR;
        if (strcmp(n, "symlink") == 0 || strcmp(n, "symlinkat") == 0)
            s->data = 0;
        if (s->op == WREQ_LINK || s->op == WREQ_RENAME) {
            bool at = strchr(n, 'a') && strcmp(n, "rename") != 0 && strcmp(n, "link") != 0;

            s->dir[1] = at ? 2 : -1;
            s->path[1] = at ? 3 : 1;
        }
        if (s->op == WREQ_CHOWN) {
            bool at = strcmp(n, "fchownat") == 0;

            s->arg = at ? 2 : 1;
            s->arg2 = at ? 3 : 2;
            if (strcmp(n, "fchown") == 0)
                s->object = 0;
        }
        if (strcmp(n, "fchmod") == 0)
            s->object = 0;
        if (s->op == WREQ_UTIMENS) {
            s->times = strcmp(n, "utime") == 0 || strcmp(n, "utimes") == 0 ? 1 : 2;
            s->time_kind = strcmp(n, "utime") == 0       ? T_UTIMBUF
                           : strcmp(n, "utimensat") == 0 ? T_TIMESPEC
                                                         : T_TIMEVAL;
        }
        if (s->op == WREQ_SETXATTR || s->op == WREQ_REMOVEXATTR) {
            s->data = 1; /* the name; setxattr's value 2, size 3, flags 4 */
            if (s->op == WREQ_SETXATTR)
                s->flags = 4;
            if (n[0] == 'f')
                s->object = 0;
        }
    }
}

struct pending {
    struct pending *next;
    uint64_t id;
    const struct sys *sys;
    uint32_t pid;
    uint32_t cloexec; /* the new descriptor's O_CLOEXEC */
    uint32_t flags;   /* open's */
    int32_t tgid;
};

/* A request the helper's socket had no room for yet, sent in order when it
 * has: the helper may be slow, blocked, or stopped by the command (it is in
 * the command's domain, with its uid), and the event loop that also serves
 * the proxy, the signals and the command's exit must never wait on it. One
 * at most per thread of the command blocked in a call; past OUTGOING_MAX
 * bytes a call is refused (EAGAIN) rather than queued. */
#define OUTGOING_MAX (64u << 20)

struct outgoing {
    struct outgoing *next;
    int fds[3];
    size_t len;
    char msg[]; /* the struct wreq, as far as it is sent */
};

struct sc_supervisor {
    struct ev_loop *loop;
    struct ev_io io;     /* the listener */
    struct ev_io helper; /* the helper's answers; writable while out is not empty */
    struct sc_supervisor_config cfg;
    struct seccomp_notif *req;
    struct seccomp_notif_resp *resp;
    struct seccomp_notif_sizes sizes;
    struct pending *pending;
    struct outgoing *out, **out_tail;
    size_t out_bytes;
    struct wreq *rq;
    bool helper_gone;
};

static int answer(struct sc_supervisor *s, uint64_t id, int64_t val, int error)
{
    memset(s->resp, 0, s->sizes.seccomp_notif_resp);
    s->resp->id = id;
    s->resp->val = val;
    s->resp->error = error;
    if (ioctl(s->io.fd, SECCOMP_IOCTL_NOTIF_SEND, s->resp) < 0 && errno != ENOENT)
        return -1;
    return 0;
}

static int valid(struct sc_supervisor *s, uint64_t id)
{
    return sc_notif_waiting(s->io.fd, id) ? 0 : -ESRCH;
}

/* A NUL-terminated string of the command's at addr, read once. */
static int read_string(int mem, uint64_t addr, char *out, size_t sz)
{
    size_t got = 0;

    if (!addr)
        return -EFAULT;
    while (got < sz) {
        size_t page = 4096 - ((addr + got) & 4095);
        size_t want = page < sz - got ? page : sz - got;
        ssize_t n = pread(mem, out + got, want, (off_t)(addr + got));

        if (n <= 0)
            return -EFAULT;
        if (memchr(out + got, '\0', (size_t)n))
            return 0;
        got += (size_t)n;
    }
    return -ENAMETOOLONG;
}

static int read_bytes(int mem, uint64_t addr, void *out, size_t len)
{
    if (!addr)
        return -EFAULT;
    return pread(mem, out, len, (off_t)addr) == (ssize_t)len ? 0 : -EFAULT;
}

/* The command's directory descriptor fd (AT_FDCWD: its working directory),
 * or the object a descriptor call names, as our own O_PATH descriptor. */
static int their_fd(pid_t pid, int fd)
{
    char p[64];
    int r;

    if (fd == AT_FDCWD)
        snprintf(p, sizeof(p), "/proc/%d/cwd", (int)pid);
    else if (fd < 0)
        return -EBADF;
    else
        snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)pid, fd);
    r = open(p, O_PATH | O_CLOEXEC);
    return r < 0 ? (errno == ENOENT ? -EBADF : -errno) : r;
}

/* The calling thread's umask (the helper applies it to what it creates)
 * and thread group (its /proc/self), from the head of its status file. */
static int their_status(pid_t pid, unsigned *umask_, int32_t *tgid)
{
    char p[64], buf[512];
    const char *u, *t;
    ssize_t n;
    int fd;

    snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
    fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -ESRCH;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -ESRCH;
    buf[n] = '\0';
    u = strstr(buf, "\nUmask:\t");
    t = strstr(buf, "\nTgid:\t");
    if (!u || !t || sscanf(u + 8, "%o", umask_) != 1 || sscanf(t + 7, "%d", tgid) != 1)
        return -ESRCH;
    return 0;
}

static int send_msg(int sock, const void *msg, size_t len, const int *fds, size_t n)
{
    char cbuf[CMSG_SPACE(sizeof(int) * 4)];
    struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
    ssize_t r;

    memset(cbuf, 0, sizeof(cbuf));
    mh.msg_control = cbuf;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
    {
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * n);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
    }
    r = RETRY_EINTR(sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT));
    return r < 0 ? -errno : 0;
}

static void outgoing_free(struct outgoing *o)
{
    for (int i = 0; i < 3; i++)
        if (o->fds[i] >= 0)
            close(o->fds[i]);
    free(o);
}

/* Send what waits, in order, while the socket takes it. */
static int flush_outgoing(struct sc_supervisor *s)
{
    while (s->out) {
        struct outgoing *o = s->out;
        int rc = send_msg(s->cfg.helper_fd, o->msg, o->len, o->fds, 3);

        if (rc == -EAGAIN)
            return 0;
        if (rc < 0)
            return rc;
        s->out = o->next;
        if (!s->out)
            s->out_tail = &s->out;
        s->out_bytes -= o->len;
        outgoing_free(o);
    }
    return ev_io_modify(s->loop, &s->helper, EPOLLIN) < 0 ? -errno : 0;
}

/* Hand rq to the helper now, or after what already waits. */
static int send_to_helper(struct sc_supervisor *s, const struct wreq *rq, const int *fds, size_t n)
{
    size_t len = offsetof(struct wreq, data) + rq->data_len;
    struct outgoing *o;
    int rc;

    if (!s->out) {
        rc = send_msg(s->cfg.helper_fd, rq, len, fds, n);
        if (rc != -EAGAIN)
            return rc;
    }
    if (s->out_bytes + len > OUTGOING_MAX)
        return -EAGAIN;
    o = malloc(sizeof(*o) + len);
    if (!o)
        return -ENOMEM;
    o->next = NULL;
    o->len = len;
    memcpy(o->msg, rq, len);
    for (size_t i = 0; i < 3; i++) {
        o->fds[i] = fcntl(fds[i < n ? i : 0], F_DUPFD_CLOEXEC, 0);
        if (o->fds[i] < 0) {
            rc = -errno;
            while (i-- > 0)
                close(o->fds[i]);
            free(o);
            return rc;
        }
    }
    if (!s->out && ev_io_modify(s->loop, &s->helper, EPOLLIN | EPOLLOUT) < 0) {
        rc = -errno;
        outgoing_free(o);
        return rc;
    }
    *s->out_tail = o;
    s->out_tail = &o->next;
    s->out_bytes += len;
    return 0;
}

/* Decode one file call into s->rq and hand it to the helper. */
static int take_fs(struct sc_supervisor *s, const struct sys *sy, const struct seccomp_notif *n)
{
    struct wreq *rq = s->rq;
    const __u64 *a = n->data.args;
    int fds[4] = { -1, -1, -1, -1 };
    char p[64];
    int mem = -1, rc = 0;
    struct pending *pe;
    uint32_t flags;

    memset(rq, 0, offsetof(struct wreq, path));
    rq->path[0][0] = rq->path[1][0] = '\0';
    rq->id = n->id;
    rq->op = sy->op;
    rq->pid = (int32_t)n->pid;
    rc = their_status((pid_t)n->pid, &rq->umask, &rq->tgid);
    if (rc < 0)
        return rc;
    flags = sy->flags >= 0 ? (uint32_t)a[sy->flags] : sy->const_flags;
    rq->flags = flags;
    rq->mode = sy->mode >= 0 ? (uint32_t)a[sy->mode] : 0;
    if (sy->op == WREQ_OPEN && sy->const_flags)
        rq->flags = sy->const_flags;
    if (sy->arg >= 0)
        rq->arg = a[sy->arg];
    if (sy->op == WREQ_CHOWN)
        rq->arg = (uint32_t)a[sy->arg] | ((uint64_t)(uint32_t)a[sy->arg2] << 32);
    switch (sy->follow) {
    case 1:
        rq->follow = 1;
        break;
    case 0:
        rq->follow = 0;
        break;
    default:
        if (sy->op == WREQ_OPEN)
            rq->follow = !(flags & O_NOFOLLOW) && !((flags & O_CREAT) && (flags & O_EXCL));
        else if (sy->op == WREQ_LINK)
            rq->follow = (flags & AT_SYMLINK_FOLLOW) != 0;
        else
            rq->follow = !(flags & AT_SYMLINK_NOFOLLOW);
        break;
    }
    if (sy->op == WREQ_LINK || sy->op == WREQ_CHOWN || sy->op == WREQ_CHMOD ||
        sy->op == WREQ_UTIMENS)
        rq->flags &= ~(uint32_t)(AT_SYMLINK_NOFOLLOW | AT_SYMLINK_FOLLOW | AT_EMPTY_PATH);
    snprintf(p, sizeof(p), "/proc/%u/mem", n->pid);
    mem = open(p, O_RDONLY | O_CLOEXEC);
    if (mem < 0) {
        rc = -EPERM;
        goto out;
    }
    fds[0] = open(snprintf(p, sizeof(p), "/proc/%u/root", n->pid) > 0 ? p : "/",
                  O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fds[0] < 0) {
        rc = -EPERM;
        goto out;
    }
    rq->at = WREQ_AT_PATH;
    if (sy->object >= 0) {
        rq->at = WREQ_AT_OBJECT;
        fds[1] = their_fd((pid_t)n->pid, (int)a[sy->object]);
        if (fds[1] < 0) {
            rc = fds[1];
            goto out;
        }
    } else {
        for (int i = 0; i < 2 && sy->path[i] >= 0; i++) {
            int dfd = sy->dir[i] >= 0 ? (int)a[sy->dir[i]] : AT_FDCWD;
            uint64_t addr = a[sy->path[i]];

            /* utimensat(fd, NULL, ...) acts on fd itself. */
            if (sy->op == WREQ_UTIMENS && sy->time_kind == T_TIMESPEC && !addr) {
                rq->at = WREQ_AT_OBJECT;
                fds[1] = their_fd((pid_t)n->pid, dfd);
                if (fds[1] < 0) {
                    rc = fds[1];
                    goto out;
                }
                break;
            }
            rc = read_string(mem, addr, rq->path[i], sizeof(rq->path[i]));
            if (rc < 0)
                goto out;
            if (!rq->path[i][0] && (flags & AT_EMPTY_PATH) && sy->flags >= 0 && i == 0) {
                rq->at = WREQ_AT_OBJECT;
                fds[1] = their_fd((pid_t)n->pid, dfd);
                if (fds[1] < 0) {
                    rc = fds[1];
                    goto out;
                }
                if (sy->op != WREQ_LINK)
                    break;
                continue;
            }
            if (rq->path[i][0] == '/')
                continue;
            fds[1 + i] = their_fd((pid_t)n->pid, dfd);
            if (fds[1 + i] < 0) {
                rc = fds[1 + i];
                goto out;
            }
        }
    }
    if (sy->data >= 0) {
        rc = read_string(mem, a[sy->data], rq->data, 256 + (sy->op == WREQ_SYMLINK ? PATH_MAX : 0));
        if (rc < 0)
            goto out;
        rq->data_len = (uint32_t)strlen(rq->data) + 1;
        if (sy->op == WREQ_SETXATTR) {
            size_t size = (size_t)a[sy->data + 2];

            if (size > 65536) {
                rc = -E2BIG;
                goto out;
            }
            rq->value_len = (uint32_t)size;
            if (size && read_bytes(mem, a[sy->data + 1], rq->data + rq->data_len, size) < 0) {
                rc = -EFAULT;
                goto out;
            }
            rq->data_len += (uint32_t)size;
        }
    }
    if (sy->times >= 0 && a[sy->times]) {
        rq->has_times = 1;
        if (sy->time_kind == T_UTIMBUF) {
            struct utimbuf u;

            rc = read_bytes(mem, a[sy->times], &u, sizeof(u));
            rq->times[0] = u.actime;
            rq->times[2] = u.modtime;
        } else if (sy->time_kind == T_TIMEVAL) {
            struct timeval tv[2];

            rc = read_bytes(mem, a[sy->times], tv, sizeof(tv));
            for (int i = 0; rc == 0 && i < 2; i++) {
                if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
                    rc = -EINVAL;
                rq->times[2 * i] = tv[i].tv_sec;
                rq->times[2 * i + 1] = tv[i].tv_usec * 1000;
            }
        } else {
            struct timespec ts[2];

            rc = read_bytes(mem, a[sy->times], ts, sizeof(ts));
            for (int i = 0; i < 2; i++) {
                rq->times[2 * i] = ts[i].tv_sec;
                rq->times[2 * i + 1] = ts[i].tv_nsec;
            }
        }
        if (rc < 0)
            goto out;
    }
    /* Everything read: only now is it known to have come from the thread
     * that made the call (a pid reused meanwhile would not be it). */
    rc = valid(s, n->id);
    if (rc < 0)
        goto out;
    pe = calloc(1, sizeof(*pe));
    if (!pe) {
        rc = -ENOMEM;
        goto out;
    }
    {
        /* Our side: the root, then the directories or object present. */
        int send[3];
        size_t k = 0;

        send[k++] = fds[0];
        send[k++] = fds[1];
        send[k++] = fds[2];
        for (size_t i = 0; i < k; i++)
            if (send[i] < 0)
                send[i] = fds[0]; /* a placeholder the helper ignores */
        rc = s->helper_gone ? -EPERM : send_to_helper(s, rq, send, k);
    }
    if (rc < 0) {
        free(pe);
        goto out;
    }
    pe->id = n->id;
    pe->sys = sy;
    pe->pid = n->pid;
    pe->cloexec = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
    pe->flags = flags;
    pe->tgid = rq->tgid;
    pe->next = s->pending;
    s->pending = pe;
out:
    for (int i = 0; i < 4; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (mem >= 0)
        close(mem);
    return rc;
}

static bool loopback(const struct sockaddr_storage *ss, unsigned *port)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)ss;

        *port = ntohs(in->sin_port);
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)ss;
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

        *port = ntohs(in6->sin6_port);
        return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
               (memcmp(in6->sin6_addr.s6_addr, mapped, 12) == 0 &&
                in6->sin6_addr.s6_addr[12] == 127);
    }
    return false;
}

static void describe(const struct sockaddr_storage *ss, char *host, size_t sz, unsigned *port)
{
    host[0] = '\0';
    *port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)ss;

        inet_ntop(AF_INET, &in->sin_addr, host, (socklen_t)sz);
        *port = ntohs(in->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)ss;

        inet_ntop(AF_INET6, &in6->sin6_addr, host, (socklen_t)sz);
        *port = ntohs(in6->sin6_port);
    }
}

/* The command's socket's file status flags (O_NONBLOCK) and O_CLOEXEC. */
static int their_flags(pid_t pid, int fd, int *flags)
{
    char p[64], line[128];
    FILE *f;
    int found = -EBADF;

    snprintf(p, sizeof(p), "/proc/%d/fdinfo/%d", (int)pid, fd);
    f = fopen(p, "re");
    if (!f)
        return -EBADF;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "flags: %o", flags) == 1) {
            found = 0;
            break;
        }
    fclose(f);
    return found;
}

static int take_connect(struct sc_supervisor *s, const struct seccomp_notif *n)
{
    const __u64 *a = n->data.args;
    struct sockaddr_storage ss = { 0 };
    size_t len = (size_t)a[2];
    char p[64], host[INET6_ADDRSTRLEN];
    unsigned port = 0;
    int mem, fd = (int)a[0], flags = 0, rc;
    int sock;

    if (len > sizeof(ss))
        len = sizeof(ss);
    snprintf(p, sizeof(p), "/proc/%u/mem", n->pid);
    mem = open(p, O_RDONLY | O_CLOEXEC);
    if (mem < 0)
        return -EPERM;
    rc = len < sizeof(sa_family_t) ? -EINVAL : read_bytes(mem, a[1], &ss, len);
    close(mem);
    if (rc < 0)
        return rc;
    if (ss.ss_family == AF_UNIX || ss.ss_family == AF_UNSPEC) {
        /* AF_UNSPEC dissolves an association; a unix socket reaches only
         * what the filter let it be made for. Run as asked only where a
         * switched address could not become a TCP connect. */
        if (s->cfg.unix_connect || ss.ss_family == AF_UNSPEC) {
            if (ss.ss_family == AF_UNSPEC && !s->cfg.unix_connect)
                return -EAFNOSUPPORT;
            memset(s->resp, 0, s->sizes.seccomp_notif_resp);
            s->resp->id = n->id;
            s->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            if (ioctl(s->io.fd, SECCOMP_IOCTL_NOTIF_SEND, s->resp) < 0 && errno != ENOENT)
                return -errno;
            return 1; /* answered */
        }
        return -EPERM;
    }
    if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
        return -EAFNOSUPPORT;
    describe(&ss, host, sizeof(host), &port);
    if (!loopback(&ss, &port) || !port || (port != s->cfg.http_port && port != s->cfg.socks_port)) {
        vio_add_network(s->cfg.violations, host, port,
                        "a direct connection; only the proxy is reachable");
        return loopback(&ss, &port) ? -ECONNREFUSED : -ENETUNREACH;
    }
    rc = their_flags((pid_t)n->pid, fd, &flags);
    if (rc < 0)
        return rc;
    rc = valid(s, n->id);
    if (rc < 0)
        return rc;
    sock = s->cfg.connect_proxy(s->cfg.user, ss.ss_family, port == s->cfg.socks_port);
    if (sock < 0)
        return sock;
    if ((flags & O_NONBLOCK) && fcntl(sock, F_SETFL, O_NONBLOCK) < 0) {
        rc = -errno;
        close(sock);
        return rc;
    }
    {
        struct seccomp_notif_addfd add = { .id = n->id,
                                           .flags = SECCOMP_ADDFD_FLAG_SETFD,
                                           .srcfd = (uint32_t)sock,
                                           .newfd = (uint32_t)fd,
                                           .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0 };

        rc = ioctl(s->io.fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 ? -errno : 0;
    }
    close(sock);
    if (rc < 0)
        return rc;
    return answer(s, n->id, 0, 0) < 0 ? -errno : 1;
}

static const struct sys *lookup(int nr)
{
    for (size_t i = 0; i < NF_ARRAY_SIZE(table); i++)
        if (table[i].nr == nr)
            return &table[i];
    return NULL;
}

static void on_notify(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct sc_supervisor *s = container_of(io, struct sc_supervisor, io);
    const struct sys *sy;
    int rc;

    (void)loop;
    if (revents & (EPOLLHUP | EPOLLERR)) {
        ev_io_stop(s->loop, io);
        return;
    }
    memset(s->req, 0, s->sizes.seccomp_notif);
    if (ioctl(io->fd, SECCOMP_IOCTL_NOTIF_RECV, s->req) < 0)
        return; /* ENOENT: the caller went away */
    sy = lookup(s->req->data.nr);
    if (!sy) {
        rc = -ENOSYS;
    } else if (sy->how == H_ENOSYS) {
        rc = -ENOSYS;
    } else if (sy->how == H_CONNECT) {
        rc = take_connect(s, s->req);
        if (rc == 1)
            return;
    } else {
        rc = take_fs(s, sy, s->req);
        if (rc == 0)
            return; /* the helper answers */
    }
    (void)answer(s, s->req->id, -1, rc < 0 ? rc : -EPERM);
}

/* The helper is gone, or its socket broke: nothing more is performed, and
 * every call waiting on it is refused. */
static void helper_lost(struct sc_supervisor *s)
{
    log_v("landlock mode: the helper that performs writes is gone; every write is "
          "refused from now on");
    s->helper_gone = true;
    ev_io_stop(s->loop, &s->helper);
    while (s->out) {
        struct outgoing *o = s->out;

        s->out = o->next;
        outgoing_free(o);
    }
    s->out_tail = &s->out;
    s->out_bytes = 0;
    while (s->pending) {
        struct pending *pe = s->pending;

        s->pending = pe->next;
        (void)answer(s, pe->id, -1, -EPERM);
        free(pe);
    }
}

/* The slave of pseudo-terminal index for the caller, when its process
 * holds that terminal's master (openpty opens the slave by name); any other
 * of the host's terminals (the user's own shells among them) stays out of
 * reach. Opened here, outside the command's Landlock domain, which grants
 * nothing on the host's /dev/pts. */
static int open_pty(const struct pending *pe, int index)
{
    char p[64], line[128];
    struct dirent *e;
    bool holds = false;
    DIR *d;
    int fd;
    struct stat st;

    if (index < 0)
        return -EACCES;
    snprintf(p, sizeof(p), "/proc/%d/fdinfo", (int)pe->tgid);
    d = opendir(p);
    while (d && !holds && (e = readdir(d))) {
        char path[300];
        FILE *f;

        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pe->tgid, e->d_name);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f)) {
            int idx;

            if (sscanf(line, "tty-index: %d", &idx) == 1 && idx == index)
                holds = true;
        }
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    if (!holds)
        return -EACCES;
    snprintf(p, sizeof(p), "/dev/pts/%d", index);
    fd = open(p, (int)(pe->flags & (O_ACCMODE | O_NOCTTY | O_NONBLOCK)) | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) ||
        major(st.st_rdev) != 136 + (unsigned)index / 256 ||
        minor(st.st_rdev) != (unsigned)index % 256) {
        close(fd);
        return -EACCES;
    }
    return fd;
}

static void on_helper(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct sc_supervisor *s = container_of(io, struct sc_supervisor, helper);

    (void)loop;
    if ((revents & EPOLLOUT) && flush_outgoing(s) < 0) {
        helper_lost(s);
        return;
    }
    if (!(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        return;
    for (;;) {
        struct wresp r;
        char cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = { .iov_base = &r, .iov_len = sizeof(r) };
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)
        };
        struct pending **pp, *pe = NULL;
        int fd = -1;
        ssize_t got = recvmsg(io->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

        if (got < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (got <= 0) {
            helper_lost(s);
            return;
        }
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                memcpy(&fd, CMSG_DATA(c), sizeof(int));
        for (pp = &s->pending; *pp; pp = &(*pp)->next)
            if ((*pp)->id == r.id) {
                pe = *pp;
                *pp = pe->next;
                break;
            }
        if (!pe || (size_t)got != sizeof(r)) {
            if (fd >= 0)
                close(fd);
            free(pe);
            continue;
        }
        r.path[sizeof(r.path) - 1] = '\0';
        if (r.verdict == WREQ_DONE && r.result >= 0 && r.path[0] && s->cfg.git_watch &&
            (pol_path_names_git(r.path) || pe->sys->op == WREQ_RENAME) &&
            !pol_strv_contains(s->cfg.git_watch, r.path) && s->cfg.git_watch->n < VIO_MAX) {
            struct nf_err ignored;

            (void)pol_strv_add(s->cfg.git_watch, r.path, &ignored);
        }
        if (r.verdict == WREQ_PTY && fd < 0) {
            fd = open_pty(pe, r.result);
            if (fd < 0) {
                r.result = fd;
                if (s->cfg.report_files)
                    vio_add_file(s->cfg.violations, pe->sys->name, r.path,
                                 "a terminal the command did not open", (pid_t)pe->pid);
            }
        }
        r.path2[sizeof(r.path2) - 1] = '\0';
        if (r.verdict != WREQ_DONE && r.verdict != WREQ_PTY && s->cfg.report_files)
            vio_add_file(s->cfg.violations, pe->sys->name, r.path,
                         r.verdict == WREQ_PROTECTED ? "a protected path"
                                                     : "outside the write roots",
                         (pid_t)pe->pid);
        if (r.path2[0] && s->cfg.report_files)
            vio_add_file(s->cfg.violations, pe->sys->name, r.path2,
                         r.verdict2 == WREQ_PROTECTED ? "a protected path"
                                                      : "outside the write roots",
                         (pid_t)pe->pid);
        if (fd >= 0) {
            struct seccomp_notif_addfd add = { .id = pe->id,
                                               .flags = SECCOMP_ADDFD_FLAG_SEND,
                                               .srcfd = (uint32_t)fd,
                                               .newfd_flags = pe->cloexec };

            if (ioctl(s->io.fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 && errno != ENOENT)
                (void)answer(s, pe->id, -1, -errno);
            close(fd);
        } else {
            (void)answer(s, pe->id, r.result < 0 ? -1 : r.result, r.result < 0 ? r.result : 0);
        }
        free(pe);
    }
}

int sc_supervisor_new(struct sc_supervisor **out, struct ev_loop *loop, int listener,
                      const struct sc_supervisor_config *cfg, struct nf_err *err)
{
    struct sc_supervisor *s = calloc(1, sizeof(*s));

    *out = NULL;
    if (!s) {
        close(listener);
        close(cfg->helper_fd);
        return nf_err_sys(err, "out of memory");
    }
    s->loop = loop;
    s->cfg = *cfg;
    s->io.fd = listener;
    s->io.cb = on_notify;
    s->helper.fd = cfg->helper_fd;
    s->helper.cb = on_helper;
    s->out_tail = &s->out;
    complete_table();
    for (size_t i = 0; i < NF_ARRAY_SIZE(table); i++) {
        table[i].nr = seccomp_syscall_resolve_name(table[i].name);
        if (table[i].nr == __NR_SCMP_ERROR)
            table[i].nr = strcmp(table[i].name, "fchmodat2") == 0       ? 452
                          : strcmp(table[i].name, "setxattrat") == 0    ? 463
                          : strcmp(table[i].name, "removexattrat") == 0 ? 466
                                                                        : -1;
    }
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &s->sizes) < 0) {
        nf_err_sys(err, "seccomp(SECCOMP_GET_NOTIF_SIZES)");
        goto fail;
    }
    s->req = calloc(1, s->sizes.seccomp_notif);
    s->resp = calloc(1, s->sizes.seccomp_notif_resp);
    s->rq = malloc(sizeof(*s->rq));
    if (!s->req || !s->resp || !s->rq) {
        nf_err_sys(err, "out of memory");
        goto fail;
    }
    if (ev_io_start(loop, &s->io, EPOLLIN) < 0 || ev_io_start(loop, &s->helper, EPOLLIN) < 0) {
        nf_err_sys(err, "epoll_ctl");
        goto fail;
    }
    *out = s;
    return 0;
fail:
    sc_supervisor_free(s);
    return -1;
}

void sc_supervisor_free(struct sc_supervisor *s)
{
    if (!s)
        return;
    if (s->io.fd >= 0) {
        ev_io_stop(s->loop, &s->io);
        close(s->io.fd);
    }
    if (s->helper.fd >= 0) {
        ev_io_stop(s->loop, &s->helper);
        close(s->helper.fd);
    }
    while (s->pending) {
        struct pending *pe = s->pending;

        s->pending = pe->next;
        free(pe);
    }
    while (s->out) {
        struct outgoing *o = s->out;

        s->out = o->next;
        outgoing_free(o);
    }
    free(s->req);
    free(s->resp);
    free(s->rq);
    free(s);
}
