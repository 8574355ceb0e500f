#include "seccomp/observer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "seccomp/filters.h"
#include "src/log.h"
#include "src/policy.h"
#include "src/syscalls.h"
#include "src/util.h"

/* Linux 6.6: wake the listener on the trapped task's CPU, and the task on
 * the listener's, as a hand-off between the two (Debian 12's headers predate
 * it). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS _IOW('!', 4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1
#endif

/* Where each trapped syscall keeps its paths: the dirfd argument (-1: the
 * path is absolute or relative to the cwd) and the path argument, for up to
 * two paths (rename and friends change both). */
struct sys_paths {
    const char *name;
    signed char dirfd[2];
    signed char path[2];
    signed char creates; /* which path it may create (-1: none); -2: open's flags decide */
};

static const struct sys_paths table[] = {
    { "open", { -1, -1 }, { 0, -1 }, -2 },     { "openat", { 0, -1 }, { 1, -1 }, -2 },
    { "openat2", { 0, -1 }, { 1, -1 }, 0 },    { "creat", { -1, -1 }, { 0, -1 }, 0 },
    { "truncate", { -1, -1 }, { 0, -1 }, -1 }, { "unlink", { -1, -1 }, { 0, -1 }, -1 },
    { "unlinkat", { 0, -1 }, { 1, -1 }, -1 },  { "rmdir", { -1, -1 }, { 0, -1 }, -1 },
    { "mkdir", { -1, -1 }, { 0, -1 }, 0 },     { "mkdirat", { 0, -1 }, { 1, -1 }, 0 },
    { "mknod", { -1, -1 }, { 0, -1 }, 0 },     { "mknodat", { 0, -1 }, { 1, -1 }, 0 },
    { "symlink", { -1, -1 }, { 1, -1 }, 0 },   { "symlinkat", { 1, -1 }, { 2, -1 }, 0 },
    { "link", { -1, -1 }, { 1, -1 }, 0 },      { "linkat", { 2, -1 }, { 3, -1 }, 0 },
    { "rename", { -1, -1 }, { 0, 1 }, 1 },     { "renameat", { 0, 2 }, { 1, 3 }, 1 },
    { "renameat2", { 0, 2 }, { 1, 3 }, 1 },    { "chmod", { -1, -1 }, { 0, -1 }, -1 },
    { "fchmodat", { 0, -1 }, { 1, -1 }, -1 },  { "fchmodat2", { 0, -1 }, { 1, -1 }, -1 },
    { "chown", { -1, -1 }, { 0, -1 }, -1 },    { "lchown", { -1, -1 }, { 0, -1 }, -1 },
    { "fchownat", { 0, -1 }, { 1, -1 }, -1 },  { "utime", { -1, -1 }, { 0, -1 }, -1 },
    { "utimes", { -1, -1 }, { 0, -1 }, -1 },   { "utimensat", { 0, -1 }, { 1, -1 }, -1 },
};

/* Path argument i of a trapped call may create a new name. */
static bool creates(const struct sys_paths *sp, const struct seccomp_notif *r, int i)
{
    if (sp->creates == -2)
        return (r->data.args[sp->path[0] + 1] & O_CREAT) != 0;
    return sp->creates == i;
}

struct known {
    int nr;
    const struct sys_paths *sp;
};

/* The notifications are read and answered with the kernel's ioctls, as the
 * supervisor does: libseccomp's seccomp_notify_alloc probes the kernel's
 * whole seccomp interface first (ten calls and its tables' pages, about
 * 200 us a run here), for a size one call gives. */
struct sc_observer {
    struct ev_io io;
    struct ev_loop *loop;
    struct sc_observer_config cfg;
    struct seccomp_notif *req;
    struct seccomp_notif_resp *resp;
    struct seccomp_notif_sizes sizes;
    struct known known[NF_ARRAY_SIZE(table)];
    size_t n_known;
    bool named;   /* known[] is filled: at the first notification, not before */
    bool created; /* a call that may make a new name was let through */
    bool hung_up; /* no process is under the filter: io no longer watched */
};

/* The table's syscall numbers, looked up by name once a call is trapped: a
 * command that makes none (most) spares the lookups' page faults. */
