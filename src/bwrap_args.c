/* bubblewrap's command line, read into a struct bw_spec (see bwrap_args.h).
 *
 * Hand-written because no library parses bwrap's argv: getopt cannot express
 * it (options with two and three arguments, --perms and --size that modify
 * the next option, --overlay-src runs, --args files parsed in place, the
 * first non-option ending the options), and a drop-in must reproduce
 * bwrap's order of checks and its messages to the letter. Written from
 * reading bubblewrap 0.11.1's parse_args_recurse and main, not copied.
 *
 * One table maps each option to its argument count, bwrap's "takes N
 * arguments" text and a handler; the loop around it does what bwrap does
 * for every option: refusals that come before the argument count, the
 * count, the handler, then the checks that a pending --perms, --size or
 * --overlay-src was consumed. */
#include "src/bwrap_args.h"

#include <errno.h>
#include <linux/capability.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* bwrap's MAX_TMPFS_BYTES: half the address space, so that the kernel's
 * own size arithmetic cannot overflow. */
#define BW_MAX_TMPFS_BYTES ((size_t)(SIZE_MAX >> 1))

static const char overlay_src_msg[] = "--overlay-src must be followed by another --overlay-src or "
                                      "one of --overlay, --tmp-overlay, or --ro-overlay";

struct parser {
    struct bw_spec *spec;
    const struct bw_parse_opts *opts;
    size_t total;      /* arguments counted against BW_MAX_ARGS */
    bool in_file;      /* parsing an --args file */
    bool have_perms;   /* a --perms waits for its option */
    unsigned perms;    /* its value */
    size_t size;       /* a --size waiting for --tmpfs; 0 when none */
    const char **srcs; /* --overlay-src values waiting for their overlay */
    size_t n_srcs;
    bool stop; /* --help or --version: nothing after it is read */
};

struct opt;
typedef int (*handler_fn)(struct parser *p, const struct opt *o, char *const *args,
                          struct nf_err *err);

enum opt_flag {
    OPT_MODIFIER = 1u << 0,    /* --perms, --size: for the option after it */
    OPT_OVERLAY_SRC = 1u << 1, /* --overlay-src: may precede another one */
    OPT_NO_SETUID = 1u << 2,   /* refused in setuid mode, before the count */
    OPT_NOT_IN_FILE = 1u << 3, /* --args: refused in an --args file, before the count */
    OPT_UNCOUNTED = 1u << 4,   /* bwrap never checks that the argument is there */
};

struct opt {
    const char *name;
    unsigned nargs;
    const char *short_msg; /* bwrap's message when fewer than nargs follow */
    handler_fn handle;
    unsigned flags;
    int arg;      /* handler-specific: an enum bw_op_kind, add/drop, uid/gid */
    size_t field; /* handler-specific: offset of a bool, int or string in bw_spec */
};

/* ---- small helpers ------------------------------------------------------ */

/* Room for one more element in an array grown by doubling; the capacity is
 * implied by n (4, then the next power of two), so bw_spec needs none. */
static int grow(void **v, size_t n, size_t elem, struct nf_err *err)
{
    size_t want;
    void *nv;

    if (n == 0)
        want = 4;
    else if (n >= 4 && (n & (n - 1)) == 0)
        want = n * 2;
    else
        return 0;
    if (want > SIZE_MAX / elem)
        return nf_err_set(err, ENOMEM, "Out of memory");
    nv = realloc(*v, want * elem);
    if (!nv)
        return nf_err_set(err, ENOMEM, "Out of memory");
    *v = nv;
    return 0;
}

#define PUSH(arr, n, item, err)                                                                    \
    (grow((void **)&(arr), (n), sizeof(*(arr)), (err)) < 0 ? -1 : ((arr)[(n)++] = (item), 0))

static int warn_last(struct parser *p, const char *name, struct nf_err *err)
{
    struct bw_warning w = { .level_prefix = p->spec->level_prefix };

    if (asprintf(&w.msg, "Only the last %s option will take effect", name) < 0)
        return nf_err_set(err, ENOMEM, "Out of memory");
    if (PUSH(p->spec->warnings, p->spec->n_warnings, w, err) < 0) {
        free(w.msg);
        return -1;
    }
    return 0;
}

/* bwrap reads fds, uids and gids with strtol into an int, refusing an empty
 * string, trailing text and negative values (leading blanks and a sign are
 * strtol's and pass). Values past INT_MAX are refused here; bwrap truncates
 * them to an int, so "4294967296" would be fd 0. */
static bool parse_nonneg_int(const char *s, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (s[0] == '\0' || *end != '\0' || errno != 0 || v < 0 || v > INT_MAX)
        return false;
    *out = (int)v;
    return true;
}

static int parse_fd(const char *s, int *fd, struct nf_err *err)
{
    if (!parse_nonneg_int(s, fd))
        return nf_err_set(err, 0, "Invalid fd: %s", s);
    return 0;
}

/* --perms and --chmod: strtoul base 8, so blanks, "+" and even "-0" pass,
 * and any other negative number wraps past 07777. */
