#include "src/host.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fs/gitrepo.h"
#include "fs/placeholder.h"
#include "net/endpoints.h"
#include "proxy/server.h"
#include "seccomp/observer.h"
#include "seccomp/supervisor.h"
#include "src/env.h"
#include "src/lmode.h"
#include "src/log.h"
#include "src/loop.h"
#include "src/spawn.h"
#include "src/util.h"
#include "src/violations.h"

static void print_timings(const uint64_t *t)
{
    static const struct {
        const char *name;
        enum spawn_stage from, to;
    } rows[] = {
        { "policy and plan", STAGE_START, STAGE_PLANNED },
        { "clone and id maps", STAGE_PLANNED, STAGE_CLONED },
        { "mounts (fixed part)", STAGE_CLONED, STAGE_FIXED },
        { "host: placeholders", STAGE_CLONED, STAGE_PREPARED },
        { "lo", STAGE_NETLINK, STAGE_LOOPBACK },
        { "endpoints", STAGE_LOOPBACK, STAGE_ENDPOINTS },
        { "mounts (the rest)", STAGE_ENDPOINTS, STAGE_MOUNTED },
        { "filters", STAGE_MOUNTED, STAGE_FILTERS },
        { "exec", STAGE_FILTERS, STAGE_EXEC },
        { "command", STAGE_EXEC, STAGE_EXITED },
        { "teardown", STAGE_EXITED, STAGE_DONE },
    };

    for (size_t i = 0; i < NF_ARRAY_SIZE(rows); i++) {
        uint64_t a = t[rows[i].from], b = t[rows[i].to];

        if (a && b && b >= a)
            log_error("timing %-24s %8llu us", rows[i].name, (unsigned long long)(b - a));
        else
            log_error("timing %-24s %8s", rows[i].name, "-");
    }
}

struct host_side {
    struct px_server *px;
    struct ctl_channel *ctl;
    struct sc_observer *observer;
    struct sc_observer_config ocfg;
    struct ev_loop *loop;
    const struct fs_plan *plan;
    struct fs_ph_set ph;
    struct fs_git_ids git_ids; /* the repositories the plan saw, as the run starts */
    /* Landlock mode */
    const struct run_plan *run;
    struct vio_list *vio;
    struct sc_supervisor *sup;
    int helper_fd;
    int proxy_listener[2]; /* 127.0.0.1 and ::1, each accepted only by us */
    bool unix_connect;
    bool report_files;
};

/* Landlock mode: a socket connected to the proxy, for the supervisor to put
 * in place of the command's. The listener is never served by the event
 * loop: only this accepts on it, right after connecting, and only its own
 * connection (another host process that connected meanwhile is dropped), so
 * the proxy serves nothing but what the supervisor injected. */
