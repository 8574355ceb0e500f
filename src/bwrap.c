/* The bubblewrap front end: `bwrap ARGS` (nsfence invoked under that name)
 * or `nsfence bwrap ARGS`. bw_parse reads bubblewrap 0.11.1's command line;
 * this compiles it into the engine's run plan with bubblewrap's semantics
 * (nothing the argv did not ask for: no proxy, no filter, no mandatory
 * deny, no observer) and serves the host side bubblewrap's monitor serves:
 * --info-fd, --json-status-fd, --userns-block-fd, the exit status. Errors
 * are one line, "bwrap: ...", and exit status 1. */
#include "src/bwrap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/bwrap_args.h"
#include "src/env.h"
#include "src/explain.h"
#include "src/loop.h"
#include "src/runplan.h"
#include "src/spawn.h"
#include "src/util.h"

extern char **environ;

#define BWRAP_VERSION "0.11.1"

static bool level_prefix;

static void say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(int level, const char *fmt, ...)
{
    va_list ap;

    if (level_prefix)
        fprintf(stderr, "<%d>", level);
    fputs("bwrap: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static const char usage_text[] =
    "    --help                       Print this help and exit\n"
    "    --version                    Print the version and exit\n"
    "    --args FD                    Read more arguments, NUL-separated, from FD\n"
    "    --argv0 VALUE                Run COMMAND with VALUE as its argv[0]\n"
    "    --level-prefix               Start each message with its syslog level, e.g. <3>\n"
    "    --unshare-all                Every namespace below (user and cgroup where possible)\n"
    "    --share-net                  Keep the network namespace (after --unshare-all)\n"
    "    --unshare-user               A new user namespace (implied when not run as root)\n"
    "    --unshare-user-try           A new user namespace where the host allows one\n"
    "    --unshare-ipc                A new IPC namespace\n"
    "    --unshare-pid                A new PID namespace\n"
    "    --unshare-net                A new network namespace, with lo up\n"
    "    --unshare-uts                A new UTS namespace\n"
    "    --unshare-cgroup             A new cgroup namespace\n"
    "    --unshare-cgroup-try         A new cgroup namespace where the kernel has them\n"
    "    --userns FD                  Join the user namespace FD (not with --unshare-user)\n"
    "    --userns2 FD                 Switch to the user namespace FD once set up\n"
    "    --disable-userns             The sandbox cannot make user namespaces\n"
    "    --assert-userns-disabled     Fail unless the sandbox cannot make user namespaces\n"
    "    --pidns FD                   Join the PID namespace FD (the parent of --unshare-pid's)\n"
    "    --uid UID                    The uid inside (with --unshare-user or --userns)\n"
    "    --gid GID                    The gid inside (with --unshare-user or --userns)\n"
    "    --hostname NAME              The hostname inside (with --unshare-uts)\n"
    "    --chdir DIR                  The working directory inside\n"
    "    --clearenv                   Start from an empty environment\n"
    "    --setenv VAR VALUE           Set VAR to VALUE\n"
    "    --unsetenv VAR               Remove VAR\n"
    "    --lock-file DEST             Hold a lock on DEST while the sandbox runs\n"
    "    --sync-fd FD                 Hold FD open while the sandbox runs\n"
    "    --bind SRC DEST              Host path SRC on DEST, writable\n"
    "    --bind-try SRC DEST          --bind, skipped when SRC does not exist\n"
    "    --dev-bind SRC DEST          --bind, device nodes usable\n"
    "    --dev-bind-try SRC DEST      --dev-bind, skipped when SRC does not exist\n"
    "    --ro-bind SRC DEST           Host path SRC on DEST, read-only\n"
    "    --ro-bind-try SRC DEST       --ro-bind, skipped when SRC does not exist\n"
    "    --bind-fd FD DEST            The directory or path open as FD on DEST\n"
    "    --ro-bind-fd FD DEST         --bind-fd, read-only\n"
    "    --remount-ro DEST            Make DEST read-only (not what is mounted below it)\n"
    "    --overlay-src SRC            A lower layer for the next overlay\n"
    "    --overlay RWSRC WORKDIR DEST An overlay on DEST writing to RWSRC (WORKDIR: its work\n"
    "                                 directory, on the same file system)\n"
    "    --tmp-overlay DEST           An overlay on DEST writing to a hidden tmpfs\n"
    "    --ro-overlay DEST            A read-only overlay on DEST\n"
    "    --exec-label LABEL           SELinux label of the command\n"
    "    --file-label LABEL           SELinux label of the files the sandbox makes\n"
    "    --proc DEST                  A new procfs on DEST\n"
    "    --dev DEST                   A new minimal /dev on DEST\n"
    "    --tmpfs DEST                 A new tmpfs on DEST\n"
    "    --mqueue DEST                A new mqueue file system on DEST\n"
    "    --dir DEST                   A directory at DEST\n"
    "    --file FD DEST               A file at DEST holding what FD reads\n"
    "    --bind-data FD DEST          What FD reads, in a file bound onto DEST\n"
    "    --ro-bind-data FD DEST       --bind-data, read-only\n"
    "    --symlink SRC DEST           A symlink at DEST pointing to SRC\n"
    "    --seccomp FD                 Load the seccomp program FD reads (once)\n"
    "    --add-seccomp-fd FD          Load the seccomp program FD reads (repeatable)\n"
    "    --block-fd FD                Wait for data on FD before running COMMAND\n"
    "    --userns-block-fd FD         Wait for data on FD once the user namespace exists\n"
    "    --info-fd FD                 Write the sandbox's pid and namespaces to FD\n"
    "    --json-status-fd FD          Write the sandbox's status to FD as JSON documents\n"
    "    --new-session                Run COMMAND in a new session (setsid)\n"
    "    --die-with-parent            Kill the sandbox when the caller dies\n"
    "    --as-pid-1                   No reaper: COMMAND is PID 1\n"
    "    --cap-add CAP                Keep capability CAP (ALL: every one)\n"
    "    --cap-drop CAP               Drop capability CAP (ALL: every one)\n"
    "    --perms OCTAL                Mode of the next --dir, --file, --bind-data, --tmpfs, ...\n"
    "    --size BYTES                 Size of the next --tmpfs\n"
    "    --chmod OCTAL PATH           Change the mode of an existing PATH\n";

static void usage(FILE *out, const char *argv0)
{
    fprintf(out, "usage: %s [OPTIONS...] [--] COMMAND [ARGS...]\n\n%s", argv0, usage_text);
}

/* --args and --add-seccomp-fd: all of fd, then close it, as bubblewrap does. */
static int read_fd(void *ctx, int fd, char **data, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);

    (void)ctx;
    if (!buf)
        return -ENOMEM;
    for (;;) {
        ssize_t r;

        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);

            if (!nb) {
                free(buf);
                return -ENOMEM;
            }
            buf = nb;
            cap *= 2;
        }
        r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;

            free(buf);
            return -e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

static bool userns_available(void)
{
    char buf[16] = { 0 };
    int fd;

    if (access("/proc/self/ns/user", F_OK) < 0)
        return false;
    fd = open("/proc/sys/user/max_user_namespaces", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof(buf) - 1);

        close(fd);
        if (n > 0 && strcmp(buf, "0\n") == 0)
            return false;
    }
    return true;
}

