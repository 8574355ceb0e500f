/* `nsfence doctor [--json]`: which kernel features this host has, and for
 * every warning or failure the exact fix. One line per check; the JSON form
 * is one object with a stable key per check, for scripts and for diffing
 * hosts. Returns 1 when a check fails, else 0. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "src/err.h"

int doctor_run(bool json, FILE *out);

/* Whether a new user namespace can be made here, its id maps written and a
 * tmpfs mounted in it: res gets the errno of each step (0: it worked).
 * False when the probe itself could not run. */
bool doctor_probe_userns(int res[3]);
bool doctor_namespaces_work(void);

/* A refusal of namespaces: where this kernel has Landlock, err also points
 * at --mode landlock and says it is weaker. Returns -1 (err's convention). */
int doctor_landlock_hint(struct nf_err *err);

/* no_new_privs and the number of seccomp filters on this process. */
void doctor_seccomp_state(long *nnp, long *filters);

#define DOCTOR_NEWUSER "clone(CLONE_NEWUSER)"

/* Why what refused (DOCTOR_NEWUSER, or "mounting") fails with EPERM for a
 * process under a seccomp filter, as precisely as it can tell: inside
 * another nsfence or srt sandbox (SANDBOX_RUNTIME=1), in a container
 * (Docker's default profile), or under some other filter (with its count).
 * Cause in cause, fix in fix. */
void doctor_seccomp_cause(const char *refused, char *cause, size_t causesz, char *fix,
                          size_t fixsz);
