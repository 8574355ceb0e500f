/* src/policy.c: path normalisation, containment, depth, string vectors and
 * the built-in default. Every table row names itself before an assertion
 * fires, so a failure says which spelling broke. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "src/policy.h"

/* ---- pol_path_normalize --------------------------------------------------- */

struct norm_case {
    const char *in;
    const char *cwd;
    const char *home;
    const char *want; /* NULL: an error */
    const char *msg;  /* for an error: a substring of its message */
};

static void check_norm(const struct norm_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char out[PATH_MAX];
        struct nf_err err = { 0 };
        int rc = pol_path_normalize(c[i].in, c[i].cwd, c[i].home, out, sizeof(out), &err);

        if (c[i].want) {
            if (rc != 0)
                fail_msg("\"%s\" (cwd %s, home %s): want \"%s\", got error \"%s\"", c[i].in,
                         c[i].cwd, c[i].home, c[i].want, err.msg);
            if (strcmp(out, c[i].want) != 0)
                fail_msg("\"%s\" (cwd %s, home %s): want \"%s\", got \"%s\"", c[i].in, c[i].cwd,
                         c[i].home, c[i].want, out);
            continue;
        }
        if (rc != -1)
            fail_msg("\"%s\" (cwd %s, home %s): want an error, got \"%s\"", c[i].in, c[i].cwd,
                     c[i].home, out);
        if (err.code != EINVAL)
            fail_msg("\"%s\": want EINVAL, got %d", c[i].in, err.code);
        if (err.msg[0] == '\0' || strchr(err.msg, '\n'))
            fail_msg("\"%s\": want a one-line message, got \"%s\"", c[i].in, err.msg);
        if (c[i].msg && !strstr(err.msg, c[i].msg))
            fail_msg("\"%s\": message \"%s\" does not mention \"%s\"", c[i].in, err.msg, c[i].msg);
    }
}

static void tilde_is_home(void **state)
{
    static const struct norm_case c[] = {
        { "~", "/c", "/home/u", "/home/u", NULL },
        { "~/", "/c", "/home/u", "/home/u", NULL },
        { "~/x", "/c", "/home/u", "/home/u/x", NULL },
        { "~/x/y/", "/c", "/home/u", "/home/u/x/y", NULL },
        { "~//x", "/c", "/home/u", "/home/u/x", NULL },
        { "~/./x/../y", "/c", "/home/u", "/home/u/y", NULL },
        { "~/..", "/c", "/home/u", "/home", NULL },
        { "~/../../../..", "/c", "/home/u", "/", NULL },
        /* home itself is folded too */
        { "~", "/c", "/home/u/", "/home/u", NULL },
        { "~/x", "/c", "//home/./u/../v", "/home/v/x", NULL },
        { "~", "/c", "/", "/", NULL },
        { "~/x", "/c", "/", "/x", NULL },
        /* `~` works without a cwd, and only leads */
        { "~/x", NULL, "/home/u", "/home/u/x", NULL },
        { "a~", "/c", "/home/u", "/c/a~", NULL },
        { "x/~", "/c", "/home/u", "/c/x/~", NULL },
        { "/~", "/c", "/home/u", "/~", NULL },
        { "./~", "/c", "/home/u", "/c/~", NULL },
    };

    (void)state;
    check_norm(c, sizeof(c) / sizeof(c[0]));
}

static void tilde_without_an_absolute_home_is_an_error(void **state)
{
    static const struct norm_case c[] = {
        { "~", "/c", NULL, NULL, "$HOME" },  { "~/x", "/c", NULL, NULL, "$HOME" },
        { "~/x", "/c", "", NULL, "$HOME" },  { "~/x", "/c", "home/u", NULL, "$HOME" },
        { "~", "/c", "./u", NULL, "$HOME" }, { "~/x", "/c", "~", NULL, "$HOME" },
    };

    (void)state;
    check_norm(c, sizeof(c) / sizeof(c[0]));
}

static void tilde_user_is_an_error(void **state)
{
    static const struct norm_case c[] = {
        { "~root", "/c", "/home/u", NULL, "~user" }, { "~bob/x", "/c", "/home/u", NULL, "~user" },
        { "~~", "/c", "/home/u", NULL, "~user" },    { "~.", "/c", "/home/u", NULL, "~user" },
        { "~bob", "/c", NULL, NULL, "~user" },
    };

    (void)state;
    check_norm(c, sizeof(c) / sizeof(c[0]));
}

