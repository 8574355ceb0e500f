/* `nsfence explain`: the policy after defaults and merging, and the exact
 * plan a run would execute. Prints; runs nothing. */
#pragma once

#include <stdio.h>

#include "fs/plan.h"
#include "proxy/parent.h"
#include "proxy/rules.h"
#include "seccomp/filters.h"
#include "src/policy.h"

struct explain_input {
    const struct policy *pol;
    const struct fs_plan *plan;
    const struct px_rules *rules; /* NULL: no network */
    const struct px_parent *parent;
    const char *config_used; /* NULL: none */
    const struct sc_options *filters;
    char **argv;
};

int explain_print(FILE *out, const struct explain_input *in);
