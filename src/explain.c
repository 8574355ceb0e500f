#include "src/explain.h"

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "src/lmode.h"
#include "src/util.h"

extern char **environ;

static void list(FILE *out, const char *name, const struct pol_strv *sv)
{
    if (!sv->n) {
        fprintf(out, "  %-22s (none)\n", name);
        return;
    }
    for (size_t i = 0; i < sv->n; i++)
        fprintf(out, "  %-22s %s\n", i ? "" : name, sv->v[i]);
}

static const struct {
    unsigned long flag;
    const char *name;
} namespaces[] = {
    { CLONE_NEWUSER, "user" },     { CLONE_NEWNS, "mount" }, { CLONE_NEWNET, "net" },
    { CLONE_NEWPID, "pid" },       { CLONE_NEWIPC, "ipc" },  { CLONE_NEWUTS, "uts" },
    { CLONE_NEWCGROUP, "cgroup" },
};

/* The variable's name: entry up to '='. */
static bool same_name(const char *a, const char *b)
{
    size_t n = strcspn(a, "=");

    return strncmp(a, b, n) == 0 && b[n] == '=';
}

static const char *find_env(char *const *env, const char *entry)
{
    for (; env && *env; env++)
        if (same_name(entry, *env))
            return *env;
    return NULL;
}

/* What the command's environment changes from the caller's. */
static void env_changes(FILE *out, char *const *envp)
{
    bool any = false;

    for (char *const *e = envp; e && *e; e++) {
        const char *was = find_env(environ, *e);

        if (!was || strcmp(was, *e) != 0) {
            fprintf(out, "  %-22s %s\n", any ? "" : "environment", *e);
            any = true;
        }
    }
    for (char *const *e = environ; *e; e++) {
        if (!find_env(envp, *e)) {
            fprintf(out, "  %-22s unset %.*s\n", any ? "" : "environment", (int)strcspn(*e, "="),
                    *e);
            any = true;
        }
    }
    if (!any)
        fprintf(out, "  %-22s (the caller's, unchanged)\n", "environment");
}

/* Landlock mode: the ruleset instead of a mount plan, and what holds. */
static void landlock_print(FILE *out, const struct run_plan *p)
{
    const struct fs_ll_plan *ll = &p->landlock;
    char rights[512];

    fprintf(out, "\nLandlock ruleset (ABI %d):\n", ll->abi);
    fs_ll_access_format(ll->handled_fs, rights, sizeof(rights));
    fprintf(out, "  %-22s %s\n", "handled", ll->handled_fs ? rights : "(none: no file rules)");
    fprintf(out, "  %-22s %s\n", "tcp",
            ll->handled_net ? "bind and connect refused (no rule grants one)"
                            : "not handled (below ABI 4)");
    fprintf(out, "  %-22s %s\n", "scoped",
            ll->scoped ? "abstract unix sockets, signals" : "(none: below ABI 6)");
    for (size_t i = 0; i < ll->n; i++) {
        fs_ll_access_format(ll->rules[i].access & ll->handled_fs, rights, sizeof(rights));
        fprintf(out, "  %-22s %s\n", ll->rules[i].path, rights);
    }
    fprintf(out, "  %-22s all (a private directory made for each run, removed after it)\n",
            "TMPDIR");
    fprintf(out, "\n");
    lmode_print(ll->abi, out);
}