static bool parse_mode(const char *s, unsigned *mode)
{
    char *end = NULL;
    unsigned long v = strtoul(s, &end, 8);

    if (s[0] == '\0' || end == NULL || *end != '\0' || v > 07777)
        return false;
    *mode = (unsigned)v;
    return true;
}

static int read_fd(struct parser *p, int fd, char **data, size_t *len)
{
    int rc;

    *data = NULL;
    *len = 0;
    if (!p->opts || !p->opts->read_fd)
        return -EBADF;
    rc = p->opts->read_fd(p->opts->read_ctx, fd, data, len);
    if (rc < 0) {
        free(*data);
        *data = NULL;
        return rc;
    }
    if (!*data && *len > 0)
        return -EIO;
    return 0;
}

static int push_op(struct parser *p, struct bw_op op, struct nf_err *err);

/* ---- handlers ------------------------------------------------------------ */

static int h_help(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    (void)args;
    (void)err;
    p->spec->action = (enum bw_action)o->arg;
    p->stop = true;
    return 0;
}

static int h_flag(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    (void)args;
    (void)err;
    *(bool *)((char *)p->spec + o->field) = o->arg != 0;
    return 0;
}

static int h_unshare_all(struct parser *p, const struct opt *o, char *const *args,
                         struct nf_err *err)
{
    struct bw_spec *s = p->spec;

    (void)o;
    (void)args;
    (void)err;
    /* The -try forms of user and cgroup, so that --unshare-all works on
     * kernels without them. */
    s->unshare_user_try = s->unshare_ipc = s->unshare_pid = true;
    s->unshare_uts = s->unshare_cgroup_try = s->unshare_net = true;
    return 0;
}

/* An fd option given at most once that matters: the last one wins, and a
 * repeat warns before the value is read. */
static int h_fd(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    int *slot = (int *)((char *)p->spec + o->field);
    int fd;

    if (*slot != -1 && warn_last(p, o->name, err) < 0)
        return -1;
    if (parse_fd(args[0], &fd, err) < 0)
        return -1;
    *slot = fd;
    return 0;
}

static int h_seccomp(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    if (p->spec->n_seccomp_progs > 0)
        return nf_err_set(err, 0, "--seccomp cannot be combined with --add-seccomp-fd");
    return h_fd(p, o, args, err);
}

/* bwrap reads (and closes) an --add-seccomp-fd while parsing. */
static int h_add_seccomp(struct parser *p, const struct opt *o, char *const *args,
                         struct nf_err *err)
{
    struct bw_seccomp_prog prog;
    char *data;
    int fd, rc;

    (void)o;
    if (p->spec->seccomp_fd != -1)
        return nf_err_set(err, 0, "--add-seccomp-fd cannot be combined with --seccomp");
    if (parse_fd(args[0], &fd, err) < 0)
        return -1;
    rc = read_fd(p, fd, &data, &prog.len);
    prog.data = (unsigned char *)data;
    if (rc < 0)
        return nf_err_set(err, -rc, "Can't read seccomp data: %s", strerror(-rc));
    if (prog.len % 8 != 0) {
        free(prog.data);
        return nf_err_set(err, 0, "Invalid seccomp data, must be multiple of 8");
    }
    if (PUSH(p->spec->seccomp_progs, p->spec->n_seccomp_progs, prog, err) < 0) {
        free(prog.data);
        return -1;
    }
    return 0;
}

/* A string option where the last one wins, with a warning. */
static int h_last_string(struct parser *p, const struct opt *o, char *const *args,
                         struct nf_err *err)
{
    const char **slot = (const char **)((char *)p->spec + o->field);

    if (*slot != NULL && warn_last(p, o->name, err) < 0)
        return -1;
    *slot = args[0];
    return 0;
}

static int h_argv0(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    (void)o;
    if (p->spec->argv0 != NULL)
        return nf_err_set(err, 0, "--argv0 used multiple times");
    p->spec->argv0 = args[0];
    return 0;
}

/* Without SELinux bwrap dies on the first label option, after the argument
 * count and the repeat warning (which therefore never shows). */
static int h_label(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    if (h_last_string(p, o, args, err) < 0)
        return -1;
    if (!p->opts || !p->opts->labels_supported)
        return nf_err_set(err, 0, "labeling not supported on this system");
    return 0;
}

static int h_hostname(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    struct bw_op op = { .kind = BW_OP_SET_HOSTNAME, .dest = args[0], .fd = -1 };

    if (h_last_string(p, o, args, err) < 0)
        return -1;
    return push_op(p, op, err);
}

static int h_id(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    bool is_uid = o->arg == 0;
    bool *has = is_uid ? &p->spec->has_uid : &p->spec->has_gid;
    int v;

    if (*has && warn_last(p, o->name, err) < 0)
        return -1;
    if (!parse_nonneg_int(args[0], &v))
        return nf_err_set(err, 0, "Invalid %s: %s", is_uid ? "uid" : "gid", args[0]);
    if (is_uid)
        p->spec->uid = (uid_t)v;
    else
        p->spec->gid = (gid_t)v;
    *has = true;
    return 0;
}

