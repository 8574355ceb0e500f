#include "src/doctor.h"

#include "fs/landlock.h"
#include "src/lmode.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/caps.h"
#include "src/syscalls.h"
#include "src/util.h"
#include "src/violations.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

enum status {
    ST_OK,
    ST_WARN,
    ST_FAIL,
};

struct check {
    const char *key;
    enum status status;
    char detail[512];
    char fix[512];
};

#define MAX_CHECKS 24

struct report {
    struct check c[MAX_CHECKS];
    size_t n;
    bool namespaces_work; /* the probe made a namespace, its maps and a mount */
    bool notify_works;    /* a USER_NOTIF listener can be had */
};

static struct check *add(struct report *r, const char *key, enum status st, const char *fix,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static struct check *add(struct report *r, const char *key, enum status st, const char *fix,
                         const char *fmt, ...)
{
    struct check *c = &r->c[r->n++];
    va_list ap;

    c->key = key;
    c->status = st;
    va_start(ap, fmt);
    vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
    va_end(ap);
    snprintf(c->fix, sizeof(c->fix), "%s", fix ? fix : "");
    return c;
}

/* The first line of a /proc or /sys file, or NULL when it cannot be read. */
static const char *read_line(const char *path, char *buf, size_t sz)
{
    FILE *f = fopen(path, "re");

    if (!f)
        return NULL;
    if (!fgets(buf, (int)sz, f)) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

static long read_long(const char *path, bool *present)
{
    char buf[64];

    *present = read_line(path, buf, sizeof(buf)) != NULL;
    return *present ? strtol(buf, NULL, 10) : -1;
}

static void check_kernel(struct report *r)
{
    struct utsname u;
    int major = 0, minor = 0;

    uname(&u);
    sscanf(u.release, "%d.%d", &major, &minor);
    if (major > 5 || (major == 5 && minor >= 12))
        add(r, "kernel", ST_OK, NULL, "Linux %s (5.12+: the new mount API, mount_setattr)",
            u.release);
    else
        add(r, "kernel", ST_FAIL, "upgrade to Linux 5.12 or later",
            "Linux %s: nsfence needs 5.12+ (open_tree, move_mount, mount_setattr)", u.release);
}

static void check_userns_sysctls(struct report *r)
{
    bool present;
    long max = read_long("/proc/sys/user/max_user_namespaces", &present);
    long clone = read_long("/proc/sys/kernel/unprivileged_userns_clone", &present);
    long aa;

    if (max == 0)
        add(r, "userns_max", ST_FAIL, "sysctl -w user.max_user_namespaces=15000",
            "user.max_user_namespaces = 0: user namespaces are disabled");
    else
        add(r, "userns_max", ST_OK, NULL, "user.max_user_namespaces = %ld", max);
    if (!present)
        add(r, "userns_clone", ST_OK, NULL, "kernel.unprivileged_userns_clone: not present");
    else if (clone == 0 && getuid() != 0)
        add(r, "userns_clone", ST_FAIL, "sysctl -w kernel.unprivileged_userns_clone=1",
            "kernel.unprivileged_userns_clone = 0: unprivileged user namespaces are off (Debian)");
    else
        add(r, "userns_clone", ST_OK, NULL, "kernel.unprivileged_userns_clone = %ld", clone);
    aa = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", &present);
    if (!present || aa == 0) {
        add(r, "apparmor_userns", ST_OK, NULL, "kernel.apparmor_restrict_unprivileged_userns: %s",
            present ? "0" : "not present");
        return;
    }
    {
        char self[4096] = "", line[8192];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        FILE *f = fopen("/sys/kernel/security/apparmor/profiles", "re");
        bool loaded = false;

        if (n > 0)
            self[n] = '\0';
        while (f && fgets(line, sizeof(line), f))
            if ((self[0] && strstr(line, self)) || strncmp(line, "nsfence ", 8) == 0)
                loaded = true;
        if (f)
            fclose(f);
        if (loaded || getuid() == 0)
            add(r, "apparmor_userns", ST_OK, NULL,
                "kernel.apparmor_restrict_unprivileged_userns = 1, %s",
                loaded ? "and nsfence's AppArmor profile is loaded" : "but running as root");
        else
            add(r, "apparmor_userns", ST_FAIL,
                "make install (installs and loads apparmor/nsfence), or sysctl -w "
                "kernel.apparmor_restrict_unprivileged_userns=0",
                "kernel.apparmor_restrict_unprivileged_userns = 1 and no AppArmor profile grants "
                "%s userns: its user namespaces would have no capabilities",
                self[0] ? self : "nsfence");
    }
}

static const char *container_kind(void)
{
    char buf[4096];
    FILE *f;

    if (access("/.dockerenv", F_OK) == 0)
        return "docker";
    if (access("/run/.containerenv", F_OK) == 0)
        return "podman";
    if (read_line("/proc/1/environ", buf, sizeof(buf)) && strstr(buf, "container="))
        return "a container";
    f = fopen("/proc/self/cgroup", "re");
    while (f && fgets(buf, sizeof(buf), f)) {
        if (strstr(buf, "docker") || strstr(buf, "kubepods") || strstr(buf, "containerd") ||
            strstr(buf, "lxc")) {
            fclose(f);
            return "a container (cgroup)";
        }
    }
    if (f)
        fclose(f);
    return NULL;
}

/* no_new_privs and the number of seccomp filters on this process. */
void doctor_seccomp_state(long *nnp, long *filters)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "re");

    *nnp = *filters = 0;
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "NoNewPrivs:", 11) == 0)
            *nnp = strtol(line + 11, NULL, 10);
        if (strncmp(line, "Seccomp_filters:", 16) == 0)
            *filters = strtol(line + 16, NULL, 10);
    }
    if (f)
        fclose(f);
}