int run_plan_print(FILE *out, const struct run_plan *p)
{
    bool first = true;

    fprintf(out, "sandbox:\n");
    if (p->landlock_mode)
        fprintf(out,
                "  %-22s landlock: no namespace; Landlock, seccomp and a supervisor that "
                "performs every write and connect\n",
                "mode");
    fprintf(out, "  %-22s", "namespaces");
    for (size_t i = 0; i < NF_ARRAY_SIZE(namespaces); i++)
        if (p->namespaces & namespaces[i].flag) {
            fprintf(out, "%s%s", first ? " " : ", ", namespaces[i].name);
            first = false;
        }
    fprintf(out, "%s\n", first ? " (none: the caller's)" : "");
    if (p->userns_fd >= 0 || p->pidns_fd >= 0 || p->userns2_fd >= 0)
        fprintf(out, "  %-22s userns fd %d, pidns fd %d, userns2 fd %d\n", "joined", p->userns_fd,
                p->pidns_fd, p->userns2_fd);
    if (p->disable_userns || p->assert_userns_disabled)
        fprintf(out, "  %-22s %s\n", "user namespaces",
                p->disable_userns ? "disabled inside" : "must be disabled inside");
    if (p->namespaces & CLONE_NEWUSER) {
        if (p->idmap == RUN_IDMAP_MIRROR)
            fprintf(out, "  %-22s every id to itself\n", "id map");
        else if (p->idmap == RUN_IDMAP_SELF)
            fprintf(out, "  %-22s uid %u -> %u, gid %u -> %u\n", "id map", (unsigned)getuid(),
                    (unsigned)p->uid, (unsigned)getgid(), (unsigned)p->gid);
        else
            fprintf(out, "  %-22s written by the caller (--userns-block-fd)\n", "id map");
    }
    if (p->hostname)
        fprintf(out, "  %-22s %s\n", "hostname", p->hostname);
    if (p->landlock_mode)
        fprintf(out, "  %-22s the host's; every connect goes to the supervisor\n", "network");
    else
        fprintf(out, "  %-22s %s\n", "lo", p->loopback ? "up" : "down");
    if (p->landlock_mode && p->http_port)
        fprintf(out,
                "  %-22s http localhost:%u, socks5 localhost:%u (a connect there gets a socket "
                "connected to the host side's proxy)\n",
                "proxy endpoints", p->http_port, p->socks_port);
    else if (p->endpoints)
        fprintf(out, "  %-22s http localhost:%u, socks5 localhost:%u (served by the host side)\n",
                "proxy endpoints", p->http_port, p->socks_port);
    else
        fprintf(out, "  %-22s (none)\n", "proxy endpoints");
    if (p->caps_untouched)
        fprintf(out, "  %-22s the caller's, as they are\n", "capabilities kept");
    else if (p->caps)
        fprintf(out, "  %-22s %#llx\n", "capabilities kept", (unsigned long long)p->caps);
    else
        fprintf(out, "  %-22s (none)\n", "capabilities kept");
    fprintf(out, "  %-22s %s\n", "new session", p->new_session ? "yes" : "no");
    fprintf(out, "  %-22s %s\n", "die with parent", p->die_with_parent ? "yes" : "no");
    fprintf(out, "  %-22s %s\n", "pid 1",
            p->pid1 == RUN_PID1_COMMAND ? "the command itself"
            : p->init_traceable         ? "a reaper, without capabilities"
            : p->landlock_mode          ? "none: nsfence's init is a subreaper (reaps, forwards "
                                          "signals, kills what is left)"
                                        : "nsfence's init (reaps, forwards signals)");
    fprintf(out, "  %-22s %s\n", "session keyring", p->keyring ? "a fresh one" : "the caller's");
    fprintf(out, "  %-22s %s\n", "descriptors",
            p->keep_fds ? "the caller's stay open" : "none of the caller's");
    if (p->block_fd >= 0 || p->sync_fd >= 0)
        fprintf(out, "  %-22s block fd %d, sync fd %d\n", "waits on", p->block_fd, p->sync_fd);
    for (size_t i = 0; i < p->n_lock_files; i++)
        fprintf(out, "  %-22s %s\n", i ? "" : "lock files", p->lock_files[i]);
    fprintf(out, "  %-22s %s%s%s\n", "working directory", p->fs.cwd ? p->fs.cwd : "(unchanged)",
            p->cwd_try ? " (else $HOME, else /)" : "", p->set_pwd ? ", PWD set" : "");
    if (p->file)
        fprintf(out, "  %-22s %s (argv[0] %s)\n", "executable", p->file, p->argv[0]);
    env_changes(out, p->envp);
    if (p->landlock_mode) {
        landlock_print(out, p);
        return ferror(out) ? -1 : 0;
    }

    fprintf(out, "\nmount plan (in order):\n");
    for (size_t i = 0; i < p->fs.n; i++) {
        char line[PATH_MAX * 2 + 64];

        fs_op_format(&p->fs.ops[i], line, sizeof(line));
        fprintf(out, "  %3zu  %s\n", i + 1, line);
    }
    return ferror(out) ? -1 : 0;
}

