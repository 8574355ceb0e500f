/* srt 0.0.83's command line (`srt [options] [command...]`, commander with
 * allowUnknownOption), its shell quoting and its exit statuses, as pure
 * functions: argv in, data out. src/srt.c does the rest. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "src/err.h"

#define SRT_VERSION "0.0.83"

enum srt_action {
    SRT_RUN,
    SRT_HELP,
    SRT_VERSION_ACTION,
    SRT_SUBCOMMAND, /* proxy, windows-install, windows-uninstall: not here */
};

struct srt_args {
    enum srt_action action;
    bool debug;             /* -d, --debug */
    const char *settings;   /* -s, --settings PATH; NULL: the default */
    const char *command;    /* -c CMD (verbatim); NULL when not given */
    const char *control_fd; /* --control-fd FD, as typed; NULL when not given */
    /* The command's words: commander's operands, then every argument from
     * the first unknown option on (in order; srt's own options removed). */
    char **argv;
    size_t argc;
    const char *subcommand; /* SRT_SUBCOMMAND: its name */
};

/* Parse argv (argv[0] is the program). Errors carry commander's message
 * ("error: option '-s, --settings <path>' argument missing"); srt exits 1
 * on them. */
int srt_args_parse(int argc, char **argv, struct srt_args *out, struct nf_err *err);
void srt_args_free(struct srt_args *a);

/* srt's quote(): each word bare when it is [A-Za-z0-9_./:@+,-] (and '=' past
 * the first character), else single-quoted with ' as '"'"'; '' when empty;
 * joined by spaces. NULL when out of memory. */
char *srt_quote(char *const *argv, size_t argc);

/* srt's exit status from nsfence's (the command's, 128+N) and the first
 * signal srt itself was sent: SIGINT or SIGTERM → 0; another signal that
 * ended the command → 1 with "Process killed by signal: SIGNAME" in msg;
 * else the status. msg is "" when there is nothing to print. */
int srt_exit_status(int status, int signal_received, char *msg, size_t msgsz);

/* srt's reason for a settings file that did not load, from settings_parse's
 * message about file: "<path> is not valid JSON: ...", "<path> does not
 * hold a valid config — key.path: ...", "<path> is empty. ..."; a refusal
 * of a key nsfence cannot honour stays as settings_apply words it. */
void srt_settings_reason(const char *path, const char *msg, char *out, size_t outsz);

extern const char srt_usage[];
