/* The hostile command of Landlock mode's tests: each operation is one
 * attack, made with the exact system call (no libc wrapper choosing another
 * one), and prints "OP ok" or "OP ERRNO-NAME":
 *   llattack open PATH FLAGS           FLAGS: comma list of rd wr rdwr creat excl trunc
 *                                      append nofollow dsync; writes a line when writable
 *   llattack reopen PATH path|rdonly proc|devfd
 *                                      reopen an O_PATH or read-only descriptor for writing
 *   llattack fd PATH OP                on a read-only descriptor of PATH: fchmod fchown
 *                                      fsetxattr fremovexattr futimens emptychown emptyutime
 *                                      emptychmod2 dsync-reopen
 *   llattack tmpfile DIR NEW empty|proc
 *                                      an O_TMPFILE in DIR, linked as NEW
 *   llattack exchange A B              renameat2(RENAME_EXCHANGE)
 *   llattack mknod PATH fifo|reg|chr
 *   llattack race-open GOOD BAD MS     a thread flips the path between GOOD and BAD while
 *                                      open(O_WRONLY|O_CREAT|O_APPEND) runs for MS ms
 *   llattack uring-open PATH           io_uring's OPENAT (O_WRONLY|O_APPEND), then a write
 *   llattack connect ADDR PORT tcp|mptcp|sctp
 *   llattack race-connect ADDR PORT MS tcp|mptcp
 *                                      a thread flips the address between a unix one and
 *                                      ADDR:PORT while connect runs for MS ms
 *   llattack udp ADDR PORT             sendto on a datagram socket
 *   llattack fastopen ADDR PORT        sendto(MSG_FASTOPEN)
 *   llattack sigio PID                 F_SETOWN PID + O_ASYNC on a pipe, then a write
 *   llattack ptrace PID                PTRACE_ATTACH
 *   llattack helper-mem                open the helper's /proc/PID/mem for writing
 * Nothing here runs outside a test's own directories and addresses. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

static int report(const char *op, long rc)
{
    if (rc < 0)
        printf("%s %s\n", op, strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
    else
        printf("%s ok\n", op);
    fflush(stdout);
    return rc < 0;
}

static int parse_flags(const char *s)
{
    static const struct {
        const char *name;
        int flag;
    } names[] = { { "rd", O_RDONLY },      { "wr", O_WRONLY },         { "rdwr", O_RDWR },
                  { "creat", O_CREAT },    { "excl", O_EXCL },         { "trunc", O_TRUNC },
                  { "append", O_APPEND },  { "nofollow", O_NOFOLLOW }, { "dsync", O_DSYNC },
                  { "tmpfile", O_TMPFILE } };
    char *dup = strdup(s), *save = NULL;
    int flags = 0;

    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save))
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (strcmp(names[i].name, t) == 0)
                flags |= names[i].flag;
    free(dup);
    return flags;
}

static long write_line(int fd)
{
    return write(fd, "llattack\n", 9);
}

static long do_open(const char *path, const char *flags)
{
    int f = parse_flags(flags);
    long fd = syscall(SYS_openat, AT_FDCWD, path, f, 0644);

    if (fd >= 0 && (f & O_ACCMODE) != O_RDONLY)
        return write_line((int)fd);
    return fd;
}

static long do_reopen(const char *path, const char *how, const char *via)
{
    int fd = open(path, strcmp(how, "path") == 0 ? O_PATH : O_RDONLY);
    char p[64];
    long w;

    if (fd < 0)
        return -1;
    snprintf(p, sizeof(p), "%s/%d", strcmp(via, "devfd") == 0 ? "/dev/fd" : "/proc/self/fd", fd);
    w = syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_APPEND, 0);
    return w < 0 ? -1 : write_line((int)w);
}

static long do_fd(const char *path, const char *op)
{
    int fd = open(path, O_RDONLY);
    struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

    if (fd < 0)
        return -1;
    if (strcmp(op, "fchmod") == 0)
        return syscall(SYS_fchmod, fd, 0777);
    if (strcmp(op, "fchown") == 0)
        return syscall(SYS_fchown, fd, getuid(), getgid());
    if (strcmp(op, "fsetxattr") == 0)
        return syscall(SYS_fsetxattr, fd, "user.llattack", "x", 1, 0);
    if (strcmp(op, "fremovexattr") == 0)
        return syscall(SYS_fremovexattr, fd, "user.llattack");
    if (strcmp(op, "futimens") == 0)
        return syscall(SYS_utimensat, fd, NULL, ts, 0);
    if (strcmp(op, "emptychown") == 0)
        return syscall(SYS_fchownat, fd, "", getuid(), getgid(), AT_EMPTY_PATH);
    if (strcmp(op, "emptyutime") == 0)
        return syscall(SYS_utimensat, fd, "", ts, AT_EMPTY_PATH);
    if (strcmp(op, "emptychmod2") == 0)
        return syscall(452 /* fchmodat2 */, fd, "", 0777, AT_EMPTY_PATH);
    if (strcmp(op, "dsync-reopen") == 0) {
        /* O_DSYNC is AT_EMPTY_PATH's bit: an empty path on a descriptor. */
        long w = syscall(SYS_openat, fd, "", O_WRONLY | O_APPEND | O_DSYNC, 0);

        return w < 0 ? -1 : write_line((int)w);
    }
    fprintf(stderr, "llattack: unknown fd op %s\n", op);
    exit(2);
}

