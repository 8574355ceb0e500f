/* fs/scan.c: the mandatory-deny scan over real trees in a private directory
 * under /var/tmp. Every protected name is found within the depth and not
 * beyond it; node_modules and .git's insides are skipped; symlinks are
 * reported, never followed; an unreadable directory is protected whole. */
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
#include <linux/fscrypt.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/placeholder.h"
#include "fs/scan.h"
#include "tests/unit/tmptree.h"

/* ---- fixture: a private directory D ------------------------------------- */

struct fx {
    char d[256]; /* realpath of the mkdtemp directory */
};

static int fx_setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));

    if (!fx || tmptree_make("scan", fx->d, sizeof(fx->d)) < 0) {
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

/* ---- the scan as sorted text: "kind $D/rel" lines ------------------------ */

#define TEXT_MAX 16384

static const char *kind_name(enum fs_found_kind k)
{
    switch (k) {
    case FS_FOUND_FILE:
        return "file";
    case FS_FOUND_DIR:
        return "dir";
    case FS_FOUND_SYMLINK:
        return "symlink";
    case FS_FOUND_LINK:
        return "link";
    case FS_FOUND_ABSENT:
        return "absent";
    case FS_FOUND_GITFILE:
        return "gitfile";
    case FS_FOUND_STALE:
        return "stale";
    }
    return "?";
}

static int line_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the lines of text in place. */
static void sort_lines(char *text)
{
    char *lines[512], copy[TEXT_MAX];
    size_t n = 0, o = 0;
    char *save = NULL;

    snprintf(copy, sizeof(copy), "%s", text);
    for (char *l = strtok_r(copy, "\n", &save); l && n < 512; l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    qsort(lines, n, sizeof(*lines), line_cmp);
    text[0] = '\0';
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(text + o, TEXT_MAX - o, "%s\n", lines[i]);
}

/* Scan D/rel (D itself for "") and render what it found, D spelled "$D".
 * No cmocka here: it also runs in a child as uid 65534. */
static int scan_text(const char *d, const char *rel, unsigned depth, char *text, struct nf_err *err)
{
    struct fs_found_list found = { 0 };
    char root[PATH_MAX];
    size_t o = 0, dlen = strlen(d);

    snprintf(root, sizeof(root), "%s%s%s", d, rel[0] ? "/" : "", rel);
    if (fs_scan_mandatory(root, depth, &found, NULL, err) < 0)
        return -1;
    text[0] = '\0';
    for (size_t i = 0; i < found.n; i++) {
        const char *p = found.v[i].path;

        if (strncmp(p, d, dlen) == 0)
            o += (size_t)snprintf(text + o, TEXT_MAX - o, "%s $D%s\n", kind_name(found.v[i].kind),
                                  p + dlen);
        else
            o += (size_t)snprintf(text + o, TEXT_MAX - o, "%s %s\n", kind_name(found.v[i].kind), p);
    }
    fs_found_free(&found);
    sort_lines(text);
    return 0;
}

static void expect_scan(const struct fx *fx, const char *rel, unsigned depth, const char *want)
{
    char got[TEXT_MAX], w[TEXT_MAX];
    struct nf_err err = { 0 };

    if (scan_text(fx->d, rel, depth, got, &err) < 0)
        fail_msg("scan $D/%s depth %u: %s", rel, depth, err.msg);
    snprintf(w, sizeof(w), "%s", want);
    sort_lines(w);
    if (strcmp(got, w) != 0)
        fail_msg("scan $D/%s depth %u:\n--- want\n%s--- got\n%s", rel, depth, w, got);
}

/* The found paths, sorted, D spelled "$D". */
static void expect_strs_found(const struct fx *fx, const struct fs_found_list *found,
                              const char *want)
{
    char got[TEXT_MAX] = "", w[TEXT_MAX];
    size_t o = 0, dlen = strlen(fx->d);

    for (size_t i = 0; i < found->n; i++)
        o += (size_t)snprintf(got + o, TEXT_MAX - o, "$D%s\n", found->v[i].path + dlen);
    sort_lines(got);
    snprintf(w, sizeof(w), "%s", want);
    sort_lines(w);
    if (strcmp(got, w) != 0)
        fail_msg("--- want\n%s--- got\n%s", w, got);
}

/* ---- the protected names ------------------------------------------------ */

/* The contract, spelled out: a name added or dropped in fs/scan.c must be
 * a decision, seen here. */
static const struct {
    const char *name;
    const char *kind; /* as the scan reports it when it exists */
} names[] = {
    { ".bashrc", "file" },       { ".bash_profile", "file" }, { ".zshrc", "file" },
    { ".zprofile", "file" },     { ".profile", "file" },      { ".gitconfig", "file" },
    { ".gitmodules", "file" },   { ".ripgreprc", "file" },    { ".mcp.json", "file" },
    { ".vscode", "dir" },        { ".idea", "dir" },          { ".claude/commands", "dir" },
    { ".claude/agents", "dir" }, { ".git/hooks", "dir" },     { ".git/config", "file" },
};

static void the_protected_names_are_the_documented_ones(void **state)
{
    (void)state;
    assert_int_equal(fs_n_mandatory_names, sizeof(names) / sizeof(names[0]));
    for (size_t i = 0; i < fs_n_mandatory_names; i++)
        assert_string_equal(fs_mandatory_names[i].name, names[i].name);
}

/* Every protected name under D/prefix, as it normally exists. */
static void plant_all(const struct fx *fx, const char *prefix)
{
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char rel[PATH_MAX];

        snprintf(rel, sizeof(rel), "%s%s%s", prefix, names[i].name,
                 strcmp(names[i].kind, "dir") == 0 ? "/" : "");
        mk(fx, rel);
    }
}

/* What the scan reports for plant_all(prefix), appended to want: the names,
 * and the commondir its .git lacks (one the command wrote would send git
 * to config and hooks elsewhere). */
static void want_all(char *want, size_t sz, const char *prefix)
{
    size_t o;

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        o = strlen(want);
        snprintf(want + o, sz - o, "%s $D/%s%s\n", names[i].kind, prefix, names[i].name);
    }
    o = strlen(want);
    snprintf(want + o, sz - o, "absent $D/%s.git/commondir\n", prefix);
}

