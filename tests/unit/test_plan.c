/* fs/plan.c: golden mount plans over fixture trees in a private directory D
 * under /var/tmp. Each plan is rendered with fs_op_format, D spelled "$D",
 * and compared whole: the order is part of the contract (a deeper rule lands
 * on top of a shallower one; for one path a deny follows the write root and
 * a read carve-out follows the read deny). Every golden plan here was
 * checked against DESIGN.md, not recorded from the output. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/gitrepo.h"
#include "fs/placeholder.h"
#include "fs/plan.h"
#include "src/policy.h"
#include "src/util.h"
#include "tests/unit/tmptree.h"

/* ---- fixture: a private directory D ------------------------------------- */

struct fx {
    char d[256]; /* realpath of the mkdtemp directory */
    struct policy pol;
};

static int fx_setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));
    struct nf_err err = { 0 };

    if (!fx || tmptree_make("plan", fx->d, sizeof(fx->d)) < 0) {
        free(fx);
        return -1;
    }
    /* The default policy, working in D; no HOME, no config file: what the
     * host's own home holds must not change the plan. */
    if (pol_init(&fx->pol, fx->d, NULL, &err) < 0)
        return -1;
    *state = fx;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *fx = *state;

    pol_free(&fx->pol);
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

    if (tmptree_put(fx->d, rel, "x\n", failed, sizeof(failed)) < 0)
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

static void add(const struct fx *fx, struct pol_strv *sv, const char *path)
{
    char p[PATH_MAX];
    struct nf_err err = { 0 };

    assert_int_equal(pol_strv_add(sv, xp(fx, path, p, sizeof(p)), &err), 0);
}

/* ---- plans as text ------------------------------------------------------ */

#define TEXT_MAX 32768

/* Every op on its own line, D spelled "$D". */
static void plan_text(const struct fx *fx, const struct fs_plan *plan, char *text)
{
    size_t o = 0, dlen = strlen(fx->d);

    text[0] = '\0';
    for (size_t i = 0; i < plan->n; i++) {
        char line[PATH_MAX * 2 + 64];
        const char *p = line;

        fs_op_format(&plan->ops[i], line, sizeof(line));
        while (*p) {
            const char *hit = strstr(p, fx->d);

            if (!hit) {
                o += (size_t)snprintf(text + o, TEXT_MAX - o, "%s", p);
                break;
            }
            o += (size_t)snprintf(text + o, TEXT_MAX - o, "%.*s$D", (int)(hit - p), p);
            p = hit + dlen;
        }
        o += (size_t)snprintf(text + o, TEXT_MAX - o, "\n");
    }
}

/* In a golden plan, the line "@top ROOT" stands for the placeholders that
 * hold every absent protected name at the top of write root ROOT, in the
 * order of the contract (.claude/commands and .claude/agents share one
 * .claude directory; no .git names where .git is not a directory, an
 * empty .git directory where no .git exists, and an empty HEAD, so that no
 * repository, bare or not, can be planted there). "@repo ROOT" is the same
 * where ROOT holds a .git directory: its HEAD still held, since a command
 * that overwrote .git/HEAD would have git take ROOT as a bare repository.
 * "@files ROOT" is only the placeholder files, .bashrc to .idea. */
static const char *const top_lines[] = {
    "bind-ro    %.*s/.bashrc [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.bash_profile [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.zshrc [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.zprofile [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.profile [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.gitconfig [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.gitmodules [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.ripgreprc [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.mcp.json [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.vscode [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.idea [placeholder file]  (mandatory)\n",
    "bind-ro    %.*s/.claude [placeholder dir]  (mandatory)\n",
    "bind-ro    %.*s/.git [placeholder dir]  (mandatory)\n",
    "bind-ro    %.*s/HEAD [placeholder file]  (mandatory)\n",
};

static void expand_golden(const char *golden, char *out)
{
    static const struct {
        const char *name;
        size_t n;  /* the first n of top_lines */
        bool repo; /* but the .git placeholder */
    } macros[] = {
        { "@top ", NF_ARRAY_SIZE(top_lines), false },
        { "@repo ", NF_ARRAY_SIZE(top_lines), true },
        { "@files ", 11, false },
    };
    size_t o = 0;

    out[0] = '\0';
    while (*golden) {
        const char *nl = strchr(golden, '\n');
        size_t len = nl ? (size_t)(nl - golden) : strlen(golden);
        size_t m = 0;

        while (m < NF_ARRAY_SIZE(macros) &&
               strncmp(golden, macros[m].name, strlen(macros[m].name)) != 0)
            m++;
        if (m < NF_ARRAY_SIZE(macros)) {
            size_t skip = strlen(macros[m].name);

            for (size_t i = 0; i < macros[m].n; i++)
                if (!macros[m].repo || !strstr(top_lines[i], "/.git ["))
                    o += (size_t)snprintf(out + o, TEXT_MAX - o, top_lines[i], (int)(len - skip),
                                          golden + skip);
        } else {
            o += (size_t)snprintf(out + o, TEXT_MAX - o, "%.*s\n", (int)len, golden);
        }
        golden += len + (nl ? 1 : 0);
    }
}

/* What is on disk under D: every entry's path, mode, size and mtime. */
static char snap_buf[TEXT_MAX];
static size_t snap_len;

static int snap_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)flag;
    (void)ftw;
    snap_len += (size_t)snprintf(snap_buf + snap_len, TEXT_MAX - snap_len, "%s %o %lld %lld\n",
                                 path, (unsigned)st->st_mode, (long long)st->st_size,
                                 (long long)st->st_mtim.tv_sec);
    return 0;
}

static void snapshot(const struct fx *fx, char *out)
{
    snap_len = 0;
    snap_buf[0] = '\0';
    assert_int_equal(nftw(fx->d, snap_one, 16, FTW_PHYS), 0);
    memcpy(out, snap_buf, snap_len + 1);
}

