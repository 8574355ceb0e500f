#include "src/init.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs/mount.h"
#include "net/endpoints.h"
#include "net/loopback.h"
#include "src/caps.h"
#include "src/doctor.h"
#include "src/lhelper.h"
#include "src/log.h"
#include "src/syscalls.h"
#include "src/util.h"

extern sigset_t spawn_orig_mask;

/* What init forwards to the command, plus SIGCHLD, which it waits for. */
static const int init_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD };

/* Close every descriptor from 3 up but a and b. */
static int close_all_but(int a, int b)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;

    if (lo > 3 && nf_close_range(3, (unsigned)lo - 1, 0) < 0)
        return -1;
    if (hi > lo + 1 && nf_close_range((unsigned)lo + 1, (unsigned)hi - 1, 0) < 0)
        return -1;
    return nf_close_range((unsigned)hi + 1, ~0U, 0);
}

/* nsfence's own programs (loaded before the command says READY) and a
 * caller's (loaded last, right before execve, and by a traceable init). */
static void split_filters(const struct run_plan *plan, struct sc_set *own, struct sc_set *callers)
{
    own->n = callers->n = 0;
    for (size_t i = 0; i < plan->filters.n; i++) {
        struct sc_set *to = plan->filters.progs[i].kind == SC_FILTER_USER ? callers : own;

        to->progs[to->n++] = plan->filters.progs[i];
    }
}

/* Whether the plan still needs fd in the sandbox. */
static bool plan_uses_fd(const struct run_plan *plan, int fd)
{
    if (fd == plan->block_fd || fd == plan->sync_fd || fd == plan->userns2_fd)
        return true;
    for (size_t i = 0; i < plan->fs.n; i++)
        if (plan->fs.ops[i].kind == FS_OP_BIND_FD && plan->fs.ops[i].fd == fd)
            return true;
    return false;
}

/* Keeping the caller's descriptors for the command, init must still not
 * keep the host side's own (its event loop, signalfd, pidfd: all
 * close-on-exec, which a clone does not close). A caller's close-on-exec
 * descriptor would not reach the command either, unless the plan uses it. */
static int close_own_fds(const struct run_plan *plan, int sync, int status_fd)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int self;

    if (!d)
        return -1;
    self = dirfd(d);
    while ((e = readdir(d))) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        int flags;

        if (*end || end == e->d_name || fd < 3 || fd == self || fd == sync || fd == status_fd)
            continue;
        flags = fcntl((int)fd, F_GETFD);
        if (flags >= 0 && (flags & FD_CLOEXEC) && !plan_uses_fd(plan, (int)fd))
            close((int)fd);
    }
    closedir(d);
    return 0;
}

/* Read locks on the plan's lock files, held while init lives (and released
 * by the kernel when it exits). */
static int hold_locks(const struct run_plan *plan, struct nf_err *err)
{
    for (size_t i = 0; i < plan->n_lock_files; i++) {
        struct flock lock = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
        int fd = open(plan->lock_files[i], O_RDONLY | O_CLOEXEC);

        if (fd < 0)
            return nf_err_sys(err, "Unable to open lock file %s", plan->lock_files[i]);
        if (fcntl(fd, F_SETLK, &lock) < 0)
            return nf_err_sys(err, "Unable to lock file %s", plan->lock_files[i]);
    }
    return 0;
}

/* The command's own user namespace below the sandbox's, whose limit init
 * set to one: it can make no further one (bubblewrap's --disable-userns).
 * Its ids map to themselves. */