static int h_lock_file(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    (void)o;
    return PUSH(p->spec->lock_files, p->spec->n_lock_files, args[0], err);
}

/* bwrap calls setenv/unsetenv here, which refuse an empty name and a name
 * holding '='; its message names neither. */
static bool env_name_ok(const char *name)
{
    return name[0] != '\0' && strchr(name, '=') == NULL;
}

static int h_env(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    struct bw_env_op e = { .kind = (enum bw_env_kind)o->arg };

    switch (e.kind) {
    case BW_ENV_SET:
        if (!env_name_ok(args[0]))
            return nf_err_set(err, EINVAL, "setenv failed");
        e.name = args[0];
        e.value = args[1];
        break;
    case BW_ENV_UNSET:
        if (!env_name_ok(args[0]))
            return nf_err_set(err, EINVAL, "unsetenv failed");
        e.name = args[0];
        break;
    case BW_ENV_CLEAR:
        break;
    }
    return PUSH(p->spec->env, p->spec->n_env, e, err);
}

static int h_cap(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    struct bw_cap_op c = { .add = o->arg != 0 };

    if (strcasecmp(args[0], "ALL") == 0)
        c.cap = BW_CAP_ALL;
    else if ((c.cap = bw_cap_from_name(args[0])) < 0)
        return nf_err_set(err, 0, "unknown cap: %s", args[0]);
    return PUSH(p->spec->caps, p->spec->n_caps, c, err);
}

static int h_perms(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    unsigned mode;

    (void)o;
    if (p->have_perms)
        return nf_err_set(err, 0, "--perms given twice for the same action");
    if (!parse_mode(args[0], &mode))
        return nf_err_set(err, 0, "--perms takes an octal argument <= 07777");
    p->have_perms = true;
    p->perms = mode;
    return 0;
}

/* strtoull base 0 (so "0x10" and "010" are sizes too), but the first
 * character must be a digit: no sign, no blank. */
static int h_size(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    const char *s = args[0];
    unsigned long long v;
    char *end = NULL;

    (void)o;
    if (p->size != 0)
        return nf_err_set(err, 0, "--size given twice for the same action");
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || !(s[0] >= '0' && s[0] <= '9') || end == NULL || *end != '\0' || v == 0)
        return nf_err_set(err, 0, "--size takes a non-zero number of bytes");
    if (v > BW_MAX_TMPFS_BYTES)
        return nf_err_set(err, 0, "--size (for tmpfs) is limited to %zu", BW_MAX_TMPFS_BYTES);
    p->size = (size_t)v;
    return 0;
}

/* The mode an op gets without --perms; -1 when --perms does not apply. */
static int default_perms(enum bw_op_kind kind)
{
    switch (kind) {
    case BW_OP_TMPFS:
    case BW_OP_DIR:
        return 0755;
    case BW_OP_FILE:
        return 0666;
    case BW_OP_BIND_DATA:
    case BW_OP_RO_BIND_DATA:
        return 0600; /* what mkstemp gave before --perms existed */
    case BW_OP_BIND:
    case BW_OP_BIND_TRY:
    case BW_OP_DEV_BIND:
    case BW_OP_DEV_BIND_TRY:
    case BW_OP_RO_BIND:
    case BW_OP_RO_BIND_TRY:
    case BW_OP_BIND_FD:
    case BW_OP_RO_BIND_FD:
    case BW_OP_REMOUNT_RO:
    case BW_OP_PROC:
    case BW_OP_DEV:
    case BW_OP_MQUEUE:
    case BW_OP_SYMLINK:
    case BW_OP_CHMOD:
    case BW_OP_OVERLAY:
    case BW_OP_TMP_OVERLAY:
    case BW_OP_RO_OVERLAY:
    case BW_OP_SET_HOSTNAME:
        return -1;
    }
    return -1;
}

/* Appends op, handing it the pending --perms and --size it consumes. */
static int push_op(struct parser *p, struct bw_op op, struct nf_err *err)
{
    int def = default_perms(op.kind);

    if (def >= 0) {
        op.perms_given = p->have_perms;
        op.perms = p->have_perms ? p->perms : (unsigned)def;
        p->have_perms = false;
    }
    if (op.kind == BW_OP_TMPFS) {
        op.size = p->size;
        p->size = 0;
    }
    if (PUSH(p->spec->ops, p->spec->n_ops, op, err) < 0) {
        free(op.srcs);
        return -1;
    }
    return 0;
}

static int h_src_dest(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    struct bw_op op = {
        .kind = (enum bw_op_kind)o->arg, .src = args[0], .dest = args[1], .fd = -1
    };

    return push_op(p, op, err);
}

static int h_fd_dest(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    struct bw_op op = { .kind = (enum bw_op_kind)o->arg, .dest = args[1] };

    if (parse_fd(args[0], &op.fd, err) < 0)
        return -1;
    return push_op(p, op, err);
}