/* Build the plan for fx->pol and compare it whole with the golden one.
 * Building a plan only looks: nothing under D may change. */
static void build(struct fx *fx, struct fs_plan *plan, const char *golden)
{
    struct nf_err err = { 0 };
    char want[TEXT_MAX], got[TEXT_MAX], before[TEXT_MAX], after[TEXT_MAX];

    expand_golden(golden, want);
    snapshot(fx, before);
    if (fs_plan_build(&fx->pol, plan, &err) < 0)
        fail_msg("fs_plan_build: %s", err.msg);
    snapshot(fx, after);
    plan_text(fx, plan, got);
    if (strcmp(before, after) != 0) {
        fs_plan_free(plan);
        fail_msg("building the plan changed the disk:\n--- before\n%s--- after\n%s", before, after);
    }
    if (strcmp(got, want) != 0) {
        /* whole, on stderr: fail_msg's buffer is shorter than a plan */
        fprintf(stderr, "# plan:\n--- want\n%s--- got\n%s", want, got);
        fs_plan_free(plan);
        fail_msg("the plan differs from the golden one");
    }
}

static void expect_plan(struct fx *fx, const char *golden)
{
    struct fs_plan plan;

    build(fx, &plan, golden);
    fs_plan_free(&plan);
}

/* The op of this kind at dst ("$D" expanded). */
static const struct fs_op *op_at(const struct fx *fx, const struct fs_plan *plan,
                                 enum fs_op_kind kind, const char *dst)
{
    char p[PATH_MAX];

    xp(fx, dst, p, sizeof(p));
    for (size_t i = 0; i < plan->n; i++)
        if (plan->ops[i].kind == kind && strcmp(plan->ops[i].dst, p) == 0)
            return &plan->ops[i];
    fail_msg("no %s op at %s", fs_op_kind_name(kind), dst);
    return NULL;
}

static void expect_strs(const struct fx *fx, char **v, size_t n, const char *const *want,
                        size_t nwant, const char *what)
{
    if (n != nwant)
        fail_msg("%s: want %zu, got %zu", what, nwant, n);
    for (size_t i = 0; i < n; i++) {
        char p[PATH_MAX];

        if (strcmp(v[i], xp(fx, want[i], p, sizeof(p))) != 0)
            fail_msg("%s[%zu]: want %s, got %s", what, i, p, v[i]);
    }
}

static bool writable(const struct fx *fx, const struct fs_plan *plan, const char *path)
{
    char p[PATH_MAX];

    return fs_plan_writable(plan, xp(fx, path, p, sizeof(p)));
}

static void set_mtime(const struct fx *fx, const char *rel, time_t t)
{
    char p[PATH_MAX];
    struct timespec ts[2] = { { .tv_sec = t }, { .tv_sec = t } };

    snprintf(p, sizeof(p), "%s/%s", fx->d, rel);
    if (utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW) < 0)
        fail_msg("utimensat %s: %s", p, strerror(errno));
}

static void empty_file(const struct fx *fx, const char *rel)
{
    char p[PATH_MAX];
    int fd;

    snprintf(p, sizeof(p), "%s/%s", fx->d, rel);
    fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        fail_msg("create %s: %s", p, strerror(errno));
    close(fd);
}

/* ---- golden plans ------------------------------------------------------- */

/* The host read-only; a private /tmp over it; the working directory
 * writable; every absent top-level protected name held by a placeholder;
 * then /dev and /proc, which are the sandbox's own and come last so that no
 * rule lands on them. */
static void default_policy_in_an_empty_dir(void **state)
{
    struct fx *fx = *state;
    struct fs_plan plan;
    static const char *const roots[] = { "$D" };

    build(fx, &plan,
          "root-ro    /  (host root)\n"
          "dev        /dev [ro]  (minimal /dev)\n"
          "proc       /proc [keys hidden]  (sandbox /proc)\n"
          "tmpfs      /tmp  (private /tmp)\n"
          "bind-rw    $D  (allow_write)\n"
          "@top $D\n");
    expect_strs(fx, plan.write_roots, plan.n_write_roots, roots, 1, "write roots");
    assert_string_equal(plan.cwd, fx->d);
    /* placeholders are the host side's to make before the run; nothing
     * here lies on a tmpfs of ours, so no mount point is made inside */
    assert_int_equal(op_at(fx, &plan, FS_OP_BIND_RO, "$D/.bashrc")->ph, FS_PH_FILE);
    assert_int_equal(op_at(fx, &plan, FS_OP_BIND_RO, "$D/.claude")->ph, FS_PH_DIR);
    for (size_t i = 0; i < plan.n; i++)
        assert_false(plan.ops[i].create);
    fs_plan_free(&plan);
}

/* srt's filesystem.disabled: the host root writable, nothing protected,
 * masked or private but /dev and /proc; a deny asked for beside it is
 * refused, never dropped. */
static void disabled_filesystem_is_a_writable_root(void **state)
{
    struct fx *fx = *state;
    struct fs_plan plan;
    struct nf_err err = { 0 };

    mk(fx, "secret/");
    mk(fx, ".git/hooks/");
    fx->pol.fs_disabled = true;
    add(fx, &fx->pol.deny_read, "$D/secret");
    assert_int_equal(fs_plan_build(&fx->pol, &plan, &err), -1);
    assert_non_null(strstr(err.msg, "deny_read"));
    pol_strv_free(&fx->pol.deny_read);
    add(fx, &fx->pol.deny_write, "$D/x");
    assert_int_equal(fs_plan_build(&fx->pol, &plan, &err), -1);
    assert_non_null(strstr(err.msg, "deny_write"));
    pol_strv_free(&fx->pol.deny_write);
    build(fx, &plan,
          "root-rw    /  (host root, writable (filesystem.disabled))\n"
          "dev        /dev [ro]  (minimal /dev)\n"
          "proc       /proc [keys hidden]  (sandbox /proc)\n");
    assert_true(plan.unrestricted);
    assert_int_equal(plan.n_write_roots, 0);
    assert_true(fs_plan_writable(&plan, "/etc/passwd"));
    fs_plan_free(&plan);
}

