/* What the kernel itself charges on this machine for the operations a
 * sandboxed run is made of: the floor under each stage of `nsfence
 * --timings`, measured without nsfence. Run as root (it makes namespaces
 * and mounts in them).
 *   floors [-q]
 *   floors [-q] walk DIR DEPTH   (the scan's floor in DIR: see walk_floor)
 *   floors [-q] observer         (the write observer's floors alone)
 * Prints "NAME MEDIAN_US" lines (-q: fewer rounds). Every figure is the
 * median of its rounds; each round times one operation or a batch of them
 * (per-operation figures are the batch divided by its size). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS _IOW('!', 4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1
#endif

#define MAX_ROUNDS 401
#define PAGES      64

static int rounds = 101;

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void report(const char *name, double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    printf("%s %.1f\n", name, v[n / 2]);
    fflush(stdout);
}

static _Noreturn void die(const char *what)
{
    fprintf(stderr, "floors: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void reap(pid_t p)
{
    int st;

    if (waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("child failed");
}

/* One system call that does nothing: the price of entering the kernel. */
static void syscall_floor(void)
{
    double v[MAX_ROUNDS];

    for (int r = 0; r < rounds; r++) {
        double t = now_us();

        for (int i = 0; i < 1000; i++)
            (void)syscall(SYS_getppid);
        v[r] = (now_us() - t) / 1000;
    }
    report("syscall", v, rounds);
}

/* A first write to an anonymous page (a new zeroed page), and a write to a
 * page shared with the parent after fork (a copy). */
static void fault_floor(void)
{
    double zero[MAX_ROUNDS], cow[MAX_ROUNDS];
    int fds[2];

    if (pipe(fds) < 0)
        die("pipe");
    for (int r = 0; r < rounds; r++) {
        char *p =
            mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        double t;
        pid_t c;

        if (p == MAP_FAILED)
            die("mmap");
        t = now_us();
        for (int i = 0; i < PAGES; i++)
            p[i * 4096] = 1;
        zero[r] = (now_us() - t) / PAGES;
        c = fork();
        if (c < 0)
            die("fork");
        if (c == 0) {
            double u = now_us();

            for (int i = 0; i < PAGES; i++)
                p[i * 4096] = 2;
            u = (now_us() - u) / PAGES;
            _exit(write(fds[1], &u, sizeof(u)) == sizeof(u) ? 0 : 1);
        }
        reap(c);
        if (read(fds[0], &cow[r], sizeof(cow[r])) != sizeof(cow[r]))
            die("read");
        munmap(p, PAGES * 4096);
    }
    close(fds[0]);
    close(fds[1]);
    report("page_fault_zero", zero, rounds);
    report("page_fault_cow", cow, rounds);
}

/* clone with FLAGS, the child exits at once: the clone call, and from its
 * return to the child reaped (the child's exit, its namespaces' teardown). */
static void clone_floor(const char *name, int flags)
{
    double c[MAX_ROUNDS], x[MAX_ROUNDS];
    char cn[64], xn[64];

    for (int r = 0; r < rounds; r++) {
        double t0 = now_us(), t1;
        pid_t p = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0UL);

        if (p < 0)
            die("clone");
        if (p == 0)
            _exit(0);
        t1 = now_us();
        reap(p);
        c[r] = t1 - t0;
        x[r] = now_us() - t1;
    }
    snprintf(cn, sizeof(cn), "clone_%s", name);
    snprintf(xn, sizeof(xn), "exit_reap_%s", name);
    report(cn, c, rounds);
    report(xn, x, rounds);
}

/* A bind mount of a file onto a file, in a mount namespace of its own, as
 * nsfence binds each protected name: open_tree(CLONE), mount_setattr(RDONLY),
 * move_mount. */
