#include "src/err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Messages echo paths and values the user typed: control characters are
 * escaped at the source, so a message is always one printable line. */
static void vset(struct nf_err *err, const char *fmt, va_list ap)
{
    char raw[NF_ERR_MSG_MAX];
    size_t o = 0;

    vsnprintf(raw, sizeof(raw), fmt, ap);
    for (const unsigned char *p = (const unsigned char *)raw; *p && o + 5 < sizeof(err->msg); p++) {
        if (*p < 0x20 || *p == 0x7f)
            o += (size_t)snprintf(err->msg + o, sizeof(err->msg) - o, "\\x%02x", *p);
        else
            err->msg[o++] = (char)*p;
    }
    err->msg[o] = '\0';
}

int nf_err_set(struct nf_err *err, int code, const char *fmt, ...)
{
    va_list ap;

    err->code = code;
    va_start(ap, fmt);
    vset(err, fmt, ap);
    va_end(ap);
    return -1;
}

int nf_err_sys(struct nf_err *err, const char *fmt, ...)
{
    int code = errno;
    size_t len;
    va_list ap;

    err->code = code;
    va_start(ap, fmt);
    vset(err, fmt, ap);
    va_end(ap);
    len = strlen(err->msg);
    snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(code));
    errno = code;
    return -1;
}

int nf_err_prefix(struct nf_err *err, const char *fmt, ...)
{
    char old[NF_ERR_MSG_MAX];
    size_t len;
    va_list ap;

    memcpy(old, err->msg, sizeof(old));
    va_start(ap, fmt);
    vset(err, fmt, ap);
    va_end(ap);
    len = strlen(err->msg);
    snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", old);
    return -1;
}

int nf_err_hint(struct nf_err *err, const char *fmt, ...)
{
    size_t len = strlen(err->msg);
    va_list ap;

    if (len + 3 >= sizeof(err->msg))
        return -1;
    memcpy(err->msg + len, " (", 3);
    len += 2;
    va_start(ap, fmt);
    vsnprintf(err->msg + len, sizeof(err->msg) - len, fmt, ap);
    va_end(ap);
    len = strlen(err->msg);
    if (len + 2 <= sizeof(err->msg)) {
        err->msg[len] = ')';
        err->msg[len + 1] = '\0';
    }
    return -1;
}
