#include "src/front.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/config.h"
#include "src/doctor.h"
#include "src/env.h"
#include "src/log.h"
#include "src/settings.h"
#include "src/srt_args.h"

extern char **environ;

static int load_config(const struct cli *cli, struct policy *pol, char **used, struct nf_err *err)
{
    char defaults[2][4096];
    size_t n = cfg_default_paths(getenv("XDG_CONFIG_HOME"), pol->home, defaults);
    bool loaded = false;

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
        *used = strdup(path);
        if (!*used)
            return nf_err_sys(err, "out of memory");
        if (!pol_strv_contains(&pol->config_files, path))
            return pol_strv_add(&pol->config_files, path, err);
        return 0;
    }
    for (size_t i = 0; i < pol->config_files.n && !loaded; i++) {
        if (cfg_load(pol, pol->config_files.v[i], false, &loaded, err) < 0)
            return -1;
        if (loaded && !(*used = strdup(pol->config_files.v[i])))
            return nf_err_sys(err, "out of memory");
    }
    return 0;
}

/* srt's JSON settings, between the INI config and the flags: an srt user's
 * file says the same as it did under srt, and a flag still has the last
 * word. The file is protected like nsfence's own config: a command must not
 * write itself a looser policy for the next run. */
static int load_settings(const struct cli *cli, struct policy *pol, struct nf_err *err)
{
    struct srt_settings s;
    char path[PATH_MAX];
    int rc;

    if (!cli->settings)
        return 0;
    if (pol_path_normalize(cli->settings, pol->cwd, pol->home, path, sizeof(path), err) < 0)
        return nf_err_prefix(err, "--settings");
    if (settings_load(path, &s, err) < 0)
        return -1;
    rc = settings_apply(&s, pol, err);
    settings_free(&s);
    if (rc < 0)
        return -1;
    log_v("settings %s loaded", path);
    if (!pol_strv_contains(&pol->config_files, path))
        return pol_strv_add(&pol->config_files, path, err);
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
    if (pol->parent_no_proxy)
        no = pol->parent_no_proxy;
    if (px_parent_choose(pol->parent_proxy, https, http, no, parent, &e) < 0) {
        /* An unusable HTTP(S)_PROXY of our own: connections go direct (the
         * rules still apply); a bad parent_proxy never loaded. */
        log_warn("%s; connecting directly", e.msg);
        memset(parent, 0, sizeof(*parent));
    }
    return 0;
}

/* Landlock mode: no namespace, nothing mounted; the same filesystem plan
 * judges what the supervisor performs, a Landlock ruleset bounds the
 * command, the supervised seccomp program traps every write and connect.
 * Whatever cannot be held is refused here, never run weaker than said. */
static int compile_landlock(struct front *f, struct nf_err *err)
{
    const struct policy *pol = &f->pol;
    struct run_plan *p = &f->plan;
    int abi = fs_ll_abi();

    if (abi < 1)
        return nf_err_set(err, EOPNOTSUPP,
                          "--mode landlock: this kernel has no Landlock (%s); it needs Linux 5.13 "
                          "or later with landlock in the lsm= list",
                          strerror(errno));
    if (pol->network_enabled && abi < 4)
        return nf_err_set(err, EOPNOTSUPP,
                          "--mode landlock: Landlock ABI %d cannot refuse the command's own TCP "
                          "connections (ABI 4, Linux 6.7); run with --no-network",
                          abi);
    if (pol->nested_userns)
        return nf_err_set(err, EINVAL,
                          "--mode landlock: nested user namespaces (allowNestedUserNamespaces) "
                          "are not available without namespaces");
    if (!pol->monitor_enabled)
        log_v("--mode landlock: --no-monitor: the supervisor still performs every write and "
              "refuses what the policy refuses; it only stops reporting them");
    p->landlock_mode = true;
    p->namespaces = 0;
    if (!pol->network_enabled)
        p->http_port = p->socks_port = 0;
    p->idmap = RUN_IDMAP_NONE;
    p->loopback = false;
    p->endpoints = false;
    p->keyring = true;
    if (fs_ll_build(&p->fs, abi, &p->landlock, err) < 0)
        return -1;
    f->filters.supervised = true;
    f->filters.observer = false;
    f->filters.nested_userns = false;
    return sc_compile(&f->filters, &p->filters, err);
}

/* The command's environment. A function of its own, so that its PATH_MAX
 * buffer is not on the stack while compile_plan builds the filesystem plan
 * (see FRAME_CFLAGS in the Makefile). */