static int h_dest(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    struct bw_op op = { .kind = (enum bw_op_kind)o->arg, .dest = args[0], .fd = -1 };

    return push_op(p, op, err);
}

static int h_chmod(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    struct bw_op op = { .kind = BW_OP_CHMOD, .dest = args[1], .fd = -1 };

    (void)o;
    if (!parse_mode(args[0], &op.perms))
        return nf_err_set(err, 0, "--chmod takes an octal argument <= 07777");
    return push_op(p, op, err);
}

static int h_overlay_src(struct parser *p, const struct opt *o, char *const *args,
                         struct nf_err *err)
{
    (void)o;
    /* bwrap does not count this option's argument: a trailing
     * --overlay-src ends the arguments and fails as an unfollowed one. */
    return PUSH(p->srcs, p->n_srcs, args[0], err);
}

/* The pending --overlay-src values move into the overlay op. They are
 * kept as they come rather than found again by position in argv, as bwrap
 * does: that lookup reads before the start of an --args file when the run
 * of sources begins outside it. */
static int h_overlay(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    struct bw_op op = { .kind = (enum bw_op_kind)o->arg, .fd = -1 };
    size_t need = op.kind == BW_OP_RO_OVERLAY ? 2 : 1;

    if (p->n_srcs < need)
        return nf_err_set(err, 0, "%s requires at least %s --overlay-src", o->name,
                          need == 2 ? "two" : "one");
    if (op.kind == BW_OP_OVERLAY) {
        op.src = args[0];
        op.workdir = args[1];
        op.dest = args[2];
    } else {
        op.dest = args[0];
    }
    op.srcs = p->srcs;
    op.n_srcs = p->n_srcs;
    p->srcs = NULL;
    p->n_srcs = 0;
    return push_op(p, op, err);
}

static int parse_list(struct parser *p, char *const *argv, size_t argc, size_t *end,
                      struct nf_err *err);

/* Splits NUL-separated data into arguments: "a\0b" and "a\0b\0" are both
 * two, "\0" is one empty argument. Each counts against BW_MAX_ARGS before
 * any is parsed. */
static int split_args(struct parser *p, char *data, size_t len, char ***out, size_t *n,
                      struct nf_err *err)
{
    char *end = data + len, *q = NULL;
    size_t count = 0, i = 0;
    char **v;

    for (char *s = data; s < end; s = q ? q + 1 : end) {
        count++;
        if (++p->total > BW_MAX_ARGS)
            return nf_err_set(err, 0, "Exceeded maximum number of arguments %u", BW_MAX_ARGS);
        q = memchr(s, '\0', (size_t)(end - s));
    }
    v = calloc(count + 1, sizeof(*v));
    if (!v)
        return nf_err_set(err, ENOMEM, "Out of memory");
    for (char *s = data; s < end; s = q ? q + 1 : end) {
        v[i++] = s;
        q = memchr(s, '\0', (size_t)(end - s));
    }
    *out = v;
    *n = count;
    return 0;
}

/* --args FD: the fd's arguments are parsed where the option stands. A
 * command word or "--" in the file ends the file's options, and whatever
 * follows it in the file is ignored, as in bwrap. */
static int h_args(struct parser *p, const struct opt *o, char *const *args, struct nf_err *err)
{
    char *data = NULL, *nd, **v = NULL;
    size_t len = 0, n = 0, used = 0;
    int fd, rc;

    (void)o;
    if (parse_fd(args[0], &fd, err) < 0)
        return -1;
    rc = read_fd(p, fd, &data, &len);
    if (rc < 0)
        return nf_err_set(err, -rc, "Can't read --args data: %s", strerror(-rc));
    nd = realloc(data, len + 1);
    if (!nd) {
        free(data);
        return nf_err_set(err, ENOMEM, "Out of memory");
    }
    nd[len] = '\0';
    if (PUSH(p->spec->args_data, p->spec->n_args_data, nd, err) < 0) {
        free(nd);
        return -1;
    }
    if (split_args(p, nd, len, &v, &n, err) < 0)
        return -1;
    p->in_file = true;
    rc = parse_list(p, v, n, &used, err);
    p->in_file = false;
    free(v);
    return rc;
}

/* ---- the table ----------------------------------------------------------- */

#define F(m)      offsetof(struct bw_spec, m)
#define TAKES1(n) n " takes an argument"
#define TAKES2(n) n " takes two arguments"

