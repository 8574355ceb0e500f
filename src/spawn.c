#include "src/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/loopback.h"
#include "src/caps.h"
#include "src/doctor.h"
#include "src/init.h"
#include "src/log.h"
#include "src/syscalls.h"
#include "src/util.h"

/* Forwarded to the command; SIGPIPE is blocked so that a write to a closed
 * proxy peer returns EPIPE instead of killing the host side. */
static const int host_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

sigset_t spawn_orig_mask;

int spawn_block_signals(struct nf_err *err)
{
    sigset_t set;

    sigemptyset(&set);
    for (size_t i = 0; i < NF_ARRAY_SIZE(host_signals); i++)
        sigaddset(&set, host_signals[i]);
    sigaddset(&set, SIGPIPE);
    if (sigprocmask(SIG_BLOCK, &set, &spawn_orig_mask) < 0)
        return nf_err_sys(err, "sigprocmask");
    return 0;
}

static int write_file(const char *path, const char *data, struct nf_err *err)
{
    _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
    size_t len = strlen(data);

    if (fd < 0)
        return nf_err_sys(err, "open %s", path);
    if (write(fd, data, len) != (ssize_t)len)
        return nf_err_sys(err, "write %s (\"%.*s\")", path, (int)strcspn(data, "\n"), data);
    return 0;
}

/* As root, every id this process can see maps to itself, so files keep their
 * real owners inside: mirror our own map, "0 0 4294967295" on a host. */
static int mirror_map(const char *self, char *out, size_t outsz, struct nf_err *err)
{
    _cleanup_close_ int fd = open(self, O_RDONLY | O_CLOEXEC);
    char buf[4096];
    size_t len = 0;
    ssize_t n;
    char *line;
    char *save = NULL;

    if (fd < 0)
        return nf_err_sys(err, "open %s", self);
    n = read(fd, buf, sizeof(buf) - 1);
    if (n < 0)
        return nf_err_sys(err, "read %s", self);
    buf[n] = '\0';
    out[0] = '\0';
    for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long inside, outside, count;

        if (sscanf(line, "%lu %lu %lu", &inside, &outside, &count) != 3)
            return nf_err_set(err, EINVAL, "%s: cannot parse \"%s\"", self, line);
        len += (size_t)snprintf(out + len, outsz - len, "%lu %lu %lu\n", inside, inside, count);
        if (len >= outsz)
            return nf_err_set(err, E2BIG, "%s: too many ranges", self);
    }
    return 0;
}

