#include "src/host.h"

#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fs/gitrepo.h"
#include "fs/placeholder.h"
#include "net/endpoints.h"
#include "proxy/server.h"
#include "seccomp/observer.h"
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
        { "lo", STAGE_FIXED, STAGE_LOOPBACK },
        { "endpoints", STAGE_LOOPBACK, STAGE_ENDPOINTS },
        { "host: placeholders", STAGE_CLONED, STAGE_PREPARED },
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
};

/* Runs while init builds the fixed part of the root on the other CPU. */
static int prepare(void *user, struct run_results *res, struct nf_err *err)
{
    struct host_side *h = user;

    return fs_placeholders_prepare(h->plan, &h->ph, res->skip, err);
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
            if (!h->observer)
                rc = sc_observer_new(&h->observer, h->loop, fds[i], &h->ocfg, err);
            else
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
    struct host_side host = { .plan = &f->plan.fs };
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
    sc.hooks.prepare = prepare;
    sc.hooks.cloned = cloned;
    sc.hooks.user = &host;
    sc.times[STAGE_PLANNED] = sync_now_us();
    status = spawn_run(&sc, err);
    o->signal_received = sc.signal_received;
    if (ctl_failed(host.ctl, err))
        status = 125;
    if (status != 125 || !err->msg[0]) {
        struct pol_strv made = { 0 };
        struct nf_err ignored;

        /* Reported, not fatal: the command has run. */
        (void)fs_git_created(&f->plan.fs, pol->mandatory_deny_depth, &git_watch, &made, &ignored);
        for (size_t i = 0; i < made.n; i++)
            vio_add_git(&vio, made.v[i]);
        pol_strv_free(&made);
    }
out:
    sc_observer_free(host.observer);
    px_server_free(host.px);
    ctl_free(host.ctl); /* after the proxy: its rule tables */
    fs_placeholders_release(&host.ph);
    if (loop.epfd >= 0)
        ev_loop_close(&loop);
    if ((status != 125 || !err->msg[0]) && !o->no_violation_block)
        vio_print_block(&vio, STDERR_FILENO);
    vio_free(&vio);
    spawn_reap(&sc);
    sc.times[STAGE_DONE] = sync_now_us();
    if (o->timings)
        print_timings(sc.times);
    pol_strv_free(&git_watch);
    return status;
}
