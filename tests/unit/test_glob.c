/* fs/glob.c: srt's glob syntax, matched without a regex, and expanded over
 * real trees in a private directory under /var/tmp. Every syntax rule, the
 * literal prefix, and the walk: pruned to where the pattern can match,
 * symlinks followed for a deny and never for an allow, loops walked once,
 * unreadable directories and the bounds reported whole, a literal name with
 * brackets found as itself, a missing prefix adding nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/glob.h"
#include "tests/unit/tmptree.h"

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

/* ---- fixture: a private directory D ------------------------------------- */

struct fx {
    char d[256]; /* realpath of the mkdtemp directory */
};

static int fx_setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));

    if (!fx || tmptree_make("glob", fx->d, sizeof(fx->d)) < 0) {
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *fx = *state;

    tmptree_remove(fx->d);
    free(fx);
    return 0;
}

/* "a/b/" makes directories a and a/b; "a/f" makes a and an empty file f. */
static void mk(const struct fx *fx, const char *rel)
{
    char failed[PATH_MAX];

    if (tmptree_put(fx->d, rel, NULL, failed, sizeof(failed)) < 0)
        fail_msg("make %s: %s", failed, strerror(errno));
}

static void ln(const struct fx *fx, const char *target, const char *name)
{
    char failed[PATH_MAX];

    if (tmptree_symlink(fx->d, target, name, failed, sizeof(failed)) < 0)
        fail_msg("symlink %s -> %s: %s", failed, target, strerror(errno));
}

static void mode(const struct fx *fx, const char *rel, mode_t m)
{
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", fx->d, rel);
    if (chmod(path, m) < 0)
        fail_msg("chmod %s: %s", path, strerror(errno));
}

/* ---- expansion as sorted text: "kind $D/rel" lines ----------------------- */

#define TEXT_MAX 16384

static const char *kind_name(enum fs_glob_kind k)
{
    switch (k) {
    case FS_GLOB_FILE:
        return "file";
    case FS_GLOB_DIR:
        return "dir";
    case FS_GLOB_UNWALKED:
        return "unwalked";
    case FS_GLOB_UNLISTABLE:
        return "unlistable";
    }
    return "?";
}

static void render(const struct fs_glob_hits *h, const char *d, char *text)
{
    size_t o = 0, dlen = strlen(d);

    text[0] = '\0';
    for (size_t i = 0; i < h->n; i++) {
        const char *p = h->v[i].path;
        bool in_d = strncmp(p, d, dlen) == 0 && (p[dlen] == '/' || p[dlen] == '\0');

        o += (size_t)snprintf(text + o, TEXT_MAX - o, "%s %s%s\n", kind_name(h->v[i].kind),
                              in_d ? "$D" : "", in_d ? p + dlen : p);
    }
}

/* Expand "$D/..." and render it. No cmocka here: it also runs in a child
 * as uid 65534. */
static int expand_text(const char *d, const char *pattern, const struct fs_glob_opts *opts,
                       char *text, struct nf_err *err)
{
    struct fs_glob_hits hits = { 0 };
    char p[PATH_MAX];

    snprintf(p, sizeof(p), "%s%s", d, pattern + 2);
    if (fs_glob_expand(p, opts, &hits, err) < 0)
        return -1;
    for (size_t i = 1; i < hits.n; i++)
        if (strcmp(hits.v[i - 1].path, hits.v[i].path) >= 0) {
            snprintf(err->msg, sizeof(err->msg), "hits not sorted, or not unique: %s, %s",
                     hits.v[i - 1].path, hits.v[i].path);
            fs_glob_hits_free(&hits);
            return -1;
        }
    render(&hits, d, text);
    fs_glob_hits_free(&hits);
    return 0;
}

static const struct fs_glob_opts deny = { .follow_links = true };
static const struct fs_glob_opts allow = { .follow_links = false };

