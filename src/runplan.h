/* The run plan: everything the engine needs to build one sandbox and start
 * one command in it, as plain data. Each front end (nsfence's flags and INI;
 * bubblewrap's argv) compiles what it reads into one; `explain` prints it;
 * spawn and init execute it and never change it: what happened to each
 * filesystem operation comes back beside it (struct run_results). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "fs/plan.h"
#include "seccomp/filters.h"

/* How the ids outside map inside the new user namespace. */
enum run_idmap {
    RUN_IDMAP_MIRROR, /* every id the caller sees maps to itself (a root caller) */
    RUN_IDMAP_SELF,   /* the caller's own uid and gid, one each, as uid and gid */
};

/* Who is PID 1 of the new PID namespace. */
enum run_pid1 {
    RUN_PID1_INIT, /* the engine's init: reaps, forwards signals, relays the status */
};

struct run_plan {
    /* Namespaces: CLONE_NEW* flags for clone. */
    unsigned long namespaces;
    enum run_idmap idmap;
    uid_t uid; /* inside (RUN_IDMAP_SELF) */
    gid_t gid;

    /* The ordered filesystem operations and the command's working directory
     * (fs.cwd). */
    struct fs_plan fs;

    /* Networking inside the new network namespace. */
    bool loopback;  /* bring lo up */
    bool endpoints; /* open the proxy listeners and hand them to the host side */
    unsigned http_port;
    unsigned socks_port;

    /* The process: argv[0] is what is searched on PATH and executed. The
     * plan owns everything but argv, which the front end lends it. */
    char **argv;
    char **envp;           /* the command's whole environment */
    uint64_t caps;         /* capabilities the command keeps (bit N: capability N) */
    struct sc_set filters; /* loaded in this order, last thing before execve */
    bool new_session;      /* setsid() */
    bool die_with_parent;  /* the host side dies with its parent (the sandbox dies
                              with the host side in any case) */
    enum run_pid1 pid1;
    bool keyring;         /* join a fresh session keyring (none of the caller's keys) */
    struct rlimit nofile; /* RLIMIT_NOFILE for the command */
};

/* Per-operation results, written by the host side while init builds the
 * fixed part of the root (placeholders it could not make: those mounts are
 * skipped) and read by init. One byte per fs operation. */
struct run_results {
    uint8_t *skip;
    size_t n;
};

void run_plan_free(struct run_plan *p);