static void relative_paths_are_taken_against_cwd(void **state)
{
    static const struct norm_case c[] = {
        { "x", "/w/p", "/home/u", "/w/p/x", NULL },
        { "x/y", "/w/p", "/home/u", "/w/p/x/y", NULL },
        { ".", "/w/p", "/home/u", "/w/p", NULL },
        { "./", "/w/p", "/home/u", "/w/p", NULL },
        { "..", "/w/p", "/home/u", "/w", NULL },
        { "../q", "/w/p", "/home/u", "/w/q", NULL },
        { "../../../../x", "/w/p", "/home/u", "/x", NULL },
        { ".x", "/w/p", "/home/u", "/w/p/.x", NULL },
        { "x", "/", "/home/u", "/x", NULL },
        { "..", "/", NULL, "/", NULL },
        /* cwd is folded too */
        { "x", "/w//p/./q/../", NULL, "/w/p/x", NULL },
        /* no home needed */
        { "x", "/w", NULL, "/w/x", NULL },
        /* no usable cwd */
        { "x", NULL, "/home/u", NULL, "working directory" },
        { "x", "w/p", "/home/u", NULL, "working directory" },
        { ".", "", "/home/u", NULL, "working directory" },
    };

    (void)state;
    check_norm(c, sizeof(c) / sizeof(c[0]));
}

static void dots_fold_and_never_climb_above_root(void **state)
{
    static const struct norm_case c[] = {
        { "/a/./b", NULL, NULL, "/a/b", NULL },
        { "/a/b/..", NULL, NULL, "/a", NULL },
        { "/a/b/../..", NULL, NULL, "/", NULL },
        { "/a/./b/../c/.", NULL, NULL, "/a/c", NULL },
        { "/..", NULL, NULL, "/", NULL },
        { "/../..", NULL, NULL, "/", NULL },
        { "/../a", NULL, NULL, "/a", NULL },
        { "/a/../../b", NULL, NULL, "/b", NULL },
        { "/./.", NULL, NULL, "/", NULL },
        { "/a/b/c/../../d", NULL, NULL, "/a/d", NULL },
        /* only exact "." and ".." are special */
        { "/...", NULL, NULL, "/...", NULL },
        { "/a/.b/..c/c..", NULL, NULL, "/a/.b/..c/c..", NULL },
        { "/a/.../..", NULL, NULL, "/a", NULL },
        /* lexical: a ".." after a name drops the name, symlink or not */
        { "/etc/x/../passwd", NULL, NULL, "/etc/passwd", NULL },
    };

    (void)state;
    check_norm(c, sizeof(c) / sizeof(c[0]));
}

static void repeated_and_trailing_slashes_fold(void **state)
{
    static const struct norm_case c[] = {
        { "/", NULL, NULL, "/", NULL },
        { "//", NULL, NULL, "/", NULL },
        { "///", NULL, NULL, "/", NULL },
        { "/a/", NULL, NULL, "/a", NULL },
        { "/a//", NULL, NULL, "/a", NULL },
        { "//a", NULL, NULL, "/a", NULL },
        { "/a///b", NULL, NULL, "/a/b", NULL },
        { "///a//b//c///", NULL, NULL, "/a/b/c", NULL },
        { "a//b/", "/w", NULL, "/w/a/b", NULL },
        /* an absolute path ignores cwd and home entirely */
        { "/x", NULL, NULL, "/x", NULL },
        { "/x", "relative", "relative", "/x", NULL },
    };

    (void)state;
    check_norm(c, sizeof(c) / sizeof(c[0]));
}

static void empty_path_is_an_error(void **state)
{
    static const struct norm_case c[] = {
        { "", "/w", "/home/u", NULL, "empty path" },
        { NULL, "/w", "/home/u", NULL, "empty path" },
    };

    (void)state;
    check_norm(c, sizeof(c) / sizeof(c[0]));
}

static char *repeat(const char *prefix, char ch, size_t n)
{
    size_t plen = strlen(prefix);
    char *s = malloc(plen + n + 1);

    assert_non_null(s);
    memcpy(s, prefix, plen);
    memset(s + plen, ch, n);
    s[plen + n] = '\0';
    return s;
}

static void expect_too_long(const char *in, const char *cwd, const char *home, size_t outsz)
{
    char *out = malloc(outsz ? outsz : 1);
    struct nf_err err = { 0 };

    assert_non_null(out);
    if (pol_path_normalize(in, cwd, home, out, outsz, &err) != -1)
        fail_msg("a %zu-char path in a %zu-byte buffer: want an error", strlen(in), outsz);
    assert_int_equal(err.code, ENAMETOOLONG);
    if (!strstr(err.msg, "too") || strchr(err.msg, '\n') || strlen(err.msg) > 200)
        fail_msg("want a short one-line 'too long' message, got \"%.300s\"", err.msg);
    free(out);
}

