/* The one executor of a mount plan. Runs in the sandbox's init, inside the
 * new user and mount namespaces, before anything of the command exists. */
#pragma once

#include "fs/plan.h"
#include "src/err.h"

/* Build the new root from the plan and pivot into it: afterwards "/" is the
 * sandbox's root and no path reaches the host's root or the scratch space.
 * verbose: log each op as it runs. */
int fs_plan_execute(const struct fs_plan *plan, struct nf_err *err);

/* Used by the executor for FS_OP_DEV (fs/dev.c): populate the /dev at the
 * tmpfs devfd (attached in the new root), device nodes cloned from the
 * host's /dev. */
int fs_dev_populate(int devfd, struct nf_err *err);
