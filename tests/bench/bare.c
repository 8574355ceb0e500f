/* The floor under a whole run: the sandbox nsfence builds for `nsfence --
 * CMD` on its default policy in an empty directory, built by a bare program
 * that asks the kernel for the same work in the same order and nothing
 * else: the six namespaces and id maps, the same mounts, the placeholders,
 * lo, the endpoints, the command's capabilities and seccomp program. No
 * policy, no scan, no plan, no checks, no locks: the placeholders are
 * created and removed by name, lo comes up by ioctl (the host's, on a
 * socket init makes inside, as nsfence sends its RTM_NEWLINK) and the
 * seccomp program is a plain list of the same length. The set-up is held
 * on one CPU from the clone to the command, as nsfence holds it (the
 * command gets every CPU back), so its stages share a CPU as nsfence's do.
 * What nsfence takes beyond this is its own; what this takes beyond
 * `unshare -Urnmp --fork CMD` is what the sandbox costs the kernel here.
 *   bare [-t] CMD ARGS...   (in a directory of its own; root or not)
 * -t prints each stage's time to stderr in `nsfence --timings`' words.
 * Exits with CMD's status. Linked like nsfence (a static PIE, by lld, with
 * nsfence's order of functions: tests/bench/lib.sh), so that its exec and
 * its libc's code cost the same. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
    T_START,
    T_PLANNED,
    T_CLONED,
    T_FIXED,
    T_PREPARED,
    T_NETLINK,
    T_LOOPBACK,
    T_ENDPOINTS,
    T_MOUNTED,
    T_FILTERS,
    T_EXITED,
    T_DONE,
    T_N
};

/* nsfence's placeholders for an empty directory (`nsfence explain`); the
 * last only where HOME is that directory: nsfence then holds ~/.config,
 * where git's and its own global configs would be made. */
static const struct {
    const char *name;
    bool dir;
} ph[] = {
    { ".bashrc", false },     { ".bash_profile", false }, { ".zshrc", false },
    { ".zprofile", false },   { ".profile", false },      { ".gitconfig", false },
    { ".gitmodules", false }, { ".ripgreprc", false },    { ".mcp.json", false },
    { ".vscode", false },     { ".idea", false },         { "HEAD", false },
    { ".claude", true },      { ".git", true },           { ".config", true },
};
#define N_PH       (sizeof(ph) / sizeof(ph[0]))
#define FILTER_LEN 135 /* nsfence's program for the default policy */

static size_t n_ph = N_PH - 1; /* + ~/.config where HOME is the directory */

static double *times; /* shared with init */
/* As nsfence holds a run (src/spawn.c, cpus_hold): on the host side's CPU
 * from the clone until the command, which gets every CPU back. */
static cpu_set_t cpus;
static bool cpus_held;

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static _Noreturn void die(const char *what)
{
    fprintf(stderr, "bare: %s: %s\n", what, strerror(errno));
    _exit(125);
}

static void setattr(int mnt, unsigned set, unsigned flags)
{
    struct mount_attr a = { .attr_set = set };

    if (syscall(SYS_mount_setattr, mnt, "", AT_EMPTY_PATH | flags, &a, sizeof(a)) < 0)
        die("mount_setattr");
}

static void attach(int mnt, int dirfd, const char *path)
{
    if (syscall(SYS_move_mount, mnt, "", dirfd, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        die(path);
    close(mnt);
}

static int tree(int dirfd, const char *path, unsigned flags)
{
    int fd = (int)syscall(SYS_open_tree, dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | flags);

    if (fd < 0)
        die(path);
    return fd;
}

static int new_fs(const char *type, const char *mode, unsigned attr)
{
    int fs = (int)syscall(SYS_fsopen, type, FSOPEN_CLOEXEC), mnt;

    if (fs < 0 || (mode && syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0) ||
        syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        die(type);
    mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attr);
    if (mnt < 0)
        die(type);
    close(fs);
    return mnt;
}

static void send_fds(int sock, const int *fds, int n)
{
    char byte = 0, ctl[CMSG_SPACE(sizeof(int) * 4)] = { 0 };
    struct iovec iov = { &byte, 1 };
    struct msghdr m = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = ctl,
                        .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n) };
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);

    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
    if (sendmsg(sock, &m, 0) < 0)
        die("sendmsg");
}