static void name_table(struct sc_observer *o)
{
    for (size_t i = 0; i < NF_ARRAY_SIZE(table); i++) {
        int nr = seccomp_syscall_resolve_name(table[i].name);

        if (nr == __NR_SCMP_ERROR && strcmp(table[i].name, "fchmodat2") == 0)
            nr = 452; /* newer than libseccomp 2.5's table on some builds */
        if (nr == __NR_SCMP_ERROR)
            continue;
        o->known[o->n_known].nr = nr;
        o->known[o->n_known].sp = &table[i];
        o->n_known++;
    }
    o->named = true;
}

int sc_path_resolve(const char *base, const char *rel, char *out, size_t outsz)
{
    struct nf_err ignored;

    char joined[PATH_MAX * 2];

    if (rel[0] == '/')
        return pol_path_normalize(rel, "/", NULL, out, outsz, &ignored);
    if (!base || base[0] != '/')
        return -1;
    /* Joined by hand: to the kernel a leading '~' is an ordinary name, not
     * a home directory. */
    if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", base, rel) >= sizeof(joined))
        return -1;
    return pol_path_normalize(joined, "/", NULL, out, outsz, &ignored);
}

/* What the sandbox lets the command write besides its write roots: the
 * private /tmp and the harmless /dev nodes (so `> /dev/null` is never
 * reported), and its own file descriptors. */
static bool always_writable(const char *p)
{
    static const char *const exact[] = { "/dev/null",    "/dev/zero",  "/dev/full", "/dev/random",
                                         "/dev/urandom", "/dev/tty",   "/dev/ptmx", "/dev/stdin",
                                         "/dev/stdout",  "/dev/stderr" };
    static const char *const under[] = { "/tmp",    "/dev/pts",      "/dev/shm",
                                         "/dev/fd", "/proc/self/fd", "/proc/thread-self/fd" };

    for (size_t i = 0; i < NF_ARRAY_SIZE(exact); i++)
        if (strcmp(p, exact[i]) == 0)
            return true;
    for (size_t i = 0; i < NF_ARRAY_SIZE(under); i++)
        if (pol_path_within(p, under[i]) && strcmp(p, under[i]) != 0)
            return true;
    return false;
}

enum sc_verdict sc_classify(const struct sc_observer_config *cfg, const char *abs)
{
    ssize_t rw, ro;

    for (size_t i = 0; i < cfg->n_protected; i++)
        if (pol_path_within(abs, cfg->protected_paths[i]))
            return SC_PROTECTED;
    /* The deepest of the mounts holding abs decides: a carve-out inside a
     * masked directory is read-only, a write root inside it writable. */
    rw = pol_path_deepest(cfg->write_roots, cfg->n_write_roots, abs);
    ro = pol_path_deepest(cfg->scratch, cfg->n_scratch, abs);
    if (ro > rw)
        rw = ro;
    ro = pol_path_deepest(cfg->read_only, cfg->n_read_only, abs);
    if (rw >= 0 || ro >= 0)
        return rw > ro ? SC_ALLOWED : SC_OUTSIDE;
    return always_writable(abs) ? SC_ALLOWED : SC_OUTSIDE;
}

enum sc_create sc_create_kind(const char *syscall, uint64_t flags)
{
    static const char *const excl[] = { "mkdir",   "mkdirat",   "mknod", "mknodat",
                                        "symlink", "symlinkat", "link",  "linkat" };

    for (size_t i = 0; i < NF_ARRAY_SIZE(excl); i++)
        if (strcmp(syscall, excl[i]) == 0)
            return SC_CREATE_EXCL;
    static const char *const needs[] = { "chmod",     "fchmodat", "fchmodat2", "chown",
                                         "lchown",    "fchownat", "utime",     "utimes",
                                         "utimensat", "truncate" };

    for (size_t i = 0; i < NF_ARRAY_SIZE(needs); i++)
        if (strcmp(syscall, needs[i]) == 0)
            return SC_CREATE_NEEDS;
    if (strcmp(syscall, "creat") == 0)
        return SC_CREATE_NO; /* O_CREAT|O_WRONLY|O_TRUNC */
    if (strcmp(syscall, "open") != 0 && strcmp(syscall, "openat") != 0 &&
        strcmp(syscall, "openat2") != 0)
        return SC_CREATE_NO;
    if (!(flags & O_CREAT))
        return (flags & __O_TMPFILE) == __O_TMPFILE ? SC_CREATE_NO : SC_CREATE_NEEDS;
    if (flags & O_EXCL)
        return SC_CREATE_EXCL;
    /* O_TRUNC truncates an existing file whatever the access mode. */
    if ((flags & O_ACCMODE) == O_RDONLY && !(flags & O_TRUNC))
        return SC_CREATE_RDONLY;
    return SC_CREATE_NO;
}

