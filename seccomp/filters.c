#include "seccomp/filters.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fscrypt.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/util.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

/* libseccomp 2.5.4 predates these: resolved by number where the name is
 * unknown (the numbers are the same on x86-64 and arm64). */
static const struct {
    const char *name;
    int nr;
} late_syscalls[] = {
    { "open_tree_attr", 467 },
    { "fchmodat2", 452 },
    { "setxattrat", 463 },
    { "removexattrat", 466 },
    { "file_setattr", 469 },
    { "mount_setattr", 442 },
    { "clone3", 435 },
    { "fsopen", 430 },
    { "fsconfig", 431 },
    { "fsmount", 432 },
    { "fspick", 433 },
    { "open_tree", 428 },
    { "move_mount", 429 },
    { "openat2", 437 },
    { "io_uring_setup", 425 },
    { "io_uring_enter", 426 },
    { "io_uring_register", 427 },
};

static int sysnr(const char *name)
{
    int nr = seccomp_syscall_resolve_name(name);

    if (nr != __NR_SCMP_ERROR)
        return nr;
    for (size_t i = 0; i < NF_ARRAY_SIZE(late_syscalls); i++)
        if (strcmp(late_syscalls[i].name, name) == 0)
            return late_syscalls[i].nr;
    return __NR_SCMP_ERROR;
}

const char *sc_filter_name(enum sc_filter f)
{
    switch (f) {
    case SC_FILTER_OBSERVED:
        return "nsfence's rules and the write observer (USER_NOTIF, reports only)";
    case SC_FILTER_ENFORCE:
        return "nsfence's rules";
    case SC_FILTER_SUPERVISED:
        return "nsfence's rules and the Landlock mode's supervisor (USER_NOTIF: it performs "
               "each write and connect itself)";
    case SC_FILTER_USER:
        return "the caller's program";
    case SC_FILTER_COUNT:
        break;
    }
    return "?";
}

static int rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
                const struct scmp_arg_cmp *args, struct nf_err *err)
{
    int nr = sysnr(name);
    int rc;

    if (nr == __NR_SCMP_ERROR)
        return 0; /* not on this architecture (open, creat... on arm64) */
    rc = seccomp_rule_add_array(ctx, action, nr, n, args);
    if (rc < 0)
        return nf_err_set(err, -rc, "seccomp rule for %s: %s", name, strerror(-rc));
    return 0;
}

/* (arg & 0xffffffff) == value: the upper half of the register cannot smuggle
 * a value past the check (CVE-2019-10063 did that with TIOCSTI). */
#define EQ32(i, v) SCMP_CMP((i), SCMP_CMP_MASKED_EQ, 0xffffffffu, (v))
#define BIT(i, b)  SCMP_CMP((i), SCMP_CMP_MASKED_EQ, (b), (b))

/* io_uring opens sockets without socket(2), and in Landlock mode performs
 * opens, renames, links and xattrs that no seccomp filter sees. */
static int build_io_uring(scmp_filter_ctx ctx, struct nf_err *err)
{
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);

    if (rule(ctx, eperm, "io_uring_setup", 0, NULL, err) < 0 ||
        rule(ctx, eperm, "io_uring_enter", 0, NULL, err) < 0 ||
        rule(ctx, eperm, "io_uring_register", 0, NULL, err) < 0)
        return -1;
    return 0;
}

/* The kernel's SOCK_TYPE_MASK: the type below the SOCK_NONBLOCK and
 * SOCK_CLOEXEC flags. */
#define SOCK_TYPE_BITS 0xf

static int build_unix(scmp_filter_ctx ctx, struct nf_err *err)
{
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
    /* A unix socket reaches whatever listens on the host's file system and
     * abstract namespace; a vsock reaches the hypervisor past the network
     * namespace. socketpair stays for streams and seqpackets, connected to
     * each other for good; a datagram pair is not: sendto() names any
     * socket path, or connect() re-points it (SOCK_RAW is a datagram
     * socket to AF_UNIX). */
    struct scmp_arg_cmp unix_ = EQ32(0, AF_UNIX), vsock = EQ32(0, AF_VSOCK);
    struct scmp_arg_cmp dgram[] = { EQ32(0, AF_UNIX),
                                    SCMP_CMP(1, SCMP_CMP_MASKED_EQ, SOCK_TYPE_BITS, SOCK_DGRAM) };
    struct scmp_arg_cmp raw[] = { EQ32(0, AF_UNIX),
                                  SCMP_CMP(1, SCMP_CMP_MASKED_EQ, SOCK_TYPE_BITS, SOCK_RAW) };

    if (rule(ctx, eperm, "socket", 1, &unix_, err) < 0 ||
        rule(ctx, eperm, "socket", 1, &vsock, err) < 0 ||
        rule(ctx, eperm, "socketpair", 2, dgram, err) < 0 ||
        rule(ctx, eperm, "socketpair", 2, raw, err) < 0)
        return -1;
    return build_io_uring(ctx, err);
}

