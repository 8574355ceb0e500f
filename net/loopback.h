/* The sandbox's network namespace starts with only `lo`, down. */
#pragma once

#include "src/err.h"

/* Bring `lo` up through rtnetlink (libnl-route); the kernel then gives it
 * 127.0.0.1/8 and ::1. Runs inside the new network namespace. */
int net_loopback_up(struct nf_err *err);
