/* seccomp/observer.c, the pure half: turning a trapped call's (dirfd, path)
 * into one absolute path, and deciding whether a write there is one the
 * sandbox refuses. The mounts enforce; these only decide what the model is
 * told, so a wrong verdict is a false report or a silent refusal. */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "seccomp/observer.h"

/* ---- sc_path_resolve ------------------------------------------------------ */

struct resolve_case {
    const char *base;
    const char *rel;
    const char *want; /* NULL: -1 */
};

static void check_resolve(const struct resolve_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char out[PATH_MAX];
        int r;

        out[0] = '\0';
        r = sc_path_resolve(c[i].base, c[i].rel, out, sizeof(out));
        if (!c[i].want) {
            if (r != -1)
                fail_msg("(\"%s\", \"%s\") should fail, got \"%s\"", c[i].base ? c[i].base : "NULL",
                         c[i].rel, out);
            continue;
        }
        if (r != 0)
            fail_msg("(\"%s\", \"%s\") should give \"%s\", failed", c[i].base ? c[i].base : "NULL",
                     c[i].rel, c[i].want);
        if (strcmp(out, c[i].want) != 0)
            fail_msg("(\"%s\", \"%s\"): want \"%s\", got \"%s\"", c[i].base ? c[i].base : "NULL",
                     c[i].rel, c[i].want, out);
    }
}

static void absolute_path_ignores_the_base(void **state)
{
    static const struct resolve_case c[] = {
        { "/work", "/etc/passwd", "/etc/passwd" },
        { NULL, "/etc/passwd", "/etc/passwd" },
        { "relative/base", "/etc/passwd", "/etc/passwd" },
        { "", "/x", "/x" },
        { "/work", "/", "/" },
        { "/work", "//", "/" },
        { "/work", "/a/./b/../c", "/a/c" },
        { "/work", "/a//b///c/", "/a/b/c" },
        { "/work", "/..", "/" },
        { "/work", "/../../etc", "/etc" },
        { "/work", "/a/b/..", "/a" },
        { "/work", "/a/b/.", "/a/b" },
        { "/work", "/a/..b/.c/...", "/a/..b/.c/..." },
    };

    (void)state;
    check_resolve(c, sizeof(c) / sizeof(c[0]));
}

static void relative_path_is_taken_against_the_base(void **state)
{
    static const struct resolve_case c[] = {
        { "/work", "a.txt", "/work/a.txt" },
        { "/work", "sub/dir/f", "/work/sub/dir/f" },
        { "/work/proj", "./f", "/work/proj/f" },
        { "/work/proj", ".", "/work/proj" },
        { "/work/proj", "./", "/work/proj" },
        { "/work/proj", "..", "/work" },
        { "/work/proj", "../other/f", "/work/other/f" },
        { "/work/proj", "../../../../../etc/passwd", "/etc/passwd" },
        { "/work/proj", "a/../../b", "/work/b" },
        { "/work/proj", "a//b/", "/work/proj/a/b" },
        { "/", "etc", "/etc" },
        { "/", "..", "/" },
        /* the base comes from readlink and is normal already, but a
         * non-normal one is folded the same way */
        { "/work//proj/./sub/..", "f", "/work/proj/f" },
        { "/work/proj/", "f", "/work/proj/f" },
        /* names that only look special */
        { "/w", "...", "/w/..." },
        { "/w", ".hidden", "/w/.hidden" },
        { "/w", "..x/y", "/w/..x/y" },
        { "/w", "a b/c\td", "/w/a b/c\td" },
    };

    (void)state;
    check_resolve(c, sizeof(c) / sizeof(c[0]));
}

static void empty_relative_path_is_the_base_itself(void **state)
{
    /* utimensat(fd, NULL, ...) and AT_EMPTY_PATH act on the dirfd */
    static const struct resolve_case c[] = {
        { "/work/proj", "", "/work/proj" },
        { "/work/proj/", "", "/work/proj" },
        { "/work/./proj/../x", "", "/work/x" },
        { "/", "", "/" },
    };

    (void)state;
    check_resolve(c, sizeof(c) / sizeof(c[0]));
}

