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

#include "fs/landlock.h"
#include "fs/plan.h"
#include "seccomp/filters.h"

/* How the ids outside map inside the new user namespace. */
enum run_idmap {
    RUN_IDMAP_MIRROR, /* every id the caller sees maps to itself (a root caller) */
    RUN_IDMAP_SELF,   /* the caller's own uid and gid, one each, as uid and gid */
    RUN_IDMAP_NONE,   /* none written: no new user namespace, or the caller maps it */
};

/* What the process cloned into the namespaces becomes. */
enum run_pid1 {
    RUN_PID1_INIT,    /* the engine's init: reaps, forwards signals, relays the status */
    RUN_PID1_COMMAND, /* the command itself, nothing between it and the host side */
};

/* Whose conventions the engine's own messages follow. */
enum run_style {
    RUN_STYLE_NSFENCE, /* "nsfence: CMD: command not found", 127 or 126 */
    RUN_STYLE_BWRAP,   /* "bwrap: execvp CMD: ...", 1 */
};

struct run_plan {
    /* Namespaces: CLONE_NEW* flags for clone; descriptors of existing ones
     * to join first (-1: none). */
    unsigned long namespaces;
    int userns_fd;       /* joined by the host side before clone */
    int pidns_fd;        /* the PID namespace the sandbox's is made in (or joins) */
    int userns2_fd;      /* joined by the command after the setup */
    bool disable_userns; /* the command cannot make user namespaces */
    bool userns_nested;  /* the command runs in a user namespace of its own, nested
                            in the sandbox's: its capabilities cannot touch the
                            sandbox's mounts (bubblewrap's devpts re-mapping) */
    bool assert_userns_disabled;
    enum run_idmap idmap;
    uid_t uid; /* inside (RUN_IDMAP_SELF) */
    gid_t gid;
    char *hostname; /* NULL: unchanged */

    /* The ordered filesystem operations and the command's working directory
     * (fs.cwd). */
    struct fs_plan fs;
    /* Landlock mode: no namespace at all; fs's operations are not run, its
     * lists judge what the supervisor performs, and this ruleset holds the
     * command (landlock.abi 0: namespace mode). */
    bool landlock_mode;
    struct fs_ll_plan landlock;
    bool cwd_try;   /* fs.cwd missing inside: cwd_home, else / */
    char *cwd_home; /* NULL: none */
    bool set_pwd;   /* PWD names the directory the command starts in */

    /* Networking inside the new network namespace. */
    bool loopback;  /* bring lo up */
    bool endpoints; /* open the proxy listeners and hand them to the host side */
    unsigned http_port;
    unsigned socks_port;

    /* The process: argv[0] is what is searched on PATH and executed. The
     * plan owns everything but argv, which the front end lends it. */
    char **argv;
    char **envp;           /* the command's whole environment */
    char *file;            /* what execvp searches; NULL: argv[0] */
    uint64_t caps;         /* capabilities the command keeps (bit N: capability N) */
    bool caps_untouched;   /* the caller's, as they are (bubblewrap run as root); caps
                              are raised into the ambient set where allowed */
    struct sc_set filters; /* loaded in this order, last thing before execve */
    bool new_session;      /* setsid() */
    bool die_with_parent;  /* the host side dies with its parent (the sandbox dies
                              with the host side in any case) */
    enum run_pid1 pid1;
    bool init_traceable;  /* init becomes dumpable again (its /proc entries readable
                             by the caller, as bubblewrap's pid 1) once the command
                             runs and it holds no capability, no host descriptor and
                             the caller's seccomp programs */
    bool keyring;         /* join a fresh session keyring (none of the caller's keys) */
    struct rlimit nofile; /* RLIMIT_NOFILE for the command */
    bool keep_fds;        /* the caller's open descriptors stay open for the command */
    int block_fd;         /* -1, or the command waits for a byte on it before execve */
    int sync_fd;          /* -1, or init keeps it open while the sandbox lives */
    char **lock_files;    /* init holds a read lock on each (paths inside) */
    size_t n_lock_files;
    enum run_style style;
};

/* Per-operation results, written by the host side while init builds the
 * fixed part of the root (placeholders it could not make: those mounts are
 * skipped) and read by init. One byte per fs operation. */
struct run_results {
    uint8_t *skip;
    size_t n;
};

/* Every field at its neutral value: no namespace to join, no fd. */
void run_plan_init(struct run_plan *p);
void run_plan_free(struct run_plan *p);
