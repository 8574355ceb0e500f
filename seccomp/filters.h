/* The seccomp filters that close the holes the mounts and the namespaces
 * leave, built once with libseccomp on the host side (explain prints them as
 * PFC; run exports them as BPF) and installed in the command as the very
 * last step before execve. Native architecture only: any other, and x32 on
 * x86-64, kills the process. */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "src/err.h"

/* nsfence's own rules are one program, not one per concern: each program
 * costs load time, a check on every syscall and deferred kernel work to free
 * after the run. The rules:
 *   - socket(AF_UNIX | AF_VSOCK), socketpair(AF_UNIX) of datagrams, io_uring
 *     → EPERM (unless unix_block is off);
 *   - new user/mount namespaces, mounts, setns, keyrings → EPERM; clone3 →
 *     ENOSYS (only the keyrings with nested_userns);
 *   - ioctl TIOCSTI, TIOCLINUX → EPERM;
 *   - with the observer, USER_NOTIF on write-intent syscalls (reports only:
 *     no syscall is both refused and reported). */
enum sc_filter {
    SC_FILTER_OBSERVED,   /* the rules and the observer, loaded with a listener */
    SC_FILTER_ENFORCE,    /* the rules alone: without the observer, or after an
                             observed program that could not be loaded */
    SC_FILTER_SUPERVISED, /* Landlock mode: the rules, and USER_NOTIF on every call
                             that could write or connect, which the supervisor
                             performs itself; no fallback: it loads or the run fails */
    SC_FILTER_USER,       /* a program the caller supplied (bubblewrap's --seccomp) */
    SC_FILTER_COUNT,
};

/* Programs one process may stack here (the kernel's own limit is on their
 * total length). */
#define SC_MAX_PROGRAMS 64

struct sc_options {
    bool unix_block; /* off with --allow-all-unix-sockets */
    bool observer;   /* off with --no-monitor */
    /* The command may make user namespaces, and mount in the mount
     * namespaces those own (srt's allowNestedUserNamespaces): the namespaces
     * filter then refuses only the keyring calls. */
    bool nested_userns;
    /* Landlock mode (compiled at run time, never precompiled). */
    bool supervised;
};

struct sc_program {
    enum sc_filter kind;
    struct sock_filter *insns;
    unsigned short len;
};

struct sc_set {
    struct sc_program progs[SC_MAX_PROGRAMS];
    size_t n;
};

const char *sc_filter_name(enum sc_filter f);

/* The filters the options ask for, as BPF: compiled by libseccomp when
 * nsfence was built (tools/genbpf; compiling them costs ~0.2 ms a run). */
int sc_build(const struct sc_options *o, struct sc_set *out, struct nf_err *err);

/* The same, compiled by libseccomp now (what the build ran; the unit tests
 * check the two agree). */
int sc_compile(const struct sc_options *o, struct sc_set *out, struct nf_err *err);
void sc_set_free(struct sc_set *s);

/* Each program of s as it is loaded, one BPF instruction a line. */
int sc_print_bpf(const struct sc_set *s, FILE *out);

/* libseccomp's PFC text of each filter, with a header line per filter. */
int sc_print_pfc(const struct sc_options *o, FILE *out, struct nf_err *err);

/* In the command, after capabilities are dropped and no_new_privs is set:
 * load every program; an ENFORCE program right after an OBSERVED one that
 * loaded is skipped (it holds the same rules). *listener gets the observer's
 * notification fd, or -1 when the observer could not be installed (then
 * *why says so, and the ENFORCE program loads instead); the rules never fail
 * open: their failure is an error. */
int sc_install(const struct sc_set *s, int *listener, char *why, size_t whysz, struct nf_err *err);

/* Whether notification id still waits on the listener fd. Linux 5.17 gave
 * SECCOMP_IOCTL_NOTIF_ID_VALID a new number (its direction was wrong), which
 * newer headers define; older kernels know only the first, which newer ones
 * still accept. */
bool sc_notif_waiting(int fd, uint64_t id);
