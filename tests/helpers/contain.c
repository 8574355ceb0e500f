/* Runs a program as a container engine would run a container's process:
 * under a seccomp profile in Docker's JSON format and with a container's
 * default capability set, so tests see namespace creation refused (or
 * allowed) exactly as inside Docker or Podman, without either installed:
 *   contain [--caps=docker|podman] PROFILE.json PROGRAM ARGS...
 *   contain --caps-only [--caps=docker|podman] PROGRAM ARGS...
 *
 * The profile is read as moby's profiles/seccomp (setupSeccomp) reads it:
 * includes/excludes on caps (against the engine's default set: the bounding
 * set a container gets), arches (the native one, in Go's names) and
 * minKernel; archMap for the native architecture. The filter is built as
 * runc's libcontainer/seccomp builds it (matchCall: unknown names skipped,
 * rules equal to the default action dropped, args that repeat an index
 * split into one rule per condition) and loaded with runc's patchbpf stub
 * in front: syscalls newer than any the profile names fail with ENOSYS, not
 * the default action, so programs probing new calls fall back as they do
 * under Docker.
 *
 * As root (with CAP_SYS_ADMIN and CAP_SETPCAP) the filter is loaded without
 * no_new_privs, as runc does by default, and the capabilities are dropped
 * after it: bounding, permitted and effective to the engine's set,
 * inheritable and ambient emptied (Docker since 20.10.14, CVE-2022-24769);
 * the uid stays 0. As any other user, no_new_privs is set (the kernel's
 * condition for loading a filter without CAP_SYS_ADMIN) and the capabilities
 * are lowered as far as an unprivileged process can (not the bounding set).
 *
 * Exit status: 2 when the setup fails (messages start with "contain: "),
 * 127 when PROGRAM cannot be executed. */
#include <errno.h>
#include <jansson.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_ARGS      6 /* a syscall has at most six arguments */
#define X32_BIT       0x40000000U

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    va_list ap;

    fputs("contain: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

/* ---- capabilities ------------------------------------------------------ */

#define BIT(c) (1ULL << (c))

/* The capabilities a container keeps: moby's oci/caps DefaultCapabilities()
 * and containers.conf's default_capabilities (containers-common 0.50),
 * Docker's set without MKNOD, NET_RAW and AUDIT_WRITE. A capability named
 * in a profile and absent here is in neither set. */
static const struct {
    const char *name;
    int nr;
    bool docker, podman;
} engine_caps[] = {
    { "CAP_CHOWN", CAP_CHOWN, true, true },
    { "CAP_DAC_OVERRIDE", CAP_DAC_OVERRIDE, true, true },
    { "CAP_FSETID", CAP_FSETID, true, true },
    { "CAP_FOWNER", CAP_FOWNER, true, true },
    { "CAP_MKNOD", CAP_MKNOD, true, false },
    { "CAP_NET_RAW", CAP_NET_RAW, true, false },
    { "CAP_SETGID", CAP_SETGID, true, true },
    { "CAP_SETUID", CAP_SETUID, true, true },
    { "CAP_SETFCAP", CAP_SETFCAP, true, true },
    { "CAP_SETPCAP", CAP_SETPCAP, true, true },
    { "CAP_NET_BIND_SERVICE", CAP_NET_BIND_SERVICE, true, true },
    { "CAP_SYS_CHROOT", CAP_SYS_CHROOT, true, true },
    { "CAP_KILL", CAP_KILL, true, true },
    { "CAP_AUDIT_WRITE", CAP_AUDIT_WRITE, true, false },
};

static uint64_t engine_set(bool podman)
{
    uint64_t set = 0;

    for (size_t i = 0; i < ARRAY_SIZE(engine_caps); i++)
        if (podman ? engine_caps[i].podman : engine_caps[i].docker)
            set |= BIT(engine_caps[i].nr);
    return set;
}

/* -1 for a capability in neither set: a filter on it sees it absent. */
static int cap_from_name(const char *name)
{
    for (size_t i = 0; i < ARRAY_SIZE(engine_caps); i++)
        if (strcmp(engine_caps[i].name, name) == 0)
            return engine_caps[i].nr;
    return -1;
}

static void caps_get(struct __user_cap_data_struct data[2])
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

    if (syscall(SYS_capget, &hdr, data) < 0)
        fail("capget: %s", strerror(errno));
}

