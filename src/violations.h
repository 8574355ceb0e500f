/* What the sandbox refused, for the model reading the command's output: kept
 * in order, de-duplicated, at most VIO_MAX lines; appended to stderr after the
 * command exits in srt's <sandbox_violations> block, and streamed as JSON
 * lines to the --violations file. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "src/err.h"
#include "src/policy.h"

#define VIO_MAX 1000

struct vio_list {
    char **lines;
    size_t n;
    size_t dropped; /* past VIO_MAX */
    const struct pol_strv *ignore;
    int log_fd; /* -1 when no --violations file */
};

int vio_init(struct vio_list *l, const struct policy *pol, struct nf_err *err);
void vio_free(struct vio_list *l);

/* "deny network-outbound HOST:PORT (REASON)" */
void vio_add_network(struct vio_list *l, const char *host, unsigned port, const char *reason);

/* "deny SYSCALL PATH" */
void vio_add_file(struct vio_list *l, const char *syscall, const char *path, const char *reason,
                  pid_t pid);

/* "\n<sandbox_violations>\nLINE\n...</sandbox_violations>" on fd; nothing
 * when there was no violation. */
void vio_print_block(const struct vio_list *l, int fd);

/* Control characters (runs become one space), '<' and '>' removed: a line
 * must not be able to close the block or forge another. Pure; for tests. */
void vio_sanitize(const char *in, char *out, size_t outsz);

/* A JSON string body for s (no quotes): escapes, invalid UTF-8 as U+FFFD. */
void vio_json_escape(const char *s, char *out, size_t outsz);