/* USER_NOTIF on open and openat only when the flags ask for writing:
 * reads are free. */
static int notify_write_opens(scmp_filter_ctx ctx, struct nf_err *err)
{
    static const unsigned write_bits[] = { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND };

    for (size_t i = 0; i < NF_ARRAY_SIZE(write_bits); i++) {
        struct scmp_arg_cmp at = BIT(2, write_bits[i]), plain = BIT(1, write_bits[i]);

        if (rule(ctx, SCMP_ACT_NOTIFY, "openat", 1, &at, err) < 0 ||
            rule(ctx, SCMP_ACT_NOTIFY, "open", 1, &plain, err) < 0)
            return -1;
    }
    return 0;
}

static int build_namespaces(scmp_filter_ctx ctx, const struct sc_options *o, struct nf_err *err)
{
    static const char *const mounts[] = {
        "setns",  "mount",    "umount2", "pivot_root", "open_tree",     "move_mount",
        "fsopen", "fsconfig", "fsmount", "fspick",     "mount_setattr", "open_tree_attr",
    };
    /* keyctl, add_key, request_key: the command would otherwise possess its
     * caller's session keyring and read or update the keys there (Kerberos
     * ccaches, tokens). init joins a fresh session keyring where it can, but
     * the caller's user keyring (@u) stays reachable, and so does any key
     * whose serial the command learns. (In this filter rather than a fifth:
     * each filter costs load time.) */
    static const char *const keyrings[] = { "keyctl", "add_key", "request_key" };
    /* fscrypt's own keys, held by the file system, not a keyring: a key
     * added turns a directory's unreadable names into real ones (a .git
     * the scan before the run could not see, with a hook in it); removed,
     * it hides what the command made from the look after the run. A new
     * encrypted directory needs no key of ours either. */
    static const unsigned long fscrypt_ioctls[] = {
        FS_IOC_ADD_ENCRYPTION_KEY,
        FS_IOC_REMOVE_ENCRYPTION_KEY,
        FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS,
        FS_IOC_SET_ENCRYPTION_POLICY,
    };
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
    /* In a new user namespace the command would hold every capability again
     * and could mount over its own protections. */
    struct scmp_arg_cmp newuser = BIT(0, CLONE_NEWUSER), newns = BIT(0, CLONE_NEWNS);

    for (size_t i = 0; i < NF_ARRAY_SIZE(keyrings); i++)
        if (rule(ctx, eperm, keyrings[i], 0, NULL, err) < 0)
            return -1;
    for (size_t i = 0; i < NF_ARRAY_SIZE(fscrypt_ioctls); i++) {
        struct scmp_arg_cmp req = EQ32(1, fscrypt_ioctls[i]);

        if (rule(ctx, eperm, "ioctl", 1, &req, err) < 0)
            return -1;
    }
    /* Nested user namespaces asked for (srt's allowNestedUserNamespaces,
     * under which srt skips its whole namespaces filter): the capabilities
     * of a namespace the command makes reach only what that namespace owns,
     * its own mount namespace included; the sandbox's mounts belong to a
     * namespace in which the command holds no capability, so they stay as
     * they are. The keyrings are no namespace's: they stay refused. */
    if (o->nested_userns)
        return 0;
    for (size_t i = 0; i < NF_ARRAY_SIZE(mounts); i++)
        if (rule(ctx, eperm, mounts[i], 0, NULL, err) < 0)
            return -1;
    if (rule(ctx, eperm, "unshare", 1, &newuser, err) < 0 ||
        rule(ctx, eperm, "unshare", 1, &newns, err) < 0 ||
        rule(ctx, eperm, "clone", 1, &newuser, err) < 0 ||
        rule(ctx, eperm, "clone", 1, &newns, err) < 0)
        return -1;
    /* clone3 passes its flags in memory the filter cannot read: ENOSYS makes
     * libc fall back to clone, whose flags it can. */
    return rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err);
}

