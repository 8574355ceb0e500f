/* The command's environment: the caller's, unchanged but for
 * SANDBOX_RUNTIME=1 and, when the proxy runs, the variables that point every
 * common client at it. */
#pragma once

#include "fs/plan.h"
#include "src/err.h"
#include "src/policy.h"

/* A new NULL-terminated environment from base. self is the path of the
 * nsfence binary (for git's ssh through `nsfence connect`). */
int env_build(char *const *base, const struct policy *pol, const char *self, char ***out,
              struct nf_err *err);
void env_free(char **env);

/* Set name=value in *envp (built by env_build), replacing every copy. */
int env_set(char ***envp, const char *name, const char *value, struct nf_err *err);
/* Remove every copy of name. */
void env_unset(char **envp, const char *name);

/* Pure: when *envp's TMPDIR names a directory the command cannot write
 * inside (not /tmp itself, not under a write root of fs), set it to /tmp,
 * where mktemp works. Returns 1 when it did (the old value in old), 0 when
 * TMPDIR is unset or usable, -1 on error. */
int env_fix_tmpdir(char ***envp, const struct fs_plan *fs, char *old, size_t oldsz,
                   struct nf_err *err);
