/* nsfence: argv, dispatch, exit status. The one place that prints an error
 * and picks the exit code. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fs/gitrepo.h"
#include "fs/placeholder.h"
#include "fs/plan.h"
#include "proxy/parent.h"
#include "proxy/rules.h"
#include "proxy/server.h"
#include "seccomp/filters.h"
#include "seccomp/observer.h"
#include "src/cli.h"
#include "src/config.h"
#include "src/connect.h"
#include "src/doctor.h"
#include "src/env.h"
#include "src/explain.h"
#include "src/log.h"
#include "src/loop.h"
#include "src/policy.h"
#include "src/spawn.h"
#include "net/endpoints.h"
#include "src/util.h"

extern char **environ;

/* A sandbox whose setup ran with elevated privileges handed to the caller is
 * a privilege escalation waiting to happen (bubblewrap's setuid history):
 * refuse outright. */
static int refuse_setuid(struct nf_err *err)
{
    if (getauxval(AT_SECURE) || getuid() != geteuid() || getgid() != getegid())
        return nf_err_set(err, EPERM,
                          "nsfence must not be installed setuid or setgid, nor with "
                          "file capabilities; remove them (chmod u-s,g-s; setcap -r)");
    return 0;
}

/* A closed 0, 1 or 2 would be taken by our own next open and handed to the
 * command as its stdin or stdout. */
static int fill_std_fds(struct nf_err *err)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        int n = open("/dev/null", O_RDWR);

        if (n < 0)
            return nf_err_sys(err, "open /dev/null");
        if (n != fd) {
            close(n);
            return nf_err_set(err, EBADF, "standard descriptors are in an odd state");
        }
    }
    return 0;
}

static int load_config(const struct cli *cli, struct policy *pol, char *used, size_t usedsz,
                       struct nf_err *err)
{
    char defaults[2][4096];
    size_t n = cfg_default_paths(getenv("XDG_CONFIG_HOME"), pol->home, defaults);
    bool loaded = false;

    used[0] = '\0';
    /* nsfence's own config files are protected from the command, existing
     * or not: a command must not be able to write itself a looser policy
     * for the next run. */
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];

        if (pol_path_normalize(defaults[i], pol->cwd, pol->home, path, sizeof(path), err) < 0 ||
            pol_strv_add(&pol->config_files, path, err) < 0)
            return -1;
    }
    if (cli->config) {
        char path[PATH_MAX];

        if (pol_path_normalize(cli->config, pol->cwd, pol->home, path, sizeof(path), err) < 0)
            return nf_err_prefix(err, "--config");
        if (cfg_load(pol, path, true, &loaded, err) < 0)
            return -1;
        snprintf(used, usedsz, "%s", path);
        if (!pol_strv_contains(&pol->config_files, path))
            return pol_strv_add(&pol->config_files, path, err);
        return 0;
    }
    for (size_t i = 0; i < pol->config_files.n && !loaded; i++) {
        if (cfg_load(pol, pol->config_files.v[i], false, &loaded, err) < 0)
            return -1;
        if (loaded)
            snprintf(used, usedsz, "%s", pol->config_files.v[i]);
    }
    return 0;
}

/* Where the user's git reads its global and system config, by its own
 * rules (git-config(1), FILES) and wherever the environment points it now:
 * the union, since the git run later may have another environment. */
static int add_git_config_file(struct policy *pol, const char *fmt, const char *dir,
                               struct nf_err *err)
{
    char raw[PATH_MAX * 2], path[PATH_MAX];

    if (!dir || dir[0] != '/')
        return 0;
    snprintf(raw, sizeof(raw), fmt, dir);
    if (pol_path_normalize(raw, "/", NULL, path, sizeof(path), err) < 0)
        return -1;
    if (pol_strv_contains(&pol->git_config_files, path))
        return 0;
    return pol_strv_add(&pol->git_config_files, path, err);
}