/* An existing .git: its hooks and config read-only, a missing commondir held
 * (one the command wrote would send git to config and hooks it controls),
 * and .git pinned (first, beneath everything) so that `mv .git x` cannot
 * carry them away. */
static void git_repo_protects_hooks_and_config(void **state)
{
    struct fx *fx = *state;

    mk(fx, ".git/hooks/pre-commit");
    mk(fx, ".git/config");
    mk(fx, ".git/objects/");
    mk(fx, ".git/HEAD");
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/.git  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@repo $D\n"
                    "bind-ro    $D/.git/config  (mandatory)\n"
                    "bind-ro    $D/.git/hooks  (mandatory)\n"
                    "bind-ro    $D/.git/commondir [placeholder file]  (mandatory)\n");
}

/* A .git directory without hooks or config (being initialised): both are
 * held by placeholders, and .git pinned. */
static void empty_git_dir_gets_placeholders(void **state)
{
    struct fx *fx = *state;

    mk(fx, ".git/");
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/.git  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@repo $D\n"
                    "bind-ro    $D/.git/config [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.git/hooks [placeholder dir]  (mandatory)\n"
                    "bind-ro    $D/.git/commondir [placeholder file]  (mandatory)\n");
}

static void nested_protected_file_pins_its_ancestors(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a/b/.bashrc");
    mk(fx, "a/b/c/.bashrc"); /* level 3: beyond the default depth */
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/a  (pin)\n"
                    "pin        $D/a/b  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@top $D\n"
                    "bind-ro    $D/a/b/.bashrc  (mandatory)\n");
}

/* An existing path is bound read-only, its ancestors pinned; a missing one
 * is held at its first missing component: a file for the last name, a
 * directory when the path goes deeper. */
static void deny_write_existing_and_missing_paths(void **state)
{
    struct fx *fx = *state;

    mk(fx, "keep");
    mk(fx, "sub/deep/keep");
    mk(fx, "sub/dir/");
    add(fx, &fx->pol.deny_write, "$D/keep");
    add(fx, &fx->pol.deny_write, "$D/sub/deep/keep");
    add(fx, &fx->pol.deny_write, "$D/m");
    add(fx, &fx->pol.deny_write, "$D/x/y/z");
    add(fx, &fx->pol.deny_write, "$D/sub/dir/new");
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/sub  (pin)\n"
                    "pin        $D/sub/deep  (pin)\n"
                    "pin        $D/sub/dir  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@top $D\n"
                    "bind-ro    $D/keep  (deny_write)\n"
                    "bind-ro    $D/m [placeholder file]  (deny_write)\n"
                    "bind-ro    $D/x [placeholder dir]  (deny_write)\n"
                    "bind-ro    $D/sub/deep/keep  (deny_write)\n"
                    "bind-ro    $D/sub/dir/new [placeholder file]  (deny_write)\n");
}

/* deny_read of a directory: an empty tmpfs over it, left writable as
 * srt's is (what is written there dies with the sandbox); allow_write and
 * allow_read inside re-open their subtrees on mount points made in that
 * tmpfs, the carve-out read-only; the write root inside has its own
 * mandatory denies on top. */
static void deny_read_dir_with_carve_outs(void **state)
{
    struct fx *fx = *state;
    struct fs_plan plan;
    static const char *const roots[] = { "$D", "$D/secret/out" };
    static const char *const scratch[] = { "$D/secret" };
    static const char *const carve[] = { "$D/secret/pub" };

    mk(fx, "secret/key");
    mk(fx, "secret/pub/readme");
    mk(fx, "secret/out/");
    mk(fx, "secret/other/");
    add(fx, &fx->pol.deny_read, "$D/secret");
    add(fx, &fx->pol.allow_read, "$D/secret/pub");
    add(fx, &fx->pol.allow_write, "$D/secret/out");
    build(fx, &plan,
          "root-ro    /  (host root)\n"
          "dev        /dev [ro]  (minimal /dev)\n"
          "proc       /proc [keys hidden]  (sandbox /proc)\n"
          "tmpfs      /tmp  (private /tmp)\n"
          "bind-rw    $D  (allow_write)\n"
          "@top $D\n"
          "mask-dir   $D/secret  (deny_read)\n"
          "bind-rw    $D/secret/out  (allow_write)\n"
          "bind-ro    $D/secret/pub  (allow_read)\n"
          "@top $D/secret/out\n");
    expect_strs(fx, plan.write_roots, plan.n_write_roots, roots, 2, "write roots");
    expect_strs(fx, plan.scratch, plan.n_scratch, scratch, 1, "masked directories");
    expect_strs(fx, plan.read_only, plan.n_read_only, carve, 1, "carve-outs");
    assert_true(writable(fx, &plan, "$D/secret"));
    assert_true(writable(fx, &plan, "$D/secret/cache/x"));
    assert_false(writable(fx, &plan, "$D/secret/pub/readme"));
    assert_true(writable(fx, &plan, "$D/secret/out/x"));
    assert_false(writable(fx, &plan, "$D/secret/out/.bashrc"));
    assert_true(writable(fx, &plan, "/tmp"));
    assert_false(writable(fx, &plan, "/etc"));
    /* mount points inside the mask are ours to make; the inner write root's
     * protected names are the host's (placeholders made outside) */
    assert_true(op_at(fx, &plan, FS_OP_BIND_RW, "$D/secret/out")->create);
    assert_true(op_at(fx, &plan, FS_OP_BIND_RO, "$D/secret/pub")->create);
    assert_false(op_at(fx, &plan, FS_OP_BIND_RO, "$D/secret/out/.bashrc")->create);
    assert_false(op_at(fx, &plan, FS_OP_MASK_DIR, "$D/secret")->create);
    fs_plan_free(&plan);
}