bool sc_refused(enum sc_verdict v, enum sc_create c, enum sc_target t)
{
    if (v == SC_ALLOWED)
        return false;
    switch (t) {
    case SC_TARGET_NO_PARENT:
        return false; /* ENOENT: the path walk fails before any write check */
    case SC_TARGET_EXISTS:
        /* else EEXIST, or an existing file opened to read */
        return c == SC_CREATE_NO || c == SC_CREATE_NEEDS;
    case SC_TARGET_ABSENT:
        return c != SC_CREATE_NEEDS; /* ENOENT */
    case SC_TARGET_UNKNOWN:
        break;
    }
    return true;
}

/* A NUL-terminated string from the command's memory, read page by page
 * (the string may end just before an unmapped page). */
static int read_string(pid_t pid, uint64_t addr, char *out, size_t outsz)
{
    size_t got = 0;

    if (addr == 0)
        return -1;
    while (got + 1 < outsz) {
        size_t page = 4096 - ((addr + got) & 4095);
        size_t want = page < outsz - 1 - got ? page : outsz - 1 - got;
        struct iovec local = { .iov_base = out + got, .iov_len = want };
        struct iovec remote = { .iov_base = (void *)(uintptr_t)(addr + got), .iov_len = want };
        ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        char *nul;

        if (n <= 0)
            return -1;
        nul = memchr(out + got, '\0', (size_t)n);
        if (nul)
            return 0;
        got += (size_t)n;
    }
    out[outsz - 1] = '\0';
    return -1; /* longer than PATH_MAX: not a path the kernel would take */
}

static int proc_link(pid_t pid, const char *what, char *out, size_t outsz)
{
    char link[64];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/%d/%s", pid, what);
    n = readlink(link, out, outsz - 1);
    if (n < 0)
        return -1;
    out[n] = '\0';
    return 0;
}

/* The absolute path of path argument i of the trapped call, or -1; in raw
 * (PATH_MAX * 2 bytes), the same path joined but not normalised, for the
 * kernel's own resolution of its ".." and symlinks. */
static int path_of(struct sc_observer *o, const struct sys_paths *sp, int i, char *out,
                   size_t outsz, char *raw)
{
    const struct seccomp_notif *r = o->req;
    char path[PATH_MAX], base[PATH_MAX];
    int dirfd = sp->dirfd[i] >= 0 ? (int)r->data.args[sp->dirfd[i]] : AT_FDCWD;

    if (read_string((pid_t)r->pid, r->data.args[sp->path[i]], path, sizeof(path)) < 0) {
        /* utimensat(fd, NULL, ...) and AT_EMPTY_PATH act on the fd itself */
        if (r->data.args[sp->path[i]] != 0)
            return -1;
        path[0] = '\0';
    }
    if (path[0] != '/') {
        char what[32];

        if (dirfd == AT_FDCWD)
            snprintf(what, sizeof(what), "cwd");
        else
            snprintf(what, sizeof(what), "fd/%d", dirfd);
        if (proc_link((pid_t)r->pid, what, base, sizeof(base)) < 0 || base[0] != '/')
            return -1; /* a pipe, a socket, anon_inode: not a path */
    } else {
        base[0] = '\0';
    }
    if ((size_t)snprintf(raw, PATH_MAX * 2, "%s%s%s", base, base[0] ? "/" : "", path) >=
        PATH_MAX * 2)
        raw[0] = '\0';
    return sc_path_resolve(base, path, out, outsz);
}

/* open's flags for a call that may create path argument i (openat2 keeps
 * them in memory, in its struct open_how). */