/* In bwrap's order. */
static const struct opt options[] = {
    { "--help", 0, NULL, h_help, 0, BW_ACTION_HELP, 0 },
    { "--version", 0, NULL, h_help, 0, BW_ACTION_VERSION, 0 },
    { "--args", 1, TAKES1("--args"), h_args, OPT_NOT_IN_FILE, 0, 0 },
    { "--argv0", 1, "--argv0 takes one argument", h_argv0, 0, 0, 0 },
    { "--level-prefix", 0, NULL, h_flag, 0, 1, F(level_prefix) },
    { "--unshare-all", 0, NULL, h_unshare_all, 0, 0, 0 },
    { "--unshare-user", 0, NULL, h_flag, 0, 1, F(unshare_user) },
    { "--unshare-user-try", 0, NULL, h_flag, 0, 1, F(unshare_user_try) },
    { "--unshare-ipc", 0, NULL, h_flag, 0, 1, F(unshare_ipc) },
    { "--unshare-pid", 0, NULL, h_flag, 0, 1, F(unshare_pid) },
    { "--unshare-net", 0, NULL, h_flag, 0, 1, F(unshare_net) },
    { "--unshare-uts", 0, NULL, h_flag, 0, 1, F(unshare_uts) },
    { "--unshare-cgroup", 0, NULL, h_flag, 0, 1, F(unshare_cgroup) },
    { "--unshare-cgroup-try", 0, NULL, h_flag, 0, 1, F(unshare_cgroup_try) },
    { "--share-net", 0, NULL, h_flag, 0, 0, F(unshare_net) },
    { "--chdir", 1, "--chdir takes one argument", h_last_string, 0, 0, F(chdir) },
    { "--disable-userns", 0, NULL, h_flag, 0, 1, F(disable_userns) },
    { "--assert-userns-disabled", 0, NULL, h_flag, 0, 1, F(assert_userns_disabled) },
    { "--remount-ro", 1, "--remount-ro takes one argument", h_dest, 0, BW_OP_REMOUNT_RO, 0 },
    { "--bind", 2, TAKES2("--bind"), h_src_dest, 0, BW_OP_BIND, 0 },
    { "--bind-try", 2, TAKES2("--bind-try"), h_src_dest, 0, BW_OP_BIND_TRY, 0 },
    { "--ro-bind", 2, TAKES2("--ro-bind"), h_src_dest, 0, BW_OP_RO_BIND, 0 },
    { "--ro-bind-try", 2, TAKES2("--ro-bind-try"), h_src_dest, 0, BW_OP_RO_BIND_TRY, 0 },
    { "--dev-bind", 2, TAKES2("--dev-bind"), h_src_dest, 0, BW_OP_DEV_BIND, 0 },
    { "--dev-bind-try", 2, TAKES2("--dev-bind-try"), h_src_dest, 0, BW_OP_DEV_BIND_TRY, 0 },
    { "--bind-fd", 2, TAKES2("--bind-fd"), h_fd_dest, 0, BW_OP_BIND_FD, 0 },
    /* bwrap names --bind-fd here too. */
    { "--ro-bind-fd", 2, TAKES2("--bind-fd"), h_fd_dest, 0, BW_OP_RO_BIND_FD, 0 },
    { "--overlay-src", 1, NULL, h_overlay_src, OPT_OVERLAY_SRC | OPT_NO_SETUID | OPT_UNCOUNTED, 0,
      0 },
    { "--overlay", 3, "--overlay takes three arguments", h_overlay, OPT_NO_SETUID, BW_OP_OVERLAY,
      0 },
    { "--tmp-overlay", 1, TAKES1("--tmp-overlay"), h_overlay, OPT_NO_SETUID, BW_OP_TMP_OVERLAY, 0 },
    { "--ro-overlay", 1, TAKES1("--ro-overlay"), h_overlay, OPT_NO_SETUID, BW_OP_RO_OVERLAY, 0 },
    { "--proc", 1, TAKES1("--proc"), h_dest, 0, BW_OP_PROC, 0 },
    { "--exec-label", 1, TAKES1("--exec-label"), h_label, 0, 0, F(exec_label) },
    { "--file-label", 1, TAKES1("--file-label"), h_label, 0, 0, F(file_label) },
    { "--dev", 1, TAKES1("--dev"), h_dest, 0, BW_OP_DEV, 0 },
    { "--tmpfs", 1, TAKES1("--tmpfs"), h_dest, 0, BW_OP_TMPFS, 0 },
    { "--mqueue", 1, TAKES1("--mqueue"), h_dest, 0, BW_OP_MQUEUE, 0 },
    { "--dir", 1, TAKES1("--dir"), h_dest, 0, BW_OP_DIR, 0 },
    { "--file", 2, TAKES2("--file"), h_fd_dest, 0, BW_OP_FILE, 0 },
    { "--bind-data", 2, TAKES2("--bind-data"), h_fd_dest, 0, BW_OP_BIND_DATA, 0 },
    { "--ro-bind-data", 2, TAKES2("--ro-bind-data"), h_fd_dest, 0, BW_OP_RO_BIND_DATA, 0 },
    { "--symlink", 2, TAKES2("--symlink"), h_src_dest, 0, BW_OP_SYMLINK, 0 },
    { "--lock-file", 1, TAKES1("--lock-file"), h_lock_file, 0, 0, 0 },
    { "--sync-fd", 1, TAKES1("--sync-fd"), h_fd, 0, 0, F(sync_fd) },
    { "--block-fd", 1, TAKES1("--block-fd"), h_fd, 0, 0, F(block_fd) },
    { "--userns-block-fd", 1, TAKES1("--userns-block-fd"), h_fd, 0, 0, F(userns_block_fd) },
    { "--info-fd", 1, TAKES1("--info-fd"), h_fd, 0, 0, F(info_fd) },
    { "--json-status-fd", 1, TAKES1("--json-status-fd"), h_fd, 0, 0, F(json_status_fd) },
    { "--seccomp", 1, TAKES1("--seccomp"), h_seccomp, 0, 0, F(seccomp_fd) },
    { "--add-seccomp-fd", 1, TAKES1("--add-seccomp-fd"), h_add_seccomp, 0, 0, 0 },
    { "--userns", 1, TAKES1("--userns"), h_fd, 0, 0, F(userns_fd) },
    { "--userns2", 1, TAKES1("--userns2"), h_fd, 0, 0, F(userns2_fd) },
    { "--pidns", 1, TAKES1("--pidns"), h_fd, 0, 0, F(pidns_fd) },
    { "--clearenv", 0, NULL, h_env, 0, BW_ENV_CLEAR, 0 },
    { "--setenv", 2, TAKES2("--setenv"), h_env, 0, BW_ENV_SET, 0 },
    { "--unsetenv", 1, TAKES1("--unsetenv"), h_env, 0, BW_ENV_UNSET, 0 },
    { "--uid", 1, TAKES1("--uid"), h_id, 0, 0, 0 },
    { "--gid", 1, TAKES1("--gid"), h_id, 0, 1, 0 },
    { "--hostname", 1, TAKES1("--hostname"), h_hostname, 0, 0, F(hostname) },
    { "--new-session", 0, NULL, h_flag, 0, 1, F(new_session) },
    { "--die-with-parent", 0, NULL, h_flag, 0, 1, F(die_with_parent) },
    { "--as-pid-1", 0, NULL, h_flag, 0, 1, F(as_pid_1) },
    { "--cap-add", 1, TAKES1("--cap-add"), h_cap, 0, 1, 0 },
    { "--cap-drop", 1, TAKES1("--cap-drop"), h_cap, 0, 0, 0 },
    { "--perms", 1, TAKES1("--perms"), h_perms, OPT_MODIFIER, 0, 0 },
    { "--size", 1, TAKES1("--size"), h_size, OPT_MODIFIER | OPT_NO_SETUID, 0, 0 },
    { "--chmod", 2, TAKES2("--chmod"), h_chmod, 0, 0, 0 },
};