static void expect(const struct fx *fx, const char *pattern, const struct fs_glob_opts *opts,
                   const char *want)
{
    char got[TEXT_MAX];
    struct nf_err err = { 0 };

    if (expand_text(fx->d, pattern, opts, got, &err) < 0)
        fail_msg("expand %s: %s", pattern, err.msg);
    if (strcmp(got, want) != 0)
        fail_msg("expand %s (%s):\n--- want\n%s--- got\n%s", pattern,
                 opts->follow_links ? "deny" : "allow", want, got);
}

/* ---- expansion ------------------------------------------------------------ */

static void star_matches_in_one_directory(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a.txt");
    mk(fx, ".hidden.txt");
    mk(fx, "b.md");
    mk(fx, "sub/c.txt");
    mk(fx, "dir.txt/inner.txt");
    expect(fx, "$D/*.txt", &deny,
           "file $D/.hidden.txt\n"
           "file $D/a.txt\n"
           "dir $D/dir.txt\n");
    expect(fx, "$D/*.txt", &allow,
           "file $D/.hidden.txt\n"
           "file $D/a.txt\n"
           "dir $D/dir.txt\n");
}

static void globstar_slash_matches_at_every_depth(void **state)
{
    struct fx *fx = *state;

    mk(fx, "x.pem");
    mk(fx, "a/y.pem");
    mk(fx, "a/b/n.txt");
    mk(fx, "a/b/c/z.pem");
    mk(fx, "a/b/c/d/");
    expect(fx, "$D/**/*.pem", &deny,
           "file $D/a/b/c/z.pem\n"
           "file $D/a/y.pem\n"
           "file $D/x.pem\n");
    expect(fx, "$D/a/**/*.pem", &deny,
           "file $D/a/b/c/z.pem\n"
           "file $D/a/y.pem\n");
}

static void globstar_matches_everything_below(void **state)
{
    struct fx *fx = *state;

    mk(fx, "d.txt");
    mk(fx, "a/b/c.txt");
    mk(fx, "e/");
    expect(fx, "$D/**", &deny,
           "dir $D/a\n"
           "dir $D/a/b\n"
           "file $D/a/b/c.txt\n"
           "file $D/d.txt\n"
           "dir $D/e\n");
}

/* Only directories that can hold a match are listed: with a budget of
 * exactly D, x, y, x/c and y/c, nothing is left unwalked. */
static void walk_descends_only_where_the_pattern_can_match(void **state)
{
    struct fx *fx = *state;
    const struct fs_glob_opts tight = { .follow_links = true, .max_dirs = 5 };

    mk(fx, "x/c/f.txt");
    mk(fx, "x/d/c/g.txt");
    mk(fx, "x/e/");
    mk(fx, "y/c/h.txt");
    mk(fx, "y/c/deeper/i.txt");
    mk(fx, "z.txt");
    expect(fx, "$D/*/c/*.txt", &tight,
           "file $D/x/c/f.txt\n"
           "file $D/y/c/h.txt\n");
}

static void deny_follows_symlinks_and_allow_does_not(void **state)
{
    struct fx *fx = *state;

    mk(fx, "outside/k.pem");
    mk(fx, "outside/sub/j.pem");
    mk(fx, "w/real/r.pem");
    ln(fx, "../outside", "w/link");
    ln(fx, "../outside/k.pem", "w/f.pem");
    ln(fx, "nowhere", "w/dangling.pem");
    /* reported where they really are */
    expect(fx, "$D/w/**/*.pem", &deny,
           "file $D/outside/k.pem\n"
           "file $D/outside/sub/j.pem\n"
           "file $D/w/real/r.pem\n");
    expect(fx, "$D/w/**/*.pem", &allow, "file $D/w/real/r.pem\n");
    /* a matched link to a directory is that directory */
    expect(fx, "$D/w/*", &deny,
           "dir $D/outside\n"
           "file $D/outside/k.pem\n"
           "dir $D/w/real\n");
    expect(fx, "$D/w/*", &allow, "dir $D/w/real\n");
}