static int build_tty(scmp_filter_ctx ctx, struct nf_err *err)
{
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
    /* TIOCSTI pushes keystrokes into the caller's terminal (CVE-2017-5226);
     * TIOCLINUX can paste the console's selection. The terminal itself stays
     * the command's: job control and interactive shells keep working. */
    struct scmp_arg_cmp sti = EQ32(1, TIOCSTI), linux_ = EQ32(1, TIOCLINUX);

    if (rule(ctx, eperm, "ioctl", 1, &sti, err) < 0 ||
        rule(ctx, eperm, "ioctl", 1, &linux_, err) < 0)
        return -1;
    return 0;
}

static int build_observer(scmp_filter_ctx ctx, struct nf_err *err)
{
    static const char *const always[] = {
        "openat2", "creat",    "truncate",  "unlink",  "unlinkat",  "rmdir",     "mkdir",
        "mkdirat", "mknod",    "mknodat",   "symlink", "symlinkat", "link",      "linkat",
        "rename",  "renameat", "renameat2", "chmod",   "fchmodat",  "fchmodat2", "chown",
        "lchown",  "fchownat", "utime",     "utimes",  "utimensat",
    };
    for (size_t i = 0; i < NF_ARRAY_SIZE(always); i++)
        if (rule(ctx, SCMP_ACT_NOTIFY, always[i], 0, NULL, err) < 0)
            return -1;
    return notify_write_opens(ctx, err);
}

/* Landlock mode: no network namespace and no mounts, so the supervisor
 * performs every call that could write (Landlock cannot refuse chmod,
 * chown, utimes or xattrs, nor a protected name inside a write root) and
 * every connect (it injects a socket connected to the proxy); only stream
 * sockets of the internet families exist, nothing listens. */
