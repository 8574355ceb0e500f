/* Errors carried up to the one place that prints them (crun's idiom): a
 * failing site records errno and a message naming the operation and the
 * path; callers add context on the way up; main prints and picks the exit
 * status. */
#pragma once

#include <stdarg.h>

#define NF_ERR_MSG_MAX 1024

/* Exit statuses of the contract (DESIGN.md). */
enum {
    NF_EXIT_FAIL = 125, /* nsfence itself failed */
    NF_EXIT_CANNOT_EXEC = 126,
    NF_EXIT_NOT_FOUND = 127,
};

struct nf_err {
    int code; /* errno of the failing call, 0 when not a system error */
    char msg[NF_ERR_MSG_MAX];
};

/* Record a message; returns -1 so callers can `return nf_err_set(...)`. */
int nf_err_set(struct nf_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record "message: strerror(errno)" using the current errno. */
int nf_err_sys(struct nf_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prepend context: "context: previous message". Returns -1. */
int nf_err_prefix(struct nf_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append a hint: "previous message (hint)". Returns -1. */
int nf_err_hint(struct nf_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