/* A link back up the tree is not descended: no directory is walked twice,
 * and the bounds are never reached. A matched link is where it leads; one
 * to / is stood in for by the directory holding it. */
static void symlink_loops_are_not_walked_again(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a/b/c.pem");
    ln(fx, ".", "a/self");
    ln(fx, "../..", "a/b/up");
    ln(fx, "/", "a/root");
    ln(fx, "loop2", "loop1");
    ln(fx, "loop1", "loop2");
    expect(fx, "$D/**/*.pem", &deny, "file $D/a/b/c.pem\n");
    expect(fx, "$D/**", &deny,
           "dir $D\n"
           "dir $D/a\n"
           "dir $D/a/b\n"
           "file $D/a/b/c.pem\n");
    expect(fx, "$D/**", &allow,
           "dir $D/a\n"
           "dir $D/a/b\n"
           "file $D/a/b/c.pem\n");
}

/* Two links to one directory: both spellings are walked, each match is
 * reported once, where it is. */
static void a_directory_reached_twice_is_reported_once(void **state)
{
    struct fx *fx = *state;

    mk(fx, "t/k.pem");
    mk(fx, "w/");
    ln(fx, "../t", "w/l1");
    ln(fx, "../t", "w/l2");
    expect(fx, "$D/w/**/*.pem", &deny, "file $D/t/k.pem\n");
}

static void bounds_report_unwalked_directories(void **state)
{
    struct fx *fx = *state;
    const struct fs_glob_opts two_dirs = { .follow_links = true, .max_dirs = 2 };
    const struct fs_glob_opts one_dir = { .follow_links = true, .max_dirs = 1 };
    const struct fs_glob_opts one_level = { .follow_links = true, .max_depth = 1 };

    mk(fx, "chain/top.pem");
    mk(fx, "chain/a/a.pem");
    mk(fx, "chain/a/b/c/x.pem");
    mk(fx, "fan/f.pem");
    mk(fx, "fan/p/");
    mk(fx, "fan/q/");
    mk(fx, "fan/r/");
    expect(fx, "$D/chain/**/*.pem", &two_dirs,
           "file $D/chain/a/a.pem\n"
           "unwalked $D/chain/a/b\n"
           "file $D/chain/top.pem\n");
    expect(fx, "$D/chain/**/*.pem", &one_level,
           "file $D/chain/a/a.pem\n"
           "unwalked $D/chain/a/b\n"
           "file $D/chain/top.pem\n");
    expect(fx, "$D/fan/**/*.pem", &one_dir,
           "file $D/fan/f.pem\n"
           "unwalked $D/fan/p\n"
           "unwalked $D/fan/q\n"
           "unwalked $D/fan/r\n");
    /* a directory that matched but was not walked is unwalked: what is
     * beneath it was never seen */
    expect(fx, "$D/chain/**", &one_level,
           "dir $D/chain/a\n"
           "file $D/chain/a/a.pem\n"
           "unwalked $D/chain/a/b\n"
           "file $D/chain/top.pem\n");
    /* within the defaults, nothing is left */
    expect(fx, "$D/chain/**/*.pem", &deny,
           "file $D/chain/a/a.pem\n"
           "file $D/chain/a/b/c/x.pem\n"
           "file $D/chain/top.pem\n");
}

/* srt reads "a[1].txt" both as a glob and as the name it spells. */
static void literal_name_with_brackets_is_found_too(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a[1].txt");
    mk(fx, "a1.txt");
    mk(fx, "[x]/f");
    ln(fx, "a1.txt", "l[1]");
    expect(fx, "$D/a[1].txt", &deny,
           "file $D/a1.txt\n"
           "file $D/a[1].txt\n");
    expect(fx, "$D/[x]/f", &deny, "file $D/[x]/f\n");
    expect(fx, "$D/*.txt", &deny,
           "file $D/a1.txt\n"
           "file $D/a[1].txt\n");
    /* a literal name that is a link: where it leads for a deny, nothing for
     * an allow */
    expect(fx, "$D/l[1]", &deny, "file $D/a1.txt\n");
    expect(fx, "$D/l[1]", &allow, "");
}