static int build_supervised(scmp_filter_ctx ctx, const struct sc_options *o, struct nf_err *err)
{
    static const char *const always[] = {
        "creat",     "truncate",    "unlink",       "unlinkat",     "rmdir",      "mkdir",
        "mkdirat",   "mknod",       "mknodat",      "symlink",      "symlinkat",  "link",
        "linkat",    "rename",      "renameat",     "renameat2",    "chmod",      "fchmod",
        "fchmodat",  "fchmodat2",   "chown",        "fchown",       "lchown",     "fchownat",
        "utime",     "utimes",      "futimesat",    "utimensat",    "setxattr",   "lsetxattr",
        "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "setxattrat", "removexattrat",
        "connect",
    };
    /* chattr's flags and the project quota: an owner may set them on a file
     * open read-only. */
    static const unsigned long attr_ioctls[] = {
        0x40086602UL, 0x40046602UL, 0x401c5820UL, /* FS_IOC_SETFLAGS (both), FSSETXATTR */
        0x40806685UL,                             /* FS_IOC_ENABLE_VERITY (fscrypt's: always) */
    };
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM), notify = SCMP_ACT_NOTIFY;
    struct scmp_arg_cmp fastopen2 = BIT(2, 0x20000000), fastopen3 = BIT(3, 0x20000000);
    struct scmp_arg_cmp high = SCMP_A0(SCMP_CMP_GE, AF_MAX);

    for (size_t i = 0; i < NF_ARRAY_SIZE(always); i++)
        if (rule(ctx, notify, always[i], 0, NULL, err) < 0)
            return -1;
    if (notify_write_opens(ctx, err) < 0)
        return -1;
    /* openat2's flags are in memory the filter cannot read: ENOSYS, and
     * libc falls back to openat. */
    if (rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "openat2", 0, NULL, err) < 0 ||
        rule(ctx, eperm, "listen", 0, NULL, err) < 0 ||
        rule(ctx, eperm, "file_setattr", 0, NULL, err) < 0 ||
        rule(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), "sendto", 1, &fastopen3, err) < 0 ||
        rule(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), "sendmsg", 1, &fastopen2, err) < 0 ||
        rule(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), "sendmmsg", 1, &fastopen3, err) < 0 ||
        rule(ctx, eperm, "socket", 1, &high, err) < 0)
        return -1;
    for (size_t i = 0; i < NF_ARRAY_SIZE(attr_ioctls); i++) {
        struct scmp_arg_cmp req = EQ32(1, attr_ioctls[i]);

        if (rule(ctx, eperm, "ioctl", 1, &req, err) < 0)
            return -1;
    }
    /* Families: the internet ones (stream only), unix where allowed (its
     * own rule refuses it otherwise); every other one refused. */
    for (unsigned fam = 0; fam < AF_MAX; fam++) {
        struct scmp_arg_cmp f = EQ32(0, fam);

        if (fam == AF_INET || fam == AF_INET6 || fam == AF_UNIX ||
            (fam == AF_VSOCK && o->unix_block))
            continue;
        if (rule(ctx, eperm, "socket", 1, &f, err) < 0)
            return -1;
    }
    for (unsigned type = 0; type < 16; type++) {
        struct scmp_arg_cmp cmp[2] = { EQ32(0, AF_INET), SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, type) };

        if (type == SOCK_STREAM)
            continue;
        if (rule(ctx, eperm, "socket", 2, cmp, err) < 0)
            return -1;
        cmp[0] = (struct scmp_arg_cmp)EQ32(0, AF_INET6);
        if (rule(ctx, eperm, "socket", 2, cmp, err) < 0)
            return -1;
    }
    /* A stream socket of the internet families is TCP or nothing: Landlock's
     * network rules know only TCP, and MPTCP (262) and SCTP (132) streams
     * connect past them, SCTP even without connect (sendmsg to an address,
     * SCTP_SOCKOPT_CONNECTX). Protocol 0 is TCP; 1 to 5 are refused, and
     * so is anything above 6 compared on all 64 bits (a value with junk in
     * the upper half too, which errs on the safe side). */
    for (unsigned fam = 0; fam < 2; fam++) {
        unsigned f = fam ? AF_INET6 : AF_INET;
        struct scmp_arg_cmp above[2] = { EQ32(0, f), SCMP_A2(SCMP_CMP_GT, IPPROTO_TCP) };

        if (rule(ctx, eperm, "socket", 2, above, err) < 0)
            return -1;
        for (unsigned proto = 1; proto < IPPROTO_TCP; proto++) {
            struct scmp_arg_cmp below[2] = { EQ32(0, f), SCMP_A2(SCMP_CMP_EQ, proto) };

            if (rule(ctx, eperm, "socket", 2, below, err) < 0)
                return -1;
        }
    }
    return 0;
}

static scmp_filter_ctx new_ctx(enum sc_filter f, const struct sc_options *o, struct nf_err *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int rc;

    if (!ctx) {
        nf_err_set(err, ENOMEM, "seccomp_init failed");
        return NULL;
    }
    /* Another architecture's syscall numbers mean other syscalls: kill the
     * whole process, not just the thread. libseccomp also sends x32 calls on
     * x86-64 here. */
    rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (rc == 0)
        rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); /* we set no_new_privs ourselves */
    if (rc == 0) {
        switch (f) {
        case SC_FILTER_OBSERVED:
        case SC_FILTER_ENFORCE:
            if (o->unix_block)
                rc = build_unix(ctx, err);
            if (rc == 0)
                rc = build_namespaces(ctx, o, err);
            if (rc == 0)
                rc = build_tty(ctx, err);
            if (rc == 0 && f == SC_FILTER_OBSERVED)
                rc = build_observer(ctx, err);
            break;
        case SC_FILTER_SUPERVISED:
            /* io_uring refused whatever the unix-socket setting: inside a
             * write root it would write a protected name past the
             * supervisor. */
            rc = o->unix_block ? build_unix(ctx, err) : build_io_uring(ctx, err);
            if (rc == 0)
                rc = build_namespaces(ctx, o, err);
            if (rc == 0)
                rc = build_tty(ctx, err);
            if (rc == 0)
                rc = build_supervised(ctx, o, err);
            break;
        case SC_FILTER_USER:
        case SC_FILTER_COUNT:
            rc = -EINVAL;
            break;
        }
    } else {
        nf_err_set(err, -rc, "seccomp_attr_set: %s", strerror(-rc));
    }
    if (rc < 0) {
        if (!err->msg[0])
            nf_err_set(err, EINVAL, "seccomp filter %s", sc_filter_name(f));
        seccomp_release(ctx);
        return NULL;
    }
    return ctx;
}

