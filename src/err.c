#include "src/err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void vset(struct nf_err *err, const char *fmt, va_list ap)
{
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
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
