/* The command line: subcommand, run options, and the flags that add to the
 * policy. Pure: parses argv into data; cli_apply merges into a policy. */
#pragma once

#include <stdbool.h>

#include "src/err.h"
#include "src/policy.h"

enum cli_cmd {
    CLI_RUN,
    CLI_EXPLAIN,
    CLI_DOCTOR,
    CLI_CONNECT,
    CLI_VERSION,
    CLI_HELP,
};

struct cli {
    enum cli_cmd cmd;
    const char *config;
    const char *settings;   /* --settings FILE.json: srt's schema */
    const char *control_fd; /* --control-fd N: live network updates, as typed */
    bool verbose;
    bool timings;
    bool json;

    /* Policy flags, as typed; list flags append to the config's lists. */
    struct pol_strv allow_write, deny_write, deny_read, allow_read;
    struct pol_strv allow_domain, deny_domain;
    bool allow_all_unix_sockets;
    bool no_network;
    bool no_monitor;
    bool new_session;
    bool allow_git_init;
    const char *violations;
    const char *mode; /* --mode: namespaces, landlock or auto */

    /* The command (run, explain) or HOST PORT (connect). */
    char **argv;
    int argc;
};

int cli_parse(int argc, char **argv, struct cli *out, struct nf_err *err);
int cli_apply(const struct cli *c, struct policy *pol, struct nf_err *err);
void cli_free(struct cli *c);

extern const char cli_usage[];