/* ---- tests -------------------------------------------------------------- */

static void every_name_is_found_at_levels_0_1_2_and_not_3(void **state)
{
    struct fx *fx = *state;
    char want[TEXT_MAX] = "";

    plant_all(fx, "");
    plant_all(fx, "a/");
    plant_all(fx, "a/b/");
    plant_all(fx, "a/b/c/");
    want_all(want, sizeof(want), "");
    want_all(want, sizeof(want), "a/");
    want_all(want, sizeof(want), "a/b/");
    expect_scan(fx, "", 3, want);
}

static void depth_limits_the_levels(void **state)
{
    struct fx *fx = *state;
    char want[TEXT_MAX] = "";

    plant_all(fx, "");
    plant_all(fx, "a/");
    plant_all(fx, "a/b/");
    expect_scan(fx, "", 0, "");
    want_all(want, sizeof(want), "");
    expect_scan(fx, "", 1, want);
    want_all(want, sizeof(want), "a/");
    expect_scan(fx, "", 2, want);
    /* levels count from the root scanned, not from D */
    want[0] = '\0';
    want_all(want, sizeof(want), "a/b/");
    expect_scan(fx, "a/b", 1, want);
}

static void only_the_protected_names_are_reported(void **state)
{
    struct fx *fx = *state;

    mk(fx, "bashrc");
    mk(fx, ".bashrc.bak");
    mk(fx, "x.profile");
    mk(fx, ".vscodium/");
    mk(fx, ".git-hooks/");
    mk(fx, "hooks/");
    mk(fx, "config");
    mk(fx, "commands/");
    mk(fx, ".claude/settings.json");
    mk(fx, ".claude/other/");
    mk(fx, "src/main.c");
    expect_scan(fx, "", 3, "");
}

static void a_protected_name_is_protected_whole(void **state)
{
    struct fx *fx = *state;

    /* nothing inside a protected directory is reported on its own */
    mk(fx, ".vscode/.bashrc");
    mk(fx, ".vscode/sub/.profile");
    mk(fx, ".idea/.git/hooks/");
    /* a protected name that is a directory where a file is expected, and
     * the reverse, are protected as they are */
    mk(fx, "a/.bashrc/");
    mk(fx, "a/.idea");
    expect_scan(fx, "", 3,
                "dir $D/.vscode\n"
                "dir $D/.idea\n"
                "dir $D/a/.bashrc\n"
                "file $D/a/.idea\n");
}

static void node_modules_is_skipped(void **state)
{
    struct fx *fx = *state;

    mk(fx, ".bashrc");
    mk(fx, "node_modules/.bashrc");
    mk(fx, "node_modules/pkg/.git/hooks/");
    mk(fx, "a/node_modules/.vscode/");
    expect_scan(fx, "", 3, "file $D/.bashrc\n");
}

static void git_directory_is_not_descended(void **state)
{
    struct fx *fx = *state;

    mk(fx, ".git/hooks/pre-commit");
    mk(fx, ".git/config");
    mk(fx, ".git/.bashrc");
    mk(fx, ".git/objects/.bashrc");
    mk(fx, ".git/objects/ab/.vscode/");
    mk(fx, ".git/refs/.git/hooks/");
    /* a .git with neither hooks nor config: git would obey either once
     * made, so both are reported absent */
    mk(fx, "a/.git/objects/.profile");
    expect_scan(fx, "", 3,
                "dir $D/.git/hooks\n"
                "file $D/.git/config\n"
                "absent $D/.git/commondir\n"
                "absent $D/a/.git/hooks\n"
                "absent $D/a/.git/config\n"
                "absent $D/a/.git/commondir\n");
}