static int nest_userns(const struct spawn_config *cfg, struct nf_err *err)
{
    static const char *const maps[] = { "self/uid_map", "self/gid_map" };
    unsigned ids[2] = { getuid(), getgid() };
    int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    int rc = 0;

    if (unshare(CLONE_NEWUSER) < 0)
        return nf_err_sys(err, "Creating new namespace failed");
    /* An undumpable process's /proc/self files belong to root, and a user
     * other than root cannot open its own maps: dumpable for the two writes
     * (the memory is init's, a vfork's; nothing else runs in the sandbox
     * yet), then as it was. */
    if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
        return nf_err_sys(err, "prctl(PR_SET_DUMPABLE)");
    for (size_t i = 0; i < 2 && rc == 0; i++) {
        char line[64];
        int n = snprintf(line, sizeof(line), "%u %u 1\n", ids[i], ids[i]);
        int fd = openat(cfg->proc_fd, maps[i], O_WRONLY | O_CLOEXEC);

        if (fd < 0 || write(fd, line, (size_t)n) != n)
            rc = nf_err_sys(err, "write %s", maps[i]);
        if (fd >= 0)
            close(fd);
    }
    if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 && rc == 0)
        rc = nf_err_sys(err, "prctl(PR_SET_DUMPABLE)");
    return rc;
}

/* The new user namespace exists but may not mount at all: a seccomp filter
 * on nsfence itself, a nested container, or Ubuntu's AppArmor restriction
 * (which lets the namespace be made and then takes its capabilities). */
static void explain_mount_refusal(struct nf_err *err)
{
    char cause[512], fix[512];
    long nnp, filters;

    doctor_seccomp_state(&nnp, &filters);
    if (err->code == EPERM && filters > 0) {
        doctor_seccomp_cause("mounting", cause, sizeof(cause), fix, sizeof(fix));
        nf_err_hint(err, "%s: %s", cause, fix);
        doctor_landlock_hint(err);
        return;
    }
    nf_err_hint(err, "mounts are refused in this user namespace (a nested container, or an "
                     "AppArmor restriction); see `nsfence doctor`");
    doctor_landlock_hint(err);
}

/* Landlock mode: the helper that performs the command's writes, made now
 * (inside the domain, without capabilities, before the seccomp filter) as
 * init's child, and its socket handed to the host side. */
static int start_helper(const struct run_plan *plan, int sync, struct nf_err *err)
{
    static struct fs_perform_ctx ctx;
    struct sync_msg m = { .kind = SYNC_FDS, .tag = SYNC_TAG_HELPER };
    int sv[2];
    long pid;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return nf_err_sys(err, "socketpair");
    ctx.fp = &plan->fs;
    ctx.tmpdir = plan->landlock.tmpdir;
    ctx.ll = &plan->landlock;
    /* A sibling, not a child: the command must not find it among its
     * children (a shell's `wait` would wait for it). */
    pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return nf_err_sys(err, "start the Landlock mode's helper");
    }
    if (pid == 0) {
        close(sv[0]);
        close(sync);
        lhelper_main(&ctx, sv[1]);
    }
    close(sv[1]);
    if (sync_send(sync, &m, &sv[0], 1) < 0) {
        close(sv[0]);
        return nf_err_sys(err, "hand the helper out");
    }
    close(sv[0]);
    return 0;
}

/* The signal init gets when the host side dies, in Landlock mode: there is
 * no PID namespace to take the sandbox down with init, so init does. */
static int host_gone_signal(void)
{
    return SIGRTMIN + 3;
}

/* Landlock mode: kill every process left below init (orphans come to it,
 * the subreaper) until none is left. */
static void sweep(void)
{
    for (;;) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        pid_t self = getpid();

        while (d && (e = readdir(d))) {
            char path[300], buf[512], *rp;
            int fd;
            ssize_t n;
            long ppid;

            if (e->d_name[0] < '1' || e->d_name[0] > '9')
                continue;
            snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
            fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            n = read(fd, buf, sizeof(buf) - 1);
            close(fd);
            if (n <= 0)
                continue;
            buf[n] = '\0';
            rp = strrchr(buf, ')');
            if (rp && sscanf(rp + 1, " %*c %ld", &ppid) == 1 && ppid == self)
                (void)kill((pid_t)strtol(e->d_name, NULL, 10), SIGKILL);
        }
        if (d)
            closedir(d);
        if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
            return;
    }
}

