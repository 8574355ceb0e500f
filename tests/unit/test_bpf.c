/* The filters a run loads (compiled at build time) are exactly those
 * libseccomp compiles now, for every combination of the options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "seccomp/filters.h"

static void precompiled_equals_live(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++) {
        struct sc_options o = { .unix_block = v & 1, .observer = (v >> 1) & 1 };
        struct sc_set built, live;
        struct nf_err err = { 0 };

        assert_int_equal(sc_build(&o, &built, &err), 0);
        assert_int_equal(sc_compile(&o, &live, &err), 0);
        assert_int_equal(built.n, live.n);
        assert_int_equal(built.n, 2 + o.unix_block + o.observer);
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
    assert_int_equal(s.progs[0].kind, SC_FILTER_OBSERVER);
    assert_int_equal(s.progs[1].kind, SC_FILTER_UNIX);
    sc_set_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(precompiled_equals_live),
        cmocka_unit_test(the_observer_comes_first),
    };

    return cmocka_run_group_tests_name("bpf", tests, NULL, NULL);
}
