/* The host side of one nsfence run: the proxy, the write observer and the
 * placeholders served beside the sandbox that the engine (spawn, init)
 * builds from the front end's run plan; the violations reported after. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "src/control.h"
#include "src/err.h"
#include "src/front.h"

struct host_opts {
    bool timings;
    uint64_t start_us; /* when nsfence started (--timings) */
    int control_fd;    /* --control-fd (checked with ctl_fd_check), or -1 */
    enum ctl_style control_style;
    bool debug;              /* srt's -d: the channel's debug lines */
    bool no_violation_block; /* srt's CLI prints no <sandbox_violations> */
    int signal_received;     /* out: the first signal the host side was sent */
};

/* Run f's plan to completion. Returns the exit status for nsfence (the
 * command's, 128+N, or 125 with err set). */
int host_run(struct front *f, struct host_opts *o, struct nf_err *err);