static bool cap_effective(int cap)
{
    struct __user_cap_data_struct data[2];

    caps_get(data);
    return data[cap / 32].effective & (1U << (cap % 32));
}

static int cap_last(void)
{
    FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
    int last = -1;

    if (!f)
        fail("/proc/sys/kernel/cap_last_cap: %s", strerror(errno));
    if (fscanf(f, "%d", &last) != 1 || last < 0 || last > 63)
        fail("/proc/sys/kernel/cap_last_cap: not a capability number");
    fclose(f);
    return last;
}

/* The bounding set only with CAP_SETPCAP (root); inheritable and ambient
 * emptied so no exec regains what was dropped; permitted and effective cut
 * to the set (never raised: capset refuses that). */
static void caps_drop_to(uint64_t keep, bool bounding, int last)
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct data[2];

    for (int c = 0; bounding && c <= last; c++) {
        if (keep & BIT(c))
            continue;
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
            fail("prctl(PR_CAPBSET_DROP, %d): %s", c, strerror(errno));
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        fail("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %s", strerror(errno));
    caps_get(data);
    for (int i = 0; i < 2; i++) {
        uint32_t k = (uint32_t)(keep >> (32 * i));

        data[i].permitted &= k;
        data[i].effective &= k;
        data[i].inheritable = 0;
    }
    if (syscall(SYS_capset, &hdr, data) < 0)
        fail("capset: %s", strerror(errno));
}

/* ---- the profile ------------------------------------------------------- */

