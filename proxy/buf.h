/* A growable byte buffer for the proxy's connections: what the client or the
 * upstream sent and is not used yet, and what waits to be written. Reads
 * start small and grow with what arrives, so an idle connection holds little
 * memory. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#define PX_BUF_CHUNK (64 * 1024) /* the most one px_buf_read takes */

struct px_buf {
    char *data;
    size_t len;
    size_t cap;
};

/* Returns 0, or -1 when out of memory. */
int px_buf_append(struct px_buf *b, const void *p, size_t n);
void px_buf_consume(struct px_buf *b, size_t n);
void px_buf_free(struct px_buf *b);

/* Read what the socket has into b, up to limit bytes held. Returns bytes
 * read, 0 on EOF, -1 on EAGAIN (errno) or error; ENOBUFS when b already
 * holds limit bytes. */
ssize_t px_buf_read(struct px_buf *b, int fd, size_t limit);

/* Write as much of b as the socket takes. Returns 0 (maybe partial), -1 on
 * error. */
int px_buf_flush(struct px_buf *b, int fd);