/* A .git file points git elsewhere: the file itself is protected. A .git
 * link is protected itself (it must not be repointed), and the hooks and
 * config it leads to are reported through it for the plan to resolve. */
static void git_file_or_link_is_reported_itself(void **state)
{
    struct fx *fx = *state;

    mk(fx, "worktree/.git"); /* "gitdir: ..." of a worktree or submodule */
    mk(fx, "real/hooks/");
    mk(fx, "linked/README");
    ln(fx, "../real", "linked/.git");
    expect_scan(fx, "", 3,
                "dir $D/linked/.git/hooks\n"
                "absent $D/linked/.git/config\n"
                "absent $D/linked/.git/commondir\n"
                "gitfile $D/worktree/.git\n"
                "link $D/linked/.git\n");
}

/* Submodules keep their git directories under .git/modules/NAME, nested for
 * nested submodules: their hooks and config run code on the host too. */
static void submodule_git_directories_are_protected(void **state)
{
    struct fx *fx = *state;

    mk(fx, ".git/hooks/");
    mk(fx, ".git/modules/lib/hooks/");
    mk(fx, ".git/modules/lib/config");
    mk(fx, ".git/modules/lib/modules/inner/hooks/");
    mk(fx, ".git/worktrees/wt/commondir");
    expect_scan(fx, "", 3,
                "dir $D/.git/hooks\n"
                "absent $D/.git/config\n"
                "absent $D/.git/commondir\n"
                "dir $D/.git/modules/lib/hooks\n"
                "absent $D/.git/modules/lib/commondir\n"
                "dir $D/.git/modules/lib/modules/inner/hooks\n"
                "absent $D/.git/modules/lib/modules/inner/config\n"
                "absent $D/.git/modules/lib/modules/inner/commondir\n"
                "file $D/.git/modules/lib/config\n"
                /* a linked worktree's config and hooks are its common
                 * directory's: only where that is decided counts */
                "file $D/.git/worktrees/wt/commondir\n");
}

static void claude_is_looked_into_only_for_its_protected_names(void **state)
{
    struct fx *fx = *state;

    mk(fx, ".claude/commands/");
    mk(fx, ".claude/settings.json");
    mk(fx, "a/.claude/agents/x.md");
    /* .claude is an ordinary directory otherwise: scanned like any other */
    mk(fx, ".claude/sub/.bashrc");
    expect_scan(fx, "", 3,
                "dir $D/.claude/commands\n"
                "dir $D/a/.claude/agents\n"
                "file $D/.claude/sub/.bashrc\n");
}

static void symlinks_are_reported_and_never_followed(void **state)
{
    struct fx *fx = *state;

    mk(fx, "outside/.bashrc");
    mk(fx, "outside/.vscode/");
    mk(fx, "root/.git/");
    mk(fx, "root/.claude/");
    mk(fx, "root/a/");
    ln(fx, "/etc/passwd", "root/.bashrc");        /* absolute, to a file */
    ln(fx, "../outside/.vscode", "root/.vscode"); /* to a directory */
    ln(fx, "nowhere", "root/a/.profile");         /* dangling */
    ln(fx, "../../outside", "root/.git/hooks");   /* compound, to a directory */
    ln(fx, "../.bashrc", "root/.git/config");
    ln(fx, "../../outside", "root/.claude/agents");
    /* links to directories holding protected names are not descended */
    ln(fx, "../outside", "root/linkdir");
    ln(fx, "../../outside", "root/a/linkdir");
    expect_scan(fx, "root", 3,
                "symlink $D/root/.bashrc\n"
                "symlink $D/root/.vscode\n"
                "symlink $D/root/a/.profile\n"
                "symlink $D/root/.git/hooks\n"
                "symlink $D/root/.git/config\n"
                "absent $D/root/.git/commondir\n"
                "symlink $D/root/.claude/agents\n");
}

static void symlink_loops_do_not_recurse(void **state)
{
    struct fx *fx = *state;

    mk(fx, "a/b/");
    mk(fx, "a/b/.zshrc");
    ln(fx, ".", "self");
    ln(fx, "..", "a/up");
    ln(fx, "../..", "a/b/upup");
    ln(fx, "loop2", "loop1");
    ln(fx, "loop1", "loop2");
    ln(fx, "self", ".bashrc"); /* a protected name that is a loop */
    expect_scan(fx, "", 10,
                "file $D/a/b/.zshrc\n"
                "symlink $D/.bashrc\n");
}

/* 0: as expected; otherwise which check failed. Runs in a child as uid
 * 65534 when the suite runs as root, so no cmocka assertion may fire. */
