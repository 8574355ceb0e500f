#include "src/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool log_verbose_enabled;
const char *log_verbose_lead = "nsfence: ";

/* One write(2) per line, so lines from init, the command and the host side
 * never interleave mid-line. */
static void emit(const char *lead, const char *prefix, const char *fmt, va_list ap)
{
    char line[2048];
    int n = snprintf(line, sizeof(line), "%s%s", lead, prefix);
    int m;

    if (n < 0)
        return;
    char raw[2048];
    size_t o = (size_t)n;

    m = vsnprintf(raw, sizeof(raw), fmt, ap);
    if (m < 0)
        return;
    /* A path or value with a newline or an escape sequence must not forge a
     * second line or repaint the terminal: one message, one line. */
    for (const unsigned char *p = (const unsigned char *)raw; *p && o + 5 < sizeof(line); p++) {
        if (*p < 0x20 || *p == 0x7f)
            o += (size_t)snprintf(line + o, sizeof(line) - o, "\\x%02x", *p);
        else
            line[o++] = (char)*p;
    }
    line[o++] = '\n';
    (void)!write(STDERR_FILENO, line, o);
}

void log_verbose(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit(log_verbose_lead, "", fmt, ap);
    va_end(ap);
}

void log_warn(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit("nsfence: ", "warning: ", fmt, ap);
    va_end(ap);
}

void log_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit("nsfence: ", "", fmt, ap);
    va_end(ap);
}