static void mount_floor(void)
{
    double v[MAX_ROUNDS];
    char dir[] = "/tmp/nsfence-floors.XXXXXX";
    int fds[2];
    pid_t c;

    /* Made here, removed here once the child (whose tmpfs over it goes
     * with its mount namespace) is gone. */
    if (pipe(fds) < 0 || !mkdtemp(dir))
        die("pipe");
    c = fork();
    if (c < 0)
        die("fork");
    if (c == 0) {
        char src[64], dst[64];
        struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };

        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("floors", dir, "tmpfs", 0, NULL) < 0)
            die("mount namespace");
        snprintf(src, sizeof(src), "%s/src", dir);
        for (int i = 0; i < 32; i++) {
            snprintf(dst, sizeof(dst), "%s/f%d", dir, i);
            close(open(dst, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        }
        close(open(src, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        for (int r = 0; r < rounds; r++) {
            double t = now_us();

            for (int i = 0; i < 32; i++) {
                int tree =
                    (int)syscall(SYS_open_tree, AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

                snprintf(dst, sizeof(dst), "%s/f%d", dir, i);
                if (tree < 0 ||
                    syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0 ||
                    syscall(SYS_move_mount, tree, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                    die("bind");
                close(tree);
            }
            v[r] = (now_us() - t) / 32;
            for (int i = 0; i < 32; i++) {
                snprintf(dst, sizeof(dst), "%s/f%d", dir, i);
                if (umount2(dst, MNT_DETACH) < 0)
                    die("umount");
            }
        }
        _exit(write(fds[1], v, sizeof(double) * (size_t)rounds) ==
                      (ssize_t)(sizeof(double) * (size_t)rounds)
                  ? 0
                  : 1);
    }
    if (read(fds[0], v, sizeof(double) * (size_t)rounds) !=
        (ssize_t)(sizeof(double) * (size_t)rounds))
        die("read");
    reap(c);
    if (rmdir(dir) < 0)
        die("rmdir");
    close(fds[0]);
    close(fds[1]);
    report("bind_mount_ro", v, rounds);
}

/* In a child with new user, mount and network namespaces (as nsfence's
 * init), once each: making the copied mount tree private; copying the whole
 * root (open_tree, recursive) and dropping the copy again, as init drops the
 * host's tree after pivot_root; bringing lo up. */
static void ns_setup_floor(void)
{
    double v[3][MAX_ROUNDS];
    size_t sz = sizeof(double) * 3;

    for (int r = 0; r < rounds; r++) {
        int fds[2];
        double got[3];
        pid_t c;

        if (pipe(fds) < 0)
            die("pipe");
        c = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | SIGCHLD, NULL,
                           NULL, NULL, 0UL);
        if (c < 0)
            die("clone");
        if (c == 0) {
            struct ifreq ifr = { .ifr_name = "lo" };
            double t, out[3];
            int tree, s;

            t = now_us();
            if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                _exit(1);
            out[0] = now_us() - t;
            t = now_us();
            tree = (int)syscall(SYS_open_tree, AT_FDCWD, "/",
                                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
            if (tree < 0)
                _exit(1);
            close(tree);
            out[1] = now_us() - t;
            s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            t = now_us();
            if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
                _exit(1);
            ifr.ifr_flags |= IFF_UP;
            if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
                _exit(1);
            out[2] = now_us() - t;
            _exit(write(fds[1], out, sz) == (ssize_t)sz ? 0 : 1);
        }
        close(fds[1]);
        if (read(fds[0], got, sz) != (ssize_t)sz)
            die("read");
        close(fds[0]);
        reap(c);
        for (int k = 0; k < 3; k++)
            v[k][r] = got[k];
    }
    report("mount_private_tree", v[0], rounds);
    report("copy_and_drop_root", v[1], rounds);
    report("lo_up", v[2], rounds);
}

static void pin_to(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) < 0)
        die("sched_setaffinity");
}

/* Two processes waking each other through a pipe: one round trip, two
 * wake-ups, as every host/init hand-over and every proxied hop pays. Where
 * the scheduler puts them, then both held on one CPU (as nsfence holds its
 * set-up), then each on a CPU of its own (parent_cpu, child_cpu: -1 leaves
 * them free). */
static void wakeup_floor(const char *name, int parent_cpu, int child_cpu)
{
    double v[MAX_ROUNDS];
    cpu_set_t saved;
    int a[2], b[2];
    pid_t c;
    char x = 0;

    if (sched_getaffinity(0, sizeof(saved), &saved) < 0 || pipe(a) < 0 || pipe(b) < 0)
        die("pipe");
    c = fork();
    if (c < 0)
        die("fork");
    if (c == 0) {
        if (child_cpu >= 0)
            pin_to(child_cpu);
        close(a[1]);
        close(b[0]);
        while (read(a[0], &x, 1) == 1)
            if (write(b[1], &x, 1) != 1)
                _exit(1);
        _exit(0);
    }
    if (parent_cpu >= 0)
        pin_to(parent_cpu);
    close(a[0]);
    close(b[1]);
    for (int r = 0; r < rounds; r++) {
        double t = now_us();

        for (int i = 0; i < 100; i++)
            if (write(a[1], &x, 1) != 1 || read(b[0], &x, 1) != 1)
                die("ping");
        v[r] = (now_us() - t) / 100;
    }
    close(a[1]);
    reap(c);
    close(b[0]);
    if (sched_setaffinity(0, sizeof(saved), &saved) < 0)
        die("sched_setaffinity");
    report(name, v, rounds);
}

/* A new TCP connection on loopback and one one-byte round trip over it,
 * server and client in two processes: what one proxy hop adds at least. */
static void tcp_floor(void)
{
    struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(in);
    double v[MAX_ROUNDS];
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    pid_t c;

    if (l < 0 || bind(l, (struct sockaddr *)&in, sizeof(in)) < 0 || listen(l, 64) < 0 ||
        getsockname(l, (struct sockaddr *)&in, &len) < 0)
        die("listen");
    c = fork();
    if (c < 0)
        die("fork");
    if (c == 0) {
        for (int r = 0; r < rounds; r++) {
            int s = accept(l, NULL, NULL);
            char x;

            if (s < 0 || read(s, &x, 1) != 1 || write(s, &x, 1) != 1)
                _exit(1);
            close(s);
        }
        _exit(0);
    }
    for (int r = 0; r < rounds; r++) {
        double t = now_us();
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        char x = 1;

        if (s < 0 || connect(s, (struct sockaddr *)&in, sizeof(in)) < 0 || write(s, &x, 1) != 1 ||
            read(s, &x, 1) != 1)
            die("connect");
        v[r] = now_us() - t;
        close(s);
    }
    reap(c);
    close(l);
    report("tcp_connect_round_trip", v, rounds);
}

/* A trapped system call answered CONTINUE by a supervisor waiting in
 * epoll_wait, with the one-CPU hand-over nsfence asks for: the write
 * observer's floor. Measured twice:
 * - back to back: the caller traps again at once, and the supervisor often
 *   finds the next notification before it has gone to sleep;
 * - as an untar traps: between its two trapped calls per file (the create,
 *   the time set through the descriptor) an untar makes a write, an fchown
 *   and an fchmod, so the supervisor has gone idle before each notification,
 *   and the hand-over costs more (less when another process keeps the other
 *   CPU busy). The figure is what the trap adds: the same calls in the same
 *   process, with an untrapped call in the trapped one's place, are
 *   subtracted.
 * Then what the observer reads per call from the stopped caller: its path
 * (process_vm_readv) and its working directory (readlink /proc/PID/cwd). */
enum { NOTIFY_CALLS = 100 };

/* The caller's side: one batch per byte read from sock, of the kind the byte
 * names; a byte back when done. getppid is the trapped call. */
static void notify_caller(int sock)
{
    int fd = memfd_create("floor", MFD_CLOEXEC);
    char x;

    if (fd < 0)
        _exit(1);
    while (read(sock, &x, 1) == 1) {
        for (int i = 0; i < NOTIFY_CALLS; i++) {
            (void)syscall(x == 'p' ? SYS_getpid : SYS_getppid);
            if (x == 'b')
                continue;
            if (pwrite(fd, "x", 1, 0) != 1 || fchown(fd, (uid_t)-1, (gid_t)-1) < 0 ||
                fchmod(fd, 0600) < 0)
                _exit(1);
        }
        if (write(sock, &x, 1) != 1)
            _exit(1);
    }
    _exit(0);
}

static void notify_floor(void)
{
    double v[MAX_ROUNDS], u[MAX_ROUNDS], m[MAX_ROUNDS], l[MAX_ROUNDS];
    struct seccomp_notif *req;
    struct seccomp_notif_resp *resp;
    int sv[2], ep, fd = -1;
    struct epoll_event ev = { .events = EPOLLIN };
    pid_t c;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        die("socketpair");
    c = fork();
    if (c < 0)
        die("fork");
    if (c == 0) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        char x = 0, cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
        struct iovec io = { .iov_base = &x, .iov_len = 1 };
        struct msghdr mh = {
            .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)
        };
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

        close(sv[0]);
        if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(getppid), 0) < 0 ||
            seccomp_load(ctx) < 0)
            _exit(1);
        fd = seccomp_notify_fd(ctx);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof(int));
        if (sendmsg(sv[1], &mh, 0) != 1)
            _exit(1);
        close(fd);
        notify_caller(sv[1]);
    }
    {
        char x, cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec io = { .iov_base = &x, .iov_len = 1 };
        struct msghdr mh = {
            .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)
        };

        if (recvmsg(sv[0], &mh, 0) != 1 || !CMSG_FIRSTHDR(&mh))
            die("recvmsg");
        memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
    }
    (void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ||
        seccomp_notify_alloc(&req, &resp) < 0)
        die("epoll");
    for (int r = 0; r < rounds; r++) {
        double t[3];

        for (int k = 0; k < 3; k++) {
            char x = "bup"[k];
            double t0 = now_us();

            if (write(sv[0], &x, 1) != 1)
                die("write");
            for (int i = 0; x != 'p' && i < NOTIFY_CALLS; i++) {
                struct epoll_event out;

                if (epoll_wait(ep, &out, 1, -1) != 1)
                    die("epoll_wait");
                memset(req, 0, sizeof(*req));
                if (seccomp_notify_receive(fd, req) < 0)
                    die("receive");
                memset(resp, 0, sizeof(*resp));
                resp->id = req->id;
                resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
                if (seccomp_notify_respond(fd, resp) < 0)
                    die("respond");
            }
            if (read(sv[0], &x, 1) != 1)
                die("read");
            t[k] = (now_us() - t0) / NOTIFY_CALLS;
        }
        v[r] = t[0];
        u[r] = t[1] - t[2];
    }
    for (int r = 0; r < rounds; r++) {
        char out[4096], link[64];
        static char path[256] = "a/path/the/caller/named";
        struct iovec lo = { .iov_base = out, .iov_len = sizeof(path) };
        struct iovec re = { .iov_base = path, .iov_len = sizeof(path) };
        double t = now_us();

        /* path is at the same address in the caller, a fork of this process */
        for (int i = 0; i < 100; i++)
            if (process_vm_readv(c, &lo, 1, &re, 1, 0) != (ssize_t)sizeof(path))
                die("process_vm_readv");
        m[r] = (now_us() - t) / 100;
        snprintf(link, sizeof(link), "/proc/%d/cwd", (int)c);
        t = now_us();
        for (int i = 0; i < 100; i++)
            if (readlink(link, out, sizeof(out)) < 0)
                die("readlink");
        l[r] = (now_us() - t) / 100;
    }
    close(sv[0]); /* the caller's read ends: it exits */
    reap(c);
    seccomp_notify_free(req, resp);
    close(ep);
    close(fd);
    close(sv[1]);
    report("notify_round_trip", v, rounds);
    report("notify_between_calls", u, rounds);
    report("process_vm_readv", m, rounds);
    report("readlink_proc_cwd", l, rounds);
}