static uint64_t effective_caps(void)
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct data[2] = { { 0 } };

    if (syscall(SYS_capget, &hdr, data) < 0)
        return 0;
    return (uint64_t)data[1].effective << 32 | data[0].effective;
}

/* What the host side needs beside the plan. */
struct bwrap_run {
    struct bw_spec spec;
    struct run_plan plan;
    char **argv; /* the command's argv, argv[0] replaced by --argv0 */
};

static int env_apply(const struct bw_spec *s, char ***out, struct nf_err *err)
{
    size_t n = 0;
    char **v;

    for (char **e = environ; *e; e++)
        n++;
    v = calloc(n + s->n_env + 2, sizeof(*v));
    if (!v)
        return nf_err_sys(err, "out of memory");
    n = 0;
    for (char **e = environ; *e; e++)
        if (!(v[n++] = strdup(*e)))
            goto oom;
    for (size_t i = 0; i < s->n_env; i++) {
        const struct bw_env_op *op = &s->env[i];
        size_t len = op->name ? strlen(op->name) : 0;
        size_t k = 0;

        /* Drop what the op replaces or removes (CLEAR: everything). */
        for (size_t j = 0; j < n; j++) {
            if (op->kind != BW_ENV_CLEAR &&
                (strncmp(v[j], op->name, len) != 0 || v[j][len] != '=')) {
                v[k++] = v[j];
                continue;
            }
            free(v[j]);
        }
        n = k;
        v[n] = NULL;
        if (op->kind == BW_ENV_SET) {
            if (asprintf(&v[n], "%s=%s", op->name, op->value) < 0) {
                v[n] = NULL;
                goto oom;
            }
            v[++n] = NULL;
        }
    }
    *out = v;
    return 0;
oom:
    env_free(v);
    return nf_err_sys(err, "out of memory");
}