static long seccomp_filters(void)
{
    long nnp, filters;

    doctor_seccomp_state(&nnp, &filters);
    return filters;
}

void doctor_seccomp_cause(const char *refused, char *cause, size_t causesz, char *fix, size_t fixsz)
{
    const char *sandbox = getenv("SANDBOX_RUNTIME");
    const char *c = container_kind();
    long nnp, filters;

    doctor_seccomp_state(&nnp, &filters);
    /* An outer sandbox first: it sees the host's /.dockerenv too. */
    if (sandbox && strcmp(sandbox, "1") == 0) {
        snprintf(cause, causesz,
                 "this process already runs inside a sandbox (SANDBOX_RUNTIME=1: nsfence or "
                 "srt), whose seccomp filter refuses %s (%ld filter(s))",
                 refused, filters);
        snprintf(fix, fixsz,
                 "run nsfence outside that sandbox: it cannot nest, and the outer one already "
                 "confines this command");
    } else if (c) {
        snprintf(cause, causesz,
                 "this process runs in %s whose seccomp profile refuses %s "
                 "(%ld filter(s), as Docker's default profile does)",
                 c, refused, filters);
        snprintf(fix, fixsz,
                 "run the container with a seccomp profile that allows %s (docker run "
                 "--security-opt seccomp=unconfined, or a custom profile)",
                 strcmp(refused, DOCTOR_NEWUSER) == 0 ? "clone and unshare with CLONE_NEWUSER"
                                                      : "mount and its new API calls");
    } else {
        snprintf(cause, causesz,
                 "a seccomp filter on this process refuses %s (%ld filter(s), "
                 "no_new_privs %ld: another sandbox, a service manager's SystemCallFilter=, ...)",
                 refused, filters, nnp);
        snprintf(fix, fixsz, "run nsfence outside whatever installed that filter");
    }
}

/* 0, or the errno of writing s to path. */
static int write_str(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    size_t n = strlen(s);
    int e = 0;

    if (fd < 0)
        return errno;
    if (write(fd, s, n) != (ssize_t)n)
        e = errno ? errno : EIO;
    close(fd);
    return e;
}

/* The id maps of pid's new user namespace, written from outside as nsfence
 * writes them: the caller's own uid and gid. 0, or the errno. */
static int probe_maps(pid_t pid)
{
    char path[64], map[64];
    int e;

    snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
    snprintf(map, sizeof(map), "%u %u 1\n", getuid(), getuid());
    if ((e = write_str(path, map)))
        return e;
    snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
    if ((e = write_str(path, "deny")) && e != ENOENT)
        return e;
    snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
    snprintf(map, sizeof(map), "%u %u 1\n", getgid(), getgid());
    return write_str(path, map);
}

