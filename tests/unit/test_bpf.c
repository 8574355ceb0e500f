/* The filters a run loads (compiled at build time) are exactly those
 * libseccomp compiles now, for every combination of the options; the
 * namespaces filter, loaded in a child, refuses the keyring calls. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <linux/keyctl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "seccomp/filters.h"

static void precompiled_equals_live(void **state)
{
    (void)state;
    for (int v = 0; v < 8; v++) {
        struct sc_options o = { .unix_block = v & 1,
                                .observer = (v >> 1) & 1,
                                .nested_userns = (v >> 2) & 1 };
        struct sc_set built, live;
        struct nf_err err = { 0 };

        assert_int_equal(sc_build(&o, &built, &err), 0);
        assert_int_equal(sc_compile(&o, &live, &err), 0);
        assert_int_equal(built.n, live.n);
        assert_int_equal(built.n, 1 + o.observer);
        for (size_t i = 0; i < built.n; i++) {
            assert_int_equal(built.progs[i].kind, live.progs[i].kind);
            assert_int_equal(built.progs[i].len, live.progs[i].len);
            assert_memory_equal(built.progs[i].insns, live.progs[i].insns,
                                built.progs[i].len * sizeof(struct sock_filter));
        }
        sc_set_free(&built);
        sc_set_free(&live);
    }
}

static void the_observer_comes_first(void **state)
{
    struct sc_options o = { .unix_block = true, .observer = true };
    struct sc_set s;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(sc_build(&o, &s, &err), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.progs[0].kind, SC_FILTER_OBSERVED);
    assert_int_equal(s.progs[1].kind, SC_FILTER_ENFORCE);
    sc_set_free(&s);
}

/* In the calling process: no_new_privs and only the rules (no observer) the
 * options ask for. */
static int install_namespaces_filter(const struct sc_options *o)
{
    struct sc_set all, ns = { 0 };
    struct nf_err err = { 0 };
    char why[64];
    int listener;

    if (sc_build(o, &all, &err) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    for (size_t i = 0; i < all.n; i++)
        if (all.progs[i].kind == SC_FILTER_ENFORCE)
            ns.progs[ns.n++] = all.progs[i];
    if (ns.n != 1 || sc_install(&ns, &listener, why, sizeof(why), &err) < 0)
        return -1;
    return 0;
}

/* Bit i of the child's exit status: check i failed. */
static int keyring_calls_in_child(bool nested_userns)
{
    struct sc_options o = { .nested_userns = nested_userns };
    int bad = 0;

    /* Control: before the filter, the kernel answers keyctl itself. */
    if (syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) < 0 &&
        errno == EPERM)
        bad |= 1;
    if (install_namespaces_filter(&o) < 0)
        return 0x40;
    if (syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) >= 0 ||
        errno != EPERM)
        bad |= 2;
    if (syscall(SYS_add_key, "user", "nsfence-test", "x", 1, KEY_SPEC_SESSION_KEYRING) >= 0 ||
        errno != EPERM)
        bad |= 4;
    if (syscall(SYS_request_key, "user", "nsfence-test", NULL, 0) >= 0 || errno != EPERM)
        bad |= 8;
    if (getppid() <= 0)
        bad |= 0x10; /* everything else still goes through */
    return bad;
}

static int in_child(int (*fn)(bool), bool arg)
{
    int status;
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0)
        _exit(fn(arg));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void the_namespaces_filter_refuses_the_keyring_calls(void **state)
{
    (void)state;
    assert_int_equal(in_child(keyring_calls_in_child, false), 0);
    assert_int_equal(in_child(keyring_calls_in_child, true), 0);
}

/* unshare(CLONE_NEWUSER) in a child, under the namespaces filter (filter)
 * with or without nested_userns, or under no filter: 0 when it worked,
 * else its errno (0x40: the filter could not be installed). */
static int unshare_user(bool nested_userns, bool filter)
{
    struct sc_options o = { .nested_userns = nested_userns };

    if (filter && install_namespaces_filter(&o) < 0)
        return 0x40;
    return unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
}

static int unshare_user_unfiltered(bool unused)
{
    (void)unused;
    return unshare_user(false, false);
}

static int unshare_user_filtered(bool nested_userns)
{
    return unshare_user(nested_userns, true);
}

static void nested_userns_lets_the_kernel_answer_unshare(void **state)
{
    (void)state;
    /* By default the filter refuses; with nested_userns the command gets
     * whatever the kernel says (this host may refuse user namespaces
     * itself). */
    assert_int_equal(in_child(unshare_user_filtered, false), EPERM);
    assert_int_equal(in_child(unshare_user_filtered, true), in_child(unshare_user_unfiltered, 0));
}

/* How many seccomp filters this process has. */
static long filters_here(void)
{
    char line[128];
    long n = -1;
    FILE *f = fopen("/proc/self/status", "re");

    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "Seccomp_filters:", 16) == 0)
            n = strtol(line + 16, NULL, 10);
    if (f)
        fclose(f);
    return n;
}

/* Bit i of the status: check i failed. With listener_taken, a listener is
 * already on this process, so the observed program cannot load (EBUSY). */
static int install_in_child(bool listener_taken)
{
    struct sc_options o = { .unix_block = true, .observer = true };
    struct sc_set s;
    struct nf_err err = { 0 };
    char why[128];
    int listener, bad = 0;
    long before;

    if (sc_build(&o, &s, &err) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return 0x40;
    if (listener_taken) {
        /* a program that notifies on nothing this test calls */
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = { .len = 1, .filter = &allow };

        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog) <
            0)
            return 0x40;
    }
    before = filters_here();
    if (sc_install(&s, &listener, why, sizeof(why), &err) < 0)
        return 0x20;
    if (filters_here() != before + 1)
        bad |= 1; /* one program either way */
    if (listener_taken ? listener >= 0 || !strstr(why, "write observer unavailable")
                       : listener < 0 || why[0])
        bad |= 2;
    if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM)
        bad |= 4; /* the rules hold either way */
    if (socket(AF_UNIX, SOCK_STREAM, 0) >= 0 || errno != EPERM)
        bad |= 8;
    return bad;
}

static void one_program_loads_the_rules_with_or_without_the_observer(void **state)
{
    (void)state;
    assert_int_equal(in_child(install_in_child, false), 0);
    assert_int_equal(in_child(install_in_child, true), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(precompiled_equals_live),
        cmocka_unit_test(the_observer_comes_first),
        cmocka_unit_test(the_namespaces_filter_refuses_the_keyring_calls),
        cmocka_unit_test(nested_userns_lets_the_kernel_answer_unshare),
        cmocka_unit_test(one_program_loads_the_rules_with_or_without_the_observer),
    };

    return cmocka_run_group_tests_name("bpf", tests, NULL, NULL);
}
