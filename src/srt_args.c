/* srt's argv the way commander 12 reads it for srt 0.0.83: known options
 * are taken wherever they stand before `--` (commander has no pass-through
 * here), an unknown one and everything after it flow into the command,
 * -h/--help among those asks for help. */
#include "src/srt_args.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char srt_usage[] =
    "Usage: srt [options] [command] [command...]\n"
    "\n"
    "Run commands in a sandbox with network and filesystem restrictions\n"
    "(nsfence " NF_VERSION " speaking srt " SRT_VERSION "'s command line)\n"
    "\n"
    "Arguments:\n"
    "  command                 command to run in the sandbox\n"
    "\n"
    "Options:\n"
    "  -V, --version           output the version number\n"
    "  -d, --debug             enable debug logging\n"
    "  -s, --settings <path>   path to config file (default: ~/.srt-settings.json)\n"
    "  -c <command>            run command string directly (like sh -c), no escaping applied\n"
    "  --control-fd <fd>       read config updates from file descriptor (JSON lines protocol)\n"
    "  -h, --help              display help for command\n";

enum opt {
    OPT_NONE,
    OPT_DEBUG,
    OPT_SETTINGS,
    OPT_COMMAND,
    OPT_CONTROL_FD,
    OPT_VERSION,
};

static const struct {
    const char *s, *l; /* short and long spellings (NULL: none) */
    enum opt opt;
    bool value;
    const char *flags; /* as commander names the option in errors */
} opts[] = {
    { "-d", "--debug", OPT_DEBUG, false, "-d, --debug" },
    { "-s", "--settings", OPT_SETTINGS, true, "-s, --settings <path>" },
    { "-c", NULL, OPT_COMMAND, true, "-c <command>" },
    { NULL, "--control-fd", OPT_CONTROL_FD, true, "--control-fd <fd>" },
    { "-V", "--version", OPT_VERSION, false, "-V, --version" },
};

static int find_opt(const char *arg, size_t len)
{
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        if (opts[i].s && strlen(opts[i].s) == len && strncmp(opts[i].s, arg, len) == 0)
            return (int)i;
        if (opts[i].l && strlen(opts[i].l) == len && strncmp(opts[i].l, arg, len) == 0)
            return (int)i;
    }
    return -1;
}

/* Returns 1 when parsing stops (--version). */
static int set_opt(struct srt_args *a, int i, const char *value)
{
    switch (opts[i].opt) {
    case OPT_NONE:
        break;
    case OPT_DEBUG:
        a->debug = true;
        break;
    case OPT_SETTINGS:
        a->settings = value;
        break;
    case OPT_COMMAND:
        a->command = value;
        break;
    case OPT_CONTROL_FD:
        a->control_fd = value;
        break;
    case OPT_VERSION:
        a->action = SRT_VERSION_ACTION;
        return 1;
    }
    return 0;
}

static int missing(struct nf_err *err, int i)
{
    return nf_err_set(err, EINVAL, "error: option '%s' argument missing", opts[i].flags);
}

static bool maybe_option(const char *arg)
{
    return arg[0] == '-' && arg[1] != '\0';
}

