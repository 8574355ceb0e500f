/* nsfence: argv, dispatch, exit status. The one place that prints an error
 * and picks the exit code. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

#include "src/bwrap.h"
#include "src/cli.h"
#include "src/connect.h"
#include "src/control.h"
#include "src/doctor.h"
#include "src/explain.h"
#include "src/front.h"
#include "src/host.h"
#include "src/log.h"
#include "src/srt.h"
#include "src/sync.h"

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

/* What a run allocated dies with the process. Freeing it writes to pages
 * that init, a copy of this process, may still share: each is copied first,
 * after the command, while the caller waits. Builds with LeakSanitizer free
 * everything, so that a leak anywhere still shows. */
#ifdef __SANITIZE_ADDRESS__
static const bool free_at_exit = true;
#else
static const bool free_at_exit = false;
#endif

/* nsfence's own command line: compile it, then explain the plan or run it. */
static int run(const struct cli *cli, uint64_t start_us, struct nf_err *err)
{
    struct host_opts o = { .timings = cli->timings, .start_us = start_us, .control_fd = -1 };
    struct front f;
    int status = 125;

    memset(&f, 0, sizeof(f));
    run_plan_init(&f.plan);
    if (cli->control_fd && cli->cmd == CLI_RUN) {
        /* Checked before anything is opened: the number is the caller's. */
        o.control_fd = ctl_fd_parse(cli->control_fd, err);
        if (o.control_fd < 0) {
            nf_err_prefix(err, "--control-fd %s", cli->control_fd);
            goto out;
        }
        if (ctl_fd_check(o.control_fd, err) < 0) {
            nf_err_prefix(err, "--control-fd %d is not usable", o.control_fd);
            nf_err_hint(err, "refusing to run the command without the control channel it asks "
                             "for");
            goto out;
        }
    }
    if (front_compile(cli, &f, err) < 0)
        goto out;
    if (cli->cmd == CLI_EXPLAIN) {
        status = explain_print(stdout, &f, cli->argv) < 0 ? 125 : 0;
        if (status)
            nf_err_sys(err, "write");
        goto out;
    }
    status = host_run(&f, &o, err);
    if (!free_at_exit)
        return status;
out:
    front_free(&f);
    return status;
}

/* bubblewrap's command line: invoked as `bwrap`, as `nsfence bwrap`, or
 * re-executed by the command of a sandbox that front end made. */
static bool bwrap_personality(char **argv)
{
    const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    const char *mark = getenv(BWRAP_PERSONALITY_ENV);
    /* Only for what the mark was set for: this binary re-executed as
     * /proc/self/exe by a bwrap sandbox's command. */
    bool nested = mark && strcmp(mark, "bwrap") == 0 && strcmp(argv[0], "/proc/self/exe") == 0;

    if (mark)
        unsetenv(BWRAP_PERSONALITY_ENV); /* the mark is for us alone */
    return nested || strcmp(base, "bwrap") == 0;
}

int main(int argc, char **argv)
{
    uint64_t start_us = sync_now_us();
    struct nf_err err = { 0 };
    struct cli cli;
    bool bwrap = argc > 0 && bwrap_personality(argv);
    int status = 125;

    bool srt = false;

    if (argc > 0 && !bwrap) {
        const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

        srt = strcmp(base, "srt") == 0;
    }
    if (!bwrap && !srt && argc > 1 && strcmp(argv[1], "srt") == 0) {
        srt = true;
        argc--;
        argv++;
    }
    if (!bwrap && !srt && argc > 1 && strcmp(argv[1], "bwrap") == 0) {
        bwrap = true;
        argc--;
        argv++;
    }
    if (refuse_setuid(&err) < 0 || fill_std_fds(&err) < 0) {
        if (bwrap) {
            fprintf(stderr, "bwrap: %s\n", err.msg);
            return 1;
        }
        if (srt) {
            fprintf(stderr, "Error: %s\n", err.msg);
            return 1;
        }
        log_error("%s", err.msg);
        return 125;
    }
    if (bwrap)
        return bwrap_main(argc, argv);
    if (srt)
        return srt_main(argc, argv);
    if (argc > 2 && strcmp(argv[1], "explain") == 0 && strcmp(argv[2], "--bwrap") == 0)
        return bwrap_explain(argc - 2, argv + 2);
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
        status = run(&cli, start_us, &err);
        if (status == 125 && err.msg[0])
            log_error("%s", err.msg);
        break;
    }
    if (cli.cmd == CLI_RUN && !free_at_exit) {
        /* Nothing else to flush: stderr is unbuffered, and a run writes
         * nothing else through stdio. */
        if (__fpending(stdout))
            fflush(stdout);
        _exit(status);
    }
    cli_free(&cli);
    fflush(stdout);
    return status;
}