static void relative_path_without_an_absolute_base_fails(void **state)
{
    static const struct resolve_case c[] = {
        { NULL, "a", NULL },         { "", "a", NULL },  { "work", "a", NULL },
        { "./work", "a", NULL },     { NULL, "", NULL }, { "", "", NULL },
        { "pipe:[1234]", "", NULL },
    };

    (void)state;
    check_resolve(c, sizeof(c) / sizeof(c[0]));
}

/* A file named "~x" in the working directory is just that: the kernel has
 * no home directory, so neither may the resolver. */
static void tilde_is_an_ordinary_name(void **state)
{
    static const struct resolve_case c[] = {
        { "/work", "~", "/work/~" },     { "/work", "~backup", "/work/~backup" },
        { "/work", "~/x", "/work/~/x" }, { "/work", "a/~", "/work/a/~" },
        { "/work", "/~", "/~" },
    };

    (void)state;
    check_resolve(c, sizeof(c) / sizeof(c[0]));
}

static void overlong_result_fails(void **state)
{
    char *rel = malloc(PATH_MAX + 16);
    char out[PATH_MAX], small[16];

    (void)state;
    assert_non_null(rel);
    /* one component longer than PATH_MAX */
    memset(rel, 'a', PATH_MAX + 8);
    rel[PATH_MAX + 8] = '\0';
    assert_int_equal(sc_path_resolve("/work", rel, out, sizeof(out)), -1);
    rel[0] = '/';
    assert_int_equal(sc_path_resolve("/work", rel, out, sizeof(out)), -1);
    /* exactly PATH_MAX - 1 characters with the base fits; one more does not */
    memset(rel, 'b', PATH_MAX);
    rel[PATH_MAX - 1 - 6] = '\0'; /* "/work/" is 6 */
    assert_int_equal(sc_path_resolve("/work", rel, out, sizeof(out)), 0);
    assert_int_equal(strlen(out), PATH_MAX - 1);
    rel[PATH_MAX - 1 - 6] = 'b';
    rel[PATH_MAX - 6] = '\0';
    assert_int_equal(sc_path_resolve("/work", rel, out, sizeof(out)), -1);
    /* a long path that folds to a short one is fine */
    for (size_t i = 0; i + 3 < PATH_MAX; i += 3)
        memcpy(rel + i, "../", 3);
    strcpy(rel + (PATH_MAX / 3 - 1) * 3, "etc");
    assert_int_equal(sc_path_resolve("/work", rel, out, sizeof(out)), 0);
    assert_string_equal(out, "/etc");
    /* and the caller's buffer size is respected */
    memset(small, 'Z', sizeof(small));
    assert_int_equal(sc_path_resolve("/work", "abcdefghijkl", small, 8), -1);
    assert_int_equal(small[8], 'Z');
    assert_int_equal(sc_path_resolve("/w", "abc", small, 7), 0);
    assert_string_equal(small, "/w/abc");
    assert_int_equal(sc_path_resolve("/w", "abcd", small, 7), -1);
    free(rel);
}

/* ---- sc_classify ------------------------------------------------------------ */

static char *const roots[] = { "/work/proj", "/tmp/build", "/home/u/cache" };
static char *const protected_paths[] = {
    "/work/proj/.git/hooks",  "/work/proj/.bashrc",
    "/work/proj/.vscode",     "/home/u/.config/nsfence/config.ini", /* outside every root */
    "/tmp/build/.git/config",
};
static const struct sc_observer_config cfg = {
    .write_roots = roots,
    .n_write_roots = sizeof(roots) / sizeof(roots[0]),
    .protected_paths = protected_paths,
    .n_protected = sizeof(protected_paths) / sizeof(protected_paths[0]),
};
static const struct sc_observer_config empty_cfg = { 0 };

struct classify_case {
    const char *path;
    enum sc_verdict want;
};

static const char *verdict_name(enum sc_verdict v)
{
    switch (v) {
    case SC_ALLOWED:
        return "allowed";
    case SC_OUTSIDE:
        return "outside";
    case SC_PROTECTED:
        return "protected";
    }
    return "?";
}

static void check_classify(const struct sc_observer_config *config, const struct classify_case *c,
                           size_t n)
{
    for (size_t i = 0; i < n; i++) {
        enum sc_verdict v = sc_classify(config, c[i].path);

        if (v != c[i].want)
            fail_msg("%s: want %s, got %s", c[i].path, verdict_name(c[i].want), verdict_name(v));
    }
}