/* Reads the directory fd and every directory below it down to depth
 * (fd itself: level 0), names and types only, as the plan's scan for protected
 * names reads a write root; .git and node_modules are not entered. Returns
 * the entries seen. */
static unsigned long walk(int fd, unsigned level, unsigned depth)
{
    /* getdents64 straight, as the scan reads: no fdopendir. */
    char *buf = malloc(16384);
    unsigned long n = 0;
    ssize_t got;

    if (!buf)
        die("malloc");
    while ((got = getdents64(fd, buf, 16384)) > 0) {
        for (ssize_t pos = 0; pos < got;) {
            struct dirent64 *e = (struct dirent64 *)(void *)(buf + pos);
            int cfd;

            pos += e->d_reclen;
            n++;
            if (e->d_type != DT_DIR || level + 1 >= depth || strcmp(e->d_name, ".") == 0 ||
                strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, ".git") == 0 ||
                strcmp(e->d_name, "node_modules") == 0)
                continue;
            cfd = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd >= 0)
                n += walk(cfd, level + 1, depth);
        }
    }
    free(buf);
    close(fd);
    return n;
}

/* floors walk DIR DEPTH: the scan's floor in DIR, alone. */
static int walk_floor(const char *dir, unsigned depth)
{
    double *v = calloc((size_t)rounds, sizeof(*v));

    if (!v)
        die("calloc");
    for (int r = 0; r < rounds; r++) {
        double t0 = now_us();
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
            die(dir);
        (void)walk(fd, 0, depth);
        v[r] = now_us() - t0;
    }
    report("walk", v, rounds);
    free(v);
    return 0;
}