static long do_tmpfile(const char *dir, const char *newpath, const char *how)
{
    int fd = open(dir, O_TMPFILE | O_WRONLY, 0644);
    char p[64];

    if (fd < 0)
        return -1;
    if (write_line(fd) < 0)
        return -1;
    if (strcmp(how, "empty") == 0)
        return syscall(SYS_linkat, fd, "", AT_FDCWD, newpath, AT_EMPTY_PATH);
    snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
    return syscall(SYS_linkat, AT_FDCWD, p, AT_FDCWD, newpath, AT_SYMLINK_FOLLOW);
}

static long do_mknod(const char *path, const char *kind)
{
    mode_t m = strcmp(kind, "fifo") == 0 ? S_IFIFO : strcmp(kind, "chr") == 0 ? S_IFCHR : S_IFREG;

    return syscall(SYS_mknodat, AT_FDCWD, path, m | 0644, m == S_IFCHR ? makedev(1, 3) : 0);
}

/* The TOCTOU attacker: the path the call was made with changes under it. */
struct flip {
    char *buf;
    const char *a, *b;
    size_t len;
    atomic_int stop;
};

static void *flipper(void *arg)
{
    struct flip *f = arg;

    while (!atomic_load(&f->stop)) {
        memcpy(f->buf, f->b, f->len);
        memcpy(f->buf, f->a, f->len);
    }
    return NULL;
}

static long now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static long do_race_open(const char *good, const char *bad, long ms)
{
    size_t len = strlen(good) > strlen(bad) ? strlen(good) + 1 : strlen(bad) + 1;
    char *a = calloc(1, len), *b = calloc(1, len), *buf = calloc(1, len);
    struct flip f = { .buf = buf, .a = a, .b = b, .len = len };
    pthread_t t;
    long end = now_ms() + ms, opened = 0;

    strcpy(a, good);
    strcpy(b, bad);
    memcpy(buf, a, len);
    pthread_create(&t, NULL, flipper, &f);
    while (now_ms() < end) {
        long fd = syscall(SYS_openat, AT_FDCWD, buf, O_WRONLY | O_CREAT | O_APPEND, 0644);

        if (fd >= 0) {
            opened++;
            write_line((int)fd);
            close((int)fd);
        }
    }
    atomic_store(&f.stop, 1);
    pthread_join(t, NULL);
    printf("race-open opened %ld\n", opened);
    return 0;
}

static int inet_addr_of(const char *addr, unsigned port, struct sockaddr_storage *ss,
                        socklen_t *len)
{
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

    memset(ss, 0, sizeof(*ss));
    if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        *len = sizeof(*in);
        return AF_INET;
    }
    if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*in6);
        return AF_INET6;
    }
    fprintf(stderr, "llattack: bad address %s\n", addr);
    exit(2);
}

static int proto_of(const char *p)
{
    return strcmp(p, "mptcp") == 0 ? IPPROTO_MPTCP : strcmp(p, "sctp") == 0 ? IPPROTO_SCTP : 0;
}