static void write_roots_and_what_is_beneath_them_are_allowed(void **state)
{
    static const struct classify_case c[] = {
        { "/work/proj", SC_ALLOWED },
        { "/work/proj/a.c", SC_ALLOWED },
        { "/work/proj/deep/er/f", SC_ALLOWED },
        { "/home/u/cache/x", SC_ALLOWED },
        { "/work/proj/.git/config", SC_ALLOWED },
        { "/work/proj/.bashrc.bak", SC_ALLOWED },
        { "/work/proj/.git/hooksx", SC_ALLOWED },
    };

    (void)state;
    check_classify(&cfg, c, sizeof(c) / sizeof(c[0]));
}

static void paths_outside_every_root_are_outside(void **state)
{
    static const struct classify_case c[] = {
        { "/", SC_OUTSIDE },
        { "/etc/passwd", SC_OUTSIDE },
        { "/work", SC_OUTSIDE },
        { "/work/projx", SC_OUTSIDE },
        { "/work/proj.bak/f", SC_OUTSIDE },
        { "/work/pro", SC_OUTSIDE },
        { "/home/u", SC_OUTSIDE },
        { "/home/u/.bashrc", SC_OUTSIDE },
        { "/home/u/cachex/f", SC_OUTSIDE },
        { "/usr/bin/ls", SC_OUTSIDE },
    };

    (void)state;
    check_classify(&cfg, c, sizeof(c) / sizeof(c[0]));
}

static void protected_paths_beat_write_roots(void **state)
{
    static const struct classify_case c[] = {
        { "/work/proj/.git/hooks", SC_PROTECTED },
        { "/work/proj/.git/hooks/pre-commit", SC_PROTECTED },
        { "/work/proj/.bashrc", SC_PROTECTED },
        { "/work/proj/.vscode/tasks.json", SC_PROTECTED },
        /* protected even where nothing else would be allowed */
        { "/home/u/.config/nsfence/config.ini", SC_PROTECTED },
        /* and inside the private /tmp's bound-over write root */
        { "/tmp/build/.git/config", SC_PROTECTED },
        /* a near miss of a protected path is just a file in the root */
        { "/work/proj/.vscodex", SC_ALLOWED },
        { "/work/proj/.git/hook", SC_ALLOWED },
        { "/home/u/.config/nsfence/config.ini.new", SC_OUTSIDE },
    };

    (void)state;
    check_classify(&cfg, c, sizeof(c) / sizeof(c[0]));
}

static void private_tmp_is_writable_but_not_itself(void **state)
{
    static const struct classify_case c[] = {
        { "/tmp/x", SC_ALLOWED }, { "/tmp/a/b/c", SC_ALLOWED }, { "/tmp/.X11-unix", SC_ALLOWED },
        { "/tmp", SC_OUTSIDE },   { "/tmpx", SC_OUTSIDE },      { "/tmpx/y", SC_OUTSIDE },
        { "/tm", SC_OUTSIDE },    { "/var/tmp/x", SC_OUTSIDE },
    };

    (void)state;
    check_classify(&cfg, c, sizeof(c) / sizeof(c[0]));
    check_classify(&empty_cfg, c, sizeof(c) / sizeof(c[0]));
}

static void harmless_dev_nodes_are_writable_exactly(void **state)
{
    static const struct classify_case c[] = {
        { "/dev/null", SC_ALLOWED },
        { "/dev/zero", SC_ALLOWED },
        { "/dev/full", SC_ALLOWED },
        { "/dev/random", SC_ALLOWED },
        { "/dev/urandom", SC_ALLOWED },
        { "/dev/tty", SC_ALLOWED },
        { "/dev/ptmx", SC_ALLOWED },
        { "/dev/stdin", SC_ALLOWED },
        { "/dev/stdout", SC_ALLOWED },
        { "/dev/stderr", SC_ALLOWED },
        /* near misses */
        { "/dev/nullx", SC_OUTSIDE },
        { "/dev/null/x", SC_OUTSIDE },
        { "/dev/nul", SC_OUTSIDE },
        { "/dev/tty1", SC_OUTSIDE },
        { "/dev/ttyS0", SC_OUTSIDE },
        { "/dev/stdout2", SC_OUTSIDE },
        { "/dev", SC_OUTSIDE },
        { "/dev/sda", SC_OUTSIDE },
        { "/dev/mem", SC_OUTSIDE },
        { "/dev/mqueue/q", SC_OUTSIDE },
        { "/devx/null", SC_OUTSIDE },
    };

    (void)state;
    check_classify(&cfg, c, sizeof(c) / sizeof(c[0]));
    check_classify(&empty_cfg, c, sizeof(c) / sizeof(c[0]));
}

