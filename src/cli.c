#include "src/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "src/config.h"
#include "src/util.h"

const char cli_usage[] =
    "usage: nsfence [OPTIONS] [--] COMMAND [ARG...]     run COMMAND sandboxed\n"
    "       nsfence explain [OPTIONS] [--] COMMAND...   print the plan; run nothing\n"
    "       nsfence doctor [--json]                     report this host's kernel features\n"
    "       nsfence connect HOST PORT                   tunnel stdio through the sandbox's HTTP "
    "proxy\n"
    "       nsfence bwrap ARGS...                       bubblewrap 0.11.1's command line (also as "
    "`bwrap`)\n"
    "       nsfence explain --bwrap ARGS...             the plan bubblewrap's argv makes\n"
    "       nsfence srt ARGS...                         srt 0.0.83's command line (also as `srt`)\n"
    "       nsfence --version | --help\n"
    "\n"
    "options:\n"
    "  --allow-write PATH        writable inside (default: the working directory, a private "
    "/tmp)\n"
    "  --deny-write PATH         read-only even inside a write root\n"
    "  --deny-read PATH          unreadable: a directory is empty, a file reads as empty\n"
    "  --allow-read PATH         readable again inside a denied directory\n"
    "  --allow-domain HOST       reachable through the proxy (*.example.com: subdomains)\n"
    "  --deny-domain HOST        refused even if allowed\n"
    "  --allow-all-unix-sockets  do not block socket(AF_UNIX)\n"
    "  --no-network              no proxy at all: only lo\n"
    "  --no-monitor              do not observe write attempts\n"
    "  --new-session             setsid() the command\n"
    "  --mode MODE               namespaces (the default), landlock (where namespaces are\n"
    "                            refused: a container; weaker, as each run says), or auto\n"
    "  --allow-git-init          let the command create .git at the top of a write root\n"
    "  --violations FILE         also append violations to FILE as JSON lines\n"
    "  --config FILE             the INI config (default: ~/.config/nsfence/config.ini)\n"
    "  --settings FILE.json      srt 0.0.83's settings, after the INI config, before these "
    "flags\n"
    "  --control-fd N            read srt settings as JSON lines from fd N; each valid one "
    "replaces\n"
    "                            the network allow and deny lists while the command runs\n"
    "  --timings                 print each setup stage's cost in microseconds\n"
    "  -v                        say what is being set up\n"
    "\n"
    "config-only keys (in the INI file; each flag above also has its key):\n"
    "  [network] deny_reason = HOST: TEXT     the reason a denial of HOST reports\n"
    "  [network] deny_address = CIDR          resolved addresses refused, besides the built-in\n"
    "  [network] http_port, socks_port = N    endpoint ports inside (default 3128, 1080)\n"
    "  [network] parent_proxy = http://H:P    reach the outside through this proxy\n"
    "  [network] max_connections = N          proxied connections open at once\n"
    "  [monitor] ignore = TEXT                violation lines containing TEXT are not reported\n"
    "  [filesystem] mandatory_deny_depth = N  how deep the mandatory-deny scan looks (1-10, "
    "default 3)\n"
    "\n"
    "exit status: the command's; 128+N if it died of signal N; 125 if nsfence failed;\n"
    "126 if the command could not be executed; 127 if it was not found.\n";

struct flag {
    const char *name;
    enum { F_BOOL, F_LIST, F_STRING } kind;
    size_t offset;
};

#define LIST(n, f)                                                                                 \
    {                                                                                              \
        n, F_LIST, offsetof(struct cli, f)                                                         \
    }
#define BOOLF(n, f)                                                                                \
    {                                                                                              \
        n, F_BOOL, offsetof(struct cli, f)                                                         \
    }
#define STRING(n, f)                                                                               \
    {                                                                                              \
        n, F_STRING, offsetof(struct cli, f)                                                       \
    }

static const struct flag flags[] = {
    LIST("allow-write", allow_write),
    LIST("deny-write", deny_write),
    LIST("deny-read", deny_read),
    LIST("allow-read", allow_read),
    LIST("allow-domain", allow_domain),
    LIST("deny-domain", deny_domain),
    BOOLF("allow-all-unix-sockets", allow_all_unix_sockets),
    BOOLF("no-network", no_network),
    BOOLF("no-monitor", no_monitor),
    BOOLF("new-session", new_session),
    BOOLF("allow-git-init", allow_git_init),
    BOOLF("timings", timings),
    STRING("violations", violations),
    STRING("mode", mode),
    STRING("config", config),
    STRING("settings", settings),
    STRING("control-fd", control_fd),
};

static int parse_long_option(struct cli *c, int argc, char **argv, int *i, struct nf_err *err)
{
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);

    for (size_t f = 0; f < NF_ARRAY_SIZE(flags); f++) {
        const char *value;

        if (strlen(flags[f].name) != nlen || strncmp(flags[f].name, arg, nlen) != 0)
            continue;
        if (flags[f].kind == F_BOOL) {
            if (eq)
                return nf_err_set(err, EINVAL, "--%s takes no value", flags[f].name);
            *(bool *)((char *)c + flags[f].offset) = true;
            return 0;
        }
        if (eq) {
            value = eq + 1;
        } else {
            if (*i + 1 >= argc)
                return nf_err_set(err, EINVAL, "--%s needs a value", flags[f].name);
            value = argv[++*i];
        }
        if (!*value)
            return nf_err_set(err, EINVAL, "--%s: empty value", flags[f].name);
        if (flags[f].kind == F_LIST)
            return pol_strv_add((struct pol_strv *)((char *)c + flags[f].offset), value, err);
        *(const char **)((char *)c + flags[f].offset) = value;
        return 0;
    }
    return nf_err_set(err, EINVAL, "unknown option --%.*s (see nsfence --help)", (int)nlen, arg);
}