static const struct opt *opt_find(const char *arg)
{
    for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
        if (strcmp(options[i].name, arg) == 0)
            return &options[i];
    return NULL;
}

/* ---- the loop ------------------------------------------------------------ */

static int run_opt(struct parser *p, const struct opt *o, char *const *args, size_t avail,
                   struct nf_err *err)
{
    if ((o->flags & OPT_NO_SETUID) && p->opts && p->opts->setuid_mode)
        return nf_err_set(err, 0, "The %s option is not permitted in setuid mode", o->name);
    if ((o->flags & OPT_NOT_IN_FILE) && p->in_file)
        return nf_err_set(err, 0, "%s not supported in arguments file", o->name);
    if (avail < o->nargs && (o->flags & OPT_UNCOUNTED)) {
        /* bwrap steps past the end of the arguments: the run of sources is
         * left unfollowed, and the next check refuses it. The NULL never
         * reaches an op, since nothing can follow. */
        return PUSH(p->srcs, p->n_srcs, NULL, err);
    }
    if (avail < o->nargs)
        return nf_err_set(err, 0, "%s", o->short_msg);
    return o->handle(p, o, args, err);
}

/* After each option but the modifiers, nothing may still wait for one. */
static int check_pending(const struct parser *p, const struct opt *o, struct nf_err *err)
{
    if (!(o->flags & OPT_MODIFIER) && p->have_perms)
        return nf_err_set(err, 0, "--perms must be followed by an option that creates a file");
    if (!(o->flags & OPT_MODIFIER) && p->size != 0)
        return nf_err_set(err, 0, "--size must be followed by --tmpfs");
    if (!(o->flags & OPT_OVERLAY_SRC) && p->n_srcs > 0)
        return nf_err_set(err, 0, "%s", overlay_src_msg);
    return 0;
}

/* Options until the end, "--" or the first word not starting with '-';
 * *end is the index of the first command word. The checks after an option
 * are skipped for the word that ends the options, so "--perms 0700 CMD"
 * passes, as in bwrap. */
static int parse_list(struct parser *p, char *const *argv, size_t argc, size_t *end,
                      struct nf_err *err)
{
    size_t i = 0;

    if (p->total > BW_MAX_ARGS)
        return nf_err_set(err, 0, "Exceeded maximum number of arguments %u", BW_MAX_ARGS);
    while (i < argc) {
        const char *arg = argv[i];
        const struct opt *o;

        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        o = opt_find(arg);
        if (!o) {
            if (arg[0] == '-')
                return nf_err_set(err, 0, "Unknown option %s", arg);
            break;
        }
        if (run_opt(p, o, argv + i + 1, argc - i - 1, err) < 0)
            return -1;
        if (p->stop)
            return 0;
        i += 1 + o->nargs;
        if (check_pending(p, o, err) < 0)
            return -1;
    }
    *end = i < argc ? i : argc;
    return 0;
}