/* The one descriptor of the next message on sock. */
static int recv_fd(int sock)
{
    char byte, ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { &byte, 1 };
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
    };
    struct cmsghdr *c;
    int fd;

    if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) <= 0 || !(c = CMSG_FIRSTHDR(&m)) ||
        c->cmsg_type != SCM_RIGHTS)
        die("recvmsg");
    memcpy(&fd, CMSG_DATA(c), sizeof(fd));
    return fd;
}

/* /dev as nsfence makes it: a tmpfs, six nodes bound from the host, the
 * links, devpts and /dev/shm, then read-only. */
static void make_dev(int root)
{
    static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
    static const char *const links[][2] = {
        { "fd", "/proc/self/fd" },       { "stdin", "/proc/self/fd/0" },
        { "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
        { "ptmx", "pts/ptmx" },          { "core", "/proc/kcore" }
    };
    char host[32];
    int dev;

    attach(new_fs("tmpfs", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC), root, "dev");
    if ((dev = openat(root, "dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        die("/dev");
    for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
        int mnt;

        snprintf(host, sizeof(host), "/dev/%s", nodes[i]);
        mnt = tree(AT_FDCWD, host, 0);
        setattr(mnt, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0);
        close(openat(dev, nodes[i], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666));
        attach(mnt, dev, nodes[i]);
    }
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
        if (symlinkat(links[i][1], dev, links[i][0]) < 0)
            die("symlink");
    if (mkdirat(dev, "pts", 0755) < 0 || mkdirat(dev, "shm", 0755) < 0)
        die("mkdir");
    {
        int fs = (int)syscall(SYS_fsopen, "devpts", FSOPEN_CLOEXEC), mnt;

        if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "newinstance", NULL, 0) < 0 ||
            syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0 ||
            syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0620", 0) < 0 ||
            syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
            (mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                                MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) < 0)
            die("devpts");
        close(fs);
        attach(mnt, dev, "pts");
    }
    attach(new_fs("tmpfs", "1777", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV), dev, "shm");
    setattr(dev, MOUNT_ATTR_RDONLY, 0);
    close(dev);
}

/* The new procfs in the root, /proc/keys and key-users masked, the parts
 * that reach the kernel read-only. */
static void place_proc(int root, int proc, int scratch)
{
    static const char *const masked[] = { "keys", "key-users" };
    static const char *const ro[] = { "sys", "sysrq-trigger", "irq", "bus" };
    int pfd;

    attach(proc, root, "proc");
    if ((pfd = openat(root, "proc", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        die("/proc");
    for (size_t i = 0; i < 2; i++) {
        int mnt = tree(scratch, "empty", 0);

        setattr(mnt, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC, 0);
        attach(mnt, pfd, masked[i]);
    }
    for (size_t i = 0; i < 4; i++) {
        int mnt;

        if (faccessat(pfd, ro[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
            continue; /* as nsfence: what this kernel lacks */
        mnt = tree(pfd, ro[i], AT_RECURSIVE);

        setattr(mnt, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC, AT_RECURSIVE);
        attach(mnt, pfd, ro[i]);
    }
    close(pfd);
}

static void endpoints(int sync)
{
    static const unsigned short ports[] = { 3128, 1080 };
    int fds[4], n = 0;

    for (int v6 = 0; v6 < 2; v6++)
        for (int p = 0; p < 2; p++) {
            struct sockaddr_in a4 = { .sin_family = AF_INET,
                                      .sin_port = htons(ports[p]),
                                      .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
            struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
                                       .sin6_port = htons(ports[p]),
                                       .sin6_addr = IN6ADDR_LOOPBACK_INIT };
            int s = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

            if (s < 0 ||
                (v6 ? bind(s, (struct sockaddr *)&a6, sizeof(a6))
                    : bind(s, (struct sockaddr *)&a4, sizeof(a4))) < 0 ||
                listen(s, 4096) < 0)
                die("endpoint");
            fds[n++] = s;
        }
    send_fds(sync, fds, n);
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

/* The command's start: every capability dropped, no_new_privs, a seccomp
 * program of nsfence's length with a listener handed to the host, exec. */
static _Noreturn void command(int sync, char **argv)
{
    struct sock_filter f[FILTER_LEN];
    struct sock_fprog prog = { .len = FILTER_LEN, .filter = f };
    int n = 0, listener;

    if (cpus_held && sched_setaffinity(0, sizeof(cpus), &cpus) < 0)
        die("sched_setaffinity");
    for (int cap = 0; cap <= 40; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
            die("capbset");
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ||
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        die("prctl");
    f[n++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    while (n < FILTER_LEN - 2) {
        /* Numbers no call has: the program's length is what costs. */
        f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1000u + (unsigned)n,
                                            (unsigned char)(FILTER_LEN - 2 - n), 0);
        n++;
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    listener =
        (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (listener < 0)
        die("seccomp");
    send_fds(sync, &listener, 1);
    close(listener);
    times[T_FILTERS] = now_us();
    execvp(argv[0], argv);
    die(argv[0]);
}

static _Noreturn void init(int sync, int status_fd, char **argv)
{
    char cwd[4096], byte;
    int proc, scratch, root, st;
    pid_t cmd;

    if (read(sync, &byte, 1) != 1)
        _exit(125);
    if (!getcwd(cwd, sizeof(cwd)))
        die("getcwd");
    /* The fixed part: private, a new procfs, the scratch over /proc, the
     * host's root copied read-only, /dev, /proc, /tmp, the write root. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        die("private");
    proc = new_fs("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    scratch = new_fs("tmpfs", "0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (mkdirat(scratch, "root", 0755) < 0)
        die("scratch");
    close(openat(scratch, "empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444));
    if (syscall(SYS_move_mount, scratch, "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH) < 0)
        die("scratch");
    root = tree(AT_FDCWD, "/", AT_RECURSIVE);
    setattr(root, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, AT_RECURSIVE);
    attach(root, scratch, "root");
    if ((root = openat(scratch, "root", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        die("root");
    make_dev(root);
    place_proc(root, proc, scratch);
    attach(new_fs("tmpfs", "1777", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV), root, "tmp");
    {
        int w = tree(AT_FDCWD, cwd, AT_RECURSIVE);

        setattr(w, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, AT_RECURSIVE);
        attach(w, root, cwd + 1);
    }
    times[T_FIXED] = now_us();
    /* A socket inside, for the host to bring lo up on, as nsfence does. */
    {
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        if (s < 0)
            die("lo");
        send_fds(sync, &s, 1);
        close(s);
    }
    /* lo is up: the endpoints, then the rest: one read-only bind per
     * placeholder, then the pivot. */
    if (read(sync, &byte, 1) != 1)
        _exit(125);
    endpoints(sync);
    times[T_ENDPOINTS] = now_us();
    for (size_t i = 0; i < n_ph; i++) {
        char path[4200];
        int mnt;

        snprintf(path, sizeof(path), "%s/%s", cwd, ph[i].name);
        mnt = tree(AT_FDCWD, path, 0);
        setattr(mnt, MOUNT_ATTR_RDONLY, 0);
        attach(mnt, root, path + 1);
    }
    if (fchdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
        chdir(cwd) < 0)
        die("pivot_root");
    close(root);
    close(scratch);
    times[T_MOUNTED] = now_us();
    /* As nsfence starts it: sharing init's memory until it execs. */
    cmd = vfork();
    if (cmd < 0)
        die("vfork");
    if (cmd == 0)
        command(sync, argv);
    if (waitpid(cmd, &st, 0) < 0)
        die("waitpid");
    byte = WIFEXITED(st) ? (char)WEXITSTATUS(st) : (char)125;
    if (write(status_fd, &byte, 1) != 1)
        die("status");
    _exit(0);
}

int main(int argc, char **argv)
{
    bool show = argc > 1 && strcmp(argv[1], "-t") == 0;
    int sv[2], status[2], dir, fds[4];
    char ids[64] = "0 0 4294967295\n", path[64], byte = 0, ctl[CMSG_SPACE(sizeof(int) * 4)];
    bool made[N_PH] = { false };
    pid_t pid;

    argv += 1 + show;
    if (!argv[0]) {
        fprintf(stderr, "usage: bare [-t] CMD ARGS...\n");
        return 2;
    }
    times =
        mmap(NULL, sizeof(double) * T_N, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (times == MAP_FAILED)
        die("mmap");
    times[T_START] = now_us();
    {
        const char *home = getenv("HOME");
        struct stat h, d;

        if (home && stat(home, &h) == 0 && stat(".", &d) == 0 && h.st_dev == d.st_dev &&
            h.st_ino == d.st_ino)
            n_ph = N_PH;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
        pipe2(status, O_CLOEXEC) < 0)
        die("socketpair");
    times[T_PLANNED] = now_us();
    if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 1) {
        cpu_set_t one;
        int cpu = sched_getcpu();

        CPU_ZERO(&one);
        if (cpu >= 0) {
            CPU_SET(cpu, &one);
            cpus_held = sched_setaffinity(0, sizeof(one), &one) == 0;
        }
    }
    pid = (pid_t)syscall(SYS_clone,
                         CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC |
                             CLONE_NEWUTS | SIGCHLD,
                         NULL, NULL, NULL, 0UL);
    if (pid < 0)
        die("clone");
    if (pid == 0) {
        close(sv[0]);
        close(status[0]);
        init(sv[1], status[1], argv);
    }
    close(sv[1]);
    close(status[1]);
    /* As nsfence maps them: every id to itself as root, else the caller's. */
    for (int m = getuid() ? 0 : 1; m < 3; m++) {
        static const char *const file[] = { "setgroups", "uid_map", "gid_map" };
        int fd;

        if (getuid())
            snprintf(ids, sizeof(ids), m == 0 ? "deny" : "%u %u 1\n", m == 1 ? getuid() : getgid(),
                     m == 1 ? getuid() : getgid());
        snprintf(path, sizeof(path), "/proc/%d/%s", pid, file[m]);
        if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0 || write(fd, ids, strlen(ids)) < 0)
            die(path);
        close(fd);
    }
    times[T_CLONED] = now_us();
    if (write(sv[0], &byte, 1) != 1)
        die("go");
    /* Meanwhile: the placeholders. */
    if ((dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        die(".");
    for (size_t i = 0; i < n_ph; i++) {
        int fd = ph[i].dir ? mkdirat(dir, ph[i].name, 0755)
                           : openat(dir, ph[i].name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);

        /* One that exists (a repository's .git) is bound as it is. */
        if (fd < 0 && errno != EEXIST)
            die("placeholder");
        if (!ph[i].dir && fd >= 0)
            close(fd);
        made[i] = fd >= 0;
    }
    times[T_PREPARED] = now_us();
    /* lo up through init's socket (the namespace is the socket's; the host,
     * the user namespace's owner, may change it). */
    {
        struct ifreq ifr = { .ifr_name = "lo" };
        int s = recv_fd(sv[0]);

        times[T_NETLINK] = now_us();
        if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
            die("lo");
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
            die("lo");
        close(s);
    }
    times[T_LOOPBACK] = now_us();
    if (write(sv[0], &byte, 1) != 1)
        die("prepared");
    /* The endpoints, then the command's listener, arrive. */
    for (int k = 0; k < 2; k++) {
        struct iovec iov = { &byte, 1 };
        struct msghdr m = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
        };

        if (recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC) <= 0)
            break;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

            memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)n);
            for (int i = 0; i < n; i++)
                close(fds[i]);
        }
    }
    if (read(status[0], &byte, 1) != 1)
        byte = 125;
    times[T_EXITED] = now_us();
    /* init reaped first, as nsfence does: the placeholders are then no
     * longer mount points in the sandbox's namespace. */
    if (waitpid(pid, NULL, 0) < 0)
        die("waitpid");
    for (size_t i = 0; i < n_ph; i++)
        if (made[i] && unlinkat(dir, ph[i].name, ph[i].dir ? AT_REMOVEDIR : 0) < 0)
            die("placeholder");
    times[T_DONE] = now_us();
    if (show) {
        static const struct {
            const char *name;
            int from, to;
        } rows[] = {
            { "policy and plan", T_START, T_PLANNED },
            { "clone and id maps", T_PLANNED, T_CLONED },
            { "mounts (fixed part)", T_CLONED, T_FIXED },
            { "host: placeholders", T_CLONED, T_PREPARED },
            { "lo", T_NETLINK, T_LOOPBACK },
            { "endpoints", T_LOOPBACK, T_ENDPOINTS },
            { "mounts (the rest)", T_ENDPOINTS, T_MOUNTED },
            { "filters", T_MOUNTED, T_FILTERS },
            { "command", T_FILTERS, T_EXITED },
            { "teardown", T_EXITED, T_DONE },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
            fprintf(stderr, "bare: timing %-24s %8.0f us\n", rows[i].name,
                    times[rows[i].to] - times[rows[i].from]);
    }
    return (unsigned char)byte;
}
