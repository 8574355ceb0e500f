/* Inside the sandbox: PID 1 (nsfence's own init) and, forked from it, the
 * command. Both run after clone in the child and never return. */
#pragma once

#include "src/spawn.h"

/* sync_fd: the sync socket; status_fd: where init writes the command's final
 * status (one byte) once everything else in the sandbox is dead. */
_Noreturn void init_main(struct spawn_config *cfg, int sync_fd, int status_fd);