/* The names profiles give architectures (runc's archs). */
static const struct {
    const char *name;
    uint32_t token;
} arch_names[] = {
    { "SCMP_ARCH_X86", SCMP_ARCH_X86 },
    { "SCMP_ARCH_X86_64", SCMP_ARCH_X86_64 },
    { "SCMP_ARCH_X32", SCMP_ARCH_X32 },
    { "SCMP_ARCH_ARM", SCMP_ARCH_ARM },
    { "SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64 },
    { "SCMP_ARCH_MIPS", SCMP_ARCH_MIPS },
    { "SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64 },
    { "SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32 },
    { "SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL },
    { "SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64 },
    { "SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32 },
    { "SCMP_ARCH_PPC", SCMP_ARCH_PPC },
    { "SCMP_ARCH_PPC64", SCMP_ARCH_PPC64 },
    { "SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE },
    { "SCMP_ARCH_S390", SCMP_ARCH_S390 },
    { "SCMP_ARCH_S390X", SCMP_ARCH_S390X },
    { "SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64 },
};

/* moby's goToNative: the names includes/excludes "arches" use. */
static const struct {
    uint32_t token;
    const char *go;
} native_names[] = {
    { SCMP_ARCH_X86, "x86" },           { SCMP_ARCH_X86_64, "amd64" },
    { SCMP_ARCH_ARM, "arm" },           { SCMP_ARCH_AARCH64, "arm64" },
    { SCMP_ARCH_MIPS64, "mips64" },     { SCMP_ARCH_MIPS64N32, "mips64n32" },
    { SCMP_ARCH_MIPSEL64, "mipsel64" }, { SCMP_ARCH_MIPSEL64N32, "mips3l64n32" },
    { SCMP_ARCH_MIPSEL, "mipsel" },     { SCMP_ARCH_PPC, "ppc" },
    { SCMP_ARCH_PPC64, "ppc64" },       { SCMP_ARCH_PPC64LE, "ppc64le" },
    { SCMP_ARCH_S390, "s390" },         { SCMP_ARCH_S390X, "s390x" },
    { SCMP_ARCH_RISCV64, "riscv64" },
};

struct profile {
    const char *path;
    uint64_t caps;       /* the container's bounding set, for includes/excludes */
    uint32_t arch;       /* native, a SCMP_ARCH_ token */
    const char *go_arch; /* its name in includes/excludes, NULL if moby has none */
    unsigned kernel[2];  /* uname's "<kernel>.<major>" */
    uint32_t def_action;
    int max_nr; /* the highest native syscall number the kept rules name */
};

static uint32_t arch_from_name(const struct profile *p, const char *name)
{
    for (size_t i = 0; i < ARRAY_SIZE(arch_names); i++)
        if (strcmp(arch_names[i].name, name) == 0)
            return arch_names[i].token;
    fail("%s: unknown architecture %s", p->path, name);
}

static const char *str_at(const struct profile *p, json_t *v, const char *what)
{
    if (!json_is_string(v))
        fail("%s: %s: not a string", p->path, what);
    return json_string_value(v);
}

static bool in_strings(const struct profile *p, json_t *list, const char *s, const char *what)
{
    size_t i;
    json_t *v;

    json_array_foreach(list, i, v)
    {
        if (strcmp(str_at(p, v, what), s) == 0)
            return true;
    }
    return false;
}

/* moby's KernelVersion.UnmarshalJSON: exactly "<kernel>.<major>", each below
 * 256, not 0.0; then kernelGreaterEqualThan against uname. */
static bool kernel_at_least(const struct profile *p, json_t *v, const char *what)
{
    const char *s = str_at(p, v, what);
    unsigned k, m;
    int n = -1;

    if (sscanf(s, "%3u.%3u%n", &k, &m, &n) != 2 || s[n] != '\0' || k > 255 || m > 255 ||
        (k == 0 && m == 0))
        fail("%s: %s: invalid kernel version %s, expected \"<kernel>.<major>\"", p->path, what, s);
    return p->kernel[0] > k || (p->kernel[0] == k && p->kernel[1] >= m);
}

/* moby's test on includes (every cap in the set) and excludes (any). */
static bool caps_match(const struct profile *p, json_t *caps, bool want_all, const char *what)
{
    size_t i;
    json_t *v;

    json_array_foreach(caps, i, v)
    {
        int c = cap_from_name(str_at(p, v, what));
        bool has = c >= 0 && (p->caps & BIT(c));

        if (has != want_all)
            return has;
    }
    return want_all;
}

/* setupSeccomp's filter on one entry: any exclude that matches drops it,
 * then every include must match. */
static bool entry_applies(const struct profile *p, json_t *call, const char *what)
{
    json_t *exc = json_object_get(call, "excludes"), *inc = json_object_get(call, "includes");
    json_t *v;

    if (exc && (v = json_object_get(exc, "arches")) && json_array_size(v) > 0 && p->go_arch &&
        in_strings(p, v, p->go_arch, what))
        return false;
    if (exc && (v = json_object_get(exc, "caps")) && json_array_size(v) > 0 &&
        caps_match(p, v, false, what))
        return false;
    if (exc && (v = json_object_get(exc, "minKernel")) && !json_is_null(v) &&
        strcmp(str_at(p, v, what), "") != 0 && kernel_at_least(p, v, what))
        return false;
    if (inc && (v = json_object_get(inc, "arches")) && json_array_size(v) > 0 &&
        !(p->go_arch && in_strings(p, v, p->go_arch, what)))
        return false;
    if (inc && (v = json_object_get(inc, "caps")) && json_array_size(v) > 0 &&
        !caps_match(p, v, true, what))
        return false;
    if (inc && (v = json_object_get(inc, "minKernel")) && !json_is_null(v) &&
        strcmp(str_at(p, v, what), "") != 0 && !kernel_at_least(p, v, what))
        return false;
    return true;
}

/* runc's getAction: ERRNO and TRACE return errnoRet, EPERM without one. */
static uint32_t action_from(const struct profile *p, json_t *name, json_t *errno_ret,
                            const char *what)
{
    const char *s = str_at(p, name, what);
    uint32_t ret = EPERM;

    if (errno_ret && !json_is_null(errno_ret)) {
        if (!json_is_integer(errno_ret) || json_integer_value(errno_ret) < 0 ||
            json_integer_value(errno_ret) > 0xffff)
            fail("%s: %s: errnoRet is not an errno", p->path, what);
        ret = (uint32_t)json_integer_value(errno_ret);
    }
    if (strcmp(s, "SCMP_ACT_KILL") == 0 || strcmp(s, "SCMP_ACT_KILL_THREAD") == 0)
        return SCMP_ACT_KILL_THREAD;
    if (strcmp(s, "SCMP_ACT_KILL_PROCESS") == 0)
        return SCMP_ACT_KILL_PROCESS;
    if (strcmp(s, "SCMP_ACT_ERRNO") == 0)
        return SCMP_ACT_ERRNO(ret);
    if (strcmp(s, "SCMP_ACT_TRAP") == 0)
        return SCMP_ACT_TRAP;
    if (strcmp(s, "SCMP_ACT_ALLOW") == 0)
        return SCMP_ACT_ALLOW;
    if (strcmp(s, "SCMP_ACT_TRACE") == 0)
        return SCMP_ACT_TRACE(ret);
    if (strcmp(s, "SCMP_ACT_LOG") == 0)
        return SCMP_ACT_LOG;
    /* SCMP_ACT_NOTIFY needs an agent holding the listener: there is none. */
    fail("%s: %s: action %s is not supported", p->path, what, s);
}

static enum scmp_compare op_from(const struct profile *p, json_t *v, const char *what)
{
    static const struct {
        const char *name;
        enum scmp_compare op;
    } ops[] = {
        { "SCMP_CMP_NE", SCMP_CMP_NE },
        { "SCMP_CMP_LT", SCMP_CMP_LT },
        { "SCMP_CMP_LE", SCMP_CMP_LE },
        { "SCMP_CMP_EQ", SCMP_CMP_EQ },
        { "SCMP_CMP_GE", SCMP_CMP_GE },
        { "SCMP_CMP_GT", SCMP_CMP_GT },
        { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
    };
    const char *s = str_at(p, v, what);

    for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
        if (strcmp(ops[i].name, s) == 0)
            return ops[i].op;
    fail("%s: %s: unknown operator %s", p->path, what, s);
}

static uint64_t u64_at(const struct profile *p, json_t *v, const char *what)
{
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        fail("%s: %s: not an unsigned integer", p->path, what);
    return (uint64_t)json_integer_value(v);
}

/* The conditions of one entry; whether two of them test the same argument. */
static size_t conds_from(const struct profile *p, json_t *args, struct scmp_arg_cmp *cmp,
                         bool *repeats, const char *what)
{
    unsigned count[MAX_ARGS] = { 0 };
    size_t i;
    json_t *a;

    *repeats = false;
    if (!args || json_is_null(args))
        return 0;
    if (!json_is_array(args) || json_array_size(args) > MAX_ARGS)
        fail("%s: %s: args is not an array of at most %d conditions", p->path, what, MAX_ARGS);
    json_array_foreach(args, i, a)
    {
        uint64_t idx;

        if (!json_is_object(a) || (idx = u64_at(p, json_object_get(a, "index"), what)) >= MAX_ARGS)
            fail("%s: %s: args[%zu]: not a condition on argument 0 to 5", p->path, what, i);
        cmp[i] = (struct scmp_arg_cmp){
            .arg = (unsigned)idx,
            .op = op_from(p, json_object_get(a, "op"), what),
            .datum_a = u64_at(p, json_object_get(a, "value"), what),
            .datum_b = u64_at(p, json_object_get(a, "valueTwo"), what),
        };
        if (++count[idx] > 1)
            *repeats = true;
    }
    return json_array_size(args);
}

static void rule_add(const struct profile *p, scmp_filter_ctx ctx, const char *name, uint32_t act,
                     const struct scmp_arg_cmp *cmp, size_t n, const char *what)
{
    int rc = seccomp_rule_add_array(ctx, act, seccomp_syscall_resolve_name(name), (unsigned)n,
                                    n ? cmp : NULL);

    if (rc < 0)
        fail("%s: %s: seccomp rule for %s: %s", p->path, what, name, strerror(-rc));
}

/* runc's matchCall, for each name of one kept entry. */
static void entry_add(struct profile *p, scmp_filter_ctx ctx, json_t *call, const char *what)
{
    json_t *name = json_object_get(call, "name"), *names = json_object_get(call, "names");
    uint32_t act =
        action_from(p, json_object_get(call, "action"), json_object_get(call, "errnoRet"), what);
    struct scmp_arg_cmp cmp[MAX_ARGS];
    bool repeats;
    size_t n = conds_from(p, json_object_get(call, "args"), cmp, &repeats, what);
    size_t i, count;

    if (name && names && json_array_size(names) > 0)
        fail("%s: %s: 'name' and 'names' were both specified", p->path, what);
    if (names && !json_is_array(names))
        fail("%s: %s: names is not an array", p->path, what);
    count = name ? 1 : json_array_size(names);
    for (i = 0; i < count; i++) {
        const char *s = str_at(p, name ? name : json_array_get(names, i), what);
        int nr = seccomp_syscall_resolve_name(s);

        /* patchbpf counts the names of every kept entry, whatever their action */
        if (nr != __NR_SCMP_ERROR && nr > p->max_nr)
            p->max_nr = nr;
        /* libseccomp refuses a rule that repeats the default action; a name
         * libseccomp cannot resolve is a syscall this kernel may not have */
        if (act == p->def_action || nr == __NR_SCMP_ERROR)
            continue;
        /* One rule ANDs its conditions. Two on the same argument keep
         * runc's older reading, from before libseccomp could AND them: a
         * rule each, so either one matches (OR). */
        if (repeats)
            for (size_t c = 0; c < n; c++)
                rule_add(p, ctx, s, act, &cmp[c], 1, what);
        else
            rule_add(p, ctx, s, act, cmp, n, what);
    }
}

/* Docker's archMap (or the older "architectures"): the native entry's
 * architecture and its subarchitectures join the filter. */
static void arches_add(const struct profile *p, scmp_filter_ctx ctx, json_t *root)
{
    json_t *list = json_object_get(root, "architectures"), *map = json_object_get(root, "archMap");
    size_t i, j;
    json_t *e, *v;

    if (json_array_size(list) > 0 && json_array_size(map) > 0)
        fail("%s: 'architectures' and 'archMap' were both specified", p->path);
    json_array_foreach(list, i, v)
    {
        uint32_t a = arch_from_name(p, str_at(p, v, "architectures"));

        if (seccomp_arch_exist(ctx, a) == -EEXIST && seccomp_arch_add(ctx, a) < 0)
            fail("%s: cannot add architecture %s", p->path, json_string_value(v));
    }
    json_array_foreach(map, i, e)
    {
        json_t *subs = json_object_get(e, "subArchitectures");

        if (arch_from_name(p, str_at(p, json_object_get(e, "architecture"), "archMap")) != p->arch)
            continue;
        json_array_foreach(subs, j, v)
        {
            uint32_t a = arch_from_name(p, str_at(p, v, "archMap"));

            if (seccomp_arch_exist(ctx, a) == -EEXIST && seccomp_arch_add(ctx, a) < 0)
                fail("%s: cannot add architecture %s", p->path, json_string_value(v));
        }
        break;
    }
}

static void profile_init(struct profile *p, const char *path, uint64_t caps)
{
    struct utsname u;

    *p =
        (struct profile){ .path = path, .caps = caps, .arch = seccomp_arch_native(), .max_nr = -1 };
    for (size_t i = 0; i < ARRAY_SIZE(native_names); i++)
        if (native_names[i].token == p->arch)
            p->go_arch = native_names[i].go;
    if (uname(&u) < 0)
        fail("uname: %s", strerror(errno));
    if (sscanf(u.release, "%u.%u", &p->kernel[0], &p->kernel[1]) != 2)
        fail("uname: cannot read the kernel version in %s", u.release);
}

static scmp_filter_ctx filter_build(struct profile *p, json_t *root)
{
    json_t *calls = json_object_get(root, "syscalls"), *call;
    scmp_filter_ctx ctx;
    size_t i;

    if (!json_is_object(root))
        fail("%s: not a JSON object", p->path);
    if (!json_object_get(root, "defaultAction"))
        fail("%s: no defaultAction", p->path);
    if (calls && !json_is_array(calls))
        fail("%s: syscalls is not an array", p->path);
    p->def_action = action_from(p, json_object_get(root, "defaultAction"),
                                json_object_get(root, "defaultErrnoRet"), "defaultAction");
    ctx = seccomp_init(p->def_action);
    if (!ctx)
        fail("seccomp_init failed");
    arches_add(p, ctx, root);
    json_array_foreach(calls, i, call)
    {
        char what[32];

        snprintf(what, sizeof(what), "syscalls[%zu]", i);
        if (!json_is_object(call))
            fail("%s: %s: not an object", p->path, what);
        if (entry_applies(p, call, what))
            entry_add(p, ctx, call, what);
    }
    return ctx;
}

/* ---- loading ----------------------------------------------------------- */

/* libseccomp's program, read back through a memfd (2.5 has no export to
 * memory); *len instructions, caller frees. */
static struct sock_filter *filter_export(scmp_filter_ctx ctx, size_t *len)
{
    int fd = memfd_create("contain-bpf", MFD_CLOEXEC);
    struct sock_filter *prog;
    off_t size;
    int rc;

    if (fd < 0)
        fail("memfd_create: %s", strerror(errno));
    if ((rc = seccomp_export_bpf(ctx, fd)) < 0)
        fail("seccomp_export_bpf: %s", strerror(-rc));
    size = lseek(fd, 0, SEEK_END);
    if (size < 0)
        fail("lseek: %s", strerror(errno));
    if (size == 0 || size % sizeof(*prog) != 0)
        fail("seccomp_export_bpf wrote %lld bytes", (long long)size);
    prog = malloc((size_t)size);
    if (!prog)
        fail("out of memory");
    errno = 0;
    if (pread(fd, prog, (size_t)size, 0) != size)
        fail("reading the exported filter: %s", errno ? strerror(errno) : "short read");
    close(fd);
    *len = (size_t)size / sizeof(*prog);
    return prog;
}

/* runc's patchbpf stub, for the native architecture: a syscall numbered
 * above every one the profile names is one the profile's author could not
 * know, and fails with ENOSYS (so callers fall back, as glibc does from
 * clone3) instead of the default action's EPERM. x32 calls are left alone. */
static void filter_load(const struct profile *p, scmp_filter_ctx ctx, bool stub)
{
    size_t n, head = 0;
    struct sock_filter *body = filter_export(ctx, &n), *prog;
    struct sock_fprog fprog;
    const struct sock_filter enosys[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, p->arch, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, p->arch == SCMP_ARCH_X86_64 ? X32_BIT : 0, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)p->max_nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    };

    if (stub && p->max_nr >= 0)
        head = ARRAY_SIZE(enosys);
    if (n + head > BPF_MAXINSNS)
        fail("%s: the filter has %zu instructions, more than the kernel takes", p->path, n + head);
    prog = malloc((n + head) * sizeof(*prog));
    if (!prog)
        fail("out of memory");
    memcpy(prog, enosys, head * sizeof(*prog));
    memcpy(prog + head, body, n * sizeof(*prog));
    free(body);
    fprog = (struct sock_fprog){ .len = (unsigned short)(n + head), .filter = prog };
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) < 0)
        fail("seccomp(SECCOMP_SET_MODE_FILTER): %s", strerror(errno));
    free(prog);
}

static bool allow_like(uint32_t act)
{
    return act == SCMP_ACT_ALLOW || act == SCMP_ACT_LOG || (act & 0xffff0000U) == SCMP_ACT_TRACE(0);
}

/* ---- main -------------------------------------------------------------- */

static void usage(void)
{
    fputs("usage: contain [--caps=docker|podman] PROFILE.json PROGRAM ARGS...\n"
          "       contain --caps-only [--caps=docker|podman] PROGRAM ARGS...\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    uint64_t caps = engine_set(false);
    bool caps_only = false, root = geteuid() == 0;
    const char *path = NULL;
    int i = 1, last = cap_last(); /* read before a filter might refuse the open */

    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--caps-only") == 0)
            caps_only = true;
        else if (strcmp(argv[i], "--caps=docker") == 0)
            caps = engine_set(false);
        else if (strcmp(argv[i], "--caps=podman") == 0)
            caps = engine_set(true);
        else
            usage();
    }
    if (!caps_only && i < argc)
        path = argv[i++];
    if (i >= argc)
        usage();
    if (root && path && !cap_effective(CAP_SYS_ADMIN))
        fail("as root, needs CAP_SYS_ADMIN to load the filter without no_new_privs");
    if (root && !cap_effective(CAP_SETPCAP))
        fail("as root, needs CAP_SETPCAP to drop the bounding set");

    if (path) {
        json_error_t jerr;
        json_t *profile = json_load_file(path, 0, &jerr);
        struct profile p;
        scmp_filter_ctx ctx;

        if (!profile && jerr.line < 1) /* not read at all: the text names the file */
            fail("%s", jerr.text);
        if (!profile)
            fail("%s: line %d: %s", path, jerr.line, jerr.text);
        profile_init(&p, path, caps);
        ctx = filter_build(&p, profile);
        /* Docker leaves no_new_privs unset, so setuid programs still work in
         * its containers; without CAP_SYS_ADMIN the kernel requires it. */
        if (!root && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            fail("prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
        filter_load(&p, ctx, !allow_like(p.def_action));
        seccomp_release(ctx);
        json_decref(profile);
    }
    /* After the filter, as runc: loading it without no_new_privs needs the
     * CAP_SYS_ADMIN the container does not keep. */
    caps_drop_to(caps, root, last);

    execvp(argv[i], argv + i);
    fprintf(stderr, "contain: %s: %s\n", argv[i], strerror(errno));
    return 127;
}
