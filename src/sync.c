#include "src/sync.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "src/util.h"

int sync_send(int fd, const struct sync_msg *m, const int *fds, size_t nfds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * SYNC_MAX_FDS)];
        struct cmsghdr align;
    } u;
    struct iovec iov = { .iov_base = (void *)m, .iov_len = offsetof(struct sync_msg, text) };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

    if (m->kind == SYNC_ERROR)
        iov.iov_len += strnlen(m->text, sizeof(m->text) - 1) + 1;
    if (nfds > SYNC_MAX_FDS) {
        errno = EINVAL;
        return -1;
    }
    if (nfds) {
        struct cmsghdr *c;

        memset(&u, 0, sizeof(u));
        mh.msg_control = u.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    return RETRY_EINTR(sendmsg(fd, &mh, MSG_NOSIGNAL)) < 0 ? -1 : 0;
}

int sync_recv(int fd, struct sync_msg *m, int *fds, size_t *nfds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * SYNC_MAX_FDS)];
        struct cmsghdr align;
    } u;
    struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)
    };
    ssize_t n;

    *nfds = 0;
    memset(m, 0, sizeof(*m));
    n = RETRY_EINTR(recvmsg(fd, &mh, MSG_CMSG_CLOEXEC));
    /* The peer exited with our last message unread: the kernel reports
     * that once, ahead of what the peer had sent us (its error, say). */
    if (n < 0 && errno == ECONNRESET)
        n = RETRY_EINTR(recvmsg(fd, &mh, MSG_CMSG_CLOEXEC));
    if (n < 0)
        return -1;
    if (n == 0)
        return 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

            memcpy(fds + *nfds, CMSG_DATA(c), k * sizeof(int));
            *nfds += k;
        }
    }
    if ((size_t)n < offsetof(struct sync_msg, text) || (mh.msg_flags & MSG_CTRUNC)) {
        for (size_t i = 0; i < *nfds; i++)
            close(fds[i]);
        *nfds = 0;
        errno = EPROTO;
        return -1;
    }
    m->text[sizeof(m->text) - 1] = '\0';
    return 1;
}

_Noreturn void sync_fail(int fd, const struct nf_err *err)
{
    struct sync_msg m = { .kind = SYNC_ERROR, .code = err->code };

    memcpy(m.text, err->msg, sizeof(m.text));
    m.text[sizeof(m.text) - 1] = '\0';
    (void)sync_send(fd, &m, NULL, 0);
    _exit(125);
}

uint64_t sync_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}