static int check_unreadable(const char *d)
{
    char got[TEXT_MAX];
    struct nf_err err = { 0 };
    static const struct {
        const char *rel;
        unsigned depth;
        const char *want;
    } cases[] = {
        /* a directory we cannot list could hide a .bashrc: protected whole */
        { "", 3,
          "dir $D/locked\n"
          "dir $D/a/locked\n"
          "dir $D/g/.git\n"
          "file $D/.bashrc\n" },
        /* one whose insides lie beyond the depth is never opened, so not
         * reported; a .git's hooks and config count as its own level */
        { "", 2,
          "dir $D/locked\n"
          "dir $D/g/.git\n"
          "file $D/.bashrc\n" },
        { "", 1, "file $D/.bashrc\n" },
        /* an unlistable root is protected whole */
        { "locked", 3, "dir $D/locked\n" },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char want[TEXT_MAX];

        if (scan_text(d, cases[i].rel, cases[i].depth, got, &err) < 0) {
            fprintf(stderr, "# scan $D/%s: %s\n", cases[i].rel, err.msg);
            return 20 + (int)i;
        }
        snprintf(want, sizeof(want), "%s", cases[i].want);
        sort_lines(want);
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "# scan $D/%s depth %u:\n--- want\n%s--- got\n%s", cases[i].rel,
                    cases[i].depth, want, got);
            return 10 + (int)i;
        }
    }
    return 0;
}

static void unreadable_directory_is_reported_whole(void **state)
{
    struct fx *fx = *state;
    static const char *const locked[] = { "locked", "a/locked", "g/.git" };
    pid_t pid;
    int status;

    mk(fx, ".bashrc");
    mk(fx, "locked/.bashrc");
    mk(fx, "a/locked/.bashrc");
    mk(fx, "g/.git/hooks/");
    mk(fx, "open/README");
    /* writable but not listable */
    for (size_t i = 0; i < sizeof(locked) / sizeof(locked[0]); i++) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", fx->d, locked[i]);
        assert_int_equal(chmod(path, 0300), 0);
    }
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

static void missing_root_is_an_error(void **state)
{
    struct fx *fx = *state;
    struct fs_found_list found = { 0 };
    struct nf_err err = { 0 };
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/nothere", fx->d);
    assert_int_equal(fs_scan_mandatory(path, 3, &found, NULL, &err), -1);
    assert_int_equal(err.code, ENOENT);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(found.n, 0);
    fs_found_free(&found);
}

static void found_list_holds_each_path_once(void **state)
{
    struct fs_found_list l = { 0 };
    struct nf_err err = { 0 };

    (void)state;
    for (int i = 0; i < 40; i++) {
        char p[32];

        snprintf(p, sizeof(p), "/x/%d", i % 20);
        assert_int_equal(fs_found_add(&l, p, FS_FOUND_FILE, &err), 0);
    }
    assert_int_equal(l.n, 20);
    assert_string_equal(l.v[7].path, "/x/7");
    fs_found_free(&l);
    assert_null(l.v);
    assert_int_equal(l.n, 0);
}

/* On a case-insensitive file system `.BashRC` is what opening `.bashrc`
 * finds, and `.GIT` is the repository: names match in any case. */
static void names_match_in_any_case(void **state)
{
    struct fx *fx = *state;

    mk(fx, ".BashRC");
    mk(fx, "a/.VSCode/");
    mk(fx, "a/.Claude/commands/");
    mk(fx, "b/.GIT/hooks/");
    mk(fx, "b/.GIT/config");
    mk(fx, "b/.GIT/commondir");
    expect_scan(fx, "", 3,
                "file $D/.BashRC\n"
                "dir $D/a/.VSCode\n"
                "dir $D/a/.Claude/commands\n"
                "dir $D/b/.GIT/hooks\n"
                "file $D/b/.GIT/config\n"
                "file $D/b/.GIT/commondir\n");
}

/* A placeholder half made by a killed run is left under its temporary name
 * at the top of the write root: found there for removal, and only there. */
static void stale_temporaries_are_found_at_the_top(void **state)
{
    struct fx *fx = *state;

    mk(fx, FS_PH_TMP_PREFIX ".bashrc");
    mk(fx, FS_PH_TMP_PREFIX ".claude~commands/");
    mk(fx, "a/" FS_PH_TMP_PREFIX ".zshrc");
    expect_scan(fx, "", 3,
                "stale $D/" FS_PH_TMP_PREFIX ".bashrc\n"
                "stale $D/" FS_PH_TMP_PREFIX ".claude~commands\n");
}

/* A .git file carries the git directory it names, for the plan to protect
 * that directory's control files too. */
