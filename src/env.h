/* The command's environment: the caller's, unchanged but for
 * SANDBOX_RUNTIME=1 and, when the proxy runs, the variables that point every
 * common client at it. */
#pragma once

#include "src/err.h"
#include "src/policy.h"

/* A new NULL-terminated environment from base. self is the path of the
 * nsfence binary (for git's ssh through `nsfence connect`). */
int env_build(char *const *base, const struct policy *pol, const char *self, char ***out,
              struct nf_err *err);
void env_free(char **env);