static void dev_directories_allow_their_entries_not_themselves(void **state)
{
    static const struct classify_case c[] = {
        { "/dev/pts/0", SC_ALLOWED },  { "/dev/pts/ptmx", SC_ALLOWED },
        { "/dev/pts", SC_OUTSIDE },    { "/dev/ptsx", SC_OUTSIDE },
        { "/dev/ptsx/0", SC_OUTSIDE }, { "/dev/shm/sem.x", SC_ALLOWED },
        { "/dev/shm", SC_OUTSIDE },    { "/dev/shmem/x", SC_OUTSIDE },
        { "/dev/fd/1", SC_ALLOWED },   { "/dev/fd", SC_OUTSIDE },
        { "/dev/fdx", SC_OUTSIDE },
    };

    (void)state;
    check_classify(&cfg, c, sizeof(c) / sizeof(c[0]));
    check_classify(&empty_cfg, c, sizeof(c) / sizeof(c[0]));
}

static void own_file_descriptors_are_writable(void **state)
{
    static const struct classify_case c[] = {
        { "/proc/self/fd/1", SC_ALLOWED },        { "/proc/self/fd/255", SC_ALLOWED },
        { "/proc/thread-self/fd/3", SC_ALLOWED }, { "/proc/self/fd", SC_OUTSIDE },
        { "/proc/self/fdinfo/1", SC_OUTSIDE },    { "/proc/self/fdx/1", SC_OUTSIDE },
        { "/proc/self/environ", SC_OUTSIDE },     { "/proc/self/attr/current", SC_OUTSIDE },
        { "/proc/1/fd/1", SC_OUTSIDE },           { "/proc/sys/kernel/core_pattern", SC_OUTSIDE },
        { "/proc/thread-self/fd", SC_OUTSIDE },
    };

    (void)state;
    check_classify(&cfg, c, sizeof(c) / sizeof(c[0]));
    check_classify(&empty_cfg, c, sizeof(c) / sizeof(c[0]));
}

static void protected_path_beats_the_builtin_exceptions(void **state)
{
    static char *const p[] = { "/tmp/hooks", "/dev/null" };
    const struct sc_observer_config c2 = {
        .protected_paths = p,
        .n_protected = 2,
    };
    static const struct classify_case c[] = {
        { "/tmp/hooks/x", SC_PROTECTED },
        { "/tmp/hooks", SC_PROTECTED },
        { "/tmp/hooksx", SC_ALLOWED },
        { "/dev/null", SC_PROTECTED },
    };

    (void)state;
    check_classify(&c2, c, sizeof(c) / sizeof(c[0]));
}

static void root_as_write_root_allows_all_but_protected(void **state)
{
    static char *const r[] = { "/" };
    static char *const p[] = { "/etc/shadow" };
    const struct sc_observer_config c2 = {
        .write_roots = r,
        .n_write_roots = 1,
        .protected_paths = p,
        .n_protected = 1,
    };
    static const struct classify_case c[] = {
        { "/", SC_ALLOWED },
        { "/etc/passwd", SC_ALLOWED },
        { "/tmp", SC_ALLOWED },
        { "/etc/shadow", SC_PROTECTED },
        { "/etc/shadowx", SC_ALLOWED },
    };

    (void)state;
    check_classify(&c2, c, sizeof(c) / sizeof(c[0]));
}

