/* fs/resolve.c: a policy path resolved to where a mount must land. Real,
 * harmless I/O in a private directory under /var/tmp: existing paths agree
 * with realpath(3), a missing tail is kept, a dangling symlink leads to
 * where a write through it would create the file, and loops, EACCES and
 * impossible paths are told apart. */
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

#include "fs/resolve.h"
#include "src/policy.h"
#include "tests/unit/tmptree.h"

/* ---- fixture: a private directory D ------------------------------------- */

struct fx {
    char d[256]; /* realpath of the mkdtemp directory */
};

static int fx_setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));

    if (!fx || tmptree_make("resolve", fx->d, sizeof(fx->d)) < 0) {
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

/* "$D/rest" → fx->d + "/rest"; anything else is copied. */
static const char *xp(const struct fx *fx, const char *in, char *out, size_t outsz)
{
    if (strncmp(in, "$D", 2) == 0)
        snprintf(out, outsz, "%s%s", fx->d, in + 2);
    else
        snprintf(out, outsz, "%s", in);
    return out;
}

/* "a/b/" makes directories a and a/b; "a/f" makes a and an empty file f. */
static void mk(const struct fx *fx, const char *rel)
{
    char failed[PATH_MAX];

    if (tmptree_put(fx->d, rel, NULL, failed, sizeof(failed)) < 0)
        fail_msg("make %s: %s", failed, strerror(errno));
}

/* name → target ("$D" expanded in the target). */
static void ln(const struct fx *fx, const char *target, const char *name)
{
    char t[PATH_MAX], failed[PATH_MAX];

    xp(fx, target, t, sizeof(t));
    if (tmptree_symlink(fx->d, t, name, failed, sizeof(failed)) < 0)
        fail_msg("symlink %s -> %s: %s", failed, t, strerror(errno));
}

static const char *res_name(enum fs_res r)
{
    switch (r) {
    case FS_RES_EXISTS:
        return "exists";
    case FS_RES_MISSING:
        return "missing";
    case FS_RES_IMPOSSIBLE:
        return "impossible";
    }
    return "?";
}

/* Resolve in ("$D" expanded): want res, out, and for a missing path the
 * prefix of out that ends with the first missing component. An existing
 * path must also agree with realpath(3), the kernel's own answer. */
static void expect(const struct fx *fx, const char *in, enum fs_res want, const char *want_out,
                   const char *want_missing)
{
    char path[PATH_MAX], wout[PATH_MAX], wmiss[PATH_MAX], out[PATH_MAX];
    enum fs_res res = (enum fs_res) - 1;
    size_t missing_at = (size_t)-1;
    struct nf_err err = { 0 };

    xp(fx, in, path, sizeof(path));
    if (fs_resolve(path, out, sizeof(out), &res, &missing_at, &err) != 0)
        fail_msg("resolve %s: want %s, got an error: %s", in, res_name(want), err.msg);
    if (res != want)
        fail_msg("resolve %s: want %s, got %s", in, res_name(want), res_name(res));
    if (want == FS_RES_IMPOSSIBLE)
        return;
    xp(fx, want_out, wout, sizeof(wout));
    if (strcmp(out, wout) != 0)
        fail_msg("resolve %s: want \"%s\", got \"%s\"", in, wout, out);
    if (want == FS_RES_EXISTS) {
        char real[PATH_MAX];

        if (!realpath(path, real))
            fail_msg("realpath %s: %s", path, strerror(errno));
        if (strcmp(out, real) != 0)
            fail_msg("resolve %s: \"%s\" but realpath says \"%s\"", in, out, real);
        return;
    }
    xp(fx, want_missing, wmiss, sizeof(wmiss));
    if (missing_at != strlen(wmiss) || strncmp(out, wmiss, missing_at) != 0)
        fail_msg("resolve %s: first missing component should end \"%s\", missing_at %zu of \"%s\"",
                 in, wmiss, missing_at, out);
    if (out[missing_at] != '\0' && out[missing_at] != '/')
        fail_msg("resolve %s: missing_at %zu is not at a component boundary of \"%s\"", in,
                 missing_at, out);
}

static void expect_error(const struct fx *fx, const char *in, int code)
{
    char path[PATH_MAX], out[PATH_MAX];
    enum fs_res res;
    size_t missing_at;
    struct nf_err err = { 0 };

    xp(fx, in, path, sizeof(path));
    if (fs_resolve(path, out, sizeof(out), &res, &missing_at, &err) != -1)
        fail_msg("resolve %s: want an error (%s), got %s \"%s\"", in, strerror(code), res_name(res),
                 out);
    if (err.code != code)
        fail_msg("resolve %s: want %s, got code %d: %s", in, strerror(code), err.code, err.msg);
    if (err.msg[0] == '\0' || strchr(err.msg, '\n'))
        fail_msg("resolve %s: want a one-line message, got \"%s\"", in, err.msg);
}

/* ---- tests -------------------------------------------------------------- */

static void existing_paths_resolve_to_themselves(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a/b/c/");
    mk(fx, "a/f");
    expect(fx, "$D", FS_RES_EXISTS, "$D", NULL);
    expect(fx, "$D/a", FS_RES_EXISTS, "$D/a", NULL);
    expect(fx, "$D/a/b/c", FS_RES_EXISTS, "$D/a/b/c", NULL);
    expect(fx, "$D/a/f", FS_RES_EXISTS, "$D/a/f", NULL);
    expect(fx, "$D/./a/./b", FS_RES_EXISTS, "$D/a/b", NULL);
    expect(fx, "$D/a/b/..", FS_RES_EXISTS, "$D/a", NULL);
}

static void root_is_root(void **state)
{
    struct fx *fx = *state;

    expect(fx, "/", FS_RES_EXISTS, "/", NULL);
    expect(fx, "//", FS_RES_EXISTS, "/", NULL);
    expect(fx, "/.", FS_RES_EXISTS, "/", NULL);
    expect(fx, "/..", FS_RES_EXISTS, "/", NULL);
    expect(fx, "/../../..", FS_RES_EXISTS, "/", NULL);
}

static void missing_tail_is_kept_and_marks_the_first_missing_name(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a/b/");
    expect(fx, "$D/x", FS_RES_MISSING, "$D/x", "$D/x");
    expect(fx, "$D/a/b/x", FS_RES_MISSING, "$D/a/b/x", "$D/a/b/x");
    expect(fx, "$D/a/x/y/z", FS_RES_MISSING, "$D/a/x/y/z", "$D/a/x");
    expect(fx, "$D/a/x//y", FS_RES_MISSING, "$D/a/x/y", "$D/a/x");
    /* "missing/.." would name an existing directory by a path that does
     * not exist: refused rather than guessed. */
    expect_error(fx, "$D/a/x/..", EINVAL);
    expect_error(fx, "$D/a/x/./y", EINVAL);
}

static void relative_symlinks_resolve_against_their_directory(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a/b/c/");
    mk(fx, "f");
    ln(fx, "a/b", "rel");
    ln(fx, "../../f", "a/b/up");
    ln(fx, "c", "a/b/down");
    ln(fx, "rel", "chain"); /* link to a link */
    expect(fx, "$D/rel", FS_RES_EXISTS, "$D/a/b", NULL);
    expect(fx, "$D/rel/c", FS_RES_EXISTS, "$D/a/b/c", NULL);
    expect(fx, "$D/a/b/up", FS_RES_EXISTS, "$D/f", NULL);
    expect(fx, "$D/a/b/down", FS_RES_EXISTS, "$D/a/b/c", NULL);
    expect(fx, "$D/chain/down", FS_RES_EXISTS, "$D/a/b/c", NULL);
    expect(fx, "$D/rel/new", FS_RES_MISSING, "$D/a/b/new", "$D/a/b/new");
}

static void absolute_symlinks_restart_from_root(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a/b/");
    ln(fx, "$D/a/b", "abs");
    ln(fx, "/", "toroot");
    ln(fx, "//", "toroot2");
    expect(fx, "$D/abs", FS_RES_EXISTS, "$D/a/b", NULL);
    expect(fx, "$D/abs/new/deeper", FS_RES_MISSING, "$D/a/b/new/deeper", "$D/a/b/new");
    expect(fx, "$D/toroot", FS_RES_EXISTS, "/", NULL);
    expect(fx, "$D/toroot2", FS_RES_EXISTS, "/", NULL);
    expect(fx, "$D/toroot/var/tmp", FS_RES_EXISTS, "/var/tmp", NULL);
}

/* A deny on a dangling link must protect the file a write through the link
 * would create: checked against what the kernel actually creates. */
static void dangling_symlink_leads_to_where_a_write_lands(void **state)
{
    struct fx *fx = *state;
    char path[PATH_MAX], want[PATH_MAX], real[PATH_MAX];
    int fd;

    mk(fx, "sub/");
    mk(fx, "d/");
    ln(fx, "sub/new", "dl");        /* relative, dangling */
    ln(fx, "../sub/other", "d/dl"); /* relative from a subdirectory */
    ln(fx, "hop2", "hop1");         /* dangling through a chain */
    ln(fx, "$D/sub/far", "hop2");
    ln(fx, "$D/gone/deeper", "da"); /* its directory is missing too */
    ln(fx, "x/y", "dd");
    expect(fx, "$D/dl", FS_RES_MISSING, "$D/sub/new", "$D/sub/new");
    expect(fx, "$D/d/dl", FS_RES_MISSING, "$D/sub/other", "$D/sub/other");
    expect(fx, "$D/hop1", FS_RES_MISSING, "$D/sub/far", "$D/sub/far");
    expect(fx, "$D/da", FS_RES_MISSING, "$D/gone/deeper", "$D/gone");
    expect(fx, "$D/dd/z", FS_RES_MISSING, "$D/x/y/z", "$D/x");

    const char *const links[] = { "dl", "d/dl", "hop1" };
    const char *const lands[] = { "$D/sub/new", "$D/sub/other", "$D/sub/far" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", fx->d, links[i]);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        close(fd);
        assert_non_null(realpath(path, real));
        assert_string_equal(real, xp(fx, lands[i], want, sizeof(want)));
        /* and once it exists, the same answer */
        snprintf(path, sizeof(path), "$D/%s", links[i]);
        expect(fx, path, FS_RES_EXISTS, lands[i], NULL);
    }
}

static void symlink_in_the_middle_is_followed(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a/b/f");
    ln(fx, "a", "mid");
    ln(fx, "$D/a/b", "a/absmid");
    expect(fx, "$D/mid/b/f", FS_RES_EXISTS, "$D/a/b/f", NULL);
    expect(fx, "$D/mid/absmid/f", FS_RES_EXISTS, "$D/a/b/f", NULL);
    expect(fx, "$D/mid/b/new/x", FS_RES_MISSING, "$D/a/b/new/x", "$D/a/b/new");
}

/* A link's target goes in front of what is left to walk, in place: a
 * target longer than the names it replaces moves the rest up, and a chain
 * whose targets grow it past its room (twice PATH_MAX) is refused. */
static void link_targets_are_spliced_before_the_rest(void **state)
{
    struct fx *fx = *state;
    char seg[201], tail[15 * 201 + 1], target[PATH_MAX], path[PATH_MAX];
    size_t n = 0;

    mk(fx, "a/b/c/f");
    ln(fx, "$D/a/b/c", "s");
    expect(fx, "$D/s/f", FS_RES_EXISTS, "$D/a/b/c/f", NULL);
    expect(fx, "$D/s/new/x", FS_RES_MISSING, "$D/a/b/c/new/x", "$D/a/b/c/new");
    expect(fx, "$D/s", FS_RES_EXISTS, "$D/a/b/c", NULL);

    /* Each of l1, l2 leads to the next through 15 names of 200 bytes. */
    memset(seg, 'x', sizeof(seg) - 1);
    seg[sizeof(seg) - 1] = '\0';
    for (int i = 0; i < 15; i++)
        n += (size_t)snprintf(tail + n, sizeof(tail) - n, "/%s", seg);
    snprintf(target, sizeof(target), "l2%s", tail);
    ln(fx, target, "l1");
    snprintf(target, sizeof(target), "l3%s", tail);
    ln(fx, target, "l2");
    snprintf(path, sizeof(path), "$D/l1%s", tail);
    expect_error(fx, path, ENAMETOOLONG);
}

/* "/." costs two bytes of the rest and resolves to nothing: n bytes of it
 * (an odd n starts with a lone "/"). */
static void dots(char *buf, size_t n)
{
    size_t i = 0;

    if (n % 2)
        buf[i++] = '/';
    for (; i < n; i += 2)
        memcpy(buf + i, "/.", 2);
    buf[n] = '\0';
}

/* The rest's room to the byte: a second hop that makes "link/rest" exactly
 * twice PATH_MAX bytes with its terminator resolves; one byte more is
 * refused. */
static void the_rest_is_refused_one_byte_past_its_room(void **state)
{
    struct fx *fx = *state;
    char b[PATH_MAX - 63], a[3001], t[PATH_MAX], path[PATH_MAX];
    size_t lb = PATH_MAX - 64 - strlen(fx->d), lt;

    mk(fx, "a/f");
    dots(a, sizeof(a) - 1);
    dots(b, lb - 2);
    memcpy(b + lb - 2, "/f", 3);
    /* The second hop's check: its target, then "/", then what is left
     * after its name (a, "/", b), then the terminator. */
    lt = 2 * PATH_MAX - 3 - (sizeof(a) - 1) - lb;
    t[0] = 'a';
    dots(t + 1, lt - 1);
    ln(fx, t, "fits");
    t[0] = 'a';
    dots(t + 1, lt);
    ln(fx, t, "over");
    snprintf(t, sizeof(t), "fits%s", a);
    ln(fx, t, "to-fits");
    snprintf(t, sizeof(t), "over%s", a);
    ln(fx, t, "to-over");

    snprintf(path, sizeof(path), "$D/to-fits%s", b);
    expect(fx, path, FS_RES_EXISTS, "$D/a/f", NULL);
    snprintf(path, sizeof(path), "$D/to-over%s", b);
    expect_error(fx, path, ENAMETOOLONG);
}

/* ".." after a symlink is the target's parent, as the kernel sees it; the
 * policy's lexical normalisation folds it before the link instead. */
static void dotdot_after_a_symlink_is_physical(void **state)
{
    struct fx *fx = *state;
    char spelled[PATH_MAX], lexical[PATH_MAX];
    struct nf_err err = { 0 };

    mk(fx, "a/b/c/");
    mk(fx, "a/b/f");
    ln(fx, "a/b/c", "l");
    expect(fx, "$D/l/..", FS_RES_EXISTS, "$D/a/b", NULL);
    expect(fx, "$D/l/../f", FS_RES_EXISTS, "$D/a/b/f", NULL);
    expect(fx, "$D/l/../../..", FS_RES_EXISTS, "$D", NULL);
    expect(fx, "$D/l/../new", FS_RES_MISSING, "$D/a/b/new", "$D/a/b/new");

    xp(fx, "$D/l/..", spelled, sizeof(spelled));
    assert_int_equal(pol_path_normalize(spelled, "/", NULL, lexical, sizeof(lexical), &err), 0);
    assert_string_equal(lexical, fx->d);
    expect(fx, lexical, FS_RES_EXISTS, "$D", NULL);
}

static void loops_are_eloop_errors(void **state)
{
    struct fx *fx = *state;

    mk(fx, "sub/");
    ln(fx, "b", "a");
    ln(fx, "a", "b");
    ln(fx, "self", "self");
    ln(fx, "$D/sub/abs", "sub/abs");
    ln(fx, ".", "dot"); /* not a loop: dot/dot/dot is D */
    expect_error(fx, "$D/a", ELOOP);
    expect_error(fx, "$D/b", ELOOP);
    expect_error(fx, "$D/a/x", ELOOP);
    expect_error(fx, "$D/self", ELOOP);
    expect_error(fx, "$D/self/x", ELOOP);
    expect_error(fx, "$D/sub/abs", ELOOP);
    expect(fx, "$D/dot/dot/dot/sub", FS_RES_EXISTS, "$D/sub", NULL);
}

static void non_directory_on_the_way_is_impossible(void **state)
{
    struct fx *fx = *state;

    mk(fx, "f");
    mk(fx, "a/");
    ln(fx, "f", "lf");
    ln(fx, "../f/x", "a/through");
    expect(fx, "$D/f/x", FS_RES_IMPOSSIBLE, NULL, NULL);
    expect(fx, "$D/f/x/y", FS_RES_IMPOSSIBLE, NULL, NULL);
    expect(fx, "$D/lf/x", FS_RES_IMPOSSIBLE, NULL, NULL);
    expect(fx, "$D/a/through", FS_RES_IMPOSSIBLE, NULL, NULL);
    expect(fx, "/dev/null/x", FS_RES_IMPOSSIBLE, NULL, NULL);
}

static void trailing_slashes_are_ignored(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a/b/");
    mk(fx, "f");
    ln(fx, "a/b", "l");
    ln(fx, "a/new", "dl");
    expect(fx, "$D/a/", FS_RES_EXISTS, "$D/a", NULL);
    expect(fx, "$D/a//b//", FS_RES_EXISTS, "$D/a/b", NULL);
    expect(fx, "$D/l/", FS_RES_EXISTS, "$D/a/b", NULL);
    expect(fx, "$D/x/", FS_RES_MISSING, "$D/x", "$D/x");
    expect(fx, "$D/dl/", FS_RES_MISSING, "$D/a/new", "$D/a/new");
    /* A normalised policy path has no trailing slash; should one reach
     * here on a file, the file is what a deny must cover (never dropped as
     * impossible). realpath(3) would say ENOTDIR, hence not expect(). */
    {
        char path[PATH_MAX], out[PATH_MAX], want[PATH_MAX];
        enum fs_res res;
        struct nf_err err = { 0 };

        xp(fx, "$D/f/", path, sizeof(path));
        assert_int_equal(fs_resolve(path, out, sizeof(out), &res, NULL, &err), 0);
        assert_int_equal(res, FS_RES_EXISTS);
        assert_string_equal(out, xp(fx, "$D/f", want, sizeof(want)));
    }
}

static void bad_arguments_are_errors(void **state)
{
    struct fx *fx = *state;
    char out[PATH_MAX], longname[NAME_MAX + 8];
    enum fs_res res;
    struct nf_err err = { 0 };

    assert_int_equal(fs_resolve("relative/path", out, sizeof(out), &res, NULL, &err), -1);
    assert_int_equal(err.code, EINVAL);
    assert_int_equal(fs_resolve("/", out, 16, &res, NULL, &err), -1);
    assert_int_equal(err.code, EINVAL);
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", fx->d, longname);
        assert_int_equal(fs_resolve(path, out, sizeof(out), &res, NULL, &err), -1);
        assert_int_equal(err.code, ENAMETOOLONG);
    }
}

