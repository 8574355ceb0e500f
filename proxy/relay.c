#include "proxy/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK (1u << 20) /* splice caps at the pipe's size anyway */

void px_half_init(struct px_half *h, int src, int dst)
{
    *h = (struct px_half){ .src = src, .dst = dst, .pipe = { -1, -1 }, .state = PX_PUMP_WANT_READ };
}

void px_half_release(struct px_half *h)
{
    if (h->pipe[0] >= 0)
        close(h->pipe[0]);
    if (h->pipe[1] >= 0)
        close(h->pipe[1]);
    h->pipe[0] = h->pipe[1] = -1;
}

enum px_pump px_half_pump(struct px_half *h)
{
    for (;;) {
        ssize_t n;

        if (h->buffered) {
            n = splice(h->pipe[0], NULL, h->dst, NULL, h->buffered,
                       SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return h->state = errno == EAGAIN ? PX_PUMP_WANT_WRITE : PX_PUMP_ERROR;
            }
            h->buffered -= (size_t)n;
            h->bytes += (unsigned long long)n;
            continue;
        }
        if (h->eof) {
            if (!h->shut) {
                if (shutdown(h->dst, SHUT_WR) < 0 && errno != ENOTCONN)
                    return h->state = PX_PUMP_ERROR;
                h->shut = true;
            }
            px_half_release(h);
            return h->state = PX_PUMP_DONE;
        }
        if (h->pipe[0] < 0 && pipe2(h->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
            return h->state = PX_PUMP_ERROR;
        n = splice(h->src, NULL, h->pipe[1], NULL, CHUNK, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return h->state = errno == EAGAIN ? PX_PUMP_WANT_READ : PX_PUMP_ERROR;
        }
        if (n == 0)
            h->eof = true;
        h->buffered = (size_t)n;
    }
}
