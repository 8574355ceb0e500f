/* `nsfence doctor [--json]`: which kernel features this host has, and for
 * every warning or failure the exact fix. One line per check; the JSON form
 * is one object with a stable key per check, for scripts and for diffing
 * hosts. Returns 1 when a check fails, else 0. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

int doctor_run(bool json, FILE *out);
