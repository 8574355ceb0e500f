/* fs/glob.c: srt's glob syntax, matched without a regex. Every syntax
 * rule, the beneath rule of a deny, and the literal prefix. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fs/glob.h"

/* ---- the matcher ---------------------------------------------------------- */

static const struct {
    const char *pattern;
    const char *path;
    bool match;   /* fs_glob_match */
    bool beneath; /* fs_glob_match_beneath */
} match_cases[] = {
    /* `*` is any run of characters but '/', a leading dot included */
    { "/a/*.txt", "/a/x.txt", true, true },
    { "/a/*.txt", "/a/.txt", true, true },
    { "/a/*.txt", "/a/.hidden.txt", true, true },
    { "/a/*.txt", "/a/b/x.txt", false, false },
    { "/a/*", "/a", false, false },
    { "/a/*", "/a/b/c", false, true },
    { "/a*", "/abc", true, true },
    { "/a*", "/a/b", false, true },
    { "/a/*", "/a/x\ny", true, true },
    /* `**` is any run, '/' included */
    { "/a/**", "/a/b", true, true },
    { "/a/**", "/a/b/c", true, true },
    { "/a/**", "/a", false, false },
    { "/a/**.pem", "/a/b/c.pem", true, true },
    { "/a/**.pem", "/a/x.pem/y", false, true },
    /* `**` then '/' is zero or more whole directories */
    { "/a/**/x", "/a/x", true, true },
    { "/a/**/x", "/a/b/x", true, true },
    { "/a/**/x", "/a/b/c/x", true, true },
    { "/a/**/x", "/a/bx", false, false },
    { "/a/**/x", "/ax", false, false },
    { "/a/**/x", "/a/x/y", false, true },
    { "/a/**/*.pem", "/a/k.pem", true, true },
    { "/a/**/*.pem", "/a/b/c/k.pem", true, true },
    { "/a/**/*.pem", "/a/b/c/k.pem.txt", false, false },
    /* a run of three stars before '/' is `*` then `**` and '/' */
    { "/a/***/x", "/a/x", true, true },
    { "/a/***/x", "/a/px", true, true },
    { "/a/***/x", "/a/p/q/x", true, true },
    { "/a/***/x", "/a/p/qx", false, false },
    /* `?` is one character but '/'; a UTF-8 sequence is one character */
    { "/a/?", "/a/b", true, true },
    { "/a/?", "/a/bc", false, false },
    { "/a/?", "/a/", false, false },
    { "/a?b", "/a/b", false, false },
    { "/a/?", "/a/\xc3\xa9", true, true },
    { "/a/??", "/a/\xc3\xa9", false, false },
    /* a byte that is not UTF-8 stands alone, and matches itself */
    { "/a/?", "/a/\xff", true, true },
    { "/a/?", "/a/\xc3", true, true },
    { "/a/\xff", "/a/\xff", true, true },
    { "/a/\xc3", "/a/\xc3\xa9", false, false },
    /* a set: members literal, ranges, no negation */
    { "/a/[bc]", "/a/c", true, true },
    { "/a/[bc]", "/a/d", false, false },
    { "/a/[b-d]", "/a/c", true, true },
    { "/a/[b-d]", "/a/e", false, false },
    { "/a/[!b]", "/a/!", true, true },
    { "/a/[!b]", "/a/b", true, true },
    { "/a/[!b]", "/a/c", false, false },
    { "/a/[^b]", "/a/^", true, true },
    { "/a/[^b]", "/a/c", false, false },
    { "/a/[*]", "/a/*", true, true },
    { "/a/[*]", "/a/x", false, false },
    { "/a/[?]", "/a/?", true, true },
    { "/a/[?]", "/a/x", false, false },
    { "/a[/]b", "/a/b", true, true },
    { "/a/[b-]", "/a/-", true, true },
    { "/a/[-b]", "/a/-", true, true },
    { "/a/[\xc3\xa9x]", "/a/\xc3\xa9", true, true },
    { "/a/[[]", "/a/[", true, true },
    /* `[]`, a backwards range and an unclosed '[' are literal text */
    { "/a/[]", "/a/[]", true, true },
    { "/a/[]x]", "/a/[]x]", true, true },
    { "/a/[z-a]", "/a/[z-a]", true, true },
    { "/a/[z-a]", "/a/z", false, false },
    { "/a/[*z-a]", "/a/[*z-a]", true, true },
    { "/a/[*z-a]", "/a/[xz-a]", false, false },
    { "/a/[x", "/a/[x", true, true },
    { "/a/[x*", "/a/[xyz", true, true },
    { "/a/[x*", "/a/x", false, false },
    { "/a/x]", "/a/x]", true, true },
    /* no escapes: a backslash is a character */
    { "/a/\\*", "/a/\\b", true, true },
    { "/a/\\*", "/a/*", false, false },
    /* a literal pattern is its own path, and covers what is beneath it */
    { "/a/b", "/a/b", true, true },
    { "/a/b", "/a/b/c", false, true },
    { "/a/b", "/a/bc", false, false },
    /* the rule of a deny: a match covers what lies beneath it */
    { "/a/*.d", "/a/x.d/y/z", false, true },
    { "/a/*.d", "/a/x.dz", false, false },
    { "/a/*.d", "/a/x.d", true, true },
};