int srt_args_parse(int argc, char **argv, struct srt_args *a, struct nf_err *err)
{
    /* operands, then unknown: at most argc words each */
    char **operands = calloc((size_t)argc + 1, sizeof(*operands));
    char **unknown = calloc((size_t)argc + 1, sizeof(*unknown));
    size_t nop = 0, nun = 0;
    bool to_unknown = false;
    /* A short flag's remainder put back ("-dc" → "-d", then "-c"). */
    char *pending = NULL;
    int k = 1;

    memset(a, 0, sizeof(*a));
    if (!operands || !unknown) {
        free(operands);
        free(unknown);
        return nf_err_sys(err, "out of memory");
    }
    while (pending || k < argc) {
        char *arg = pending ? pending : argv[k++];
        bool was_pending = pending != NULL;
        int i;

        pending = NULL;
        if (!was_pending && strcmp(arg, "--") == 0) {
            if (to_unknown)
                unknown[nun++] = arg;
            while (k < argc) {
                if (to_unknown)
                    unknown[nun++] = argv[k++];
                else
                    operands[nop++] = argv[k++];
            }
            break;
        }
        if (maybe_option(arg) && (i = find_opt(arg, strlen(arg))) >= 0) {
            const char *value = NULL;

            if (opts[i].value) {
                if (k >= argc) {
                    free(operands);
                    free(unknown);
                    return missing(err, i);
                }
                value = argv[k++];
            }
            if (set_opt(a, i, value))
                goto done;
            continue;
        }
        /* "-dc CMD", "-sFILE", "-cCMD": the first letter a known short one. */
        if (strlen(arg) > 2 && arg[0] == '-' && arg[1] != '-' && (i = find_opt(arg, 2)) >= 0 &&
            opts[i].s) {
            if (opts[i].value) {
                if (set_opt(a, i, arg + 2))
                    goto done;
                continue;
            }
            if (set_opt(a, i, NULL))
                goto done;
            /* "-" plus the rest, as commander puts it back: in argv's own
             * storage, the character before the rest is free to take it. */
            arg[1] = '-';
            pending = arg + 1;
            continue;
        }
        if (strncmp(arg, "--", 2) == 0 && strchr(arg, '=') && strchr(arg, '=') > arg + 2) {
            const char *eq = strchr(arg, '=');

            i = find_opt(arg, (size_t)(eq - arg));
            if (i >= 0 && opts[i].value) {
                if (set_opt(a, i, eq + 1))
                    goto done;
                continue;
            }
        }
        if (maybe_option(arg))
            to_unknown = true;
        if (to_unknown)
            unknown[nun++] = arg;
        else
            operands[nop++] = arg;
    }
    if (nop > 0 &&
        (strcmp(operands[0], "proxy") == 0 || strcmp(operands[0], "windows-install") == 0 ||
         strcmp(operands[0], "windows-uninstall") == 0)) {
        a->action = SRT_SUBCOMMAND;
        a->subcommand = operands[0];
        goto done;
    }
    if (nop > 0 && strcmp(operands[0], "help") == 0) {
        a->action = SRT_HELP;
        goto done;
    }
    for (size_t j = 0; j < nun; j++)
        if (strcmp(unknown[j], "-h") == 0 || strcmp(unknown[j], "--help") == 0) {
            a->action = SRT_HELP;
            goto done;
        }
    for (size_t j = 0; j < nun; j++)
        operands[nop++] = unknown[j];
    operands[nop] = NULL;
    a->argv = operands;
    a->argc = nop;
    free(unknown);
    return 0;
done:
    free(operands);
    free(unknown);
    return 0;
}

void srt_args_free(struct srt_args *a)
{
    free(a->argv);
    a->argv = NULL;
    a->argc = 0;
}

static bool bare_char(char c, bool first)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (c && strchr("_./:@+,-", c)) || (!first && c == '=');
}

char *srt_quote(char *const *argv, size_t argc)
{
    size_t n = 1;
    char *out, *o;

    for (size_t i = 0; i < argc; i++)
        n += 3 + strlen(argv[i]) * 5;
    out = o = malloc(n);
    if (!out)
        return NULL;
    for (size_t i = 0; i < argc; i++) {
        const char *w = argv[i];
        bool bare = *w != '\0';

        for (const char *p = w; *p && bare; p++)
            bare = bare_char(*p, p == w);
        if (i)
            *o++ = ' ';
        if (bare) {
            o = stpcpy(o, w);
            continue;
        }
        *o++ = '\'';
        for (const char *p = w; *p; p++) {
            if (*p == '\'')
                o = stpcpy(o, "'\"'\"'");
            else
                *o++ = *p;
        }
        *o++ = '\'';
    }
    *o = '\0';
    return out;
}

int srt_exit_status(int status, int signal_received, char *msg, size_t msgsz)
{
    msg[0] = '\0';
    /* srt forwards these to its child and then exits 0 as the child dies of
     * them, whatever the command did with the signal. */
    if (signal_received == SIGINT || signal_received == SIGTERM)
        return 0;
    /* Another signal srt was sent ended the command: srt's child died of it. */
    if (signal_received > 0 && status == 128 + signal_received) {
        const char *name = sigabbrev_np(signal_received);

        snprintf(msg, msgsz, "Process killed by signal: SIG%s", name ? name : "UNKNOWN");
        return 1;
    }
    return status;
}

void srt_settings_reason(const char *path, const char *msg, char *out, size_t outsz)
{
    size_t plen = strlen(path);
    const char *r = msg + plen;
    unsigned line, col;
    int used = 0;

    if (strncmp(msg, path, plen) != 0) {
        snprintf(out, outsz, "%s", msg);
        return;
    }
    if (strncmp(r, ": is empty.", 11) == 0) {
        snprintf(out, outsz, "%s%s", path, r + 1);
        return;
    }
    if (sscanf(r, ":%u:%u: not valid JSON: %n", &line, &col, &used) == 2 && used > 0) {
        snprintf(out, outsz, "%s is not valid JSON: %s (line %u, column %u)", path, r + used, line,
                 col);
        return;
    }
    if (strncmp(r, ": ", 2) == 0) {
        snprintf(out, outsz, "%s does not hold a valid config \xe2\x80\x94 %s", path, r + 2);
        return;
    }
    snprintf(out, outsz, "%s", msg);
}
