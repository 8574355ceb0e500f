/* Landlock mode's helper process: made by the command after it entered its
 * Landlock domain and dropped its capabilities, before its seccomp filter,
 * as a sibling (its parent is init); it serves the supervisor's requests
 * (fs/perform.c) until the socket closes. */
#pragma once

#include "fs/perform.h"

_Noreturn void lhelper_main(const struct fs_perform_ctx *ctx, int sock);