/* deny_read of a file: an empty read-only file over it. A protected name
 * inside a masked directory is not the host's there: nothing is bound. */
static void deny_read_file_and_protected_names_under_a_mask(void **state)
{
    struct fx *fx = *state;
    struct fs_plan plan;

    mk(fx, "token");
    mk(fx, "hidden/.bashrc");
    mk(fx, "hidden/.git/hooks/");
    add(fx, &fx->pol.deny_read, "$D/token");
    add(fx, &fx->pol.deny_read, "$D/hidden");
    add(fx, &fx->pol.deny_read, "$D/nothere"); /* nothing to hide */
    build(fx, &plan,
          "root-ro    /  (host root)\n"
          "dev        /dev [ro]  (minimal /dev)\n"
          "proc       /proc [keys hidden]  (sandbox /proc)\n"
          "tmpfs      /tmp  (private /tmp)\n"
          "bind-rw    $D  (allow_write)\n"
          "@top $D\n"
          "mask-dir   $D/hidden  (deny_read)\n"
          "mask-file  $D/token  (deny_read)\n");
    fs_plan_free(&plan);
}

/* deny beats allow_write: a write root inside a deny_write directory is
 * dropped, with no placeholder planned inside it. */
static void write_root_inside_a_deny_write_dir_is_dropped(void **state)
{
    struct fx *fx = *state;
    struct fs_plan plan;
    static const char *const roots[] = { "$D" };

    mk(fx, "ro/w/");
    add(fx, &fx->pol.deny_write, "$D/ro");
    add(fx, &fx->pol.allow_write, "$D/ro/w");
    build(fx, &plan,
          "root-ro    /  (host root)\n"
          "dev        /dev [ro]  (minimal /dev)\n"
          "proc       /proc [keys hidden]  (sandbox /proc)\n"
          "tmpfs      /tmp  (private /tmp)\n"
          "bind-rw    $D  (allow_write)\n"
          "@top $D\n"
          "bind-ro    $D/ro  (deny_write)\n");
    expect_strs(fx, plan.write_roots, plan.n_write_roots, roots, 1, "write roots");
    fs_plan_free(&plan);
}

/* Outside every write root a deny_write is true already: no op and no
 * placeholder on the host; but it still blocks a write root beneath it. */
static void deny_write_outside_write_roots_has_no_op(void **state)
{
    struct fx *fx = *state;
    struct fs_plan plan;
    static const char *const roots[] = { "$D/w" };

    mk(fx, "w/");
    mk(fx, "out/deeper/");
    pol_strv_free(&fx->pol.allow_write);
    add(fx, &fx->pol.allow_write, "$D/w");
    add(fx, &fx->pol.deny_write, "$D/out");
    add(fx, &fx->pol.deny_write, "$D/nothere");
    add(fx, &fx->pol.allow_write, "$D/out/deeper");
    build(fx, &plan,
          "root-ro    /  (host root)\n"
          "dev        /dev [ro]  (minimal /dev)\n"
          "proc       /proc [keys hidden]  (sandbox /proc)\n"
          "tmpfs      /tmp  (private /tmp)\n"
          "bind-rw    $D/w  (allow_write)\n"
          "@top $D/w\n");
    expect_strs(fx, plan.write_roots, plan.n_write_roots, roots, 1, "write roots");
    fs_plan_free(&plan);
}

/* Rules with nothing to do: a missing write root, read carve-outs where
 * everything is readable already. */
static void rules_with_nothing_to_do_add_no_op(void **state)
{
    struct fx *fx = *state;

    mk(fx, "f");
    mk(fx, "pub/");
    add(fx, &fx->pol.allow_write, "$D/nothere");
    add(fx, &fx->pol.allow_read, "$D/pub");
    add(fx, &fx->pol.allow_read, "$D/nothere");
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@top $D\n");
}

/* A denied path beneath something that is no directory cannot be made as
 * things stand, but a command that removed that file and made a directory
 * there could make it: the file is held as it is. So for protected names
 * below .claude when .claude is a file, a FIFO, or a link to or through a
 * file. */
static void names_beneath_a_file_hold_the_file(void **state)
{
    struct fx *fx = *state;

    mk(fx, "f");
    add(fx, &fx->pol.deny_write, "$D/f/x");
    mk(fx, "g");
    ln(fx, "g/x", ".claude");
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@files $D\n"
                    "bind-ro    $D/g  (mandatory)\n"
                    "bind-ro    $D/.git [placeholder dir]  (mandatory)\n"
                    "bind-ro    $D/HEAD [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/f  (deny_write)\n"
                    "bind-link  $D/.claude  (mandatory)\n");
}

/* A deny through a symlinked parent lands on the target, where a write
 * through the link would go, and pins the target's ancestors; the links on
 * the way are bound onto themselves, so they cannot be replaced by a real
 * path that escapes the deny. */
static void deny_through_a_symlinked_parent_lands_on_the_target(void **state)
{
    struct fx *fx = *state;

    mk(fx, "real/sub/file");
    ln(fx, "real", "link");
    ln(fx, "$D/real/sub", "abs");
    add(fx, &fx->pol.deny_write, "$D/link/sub/file");
    add(fx, &fx->pol.deny_write, "$D/abs/missing");
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/real  (pin)\n"
                    "pin        $D/real/sub  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@top $D\n"
                    "bind-link  $D/link  (deny_write)\n"
                    "bind-link  $D/abs  (deny_write)\n"
                    "bind-ro    $D/real/sub/file  (deny_write)\n"
                    "bind-ro    $D/real/sub/missing [placeholder file]  (deny_write)\n");
}