/* What the observer does: resolve, then classify. */
static void resolved_relative_writes_are_classified_by_where_they_land(void **state)
{
    static const struct {
        const char *base, *rel;
        enum sc_verdict want;
    } c[] = {
        { "/work/proj", "src/a.c", SC_ALLOWED },
        { "/work/proj", "../escape", SC_OUTSIDE },
        { "/work/proj/src", "../.git/hooks/post-checkout", SC_PROTECTED },
        { "/work/proj", "./.git/./hooks/../hooks/x", SC_PROTECTED },
        { "/tmp", "x", SC_ALLOWED },
        { "/tmp/y", "..", SC_OUTSIDE },
        { "/dev", "null", SC_ALLOWED },
        { "/dev/pts", "", SC_OUTSIDE },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char out[PATH_MAX];
        enum sc_verdict v;

        assert_int_equal(sc_path_resolve(c[i].base, c[i].rel, out, sizeof(out)), 0);
        v = sc_classify(&cfg, out);
        if (v != c[i].want)
            fail_msg("%s + %s = %s: want %s, got %s", c[i].base, c[i].rel, out,
                     verdict_name(c[i].want), verdict_name(v));
    }
}

/* A denied-read directory is a writable tmpfs of the sandbox's own; its
 * allow_read carve-outs and masked files are read-only; the deepest mount
 * holding a path decides (a write root inside a carve-out inside a mask). */
static void masked_directories_are_writable_but_not_their_carve_outs(void **state)
{
    static char *const r[] = { "/home/u/proj", "/home/u/.ssh/pub/w" };
    static char *const m[] = { "/home/u/.ssh", "/etc/secret" };
    static char *const ro[] = { "/home/u/.ssh/pub", "/home/u/proj/token" };
    const struct sc_observer_config c2 = {
        .write_roots = r,
        .n_write_roots = 2,
        .scratch = m,
        .n_scratch = 2,
        .read_only = ro,
        .n_read_only = 2,
    };
    static const struct classify_case c[] = {
        { "/home/u/.ssh", SC_ALLOWED },         { "/home/u/.ssh/known_hosts", SC_ALLOWED },
        { "/etc/secret/cache/x", SC_ALLOWED },  { "/etc/secretx", SC_OUTSIDE },
        { "/home/u/.ssh/pub", SC_OUTSIDE },     { "/home/u/.ssh/pub/id.pub", SC_OUTSIDE },
        { "/home/u/.ssh/pub/w/x", SC_ALLOWED }, { "/home/u/proj/token", SC_OUTSIDE },
        { "/home/u/proj/tokens", SC_ALLOWED },  { "/home/u/x", SC_OUTSIDE },
    };

    (void)state;
    check_classify(&c2, c, sizeof(c) / sizeof(c[0]));
}

/* ---- sc_create_kind, sc_refused -------------------------------------------- */

static void create_kinds_follow_the_call_and_its_flags(void **state)
{
    (void)state;
    assert_int_equal(sc_create_kind("mkdir", 0), SC_CREATE_EXCL);
    assert_int_equal(sc_create_kind("mkdirat", 0), SC_CREATE_EXCL);
    assert_int_equal(sc_create_kind("mknodat", 0), SC_CREATE_EXCL);
    assert_int_equal(sc_create_kind("symlink", 0), SC_CREATE_EXCL);
    assert_int_equal(sc_create_kind("linkat", 0), SC_CREATE_EXCL);
    assert_int_equal(sc_create_kind("openat", O_CREAT | O_EXCL | O_WRONLY), SC_CREATE_EXCL);
    assert_int_equal(sc_create_kind("openat2", O_CREAT | O_EXCL | O_RDWR), SC_CREATE_EXCL);
    assert_int_equal(sc_create_kind("open", O_CREAT | O_WRONLY), SC_CREATE_NO);
    assert_int_equal(sc_create_kind("openat", O_CREAT | O_RDONLY), SC_CREATE_RDONLY);
    assert_int_equal(sc_create_kind("openat", O_CREAT | O_RDONLY | O_TRUNC), SC_CREATE_NO);
    assert_int_equal(sc_create_kind("openat", O_WRONLY | O_APPEND), SC_CREATE_NEEDS);
    assert_int_equal(sc_create_kind("openat", O_TMPFILE | O_WRONLY), SC_CREATE_NO);
    assert_int_equal(sc_create_kind("creat", 0), SC_CREATE_NO);
    assert_int_equal(sc_create_kind("rename", 0), SC_CREATE_NO);
    assert_int_equal(sc_create_kind("unlinkat", 0), SC_CREATE_NO);
    assert_int_equal(sc_create_kind("fchmodat", 0), SC_CREATE_NEEDS);
    assert_int_equal(sc_create_kind("utimensat", 0), SC_CREATE_NEEDS);
    assert_int_equal(sc_create_kind("truncate", 0), SC_CREATE_NEEDS);
}