/* The personality a nested `bwrap` keeps when the command re-executes this
 * very binary as /proc/self/exe (bubblewrap's suite does): told through
 * the environment of that command alone, and removed by it at once. */
static int mark_nested(const struct bw_spec *s, char ***envp, struct nf_err *err)
{
    size_t n = 0;
    char **v;

    if (strcmp(s->command[0], "/proc/self/exe") != 0)
        return 0;
    while ((*envp)[n])
        n++;
    v = realloc(*envp, (n + 2) * sizeof(*v));
    if (!v)
        return nf_err_sys(err, "out of memory");
    *envp = v;
    if (!(v[n] = strdup(BWRAP_PERSONALITY_ENV "=bwrap")))
        return nf_err_sys(err, "out of memory");
    v[n + 1] = NULL;
    return 0;
}

static int add_op(struct run_plan *p, const struct bw_op *o, struct nf_err *err)
{
    static const struct {
        enum fs_op_kind kind;
        unsigned flags;
    } map[] = {
        [BW_OP_BIND] = { FS_OP_BIND, 0 },
        [BW_OP_BIND_TRY] = { FS_OP_BIND, FS_F_TRY },
        [BW_OP_DEV_BIND] = { FS_OP_BIND, FS_F_DEV },
        [BW_OP_DEV_BIND_TRY] = { FS_OP_BIND, FS_F_DEV | FS_F_TRY },
        [BW_OP_RO_BIND] = { FS_OP_BIND, FS_F_RO },
        [BW_OP_RO_BIND_TRY] = { FS_OP_BIND, FS_F_RO | FS_F_TRY },
        [BW_OP_BIND_FD] = { FS_OP_BIND_FD, 0 },
        [BW_OP_RO_BIND_FD] = { FS_OP_BIND_FD, FS_F_RO },
        [BW_OP_REMOUNT_RO] = { FS_OP_REMOUNT_RO, 0 },
        [BW_OP_PROC] = { FS_OP_PROC, 0 },
        [BW_OP_DEV] = { FS_OP_DEV, 0 },
        [BW_OP_TMPFS] = { FS_OP_MKTMPFS, 0 },
        [BW_OP_MQUEUE] = { FS_OP_MQUEUE, 0 },
        [BW_OP_DIR] = { FS_OP_MKDIR, 0 },
        [BW_OP_FILE] = { FS_OP_MKFILE, 0 },
        [BW_OP_BIND_DATA] = { FS_OP_BIND_DATA, 0 },
        [BW_OP_RO_BIND_DATA] = { FS_OP_BIND_DATA, FS_F_RO },
        [BW_OP_SYMLINK] = { FS_OP_SYMLINK, 0 },
        [BW_OP_CHMOD] = { FS_OP_CHMOD, 0 },
        [BW_OP_OVERLAY] = { FS_OP_OVERLAY, 0 },
        [BW_OP_TMP_OVERLAY] = { FS_OP_OVERLAY, FS_F_TMP },
        [BW_OP_RO_OVERLAY] = { FS_OP_OVERLAY, FS_F_RO },
    };
    struct fs_op *op;

    if (o->kind == BW_OP_SET_HOSTNAME)
        return 0; /* the plan's hostname: the last one given */
    op = fs_plan_push(&p->fs, map[o->kind].kind, o->src, o->dest, "bwrap", err);
    if (!op)
        return -1;
    op->flags = map[o->kind].flags;
    op->perms = o->perms;
    op->has_perms = o->perms_given || o->kind == BW_OP_TMPFS || o->kind == BW_OP_DIR ||
                    o->kind == BW_OP_FILE || o->kind == BW_OP_BIND_DATA ||
                    o->kind == BW_OP_RO_BIND_DATA || o->kind == BW_OP_CHMOD;
    op->size = o->size;
    op->fd = o->fd;
    /* Made where missing, as bubblewrap makes every destination. */
    op->create = o->kind == BW_OP_PROC || o->kind == BW_OP_DEV;
    /* A new procfs needs a PID namespace of the sandbox's own. */
    if (o->kind == BW_OP_PROC && !(p->namespaces & CLONE_NEWPID) && p->pidns_fd < 0)
        op->flags |= FS_F_HOST;
    if (o->kind == BW_OP_FILE || o->kind == BW_OP_BIND_DATA || o->kind == BW_OP_RO_BIND_DATA) {
        /* Read now, in order: the engine runs with none of the caller's
         * pipes to wait on. */
        int rc = read_fd(NULL, o->fd, &op->data, &op->len);

        op->fd = -1;
        if (rc < 0) {
            errno = -rc;
            return nf_err_sys(err, "Can't read data for %s", o->dest);
        }
    }
    if (o->kind == BW_OP_OVERLAY || o->kind == BW_OP_TMP_OVERLAY || o->kind == BW_OP_RO_OVERLAY) {
        /* The layers are the sources; RWSRC is the upper directory. */
        free(op->src);
        op->src = NULL;
        op->lower = calloc(o->n_srcs, sizeof(*op->lower));
        if (!op->lower)
            return nf_err_sys(err, "out of memory");
        for (; op->n_lower < o->n_srcs; op->n_lower++)
            if (!(op->lower[op->n_lower] = strdup(o->srcs[op->n_lower])))
                return nf_err_sys(err, "out of memory");
        if (o->kind == BW_OP_OVERLAY &&
            (!(op->upper = strdup(o->src)) || !(op->work = strdup(o->workdir))))
            return nf_err_sys(err, "out of memory");
    }
    return 0;
}