static bool apparmor_restricts(void)
{
    bool present;

    return getuid() != 0 &&
           read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", &present) == 1;
}

/* Try, in a throw-away child, what nsfence does first: a new user and
 * mount namespace, its id maps written from outside, then a tmpfs mounted
 * in it. Each step fails somewhere: a container's seccomp profile (Docker's
 * default) turns the unshare into EPERM; Ubuntu's AppArmor restriction lets
 * the unshare succeed and fails the maps or the mount after it, so "ok" is
 * said only once all three worked. */
bool doctor_probe_userns(int res[3])
{
    _cleanup_close_ int up_r = -1, up_w = -1, down_r = -1, down_w = -1;
    int fds[2];
    bool got;
    pid_t pid;

    res[0] = res[1] = res[2] = 0;
    if (pipe2(fds, O_CLOEXEC) < 0)
        return false;
    up_r = fds[0];
    up_w = fds[1];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return false;
    down_r = fds[0];
    down_w = fds[1];
    pid = fork();
    if (pid == 0) {
        int e = 0;
        char go;

        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
            e = errno;
        if (write(up_w, &e, sizeof(e)) != sizeof(e) || e)
            _exit(0);
        close(down_w);
        if (read(down_r, &go, 1) != 1)
            _exit(0); /* the maps could not be written: nothing more to try */
        if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("nsfence-doctor", "/tmp", "tmpfs", 0, NULL) < 0)
            e = errno;
        (void)!write(up_w, &e, sizeof(e));
        _exit(0);
    }
    close(up_w);
    up_w = -1;
    close(down_r);
    down_r = -1;
    got = pid > 0 && read(up_r, &res[0], sizeof(res[0])) == sizeof(res[0]);
    if (got && !res[0]) {
        res[1] = probe_maps(pid);
        if (!res[1])
            got =
                write(down_w, "g", 1) == 1 && read(up_r, &res[2], sizeof(res[2])) == sizeof(res[2]);
    }
    close(down_w);
    down_w = -1;
    if (pid > 0)
        waitpid(pid, NULL, 0);
    return got;
}

bool doctor_namespaces_work(void)
{
    int res[3];

    return doctor_probe_userns(res) && !res[0] && !res[1] && !res[2];
}

static void check_probe(struct report *r)
{
    int res[3];
    bool got = doctor_probe_userns(res);

    r->namespaces_work = got && !res[0] && !res[1] && !res[2];
    if (!got) {
        add(r, "userns_probe", ST_WARN, NULL, "cannot probe");
    } else if (res[0]) {
        long nnp, filters;
        char cause[512], fix[512];

        doctor_seccomp_state(&nnp, &filters);
        if (res[0] == EPERM && filters > 0) {
            doctor_seccomp_cause(DOCTOR_NEWUSER, cause, sizeof(cause), fix, sizeof(fix));
            add(r, "userns_probe", ST_FAIL, fix, "clone(CLONE_NEWUSER) fails with %s: %s",
                strerror(res[0]), cause);
        } else {
            add(r, "userns_probe", ST_FAIL, "see userns_max, userns_clone and apparmor_userns",
                "clone(CLONE_NEWUSER) fails with %s", strerror(res[0]));
        }
    } else if ((res[1] || res[2]) && apparmor_restricts()) {
        add(r, "userns_probe", ST_FAIL,
            "make install (installs and loads apparmor/nsfence), or sysctl -w "
            "kernel.apparmor_restrict_unprivileged_userns=0",
            "a user namespace is created, but %s in it fails with %s: "
            "kernel.apparmor_restrict_unprivileged_userns=1 leaves it without capabilities",
            res[1] ? "writing its id maps" : "mounting", strerror(res[1] ? res[1] : res[2]));
    } else if (res[1]) {
        add(r, "userns_probe", ST_FAIL,
            getuid() == 0 ? "run nsfence as a regular user, or add CAP_SETFCAP"
                          : "see apparmor_userns",
            "a user namespace is created, but writing its id maps fails with %s", strerror(res[1]));
    } else if (res[2] == EPERM && seccomp_filters() > 0) {
        char cause[512], fix[512];

        doctor_seccomp_cause("mounting", cause, sizeof(cause), fix, sizeof(fix));
        add(r, "userns_probe", ST_FAIL, fix,
            "a new user namespace works but mounting in it fails with %s: %s", strerror(res[2]),
            cause);
    } else if (res[2]) {
        add(r, "userns_probe", ST_FAIL,
            "run the outer container with --privileged or without a masked /proc "
            "(docker --security-opt systempaths=unconfined)",
            "a new user namespace works but mounting in it fails with %s (a nested container?)",
            strerror(res[2]));
    } else {
        add(r, "userns_probe", ST_OK, NULL,
            "a user namespace, its id maps and a tmpfs mounted in it work");
    }
}