static void noop(int sig)
{
    (void)sig;
}

/* The plan's working directory; where it may be missing inside, $HOME or /
 * instead. Returns the one entered. */
static const char *enter_cwd(const struct run_plan *plan, struct nf_err *err)
{
    if (chdir(plan->fs.cwd) == 0)
        return plan->fs.cwd;
    if (plan->cwd_try) {
        if (plan->cwd_home && chdir(plan->cwd_home) == 0)
            return plan->cwd_home;
        if (chdir("/") == 0)
            return "/";
    }
    if (plan->style == RUN_STYLE_BWRAP)
        return nf_err_sys(err, "Can't chdir to %s", plan->fs.cwd), NULL;
    nf_err_sys(err, "working directory %s is not reachable in the sandbox", plan->fs.cwd);
    nf_err_hint(err, "is it under a deny_read path?");
    return NULL;
}

/* execve with PWD naming cwd. On the stack: the command shares init's
 * memory until it execs, so nothing is allocated. Returns only on failure. */
static void exec_with_pwd(const char *file, const struct run_plan *plan, const char *cwd)
{
    size_t n = 0, k = 0;

    while (plan->envp[n])
        n++;
    {
        char *env[n + 2];
        char pwd[PATH_MAX + 8];

        snprintf(pwd, sizeof(pwd), "PWD=%s", cwd);
        for (size_t i = 0; i < n; i++)
            if (strncmp(plan->envp[i], "PWD=", 4) != 0)
                env[k++] = plan->envp[i];
        env[k++] = pwd;
        env[k] = NULL;
        execvpe(file, plan->argv, env);
    }
}