static int add_filters(struct run_plan *p, const struct bw_spec *s, struct nf_err *err)
{
    struct bw_seccomp_prog one = { 0 };
    const struct bw_seccomp_prog *progs = s->seccomp_progs;
    size_t n = s->n_seccomp_progs;
    int rc = 0;

    if (s->seccomp_fd >= 0) {
        char *data;
        size_t len;
        int r = read_fd(NULL, s->seccomp_fd, &data, &len);

        if (r < 0) {
            errno = -r;
            return nf_err_sys(err, "Can't read seccomp data");
        }
        if (len % 8) {
            free(data);
            return nf_err_set(err, EINVAL, "Invalid seccomp data, must be multiple of 8");
        }
        one = (struct bw_seccomp_prog){ .data = (unsigned char *)data, .len = len };
        progs = &one;
        n = 1;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct sc_program *pr;

        if (p->filters.n == SC_MAX_PROGRAMS) {
            rc = nf_err_set(err, E2BIG, "too many seccomp programs");
            break;
        }
        if (progs[i].len / 8 > 0xffff || progs[i].len == 0) {
            rc = nf_err_set(err, EINVAL, "Invalid seccomp data, must be multiple of 8");
            break;
        }
        pr = &p->filters.progs[p->filters.n];
        pr->kind = SC_FILTER_USER;
        pr->len = (unsigned short)(progs[i].len / 8);
        pr->insns = malloc(progs[i].len);
        if (!pr->insns) {
            rc = nf_err_sys(err, "out of memory");
            break;
        }
        memcpy(pr->insns, progs[i].data, progs[i].len);
        p->filters.n++;
    }
    free(one.data);
    return rc;
}