static void gitfile_target_is_read(void **state)
{
    struct fx *fx = *state;
    struct fs_found_list found = { 0 };
    struct nf_err err = { 0 };
    char path[PATH_MAX];
    FILE *f;

    mk(fx, "wt/");
    snprintf(path, sizeof(path), "%s/wt/.git", fx->d);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("gitdir: ../main/.git/worktrees/wt\n", f);
    fclose(f);
    assert_int_equal(fs_scan_mandatory(fx->d, 3, &found, NULL, &err), 0);
    assert_int_equal(found.n, 1);
    assert_int_equal(found.v[0].kind, FS_FOUND_GITFILE);
    assert_string_equal(found.v[0].target, "../main/.git/worktrees/wt");
    assert_int_equal(found.n_git, 1);
    fs_found_free(&found);
}

static void gitfile_parse_takes_git_s_form(void **state)
{
    char out[64];

    (void)state;
    assert_int_equal(fs_gitfile_parse("gitdir: /a/b\n", 13, out, sizeof(out)), 0);
    assert_string_equal(out, "/a/b");
    assert_int_equal(fs_gitfile_parse("gitdir:x  \r\n", 12, out, sizeof(out)), 0);
    assert_string_equal(out, "x");
    assert_int_equal(fs_gitfile_parse("gitdir: \n", 9, out, sizeof(out)), -1);
    assert_int_equal(fs_gitfile_parse("GITDIR: x", 9, out, sizeof(out)), -1);
    assert_int_equal(fs_gitfile_parse("gitdi", 5, out, sizeof(out)), -1);
    assert_int_equal(fs_gitfile_parse("gitdir: 0123456789", 18, out, 4), -1);
}

/* For the check after a run: every .git within the depth, whatever it is. */
static void git_scan_lists_every_repository(void **state)
{
    struct fx *fx = *state;
    struct fs_found_list found = { 0 };
    struct nf_err err = { 0 };

    mk(fx, ".git/HEAD");
    mk(fx, "a/.git");
    mk(fx, "a/b/.Git/");
    mk(fx, "a/b/c/.git/"); /* level 3 */
    mk(fx, "node_modules/x/.git/");
    assert_int_equal(fs_scan_git(fx->d, 3, NULL, &found, &err), 0);
    assert_int_equal(found.n_git, 3);
    assert_int_equal(found.n, 0);
    fs_found_free(&found);
}

/* Every git path a look after the run finds below D, sorted, one per line. */
static void look(const struct fx *fx, const struct fs_dirsnap *snap, char *out, size_t outsz)
{
    struct fs_found_list found = { 0 };
    struct nf_err err = { 0 };
    size_t n = strlen(fx->d);
    char *v[64];

    assert_int_equal(fs_scan_git(fx->d, 3, snap, &found, &err), 0);
    assert_true(found.n_git < 64);
    for (size_t i = 0; i < found.n_git; i++)
        v[i] = found.git[i];
    for (size_t i = 1; i < found.n_git; i++)
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *t = v[j];

            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    out[0] = '\0';
    for (size_t i = 0; i < found.n_git; i++)
        snprintf(out + strlen(out), outsz - strlen(out), "%s\n", v[i] + n);
    fs_found_free(&found);
}

/* The record of D/rel in snap. */
static struct fs_dirsnap_dir *record_of(const struct fx *fx, struct fs_dirsnap *snap,
                                        const char *rel)
{
    char path[PATH_MAX];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", fx->d, rel);
    assert_int_equal(stat(path, &st), 0);
    for (size_t i = 0; i < snap->n; i++)
        if (snap->v[i].dev == st.st_dev && snap->v[i].ino == st.st_ino)
            return &snap->v[i];
    fail_msg("no record of %s", rel);
    return NULL;
}

/* A bare layout is what git's is_git_directory takes: HEAD with objects
 * and refs of any kind (an executable file passes its access() as a
 * directory does), or HEAD with commondir; in any case. Half a layout is
 * none. */
static void bare_layouts_are_what_git_takes(void **state)
{
    struct fx *fx = *state;
    char out[1024], path[PATH_MAX];

    mk(fx, "dirs/HEAD");
    mk(fx, "dirs/objects/");
    mk(fx, "dirs/refs/");
    mk(fx, "files/HEAD");
    mk(fx, "files/objects");
    mk(fx, "files/refs");
    mk(fx, "common/HEAD");
    mk(fx, "common/commondir");
    mk(fx, "cased/HEAD");
    mk(fx, "cased/OBJECTS/");
    mk(fx, "cased/Refs/");
    mk(fx, "links/");
    ln(fx, "elsewhere", "links/HEAD");
    ln(fx, "elsewhere", "links/objects");
    ln(fx, "elsewhere", "links/refs");
    mk(fx, "half/HEAD");
    mk(fx, "half/objects/");
    mk(fx, "nohead/objects/");
    mk(fx, "nohead/refs/");
    mk(fx, "headdir/HEAD/");
    mk(fx, "headdir/objects/");
    mk(fx, "headdir/refs/");
    mk(fx, "commondirdir/HEAD");
    mk(fx, "commondirdir/commondir/");
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/files/%s", fx->d, i ? "refs" : "objects");
        assert_int_equal(chmod(path, 0755), 0);
    }
    look(fx, NULL, out, sizeof(out));
    assert_string_equal(out, "/cased\n/common\n/dirs\n/files\n/links\n");
}

