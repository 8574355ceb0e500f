/* The write observer, host side: answers the USER_NOTIF filter's
 * notifications with CONTINUE and reports write attempts the sandbox refuses
 * (outside every write root, or inside a protected path), so a model reading
 * the output learns what was blocked. The mounts are the boundary: a path
 * read from the command's memory is racy and never decides anything. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "src/err.h"
#include "src/loop.h"
#include "src/policy.h"
#include "src/violations.h"

struct sc_observer_config {
    char *const *write_roots;
    size_t n_write_roots;
    char *const *protected_paths;
    size_t n_protected;
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

/* base + "/" + rel, lexically normalised (rel absolute: rel alone). Pure;
 * the fuzz target and the unit tests call it. Returns -1 when too long. */
int sc_path_resolve(const char *base, const char *rel, char *out, size_t outsz);

/* Pure: whether writing abs would be refused, and why. */
enum sc_verdict sc_classify(const struct sc_observer_config *cfg, const char *abs);