static long do_connect(const char *addr, unsigned port, const char *proto)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int fam = inet_addr_of(addr, port, &ss, &len);
    int s = socket(fam, SOCK_STREAM, proto_of(proto));

    if (s < 0)
        exit(report("socket", -1));
    return connect(s, (struct sockaddr *)&ss, len);
}

static long do_race_connect(const char *addr, unsigned port, long ms, const char *proto)
{
    struct sockaddr_storage in, un = { 0 }, buf;
    socklen_t len;
    int fam = inet_addr_of(addr, port, &in, &len);
    struct sockaddr_un *u = (struct sockaddr_un *)&un;
    struct flip f = { .buf = (char *)&buf, .a = (char *)&un, .b = (char *)&in, .len = sizeof(buf) };
    pthread_t t;
    long end = now_ms() + ms, won = 0, tries = 0;

    u->sun_family = AF_UNIX;
    strcpy(u->sun_path, "/nonexistent/llattack.sock");
    memcpy(&buf, &un, sizeof(buf));
    pthread_create(&t, NULL, flipper, &f);
    while (now_ms() < end && !won) {
        int s = socket(fam, SOCK_STREAM, proto_of(proto));

        if (s < 0) {
            atomic_store(&f.stop, 1);
            pthread_join(t, NULL);
            return report("socket", -1), -1;
        }
        tries++;
        if (connect(s, (struct sockaddr *)&buf, sizeof(struct sockaddr_un)) == 0) {
            struct sockaddr_storage peer;
            socklen_t pl = sizeof(peer);

            if (getpeername(s, (struct sockaddr *)&peer, &pl) == 0 && peer.ss_family == fam)
                won = 1;
        }
        close(s);
    }
    atomic_store(&f.stop, 1);
    pthread_join(t, NULL);
    printf("race-connect %s after %ld tries\n", won ? "connected" : "never-connected", tries);
    return 0;
}

static long do_udp(const char *addr, unsigned port)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int fam = inet_addr_of(addr, port, &ss, &len);
    int s = socket(fam, SOCK_DGRAM, 0);

    if (s < 0)
        return -1;
    return sendto(s, "x", 1, 0, (struct sockaddr *)&ss, len);
}

static long do_fastopen(const char *addr, unsigned port)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int fam = inet_addr_of(addr, port, &ss, &len);
    int s = socket(fam, SOCK_STREAM, 0);

    if (s < 0)
        return -1;
    return sendto(s, "GET / HTTP/1.0\r\n\r\n", 18, MSG_FASTOPEN, (struct sockaddr *)&ss, len);
}

static long do_sigio(pid_t pid)
{
    int p[2];

    if (pipe(p) < 0)
        return -1;
    if (fcntl(p[0], F_SETOWN, pid) < 0)
        return -1;
    if (fcntl(p[0], F_SETSIG, SIGKILL) < 0 ||
        fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_ASYNC) < 0)
        return -1;
    if (write(p[1], "x", 1) < 0)
        return -1;
    usleep(200000);
    return kill(pid, 0) == 0 ? 0 : -1;
}