static void age(void)
{
    struct timespec ts = { .tv_sec = FS_DIRSNAP_AGE_S, .tv_nsec = 200000000L };

    nanosleep(&ts, NULL);
}

/* The look after a run takes an unchanged directory's names from the scan
 * before it, and reads again every directory changed since: whatever the
 * command did to its times. */
static void snapshot_spares_only_unchanged_directories(void **state)
{
    struct fx *fx = *state;
    struct fs_found_list found = { 0 };
    struct fs_dirsnap snap = { 0 };
    struct nf_err err = { 0 };
    struct timespec old[2] = { { .tv_sec = 1 }, { .tv_sec = 1 } };
    char with[1024], without[1024], path[PATH_MAX];

    mk(fx, "a/b/c/");
    mk(fx, "a/old/.git/");
    mk(fx, "x/objects/");
    mk(fx, "x/refs/");
    mk(fx, "y/z/");
    mk(fx, "bare/HEAD");
    mk(fx, "bare/objects/");
    mk(fx, "bare/refs/");
    age();
    assert_int_equal(fs_scan_mandatory(fx->d, 3, &found, &snap, &err), 0);
    fs_found_free(&found);
    look(fx, &snap, with, sizeof(with));
    look(fx, NULL, without, sizeof(without));
    assert_string_equal(with, "/a/old/.git\n/bare\n");
    assert_string_equal(with, without);

    /* Unchanged, a directory is not read again: its record is followed. */
    record_of(fx, &snap, "a")->len = 0;
    look(fx, &snap, with, sizeof(with));
    assert_string_equal(with, "/bare\n");
    fs_dirsnap_free(&snap);
    assert_int_equal(fs_scan_mandatory(fx->d, 3, &found, &snap, &err), 0);
    fs_found_free(&found);

    /* A .git made in a directory whose times are then set back, a bare
     * layout completed, a repository in a directory renamed: all seen. */
    mk(fx, "a/b/.git/");
    snprintf(path, sizeof(path), "%s/a/b", fx->d);
    assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
    mk(fx, "x/HEAD");
    snprintf(path, sizeof(path), "%s/y", fx->d);
    snprintf(with, sizeof(with), "%s/w", fx->d);
    assert_int_equal(rename(path, with), 0);
    mk(fx, "w/z/.git");
    look(fx, &snap, with, sizeof(with));
    look(fx, NULL, without, sizeof(without));
    assert_string_equal(with, "/a/b/.git\n/a/old/.git\n/bare\n/w/z/.git\n/x\n");
    assert_string_equal(with, without);
    fs_dirsnap_free(&snap);
}

/* A directory changed within FS_DIRSNAP_AGE_S of the scan is read again
 * after the run whatever its record says: a change in the same tick of the
 * kernel's clock would leave its ctime as it was. */
static void snapshot_never_spares_a_young_directory(void **state)
{
    struct fx *fx = *state;
    struct fs_found_list found = { 0 };
    struct fs_dirsnap snap = { 0 };
    struct nf_err err = { 0 };
    char with[1024];

    mk(fx, "a/old/.git/");
    assert_int_equal(fs_scan_mandatory(fx->d, 3, &found, &snap, &err), 0);
    fs_found_free(&found);
    record_of(fx, &snap, "a")->len = 0;
    look(fx, &snap, with, sizeof(with));
    assert_string_equal(with, "/a/old/.git\n");
    fs_dirsnap_free(&snap);
}

/* A directory reached across a mount is not recorded (its parent lists the
 * inode the mount covers), nor anything below it. */
static void snapshot_records_nothing_across_a_mount(void **state)
{
    struct fx *fx = *state;
    struct fs_found_list found = { 0 };
    struct fs_dirsnap snap = { 0 };
    struct nf_err err = { 0 };
    bool across = false;
    char m[PATH_MAX];

    mk(fx, "m/");
    mk(fx, "plain/");
    snprintf(m, sizeof(m), "%s/m", fx->d);
    if (mount("scan-test", m, "tmpfs", 0, NULL) < 0)
        skip(); /* not root */
    mk(fx, "m/sub/deeper/");
    age();
    assert_int_equal(fs_scan_mandatory(fx->d, 3, &found, &snap, &err), 0);
    fs_found_free(&found);
    for (size_t i = 0; i < snap.n; i++)
        for (const char *p = snap.v[i].names; p && p < snap.v[i].names + snap.v[i].len;
             p += strlen(p) + 1)
            across |= strcmp(p + 1, "sub") == 0 || strcmp(p + 1, "deeper") == 0;
    assert_int_equal(umount(m), 0); /* before any check fails: the fixture goes */
    record_of(fx, &snap, "plain");
    assert_false(across);
    fs_dirsnap_free(&snap);
}

