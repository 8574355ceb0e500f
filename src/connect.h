/* `nsfence connect HOST PORT`: a tunnel through the sandbox's HTTP proxy on
 * stdin/stdout, for ssh's ProxyCommand (git over ssh) — what srt does with
 * socat, without socat. Runs inside the sandbox as an ordinary process. */
#pragma once

#include "src/err.h"

int connect_main(const char *host, const char *port, struct nf_err *err);
