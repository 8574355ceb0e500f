/* `nsfence explain`: the policy after defaults and merging, and the exact
 * plan a run would execute. Prints; runs nothing. */
#pragma once

#include <stdio.h>

#include "fs/plan.h"
#include "src/policy.h"

struct explain_input {
    const struct policy *pol;
    const struct fs_plan *plan;
    const char *config_used; /* NULL: none */
    char **argv;
};

int explain_print(FILE *out, const struct explain_input *in);
