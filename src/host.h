/* The host side of one nsfence run: the proxy, the write observer and the
 * placeholders served beside the sandbox that the engine (spawn, init)
 * builds from the front end's run plan; the violations reported after. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "src/err.h"
#include "src/front.h"

/* Run f's plan to completion. Returns the exit status for nsfence (the
 * command's, 128+N, or 125 with err set). start_us: when nsfence started
 * (--timings). */
int host_run(struct front *f, bool timings, uint64_t start_us, struct nf_err *err);