static void missing_prefix_adds_nothing(void **state)
{
    struct fx *fx = *state;

    mk(fx, "file");
    ln(fx, "nowhere", "dangling");
    expect(fx, "$D/nothere/*.txt", &deny, "");
    expect(fx, "$D/nothere/deeper/**", &deny, "");
    expect(fx, "$D/file/*", &deny, "");
    expect(fx, "$D/dangling/*", &deny, "");
}

static void prefix_through_a_symlink_reports_real_paths(void **state)
{
    struct fx *fx = *state;

    mk(fx, "real/a.txt");
    ln(fx, "real", "via");
    expect(fx, "$D/via/*.txt", &deny, "file $D/real/a.txt\n");
    expect(fx, "$D/via/*.txt", &allow, "file $D/real/a.txt\n");
}

static void expect_error(const struct fx *fx, const char *pattern, int code)
{
    struct fs_glob_hits hits = { 0 };
    struct nf_err err = { 0 };
    char p[PATH_MAX];

    if (strncmp(pattern, "$D", 2) == 0)
        snprintf(p, sizeof(p), "%s%s", fx->d, pattern + 2);
    else
        snprintf(p, sizeof(p), "%s", pattern);
    if (fs_glob_expand(p, &deny, &hits, &err) != -1)
        fail_msg("expand %s: no error", pattern);
    if (err.code != code || !strstr(err.msg, "glob "))
        fail_msg("expand %s: code %d (%s), want %d", pattern, err.code, err.msg, code);
    assert_int_equal(hits.n, 0);
    fs_glob_hits_free(&hits);
}

static void unusable_patterns_are_refused(void **state)
{
    struct fx *fx = *state;

    /* nothing but / before the first wildcard: it would walk everything */
    expect_error(fx, "/*", EINVAL);
    expect_error(fx, "/**/*.pem", EINVAL);
    expect_error(fx, "/e*/passwd", EINVAL);
    /* not absolute and normal, or not a glob at all */
    expect_error(fx, "a/*", EINVAL);
    expect_error(fx, "$D/a/../*", EINVAL);
    expect_error(fx, "$D/a//*", EINVAL);
    expect_error(fx, "$D/*/", EINVAL);
    expect_error(fx, "$D/a", EINVAL);
    expect_error(fx, "$D/a[]", EINVAL);
}

static void prefix_that_cannot_be_resolved_is_an_error(void **state)
{
    struct fx *fx = *state;

    ln(fx, "loop", "loop");
    expect_error(fx, "$D/loop/*", ELOOP);
    expect_error(fx, "$D/loop/x/*", ELOOP);
}

static void hits_accumulate_each_path_once(void **state)
{
    struct fx *fx = *state;
    struct fs_glob_hits hits = { 0 };
    struct nf_err err = { 0 };
    char p[PATH_MAX], bad[PATH_MAX];

    mk(fx, "a.txt");
    mk(fx, "b.txt");
    mk(fx, "c.md");
    snprintf(p, sizeof(p), "%s/*.txt", fx->d);
    assert_int_equal(fs_glob_expand(p, &deny, &hits, &err), 0);
    snprintf(p, sizeof(p), "%s/?.*", fx->d);
    assert_int_equal(fs_glob_expand(p, &deny, &hits, &err), 0);
    assert_int_equal(hits.n, 3);
    /* a failing expansion leaves what was there */
    snprintf(bad, sizeof(bad), "%s/loop", fx->d);
    assert_int_equal(symlink("loop", bad), 0);
    snprintf(p, sizeof(p), "%s/loop/*", fx->d);
    assert_int_equal(fs_glob_expand(p, &deny, &hits, &err), -1);
    assert_int_equal(hits.n, 3);
    snprintf(p, sizeof(p), "%s/c.md", fx->d);
    assert_string_equal(hits.v[2].path, p);
    assert_int_equal(hits.v[2].kind, FS_GLOB_FILE);
    fs_glob_hits_free(&hits);
    assert_null(hits.v);
    assert_int_equal(hits.n, 0);
}

