/* Capabilities of the command: none at all. */
#pragma once

#include "src/err.h"

/* Empty the bounding and ambient sets and clear effective, permitted and
 * inheritable, so neither this process nor anything it executes (setuid or
 * file-capability binaries included) holds a capability. */
int caps_drop_all(struct nf_err *err);

/* Whether this process has cap in its effective set. */
int caps_have(int cap);