static int compile(struct bwrap_run *b, struct nf_err *err)
{
    const struct bw_spec *s = &b->spec;
    struct run_plan *p = &b->plan;
    char cwd[PATH_MAX];
    size_t n = 0;

    run_plan_init(p);
    p->namespaces = CLONE_NEWNS;
    if (s->unshare_user)
        p->namespaces |= CLONE_NEWUSER;
    if (s->unshare_pid)
        p->namespaces |= CLONE_NEWPID;
    if (s->unshare_net)
        p->namespaces |= CLONE_NEWNET;
    if (s->unshare_ipc)
        p->namespaces |= CLONE_NEWIPC;
    if (s->unshare_uts)
        p->namespaces |= CLONE_NEWUTS;
    if (s->unshare_cgroup || (s->unshare_cgroup_try && access("/proc/self/ns/cgroup", F_OK) == 0))
        p->namespaces |= CLONE_NEWCGROUP;
    p->userns_fd = s->userns_fd;
    p->userns2_fd = s->userns2_fd;
    p->pidns_fd = s->pidns_fd;
    p->disable_userns = s->disable_userns;
    p->assert_userns_disabled = s->assert_userns_disabled;
    /* Whoever holds --userns-block-fd writes the maps (newuidmap). */
    p->idmap =
        (p->namespaces & CLONE_NEWUSER) && s->userns_block_fd < 0 ? RUN_IDMAP_SELF : RUN_IDMAP_NONE;
    p->uid = s->uid;
    p->gid = s->gid;
    if (s->hostname && !(p->hostname = strdup(s->hostname)))
        return nf_err_sys(err, "out of memory");

    p->fs.dst_follow = true;
    if (!fs_plan_push(&p->fs, FS_OP_NEWROOT, NULL, "/", "bwrap", err))
        return -1;
    for (size_t i = 0; i < s->n_ops; i++)
        if (add_op(p, &s->ops[i], err) < 0)
            return -1;
    /* The working directory: --chdir, else the caller's where it exists
     * inside, else $HOME, else /. */
    if (s->chdir) {
        p->fs.cwd = strdup(s->chdir);
    } else {
        p->cwd_try = true;
        p->fs.cwd = strdup(getcwd(cwd, sizeof(cwd)) ? cwd : "/");
    }
    if (!p->fs.cwd)
        return nf_err_sys(err, "out of memory");
    p->set_pwd = true;

    p->loopback = s->unshare_net;
    if (env_apply(s, &p->envp, err) < 0 || mark_nested(s, &p->envp, err) < 0)
        return -1;
    for (const char *const *e = (const char *const *)p->envp; *e; e++)
        if (strncmp(*e, "HOME=", 5) == 0 && !(p->cwd_home = strdup(*e + 5)))
            return nf_err_sys(err, "out of memory");

    while (s->command[n])
        n++;
    b->argv = calloc(n + 1, sizeof(*b->argv));
    if (!b->argv)
        return nf_err_sys(err, "out of memory");
    memcpy(b->argv, s->command, n * sizeof(*b->argv));
    if (s->argv0) {
        b->argv[0] = (char *)s->argv0;
        if (!(p->file = strdup(s->command[0])))
            return nf_err_sys(err, "out of memory");
    }
    p->argv = b->argv;

    /* As root, with no --cap-add or --cap-drop, bubblewrap leaves the
     * capabilities alone; otherwise it keeps what the list asks for,
     * starting from the caller's own as root and from none otherwise. A
     * uid other than 0 inside keeps none unasked: bubblewrap raises no
     * ambient set for it, and execve clears the rest. */
    if (getuid() == 0 && s->n_caps == 0) {
        p->caps_untouched = s->uid == 0;
        p->caps = s->uid == 0 ? effective_caps() : 0;
    } else {
        p->caps = bw_caps_apply(s, getuid() == 0 ? effective_caps() : 0);
    }
    /* With --dev in a user namespace of its own and a uid other than 0,
     * bubblewrap maps 0 first (devpts wants root mapped), then runs the
     * command in a nested user namespace mapping its uid: its capabilities,
     * --cap-add CAP_SYS_ADMIN included, then hold nothing over the
     * sandbox's mounts, and a --ro-bind cannot be remounted. */
    for (size_t i = 0; s->unshare_user && s->userns_fd < 0 && s->uid != 0 && i < s->n_ops; i++)
        if (s->ops[i].kind == BW_OP_DEV)
            p->userns_nested = true;
    if (add_filters(p, s, err) < 0)
        return -1;
    p->new_session = s->new_session;
    p->die_with_parent = s->die_with_parent;
    /* A reaper where bubblewrap has one: a PID namespace of its own, or a
     * lock or sync fd to hold. */
    p->pid1 = !s->as_pid_1 && (s->unshare_pid || s->n_lock_files || s->sync_fd >= 0)
                  ? RUN_PID1_INIT
                  : RUN_PID1_COMMAND;
    p->init_traceable = true;
    p->keyring = false;
    p->keep_fds = true;
    p->block_fd = s->block_fd;
    p->sync_fd = s->sync_fd;
    if (s->n_lock_files) {
        p->lock_files = calloc(s->n_lock_files, sizeof(*p->lock_files));
        if (!p->lock_files)
            return nf_err_sys(err, "out of memory");
        for (size_t i = 0; i < s->n_lock_files; i++, p->n_lock_files++)
            if (!(p->lock_files[i] = strdup(s->lock_files[i])))
                return nf_err_sys(err, "out of memory");
    }
    if (getrlimit(RLIMIT_NOFILE, &p->nofile) < 0)
        p->nofile.rlim_cur = p->nofile.rlim_max = RLIM_INFINITY;
    p->style = RUN_STYLE_BWRAP;
    return 0;
}