/* 0: as expected; otherwise which check failed. Runs in a child as uid
 * 65534 when the suite runs as root, so no cmocka assertion may fire. */
static int check_eacces(const char *d)
{
    char path[PATH_MAX], out[PATH_MAX];
    enum fs_res res;
    struct nf_err err = { 0 };

    snprintf(path, sizeof(path), "%s/locked", d);
    if (fs_resolve(path, out, sizeof(out), &res, NULL, &err) != 0 || res != FS_RES_EXISTS ||
        strcmp(out, path) != 0)
        return 10; /* the locked directory itself is visible */
    snprintf(path, sizeof(path), "%s/locked/x", d);
    err.code = 0;
    if (fs_resolve(path, out, sizeof(out), &res, NULL, &err) != -1 || err.code != EACCES)
        return 11; /* an existing name beneath: an error, never "missing" */
    if (!strstr(err.msg, path) || strchr(err.msg, '\n'))
        return 12;
    snprintf(path, sizeof(path), "%s/locked/nothere", d);
    err.code = 0;
    if (fs_resolve(path, out, sizeof(out), &res, NULL, &err) != -1 || err.code != EACCES)
        return 13; /* nor may a name we cannot see be called missing */
    snprintf(path, sizeof(path), "%s/via/x", d);
    err.code = 0;
    if (fs_resolve(path, out, sizeof(out), &res, NULL, &err) != -1 || err.code != EACCES)
        return 14; /* through a symlink too */
    return 0;
}

