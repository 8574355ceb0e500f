/* nsfence's own front end: the built-in default, the INI config and the
 * flags, compiled into one run plan, with what the host side serves beside
 * the sandbox (the proxy's rules, the parent proxy). Reads argv's parse, the
 * config files and the environment; the engine never does. */
#pragma once

#include "proxy/parent.h"
#include "proxy/rules.h"
#include "seccomp/filters.h"
#include "src/cli.h"
#include "src/err.h"
#include "src/policy.h"
#include "src/runplan.h"

struct front {
    struct policy pol;
    char *config_used;     /* NULL when none */
    struct px_rules rules; /* when pol.network_enabled */
    struct px_parent parent;
    struct sc_options filters; /* what plan.filters were built from */
    struct run_plan plan;
    /* The command as text, what srt's ignoreViolations keys are matched
     * against: srt's -c string, else argv quoted as srt quotes it. */
    char *command;
};

/* Everything a run or `explain` needs; changes nothing on the host. */
int front_compile(const struct cli *cli, struct front *f, struct nf_err *err);

/* The two halves of front_compile, for a front end with its own sources
 * of policy (srt's command line): front_init leaves the built-in default
 * in f->pol; the caller changes it; front_finish compiles f->pol into the
 * run plan for argv (lent: it must outlive f). */
int front_init(struct front *f, struct nf_err *err);
int front_finish(struct front *f, char **argv, struct nf_err *err);
void front_free(struct front *f);
