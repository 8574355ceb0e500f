#include "src/lhelper.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/syscalls.h"
#include "src/util.h"

static int receive(int sock, struct wreq *rq, int fds[3])
{
    char cbuf[CMSG_SPACE(sizeof(int) * 3)];
    struct iovec iov = { .iov_base = rq, .iov_len = sizeof(*rq) };
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)
    };
    ssize_t n;
    size_t nfds = 0;

    fds[0] = fds[1] = fds[2] = -1;
    n = RETRY_EINTR(recvmsg(sock, &mh, MSG_CMSG_CLOEXEC));
    if (n <= 0)
        return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            if (nfds > 3)
                nfds = 3;
            memcpy(fds, CMSG_DATA(c), nfds * sizeof(int));
        }
    if ((size_t)n < offsetof(struct wreq, data) || nfds != 3 || (mh.msg_flags & MSG_CTRUNC))
        return 0; /* malformed: answered with EPERM below */
    /* What was not sent reads as zero (an unterminated string is cut). */
    memset((char *)rq + n, 0, sizeof(*rq) - (size_t)n);
    rq->path[0][PATH_MAX - 1] = rq->path[1][PATH_MAX - 1] = '\0';
    rq->data[WREQ_DATA_MAX - 1] = '\0';
    return 1;
}

static void reply(int sock, const struct wresp *r, int fd)
{
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { .iov_base = (void *)r, .iov_len = sizeof(*r) };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

    if (fd >= 0) {
        struct cmsghdr *c;

        memset(cbuf, 0, sizeof(cbuf));
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof(cbuf);
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    (void)RETRY_EINTR(sendmsg(sock, &mh, MSG_NOSIGNAL));
}

_Noreturn void lhelper_main(const struct fs_perform_ctx *ctx, int sock)
{
    struct wreq *rq;
    struct sigaction ign = { .sa_handler = SIG_IGN };

    /* Dies with init; nothing in the sandbox may trace it or read its
     * memory; a blocking open's child is reaped by the kernel. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
        sigaction(SIGCHLD, &ign, NULL) < 0)
        _exit(125);
    if (sock != 3 && (dup2(sock, 3) < 0 || close(sock) < 0))
        _exit(125);
    if (nf_close_range(4, ~0U, 0) < 0)
        _exit(125);
    sock = 3;
    rq = malloc(sizeof(*rq));
    if (!rq)
        _exit(125);
    for (;;) {
        struct wresp r;
        int fds[3], fd = -1, got;

        got = receive(sock, rq, fds);
        if (got < 0)
            _exit(0);
        if (got == 0) {
            memset(&r, 0, sizeof(r));
            r.id = rq->id;
            r.result = -EPERM;
            reply(sock, &r, -1);
        } else if (fs_perform_may_block(rq, fds[0], fds + 1)) {
            /* A FIFO or a device may block until its other end opens:
             * never the helper, which every other write waits on. */
            pid_t pid = fork();

            if (pid == 0) {
                fs_perform(ctx, rq, fds[0], fds + 1, &r, &fd);
                reply(sock, &r, fd);
                _exit(0);
            }
            if (pid < 0) {
                memset(&r, 0, sizeof(r));
                r.id = rq->id;
                r.result = -EAGAIN;
                reply(sock, &r, -1);
            }
        } else {
            fs_perform(ctx, rq, fds[0], fds + 1, &r, &fd);
            reply(sock, &r, fd);
            if (fd >= 0)
                close(fd);
        }
        for (int i = 0; i < 3; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    }
}