static int add_git_config_files(struct policy *pol, struct nf_err *err)
{
    if (add_git_config_file(pol, "%s", getenv("GIT_CONFIG_GLOBAL"), err) < 0 ||
        add_git_config_file(pol, "%s", getenv("GIT_CONFIG_SYSTEM"), err) < 0 ||
        add_git_config_file(pol, "%s/gitconfig", "/etc", err) < 0 ||
        add_git_config_file(pol, "%s/git/config", getenv("XDG_CONFIG_HOME"), err) < 0 ||
        add_git_config_file(pol, "%s/.config/git/config", pol->home, err) < 0 ||
        add_git_config_file(pol, "%s/.gitconfig", pol->home, err) < 0)
        return nf_err_prefix(err, "git config files");
    return 0;
}

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
        { "host: placeholders, bpf", STAGE_CLONED, STAGE_PREPARED },
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
    struct sc_observer *observer;
    struct sc_observer_config ocfg;
    struct ev_loop *loop;
    struct fs_plan *plan;
    struct fs_ph_set *ph;
    const struct sc_options *sco;
    struct sc_set *filters;
};

/* Runs while init builds the fixed part of the root on the other CPU. */
static int prepare(void *user, struct spawn_shared *sh, struct nf_err *err)
{
    struct host_side *h = user;

    if (fs_placeholders_prepare(h->plan, h->ph, err) < 0 || sc_build(h->sco, h->filters, err) < 0)
        return -1;
    return spawn_shared_put(sh, h->plan, h->filters, err);
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

/* The proxy holds two descriptors per tunnel (four more while bytes move). */
static void raise_nofile(struct rlimit *saved)
{
    struct rlimit r;

    if (getrlimit(RLIMIT_NOFILE, saved) < 0)
        return;
    r = *saved;
    r.rlim_cur = r.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &r);
}

static int setup_network(const struct policy *pol, struct px_rules *rules, struct px_parent *parent,
                         struct nf_err *err)
{
    const char *https = getenv("HTTPS_PROXY"), *http = getenv("HTTP_PROXY");
    const char *no = getenv("NO_PROXY");
    struct nf_err e = { 0 };

    if (px_rules_build(pol, rules, err) < 0)
        return -1;
    if (!https || !*https)
        https = getenv("https_proxy");
    if (!http || !*http)
        http = getenv("http_proxy");
    if (!no || !*no)
        no = getenv("no_proxy");
    if (px_parent_choose(pol->parent_proxy, https, http, no, parent, &e) < 0) {
        /* An unusable HTTP(S)_PROXY of our own: connections go direct (the
         * rules still apply); a bad parent_proxy never loaded. */
        log_warn("%s; connecting directly", e.msg);
        memset(parent, 0, sizeof(*parent));
    }
    return 0;
}