static void overflow_is_an_error(void **state)
{
    char out[PATH_MAX];
    struct nf_err err = { 0 };
    char *fits = repeat("/", 'a', PATH_MAX - 2);     /* 4095 characters */
    char *over = repeat("/", 'a', PATH_MAX - 1);     /* 4096 characters */
    char *over_folded = repeat("//", 'a', PATH_MAX); /* folds to 4097 */
    char *long_cwd = repeat("/", 'c', PATH_MAX - 5); /* 4092 characters */
    char *long_home = repeat("/", 'h', PATH_MAX - 5);
    char *comps = malloc(PATH_MAX * 2);

    (void)state;
    /* The longest path PATH_MAX can hold with its NUL. */
    assert_int_equal(pol_path_normalize(fits, NULL, NULL, out, sizeof(out), &err), 0);
    assert_int_equal(strlen(out), PATH_MAX - 1);
    expect_too_long(over, NULL, NULL, PATH_MAX);
    expect_too_long(over_folded, NULL, NULL, PATH_MAX);
    /* The overflow may come from cwd or home, not only the input. */
    assert_int_equal(pol_path_normalize("xy", long_cwd, NULL, out, sizeof(out), &err), 0);
    assert_int_equal(strlen(out), PATH_MAX - 1);
    expect_too_long("xyz", long_cwd, NULL, PATH_MAX);
    assert_int_equal(pol_path_normalize("~/xy", NULL, long_home, out, sizeof(out), &err), 0);
    expect_too_long("~/xyz", NULL, long_home, PATH_MAX);
    /* Many short components. */
    assert_non_null(comps);
    comps[0] = '\0';
    while (strlen(comps) < PATH_MAX + 10)
        strcat(comps, "/abc");
    expect_too_long(comps, NULL, NULL, PATH_MAX);
    /* A caller's smaller buffer is respected exactly. */
    assert_int_equal(pol_path_normalize("/abcdef", NULL, NULL, out, 8, &err), 0);
    assert_string_equal(out, "/abcdef");
    expect_too_long("/abcdefg", NULL, NULL, 8);
    expect_too_long("/a/b/c/d", NULL, NULL, 8);
    assert_int_equal(pol_path_normalize("/", NULL, NULL, out, 2, &err), 0);
    assert_string_equal(out, "/");
    expect_too_long("/", NULL, NULL, 1);
    expect_too_long("/a", NULL, NULL, 0);
    free(fits);
    free(over);
    free(over_folded);
    free(long_cwd);
    free(long_home);
    free(comps);
}

static void normalised_output_is_a_fixed_point(void **state)
{
    static const char *const in[] = {
        "~/a/../b//c/.", "x/./y/../../z", "/", "//..//a/", "../..", "~",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        char once[PATH_MAX], twice[PATH_MAX];
        struct nf_err err = { 0 };

        assert_int_equal(pol_path_normalize(in[i], "/w/p", "/home/u", once, sizeof(once), &err), 0);
        assert_int_equal(pol_path_normalize(once, NULL, NULL, twice, strlen(once) + 1, &err), 0);
        if (strcmp(once, twice) != 0)
            fail_msg("\"%s\": \"%s\" then \"%s\"", in[i], once, twice);
    }
}

/* ---- pol_path_within, pol_path_depth ------------------------------------ */

