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
    const struct pol_ignore *ignore_cmd; /* srt's ignoreViolations */
    size_t n_ignore_cmd;
    const char *command; /* the command's text, what their keys are matched against */
    int log_fd;          /* -1 when no --violations file */
    /* A line naming the sandbox's mode, first in the block; NULL: namespace
     * mode, unnamed. */
    const char *mode;
};

/* command: the command as text (srt: the -c string, or argv quoted); lent,
 * it must outlive l. */
int vio_init(struct vio_list *l, const struct policy *pol, const char *command, struct nf_err *err);
void vio_free(struct vio_list *l);

/* "deny network-outbound HOST:PORT (REASON)" */
void vio_add_network(struct vio_list *l, const char *host, unsigned port, const char *reason);

/* "deny SYSCALL PATH" */
void vio_add_file(struct vio_list *l, const char *syscall, const char *path, const char *reason,
                  pid_t pid);

/* "created git-repository PATH (...)": a .git the command made below the
 * top of a write root, which the user's own git will obey later. */
void vio_add_git(struct vio_list *l, const char *path);
/* "changed git-repository PATH (...)": a repository the plan saw before
 * the run, replaced meanwhile (fs_git_changed), by whatever did it: the
 * user's own git rewriting its config does so too. */
void vio_add_git_changed(struct vio_list *l, const char *path);

/* "\n<sandbox_violations>\nLINE\n...</sandbox_violations>" on fd; nothing
 * when there was no violation. */
void vio_print_block(const struct vio_list *l, int fd);

/* srt's shouldIgnoreViolation: true when an entry whose key is "*" or is
 * contained in command (NULL: only "*" applies) has a pattern contained in
 * subject (a file violation's path, a network violation's line). Pure. */
bool vio_ignored_for(const struct pol_ignore *v, size_t n, const char *command,
                     const char *subject);

/* Control characters (runs become one space), '<' and '>' removed: a line
 * must not be able to close the block or forge another. Pure; for tests. */
void vio_sanitize(const char *in, char *out, size_t outsz);

/* At p, a character a reader must not be shown as-is: C0 and C1 controls,
 * DEL, and the invisible or bidi formatting characters srt strips (U+00AD,
 * U+061C, U+200B-U+200F, U+2028/9, U+202A-U+202E, U+2060-U+2064,
 * U+2066-U+2069, U+FEFF, U+E0000-U+E007F; a U+202E would make a line read
 * backwards). Returns its length in bytes, 0 when it is an ordinary
 * character. Pure. */
size_t vio_invisible_len(const unsigned char *p);

/* The length of the UTF-8 sequence at p (1..4), 0 when invalid. */
size_t vio_utf8_len(const unsigned char *p);

/* A JSON string body for s (no quotes): escapes, invalid UTF-8 as U+FFFD. */
void vio_json_escape(const char *s, char *out, size_t outsz);