static void matcher_follows_every_syntax_rule(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(match_cases) / sizeof(match_cases[0]); i++) {
        bool m = fs_glob_match(match_cases[i].pattern, match_cases[i].path);
        bool b = fs_glob_match_beneath(match_cases[i].pattern, match_cases[i].path);

        if (m != match_cases[i].match || b != match_cases[i].beneath)
            fail_msg("%s against %s: match %d beneath %d, want %d %d", match_cases[i].pattern,
                     match_cases[i].path, m, b, match_cases[i].match, match_cases[i].beneath);
    }
}

/* The patterns that make a backtracking matcher take exponential time
 * have an answer here, in one pass over the path. */
static void crafted_patterns_are_answered(void **state)
{
    char pattern[PATH_MAX], path[PATH_MAX], *long_pattern;
    size_t o = 0;

    (void)state;
    pattern[o++] = '/';
    for (int i = 0; i < 600; i++) {
        pattern[o++] = '*';
        pattern[o++] = '*';
        pattern[o++] = 'a';
    }
    pattern[o++] = 'b';
    pattern[o] = '\0';
    path[0] = '/';
    memset(path + 1, 'a', 3000);
    path[3001] = '\0';
    assert_false(fs_glob_match(pattern, path));
    path[3000] = 'b';
    assert_true(fs_glob_match(pattern, path));
    strcpy(path + 3001, "/x");
    assert_false(fs_glob_match(pattern, path));
    assert_true(fs_glob_match_beneath(pattern, path));
    /* 600 'a' are needed before the 'b' */
    strcpy(path + 600, "b");
    assert_false(fs_glob_match(pattern, path));
    path[600] = 'a';
    strcpy(path + 601, "b");
    assert_true(fs_glob_match(pattern, path));
    /* too long to be a path: matches nothing */
    long_pattern = malloc(PATH_MAX + 1);
    assert_non_null(long_pattern);
    long_pattern[0] = '/';
    memset(long_pattern + 1, '*', PATH_MAX - 1);
    long_pattern[PATH_MAX] = '\0';
    assert_false(fs_glob_match(long_pattern, "/x"));
    long_pattern[PATH_MAX - 1] = '\0';
    assert_true(fs_glob_match(long_pattern, "/x"));
    free(long_pattern);
}

static void is_pattern_needs_real_glob_syntax(void **state)
{
    static const struct {
        const char *s;
        bool want;
    } cases[] = {
        { "/a/b", false },    { "/a/*", true },       { "/a/?", true },      { "/a/[x]", true },
        { "/a/[x-y]", true }, { "/a/[]", false },     { "/a/[z-a]", false }, { "/a/[x", false },
        { "/a/]", false },    { "/a/[*z-a]", false }, { "/a/[]*", true },    { "", false },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (fs_glob_is_pattern(cases[i].s) != cases[i].want)
            fail_msg("is_pattern(%s) != %d", cases[i].s, cases[i].want);
}

static void prefix_is_the_literal_directories_before_a_wildcard(void **state)
{
    static const struct {
        const char *pattern;
        size_t want;
    } cases[] = {
        { "/a/b/*.txt", 4 }, { "/a/b/c?", 4 }, { "/a/**/x", 2 },     { "/a/b[1]/c", 2 },
        { "/a/[/]b/*", 2 },  { "/a/[]/*", 5 }, { "/a/[z-a]/x*", 8 }, { "/a/b", 4 },
        { "/a/b/[c]", 4 },   { "/*", 0 },      { "/**/*.pem", 0 },   { "/a*", 0 },
        { "/[a]/b", 0 },     { "/", 1 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (fs_glob_prefix_len(cases[i].pattern) != cases[i].want)
            fail_msg("prefix_len(%s) = %zu, want %zu", cases[i].pattern,
                     fs_glob_prefix_len(cases[i].pattern), cases[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matcher_follows_every_syntax_rule),
        cmocka_unit_test(crafted_patterns_are_answered),
        cmocka_unit_test(is_pattern_needs_real_glob_syntax),
        cmocka_unit_test(prefix_is_the_literal_directories_before_a_wildcard),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