/* --info-fd and --json-status-fd: the sandbox's pid as the caller sees it
 * and the inodes of the namespaces it was given. */
static int write_info(int fd, pid_t pid, unsigned long ns, bool json, struct nf_err *err)
{
    static const struct {
        const char *name;
        unsigned long flag; /* 0: always */
    } kinds[] = {
        { "cgroup", CLONE_NEWCGROUP }, { "ipc", CLONE_NEWIPC }, { "mnt", 0 },
        { "net", CLONE_NEWNET },       { "pid", CLONE_NEWPID }, { "uts", CLONE_NEWUTS },
    };
    char buf[1024];
    size_t len;

    len = (size_t)snprintf(buf, sizeof(buf),
                           json ? "{ \"child-pid\": %d" : "{\n    \"child-pid\": %d", (int)pid);
    for (size_t i = 0; i < NF_ARRAY_SIZE(kinds); i++) {
        char path[64];
        struct stat st;

        if (kinds[i].flag && !(ns & kinds[i].flag))
            continue;
        snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kinds[i].name);
        if (stat(path, &st) < 0 || st.st_ino == 0)
            continue;
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, ",%s\"%s-namespace\": %ju",
                                json ? " " : "\n    ", kinds[i].name, (uintmax_t)st.st_ino);
    }
    len += (size_t)snprintf(buf + len, sizeof(buf) - len, json ? " }\n" : "\n}\n");
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd, buf + off, len - off);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return nf_err_sys(err, "Write to info_fd");
        off += (size_t)n;
    }
    return 0;
}

static int on_cloned(void *user, pid_t pid, struct nf_err *err)
{
    struct bwrap_run *b = user;
    const struct bw_spec *s = &b->spec;

    if (s->info_fd >= 0) {
        if (write_info(s->info_fd, pid, b->plan.namespaces, false, err) < 0)
            return -1;
        close(s->info_fd);
    }
    if (s->json_status_fd >= 0 &&
        write_info(s->json_status_fd, pid, b->plan.namespaces, true, err) < 0)
        return -1;
    if (s->userns_block_fd >= 0) {
        char byte;

        while (read(s->userns_block_fd, &byte, 1) < 0 && errno == EINTR)
            ;
        close(s->userns_block_fd);
    }
    return 0;
}