/* A deny that cannot be resolved fails the run; it is never dropped. */
static void symlink_loop_in_deny_write_fails_with_eloop(void **state)
{
    struct fx *fx = *state;
    struct fs_plan plan;
    struct nf_err err = { 0 };
    char p[PATH_MAX];

    ln(fx, "loop", "loop");
    ln(fx, "b", "a");
    ln(fx, "a", "b");
    add(fx, &fx->pol.deny_write, "$D/a/x");
    assert_int_equal(fs_plan_build(&fx->pol, &plan, &err), -1);
    assert_int_equal(err.code, ELOOP);
    assert_non_null(strstr(err.msg, "deny_write"));
    assert_non_null(strstr(err.msg, xp(fx, "$D/a/x", p, sizeof(p))));
    assert_null(strchr(err.msg, '\n'));
    assert_int_equal(plan.n, 0);

    pol_strv_free(&fx->pol.deny_write);
    add(fx, &fx->pol.deny_write, "$D/loop");
    assert_int_equal(fs_plan_build(&fx->pol, &plan, &err), -1);
    assert_int_equal(err.code, ELOOP);
}

/* A protected name that is a symlink: the link bound onto itself so it
 * cannot be replaced, and its target protected (held by a placeholder when
 * missing). A link that loops does not fail the run (a project's broken
 * link must not break every command): an empty file masks it, so nothing is
 * reachable through it and no link of its chain can be replaced. */
static void mandatory_symlinks_protect_link_and_target(void **state)
{
    struct fx *fx = *state;

    mk(fx, "vsreal/tasks.json");
    mk(fx, "t/");
    mk(fx, "a/b/");
    ln(fx, ".bashrc", ".bashrc");
    ln(fx, "../vsreal", "a/.vscode");
    ln(fx, "../../t/zz", "a/b/.zshrc");
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/a  (pin)\n"
                    "pin        $D/t  (pin)\n"
                    "pin        $D/a/b  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "bind-ro    $D/vsreal  (mandatory)\n"
                    "bind-ro    $D/.bash_profile [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.zshrc [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.zprofile [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.profile [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.gitconfig [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.gitmodules [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.ripgreprc [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.mcp.json [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.vscode [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.idea [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.claude [placeholder dir]  (mandatory)\n"
                    "bind-ro    $D/.git [placeholder dir]  (mandatory)\n"
                    "bind-ro    $D/HEAD [placeholder file]  (mandatory)\n"
                    "mask-link  $D/.bashrc  (unresolvable symlink)\n"
                    "bind-ro    $D/t/zz [placeholder file]  (mandatory)\n"
                    "bind-link  $D/a/.vscode  (mandatory)\n"
                    "bind-link  $D/a/b/.zshrc  (mandatory)\n");
}

/* A .claude that is a symlink to nothing: the link is held, and the
 * placeholder directory goes where it leads, as for any dangling link. A
 * .git that is a file (a worktree's gitfile) is held as it is: no hooks
 * below it, no placeholder beside it. */
static void dangling_claude_link_holds_its_target(void **state)
{
    struct fx *fx = *state;

    ln(fx, "elsewhere", ".claude");
    mk(fx, ".git");
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "bind-ro    $D/.git  (mandatory)\n"
                    "bind-ro    $D/elsewhere [placeholder dir]  (mandatory)\n"
                    "@files $D\n"
                    "bind-link  $D/.claude  (mandatory)\n");
}

/* The roles at the top of a write root: a missing name is one this run
 * makes (missing, shown); an empty file another run may be making is held
 * but not made; a left-behind placeholder is adopted (shown, not made); a
 * file with content is no placeholder at all. The missing ones are known
 * from the look that found them missing; the others are looked at again. */
static void top_level_placeholder_roles(void **state)
{
    struct fx *fx = *state;
    struct nf_err err = { 0 };
    struct fs_plan plan;
    const struct fs_op *op;

    empty_file(fx, ".zshrc");
    empty_file(fx, ".profile");
    set_mtime(fx, ".profile", FS_PH_MTIME);
    mk(fx, ".gitconfig");
    if (fs_plan_build(&fx->pol, &plan, &err) < 0)
        fail_msg("fs_plan_build: %s", err.msg);
    op = op_at(fx, &plan, FS_OP_BIND_RO, "$D/.bashrc");
    assert_int_equal(op->ph, FS_PH_FILE);
    assert_true(op->ph_missing);
    assert_true(op->ph_shown);
    op = op_at(fx, &plan, FS_OP_BIND_RO, "$D/.zshrc");
    assert_int_equal(op->ph, FS_PH_FILE);
    assert_false(op->ph_missing);
    assert_false(op->ph_shown);
    op = op_at(fx, &plan, FS_OP_BIND_RO, "$D/.profile");
    assert_int_equal(op->ph, FS_PH_FILE);
    assert_false(op->ph_missing);
    assert_true(op->ph_shown);
    op = op_at(fx, &plan, FS_OP_BIND_RO, "$D/.gitconfig");
    assert_int_equal(op->ph, FS_PH_NONE);
    assert_false(op->ph_missing);
    fs_plan_free(&plan);
}

/* What a run killed with SIGKILL left behind (empty, marked mtime) is
 * adopted and shown as a placeholder, so this run removes it; a user's own
 * empty file is held (a concurrent run may have just made it) but never
 * shown as ours. */
static void left_behind_placeholders_are_shown(void **state)
{
    struct fx *fx = *state;
    struct fs_plan plan;
    char p[PATH_MAX];

    empty_file(fx, ".bashrc");
    set_mtime(fx, ".bashrc", FS_PH_MTIME);
    snprintf(p, sizeof(p), "%s/.claude", fx->d);
    assert_int_equal(mkdir(p, 0755), 0);
    set_mtime(fx, ".claude", FS_PH_MTIME);
    mk(fx, "a/");
    empty_file(fx, "a/.zshrc");
    build(fx, &plan,
          "root-ro    /  (host root)\n"
          "pin        $D/a  (pin)\n"
          "dev        /dev [ro]  (minimal /dev)\n"
          "proc       /proc [keys hidden]  (sandbox /proc)\n"
          "tmpfs      /tmp  (private /tmp)\n"
          "bind-rw    $D  (allow_write)\n"
          "@top $D\n"
          "bind-ro    $D/a/.zshrc  (mandatory)\n");
    assert_int_equal(op_at(fx, &plan, FS_OP_BIND_RO, "$D/.bashrc")->ph, FS_PH_FILE);
    assert_true(op_at(fx, &plan, FS_OP_BIND_RO, "$D/.bashrc")->ph_shown);
    assert_int_equal(op_at(fx, &plan, FS_OP_BIND_RO, "$D/.claude")->ph, FS_PH_DIR);
    assert_true(op_at(fx, &plan, FS_OP_BIND_RO, "$D/.claude")->ph_shown);
    assert_int_equal(op_at(fx, &plan, FS_OP_BIND_RO, "$D/a/.zshrc")->ph, FS_PH_FILE);
    assert_false(op_at(fx, &plan, FS_OP_BIND_RO, "$D/a/.zshrc")->ph_shown);
    fs_plan_free(&plan);
}

