/* The bubblewrap 0.11.1 command line as plain data: bw_parse reads argv the
 * way bwrap's parse_args does (left to right, --args files in place, the same
 * limits and the same messages), and bw_validate makes the combination
 * checks bwrap's main makes right after parsing. Nothing here touches the
 * environment, a file or an fd: the one read bwrap does while parsing
 * (--args and --add-seccomp-fd) goes through a callback, so the whole front
 * end is unit-tested and fuzzed.
 *
 * Messages are bwrap's own text without the "bwrap: " prefix; the caller
 * prints "bwrap: MSG" (or "<3>bwrap: MSG" when spec->level_prefix is set)
 * and exits 1. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/err.h"

/* bwrap refuses more arguments than this, on the command line and in all
 * --args files together. */
#define BW_MAX_ARGS 9000

/* The highest capability number cap_from_name accepts (libcap: < 64). */
#define BW_CAP_MAX 63

/* Filesystem operations, in the order the command line gives them; run in
 * that order inside the new root. */
enum bw_op_kind {
    BW_OP_BIND,         /* --bind SRC DEST */
    BW_OP_BIND_TRY,     /* --bind-try SRC DEST: skipped when SRC is missing */
    BW_OP_DEV_BIND,     /* --dev-bind SRC DEST */
    BW_OP_DEV_BIND_TRY, /* --dev-bind-try SRC DEST */
    BW_OP_RO_BIND,      /* --ro-bind SRC DEST */
    BW_OP_RO_BIND_TRY,  /* --ro-bind-try SRC DEST */
    BW_OP_BIND_FD,      /* --bind-fd FD DEST */
    BW_OP_RO_BIND_FD,   /* --ro-bind-fd FD DEST */
    BW_OP_REMOUNT_RO,   /* --remount-ro DEST (not recursive) */
    BW_OP_PROC,         /* --proc DEST */
    BW_OP_DEV,          /* --dev DEST */
    BW_OP_TMPFS,        /* --tmpfs DEST, perms (default 0755), size (0: default) */
    BW_OP_MQUEUE,       /* --mqueue DEST */
    BW_OP_DIR,          /* --dir DEST, perms (default 0755) */
    BW_OP_FILE,         /* --file FD DEST, perms (default 0666) */
    BW_OP_BIND_DATA,    /* --bind-data FD DEST, perms (default 0600) */
    BW_OP_RO_BIND_DATA, /* --ro-bind-data FD DEST, perms (default 0600) */
    BW_OP_SYMLINK,      /* --symlink TARGET DEST: src is the link's text */
    BW_OP_CHMOD,        /* --chmod OCTAL PATH: perms, dest */
    BW_OP_OVERLAY,      /* --overlay RWSRC WORKDIR DEST: src, workdir, srcs */
    BW_OP_TMP_OVERLAY,  /* --tmp-overlay DEST: srcs */
    BW_OP_RO_OVERLAY,   /* --ro-overlay DEST: srcs (at least two) */
    BW_OP_SET_HOSTNAME, /* --hostname NAME: dest is the name; bwrap sets it
                           in op order during setup */
};

struct bw_op {
    enum bw_op_kind kind;
    const char *src;     /* bind source, symlink target, overlay RWSRC; else NULL */
    const char *dest;    /* the path in the sandbox (the name for SET_HOSTNAME) */
    const char *workdir; /* BW_OP_OVERLAY only */
    int fd;              /* *_BIND_FD, FILE, *_BIND_DATA; else -1 */
    unsigned perms;      /* TMPFS, DIR, FILE, *_BIND_DATA (bwrap's default when
                            not given), CHMOD; else 0 */
    bool perms_given;    /* --perms preceded the op */
    size_t size;         /* TMPFS: --size in bytes, 0 for the kernel's default */
    const char **srcs;   /* overlay lower layers in argv order: srcs[0] is the
                            bottom layer, srcs[n_srcs - 1] the top */
    size_t n_srcs;
};

enum bw_env_kind {
    BW_ENV_SET,   /* --setenv NAME VALUE */
    BW_ENV_UNSET, /* --unsetenv NAME */
    BW_ENV_CLEAR, /* --clearenv */
};

/* bwrap edits its own environ while parsing; these are the same edits, in
 * order, for the caller to apply to a copy. */
struct bw_env_op {
    enum bw_env_kind kind;
    const char *name;  /* NULL for CLEAR */
    const char *value; /* SET only */
};

/* --cap-add / --cap-drop, in order; cap is 0..BW_CAP_MAX or BW_CAP_ALL. */
#define BW_CAP_ALL (-1)
struct bw_cap_op {
    bool add;
    int cap;
};

/* One --add-seccomp-fd program: raw struct sock_filter array. */
struct bw_seccomp_prog {
    unsigned char *data;
    size_t len; /* bytes, a multiple of 8 */
};