static long sysctl_value(const char *path)
{
    char buf[32];
    long v = -1;
    FILE *f = fopen(path, "re");

    if (f && fgets(buf, sizeof(buf), f))
        v = strtol(buf, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

/* The id maps, composed before the clone: between the clone and init's GO
 * the host side only writes them, every page it touches there being a
 * copy-on-write fault (init waits for them). */
struct id_maps {
    char uid[4096];
    char gid[4096];
    bool deny_setgroups;
};

static int compose_maps(const struct run_plan *plan, struct id_maps *m, struct nf_err *err)
{
    if (plan->idmap == RUN_IDMAP_MIRROR) {
        m->deny_setgroups = false;
        if (mirror_map("/proc/self/uid_map", m->uid, sizeof(m->uid), err) < 0)
            return -1;
        return mirror_map("/proc/self/gid_map", m->gid, sizeof(m->gid), err);
    }
    m->deny_setgroups = true;
    snprintf(m->uid, sizeof(m->uid), "%u %u 1\n", plan->uid, getuid());
    snprintf(m->gid, sizeof(m->gid), "%u %u 1\n", plan->gid, getgid());
    return 0;
}

static int write_maps(const struct run_plan *plan, const struct id_maps *m, pid_t pid,
                      struct nf_err *err)
{
    char path[64];

    if (m->deny_setgroups) {
        snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
        if (write_file(path, "deny", err) < 0)
            return -1;
    }
    snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
    if (write_file(path, m->uid, err) < 0) {
        if (plan->idmap == RUN_IDMAP_MIRROR && err->code == EPERM &&
            caps_have(31 /* CAP_SETFCAP */) == 0)
            return nf_err_hint(err, "mapping uid 0 into the sandbox needs CAP_SETFCAP, which "
                                    "this process lacks; run nsfence as a regular user, or "
                                    "give it CAP_SETFCAP (e.g. docker --cap-add SETFCAP)");
        return -1;
    }
    snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
    return write_file(path, m->gid, err);
}

/* A refused clone, with its likely cause and the fix. */
static int explain_clone(int code, struct nf_err *err)
{
    long max = sysctl_value("/proc/sys/user/max_user_namespaces");
    long nnp, filters;

    errno = code;
    nf_err_sys(err, "cannot create the sandbox's namespaces (clone)");
    switch (code) {
    case EPERM:
        if (sysctl_value("/proc/sys/kernel/unprivileged_userns_clone") == 0 && getuid() != 0)
            return nf_err_hint(err, "unprivileged user namespaces are off: sysctl -w "
                                    "kernel.unprivileged_userns_clone=1");
        doctor_seccomp_state(&nnp, &filters);
        if (filters > 0) {
            char cause[512], fix[512];

            doctor_seccomp_cause(DOCTOR_NEWUSER, cause, sizeof(cause), fix, sizeof(fix));
            nf_err_hint(err, "%s: %s", cause, fix);
            return doctor_landlock_hint(err);
        }
        nf_err_hint(err, "user namespaces are refused here; run `nsfence doctor`");
        return doctor_landlock_hint(err);
    case ENOSPC:
        if (max == 0)
            return nf_err_hint(err, "user namespaces are disabled (user.max_user_namespaces = 0); "
                                    "sysctl -w user.max_user_namespaces=15000, in the namespace "
                                    "that set it to 0");
        return nf_err_hint(err,
                           "the user namespace limit is reached (user.max_user_namespaces = "
                           "%ld, or nesting deeper than 32)",
                           max);
    case EUSERS:
        return nf_err_hint(err, "too many nested user namespaces");
    case EINVAL:
        return nf_err_hint(err, "this kernel lacks a namespace nsfence needs");
    default:
        return -1;
    }
}

enum phase {
    PHASE_SETUP,
    PHASE_RUNNING,
    PHASE_EXITED,
};

/* How long a command runs before the host side gives its CPUs back (see
 * cpus_hold). */
#define CPUS_HELD_MS 20

struct run {
    struct spawn_config *cfg;
    pid_t pid;
    struct ev_io done; /* init's one byte: the command's status */
    struct ev_io sync;
    struct ev_io sig;
    struct ev_io exit;
    struct ev_timer cpus; /* the host side gives its CPUs back */
    enum phase phase;
    bool failed; /* an error record arrived, or a hook failed */
    struct nf_err err;
    int early_signal; /* a signal that ended the run before the command ran */
    int status;       /* exit status for nsfence */
};

static void kill_sandbox(struct run *r)
{
    if (nf_pidfd_send_signal(r->exit.fd, SIGKILL) < 0 && errno != ESRCH)
        (void)kill(r->pid, SIGKILL);
}

static void on_sync(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct run *r = container_of(io, struct run, sync);
    struct sync_msg m;
    int fds[SYNC_MAX_FDS];
    size_t nfds;
    int rc;

    (void)revents;
    for (;;) {
        rc = sync_recv(io->fd, &m, fds, &nfds);
        if (rc < 0 && errno == EAGAIN)
            return;
        if (rc <= 0) {
            /* EOF: every copy of the child's end is closed; after READY that
             * means execve happened. */
            ev_io_stop(loop, io);
            close(io->fd);
            io->fd = -1;
            return;
        }
        switch ((enum sync_kind)m.kind) {
        case SYNC_ERROR:
            if (!r->failed) {
                r->failed = true;
                nf_err_set(&r->err, m.code, "%s", m.text);
            }
            kill_sandbox(r);
            break;
        case SYNC_FDS:
            if (!r->cfg->hooks.on_fds) {
                for (size_t i = 0; i < nfds; i++)
                    close(fds[i]);
            } else if (r->cfg->hooks.on_fds(r->cfg->hooks.user, (enum sync_tag)m.tag, fds,
                                            m.fd_kind, nfds, &r->err) < 0) {
                r->failed = true;
                kill_sandbox(r);
            }
            break;
        case SYNC_READY:
            for (uint32_t i = 0; i < m.n_times && i < STAGE_COUNT; i++)
                if (m.times[i])
                    r->cfg->times[i] = m.times[i];
            if (r->phase == PHASE_SETUP)
                r->phase = PHASE_RUNNING;
            if (r->cfg->cpus_held && ev_timer_start(loop, &r->cpus, CPUS_HELD_MS) < 0)
                spawn_cpus_release(r->cfg);
            if (r->cfg->hooks.on_running)
                r->cfg->hooks.on_running(r->cfg->hooks.user);
            break;
        case SYNC_EXEC_FAILED:
            r->cfg->exec_failed = true;
            break;
        case SYNC_GO:
        case SYNC_PREPARED:
            for (size_t i = 0; i < nfds; i++)
                close(fds[i]);
            break;
        }
    }
}

static void on_cpus(struct ev_loop *loop, struct ev_timer *t)
{
    struct run *r = container_of(t, struct run, cpus);

    (void)loop;
    spawn_cpus_release(r->cfg);
}

static void on_signal(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct run *r = container_of(io, struct run, sig);
    struct signalfd_siginfo si;

    (void)loop;
    (void)revents;
    while (read(io->fd, &si, sizeof(si)) == sizeof(si)) {
        if (!r->cfg->signal_received)
            r->cfg->signal_received = (int)si.ssi_signo;
        if (r->phase == PHASE_SETUP) {
            /* Nothing to forward to yet: stop the setup, exit 128+N. */
            if (!r->early_signal)
                r->early_signal = (int)si.ssi_signo;
            kill_sandbox(r);
            continue;
        }
        /* A terminal's Ctrl-C already reached the command (same process
         * group) unless it runs in its own session; a kill(1) did not. */
        if ((int)si.ssi_code > 0 && si.ssi_code != SI_TKILL && !r->cfg->plan->new_session)
            continue;
        (void)kill(r->pid, (int)si.ssi_signo);
    }
}

static void on_status(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct run *r = container_of(io, struct run, done);
    unsigned char byte;

    (void)revents;
    if (read(io->fd, &byte, 1) != 1) {
        /* init died without a word: its exit status will say how */
        ev_io_stop(loop, io);
        close(io->fd);
        io->fd = -1;
        return;
    }
    r->phase = PHASE_EXITED;
    r->status = byte;
    ev_stop(loop);
}

static void on_exit_ready(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct run *r = container_of(io, struct run, exit);
    siginfo_t info = { 0 };

    (void)revents;
    if (waitid(P_PIDFD, (id_t)io->fd, &info, WEXITED | WNOHANG) < 0 || info.si_pid == 0)
        return;
    r->phase = PHASE_EXITED;
    if (info.si_code == CLD_EXITED)
        r->status = info.si_status;
    else
        r->status = 128 + info.si_status;
    ev_stop(loop);
}

static int run_sandbox(struct spawn_config *cfg, const struct id_maps *maps, struct nf_err *err);

/* A send to init failed: init most likely failed first and said why before
 * it exited. Its own message, not our EPIPE, is what the user needs. */
static void prefer_child_error(int fd, struct nf_err *err)
{
    struct sync_msg m;
    int fds[SYNC_MAX_FDS];
    size_t nfds;

    if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
        return;
    while (sync_recv(fd, &m, fds, &nfds) > 0) {
        for (size_t i = 0; i < nfds; i++)
            close(fds[i]);
        if (m.kind == SYNC_ERROR) {
            nf_err_set(err, m.code, "%s", m.text);
            return;
        }
    }
}

/* lo, brought up from here on the netlink socket init makes inside once
 * the fixed part of the root is built (or the error that stopped it). */
static int loopback_up(struct spawn_config *cfg, int fd, struct nf_err *err)
{
    struct sync_msg m;
    int fds[SYNC_MAX_FDS];
    size_t nfds;
    int rc = sync_recv(fd, &m, fds, &nfds);

    if (rc == 0)
        return nf_err_set(err, ECHILD, "the sandbox died while being set up");
    if (rc < 0)
        return nf_err_sys(err, "receive the netlink socket from the sandbox");
    cfg->times[STAGE_NETLINK] = sync_now_us();
    if (m.kind == SYNC_FDS && m.tag == SYNC_TAG_NETLINK && nfds == 1)
        return net_loopback_up(fds[0], err);
    for (size_t i = 0; i < nfds; i++)
        close(fds[i]);
    if (m.kind == SYNC_ERROR)
        return nf_err_set(err, m.code, "%s", m.text);
    return nf_err_set(err, EPROTO, "unexpected message %u from the sandbox's init", m.kind);
}

void spawn_reap(struct spawn_config *cfg)
{
    siginfo_t info;

    if (cfg->init_pidfd < 0)
        return;
    while (waitid(P_PIDFD, (id_t)cfg->init_pidfd, &info, WEXITED) < 0 && errno == EINTR)
        ;
    close(cfg->init_pidfd);
    cfg->init_pidfd = -1;
}

/* One byte per filesystem operation, shared with init (clone without
 * CLONE_VM copies everything else). */
static size_t results_size(const struct run_plan *plan)
{
    return plan->fs.n ? plan->fs.n : 1;
}

/* The set-up is a relay between two processes, the host side and init,
 * each waking the other a dozen times, and so is the end of a run. Spread
 * over two CPUs, each wake-up crosses to the other one (on a VM, an
 * interrupt into a halted vCPU): on 2 vCPUs `nsfence -- true` took less time
 * pinned to one CPU than free on both. So from the clone on, the host side
 * and init are held on the CPU the host side runs on. The command gets every
 * CPU nsfence was given, as it was given them, before it starts; init, which
 * only waits and reaps, keeps the one; the host side, which serves the proxy
 * and the observer, gets them back once the command has run for
 * CPUS_HELD_MS, so only a short command's end is served on the one CPU. A
 * set-up that cannot be held (a cpuset changing meanwhile) runs as before. */
static void cpus_hold(struct spawn_config *cfg)
{
    cpu_set_t one;
    int cpu;

    if (sched_getaffinity(0, sizeof(cfg->cpus), &cfg->cpus) < 0)
        return;
    cpu = sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &cfg->cpus) || CPU_COUNT(&cfg->cpus) < 2)
        return;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    cfg->cpus_held = sched_setaffinity(0, sizeof(one), &one) == 0;
}