/* Two records of one inode that differ (a 32-bit tmpfs wraps its inode
 * numbers) void it: the directory is read again. */
static void snapshot_voids_an_inode_recorded_twice_unalike(void **state)
{
    struct fx *fx = *state;
    struct fs_found_list found = { 0 };
    struct fs_dirsnap snap = { 0 };
    struct nf_err err = { 0 };
    char with[1024], path[PATH_MAX];

    mk(fx, "a/");
    mk(fx, "b/.git/");
    mk(fx, "c/");
    age();
    assert_int_equal(fs_scan_mandatory(fx->d, 3, &found, &snap, &err), 0);
    fs_found_free(&found);
    /* b's record taken for a's inode too, as a wrapped counter would have
     * it; the table is made again by the next scan (of c, alike). */
    record_of(fx, &snap, "b")->ino = record_of(fx, &snap, "a")->ino;
    snprintf(path, sizeof(path), "%s/c", fx->d);
    assert_int_equal(fs_scan_mandatory(path, 3, &found, &snap, &err), 0);
    fs_found_free(&found);
    look(fx, &snap, with, sizeof(with));
    assert_string_equal(with, "/b/.git\n");
    fs_dirsnap_free(&snap);
}

/* What an encrypted directory lists changes when its key is added, not its
 * ctime: it is always read again. On an ext4 with encryption made here
 * (root, mkfs.ext4 and a loop device; skipped otherwise). */
static bool run_ok(const char *fmt, ...)
{
    char cmd[PATH_MAX * 3];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    return system(cmd) == 0;
}

static int fscrypt_key(const char *mnt, bool add, uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE])
{
    int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc;

    if (fd < 0)
        return -1;
    if (add) {
        struct {
            struct fscrypt_add_key_arg arg;
            uint8_t raw[64];
        } k = { .arg = { .key_spec = { .type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER },
                         .raw_size = 64 } };

        memset(k.raw, 0x5a, sizeof(k.raw));
        rc = ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, &k.arg);
        memcpy(id, k.arg.key_spec.u.identifier, FSCRYPT_KEY_IDENTIFIER_SIZE);
    } else {
        struct fscrypt_remove_key_arg r = { .key_spec = { .type =
                                                              FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER } };

        memcpy(r.key_spec.u.identifier, id, FSCRYPT_KEY_IDENTIFIER_SIZE);
        rc = ioctl(fd, FS_IOC_REMOVE_ENCRYPTION_KEY, &r);
    }
    close(fd);
    return rc;
}