static void within_needs_a_component_boundary(void **state)
{
    static const struct {
        const char *path;
        const char *dir;
        bool want;
    } c[] = {
        { "/a", "/a", true },
        { "/a/b", "/a", true },
        { "/a/b/c", "/a", true },
        { "/a/b/c", "/a/b", true },
        { "/ab", "/a", false },
        { "/a", "/ab", false },
        { "/a", "/a/b", false },
        { "/a.b", "/a", false },
        { "/a-b/c", "/a", false },
        { "/a/bc", "/a/b", false },
        { "/b", "/a", false },
        { "/", "/a", false },
        { "/", "/", true },
        { "/a", "/", true },
        { "/a/b/c", "/", true },
        { "/home/u/.ssh", "/home/u", true },
        { "/home/user", "/home/u", false },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
        if (pol_path_within(c[i].path, c[i].dir) != c[i].want)
            fail_msg("within(\"%s\", \"%s\"): want %s", c[i].path, c[i].dir,
                     c[i].want ? "true" : "false");
}

static void depth_counts_components(void **state)
{
    static const struct {
        const char *path;
        unsigned want;
    } c[] = {
        { "/", 0 },     { "/a", 1 },       { "/a/b", 2 },         { "/a/b/c", 3 },
        { "/...", 1 },  { "/a.b/c.d", 2 }, { "/a/b/c/d/e/f", 6 }, { "/very-long-name", 1 },
        { "/a/b/", 2 }, /* a trailing slash is not a component */
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
        if (pol_path_depth(c[i].path) != c[i].want)
            fail_msg("depth(\"%s\"): want %u, got %u", c[i].path, c[i].want,
                     pol_path_depth(c[i].path));
}

/* ---- pol_strv ------------------------------------------------------------- */

static void strv_copies_keeps_order_and_stays_null_terminated(void **state)
{
    struct pol_strv sv = { 0 };
    struct nf_err err = { 0 };
    char buf[16];

    (void)state;
    assert_false(pol_strv_contains(&sv, "a"));
    for (int i = 0; i < 100; i++) {
        snprintf(buf, sizeof(buf), "s%d", i);
        assert_int_equal(pol_strv_add(&sv, buf, &err), 0);
        buf[0] = 'X'; /* the vector holds its own copy */
        assert_non_null(sv.v);
        assert_null(sv.v[sv.n]);
    }
    assert_int_equal(sv.n, 100);
    assert_string_equal(sv.v[0], "s0");
    assert_string_equal(sv.v[99], "s99");
    assert_true(pol_strv_contains(&sv, "s42"));
    assert_false(pol_strv_contains(&sv, "X42"));
    assert_false(pol_strv_contains(&sv, "s"));
    assert_false(pol_strv_contains(&sv, "s420"));
    /* add does not deduplicate; callers that want a set check first */
    assert_int_equal(pol_strv_add(&sv, "s0", &err), 0);
    assert_int_equal(sv.n, 101);
    assert_int_equal(pol_strv_add(&sv, "", &err), 0);
    assert_true(pol_strv_contains(&sv, ""));
    pol_strv_free(&sv);
    assert_null(sv.v);
    assert_int_equal(sv.n, 0);
    assert_false(pol_strv_contains(&sv, "s0"));
    pol_strv_free(&sv); /* idempotent */
}

/* ---- pol_init, pol_free ------------------------------------------------- */

static void init_gives_the_documented_default(void **state)
{
    struct policy pol;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(pol_init(&pol, "/w/p", "/home/u", &err), 0);
    assert_string_equal(pol.cwd, "/w/p");
    assert_string_equal(pol.home, "/home/u");
    assert_int_equal(pol.allow_write.n, 1);
    assert_string_equal(pol.allow_write.v[0], "/w/p");
    assert_null(pol.allow_write.v[1]);
    assert_int_equal(pol.deny_write.n + pol.deny_read.n + pol.allow_read.n + pol.config_files.n, 0);
    assert_int_equal(pol.mandatory_deny_depth, 3);
    assert_true(pol.network_enabled);
    assert_int_equal(pol.allow_domain.n + pol.deny_domain.n + pol.deny_address.n, 0);
    assert_int_equal(pol.n_deny_reasons, 0);
    assert_false(pol.allow_all_unix_sockets);
    assert_int_equal(pol.http_port, 3128);
    assert_int_equal(pol.socks_port, 1080);
    assert_null(pol.parent_proxy);
    assert_int_equal(pol.max_connections, POL_DEFAULT_MAX_CONNS);
    assert_true(pol.monitor_enabled);
    assert_int_equal(pol.monitor_ignore.n, 0);
    assert_null(pol.monitor_log);
    assert_false(pol.new_session);
    pol_free(&pol);
    assert_null(pol.cwd);
    assert_null(pol.allow_write.v);
    pol_free(&pol); /* a freed policy is all zero, so freeing again is harmless */
}

static void init_keeps_only_an_absolute_home(void **state)
{
    static const struct {
        const char *home;
        const char *want;
    } c[] = {
        { "/home/u", "/home/u" }, { "/", "/" }, { NULL, NULL }, { "", NULL }, { "u", NULL },
        { "~/u", NULL },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct policy pol;
        struct nf_err err = { 0 };

        assert_int_equal(pol_init(&pol, "/w", c[i].home, &err), 0);
        if (c[i].want ? !pol.home || strcmp(pol.home, c[i].want) != 0 : pol.home != NULL)
            fail_msg("home \"%s\": want %s, got %s", c[i].home, c[i].want, pol.home);
        pol_free(&pol);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tilde_is_home),
        cmocka_unit_test(tilde_without_an_absolute_home_is_an_error),
        cmocka_unit_test(tilde_user_is_an_error),
        cmocka_unit_test(relative_paths_are_taken_against_cwd),
        cmocka_unit_test(dots_fold_and_never_climb_above_root),
        cmocka_unit_test(repeated_and_trailing_slashes_fold),
        cmocka_unit_test(empty_path_is_an_error),
        cmocka_unit_test(overflow_is_an_error),
        cmocka_unit_test(normalised_output_is_a_fixed_point),
        cmocka_unit_test(within_needs_a_component_boundary),
        cmocka_unit_test(depth_counts_components),
        cmocka_unit_test(strv_copies_keeps_order_and_stays_null_terminated),
        cmocka_unit_test(init_gives_the_documented_default),
        cmocka_unit_test(init_keeps_only_an_absolute_home),
    };

    return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
