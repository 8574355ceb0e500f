/* The srt front end: srt's settings file rules and messages (reference
 * §1.1), its command line (§1.2), its environment (§2.10), its exit
 * statuses; the policy goes through front.c into the run plan and host.c
 * runs it, as for nsfence's own command line. */
#include "src/srt.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/control.h"
#include "src/env.h"
#include "src/front.h"
#include "src/host.h"
#include "src/log.h"
#include "src/settings.h"
#include "src/srt_args.h"
#include "src/sync.h"
#include "src/util.h"

#define LOST_FILE  "this file's rules (its denyRead, allowRead and credential entries included)"
#define LOST_ASKED "the rules --settings asked for"
#define SRT_TMPDIR "/tmp/claude"
#define SRT_NO_PROXY                                                                               \
    "localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"

static bool debug_on;

static void debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void debug(const char *fmt, ...)
{
    va_list ap;

    if (!debug_on)
        return;
    fputs("[SandboxDebug] ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int refuse(const char *reason, const char *lost)
{
    fprintf(stderr, "Error: %s\nRefusing to run with the built-in defaults, which would drop %s.\n",
            reason, lost);
    return 1;
}

/* os.homedir(): $HOME, else the password database. */
static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    struct passwd *pw;

    if (h && *h)
        return h;
    pw = getpwuid(getuid());
    return pw && pw->pw_dir ? pw->pw_dir : "";
}

enum load { LOAD_OK, LOAD_MISSING, LOAD_REFUSED };

/* srt's loadConfig: read first, no existence check; ENOENT is "missing",
 * any other failure "could not be read (CODE)". */
static enum load read_settings(const char *path, char **buf, size_t *len, char *reason,
                               size_t reasonsz)
{
    _cleanup_close_ int fd = -1;
    _cleanup_free_ char *b = NULL;
    struct stat st;
    size_t got = 0;
    int e;

    /* O_NONBLOCK: a FIFO planted at the path must not hang the run. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT)
            return LOAD_MISSING;
        goto unreadable;
    }
    if (fstat(fd, &st) < 0)
        goto unreadable;
    if (S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        goto unreadable;
    }
    if (!S_ISREG(st.st_mode)) {
        errno = EINVAL;
        goto unreadable;
    }
    if (st.st_size > SRT_SETTINGS_MAX_SIZE) {
        errno = EFBIG;
        goto unreadable;
    }
    b = malloc((size_t)st.st_size + 1);
    if (!b)
        goto unreadable;
    while (got < (size_t)st.st_size) {
        ssize_t n = RETRY_EINTR(read(fd, b + got, (size_t)st.st_size - got));

        if (n < 0)
            goto unreadable;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    b[got] = '\0';
    *buf = steal_pointer(&b);
    *len = got;
    return LOAD_OK;
unreadable:
    e = errno;
    snprintf(reason, reasonsz, "%s could not be read (%s).", path,
             strerrorname_np(e) ? strerrorname_np(e) : "EIO");
    return LOAD_REFUSED;
}

/* srt's default write paths (getDefaultWritePaths) that exist on Linux:
 * /tmp/claude and two caches in the home directory, unless a denyRead
 * covers them. A missing one is skipped, as every allow_write is. */
static int add_default_writes(struct policy *pol, struct nf_err *err)
{
    static const char *const in_home[] = { "/.npm/_logs", "/.claude/debug" };
    char path[PATH_MAX];

    if (pol_strv_add(&pol->allow_write, SRT_TMPDIR, err) < 0)
        return -1;
    for (size_t i = 0; pol->home && i < NF_ARRAY_SIZE(in_home); i++) {
        bool denied = false;

        snprintf(path, sizeof(path), "%s%s", pol->home, in_home[i]);
        for (size_t j = 0; j < pol->deny_read.n && !denied; j++)
            denied = pol_path_within(path, pol->deny_read.v[j]);
        if (!denied && !pol_strv_contains(&pol->allow_write, path) &&
            pol_strv_add(&pol->allow_write, path, err) < 0)
            return -1;
    }
    return 0;
}

/* PATH lookup, as srt's whichSync('bash'). */
static bool find_shell(const char *name, char *out, size_t outsz)
{
    const char *path = getenv("PATH");
    const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";

    while (*p) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);

        if (n > 0 && n + strlen(name) + 2 <= outsz && p[0] == '/') {
            struct stat st;

            snprintf(out, outsz, "%.*s/%s", (int)n, p, name);
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
                return true;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

/* What srt's bwrap argv sets that nsfence's environment does not: TMPDIR,
 * srt's NO_PROXY list; and SRT_ALLOW_NESTED_USERNS removed. */
static int srt_environment(struct front *f, const char *tmpdir, struct nf_err *err)
{
    env_unset(f->plan.envp, "SRT_ALLOW_NESTED_USERNS");
    if (env_set(&f->plan.envp, "TMPDIR", tmpdir, err) < 0)
        return -1;
    if (f->pol.network_enabled && (env_set(&f->plan.envp, "NO_PROXY", SRT_NO_PROXY, err) < 0 ||
                                   env_set(&f->plan.envp, "no_proxy", SRT_NO_PROXY, err) < 0))
        return -1;
    /* srt never creates /tmp/claude (Claude Code does), so on a host
     * without it srt's TMPDIR names a missing, read-only place and mktemp
     * fails. nsfence's /tmp is private: making the directory there leaves
     * nothing on the host and makes TMPDIR work. A host's own /tmp/claude is
     * bound writable (a default write path) and this leaves it as it is. */
    if (strcmp(tmpdir, SRT_TMPDIR) == 0) {
        struct fs_op *op =
            fs_plan_push(&f->plan.fs, FS_OP_MKDIR, NULL, SRT_TMPDIR, "srt's TMPDIR", err);

        if (!op)
            return -1;
        op->perms = 01777;
        op->has_perms = true;
        op->create = true;
    }
    return 0;
}

int srt_main(int argc, char **argv)
{
    uint64_t start_us = sync_now_us();
    struct srt_args a;
    struct nf_err err = { 0 };
    struct host_opts o = { .start_us = start_us,
                           .control_fd = -1,
                           .control_style = CTL_STYLE_SRT,
                           .no_violation_block = true };
    struct srt_settings s;
    bool have_settings = false;
    _cleanup_free_ char *buf = NULL, *command = NULL;
    char path[PATH_MAX], reason[NF_ERR_MSG_MAX + PATH_MAX], shell[PATH_MAX], msg[64];
    const char *tmpdir, *dbg;
    char *plan_argv[4];
    struct front f;
    size_t len = 0;
    int status = 1;

    memset(&f, 0, sizeof(f));
    run_plan_init(&f.plan);
    if (srt_args_parse(argc, argv, &a, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    switch (a.action) {
    case SRT_HELP:
        fputs(srt_usage, stdout);
        return 0;
    case SRT_VERSION_ACTION:
        puts(SRT_VERSION);
        return 0;
    case SRT_SUBCOMMAND:
        fprintf(stderr, "Error: srt's `%s` subcommand is not part of nsfence's srt\n",
                a.subcommand);
        return 1;
    case SRT_RUN:
        break;
    }
    /* commander runs the option's parser while it reads argv. */
    if (a.control_fd && (o.control_fd = ctl_fd_parse(a.control_fd, &err)) < 0) {
        fprintf(stderr, "error: option '--control-fd <fd>' argument '%s' is invalid. %s\n",
                a.control_fd, err.msg);
        goto out;
    }
    if (a.debug && setenv("SRT_DEBUG", "true", 1) < 0) {
        fprintf(stderr, "Error: setenv: %s\n", strerror(errno));
        goto out;
    }
    dbg = getenv("SRT_DEBUG");
    debug_on = dbg && *dbg;
    /* srt's debug output is nsfence's -v: what each key became, the mounts,
     * what is ignored and why. */
    if (debug_on) {
        log_verbose_enabled = true;
        log_verbose_lead = "[SandboxDebug] nsfence: ";
    }

    /* The settings: srt's loadConfig. */
    if (a.settings)
        snprintf(path, sizeof(path), "%s", a.settings);
    else
        snprintf(path, sizeof(path), "%s/.srt-settings.json", home_dir());
    switch (read_settings(path, &buf, &len, reason, sizeof(reason))) {
    case LOAD_MISSING:
        if (a.settings) {
            snprintf(reason, sizeof(reason), "%s does not exist.", path);
            status = refuse(reason, LOST_ASKED);
            goto out;
        }
        debug("No config found at %s, using default config", path);
        break;
    case LOAD_REFUSED:
        status = refuse(reason, LOST_FILE);
        goto out;
    case LOAD_OK:
        if (settings_parse(buf, len, path, &s, &err) < 0) {
            srt_settings_reason(path, err.msg, reason, sizeof(reason));
            status = refuse(reason, LOST_FILE);
            goto out;
        }
        have_settings = true;
        debug("Loaded config from %s", path);
        break;
    }

    /* The policy: srt's defaults (no write root but srt's own: the working
     * directory is not writable unless allowWrite says so), then the file. */
    if (front_init(&f, &err) < 0)
        goto fail;
    pol_strv_free(&f.pol.allow_write);
    /* srt's CLI runs no violation monitor: nothing would report it. */
    f.pol.monitor_enabled = false;
    if (have_settings) {
        int rc = settings_apply(&s, &f.pol, &err);

        settings_free(&s);
        have_settings = false;
        if (rc < 0) {
            status = refuse(err.msg, LOST_FILE);
            goto out;
        }
    }
    if (add_default_writes(&f.pol, &err) < 0)
        goto fail;
    {
        /* A command must not write itself a looser policy for the next
         * run: the settings file is protected, existing or not. */
        char abs[PATH_MAX];

        if (pol_path_normalize(path, f.pol.cwd, f.pol.home, abs, sizeof(abs), &err) == 0 &&
            !pol_strv_contains(&f.pol.config_files, abs) &&
            pol_strv_add(&f.pol.config_files, abs, &err) < 0)
            goto fail;
    }

    if (o.control_fd >= 0 && ctl_fd_check(o.control_fd, &err) < 0) {
        fprintf(stderr,
                "Error: --control-fd %d is not usable: %s. Refusing to run the command without "
                "the control channel it asks for.\n",
                o.control_fd, err.msg);
        goto out;
    }

    /* The command: -c verbatim, else argv quoted; bash runs it (srt's
     * `<shell> -c`), so builtins, functions and the boundaries between
     * arguments behave as under srt. */
    if (a.command && *a.command) {
        command = strdup(a.command);
        if (command)
            debug("Command string mode (-c): %s", command);
    } else if (a.argc > 0) {
        command = srt_quote(a.argv, a.argc);
        if (command)
            debug("Original command: %s", command);
    } else {
        fputs("Error: No command specified. Use -c <command> or provide command arguments.\n",
              stderr);
        goto out;
    }
    if (!command) {
        nf_err_sys(&err, "out of memory");
        goto fail;
    }
    if (!find_shell("bash", shell, sizeof(shell))) {
        fputs("Error: Shell 'bash' not found in PATH\n", stderr);
        goto out;
    }
    plan_argv[0] = shell;
    plan_argv[1] = "-c";
    plan_argv[2] = command;
    plan_argv[3] = NULL;
    /* ignoreViolations' keys are matched against the command srt runs. */
    f.command = strdup(command);
    if (!f.command) {
        nf_err_sys(&err, "out of memory");
        goto fail;
    }
    if (front_finish(&f, plan_argv, &err) < 0)
        goto fail;
    tmpdir = getenv("CLAUDE_CODE_TMPDIR");
    if (!tmpdir || !*tmpdir)
        tmpdir = getenv("CLAUDE_TMPDIR");
    if (!tmpdir || !*tmpdir)
        tmpdir = SRT_TMPDIR;
    if (srt_environment(&f, tmpdir, &err) < 0)
        goto fail;
    debug("Running on nsfence %s: %s -c %s", NF_VERSION, shell, command);

    o.debug = debug_on;
    err.msg[0] = '\0';
    status = host_run(&f, &o, &err);
    if (status == 125 && err.msg[0])
        goto fail;
    status = srt_exit_status(status, o.signal_received, msg, sizeof(msg));
    if (msg[0])
        fprintf(stderr, "%s\n", msg);
    goto out;
fail:
    fprintf(stderr, "Error: %s\n", err.msg);
    status = 1;
out:
    if (have_settings)
        settings_free(&s);
    front_free(&f);
    srt_args_free(&a);
    fflush(stdout);
    return status;
}