static int run(struct bwrap_run *b, struct nf_err *err)
{
    struct spawn_config sc = { .plan = &b->plan, .init_pidfd = -1, .proc_fd = -1 };
    struct ev_loop loop = { .epfd = -1 };
    int status = 125;

    if (spawn_block_signals(err) < 0 || ev_loop_init(&loop, err) < 0)
        goto out;
    sc.loop = &loop;
    sc.hooks.cloned = on_cloned;
    sc.hooks.user = b;
    status = spawn_run(&sc, err);
    /* An exit code only for a command that really ran. */
    if (b->spec.json_status_fd >= 0 && status != 125 && sc.times[STAGE_EXEC] && !sc.exec_failed)
        dprintf(b->spec.json_status_fd, "{ \"exit-code\": %d }\n", status);
out:
    if (loop.epfd >= 0)
        ev_loop_close(&loop);
    spawn_reap(&sc);
    return status;
}

/* `nsfence explain --bwrap ARGS`: the run plan bubblewrap's argv compiles
 * to, printed; nothing runs (--file and --bind-data fds are read). */
static int explain(const struct bwrap_run *b)
{
    fprintf(stdout, "front end: bubblewrap %s command line\n\n", BWRAP_VERSION);
    if (run_plan_print(stdout, &b->plan) < 0)
        return 1;
    fprintf(stdout, "\nseccomp programs as loaded (BPF, in order):\n");
    if (b->plan.filters.n == 0)
        fprintf(stdout, "  (none)\n");
    else if (sc_print_bpf(&b->plan.filters, stdout) < 0)
        return 1;
    fprintf(stdout, "\ncommand:");
    for (char **a = b->plan.argv; *a; a++)
        fprintf(stdout, " %s", *a);
    fprintf(stdout, "\n");
    return ferror(stdout) ? 1 : 0;
}

static int bwrap_entry(int argc, char **argv, bool explaining)
{
    struct bwrap_run b = { 0 };
    struct bw_parse_opts po = { .read_fd = read_fd };
    struct bw_host host = { .real_uid = getuid(),
                            .real_gid = getgid(),
                            .userns_try_ok = userns_available() };
    struct nf_err err = { 0 };
    int status = 1;
    int rc;

    rc = bw_parse(argc - 1, argv + 1, &po, &b.spec, &err);
    level_prefix = b.spec.level_prefix;
    for (size_t i = 0; i < b.spec.n_warnings; i++) {
        level_prefix = b.spec.warnings[i].level_prefix;
        say(4, "%s", b.spec.warnings[i].msg);
    }
    level_prefix = b.spec.level_prefix;
    if (rc == 0 && b.spec.action == BW_ACTION_RUN)
        rc = bw_validate(&b.spec, &host, &err);
    if (rc < 0) {
        say(3, "%s", err.msg);
        goto out;
    }
    switch (b.spec.action) {
    case BW_ACTION_HELP:
        usage(stdout, argv[0]);
        status = 0;
        goto out;
    case BW_ACTION_VERSION:
        printf("bubblewrap %s\n", BWRAP_VERSION);
        status = 0;
        goto out;
    case BW_ACTION_USAGE_ERROR:
        usage(stderr, argv[0]);
        goto out;
    case BW_ACTION_RUN:
        break;
    }
    if (compile(&b, &err) < 0) {
        say(3, "%s", err.msg);
        goto out;
    }
    if (explaining) {
        status = explain(&b);
        goto out;
    }
    err.msg[0] = '\0';
    status = run(&b, &err);
    if (status == 125 && err.msg[0]) {
        say(3, "%s", err.msg);
        status = 1;
    }
out:
    run_plan_free(&b.plan);
    free(b.argv);
    bw_spec_free(&b.spec);
    fflush(stdout);
    return status;
}

int bwrap_main(int argc, char **argv)
{
    return bwrap_entry(argc, argv, false);
}

int bwrap_explain(int argc, char **argv)
{
    return bwrap_entry(argc, argv, true);
}