/* Whether the program of kind cur after one of kind prev (SC_FILTER_COUNT
 * for none) is the rules alone kept for where the observed program cannot
 * be loaded. */
static bool is_fallback(enum sc_filter prev, enum sc_filter cur)
{
    return prev == SC_FILTER_OBSERVED && cur == SC_FILTER_ENFORCE;
}

/* With the observer, the rules twice: with it, and alone where a listener
 * cannot be had (an old kernel, one already on this process tree). */
static size_t wanted(const struct sc_options *o, enum sc_filter *out)
{
    size_t n = 0;

    if (o->supervised) {
        out[n++] = SC_FILTER_SUPERVISED;
        return n;
    }
    if (o->observer)
        out[n++] = SC_FILTER_OBSERVED;
    out[n++] = SC_FILTER_ENFORCE;
    return n;
}

int sc_compile(const struct sc_options *o, struct sc_set *out, struct nf_err *err)
{
    enum sc_filter which[SC_FILTER_COUNT];
    size_t n = wanted(o, which);

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        scmp_filter_ctx ctx = new_ctx(which[i], o, err);
        int p[2];
        ssize_t len;
        struct sock_filter *insns;

        if (!ctx)
            goto fail;
        if (pipe2(p, O_CLOEXEC) < 0) {
            seccomp_release(ctx);
            nf_err_sys(err, "pipe");
            goto fail;
        }
        insns = malloc(BPF_MAXINSNS * sizeof(*insns));
        len = -1;
        if (insns && seccomp_export_bpf(ctx, p[1]) == 0) {
            close(p[1]);
            p[1] = -1;
            len = read(p[0], insns, BPF_MAXINSNS * sizeof(*insns));
        }
        if (p[1] >= 0)
            close(p[1]);
        close(p[0]);
        seccomp_release(ctx);
        if (len <= 0 || len % (ssize_t)sizeof(*insns)) {
            free(insns);
            nf_err_set(err, EIO, "seccomp: cannot export the %s filter", sc_filter_name(which[i]));
            goto fail;
        }
        out->progs[out->n].kind = which[i];
        out->progs[out->n].insns = insns;
        out->progs[out->n].len = (unsigned short)((size_t)len / sizeof(*insns));
        out->n++;
    }
    return 0;
fail:
    sc_set_free(out);
    return -1;
}

void sc_set_free(struct sc_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->progs[i].insns);
    memset(s, 0, sizeof(*s));
}

int sc_print_pfc(const struct sc_options *o, FILE *out, struct nf_err *err)
{
    enum sc_filter which[SC_FILTER_COUNT];
    size_t n = wanted(o, which);

    for (size_t i = 0; i < n; i++) {
        scmp_filter_ctx ctx = new_ctx(which[i], o, err);
        int rc;

        if (!ctx)
            return -1;
        fprintf(out, "# seccomp filter %zu: %s%s\n", i + 1, sc_filter_name(which[i]),
                i > 0 && is_fallback(which[i - 1], which[i])
                    ? " (loaded only where filter 1 cannot be)"
                    : "");
        fflush(out);
        rc = seccomp_export_pfc(ctx, fileno(out));
        seccomp_release(ctx);
        if (rc < 0)
            return nf_err_set(err, -rc, "seccomp_export_pfc: %s", strerror(-rc));
    }
    return 0;
}

/* Classic BPF as seccomp uses it: the instruction's operation, its operand
 * and, for a conditional jump, both targets as instruction numbers. */
