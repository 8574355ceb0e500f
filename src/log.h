/* Messages nsfence writes of its own, all on stderr and prefixed "nsfence: ".
 * Verbose lines appear only under -v; a run with nothing to report writes
 * nothing. */
#pragma once

#include <stdbool.h>

extern bool log_verbose_enabled;
/* What starts a verbose line: "nsfence: ", or srt's debug prefix before it
 * under srt's command line. */
extern const char *log_verbose_lead;

void log_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define log_v(...)                                                                                 \
    do {                                                                                           \
        if (log_verbose_enabled)                                                                   \
            log_verbose(__VA_ARGS__);                                                              \
    } while (0)