static uint64_t open_flags(const struct sc_observer *o, const struct sys_paths *sp)
{
    const struct seccomp_notif *r = o->req;
    uint64_t flags = 0;

    if (strcmp(sp->name, "openat2") == 0) {
        struct iovec local = { .iov_base = &flags, .iov_len = sizeof(flags) };
        struct iovec remote = { .iov_base = (void *)(uintptr_t)r->data.args[2],
                                .iov_len = sizeof(flags) };

        if (r->data.args[3] < sizeof(flags) ||
            process_vm_readv((pid_t)r->pid, &local, 1, &remote, 1, 0) != sizeof(flags))
            return O_CREAT | O_WRONLY; /* unreadable: as if it writes */
        return flags;
    }
    if (strcmp(sp->name, "creat") == 0)
        return O_CREAT | O_WRONLY | O_TRUNC;
    if (sp->creates == -2)
        return r->data.args[sp->path[0] + 1];
    return 0;
}

/* What is at raw (an absolute path as the caller named it) in the caller's
 * own root, now, while the caller waits. Resolved beneath a descriptor on
 * that root, never through the host's tree: the command's symlinks cannot
 * make the host side look elsewhere. */
static enum sc_target target_state(struct sc_observer *o, const char *raw, bool follow)
{
    _cleanup_close_ int root = -1, dir = -1, fd = -1;
    char path[PATH_MAX * 2], proc[64], *slash, *name;
    size_t n = strlen(raw);
    struct stat st;

    if (raw[0] != '/' || n >= sizeof(path))
        return SC_TARGET_UNKNOWN;
    memcpy(path, raw, n + 1);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    slash = strrchr(path, '/');
    name = slash + 1;
    if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return SC_TARGET_UNKNOWN;
    *slash = '\0';
    snprintf(proc, sizeof(proc), "/proc/%u/root", o->req->pid);
    root = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return SC_TARGET_UNKNOWN;
    /* The caller may have died, and its pid been reused, before the open:
     * the root is the caller's only if its notification still waits. */
    if (!sc_notif_waiting(o->io.fd, o->req->id))
        return SC_TARGET_UNKNOWN;
    dir = RETRY_EINTR(nf_openat2(root, path[0] ? path : "/", O_PATH | O_DIRECTORY | O_CLOEXEC,
                                 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS));
    if (dir < 0)
        return errno == ENOENT || errno == ENOTDIR ? SC_TARGET_NO_PARENT : SC_TARGET_UNKNOWN;
    if (follow) {
        /* open(O_CREAT) follows a final symlink; mkdir and friends do not */
        fd = RETRY_EINTR(
            nf_openat2(root, raw, O_PATH | O_CLOEXEC, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS));
        if (fd >= 0)
            return SC_TARGET_EXISTS;
        return errno == ENOENT ? SC_TARGET_ABSENT : SC_TARGET_UNKNOWN;
    }
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return SC_TARGET_EXISTS;
    return errno == ENOENT ? SC_TARGET_ABSENT : SC_TARGET_UNKNOWN;
}

static void handle(struct sc_observer *o)
{
    const struct sys_paths *sp = NULL;
    char paths[2][PATH_MAX], raw[PATH_MAX * 2];
    bool have[2] = { false, false };
    enum sc_verdict verdict[2] = { SC_ALLOWED, SC_ALLOWED };
    bool report[2] = { false, false };

    memset(o->req, 0, o->sizes.seccomp_notif);
    if (ioctl(o->io.fd, SECCOMP_IOCTL_NOTIF_RECV, o->req) < 0)
        return; /* the caller died meanwhile */
    if (!o->named)
        name_table(o);
    for (size_t i = 0; i < o->n_known; i++)
        if (o->known[i].nr == o->req->data.nr)
            sp = o->known[i].sp;
    /* Counted whether or not its path could be read; a call we cannot name
     * counts too. */
    for (int i = 0; i < 2 && !o->created; i++)
        o->created = !sp || (sp->path[i] >= 0 && creates(sp, o->req, i));
    for (int i = 0; sp && i < 2; i++) {
        if (sp->path[i] < 0)
            continue;
        have[i] = path_of(o, sp, i, paths[i], sizeof(paths[i]), raw) == 0;
        if (!have[i])
            continue;
        verdict[i] = sc_classify(&o->cfg, paths[i]);
        /* A name the call would create is looked at before the kernel runs
         * the call (after CONTINUE it would exist): one that exists already
         * gets EEXIST, not a refusal. Only for what would be reported. */
        report[i] = verdict[i] != SC_ALLOWED;
        if (report[i] && (creates(sp, o->req, i) || sp->path[1] < 0)) {
            enum sc_create kind = sc_create_kind(sp->name, open_flags(o, sp));
            bool follow = kind == SC_CREATE_RDONLY ||
                          (kind == SC_CREATE_NEEDS && strcmp(sp->name, "lchown") != 0);
            enum sc_target t = raw[0] ? target_state(o, raw, follow) : SC_TARGET_UNKNOWN;

            report[i] = sc_refused(verdict[i], kind, t);
        }
    }
    /* The paths are read while the caller is stopped in the syscall; only
     * now is it let go: a short-lived command cannot exit before its path is
     * read. The answer is taken only while the caller still waits (one that
     * died or was interrupted meanwhile is ENOENT): then what was read above
     * was its own, not a recycled pid's, and is reported. */
    memset(o->resp, 0, o->sizes.seccomp_notif_resp);
    o->resp->id = o->req->id;
    o->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    if (ioctl(o->io.fd, SECCOMP_IOCTL_NOTIF_SEND, o->resp) < 0)
        return;
    for (int i = 0; sp && i < 2; i++) {
        enum sc_verdict v = verdict[i];

        if (!have[i])
            continue;
        if (v == SC_ALLOWED && o->cfg.git_watch && creates(sp, o->req, i) &&
            (pol_path_names_git(paths[i]) || sp->creates == 1) &&
            !pol_strv_contains(o->cfg.git_watch, paths[i]) && o->cfg.git_watch->n < VIO_MAX) {
            struct nf_err ignored;

            (void)pol_strv_add(o->cfg.git_watch, paths[i], &ignored);
        }
        if (report[i])
            vio_add_file(o->cfg.violations, sp->name, paths[i],
                         v == SC_PROTECTED ? "a protected path" : "outside the write roots",
                         (pid_t)o->req->pid);
    }
}