static void check_seccomp(struct report *r)
{
    char actions[256];
    struct seccomp_notif_sizes sizes;
    long nnp = 0, filters = 0;

    if (!read_line("/proc/sys/kernel/seccomp/actions_avail", actions, sizeof(actions)))
        add(r, "seccomp_actions", ST_FAIL, "a kernel built with CONFIG_SECCOMP_FILTER",
            "seccomp filters are not available");
    else if (!strstr(actions, "user_notif"))
        add(r, "seccomp_actions", ST_WARN, "Linux 5.5 or later",
            "%s: no user_notif, so no write observer (the filters still enforce)", actions);
    else
        add(r, "seccomp_actions", ST_OK, NULL, "%s", actions);
    /* USER_NOTIF's CONTINUE flag came with 5.5, SECCOMP_GET_NOTIF_SIZES
     * with 5.0: together, the observer works. */
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
        add(r, "user_notif", ST_WARN, "Linux 5.5 or later",
            "SECCOMP_GET_NOTIF_SIZES: %s: the write observer is unavailable", strerror(errno));
    else
        add(r, "user_notif", ST_OK, NULL, "USER_NOTIF with CONTINUE (notif %u bytes)",
            sizes.seccomp_notif),
            r->notify_works = true;
    doctor_seccomp_state(&nnp, &filters);
    if (filters || nnp)
        add(r, "nested", ST_WARN,
            "nothing to fix: the outer filters stay in force; a listener already on this process "
            "tree makes nsfence run without its write observer",
            "already sandboxed: no_new_privs %ld, %ld seccomp filter(s) on this process", nnp,
            filters);
    else
        add(r, "nested", ST_OK, NULL, "not under another sandbox's seccomp filters");
}

static void check_apis(struct report *r)
{
    int pidfd;

    if (nf_mount_setattr(-1, "", AT_EMPTY_PATH, &(struct mount_attr){ 0 }) < 0 && errno == ENOSYS)
        add(r, "mount_api", ST_FAIL, "Linux 5.12 or later", "mount_setattr: not implemented");
    else
        add(r, "mount_api", ST_OK, NULL, "open_tree, move_mount, fsopen, mount_setattr");
    pidfd = nf_pidfd_open(getpid(), 0);
    if (pidfd < 0) {
        add(r, "pidfd", ST_FAIL, "Linux 5.3 or later", "pidfd_open: %s", strerror(errno));
    } else {
        long fd = syscall(SYS_pidfd_getfd, pidfd, 0, 0);

        if (fd >= 0)
            close((int)fd);
        if (fd < 0 && errno == ENOSYS)
            add(r, "pidfd", ST_WARN, "Linux 5.6 or later (nsfence does not need it yet)",
                "pidfd_open works, pidfd_getfd does not");
        else
            add(r, "pidfd", ST_OK, NULL, "pidfd_open and pidfd_getfd");
        close(pidfd);
    }
    {
        long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

        if (abi < 0)
            add(r, "landlock", ST_WARN,
                "only --mode landlock needs it: Linux 5.13 or later, booted with "
                "lsm=...,landlock",
                "not available (%s): --mode landlock cannot run here", strerror(errno));
        else if (abi < 4)
            add(r, "landlock", ST_WARN, "Linux 6.7 or later (ABI 4) for the network",
                "ABI version %ld: --mode landlock runs only with --no-network (ABI 4 refuses "
                "TCP)",
                abi);
        else
            add(r, "landlock", ST_OK, NULL, "ABI version %ld: --mode landlock works here%s", abi,
                abi < 6 ? " (signals to outside processes not refused below ABI 6)" : "");
        if (r->namespaces_work)
            add(r, "mode_auto", ST_OK, NULL, "--mode auto picks namespaces here");
        else if (abi >= 1 && r->notify_works)
            add(r, "mode_auto", ST_WARN, "see userns_probe for what refuses namespaces",
                "--mode auto picks landlock here (namespaces are refused; weaker, see the table "
                "below)");
        else
            add(r, "mode_auto", ST_FAIL, "see userns_probe and landlock",
                "--mode auto has nothing to pick: namespaces are refused and %s",
                abi < 1 ? "Landlock is absent" : "USER_NOTIF is unavailable");
    }
}