static void spec_init(struct bw_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->action = BW_ACTION_RUN;
    s->userns_fd = s->userns2_fd = s->pidns_fd = -1;
    s->sync_fd = s->block_fd = s->userns_block_fd = s->info_fd = -1;
    s->json_status_fd = s->seccomp_fd = -1;
}

static int set_command(struct bw_spec *s, char *const *argv, size_t n, struct nf_err *err)
{
    s->command = calloc(n + 1, sizeof(*s->command));
    if (!s->command)
        return nf_err_set(err, ENOMEM, "Out of memory");
    for (size_t i = 0; i < n; i++)
        s->command[i] = argv[i];
    s->n_command = n;
    return 0;
}

int bw_parse(int argc, char *const *argv, const struct bw_parse_opts *opts, struct bw_spec *spec,
             struct nf_err *err)
{
    struct parser p = { .spec = spec, .opts = opts };
    size_t end = 0;
    int rc;

    spec_init(spec);
    if (argc <= 0) {
        spec->action = BW_ACTION_USAGE_ERROR;
        return 0;
    }
    p.total = (size_t)argc;
    rc = parse_list(&p, argv, (size_t)argc, &end, err);
    if (rc == 0 && !p.stop && p.n_srcs > 0)
        rc = nf_err_set(err, 0, "%s", overlay_src_msg);
    free(p.srcs);
    if (rc < 0 || p.stop)
        return rc;
    return set_command(spec, argv + end, (size_t)argc - end, err);
}

/* ---- after parsing ------------------------------------------------------- */

/* main's checks that read only the options and who runs bwrap. */
static int check_userns_options(const struct bw_spec *s, const struct bw_host *h,
                                struct nf_err *err)
{
    if (s->userns_block_fd != -1 && !s->unshare_user)
        return nf_err_set(err, 0, "--userns-block-fd requires --unshare-user");
    if (s->userns_block_fd != -1 && s->info_fd == -1)
        return nf_err_set(err, 0, "--userns-block-fd requires --info-fd");
    if (s->userns_fd != -1 && s->unshare_user)
        return nf_err_set(err, 0, "--userns not compatible --unshare-user");
    if (s->userns_fd != -1 && s->unshare_user_try)
        return nf_err_set(err, 0, "--userns not compatible --unshare-user-try");
    if (s->disable_userns && !s->unshare_user)
        return nf_err_set(err, 0, "--disable-userns requires --unshare-user");
    /* Two spaces, as bwrap has it. */
    if (s->disable_userns && s->userns_block_fd != -1)
        return nf_err_set(err, 0, "--disable-userns is not compatible with  --userns-block-fd");
    if (s->userns_fd != -1 && h->setuid_mode)
        return nf_err_set(err, 0, "--userns doesn't work in setuid mode");
    if (s->userns2_fd != -1 && h->setuid_mode)
        return nf_err_set(err, 0, "--userns2 doesn't work in setuid mode");
    return 0;
}

static int check_sandbox_options(const struct bw_spec *s, const struct bw_host *h,
                                 struct nf_err *err)
{
    bool own_userns = s->unshare_user || s->userns_fd != -1;

    if (!own_userns && s->uid != h->real_uid)
        return nf_err_set(err, 0, "Specifying --uid requires --unshare-user or --userns");
    if (!own_userns && s->gid != h->real_gid)
        return nf_err_set(err, 0, "Specifying --gid requires --unshare-user or --userns");
    if (!s->unshare_uts && s->hostname != NULL)
        return nf_err_set(err, 0, "Specifying --hostname requires --unshare-uts");
    if (s->as_pid_1 && !s->unshare_pid)
        return nf_err_set(err, 0, "Specifying --as-pid-1 requires --unshare-pid");
    if (s->as_pid_1 && s->n_lock_files > 0)
        return nf_err_set(err, 0, "Specifying --as-pid-1 and --lock-file is not permitted");
    return 0;
}

int bw_validate(struct bw_spec *s, const struct bw_host *h, struct nf_err *err)
{
    if (s->action != BW_ACTION_RUN)
        return 0;
    if (h->setuid_mode && bw_caps_apply(s, 0) != 0)
        return nf_err_set(err, 0, "--cap-add in setuid mode can be used only by root");
    if (check_userns_options(s, h, err) < 0)
        return -1;
    /* Without setuid, a user other than root gets nowhere without a user
     * namespace, so bwrap makes one unasked. */
    if (!h->setuid_mode && h->real_uid != 0 && s->userns_fd == -1)
        s->unshare_user = true;
    if (s->unshare_user_try && h->userns_try_ok)
        s->unshare_user = true;
    if (s->n_command == 0) {
        s->action = BW_ACTION_USAGE_ERROR;
        return 0;
    }
    if (!s->has_uid)
        s->uid = h->real_uid;
    if (!s->has_gid)
        s->gid = h->real_gid;
    return check_sandbox_options(s, h, err);
}

