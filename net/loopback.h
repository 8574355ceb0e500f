/* The sandbox's network namespace starts with only `lo`, down. */
#pragma once

#include "src/err.h"

/* Bring `lo` up through rtnetlink (one RTM_NEWLINK, libnl-3); the kernel
 * then gives it 127.0.0.1/8 and ::1. Runs inside the new network namespace. */
int net_loopback_up(struct nf_err *err);