static void only_attempts_the_mounts_refuse_are_violations(void **state)
{
    static const struct {
        enum sc_verdict v;
        enum sc_create c;
        enum sc_target t;
        bool want;
    } c[] = {
        /* `mkdir -p /var/tmp/w/x`: /var and /var/tmp exist (EEXIST) */
        { SC_OUTSIDE, SC_CREATE_EXCL, SC_TARGET_EXISTS, false },
        { SC_OUTSIDE, SC_CREATE_EXCL, SC_TARGET_ABSENT, true },
        { SC_PROTECTED, SC_CREATE_EXCL, SC_TARGET_EXISTS, false },
        { SC_PROTECTED, SC_CREATE_EXCL, SC_TARGET_ABSENT, true },
        /* a directory that is not there: ENOENT before any write check */
        { SC_OUTSIDE, SC_CREATE_EXCL, SC_TARGET_NO_PARENT, false },
        { SC_OUTSIDE, SC_CREATE_NO, SC_TARGET_NO_PARENT, false },
        /* open(O_CREAT) to read an existing file just opens it */
        { SC_OUTSIDE, SC_CREATE_RDONLY, SC_TARGET_EXISTS, false },
        { SC_OUTSIDE, SC_CREATE_RDONLY, SC_TARGET_ABSENT, true },
        /* writing, replacing, removing what is there: EROFS */
        { SC_OUTSIDE, SC_CREATE_NO, SC_TARGET_EXISTS, true },
        { SC_OUTSIDE, SC_CREATE_NO, SC_TARGET_ABSENT, true },
        { SC_PROTECTED, SC_CREATE_NEEDS, SC_TARGET_EXISTS, true },
        /* chmod of a missing name: ENOENT */
        { SC_OUTSIDE, SC_CREATE_NEEDS, SC_TARGET_ABSENT, false },
        /* not looked at (unreadable, or the caller gone): as the verdict says */
        { SC_OUTSIDE, SC_CREATE_EXCL, SC_TARGET_UNKNOWN, true },
        { SC_OUTSIDE, SC_CREATE_NEEDS, SC_TARGET_UNKNOWN, true },
        /* inside a write root nothing is a violation */
        { SC_ALLOWED, SC_CREATE_NO, SC_TARGET_EXISTS, false },
        { SC_ALLOWED, SC_CREATE_EXCL, SC_TARGET_ABSENT, false },
        { SC_ALLOWED, SC_CREATE_NO, SC_TARGET_UNKNOWN, false },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
        if (sc_refused(c[i].v, c[i].c, c[i].t) != c[i].want)
            fail_msg("case %zu (%s, create %d, target %d): want %s", i, verdict_name(c[i].v),
                     (int)c[i].c, (int)c[i].t, c[i].want ? "refused" : "not refused");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(absolute_path_ignores_the_base),
        cmocka_unit_test(relative_path_is_taken_against_the_base),
        cmocka_unit_test(empty_relative_path_is_the_base_itself),
        cmocka_unit_test(relative_path_without_an_absolute_base_fails),
        cmocka_unit_test(tilde_is_an_ordinary_name),
        cmocka_unit_test(overlong_result_fails),
        cmocka_unit_test(write_roots_and_what_is_beneath_them_are_allowed),
        cmocka_unit_test(paths_outside_every_root_are_outside),
        cmocka_unit_test(protected_paths_beat_write_roots),
        cmocka_unit_test(private_tmp_is_writable_but_not_itself),
        cmocka_unit_test(harmless_dev_nodes_are_writable_exactly),
        cmocka_unit_test(dev_directories_allow_their_entries_not_themselves),
        cmocka_unit_test(own_file_descriptors_are_writable),
        cmocka_unit_test(protected_path_beats_the_builtin_exceptions),
        cmocka_unit_test(root_as_write_root_allows_all_but_protected),
        cmocka_unit_test(resolved_relative_writes_are_classified_by_where_they_land),
        cmocka_unit_test(masked_directories_are_writable_but_not_their_carve_outs),
        cmocka_unit_test(create_kinds_follow_the_call_and_its_flags),
        cmocka_unit_test(only_attempts_the_mounts_refuse_are_violations),
    };

    return cmocka_run_group_tests_name("observer", tests, NULL, NULL);
}