uint64_t bw_caps_apply(const struct bw_spec *spec, uint64_t start)
{
    uint64_t caps = start;

    for (size_t i = 0; i < spec->n_caps; i++) {
        const struct bw_cap_op *c = &spec->caps[i];
        uint64_t bit = c->cap == BW_CAP_ALL ? ~(uint64_t)0 : (uint64_t)1 << c->cap;

        if (c->cap == BW_CAP_ALL)
            caps = c->add ? bit : 0;
        else if (c->add)
            caps |= bit;
        else
            caps &= ~bit;
    }
    return caps;
}

/* libcap's names, without the "cap_" every one of them starts with; the
 * kernel's numbers, which libcap also knows up to CAP_LAST_CAP. */
static const char *const cap_names[] = {
    [CAP_CHOWN] = "chown",
    [CAP_DAC_OVERRIDE] = "dac_override",
    [CAP_DAC_READ_SEARCH] = "dac_read_search",
    [CAP_FOWNER] = "fowner",
    [CAP_FSETID] = "fsetid",
    [CAP_KILL] = "kill",
    [CAP_SETGID] = "setgid",
    [CAP_SETUID] = "setuid",
    [CAP_SETPCAP] = "setpcap",
    [CAP_LINUX_IMMUTABLE] = "linux_immutable",
    [CAP_NET_BIND_SERVICE] = "net_bind_service",
    [CAP_NET_BROADCAST] = "net_broadcast",
    [CAP_NET_ADMIN] = "net_admin",
    [CAP_NET_RAW] = "net_raw",
    [CAP_IPC_LOCK] = "ipc_lock",
    [CAP_IPC_OWNER] = "ipc_owner",
    [CAP_SYS_MODULE] = "sys_module",
    [CAP_SYS_RAWIO] = "sys_rawio",
    [CAP_SYS_CHROOT] = "sys_chroot",
    [CAP_SYS_PTRACE] = "sys_ptrace",
    [CAP_SYS_PACCT] = "sys_pacct",
    [CAP_SYS_ADMIN] = "sys_admin",
    [CAP_SYS_BOOT] = "sys_boot",
    [CAP_SYS_NICE] = "sys_nice",
    [CAP_SYS_RESOURCE] = "sys_resource",
    [CAP_SYS_TIME] = "sys_time",
    [CAP_SYS_TTY_CONFIG] = "sys_tty_config",
    [CAP_MKNOD] = "mknod",
    [CAP_LEASE] = "lease",
    [CAP_AUDIT_WRITE] = "audit_write",
    [CAP_AUDIT_CONTROL] = "audit_control",
    [CAP_SETFCAP] = "setfcap",
    [CAP_MAC_OVERRIDE] = "mac_override",
    [CAP_MAC_ADMIN] = "mac_admin",
    [CAP_SYSLOG] = "syslog",
    [CAP_WAKE_ALARM] = "wake_alarm",
    [CAP_BLOCK_SUSPEND] = "block_suspend",
    [CAP_AUDIT_READ] = "audit_read",
    [CAP_PERFMON] = "perfmon",
    [CAP_BPF] = "bpf",
    [CAP_CHECKPOINT_RESTORE] = "checkpoint_restore",
};

/* As Debian's libcap (its gperf lookup) reads a name: a leading digit
 * means a number in C syntax; otherwise the leading run of letters and '_'
 * is the name and anything after it is ignored ("cap_chown2" is chown).
 * The "cap_" prefix is required: bwrap refuses "--cap-add chown". */
int bw_cap_from_name(const char *name)
{
    size_t len = 0;

    if (name[0] >= '0' && name[0] <= '9') {
        unsigned long v = strtoul(name, NULL, 0);

        return v <= BW_CAP_MAX ? (int)v : -1;
    }
    while ((name[len] >= 'a' && name[len] <= 'z') || (name[len] >= 'A' && name[len] <= 'Z') ||
           name[len] == '_')
        len++;
    if (len <= 4 || strncasecmp(name, "cap_", 4) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
        if (cap_names[i] && strlen(cap_names[i]) == len - 4 &&
            strncasecmp(name + 4, cap_names[i], len - 4) == 0)
            return (int)i;
    return -1;
}

void bw_spec_free(struct bw_spec *s)
{
    for (size_t i = 0; i < s->n_ops; i++)
        free(s->ops[i].srcs);
    free(s->ops);
    free(s->env);
    free(s->lock_files);
    for (size_t i = 0; i < s->n_seccomp_progs; i++)
        free(s->seccomp_progs[i].data);
    free(s->seccomp_progs);
    free(s->caps);
    free(s->command);
    for (size_t i = 0; i < s->n_warnings; i++)
        free(s->warnings[i].msg);
    free(s->warnings);
    for (size_t i = 0; i < s->n_args_data; i++)
        free(s->args_data[i]);
    free(s->args_data);
    memset(s, 0, sizeof(*s));
}
