/* The parent/child protocol over a SOCK_SEQPACKET socketpair (crun's sync
 * socket): one message per packet, file descriptors attached with
 * SCM_RIGHTS. The child's end is CLOEXEC, so EOF after READY means the
 * command was executed. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "src/err.h"

enum sync_kind {
    SYNC_GO = 1,      /* parent → init: id maps written, set up */
    SYNC_ERROR,       /* init or command → parent: setup failed (code, text) */
    SYNC_FDS,         /* init or command → parent: fds for the host side (tag says which) */
    SYNC_READY,       /* command → parent: about to execve; carries the stage times */
    SYNC_PREPARED,    /* parent → init: placeholders made, per-op results written, lo up */
    SYNC_EXEC_FAILED, /* command → parent: execve failed (code) */
};

enum sync_tag {
    SYNC_TAG_ENDPOINTS = 1, /* the proxy listeners, created inside the namespace */
    SYNC_TAG_OBSERVER,      /* the seccomp USER_NOTIF listener */
    SYNC_TAG_HELPER,        /* Landlock mode: the socket to the helper that performs writes */
    SYNC_TAG_NETLINK,       /* a NETLINK_ROUTE socket inside, the host side brings lo up on */
};

#define SYNC_MAX_FDS   8
#define SYNC_MAX_TIMES 16

struct sync_msg {
    uint32_t kind;
    int32_t code;
    uint32_t tag;
    uint32_t n_times;
    uint64_t times[SYNC_MAX_TIMES]; /* CLOCK_MONOTONIC, µs */
    uint8_t fd_kind[SYNC_MAX_FDS];  /* per attached fd, by tag (e.g. HTTP or SOCKS) */
    char text[NF_ERR_MSG_MAX];
};

/* Send one message with up to SYNC_MAX_FDS descriptors. */
int sync_send(int fd, const struct sync_msg *m, const int *fds, size_t nfds);

/* Receive one; returns 1 with a message, 0 on EOF, -1 on error. Received
 * descriptors are stored in fds (CLOEXEC), their count in *nfds. */
int sync_recv(int fd, struct sync_msg *m, int *fds, size_t *nfds);

/* In a child after fork: report an error to the parent and _exit(125). */
_Noreturn void sync_fail(int fd, const struct nf_err *err);

uint64_t sync_now_us(void);