int explain_print(FILE *out, const struct front *f, char **argv)
{
    const struct policy *pol = &f->pol;

    fprintf(out, "policy:\n");
    fprintf(out, "  %-22s %s\n", "working directory", pol->cwd);
    fprintf(out, "  %-22s %s\n", "config", f->config_used ? f->config_used : "(none)");
    list(out, "allow_write", &pol->allow_write);
    list(out, "deny_write", &pol->deny_write);
    list(out, "deny_read", &pol->deny_read);
    list(out, "allow_read", &pol->allow_read);
    fprintf(out, "  %-22s %u\n", "mandatory_deny_depth", pol->mandatory_deny_depth);
    fprintf(out, "  %-22s %s\n", "allow_git_init", pol->allow_git_init ? "yes" : "no");
    list(out, "protected config", &pol->config_files);
    list(out, "git configs read", &pol->git_config_files);
    if (pol->network_enabled)
        fprintf(out, "  %-22s proxy: http localhost:%u, socks5 localhost:%u\n", "network",
                pol->http_port, pol->socks_port);
    else
        fprintf(out, "  %-22s none (only lo)\n", "network");
    if (pol->network_enabled && pol->http_relay_port)
        fprintf(out, "  %-22s relayed to 127.0.0.1:%u (an external proxy judges it)\n",
                "http endpoint", pol->http_relay_port);
    if (pol->network_enabled && pol->socks_relay_port)
        fprintf(out, "  %-22s relayed to 127.0.0.1:%u (an external proxy judges it)\n",
                "socks5 endpoint", pol->socks_relay_port);
    list(out, "allow_domain", &pol->allow_domain);
    list(out, "deny_domain", &pol->deny_domain);
    for (size_t i = 0; i < pol->n_deny_reasons; i++)
        fprintf(out, "  %-22s %s: %s\n", i ? "" : "deny_reason", pol->deny_reasons[i].host,
                pol->deny_reasons[i].text);
    list(out, "deny_address", &pol->deny_address);
    fprintf(out, "  %-22s %s\n", "unix sockets",
            pol->allow_all_unix_sockets ? "allowed" : "socket(AF_UNIX) blocked");
    fprintf(out, "  %-22s %s\n", "write monitor", pol->monitor_enabled ? "on" : "off");
    list(out, "monitor ignore", &pol->monitor_ignore);
    for (size_t i = 0; i < pol->n_ignore_violations; i++)
        for (size_t j = 0; j < pol->ignore_violations[i].patterns.n; j++)
            fprintf(out, "  %-22s %s (command %s)\n", i || j ? "" : "ignoreViolations",
                    pol->ignore_violations[i].patterns.v[j], pol->ignore_violations[i].command);
    fprintf(out, "  %-22s %s\n", "violations log", pol->monitor_log ? pol->monitor_log : "(none)");
    fprintf(out, "  %-22s %s\n", "new session", pol->new_session ? "yes" : "no");
    fprintf(out, "  %-22s %s\n", "mode", pol_mode_name(pol->mode));

    if (pol->network_enabled) {
        const struct px_rules *r = &f->rules;

        fprintf(out, "\nnetwork rules (in order; the first match decides):\n");
        fprintf(out, "  %-22s deny (malformed host)\n", "a malformed host");
        for (size_t i = 0; i < r->n_deny; i++)
            fprintf(out, "  %-22s deny (%s)\n", pol->deny_domain.v[i],
                    r->deny_reason[i] ? r->deny_reason[i] : "host is on the deny list");
        for (size_t i = 0; i < r->n_allow; i++)
            fprintf(out, "  %-22s allow\n", pol->allow_domain.v[i]);
        fprintf(out, "  %-22s deny (host is not on the allow list)\n", "anything else");
        fprintf(out,
                "  resolved-address guard: an allowed name is refused when it resolves only to "
                "loopback, unspecified, link-local, multicast, broadcast, cloud metadata "
                "addresses, this host's own addresses");
        for (size_t i = 0; i < pol->deny_address.n; i++)
            fprintf(out, ", %s", pol->deny_address.v[i]);
        fprintf(out, "\n");
        if (f->parent.enabled)
            fprintf(out, "  parent proxy: %s:%u (from %s)%s%s\n", f->parent.host, f->parent.port,
                    f->parent.source, f->parent.no_proxy[0] ? ", NO_PROXY " : "",
                    f->parent.no_proxy);
        else
            fprintf(out, "  upstream: direct from the host\n");
    }

    fprintf(out, "\n");
    if (run_plan_print(out, &f->plan) < 0)
        return -1;
    {
        struct nf_err err = { 0 };

        /* libseccomp's text of the rules the programs were compiled from,
         * then the programs themselves, exactly as they are loaded. */
        fprintf(out, "\nseccomp filters (libseccomp PFC):\n");
        fflush(out);
        if (sc_print_pfc(&f->filters, out, &err) < 0) {
            fprintf(out, "  (cannot print: %s)\n", err.msg);
            return -1;
        }
        fprintf(out, "\nseccomp programs as loaded (BPF, in order):\n");
        if (sc_print_bpf(&f->plan.filters, out) < 0)
            return -1;
    }
    fprintf(out, "\ncommand:");
    for (char **a = argv; *a; a++)
        fprintf(out, " %s", *a);
    fprintf(out, "\n");
    return ferror(out) ? -1 : 0;
}
