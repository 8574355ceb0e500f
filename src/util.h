/* Small helpers shared by every folder: cleanup attributes, ownership moves,
 * EINTR retry. Header only. */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void nf_freep(void *p)
{
    free(*(void **)p);
}

static inline void nf_closep(const int *fd)
{
    if (*fd >= 0) {
        int saved = errno;
        close(*fd);
        errno = saved;
    }
}

#define _cleanup_free_  _cleanup_(nf_freep)
#define _cleanup_close_ _cleanup_(nf_closep)

/* Take ownership of *pp, leaving NULL behind; keeps the pointer's type. */
#define steal_pointer(pp)                                                                          \
    ({                                                                                             \
        __typeof__(*(pp)) _stolen = *(pp);                                                         \
        *(pp) = NULL;                                                                              \
        _stolen;                                                                                   \
    })

#define steal_fd(fdp)                                                                              \
    ({                                                                                             \
        int _stolen_fd = *(fdp);                                                                   \
        *(fdp) = -1;                                                                               \
        _stolen_fd;                                                                                \
    })

#define RETRY_EINTR(expr)                                                                          \
    ({                                                                                             \
        __typeof__(expr) _r;                                                                       \
        do                                                                                         \
            _r = (expr);                                                                           \
        while (_r == -1 && errno == EINTR);                                                        \
        _r;                                                                                        \
    })

#define NF_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The value of one hexadecimal digit, or -1. */
static inline int nf_hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#include <dirent.h>
static inline void closedirp(DIR **d)
{
    if (*d)
        closedir(*d);
}