static _Noreturn void command_main(struct spawn_config *cfg, int sync,
                                   const struct sigaction *saved)
{
    const struct run_plan *plan = cfg->plan;
    struct sc_set own, callers;
    const struct sc_set *filters = &own;
    struct sync_msg ready = { .kind = SYNC_READY, .n_times = STAGE_COUNT };
    struct nf_err err = { 0 };
    const char *file;
    const char *cwd;
    int code;

    /* Every CPU nsfence was given, for the command and what it starts. */
    spawn_cpus_release(cfg);
    /* The command starts with the dispositions and mask nsfence was given
     * (an ignored SIGHUP under nohup stays ignored). */
    for (size_t i = 0; i < NF_ARRAY_SIZE(init_signals); i++)
        (void)sigaction(init_signals[i], &saved[i], NULL);
    if (plan->new_session && setsid() < 0) {
        nf_err_sys(&err, "setsid");
        sync_fail(sync, &err);
    }
    if (plan->pid1 == RUN_PID1_INIT && plan->sync_fd >= 0)
        close(plan->sync_fd); /* init's to hold, not the command's */
    cwd = enter_cwd(plan, &err);
    if (!cwd)
        sync_fail(sync, &err);
    if (plan->userns2_fd >= 0 && setns(plan->userns2_fd, CLONE_NEWUSER) < 0) {
        nf_err_sys(&err, "Can't switch to the user namespace given by --userns2");
        sync_fail(sync, &err);
    }
    if ((plan->disable_userns || plan->userns_nested) && nest_userns(cfg, &err) < 0)
        sync_fail(sync, &err);
    /* Untouched means the caller's own. A user namespace entered gives
     * every capability of its own: those are trimmed to the caller's, as
     * bubblewrap does (a root whose bounding set lacks CAP_SYS_ADMIN must
     * not find it again inside and remount a read-only bind). */
    bool untouched = plan->caps_untouched && !(plan->namespaces & CLONE_NEWUSER) &&
                     plan->userns_fd < 0 && plan->userns2_fd < 0;

    if (plan->landlock_mode ? caps_clear(&err) < 0
        : untouched         ? caps_raise_ambient(plan->caps, &err) < 0
                            : caps_set(plan->caps, &err) < 0)
        sync_fail(sync, &err);
    if ((plan->disable_userns || plan->assert_userns_disabled) && unshare(CLONE_NEWUSER) == 0) {
        nf_err_set(&err, EPERM, "creation of new user namespaces was not disabled as requested");
        sync_fail(sync, &err);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        nf_err_sys(&err, "prctl(PR_SET_NO_NEW_PRIVS)");
        sync_fail(sync, &err);
    }
    if (plan->landlock_mode) {
        /* No core files: the kernel writes one itself, past the supervisor,
         * in the working directory (core_pattern "core"), which a command
         * can make a protected directory (.git/hooks, .vscode). A hard
         * limit the command cannot raise. */
        static const struct rlimit no_core = { 0, 0 };

        if (setrlimit(RLIMIT_CORE, &no_core) < 0) {
            nf_err_sys(&err, "setrlimit(RLIMIT_CORE)");
            sync_fail(sync, &err);
        }
        /* Dies with init (which sweeps the rest when it dies itself). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
            fs_ll_apply(&plan->landlock, &err) < 0 || start_helper(plan, sync, &err) < 0 ||
            fs_ll_scope_below(&plan->landlock, &err) < 0)
            sync_fail(sync, &err);
    }
    /* seccomp last (minijail's order): capabilities, no_new_privs, filters.
     * A caller's own programs come after everything else: a strict allow
     * list need not allow anything but execve. */
    split_filters(plan, &own, &callers);
    if (filters->n) {
        struct sync_msg fdmsg = { .kind = SYNC_FDS, .tag = SYNC_TAG_OBSERVER };
        char why[256];
        int listener;

        if (sc_install(filters, &listener, why, sizeof(why), &err) < 0)
            sync_fail(sync, &err);
        if (why[0])
            log_warn("%s", why);
        if (listener >= 0) {
            if (sync_send(sync, &fdmsg, &listener, 1) < 0) {
                nf_err_sys(&err, "hand the write observer out");
                sync_fail(sync, &err);
            }
            close(listener);
        }
    }
    cfg->times[STAGE_FILTERS] = sync_now_us();
    if (plan->block_fd >= 0) {
        char byte;

        while (read(plan->block_fd, &byte, 1) < 0 && errno == EINTR)
            ;
        close(plan->block_fd);
    }
    cfg->times[STAGE_EXEC] = sync_now_us();
    memcpy(ready.times, cfg->times, sizeof(uint64_t) * STAGE_COUNT);
    if (sync_send(sync, &ready, NULL, 0) < 0)
        _exit(125);
    if (sigprocmask(SIG_SETMASK, &spawn_orig_mask, NULL) < 0)
        _exit(125);
    /* The host side raised its descriptor limit for the proxy; the command
     * gets the caller's. */
    (void)setrlimit(RLIMIT_NOFILE, &plan->nofile);
    file = plan->file ? plan->file : plan->argv[0];
    if (callers.n) {
        char why[8];
        int none;

        if (sc_install(&callers, &none, why, sizeof(why), &err) < 0)
            sync_fail(sync, &err);
    }
    if (plan->set_pwd)
        exec_with_pwd(file, plan, cwd);
    else
        execvpe(file, plan->argv, plan->envp);
    code = errno;
    {
        /* The host side hears that no command ran. */
        struct sync_msg failed = { .kind = SYNC_EXEC_FAILED, .code = code };

        (void)sync_send(sync, &failed, NULL, 0);
    }
    if (plan->style == RUN_STYLE_BWRAP) {
        fprintf(stderr, "bwrap: execvp %s: %s\n", file, strerror(code));
        _exit(1);
    }
    fprintf(stderr, "nsfence: %s: %s\n", file,
            code == ENOENT && !strchr(file, '/') ? "command not found" : strerror(code));
    _exit(code == ENOENT ? 127 : 126);
}

/* Landlock mode: init sweeps instead of a PID namespace's end; the run's
 * private TMPDIR, which the host side removes after the run, init removes
 * when the host side is killed. */
static bool landlock_sweep;
static const char *landlock_tmpdir;

/* The command is gone: everything else in the sandbox goes too, now, then
 * the host side hears the status from us before we exit. Our own exit
 * (tearing down the namespaces, mounts and all) then overlaps with the host
 * side closing its proxy and observer. */
static _Noreturn void finish(int status, int status_fd)
{
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    unsigned char byte = (unsigned char)code;

    /* Only as PID 1 of the sandbox's own PID namespace does -1 mean the
     * sandbox: without one (bubblewrap's --lock-file, --sync-fd) it would
     * mean every process the caller may signal. */
    if (getpid() == 1)
        (void)kill(-1, SIGKILL);
    else if (landlock_sweep)
        sweep();
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
        ;
    if (status_fd >= 0)
        (void)!write(status_fd, &byte, 1);
    _exit(code);
}

/* PID 1: reap everything, forward to the command the signals that come from
 * outside the sandbox (a sender inside has a pid here, one outside has 0),
 * and exit with the command's status. */
static _Noreturn void init_loop(pid_t cmd, const sigset_t *set, int status_fd)
{
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(set, &si);

        if (sig < 0)
            continue;
        if (sig == SIGCHLD) {
            int status;
            pid_t p;

            while ((p = waitpid(-1, &status, WNOHANG)) > 0)
                if (p == cmd)
                    finish(status, status_fd);
            continue;
        }
        if (landlock_sweep && sig == host_gone_signal()) {
            /* The host side is gone: so is the sandbox, and what the
             * host side would have removed after it (nothing is left below
             * us to write there again). */
            sweep();
            if (landlock_tmpdir) {
                struct nf_err err = { 0 };

                (void)fs_ll_tmpdir_remove(landlock_tmpdir, &err);
            }
            _exit(125);
        }
        /* Without a PID namespace (Landlock mode) the host side has a pid
         * here: its forwarded signals are the ones from outside. */
        if (si.si_pid == 0 || (landlock_sweep && si.si_pid == getppid()))
            (void)kill(cmd, sig);
    }
}