static int compile_env(const struct policy *pol, struct run_plan *p, struct nf_err *err)
{
    char self[PATH_MAX];
    ssize_t selflen;

    /* Only the network's environment names nsfence itself (git over ssh). */
    selflen = pol->network_enabled ? readlink("/proc/self/exe", self, sizeof(self) - 1) : -1;
    self[selflen > 0 ? selflen : 0] = '\0';
    if (env_build(environ, pol, selflen > 0 ? self : NULL, &p->envp, err) < 0)
        return -1;
    switch (env_fix_tmpdir(&p->envp, &p->fs, self, sizeof(self), err)) {
    case -1:
        return -1;
    case 1:
        log_v("TMPDIR %s is not writable inside; TMPDIR=/tmp", self);
        break;
    }
    return 0;
}

/* The sandbox itself: every namespace, the caller's ids, lo and the proxy's
 * endpoints, no capability, the filters last. */
static int compile_plan(char **argv, struct front *f, struct nf_err *err)
{
    const struct policy *pol = &f->pol;
    struct run_plan *p = &f->plan;

    p->namespaces =
        CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
    /* As root, files keep their real owners inside. */
    p->idmap = getuid() == 0 ? RUN_IDMAP_MIRROR : RUN_IDMAP_SELF;
    p->uid = getuid();
    p->gid = getgid();
    if (fs_plan_build(pol, &p->fs, err) < 0)
        return -1;
    p->loopback = true;
    p->endpoints = pol->network_enabled;
    p->http_port = pol->http_port;
    p->socks_port = pol->socks_port;
    p->argv = argv;
    if (compile_env(pol, p, err) < 0)
        return -1;
    p->caps = 0;
    f->filters.unix_block = !pol->allow_all_unix_sockets;
    /* With no filesystem rules no write is refused: nothing to observe. */
    f->filters.observer = pol->monitor_enabled && !p->fs.unrestricted;
    f->filters.nested_userns = pol->nested_userns;
    if (!f->filters.unix_block)
        log_v("--allow-all-unix-sockets: no unix-socket, vsock or io_uring filter");
    if (f->filters.nested_userns)
        log_v("allowNestedUserNamespaces: the command may make user namespaces and mount in "
              "their own mount namespaces; the keyring calls stay refused");
    if (f->pol.mode == POL_MODE_AUTO) {
        /* Only where written: namespaces where they work. */
        f->pol.mode = doctor_namespaces_work() ? POL_MODE_NAMESPACES : POL_MODE_LANDLOCK;
        log_v("--mode auto: %s", f->pol.mode == POL_MODE_LANDLOCK
                                     ? "user namespaces are refused here: Landlock mode"
                                     : "user namespaces work here: namespace mode");
    }
    if (f->pol.mode == POL_MODE_LANDLOCK) {
        if (compile_landlock(f, err) < 0)
            return -1;
    } else if (sc_build(&f->filters, &p->filters, err) < 0) {
        return -1;
    }
    p->new_session = pol->new_session;
    p->die_with_parent = false;
    p->pid1 = RUN_PID1_INIT;
    p->keyring = true;
    if (getrlimit(RLIMIT_NOFILE, &p->nofile) < 0)
        p->nofile.rlim_cur = p->nofile.rlim_max = RLIM_INFINITY;
    return 0;
}

int front_init(struct front *f, struct nf_err *err)
{
    char cwd[PATH_MAX];

    memset(f, 0, sizeof(*f));
    run_plan_init(&f->plan);
    if (!getcwd(cwd, sizeof(cwd)))
        return nf_err_sys(err, "getcwd");
    return pol_init(&f->pol, cwd, getenv("HOME"), err);
}

int front_finish(struct front *f, char **argv, struct nf_err *err)
{
    if (!f->command) {
        size_t argc = 0;

        while (argv[argc])
            argc++;
        f->command = srt_quote(argv, argc);
        if (!f->command)
            return nf_err_sys(err, "out of memory");
    }
    if (add_git_config_files(&f->pol, err) < 0)
        return -1;
    if (f->pol.network_enabled && setup_network(&f->pol, &f->rules, &f->parent, err) < 0)
        return -1;
    return compile_plan(argv, f, err);
}

int front_compile(const struct cli *cli, struct front *f, struct nf_err *err)
{
    if (front_init(f, err) < 0)
        return -1;
    if (load_config(cli, &f->pol, &f->config_used, err) < 0)
        return -1;
    if (load_settings(cli, &f->pol, err) < 0)
        return -1;
    if (cli_apply(cli, &f->pol, err) < 0)
        return -1;
    return front_finish(f, cli->argv, err);
}

void front_free(struct front *f)
{
    free(f->command);
    free(f->config_used);
    run_plan_free(&f->plan);
    px_rules_free(&f->rules);
    pol_free(&f->pol);
}