int main(int argc, char **argv)
{
    const int all =
        CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;

    if (argc > 1 && strcmp(argv[1], "-q") == 0) {
        rounds = 21;
        argc--;
        argv++;
    }
    if (argc == 4 && strcmp(argv[1], "walk") == 0)
        return walk_floor(argv[2], (unsigned)atoi(argv[3]));
    if (argc == 2 && strcmp(argv[1], "observer") == 0) {
        notify_floor();
        return 0;
    }
    syscall_floor();
    fault_floor();
    clone_floor("plain", 0);
    clone_floor("unshare_Urnmp", CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID);
    clone_floor("nsfence_six", all);
    clone_floor("six_but_net", all & ~CLONE_NEWNET);
    mount_floor();
    ns_setup_floor();
    wakeup_floor("wakeup_round_trip", -1, -1);
    {
        cpu_set_t set;
        int cpu[2], n = 0;

        if (sched_getaffinity(0, sizeof(set), &set) < 0)
            die("sched_getaffinity");
        for (int i = 0; i < CPU_SETSIZE && n < 2; i++)
            if (CPU_ISSET(i, &set))
                cpu[n++] = i;
        if (n == 2) {
            wakeup_floor("wakeup_one_cpu", cpu[0], cpu[0]);
            wakeup_floor("wakeup_two_cpus", cpu[0], cpu[1]);
        }
    }
    tcp_floor();
    notify_floor();
    return 0;
}