static int run(struct cli *cli, struct nf_err *err)
{
    struct spawn_config sc = { .init_pidfd = -1 };
    struct policy pol;
    struct fs_plan plan = { 0 };
    struct fs_ph_set ph = { 0 };
    struct ev_loop loop = { .epfd = -1 };
    struct px_rules rules = { 0 };
    struct px_parent parent = { 0 };
    struct vio_list vio = { .log_fd = -1 };
    struct pol_strv git_watch = { 0 };
    struct host_side host = { 0 };
    struct sc_set filters = { 0 };
    struct sc_options sco = { 0 };
    char **envp = NULL;
    char cwd[PATH_MAX];
    char used[PATH_MAX];
    char self[PATH_MAX];
    ssize_t selflen;
    int status = 125;

    sc.times[STAGE_START] = sync_now_us();
    memset(&pol, 0, sizeof(pol));
    if (!getcwd(cwd, sizeof(cwd)))
        return nf_err_sys(err, "getcwd"), 125;
    if (pol_init(&pol, cwd, getenv("HOME"), err) < 0)
        goto out;
    if (load_config(cli, &pol, used, sizeof(used), err) < 0)
        goto out;
    if (cli_apply(cli, &pol, err) < 0 || add_git_config_files(&pol, err) < 0)
        goto out;
    if (pol.network_enabled && setup_network(&pol, &rules, &parent, err) < 0)
        goto out;
    if (fs_plan_build(&pol, &plan, err) < 0)
        goto out;
    sco.unix_block = !pol.allow_all_unix_sockets;
    sco.observer = pol.monitor_enabled;
    if (!sco.unix_block)
        log_v("--allow-all-unix-sockets: no unix-socket, vsock or io_uring filter");
    if (cli->cmd == CLI_EXPLAIN) {
        struct explain_input in = { .pol = &pol,
                                    .plan = &plan,
                                    .rules = pol.network_enabled ? &rules : NULL,
                                    .parent = &parent,
                                    .config_used = used[0] ? used : NULL,
                                    .filters = &sco,
                                    .argv = cli->argv };

        status = explain_print(stdout, &in) < 0 ? 125 : 0;
        if (status)
            nf_err_sys(err, "write");
        goto out;
    }
    /* Only the network's environment names nsfence itself (git over ssh). */
    selflen = pol.network_enabled ? readlink("/proc/self/exe", self, sizeof(self) - 1) : -1;
    self[selflen > 0 ? selflen : 0] = '\0';
    if (env_build(environ, &pol, selflen > 0 ? self : NULL, &envp, err) < 0)
        goto out;
    if (vio_init(&vio, &pol, err) < 0)
        goto out;
    if (getrlimit(RLIMIT_NOFILE, &sc.nofile) < 0)
        sc.nofile.rlim_cur = sc.nofile.rlim_max = RLIM_INFINITY;
    if (pol.network_enabled)
        raise_nofile(&sc.nofile);
    if (spawn_block_signals(err) < 0)
        goto out;
    if (ev_loop_init(&loop, err) < 0)
        goto out;
    if (pol.network_enabled) {
        struct px_server_config pc = { .rules = &rules,
                                       .parent = &parent,
                                       .max_connections = pol.max_connections,
                                       .violations = &vio };

        if (px_server_new(&host.px, &loop, &pc, err) < 0)
            goto out;
    }
    host.loop = &loop;
    host.ocfg = (struct sc_observer_config){ .write_roots = plan.write_roots,
                                             .n_write_roots = plan.n_write_roots,
                                             .protected_paths = plan.protected_paths,
                                             .n_protected = plan.n_protected,
                                             .violations = &vio,
                                             .git_watch = &git_watch };
    sc.pol = &pol;
    sc.plan = &plan;
    host.plan = &plan;
    host.ph = &ph;
    host.sco = &sco;
    host.filters = &filters;
    sc.argv = cli->argv;
    sc.envp = envp;
    sc.loop = &loop;
    sc.hooks.on_fds = serve_fds;
    sc.hooks.prepare = prepare;
    sc.hooks.user = &host;
    sc.times[STAGE_PLANNED] = sync_now_us();
    status = spawn_run(&sc, err);
    if (status != 125 || !err->msg[0]) {
        struct pol_strv made = { 0 };
        struct nf_err ignored;

        /* Reported, not fatal: the command has run. */
        (void)fs_git_created(&plan, pol.mandatory_deny_depth, &git_watch, &made, &ignored);
        for (size_t i = 0; i < made.n; i++)
            vio_add_git(&vio, made.v[i]);
        pol_strv_free(&made);
    }
out:
    sc_observer_free(host.observer);
    px_server_free(host.px);
    sc_set_free(&filters);
    fs_placeholders_release(&ph);
    if (loop.epfd >= 0)
        ev_loop_close(&loop);
    if (status != 125 || !err->msg[0])
        vio_print_block(&vio, STDERR_FILENO);
    vio_free(&vio);
    spawn_reap(&sc);
    sc.times[STAGE_DONE] = sync_now_us();
    if (cli->timings && cli->cmd == CLI_RUN)
        print_timings(sc.times);
    env_free(envp);
    pol_strv_free(&git_watch);
    px_rules_free(&rules);
    fs_plan_free(&plan);
    pol_free(&pol);
    return status;
}

int main(int argc, char **argv)
{
    struct nf_err err = { 0 };
    struct cli cli;
    int status = 125;

    if (refuse_setuid(&err) < 0 || fill_std_fds(&err) < 0) {
        log_error("%s", err.msg);
        return 125;
    }
    if (cli_parse(argc, argv, &cli, &err) < 0) {
        log_error("%s", err.msg);
        cli_free(&cli);
        return 125;
    }
    log_verbose_enabled = cli.verbose;
    switch (cli.cmd) {
    case CLI_HELP:
        fputs(cli_usage, stdout);
        status = 0;
        break;
    case CLI_VERSION:
        printf("nsfence %s\n", NF_VERSION);
        status = 0;
        break;
    case CLI_DOCTOR:
        status = doctor_run(cli.json, stdout);
        break;
    case CLI_CONNECT:
        status = connect_main(cli.argv[0], cli.argv[1], &err) < 0 ? 1 : 0;
        if (status)
            log_error("%s", err.msg);
        break;
    case CLI_RUN:
    case CLI_EXPLAIN:
        err.msg[0] = '\0';
        status = run(&cli, &err);
        if (status == 125 && err.msg[0])
            log_error("%s", err.msg);
        break;
    }
    cli_free(&cli);
    fflush(stdout);
    return status;
}
