#include "proxy/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "src/util.h"

static int buf_reserve(struct px_buf *b, size_t more)
{
    size_t cap;
    char *d;

    if (b->len + more <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 1024;
    while (cap < b->len + more)
        cap *= 2;
    d = realloc(b->data, cap);
    if (!d)
        return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

int px_buf_append(struct px_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (buf_reserve(b, n) < 0)
        return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

void px_buf_consume(struct px_buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

void px_buf_free(struct px_buf *b)
{
    free(b->data);
    *b = (struct px_buf){ 0 };
}

ssize_t px_buf_read(struct px_buf *b, int fd, size_t limit)
{
    ssize_t n;
    size_t room;

    if (b->len >= limit) {
        errno = ENOBUFS;
        return -1;
    }
    room = limit - b->len;
    /* Start small and grow with what arrives: most heads are a few hundred
     * bytes, and 10,000 idle connections must not each keep 64 KiB. */
    if (room > (b->len < 2048 ? 2048 : b->len))
        room = b->len < 2048 ? 2048 : b->len;
    if (room > PX_BUF_CHUNK)
        room = PX_BUF_CHUNK;
    if (buf_reserve(b, room) < 0)
        return -1;
    n = RETRY_EINTR(recv(fd, b->data + b->len, room, 0));
    if (n > 0)
        b->len += (size_t)n;
    return n;
}

int px_buf_flush(struct px_buf *b, int fd)
{
    while (b->len) {
        ssize_t n = RETRY_EINTR(send(fd, b->data, b->len, MSG_NOSIGNAL));

        if (n < 0)
            return errno == EAGAIN ? 0 : -1;
        px_buf_consume(b, (size_t)n);
    }
    return 0;
}