struct bw_warning {
    char *msg;         /* "Only the last --X option will take effect" */
    bool level_prefix; /* --level-prefix was in force when bwrap printed it */
};

/* What the caller does after a successful bw_parse / bw_validate. */
enum bw_action {
    BW_ACTION_RUN,
    BW_ACTION_HELP,        /* --help: usage on stdout, exit 0 */
    BW_ACTION_VERSION,     /* --version: "bubblewrap 0.11.1" on stdout, exit 0 */
    BW_ACTION_USAGE_ERROR, /* no argument, or no command: usage on stderr, exit 1 */
};

struct bw_spec {
    enum bw_action action;

    struct bw_op *ops;
    size_t n_ops;

    /* Namespaces as given; bw_validate resolves unshare_user. */
    bool unshare_user, unshare_user_try, unshare_ipc, unshare_pid, unshare_net;
    bool unshare_uts, unshare_cgroup, unshare_cgroup_try;
    int userns_fd, userns2_fd, pidns_fd; /* -1 when absent */
    bool disable_userns, assert_userns_disabled;

    bool has_uid, has_gid; /* --uid / --gid given; bw_validate fills in the */
    uid_t uid;             /* real ids when not */
    gid_t gid;
    const char *hostname; /* the last --hostname (each is also an op) */
    const char *chdir;

    struct bw_env_op *env;
    size_t n_env;
    const char **lock_files;
    size_t n_lock_files;

    int sync_fd, block_fd, userns_block_fd, info_fd, json_status_fd; /* -1: absent */
    int seccomp_fd;                                                  /* --seccomp */
    struct bw_seccomp_prog *seccomp_progs;                           /* --add-seccomp-fd */
    size_t n_seccomp_progs;

    bool new_session, die_with_parent, as_pid_1, level_prefix;
    const char *argv0; /* --argv0 */
    struct bw_cap_op *caps;
    size_t n_caps;
    const char *exec_label, *file_label; /* only when labels are supported */

    /* COMMAND [ARGS...]: NULL-terminated; the array is owned, the strings
     * are the caller's argv. n_command is 0 when there is none. */
    char **command;
    size_t n_command;

    /* Warnings in the order bwrap prints them; valid even when bw_parse
     * fails, and printed before its error. */
    struct bw_warning *warnings;
    size_t n_warnings;

    /* Owned: the contents of each --args fd, which strings above point into. */
    char **args_data;
    size_t n_args_data;
};

/* Reads everything from fd and closes it, as bwrap does for --args and
 * --add-seccomp-fd. On success returns 0 with *data from malloc (the parser
 * takes it over) and *len; on failure returns -errno. */
typedef int (*bw_read_fd_fn)(void *ctx, int fd, char **data, size_t *len);

struct bw_parse_opts {
    bw_read_fd_fn read_fd; /* NULL: every read fails with EBADF */
    void *read_ctx;
    bool setuid_mode;      /* bwrap's is_privileged: installed setuid */
    bool labels_supported; /* SELinux is enabled; else --exec-label and
                              --file-label fail as they do in bwrap */
};

/* Parses argv[0..argc-1], the arguments after the program name. Strings in
 * spec point into argv, which must outlive spec. Returns 0 (see
 * spec->action) or -1 with bwrap's message in err. Always initialises spec;
 * always call bw_spec_free. */
int bw_parse(int argc, char *const *argv, const struct bw_parse_opts *opts, struct bw_spec *spec,
             struct nf_err *err);

/* The host facts bwrap's main consults right after parsing. */
struct bw_host {
    uid_t real_uid;
    gid_t real_gid;
    bool setuid_mode;   /* as in bw_parse_opts */
    bool userns_try_ok; /* /proc/self/ns/user exists and user namespaces are
                           not disabled (RHEL7 module parameter "N",
                           max_user_namespaces "0\n") */
};

/* bwrap main's checks between parse_args and the clone, in its order:
 * forces unshare_user when bwrap would (not setuid, not root, no --userns;
 * or --unshare-user-try on a host that has user namespaces), fills uid/gid
 * with the real ids when not given, and sets BW_ACTION_USAGE_ERROR when
 * there is no command. Returns 0 or -1 with bwrap's message. */
int bw_validate(struct bw_spec *spec, const struct bw_host *host, struct nf_err *err);

/* The capability mask after applying the --cap-add/--cap-drop list to start
 * (bwrap starts from the caller's effective set as root, from 0 otherwise). */
uint64_t bw_caps_apply(const struct bw_spec *spec, uint64_t start);

/* "cap_sys_admin" (any case), or a number below 64, as libcap's
 * cap_from_name reads it. Returns the number or -1. */
int bw_cap_from_name(const char *name);

void bw_spec_free(struct bw_spec *spec);