static void mandatory_deny_depth_1_protects_only_the_top(void **state)
{
    struct fx *fx = *state;

    mk(fx, ".zshrc");
    mk(fx, "a/.bashrc");
    mk(fx, "a/.git/hooks/");
    fx->pol.mandatory_deny_depth = 1;
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "bind-ro    $D/.zshrc  (mandatory)\n"
                    "bind-ro    $D/.bashrc [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.bash_profile [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.zprofile [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.profile [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.gitconfig [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.gitmodules [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.ripgreprc [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.mcp.json [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.vscode [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.idea [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.claude [placeholder dir]  (mandatory)\n"
                    "bind-ro    $D/.git [placeholder dir]  (mandatory)\n"
                    "bind-ro    $D/HEAD [placeholder file]  (mandatory)\n");
}

/* nsfence's own config is protected existing or not: inside a write root
 * a missing one is held at its first missing component and its ancestors
 * pinned; outside every write root it needs nothing. HOME plays no part:
 * the caller lists the files. */
static void nsfence_config_files_are_protected(void **state)
{
    struct fx *fx = *state;

    mk(fx, "home/.config/nsfence/config.ini");
    mk(fx, "xdg/");
    add(fx, &fx->pol.config_files, "$D/xdg/nsfence/config.ini");
    add(fx, &fx->pol.config_files, "$D/home/.config/nsfence/config.ini");
    add(fx, &fx->pol.config_files, "/nonexistent-nsfence-test/nsfence/config.ini");
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/home  (pin)\n"
                    "pin        $D/xdg  (pin)\n"
                    "pin        $D/home/.config  (pin)\n"
                    "pin        $D/home/.config/nsfence  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@top $D\n"
                    "bind-ro    $D/xdg/nsfence [placeholder dir]  (nsfence config)\n"
                    "bind-ro    $D/home/.config/nsfence/config.ini  (nsfence config)\n");
}

/* A glob in deny_read is expanded on disk: each match masked where it
 * really is; an allow_read glob re-opens what it matches. */
static void read_globs_are_expanded(void **state)
{
    struct fx *fx = *state;

    mk(fx, "s/a.txt");
    mk(fx, "s/b.md");
    mk(fx, "s/sub/c.txt");
    mk(fx, "s/keys/");
    mk(fx, "o/");
    add(fx, &fx->pol.deny_read, "$D/s/**/*.txt");
    add(fx, &fx->pol.deny_read, "$D/s/k*");
    fx->pol.mandatory_deny_depth = 1;
    /* Masks in a write root pin the directories above them, as denies do:
     * `mv s x` would carry the masked names away from their paths. */
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/s  (pin)\n"
                    "pin        $D/s/sub  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@top $D\n"
                    "mask-dir   $D/s/keys  (deny_read)\n"
                    "mask-file  $D/s/a.txt  (deny_read)\n"
                    "mask-file  $D/s/sub/c.txt  (deny_read)\n");
}

/* An allow_write path planted as a symlink to somewhere not under it (a
 * command's `ln -s ~/.ssh out` for the next run) is skipped; one that leads
 * beneath itself, or a plain directory, is a write root. */
static void allow_write_through_a_symlink_elsewhere_is_skipped(void **state)
{
    struct fx *fx = *state;

    mk(fx, "w/");
    mk(fx, "secret/");
    mk(fx, "plain/");
    ln(fx, "$D/secret", "w/out");
    fx->pol.mandatory_deny_depth = 1;
    pol_strv_free(&fx->pol.allow_write);
    add(fx, &fx->pol.allow_write, "$D/w/out");
    add(fx, &fx->pol.allow_write, "$D/plain");
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D/plain  (allow_write)\n"
                    "@top $D/plain\n");
}

/* --allow-git-init: .git may be made at the top; nothing holds its place. */
static void allow_git_init_leaves_git_creatable(void **state)
{
    struct fx *fx = *state;
    struct fs_plan plan;
    struct nf_err err = { 0 };

    fx->pol.allow_git_init = true;
    assert_int_equal(fs_plan_build(&fx->pol, &plan, &err), 0);
    for (size_t i = 0; i < plan.n; i++) {
        size_t n = strlen(plan.ops[i].dst);

        assert_false(n >= 5 && strcmp(plan.ops[i].dst + n - 5, "/.git") == 0);
    }
    fs_plan_free(&plan);
}

/* A .git file names the git directory git really uses: inside a write root
 * its control files are protected like a .git directory's. */
static void gitfile_target_in_a_write_root_is_protected(void **state)
{
    struct fx *fx = *state;
    char p[PATH_MAX];
    FILE *f;

    mk(fx, "store/hooks/");
    mk(fx, "store/config");
    mk(fx, "work/");
    snprintf(p, sizeof(p), "%s/work/.git", fx->d);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("gitdir: ../store\n", f);
    fclose(f);
    fx->pol.mandatory_deny_depth = 2;
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/store  (pin)\n"
                    "pin        $D/work  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@top $D\n"
                    "bind-ro    $D/work/.git  (mandatory)\n"
                    "bind-ro    $D/store/config  (mandatory)\n"
                    "bind-ro    $D/store/hooks  (mandatory)\n"
                    "bind-ro    $D/store/commondir [placeholder file]  (mandatory)\n");
}

