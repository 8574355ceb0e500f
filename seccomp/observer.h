/* The write observer, host side: answers the USER_NOTIF filter's
 * notifications with CONTINUE and reports write attempts the sandbox refuses
 * (outside every write root, or inside a protected path), so a model reading
 * the output learns what was blocked. The mounts are the boundary: a path
 * read from the command's memory is racy and never decides anything. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/err.h"
#include "src/loop.h"
#include "src/policy.h"
#include "src/violations.h"

struct sc_observer_config {
    char *const *write_roots;
    size_t n_write_roots;
    char *const *protected_paths;
    size_t n_protected;
    /* Denied-read directories (writable tmpfs of the sandbox's own) and the
     * read-only carve-outs and masked files inside them. */
    char *const *scratch;
    size_t n_scratch;
    char *const *read_only;
    size_t n_read_only;
    struct vio_list *violations;
    /* Where the command may have made a repository inside a write root: a
     * .git it created, and every rename's destination (a directory holding
     * one may be moved in). Racy, as every path read from its memory:
     * checked on disk after the run. */
    struct pol_strv *git_watch;
};

enum sc_verdict {
    SC_ALLOWED,
    SC_OUTSIDE,   /* outside everything the sandbox lets the command write */
    SC_PROTECTED, /* inside a deny_write or mandatory path */
};

struct sc_observer;

/* Serve listener (the observer filter's notification fd; ownership taken). */
int sc_observer_new(struct sc_observer **out, struct ev_loop *loop, int listener,
                    const struct sc_observer_config *cfg, struct nf_err *err);
void sc_observer_free(struct sc_observer *o);

/* Whether the command was let make a new name anywhere (a create, mkdir,
 * mknod, link, symlink or rename): every such call stops at the observer
 * before it runs, so false means no name was made by the command. True
 * without an observer (NULL). */
bool sc_observer_saw_creation(const struct sc_observer *o);

/* base + "/" + rel, lexically normalised (rel absolute: rel alone). Pure;
 * the fuzz target and the unit tests call it. Returns -1 when too long. */
int sc_path_resolve(const char *base, const char *rel, char *out, size_t outsz);

/* Pure: whether writing abs would be refused, and why. */
enum sc_verdict sc_classify(const struct sc_observer_config *cfg, const char *abs);

/* How a trapped call treats the name it was given. */
enum sc_create {
    SC_CREATE_NO,     /* acts on what is there (chmod, unlink, open for writing, ...) */
    SC_CREATE_EXCL,   /* a new name only: mkdir, mknod, symlink, link, O_CREAT|O_EXCL */
    SC_CREATE_RDONLY, /* O_CREAT without write access: an existing file just opens */
    SC_CREATE_NEEDS,  /* changes what is there, found first (chmod, chown, utimes,
                         truncate): a missing name is ENOENT */
};

/* What was at the name when the call was trapped (before the kernel ran it). */
enum sc_target {
    SC_TARGET_UNKNOWN,   /* not looked at, or could not be */
    SC_TARGET_EXISTS,    /* something, a dangling symlink included */
    SC_TARGET_ABSENT,    /* its directory exists, the name does not */
    SC_TARGET_NO_PARENT, /* its directory does not exist (ENOENT/ENOTDIR) */
};

/* How a call treats its (last) path argument: syscall by name, flags
 * open's (open, openat, creat, openat2's how). */
enum sc_create sc_create_kind(const char *syscall, uint64_t flags);

/* Pure: whether a call classified v is one the sandbox refused. The kernel
 * answers EEXIST for a name that exists, and ENOENT for a missing
 * directory, before it looks at the mount's flags: `mkdir -p` walking
 * through /var is not a violation. */
bool sc_refused(enum sc_verdict v, enum sc_create c, enum sc_target t);