static int connect_proxy(void *user, int family, bool socks)
{
    struct host_side *h = user;
    int l = h->proxy_listener[family == AF_INET6 && h->proxy_listener[1] >= 0];
    struct sockaddr_storage at, mine, peer;
    socklen_t alen = sizeof(at), mlen = sizeof(mine);
    int c, rc;

    if (l < 0 || !h->px)
        return -ECONNREFUSED;
    if (getsockname(l, (struct sockaddr *)&at, &alen) < 0)
        return -errno;
    c = socket(at.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0)
        return -errno;
    if (connect(c, (struct sockaddr *)&at, alen) < 0 ||
        getsockname(c, (struct sockaddr *)&mine, &mlen) < 0) {
        rc = -errno;
        close(c);
        return rc;
    }
    for (int tries = 0; tries < 64; tries++) {
        socklen_t plen = sizeof(peer);
        struct nf_err err = { 0 };
        int a = accept4(l, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (a < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            break;
        }
        if (plen != mlen || memcmp(&peer, &mine, plen) != 0) {
            close(a); /* not ours */
            continue;
        }
        if (px_server_adopt(h->px, a, socks, &err) < 0) {
            log_v("%s", err.msg);
            break;
        }
        return c;
    }
    close(c);
    return -ECONNREFUSED;
}

static int open_proxy_listeners(struct host_side *h, struct nf_err *err)
{
    struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
    int one = 1;

    h->proxy_listener[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (h->proxy_listener[0] < 0 ||
        bind(h->proxy_listener[0], (struct sockaddr *)&in, sizeof(in)) < 0 ||
        listen(h->proxy_listener[0], 64) < 0)
        return nf_err_sys(err, "the proxy's listener on 127.0.0.1");
    h->proxy_listener[1] = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (h->proxy_listener[1] >= 0 &&
        (setsockopt(h->proxy_listener[1], IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0 ||
         bind(h->proxy_listener[1], (struct sockaddr *)&in6, sizeof(in6)) < 0 ||
         listen(h->proxy_listener[1], 64) < 0)) {
        close(h->proxy_listener[1]); /* no IPv6 here: the IPv4 one serves both */
        h->proxy_listener[1] = -1;
    }
    return 0;
}

/* Runs while init builds the fixed part of the root on the other CPU. */
static int prepare(void *user, struct run_results *res, struct nf_err *err)
{
    struct host_side *h = user;

    if (fs_placeholders_prepare(h->plan, &h->ph, res->skip, err) < 0)
        return -1;
    /* Once the placeholders are made, as they will be bound. */
    return fs_git_ids_take(h->plan, &h->git_ids, err);
}

/* The control channel stops the sandbox if it fails before its first
 * line. */
static int cloned(void *user, pid_t pid, struct nf_err *err)
{
    struct host_side *h = user;

    (void)err;
    ctl_set_target(h->ctl, pid);
    return 0;
}

/* The proxy's listeners arrive from init, the observer's notification fd
 * from the command, over the sync socket. */
static int serve_fds(void *user, enum sync_tag tag, int *fds, const uint8_t *kinds, size_t n,
                     struct nf_err *err)
{
    struct host_side *h = user;
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        if (rc < 0) {
            close(fds[i]);
            continue;
        }
        switch (tag) {
        case SYNC_TAG_ENDPOINTS:
            if (h->px)
                rc = px_server_listen(h->px, fds[i], kinds[i] == NET_EP_SOCKS, err);
            else
                close(fds[i]);
            break;
        case SYNC_TAG_OBSERVER:
            if (h->run->landlock_mode && !h->sup && h->helper_fd >= 0) {
                struct sc_supervisor_config sc = {
                    .helper_fd = h->helper_fd,
                    .violations = h->vio,
                    .report_files = h->report_files,
                    .git_watch = h->ocfg.git_watch,
                    .http_port = h->px ? h->run->http_port : 0,
                    .socks_port = h->px ? h->run->socks_port : 0,
                    .connect_proxy = connect_proxy,
                    .user = h,
                    .unix_connect = h->unix_connect,
                };

                h->helper_fd = -1;
                rc = sc_supervisor_new(&h->sup, h->loop, fds[i], &sc, err);
            } else if (h->run->landlock_mode) {
                close(fds[i]);
                rc = nf_err_set(err, EPROTO, "Landlock mode: no helper to perform writes");
            } else if (!h->observer) {
                rc = sc_observer_new(&h->observer, h->loop, fds[i], &h->ocfg, err);
            } else {
                close(fds[i]);
            }
            break;
        case SYNC_TAG_HELPER:
            if (h->helper_fd < 0)
                h->helper_fd = fds[i];
            else
                close(fds[i]);
            break;
        case SYNC_TAG_NETLINK: /* spawn's own, taken before the loop */
        default:
            close(fds[i]);
            break;
        }
    }
    return rc;
}

/* The proxy holds two descriptors per tunnel (four more while bytes move);
 * the command gets the caller's limit (the plan's). */
static void raise_nofile(void)
{
    struct rlimit r;

    if (getrlimit(RLIMIT_NOFILE, &r) < 0)
        return;
    r.rlim_cur = r.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &r);
}

int host_run(struct front *f, struct host_opts *o, struct nf_err *err)
{
    const struct policy *pol = &f->pol;
    struct spawn_config sc = { .plan = &f->plan, .init_pidfd = -1, .proc_fd = -1 };
    struct ev_loop loop = { .epfd = -1 };
    struct vio_list vio = { .log_fd = -1 };
    struct pol_strv git_watch = { 0 };
    struct host_side host = { .plan = &f->plan.fs,
                              .run = &f->plan,
                              .vio = &vio,
                              .helper_fd = -1,
                              .proxy_listener = { -1, -1 } };
    int status = 125;

    sc.times[STAGE_START] = o->start_us;
    if (vio_init(&vio, pol, f->command, err) < 0)
        goto out;
    if (pol->network_enabled)
        raise_nofile();
    if (spawn_block_signals(err) < 0)
        goto out;
    if (ev_loop_init(&loop, err) < 0)
        goto out;
    if (pol->network_enabled) {
        struct px_server_config pc = { .rules = &f->rules,
                                       .parent = &f->parent,
                                       .max_connections = pol->max_connections,
                                       .violations = &vio,
                                       .http_relay_port = pol->http_relay_port,
                                       .socks_relay_port = pol->socks_relay_port };

        if (px_server_new(&host.px, &loop, &pc, err) < 0)
            goto out;
    }
    if (o->control_fd >= 0) {
        struct ctl_config cc = { .fd = o->control_fd,
                                 .style = o->control_style,
                                 .debug = o->debug,
                                 .cwd = pol->cwd,
                                 .home = pol->home,
                                 .px = host.px };

        if (ctl_start(&host.ctl, &loop, &cc, err) < 0 || ctl_failed(host.ctl, err))
            goto out;
    }
    if (f->plan.landlock_mode) {
        host.unix_connect = pol->allow_all_unix_sockets && f->plan.landlock.abi >= 4;
        host.report_files = pol->monitor_enabled;
        if (fs_ll_tmpdir_make(&f->plan.landlock.tmpdir, err) < 0 ||
            env_set(&f->plan.envp, "TMPDIR", f->plan.landlock.tmpdir, err) < 0)
            goto out;
        if (host.px && open_proxy_listeners(&host, err) < 0)
            goto out;
        lmode_warn(f->plan.landlock.abi);
        vio.mode = "mode landlock (no namespaces; see `nsfence explain --mode landlock` for what "
                   "is weaker)";
    }
    host.loop = &loop;
    host.ocfg = (struct sc_observer_config){ .write_roots = f->plan.fs.write_roots,
                                             .n_write_roots = f->plan.fs.n_write_roots,
                                             .protected_paths = f->plan.fs.protected_paths,
                                             .n_protected = f->plan.fs.n_protected,
                                             .scratch = f->plan.fs.scratch,
                                             .n_scratch = f->plan.fs.n_scratch,
                                             .read_only = f->plan.fs.read_only,
                                             .n_read_only = f->plan.fs.n_read_only,
                                             .violations = &vio,
                                             .git_watch = &git_watch };
    sc.loop = &loop;
    sc.hooks.on_fds = serve_fds;
    sc.hooks.prepare = f->plan.landlock_mode ? NULL : prepare;
    sc.hooks.cloned = cloned;
    sc.hooks.user = &host;
    /* Landlock mode makes no placeholders: the repositories as they are. */
    if (f->plan.landlock_mode && fs_git_ids_take(&f->plan.fs, &host.git_ids, err) < 0)
        goto out;
    sc.times[STAGE_PLANNED] = sync_now_us();
    status = spawn_run(&sc, err);
    o->signal_received = sc.signal_received;
    if (ctl_failed(host.ctl, err))
        status = 125;
    /* A command that made no name made no repository: the rescan of the
     * write roots (as deep as the plan's) is spared to read-only commands. */
    if ((status != 125 || !err->msg[0]) && sc_observer_saw_creation(host.observer)) {
        struct pol_strv made = { 0 };
        struct nf_err ignored;

        /* Reported, not fatal: the command has run. */
        (void)fs_git_created(&f->plan.fs, pol->mandatory_deny_depth, &git_watch, &made, &ignored);
        for (size_t i = 0; i < made.n; i++)
            vio_add_git(&vio, made.v[i]);
        pol_strv_free(&made);
    }
    /* A repository seen before the run that is no longer what it was: the
     * command could change none of it; whatever did (a concurrent run, the
     * user's own git) removed this run's binds with what it replaced. */
    if (status != 125 || !err->msg[0]) {
        struct pol_strv changed = { 0 };
        struct nf_err ignored;

        (void)fs_git_changed(&f->plan.fs, &host.git_ids, &changed, &ignored);
        for (size_t i = 0; i < changed.n; i++)
            vio_add_git_changed(&vio, changed.v[i]);
        pol_strv_free(&changed);
    }
out:
    sc_observer_free(host.observer);
    sc_supervisor_free(host.sup);
    if (host.helper_fd >= 0)
        close(host.helper_fd);
    for (int i = 0; i < 2; i++)
        if (host.proxy_listener[i] >= 0)
            close(host.proxy_listener[i]);
    px_server_free(host.px);
    ctl_free(host.ctl); /* after the proxy: its rule tables */
    /* The placeholders go once init is gone, and the sandbox's mount
     * namespace with it: removing one still bound read-only there would
     * detach that mount first, an expedited RCU grace period each (an IPI
     * to every CPU), up to fourteen a run. */
    spawn_reap(&sc);
    fs_placeholders_release(&host.ph);
    fs_git_ids_free(&host.git_ids);
    if (loop.epfd >= 0)
        ev_loop_close(&loop);
    if ((status != 125 || !err->msg[0]) && !o->no_violation_block)
        vio_print_block(&vio, STDERR_FILENO);
    vio_free(&vio);
    if (f->plan.landlock.tmpdir) {
        struct nf_err e = { 0 };

        if (fs_ll_tmpdir_remove(f->plan.landlock.tmpdir, &e) < 0)
            log_warn("%s", e.msg);
    }
    sc.times[STAGE_DONE] = sync_now_us();
    if (o->timings)
        print_timings(sc.times);
    pol_strv_free(&git_watch);
    return status;
}