/* The steps of init_main below are out of line: their messages and
 * program sets stay off the stack the mounts then run on, which init, a
 * copy of the host side, pays a page fault for each page of. */

/* lo is brought up by the host side, on a netlink socket made here. */
static __attribute__((noinline)) void hand_out_netlink(int sync)
{
    struct sync_msg m = { .kind = SYNC_FDS, .tag = SYNC_TAG_NETLINK };
    struct nf_err err = { 0 };
    int nl = net_loopback_socket(&err);

    if (nl < 0)
        sync_fail(sync, &err);
    if (sync_send(sync, &m, &nl, 1) < 0) {
        nf_err_sys(&err, "hand the netlink socket out");
        sync_fail(sync, &err);
    }
    close(nl);
}

/* The proxy's listening sockets, made inside once lo is up. The host side
 * serves them; nothing of the network path stays where the command could
 * signal, trace or kill it. */
static __attribute__((noinline)) void hand_out_endpoints(const struct run_plan *plan, int sync)
{
    struct sync_msg m = { .kind = SYNC_FDS, .tag = SYNC_TAG_ENDPOINTS };
    struct nf_err err = { 0 };
    struct net_endpoints ep;

    if (net_endpoints_open(plan->http_port, plan->socks_port, &ep, &err) < 0)
        sync_fail(sync, &err);
    for (size_t i = 0; i < ep.n; i++)
        m.fd_kind[i] = (uint8_t)ep.proto[i];
    if (sync_send(sync, &m, ep.fd, ep.n) < 0) {
        nf_err_sys(&err, "hand the proxy endpoints out");
        sync_fail(sync, &err);
    }
    net_endpoints_close(&ep);
}