static void eacces_on_a_parent_is_an_error(void **state)
{
    struct fx *fx = *state;
    char path[PATH_MAX];
    pid_t pid;
    int status;

    mk(fx, "locked/x");
    ln(fx, "locked", "via");
    snprintf(path, sizeof(path), "%s/locked", fx->d);
    if (geteuid() != 0) {
        assert_int_equal(chmod(path, 0), 0);
        assert_int_equal(check_eacces(fx->d), 0);
        return;
    }
    /* root searches anything; ask as nobody instead */
    assert_int_equal(chmod(path, 0700), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
            setresuid(65534, 65534, 65534) < 0)
            _exit(77);
        _exit(check_eacces(fx->d));
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        fail_msg("running as root and cannot drop to uid 65534: EACCES not checked");
    if (WEXITSTATUS(status) != 0)
        fail_msg("EACCES parent as uid 65534: check %d failed", WEXITSTATUS(status));
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(existing_paths_resolve_to_themselves),
        T(root_is_root),
        T(missing_tail_is_kept_and_marks_the_first_missing_name),
        T(relative_symlinks_resolve_against_their_directory),
        T(absolute_symlinks_restart_from_root),
        T(dangling_symlink_leads_to_where_a_write_lands),
        T(symlink_in_the_middle_is_followed),
        T(link_targets_are_spliced_before_the_rest),
        T(the_rest_is_refused_one_byte_past_its_room),
        T(dotdot_after_a_symlink_is_physical),
        T(loops_are_eloop_errors),
        T(non_directory_on_the_way_is_impossible),
        T(trailing_slashes_are_ignored),
        T(bad_arguments_are_errors),
        T(eacces_on_a_parent_is_an_error),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
