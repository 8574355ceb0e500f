/* `nsfence explain`: the policy after defaults and merging, and the exact
 * run plan a run would execute. Prints; runs nothing. */
#pragma once

#include <stdio.h>

#include "src/front.h"
#include "src/runplan.h"

/* The sandbox part of a run plan (namespaces, ids, lo, endpoints,
 * capabilities, process options, environment changes, the mount plan);
 * every front end's explain prints it. */
int run_plan_print(FILE *out, const struct run_plan *p);

/* nsfence's own: the policy, the network rules, the run plan, the seccomp
 * filters (their rules and the programs as loaded), the command. */
int explain_print(FILE *out, const struct front *f, char **argv);
