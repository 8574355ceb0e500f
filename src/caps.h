/* Capabilities of the command: those the run plan keeps, none by default. */
#pragma once

#include <stdint.h>

#include "src/err.h"

/* Keep exactly the capabilities in keep (bit N: capability N) in the
 * bounding, effective, permitted, inheritable and ambient sets; every other
 * one is gone from all of them, so neither this process nor anything it
 * executes (setuid or file-capability binaries included) holds it. keep = 0
 * leaves nothing at all. */
int caps_set(uint64_t keep, struct nf_err *err);

/* Each of caps into the ambient set where the kernel allows it (in the
 * permitted and inheritable sets): the others are left out, as bubblewrap
 * leaves them, with no capability set changed. */
/* Every capability gone from every set; the bounding set only where this
 * process may change it (CAP_SETPCAP): with no_new_privs set before execve,
 * the command gains none back either way, root or not. */
int caps_clear(struct nf_err *err);

int caps_raise_ambient(uint64_t caps, struct nf_err *err);

/* Whether this process has cap in its effective set. */
int caps_have(int cap);