static void check_misc(struct report *r)
{
    bool present;
    long v = read_long("/proc/sys/kernel/io_uring_disabled", &present);
    struct statfs sf;

    add(r, "io_uring", ST_OK, NULL, "kernel.io_uring_disabled = %s%s",
        present ? (v == 0   ? "0"
                   : v == 1 ? "1"
                            : "2")
                : "not present",
        " (blocked in the sandbox by seccomp either way)");
    v = read_long("/proc/sys/dev/tty/legacy_tiocsti", &present);
    add(r, "tiocsti", ST_OK, NULL, "dev.tty.legacy_tiocsti = %s (TIOCSTI is filtered either way)",
        present ? (v ? "1" : "0") : "not present");
    if (statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
        add(r, "cgroup_v2", ST_OK, NULL, "cgroup v2 at /sys/fs/cgroup");
    else
        add(r, "cgroup_v2", ST_WARN,
            "nothing to fix for nsfence (it does not use cgroups); boot with "
            "systemd.unified_cgroup_hierarchy=1 for v2",
            "cgroup v1 or hybrid at /sys/fs/cgroup");
    if (getuid() == 0) {
        if (caps_have(31 /* CAP_SETFCAP */) == 1)
            add(r, "root_setfcap", ST_OK, NULL, "root with CAP_SETFCAP: uid 0 can map to itself");
        else
            add(r, "root_setfcap", ST_FAIL,
                "run nsfence as a regular user, or add CAP_SETFCAP (docker --cap-add SETFCAP)",
                "root without CAP_SETFCAP cannot map uid 0 into the sandbox");
    }
    {
        const char *c = container_kind();

        add(r, "container", ST_OK, NULL, "%s", c ? c : "no container detected");
    }
}

static const char *status_name(enum status s)
{
    switch (s) {
    case ST_OK:
        return "ok";
    case ST_WARN:
        return "warn";
    case ST_FAIL:
        return "fail";
    }
    return "?";
}

int doctor_run(bool json, FILE *out)
{
    struct report r = { .n = 0 };
    bool failed = false;

    check_kernel(&r);
    check_userns_sysctls(&r);
    check_probe(&r);
    check_seccomp(&r);
    check_apis(&r);
    check_misc(&r);
    if (json)
        fputs("{", out);
    for (size_t i = 0; i < r.n; i++) {
        const struct check *c = &r.c[i];

        failed |= c->status == ST_FAIL;
        if (json) {
            char d[1600], f[1600];

            vio_json_escape(c->detail, d, sizeof(d));
            vio_json_escape(c->fix, f, sizeof(f));
            fprintf(out, "%s\n  \"%s\": {\"status\": \"%s\", \"detail\": \"%s\", \"fix\": %s%s%s}",
                    i ? "," : "", c->key, status_name(c->status), d, c->fix[0] ? "\"" : "",
                    c->fix[0] ? f : "null", c->fix[0] ? "\"" : "");
            continue;
        }
        fprintf(out, "%-5s %-16s %s\n", status_name(c->status), c->key, c->detail);
        if (c->status != ST_OK && c->fix[0])
            fprintf(out, "      %-16s fix: %s\n", "", c->fix);
    }
    if (json) {
        fputs("\n}\n", out);
    } else if (fs_ll_abi() >= 1) {
        fputs("\n", out);
        lmode_print(fs_ll_abi(), out);
    }
    return failed ? 1 : 0;
}

int doctor_landlock_hint(struct nf_err *err)
{
    int abi = fs_ll_abi();

    if (abi < 1)
        return -1;
    return nf_err_hint(err,
                       "or run with --mode landlock, which needs no namespace but is weaker: no "
                       "private /tmp, other processes visible%s; `nsfence explain --mode "
                       "landlock` lists what holds",
                       abi < 4 ? ", and no network at this Landlock ABI" : "");
}