static void on_ready(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct sc_observer *o = container_of(io, struct sc_observer, io);

    if (revents & EPOLLIN) {
        handle(o);
        return;
    }
    if (revents & (EPOLLHUP | EPOLLERR)) {
        /* Every process under the filter is gone. The listener is closed
         * with the observer, not now: its close frees the filter, whose
         * program a kworker then frees on this CPU. Here that work would
         * come between the command's exit and init's report of it; in the
         * teardown it fills the wait for init's exit. */
        ev_io_stop(loop, io);
        o->hung_up = true;
    }
}

int sc_observer_new(struct sc_observer **out, struct ev_loop *loop, int listener,
                    const struct sc_observer_config *cfg, struct nf_err *err)
{
    struct sc_observer *o = calloc(1, sizeof(*o));

    if (!o) {
        close(listener);
        return nf_err_sys(err, "out of memory");
    }
    o->loop = loop;
    o->cfg = *cfg;
    o->io.fd = listener;
    o->io.cb = on_ready;
    /* Each trapped syscall waits for our answer: two wake-ups per syscall,
     * cheaper on one CPU. Older kernels answer EINVAL: the same, slower. */
    (void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &o->sizes) < 0) {
        int e = errno;

        sc_observer_free(o);
        errno = e;
        return nf_err_sys(err, "seccomp(SECCOMP_GET_NOTIF_SIZES)");
    }
    /* The kernel's sizes, never less than the structures we fill. */
    if (o->sizes.seccomp_notif < sizeof(*o->req))
        o->sizes.seccomp_notif = sizeof(*o->req);
    if (o->sizes.seccomp_notif_resp < sizeof(*o->resp))
        o->sizes.seccomp_notif_resp = sizeof(*o->resp);
    o->req = calloc(1, o->sizes.seccomp_notif);
    o->resp = calloc(1, o->sizes.seccomp_notif_resp);
    if (!o->req || !o->resp) {
        sc_observer_free(o);
        return nf_err_set(err, ENOMEM, "out of memory");
    }
    if (ev_io_start(loop, &o->io, EPOLLIN) < 0) {
        int e = errno;

        sc_observer_free(o);
        errno = e;
        return nf_err_sys(err, "epoll_ctl observer");
    }
    *out = o;
    return 0;
}

bool sc_observer_saw_creation(const struct sc_observer *o)
{
    return !o || o->created;
}

void sc_observer_free(struct sc_observer *o)
{
    if (!o)
        return;
    if (o->io.fd >= 0) {
        if (!o->hung_up)
            ev_io_stop(o->loop, &o->io);
        close(o->io.fd);
    }
    free(o->req);
    free(o->resp);
    free(o);
}