/* Traceable by the command: nothing worth taking from it, and nothing it
 * could do through init that it may not do itself (bubblewrap's pid 1 loads
 * the caller's programs too). */
static __attribute__((noinline)) void become_traceable(const struct run_plan *plan, pid_t cmd)
{
    struct sc_set own, callers;
    struct nf_err err = { 0 };
    char why[8];
    int none;

    split_filters(plan, &own, &callers);
    if (caps_set(0, &err) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        (callers.n && sc_install(&callers, &none, why, sizeof(why), &err) < 0)) {
        (void)kill(cmd, SIGKILL);
        _exit(125);
    }
    /* Only now, with nothing left to take: a caller's program may refuse
     * this prctl, and init then stays undumpable. */
    (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

_Noreturn void init_main(struct spawn_config *cfg, int sync, int status_fd)
{
    const struct run_plan *plan = cfg->plan;
    struct nf_err err = { 0 };
    struct sync_msg m;
    struct sigaction saved[NF_ARRAY_SIZE(init_signals)];
    struct sigaction sa = { .sa_handler = noop };
    struct fs_exec fx;
    int fds[SYNC_MAX_FDS];
    size_t nfds;
    sigset_t set;
    char peek;
    pid_t cmd;

    /* If the host side dies, however it dies, the sandbox dies with it.
     * Without a PID namespace (Landlock mode), init is told and kills what
     * is below it, orphans included (they come to it, the subreaper). */
    /* Written only when set: they start zero, and a write would copy
     * their page from the host side's. */
    if (plan->landlock_mode) {
        landlock_sweep = true;
        landlock_tmpdir = plan->landlock.tmpdir;
    }
    if (prctl(PR_SET_PDEATHSIG, landlock_sweep ? host_gone_signal() : SIGKILL, 0, 0, 0) < 0)
        _exit(125);
    if (landlock_sweep && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
        _exit(125);
    if (sync_recv(sync, &m, fds, &nfds) <= 0 || m.kind != SYNC_GO)
        _exit(125);
    /* The parent may have died before PDEATHSIG was armed: its end of the
     * socket is then closed. */
    if (recv(sync, &peek, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
        _exit(125);
    /* Inherited descriptors (locks, the event loop) are not ours to keep,
     * unless the plan hands the caller's to the command. */
    if (plan->keep_fds ? close_own_fds(plan, sync, status_fd) < 0
                       : close_all_but(sync, status_fd) < 0) {
        nf_err_sys(&err, "close the host side's descriptors");
        sync_fail(sync, &err);
    }
    if (plan->hostname && sethostname(plan->hostname, strlen(plan->hostname)) < 0) {
        nf_err_sys(&err, "sethostname");
        sync_fail(sync, &err);
    }
    if (plan->disable_userns) {
        /* Below this one the sandbox may make one more user namespace: the
         * command's own, which it then cannot raise the limit from. */
        int fd = open("/proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);

        if (fd < 0 || write(fd, "1", 1) != 1) {
            nf_err_sys(&err, "sysctl user.max_user_namespaces");
            sync_fail(sync, &err);
        }
        close(fd);
    }
    /* The host's /proc, held for the nested user namespace's maps: the
     * sandbox may have none once pivoted. */
    if (plan->disable_userns || plan->userns_nested) {
        cfg->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (cfg->proc_fd < 0) {
            nf_err_sys(&err, "open /proc");
            sync_fail(sync, &err);
        }
    }
    /* The fixed part of the root while the host side makes the
     * placeholders. */
    memset(&fx, 0, sizeof(fx));
    if (!plan->landlock_mode && fs_exec_begin(&plan->fs, &fx, &err) < 0) {
        if (fx.mounts_refused)
            explain_mount_refusal(&err);
        sync_fail(sync, &err);
    }
    cfg->times[STAGE_FIXED] = sync_now_us();
    /* The host side brings lo up on a netlink socket made here, inside,
     * once it has made the placeholders. After the fixed part: a refusal
     * to mount (and its hint) reaches the host side before any refusal of
     * lo's change, as when init sent it itself. */
    if (plan->loopback)
        hand_out_netlink(sync);
    /* Every process in the sandbox would otherwise possess the caller's
     * session keyring, and with it the keys kept there (Kerberos ccaches,
     * tokens): an anonymous one, joined before the command exists, is all
     * the sandbox shares. Best effort: the per-user key quota may refuse it
     * (EDQUOT), and then the seccomp filter refusing every keyring call
     * holds alone. (Here, while the host side is still preparing.) */
    if (plan->keyring && nf_join_new_session_keyring() < 0)
        log_v("no fresh session keyring (%s): the keyring calls stay refused by seccomp",
              strerror(errno));
    if (sync_recv(sync, &m, fds, &nfds) <= 0 || m.kind != SYNC_PREPARED)
        _exit(125);
    /* Only now is lo up. Bound before, 127.0.0.1 would take the listener
     * (IPv4 lets a down lo's address be bound) but ::1 would not exist yet,
     * and its EADDRNOTAVAIL reads as a host without IPv6. */
    if (plan->endpoints)
        hand_out_endpoints(plan, sync);
    cfg->times[STAGE_ENDPOINTS] = sync_now_us();
    if (!plan->landlock_mode && fs_exec_finish(&plan->fs, cfg->results.skip, &fx, &err) < 0)
        sync_fail(sync, &err);
    cfg->times[STAGE_MOUNTED] = sync_now_us();
    if (hold_locks(plan, &err) < 0)
        sync_fail(sync, &err);
    if (plan->pid1 == RUN_PID1_COMMAND) {
        /* Nothing between the command and the host side: it is what was
         * cloned, and keeps the dispositions it was given. */
        for (size_t i = 0; i < NF_ARRAY_SIZE(init_signals); i++)
            (void)sigaction(init_signals[i], NULL, &saved[i]);
        command_main(cfg, sync, saved);
    }

    /* Not dumpable: the command (same uid) cannot ptrace init or open its
     * /proc/1/mem (a traceable init becomes dumpable again once it holds
     * nothing). */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        nf_err_sys(&err, "prctl(PR_SET_DUMPABLE)");
        sync_fail(sync, &err);
    }
    /* PID 1 only receives the signals it has a handler for; a no-op handler
     * with the signal blocked lets sigwaitinfo collect them. */
    sigemptyset(&set);
    for (size_t i = 0; i < NF_ARRAY_SIZE(init_signals); i++) {
        sigaddset(&set, init_signals[i]);
        if (sigaction(init_signals[i], &sa, &saved[i]) < 0) {
            nf_err_sys(&err, "sigaction");
            sync_fail(sync, &err);
        }
    }
    if (landlock_sweep) {
        sigaddset(&set, host_gone_signal());
        if (sigaction(host_gone_signal(), &sa, NULL) < 0) {
            nf_err_sys(&err, "sigaction");
            sync_fail(sync, &err);
        }
    }
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) {
        nf_err_sys(&err, "sigprocmask");
        sync_fail(sync, &err);
    }
    /* The command shares init's memory until it execs, as posix_spawn's
     * child does: no page tables copied, no page copied on write, and init,
     * which has nothing else to do, waits meanwhile. command_main only makes
     * system calls and never returns. */
    cmd = vfork();
    if (cmd < 0) {
        nf_err_sys(&err, "start the command");
        sync_fail(sync, &err);
    }
    if (cmd == 0)
        command_main(cfg, sync, saved);
    close(sync);
    /* The command's status then reaches the host side as init's own exit
     * status, not through a pipe it could open. */
    if (plan->init_traceable) {
        close(status_fd);
        become_traceable(plan, cmd);
    }
    init_loop(cmd, &set, plan->init_traceable ? -1 : status_fd);
}