/* 0: as expected; otherwise which check failed. Runs in a child as uid
 * 65534 when the suite runs as root, so no cmocka assertion may fire. */
static int check_unreadable(const char *d)
{
    static const struct {
        const char *pattern;
        const char *want; /* NULL: an error, EACCES */
    } cases[] = {
        /* a directory that could hold a match but cannot be listed is
         * reported whole; one that cannot hold any is left alone */
        { "$D/**/*.pem", "unlistable $D/closed\n"
                         "unlistable $D/locked\n"
                         "file $D/open/y.pem\n" },
        { "$D/*.pem", "" },
        /* an unlistable prefix, and a literal name still found in it */
        { "$D/locked/*.pem", "unlistable $D/locked\n" },
        { "$D/locked/a[1].pem", "unlistable $D/locked\n"
                                "file $D/locked/a[1].pem\n" },
        /* a prefix behind a directory we cannot search: an error */
        { "$D/closed/sub/*.pem", NULL },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char got[TEXT_MAX];
        struct nf_err err = { 0 };
        int r = expand_text(d, cases[i].pattern, &deny, got, &err);

        if (!cases[i].want) {
            if (r != -1 || err.code != EACCES) {
                fprintf(stderr, "# %s: want EACCES, got %d %s\n", cases[i].pattern, r, err.msg);
                return 30 + (int)i;
            }
            continue;
        }
        if (r < 0) {
            fprintf(stderr, "# %s: %s\n", cases[i].pattern, err.msg);
            return 20 + (int)i;
        }
        if (strcmp(got, cases[i].want) != 0) {
            fprintf(stderr, "# %s:\n--- want\n%s--- got\n%s", cases[i].pattern, cases[i].want, got);
            return 10 + (int)i;
        }
    }
    return 0;
}

static void unreadable_directory_is_reported_whole(void **state)
{
    struct fx *fx = *state;
    pid_t pid;
    int status;

    mk(fx, "locked/x.pem");
    mk(fx, "locked/a[1].pem");
    mk(fx, "closed/sub/z.pem");
    mk(fx, "open/y.pem");
    mode(fx, "locked", 0711); /* searchable, not listable */
    mode(fx, "closed", 0700); /* neither, but for its owner */
    if (geteuid() != 0) {
        assert_int_equal(check_unreadable(fx->d), 0);
        return;
    }
    /* root lists anything; ask as nobody instead */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
            setresuid(65534, 65534, 65534) < 0)
            _exit(77);
        _exit(check_unreadable(fx->d));
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        fail_msg("running as root and cannot drop to uid 65534: unreadable dirs not checked");
    if (WEXITSTATUS(status) != 0)
        fail_msg("unreadable directories as uid 65534: check %d failed", WEXITSTATUS(status));
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matcher_follows_every_syntax_rule),
        cmocka_unit_test(crafted_patterns_are_answered),
        cmocka_unit_test(is_pattern_needs_real_glob_syntax),
        cmocka_unit_test(prefix_is_the_literal_directories_before_a_wildcard),
        T(star_matches_in_one_directory),
        T(globstar_slash_matches_at_every_depth),
        T(globstar_matches_everything_below),
        T(walk_descends_only_where_the_pattern_can_match),
        T(deny_follows_symlinks_and_allow_does_not),
        T(symlink_loops_are_not_walked_again),
        T(a_directory_reached_twice_is_reported_once),
        T(bounds_report_unwalked_directories),
        T(literal_name_with_brackets_is_found_too),
        T(missing_prefix_adds_nothing),
        T(prefix_through_a_symlink_reports_real_paths),
        T(unusable_patterns_are_refused),
        T(prefix_that_cannot_be_resolved_is_an_error),
        T(hits_accumulate_each_path_once),
        T(unreadable_directory_is_reported_whole),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