static void print_insn(FILE *out, unsigned pc, const struct sock_filter *f)
{
    static const char *const jumps[] = { "ja", "jeq", "jgt", "jge", "jset" };
    static const char *const alu[] = { "add", "sub", "mul", "div", "or", "and",
                                       "lsh", "rsh", "neg", "mod", "xor" };
    unsigned op = BPF_OP(f->code), src = BPF_SRC(f->code);

    fprintf(out, "  %04u: ", pc);
    switch (BPF_CLASS(f->code)) {
    case BPF_LD:
        if (BPF_MODE(f->code) == BPF_ABS)
            fprintf(out, "ld [%u]\n", f->k);
        else if (BPF_MODE(f->code) == BPF_MEM)
            fprintf(out, "ld M[%u]\n", f->k);
        else if (BPF_MODE(f->code) == BPF_IMM)
            fprintf(out, "ld #%#x\n", f->k);
        else
            break;
        return;
    case BPF_LDX:
        fprintf(out, "ldx %s%u%s\n", BPF_MODE(f->code) == BPF_MEM ? "M[" : "#", f->k,
                BPF_MODE(f->code) == BPF_MEM ? "]" : "");
        return;
    case BPF_ST:
    case BPF_STX:
        fprintf(out, "%s M[%u]\n", BPF_CLASS(f->code) == BPF_ST ? "st" : "stx", f->k);
        return;
    case BPF_ALU:
        if (op >> 4 < NF_ARRAY_SIZE(alu)) {
            if (src == BPF_X)
                fprintf(out, "%s x\n", alu[op >> 4]);
            else
                fprintf(out, "%s #%#x\n", alu[op >> 4], f->k);
            return;
        }
        break;
    case BPF_JMP:
        if (op == BPF_JA) {
            fprintf(out, "ja %u\n", pc + 1 + f->k);
            return;
        }
        if (op >> 4 < NF_ARRAY_SIZE(jumps)) {
            fprintf(out, "%s %s%#x jt %u jf %u\n", jumps[op >> 4], src == BPF_X ? "x" : "#",
                    src == BPF_X ? 0 : f->k, pc + 1 + f->jt, pc + 1 + f->jf);
            return;
        }
        break;
    case BPF_RET:
        if (BPF_RVAL(f->code) == BPF_A)
            fprintf(out, "ret a\n");
        else
            fprintf(out, "ret #%#x\n", f->k);
        return;
    case BPF_MISC:
        fprintf(out, "%s\n", BPF_MISCOP(f->code) == BPF_TAX ? "tax" : "txa");
        return;
    default:
        break;
    }
    fprintf(out, "code %#06x jt %u jf %u k %#x\n", f->code, f->jt, f->jf, f->k);
}

int sc_print_bpf(const struct sc_set *s, FILE *out)
{
    for (size_t i = 0; i < s->n; i++) {
        bool fallback = i > 0 && is_fallback(s->progs[i - 1].kind, s->progs[i].kind);

        fprintf(out, "# program %zu: %s, %u instructions%s\n", i + 1,
                sc_filter_name(s->progs[i].kind), s->progs[i].len,
                fallback ? " (loaded only where the program before it cannot be)" : "");
        for (unsigned pc = 0; pc < s->progs[i].len; pc++)
            print_insn(out, pc, &s->progs[i].insns[pc]);
    }
    return ferror(out) ? -1 : 0;
}

int sc_install(const struct sc_set *s, int *listener, char *why, size_t whysz, struct nf_err *err)
{
    *listener = -1;
    why[0] = '\0';
    for (size_t i = 0; i < s->n; i++) {
        struct sock_fprog prog = { .len = s->progs[i].len, .filter = s->progs[i].insns };
        bool notify =
            s->progs[i].kind == SC_FILTER_OBSERVED || s->progs[i].kind == SC_FILTER_SUPERVISED;

        /* The observed program holds the same rules: loaded, it is enough. */
        if (i > 0 && is_fallback(s->progs[i - 1].kind, s->progs[i].kind) && *listener >= 0)
            continue;
        /* prctl where no listener is wanted: a caller's program loaded
         * before another may allow prctl and not seccomp (bubblewrap loads
         * them with prctl). */
        long rc = notify ? syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                   SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog)
                         : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);

        if (rc < 0) {
            /* The observer only reports: an old kernel, or a listener
             * already on this process tree (EBUSY), means running without
             * it, the rules loading alone from the program after it. */
            if (!(i + 1 < s->n && is_fallback(s->progs[i].kind, s->progs[i + 1].kind)))
                return nf_err_sys(err, "seccomp: load the %s filter",
                                  sc_filter_name(s->progs[i].kind));
            snprintf(why, whysz, "write observer unavailable (%s); running without it",
                     strerror(errno));
            continue;
        }
        if (notify)
            *listener = (int)rc;
    }
    return 0;
}

bool sc_notif_waiting(int fd, uint64_t id)
{
    if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
        return true;
    return errno == EINVAL && ioctl(fd, _IOR('!', 2, __u64), &id) == 0;
}