/* A .git file naming a directory that is not there: git refuses it until
 * a command makes one (git init --bare), so it is held empty. */
static void gitfile_naming_a_missing_directory_holds_it(void **state)
{
    struct fx *fx = *state;
    char p[PATH_MAX];
    FILE *f;

    snprintf(p, sizeof(p), "%s/.git", fx->d);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("gitdir: gd\n", f);
    fclose(f);
    fx->pol.mandatory_deny_depth = 1;
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "bind-ro    $D/.git  (mandatory)\n"
                    "bind-ro    $D/gd [placeholder dir]  (mandatory)\n"
                    "@files $D\n"
                    "bind-ro    $D/.claude [placeholder dir]  (mandatory)\n");
}

static void write_gitfile(struct fx *fx, const char *target)
{
    char p[PATH_MAX];
    FILE *f;

    snprintf(p, sizeof(p), "%s/.git", fx->d);
    f = fopen(p, "w");
    assert_non_null(f);
    fprintf(f, "gitdir: %s\n", target);
    fclose(f);
}

/* A .git file naming a file: a command could replace it with a repository. */
static void gitfile_naming_a_file_holds_it(void **state)
{
    struct fx *fx = *state;

    mk(fx, "notes.txt");
    write_gitfile(fx, "notes.txt");
    fx->pol.mandatory_deny_depth = 1;
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "bind-ro    $D/.git  (mandatory)\n"
                    "bind-ro    $D/notes.txt  (mandatory)\n"
                    "@files $D\n"
                    "bind-ro    $D/.claude [placeholder dir]  (mandatory)\n");
}

/* A ".." after a symlink goes up from where the link leads, as the kernel
 * takes it for git: the placeholder goes there, and the link is held. */
static void gitfile_dot_dot_after_a_link_resolves_as_git_does(void **state)
{
    struct fx *fx = *state;

    mk(fx, "deep/x/");
    ln(fx, "deep/x", "l");
    write_gitfile(fx, "l/../gd");
    fx->pol.mandatory_deny_depth = 1;
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/deep  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "bind-ro    $D/.git  (mandatory)\n"
                    "@files $D\n"
                    "bind-ro    $D/.claude [placeholder dir]  (mandatory)\n"
                    "bind-link  $D/l  (gitfile)\n"
                    "bind-ro    $D/deep/gd [placeholder dir]  (mandatory)\n");
}

/* A HEAD of the user's own at the top of a repository: objects/ cannot be
 * made beside it, so the top never becomes a bare repository. */
static void own_head_at_the_top_holds_objects(void **state)
{
    struct fx *fx = *state;

    mk(fx, ".git/HEAD");
    mk(fx, ".git/objects/");
    mk(fx, ".git/refs/");
    mk(fx, "HEAD");
    fx->pol.mandatory_deny_depth = 1;
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/.git  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@files $D\n"
                    "bind-ro    $D/.claude [placeholder dir]  (mandatory)\n"
                    "bind-ro    $D/objects [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.git/config [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.git/hooks [placeholder dir]  (mandatory)\n"
                    "bind-ro    $D/.git/commondir [placeholder file]  (mandatory)\n");
}

/* Another name of a protected file, within the depth, is protected too. */
static void hard_links_of_a_protected_file_are_protected(void **state)
{
    struct fx *fx = *state;
    char a[PATH_MAX], b[PATH_MAX];

    mk(fx, ".zshrc");
    mk(fx, "sub/");
    snprintf(a, sizeof(a), "%s/.zshrc", fx->d);
    snprintf(b, sizeof(b), "%s/sub/notes", fx->d);
    assert_int_equal(link(a, b), 0);
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/sub  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "bind-ro    $D/.zshrc  (mandatory)\n"
                    "bind-ro    $D/.bashrc [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.bash_profile [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.zprofile [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.profile [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.gitconfig [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.gitmodules [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.ripgreprc [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.mcp.json [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.vscode [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.idea [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/.claude [placeholder dir]  (mandatory)\n"
                    "bind-ro    $D/.git [placeholder dir]  (mandatory)\n"
                    "bind-ro    $D/HEAD [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/sub/notes  (hard link)\n");
}

/* What the configs git reads name in a write root: core.hooksPath (with
 * husky's parent), an include, a program; and a global config inside a
 * write root, missing or not. */
static void paths_git_config_names_are_protected(void **state)
{
    struct fx *fx = *state;
    char p[PATH_MAX];
    FILE *f;

    mk(fx, ".git/HEAD");
    mk(fx, ".git/hooks/");
    mk(fx, "tools/fsmon");
    snprintf(p, sizeof(p), "%s/.git/config", fx->d);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("[core]\n\thooksPath = .husky/_\n\tfsmonitor = tools/fsmon\n"
          "[include]\n\tpath = ../local.gitconfig\n",
          f);
    fclose(f);
    add(fx, &fx->pol.git_config_files, "$D/home/.gitconfig");
    fx->pol.mandatory_deny_depth = 1;
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "pin        $D/.git  (pin)\n"
                    "pin        $D/tools  (pin)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D  (allow_write)\n"
                    "@repo $D\n"
                    "bind-ro    $D/home [placeholder dir]  (git config)\n"
                    "bind-ro    $D/.husky [placeholder dir]  (git config)\n"
                    "bind-ro    $D/local.gitconfig [placeholder file]  (git config)\n"
                    "bind-ro    $D/.git/config  (mandatory)\n"
                    "bind-ro    $D/.git/hooks  (mandatory)\n"
                    "bind-ro    $D/.git/commondir [placeholder file]  (mandatory)\n"
                    "bind-ro    $D/tools/fsmon  (git config)\n");
}