int cli_parse(int argc, char **argv, struct cli *c, struct nf_err *err)
{
    int i = 1;

    memset(c, 0, sizeof(*c));
    c->cmd = CLI_RUN;
    if (argc > 1) {
        if (strcmp(argv[1], "explain") == 0) {
            c->cmd = CLI_EXPLAIN;
            i = 2;
        } else if (strcmp(argv[1], "doctor") == 0) {
            c->cmd = CLI_DOCTOR;
            i = 2;
        } else if (strcmp(argv[1], "connect") == 0) {
            c->cmd = CLI_CONNECT;
            i = 2;
        }
    }
    for (; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            c->cmd = CLI_HELP;
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            c->cmd = CLI_VERSION;
            return 0;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            c->verbose = true;
            continue;
        }
        if (strcmp(a, "--json") == 0 && c->cmd == CLI_DOCTOR) {
            c->json = true;
            continue;
        }
        if (strcmp(a, "-c") == 0)
            return nf_err_set(err, EINVAL,
                              "unknown option -c: to run a shell command, use -- sh -c '...'");
        if (a[1] != '-')
            return nf_err_set(err, EINVAL, "unknown option %s (see nsfence --help)", a);
        if (parse_long_option(c, argc, argv, &i, err) < 0)
            return -1;
    }
    c->argv = argv + i;
    c->argc = argc - i;
    switch (c->cmd) {
    case CLI_RUN:
    case CLI_EXPLAIN:
        if (c->argc == 0)
            return nf_err_set(err, EINVAL,
                              "no command given (usage: nsfence [OPTIONS] -- COMMAND)");
        break;
    case CLI_DOCTOR:
        if (c->argc != 0)
            return nf_err_set(err, EINVAL, "doctor takes no arguments but --json");
        break;
    case CLI_CONNECT:
        if (c->argc != 2)
            return nf_err_set(err, EINVAL, "usage: nsfence connect HOST PORT");
        break;
    case CLI_VERSION:
    case CLI_HELP:
        break;
    }
    return 0;
}

/* Paths take the config's rules (normalised, globs checked): one parser. */
static int append_paths(struct policy *pol, const char *key, const struct pol_strv *src,
                        const char *flag, struct nf_err *err)
{
    for (size_t i = 0; i < src->n; i++)
        if (cfg_apply(pol, "filesystem", key, src->v[i], err) < 0)
            return nf_err_prefix(err, "--%s", flag);
    return 0;
}

static int append_domains(struct policy *pol, const char *key, const struct pol_strv *src,
                          const char *flag, struct nf_err *err)
{
    for (size_t i = 0; i < src->n; i++)
        if (cfg_apply(pol, "network", key, src->v[i], err) < 0)
            return nf_err_prefix(err, "--%s %s", flag, src->v[i]);
    return 0;
}

int cli_apply(const struct cli *c, struct policy *pol, struct nf_err *err)
{
    if (append_paths(pol, "allow_write", &c->allow_write, "allow-write", err) < 0 ||
        append_paths(pol, "deny_write", &c->deny_write, "deny-write", err) < 0 ||
        append_paths(pol, "deny_read", &c->deny_read, "deny-read", err) < 0 ||
        append_paths(pol, "allow_read", &c->allow_read, "allow-read", err) < 0 ||
        append_domains(pol, "allow_domain", &c->allow_domain, "allow-domain", err) < 0 ||
        append_domains(pol, "deny_domain", &c->deny_domain, "deny-domain", err) < 0)
        return -1;
    if (c->allow_all_unix_sockets)
        pol->allow_all_unix_sockets = true;
    if (c->no_network)
        pol->network_enabled = false;
    if (c->no_monitor)
        pol->monitor_enabled = false;
    if (c->new_session)
        pol->new_session = true;
    if (c->allow_git_init)
        pol->allow_git_init = true;
    if (c->mode && cfg_apply(pol, "sandbox", "mode", c->mode, err) < 0)
        return nf_err_prefix(err, "--mode");
    if (c->violations) {
        char path[PATH_MAX];

        if (pol_path_normalize(c->violations, pol->cwd, pol->home, path, sizeof(path), err) < 0)
            return nf_err_prefix(err, "--violations");
        free(pol->monitor_log);
        pol->monitor_log = strdup(path);
        if (!pol->monitor_log)
            return nf_err_sys(err, "out of memory");
    }
    if (pol->http_port == pol->socks_port)
        return nf_err_set(err, EINVAL, "[network] http_port and socks_port are both %u",
                          pol->http_port);
    return 0;
}

void cli_free(struct cli *c)
{
    pol_strv_free(&c->allow_write);
    pol_strv_free(&c->deny_write);
    pol_strv_free(&c->deny_read);
    pol_strv_free(&c->allow_read);
    pol_strv_free(&c->allow_domain);
    pol_strv_free(&c->deny_domain);
}