void spawn_cpus_release(const struct spawn_config *cfg)
{
    cpu_set_t all;

    /* Never marked released: the command, a vfork of init, shares init's
     * memory, and init keeps the one CPU. Giving them back twice is
     * harmless. */
    if (!cfg->cpus_held)
        return;
    if (sched_setaffinity(0, sizeof(cfg->cpus), &cfg->cpus) == 0)
        return;
    /* The cpuset changed meanwhile: every CPU it allows. */
    memset(&all, 0xff, sizeof(all));
    if (sched_setaffinity(0, sizeof(all), &all) < 0)
        log_warn("could not give the CPUs back after the set-up: %m");
}

int spawn_run(struct spawn_config *cfg, struct nf_err *err)
{
    struct id_maps maps;
    int status;

    if (cfg->plan->die_with_parent) {
        pid_t parent = getppid();

        /* The sandbox already dies with us; now we die with our parent. It
         * may have gone before the prctl took effect: look again after. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
            return nf_err_sys(err, "prctl(PR_SET_PDEATHSIG)"), 125;
        if (getppid() != parent)
            return nf_err_set(err, ESRCH, "the parent process is gone"), 125;
    }
    cfg->results.n = cfg->plan->fs.n;
    cfg->results.skip = mmap(NULL, results_size(cfg->plan), PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (cfg->results.skip == MAP_FAILED) {
        cfg->results.skip = NULL;
        return nf_err_sys(err, "mmap"), 125;
    }
    if (cfg->plan->idmap != RUN_IDMAP_NONE && compose_maps(cfg->plan, &maps, err) < 0) {
        nf_err_prefix(err, "set up the user namespace");
        status = 125;
    } else {
        cpus_hold(cfg);
        status = run_sandbox(cfg, &maps, err);
    }
    munmap(cfg->results.skip, results_size(cfg->plan));
    cfg->results.skip = NULL;
    return status;
}

static int run_sandbox(struct spawn_config *cfg, const struct id_maps *maps, struct nf_err *err)
{
    struct run r = {
        .cfg = cfg, .sync.fd = -1, .sig.fd = -1, .exit.fd = -1, .done.fd = -1, .status = 125
    };
    struct ev_loop *loop = cfg->loop;
    sigset_t set;
    int sv[2];
    int pidfd = -1;
    struct sync_msg go = { .kind = SYNC_GO };
    pid_t pid;

    int status_pipe[2];

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return nf_err_sys(err, "socketpair"), 125;
    if (pipe2(status_pipe, O_CLOEXEC) < 0) {
        nf_err_sys(err, "pipe");
        close(sv[0]);
        close(sv[1]);
        return 125;
    }
    r.done.fd = status_pipe[0];
    sigemptyset(&set);
    for (size_t i = 0; i < NF_ARRAY_SIZE(host_signals); i++)
        sigaddset(&set, host_signals[i]);
    r.sig.fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (r.sig.fd < 0) {
        nf_err_sys(err, "signalfd");
        goto fail_early;
    }

    /* Namespaces the caller handed us: the sandbox is made in them. */
    if (cfg->plan->userns_fd >= 0 && setns(cfg->plan->userns_fd, CLONE_NEWUSER) < 0) {
        nf_err_sys(err, "setns(userns)");
        goto fail_early;
    }
    if (cfg->plan->pidns_fd >= 0 && setns(cfg->plan->pidns_fd, CLONE_NEWPID) < 0) {
        nf_err_sys(err, "setns(pidns)");
        goto fail_early;
    }
    pid = nf_clone(cfg->plan->namespaces | CLONE_PIDFD | SIGCHLD, &pidfd);
    if (pid < 0) {
        explain_clone(errno, err);
        goto fail_early;
    }
    if (pid == 0) {
        close(sv[0]);
        close(status_pipe[0]);
        init_main(cfg, sv[1], status_pipe[1]);
    }
    close(sv[1]);
    close(status_pipe[1]);
    status_pipe[1] = -1;
    sv[1] = -1;
    r.pid = pid;
    r.exit.fd = pidfd;
    r.sync.fd = sv[0];
    sv[0] = -1;

    if (cfg->hooks.cloned && cfg->hooks.cloned(cfg->hooks.user, pid, err) < 0)
        goto fail_child;
    if (cfg->plan->idmap != RUN_IDMAP_NONE && write_maps(cfg->plan, maps, pid, err) < 0) {
        nf_err_prefix(err, "set up the user namespace");
        if (err->code == EPERM && getuid() != 0 &&
            sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
            nf_err_hint(err, "kernel.apparmor_restrict_unprivileged_userns=1 leaves this user "
                             "namespace without capabilities: install nsfence's AppArmor profile "
                             "(make install) or sysctl -w "
                             "kernel.apparmor_restrict_unprivileged_userns=0");
        goto fail_child;
    }
    cfg->times[STAGE_CLONED] = sync_now_us();
    if (sync_send(r.sync.fd, &go, NULL, 0) < 0) {
        nf_err_sys(err, "start the sandbox");
        prefer_child_error(r.sync.fd, err);
        goto fail_child;
    }
    /* While init builds the fixed part of the root, make the placeholders;
     * then bring lo up, on the socket init hands out when that part is
     * built (a refusal to mount, reported first, keeps its own hint). */
    {
        struct sync_msg prepared = { .kind = SYNC_PREPARED };

        if (cfg->hooks.prepare && cfg->hooks.prepare(cfg->hooks.user, &cfg->results, err) < 0)
            goto fail_child;
        cfg->times[STAGE_PREPARED] = sync_now_us();
        if (cfg->plan->loopback) {
            if (loopback_up(cfg, r.sync.fd, err) < 0)
                goto fail_child;
            cfg->times[STAGE_LOOPBACK] = sync_now_us();
        }
        if (sync_send(r.sync.fd, &prepared, NULL, 0) < 0) {
            nf_err_sys(err, "start the sandbox");
            prefer_child_error(r.sync.fd, err);
            goto fail_child;
        }
    }
    if (fcntl(r.sync.fd, F_SETFL, O_NONBLOCK) < 0) {
        nf_err_sys(err, "sync socket");
        goto fail_child;
    }
    r.sync.cb = on_sync;
    r.sig.cb = on_signal;
    r.exit.cb = on_exit_ready;
    r.done.cb = on_status;
    r.cpus.cb = on_cpus;
    if (ev_io_start(loop, &r.sync, EPOLLIN) < 0 || ev_io_start(loop, &r.sig, EPOLLIN) < 0 ||
        ev_io_start(loop, &r.exit, EPOLLIN) < 0 || ev_io_start(loop, &r.done, EPOLLIN) < 0) {
        nf_err_sys(err, "epoll_ctl");
        goto fail_child;
    }
    if (ev_run(loop, err) < 0)
        goto fail_child;
    /* An error record may still sit in the socket if the exit won the race. */
    if (r.sync.fd >= 0)
        on_sync(loop, &r.sync, EPOLLIN);
    ev_timer_stop(loop, &r.cpus);
    cfg->times[STAGE_EXITED] = sync_now_us();
    ev_io_stop(loop, &r.sig);
    ev_io_stop(loop, &r.exit);
    if (r.done.fd >= 0) {
        ev_io_stop(loop, &r.done);
        close(r.done.fd);
    }
    if (r.sync.fd >= 0) {
        ev_io_stop(loop, &r.sync);
        close(r.sync.fd);
    }
    close(r.sig.fd);
    /* init may still be tearing the namespaces down: the host side closes
     * what it served meanwhile, then reaps it (spawn_reap). */
    cfg->init_pidfd = r.exit.fd;
    if (r.failed) {
        *err = r.err;
        return 125;
    }
    if (r.early_signal)
        return 128 + r.early_signal;
    if (r.phase != PHASE_EXITED || cfg->times[STAGE_EXEC] == 0) {
        nf_err_set(err, ECHILD, "the sandbox died while being set up (status %d)", r.status);
        return 125;
    }
    return r.status;

fail_child:
    ev_timer_stop(loop, &r.cpus);
    (void)kill(pid, SIGKILL);
    (void)waitpid(pid, NULL, 0);
    if (r.sync.fd >= 0)
        close(r.sync.fd);
    if (r.exit.fd >= 0)
        close(r.exit.fd);
fail_early:
    if (r.done.fd >= 0)
        close(r.done.fd);
    if (status_pipe[1] >= 0)
        close(status_pipe[1]);
    if (r.sig.fd >= 0)
        close(r.sig.fd);
    if (sv[0] >= 0)
        close(sv[0]);
    if (sv[1] >= 0)
        close(sv[1]);
    return 125;
}