/* A write root two levels inside a repository (a monorepo's package): git
 * run there reads the enclosing repository's config, found by looking up
 * from the root past a .git git does not take (an empty directory, which
 * a command, or another run's placeholder, could put there), and what it
 * names inside the root is protected. */
static void enclosing_repository_config_is_read(void **state)
{
    struct fx *fx = *state;
    char p[PATH_MAX];
    FILE *f;

    mk(fx, ".git/HEAD");
    mk(fx, "pkg/sub/");
    mk(fx, "pkg/.git/"); /* no repository to git, which looks further up */
    snprintf(p, sizeof(p), "%s/.git/config", fx->d);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("[include]\n\tpath = ../pkg/sub/inc.gitconfig\n", f);
    fclose(f);
    pol_strv_free(&fx->pol.allow_write);
    add(fx, &fx->pol.allow_write, "$D/pkg/sub");
    fx->pol.mandatory_deny_depth = 1;
    expect_plan(fx, "root-ro    /  (host root)\n"
                    "dev        /dev [ro]  (minimal /dev)\n"
                    "proc       /proc [keys hidden]  (sandbox /proc)\n"
                    "tmpfs      /tmp  (private /tmp)\n"
                    "bind-rw    $D/pkg/sub  (allow_write)\n"
                    "@top $D/pkg/sub\n"
                    "bind-ro    $D/pkg/sub/inc.gitconfig [placeholder file]  (git config)\n");
}

/* The repositories the plan saw, as they were, against what they are after:
 * one whose .git was made anew, one whose config was replaced (its inode
 * held, so the new one cannot take its number), a bare one whose HEAD was,
 * are changed; one git worked in, and one removed, are not. */
static void repositories_seen_are_checked_for_replacement(void **state)
{
    struct fx *fx = *state;
    struct fs_plan plan = { 0 };
    struct fs_git_ids ids = { 0 };
    struct pol_strv changed = { 0 };
    struct nf_err err = { 0 };
    char p[PATH_MAX], q[PATH_MAX];

    mk(fx, "same/.git/config");
    mk(fx, "anew/.git/config");
    mk(fx, "cfg/.git/config");
    mk(fx, "gone/.git/config");
    mk(fx, "bare/HEAD");
    mk(fx, "bare/objects/");
    mk(fx, "bare/refs/");
    assert_int_equal(fs_plan_build(&fx->pol, &plan, &err), 0);
    assert_int_equal(fs_git_ids_take(&plan, &ids, &err), 0);
    assert_int_equal(ids.n, plan.n_git_seen);
    assert_int_equal(fs_git_changed(&plan, &ids, &changed, &err), 0);
    assert_int_equal(changed.n, 0);

    mk(fx, "same/.git/index");
    snprintf(p, sizeof(p), "%s/anew/.git", fx->d);
    snprintf(q, sizeof(q), "%s/anew/old", fx->d);
    assert_int_equal(rename(p, q), 0);
    mk(fx, "anew/.git/config");
    snprintf(p, sizeof(p), "%s/cfg/.git/config", fx->d);
    assert_int_equal(unlink(p), 0);
    mk(fx, "cfg/.git/config");
    snprintf(p, sizeof(p), "%s/bare/HEAD", fx->d);
    snprintf(q, sizeof(q), "%s/bare/HEAD.new", fx->d);
    mk(fx, "bare/HEAD.new");
    assert_int_equal(rename(q, p), 0);
    snprintf(p, sizeof(p), "%s/gone/.git/config", fx->d);
    assert_int_equal(unlink(p), 0);
    snprintf(p, sizeof(p), "%s/gone/.git", fx->d);
    assert_int_equal(rmdir(p), 0);
    assert_int_equal(fs_git_changed(&plan, &ids, &changed, &err), 0);
    assert_int_equal(changed.n, 3);
    snprintf(p, sizeof(p), "%s/anew/.git", fx->d);
    assert_true(pol_strv_contains(&changed, p));
    snprintf(p, sizeof(p), "%s/cfg/.git", fx->d);
    assert_true(pol_strv_contains(&changed, p));
    snprintf(p, sizeof(p), "%s/bare", fx->d);
    assert_true(pol_strv_contains(&changed, p));
    pol_strv_free(&changed);
    fs_git_ids_free(&ids);
    fs_plan_free(&plan);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(default_policy_in_an_empty_dir),
        T(disabled_filesystem_is_a_writable_root),
        T(git_repo_protects_hooks_and_config),
        T(empty_git_dir_gets_placeholders),
        T(nested_protected_file_pins_its_ancestors),
        T(deny_write_existing_and_missing_paths),
        T(deny_read_dir_with_carve_outs),
        T(deny_read_file_and_protected_names_under_a_mask),
        T(write_root_inside_a_deny_write_dir_is_dropped),
        T(deny_write_outside_write_roots_has_no_op),
        T(rules_with_nothing_to_do_add_no_op),
        T(names_beneath_a_file_hold_the_file),
        T(deny_through_a_symlinked_parent_lands_on_the_target),
        T(symlink_loop_in_deny_write_fails_with_eloop),
        T(mandatory_symlinks_protect_link_and_target),
        T(dangling_claude_link_holds_its_target),
        T(top_level_placeholder_roles),
        T(left_behind_placeholders_are_shown),
        T(mandatory_deny_depth_1_protects_only_the_top),
        T(nsfence_config_files_are_protected),
        T(read_globs_are_expanded),
        T(allow_write_through_a_symlink_elsewhere_is_skipped),
        T(allow_git_init_leaves_git_creatable),
        T(gitfile_target_in_a_write_root_is_protected),
        T(gitfile_naming_a_missing_directory_holds_it),
        T(gitfile_naming_a_file_holds_it),
        T(gitfile_dot_dot_after_a_link_resolves_as_git_does),
        T(own_head_at_the_top_holds_objects),
        T(hard_links_of_a_protected_file_are_protected),
        T(paths_git_config_names_are_protected),
        T(enclosing_repository_config_is_read),
        T(repositories_seen_are_checked_for_replacement),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