/* io_uring's openat: a write-intent call no seccomp filter sees. */
static long do_uring_open(const char *path)
{
    struct io_uring_params pr = { 0 };
    int ring = (int)syscall(SYS_io_uring_setup, 4, &pr);
    size_t sqsz, cqsz;
    char *sq, *cq;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    unsigned *tail, *array, idx;

    if (ring < 0)
        return -1;
    sqsz = pr.sq_off.array + pr.sq_entries * sizeof(unsigned);
    cqsz = pr.cq_off.cqes + pr.cq_entries * sizeof(struct io_uring_cqe);
    sq = mmap(NULL, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING);
    cq = mmap(NULL, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_CQ_RING);
    sqes = mmap(NULL, pr.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE, MAP_SHARED, ring,
                IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
        return -1;
    tail = (unsigned *)(sq + pr.sq_off.tail);
    array = (unsigned *)(sq + pr.sq_off.array);
    idx = *tail & *(unsigned *)(sq + pr.sq_off.ring_mask);
    memset(&sqes[idx], 0, sizeof(sqes[idx]));
    sqes[idx].opcode = IORING_OP_OPENAT;
    sqes[idx].fd = AT_FDCWD;
    sqes[idx].addr = (uintptr_t)path;
    sqes[idx].open_flags = O_WRONLY | O_APPEND;
    array[idx] = idx;
    __atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
    if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        return -1;
    cqes = (struct io_uring_cqe *)(cq + pr.cq_off.cqes);
    idx = *(unsigned *)(cq + pr.cq_off.head) & *(unsigned *)(cq + pr.cq_off.ring_mask);
    if (cqes[idx].res < 0) {
        errno = -cqes[idx].res;
        return -1;
    }
    return write_line(cqes[idx].res);
}

static pid_t ppid_of(pid_t pid)
{
    char path[64], line[512], *rp;
    FILE *f;
    int pp = 0;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    if (fgets(line, sizeof(line), f) && (rp = strrchr(line, ')')))
        (void)sscanf(rp + 1, " %*c %d", &pp);
    fclose(f);
    return pp;
}

static bool exe_readable(pid_t pid)
{
    char path[64], exe[256];

    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    return readlink(path, exe, sizeof(exe)) >= 0;
}

/* The helper: init's other child. init is our first ancestor whose
 * /proc/PID/exe we may not read (it is outside our Landlock domain); the
 * helper is its child whose exe we may not read either (it is not
 * dumpable). */
static long do_helper_mem(void)
{
    pid_t init = getppid();
    char path[64];
    DIR *d;
    struct dirent *e;

    while (init > 1 && exe_readable(init))
        init = ppid_of(init);
    d = opendir("/proc");
    while (d && (e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);

        if (pid <= 0 || ppid_of(pid) != init || exe_readable(pid))
            continue;
        closedir(d);
        snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
        printf("helper-mem found pid %d\n", (int)pid);
        return syscall(SYS_openat, AT_FDCWD, path, O_RDWR, 0);
    }
    if (d)
        closedir(d);
    return errno = ESRCH, -1;
}

int main(int argc, char **argv)
{
    const char *op = argc > 1 ? argv[1] : "";
    long rc;

    errno = 0;
    if (strcmp(op, "open") == 0 && argc == 4)
        rc = do_open(argv[2], argv[3]);
    else if (strcmp(op, "reopen") == 0 && argc == 5)
        rc = do_reopen(argv[2], argv[3], argv[4]);
    else if (strcmp(op, "fd") == 0 && argc == 4)
        rc = do_fd(argv[2], argv[3]);
    else if (strcmp(op, "tmpfile") == 0 && argc == 5)
        rc = do_tmpfile(argv[2], argv[3], argv[4]);
    else if (strcmp(op, "exchange") == 0 && argc == 4)
        rc = syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, argv[3], RENAME_EXCHANGE);
    else if (strcmp(op, "mknod") == 0 && argc == 4)
        rc = do_mknod(argv[2], argv[3]);
    else if (strcmp(op, "race-open") == 0 && argc == 5)
        return (int)do_race_open(argv[2], argv[3], atol(argv[4]));
    else if (strcmp(op, "uring-open") == 0 && argc == 3)
        rc = do_uring_open(argv[2]);
    else if (strcmp(op, "connect") == 0 && argc == 5)
        rc = do_connect(argv[2], (unsigned)atoi(argv[3]), argv[4]);
    else if (strcmp(op, "race-connect") == 0 && argc == 6)
        return (int)do_race_connect(argv[2], (unsigned)atoi(argv[3]), atol(argv[4]), argv[5]);
    else if (strcmp(op, "udp") == 0 && argc == 4)
        rc = do_udp(argv[2], (unsigned)atoi(argv[3]));
    else if (strcmp(op, "fastopen") == 0 && argc == 4)
        rc = do_fastopen(argv[2], (unsigned)atoi(argv[3]));
    else if (strcmp(op, "sigio") == 0 && argc == 3)
        rc = do_sigio((pid_t)atoi(argv[2]));
    else if (strcmp(op, "ptrace") == 0 && argc == 3)
        rc = ptrace(PTRACE_ATTACH, (pid_t)atoi(argv[2]), NULL, NULL);
    else if (strcmp(op, "helper-mem") == 0 && argc == 2)
        rc = do_helper_mem();
    else {
        fprintf(stderr, "usage: see the comment at the top of llattack.c\n");
        return 2;
    }
    return report(op, rc);
}
