/* Landlock mode's supervisor, host side: answers the SUPERVISED filter's
 * notifications. Unlike the observer, it decides: a write-intent call is
 * copied out of the command's memory once (struct wreq) and performed by the
 * helper inside the command's Landlock domain, its result (or descriptor,
 * through SECCOMP_IOCTL_NOTIF_ADDFD) returned as the call's; the trapped
 * call itself never runs, so nothing the command changes in its memory
 * afterwards is read again. A connect to a proxy endpoint gets a socket the
 * host side connected to the proxy in place of the command's; any other is
 * refused (there is no network namespace to keep it in). */
#pragma once

#include <stdbool.h>
#include <sys/socket.h>

#include "src/err.h"
#include "src/loop.h"
#include "src/policy.h"
#include "src/violations.h"

struct sc_supervisor_config {
    int helper_fd; /* SOCK_SEQPACKET to the helper (ownership taken) */
    struct vio_list *violations;
    bool report_files; /* refused writes are reported (the monitor is on) */
    /* What the command made that may be a repository (a .git, a rename's
     * destination): checked on disk after the run, as the observer's. */
    struct pol_strv *git_watch;
    /* The proxy endpoints the command's environment names (loopback, these
     * ports); 0: none (no network). */
    unsigned http_port;
    unsigned socks_port;
    /* A stream socket of family connected to the proxy's endpoint (socks or
     * HTTP), for the command to have in place of its own; -errno on
     * failure. */
    int (*connect_proxy)(void *user, int family, bool socks);
    void *user;
    /* Unix sockets allowed, and Landlock refuses every TCP connect the
     * command makes itself (ABI 4): only then may an AF_UNIX connect run
     * as the command asked (its address could change to an internet one
     * before the kernel reads it again). */
    bool unix_connect;
};

struct sc_supervisor;

/* Serve listener (the SUPERVISED filter's notification fd; ownership taken). */
int sc_supervisor_new(struct sc_supervisor **out, struct ev_loop *loop, int listener,
                      const struct sc_supervisor_config *cfg, struct nf_err *err);
void sc_supervisor_free(struct sc_supervisor *s);