static void snapshot_never_spares_an_encrypted_directory(void **state)
{
    struct fx *fx = *state;
    struct fs_found_list found = { 0 };
    struct fs_dirsnap snap = { 0 };
    struct nf_err err = { 0 };
    uint8_t id[FSCRYPT_KEY_IDENTIFIER_SIZE];
    char img[PATH_MAX], mnt[PATH_MAX], e[PATH_MAX + 8], with[1024] = "", without[1024] = "";
    struct fscrypt_policy_v2 pol = { .version = FSCRYPT_POLICY_V2,
                                     .contents_encryption_mode = FSCRYPT_MODE_AES_256_XTS,
                                     .filenames_encryption_mode = FSCRYPT_MODE_AES_256_CTS,
                                     .flags = FSCRYPT_POLICY_FLAGS_PAD_32 };
    struct fx sub;
    bool made = false;
    int fd;

    snprintf(img, sizeof(img), "%s/img", fx->d);
    snprintf(mnt, sizeof(mnt), "%s/mnt", fx->d);
    if (geteuid() != 0 || mkdir(mnt, 0755) < 0 ||
        !run_ok("truncate -s 32M '%s' && mkfs.ext4 -q -F -O encrypt '%s' >/dev/null 2>&1", img,
                img) ||
        !run_ok("mount -o loop '%s' '%s' 2>/dev/null", img, mnt))
        skip();
    snprintf(e, sizeof(e), "%s/E", mnt);
    if (mkdir(e, 0755) == 0 && fscrypt_key(mnt, true, id) == 0 &&
        (fd = open(e, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
        memcpy(pol.master_key_identifier, id, sizeof(id));
        made = ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, &pol) == 0;
        close(fd);
    }
    if (!made) {
        (void)umount(mnt);
        skip(); /* no fscrypt in this kernel */
    }
    if (snprintf(sub.d, sizeof(sub.d), "%s", fx->d) >= (int)sizeof(sub.d) - 4)
        fail_msg("fixture path too long");
    strcat(sub.d, "/mnt");
    mk(&sub, "E/sub/");
    assert_int_equal(fscrypt_key(mnt, false, id), 0); /* its names now unreadable */
    age();
    /* The scan reads E without its key; the command adds it and makes a
     * repository in what E holds. */
    if (fs_scan_mandatory(mnt, 3, &found, &snap, &err) == 0 && fscrypt_key(mnt, true, id) == 0) {
        mk(&sub, "E/sub/.git/");
        look(&sub, &snap, with, sizeof(with));
        look(&sub, NULL, without, sizeof(without));
    }
    fs_found_free(&found);
    fs_dirsnap_free(&snap);
    assert_int_equal(umount(mnt), 0); /* before any check fails: the fixture goes */
    assert_string_equal(without, "/E/sub/.git\n");
    assert_string_equal(with, without);
}

/* The other names of a hard-linked file, within the depth. */
static void inode_scan_finds_other_names(void **state)
{
    struct fx *fx = *state;
    struct fs_found_list found = { 0 };
    struct nf_err err = { 0 };
    char a[PATH_MAX], b[PATH_MAX];
    struct stat st;
    struct fs_inode ino;

    mk(fx, ".bashrc");
    mk(fx, "sub/deeper/");
    snprintf(a, sizeof(a), "%s/.bashrc", fx->d);
    snprintf(b, sizeof(b), "%s/sub/notes.txt", fx->d);
    assert_int_equal(link(a, b), 0);
    snprintf(b, sizeof(b), "%s/sub/deeper/x", fx->d);
    assert_int_equal(link(a, b), 0);
    assert_int_equal(stat(a, &st), 0);
    ino = (struct fs_inode){ .dev = st.st_dev, .ino = st.st_ino };
    assert_int_equal(fs_scan_inodes(fx->d, 2, &ino, 1, &found, &err), 0);
    expect_strs_found(fx, &found, "$D/.bashrc\n$D/sub/notes.txt\n");
    fs_found_free(&found);
}

/* A directory larger than one read of its entries (getdents64 fills 16 KiB
 * at a time): every entry of every read is seen, the protected names among
 * thousands of others too, at the top and a level down. */
static void large_directories_are_read_to_the_end(void **state)
{
    struct fx *fx = *state;
    char rel[64], want[TEXT_MAX] = "";

    for (int i = 0; i < 3000; i++) {
        snprintf(rel, sizeof(rel), "file-with-a-longish-name-%04d", i);
        mk(fx, rel);
    }
    for (int i = 0; i < 5; i++) {
        snprintf(rel, sizeof(rel), "sub%d/.vscode", i);
        mk(fx, rel);
        snprintf(want + strlen(want), sizeof(want) - strlen(want), "file $D/sub%d/.vscode\n", i);
    }
    mk(fx, ".mcp.json");
    snprintf(want + strlen(want), sizeof(want) - strlen(want), "file $D/.mcp.json\n");
    expect_scan(fx, "", 3, want);
}

/* A directory removed after it was opened (a build deleting its output while
 * the scan walks it) reads as empty, not as an error: a run beside such a
 * build must not fail. */
static void a_directory_removed_while_open_reads_empty(void **state)
{
    struct fx *fx = *state;
    struct fs_dir_reader *r = calloc(1, sizeof(*r));
    char path[PATH_MAX];

    assert_non_null(r);
    mk(fx, "gone/");
    snprintf(path, sizeof(path), "%s/gone", fx->d);
    r->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(r->fd >= 0);
    assert_int_equal(rmdir(path), 0);
    errno = EBADF;
    assert_null(fs_dir_next(r));
    assert_int_equal(errno, 0);
    close(r->fd);
    free(r);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_protected_names_are_the_documented_ones),
        T(every_name_is_found_at_levels_0_1_2_and_not_3),
        T(depth_limits_the_levels),
        T(only_the_protected_names_are_reported),
        T(a_protected_name_is_protected_whole),
        T(node_modules_is_skipped),
        T(git_directory_is_not_descended),
        T(git_file_or_link_is_reported_itself),
        T(submodule_git_directories_are_protected),
        T(claude_is_looked_into_only_for_its_protected_names),
        T(symlinks_are_reported_and_never_followed),
        T(symlink_loops_do_not_recurse),
        T(unreadable_directory_is_reported_whole),
        T(missing_root_is_an_error),
        cmocka_unit_test(found_list_holds_each_path_once),
        T(names_match_in_any_case),
        T(stale_temporaries_are_found_at_the_top),
        T(gitfile_target_is_read),
        cmocka_unit_test(gitfile_parse_takes_git_s_form),
        T(git_scan_lists_every_repository),
        T(bare_layouts_are_what_git_takes),
        T(snapshot_spares_only_unchanged_directories),
        T(snapshot_never_spares_a_young_directory),
        T(snapshot_records_nothing_across_a_mount),
        T(snapshot_voids_an_inode_recorded_twice_unalike),
        T(snapshot_never_spares_an_encrypted_directory),
        T(inode_scan_finds_other_names),
        T(large_directories_are_read_to_the_end),
        T(a_directory_removed_while_open_reads_empty),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
