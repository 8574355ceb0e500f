/* fs/placeholder.c over real trees in a private directory D under /var/tmp:
 * placeholders are made complete (marked, under their final name only once
 * done), held, removed by the last run; nothing is ever made or removed
 * through a symlink, and what a killed run half made is cleaned up. A file
 * is made unnamed and linked in place by its descriptor, else through
 * /proc/self/fd; without either link, under a temporary name renamed into
 * place. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/placeholder.h"
#include "fs/plan.h"
#include "tests/unit/tmptree.h"

struct fx {
    char d[256];
    struct fs_plan plan;
    uint8_t skip[16]; /* the per-op results */
};

static int fx_setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));

    if (!fx || tmptree_make("ph", fx->d, sizeof(fx->d)) < 0) {
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *fx = *state;

    fs_plan_free(&fx->plan);
    tmptree_remove(fx->d);
    free(fx);
    return 0;
}

static void path_of(const struct fx *fx, const char *rel, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s/%s", fx->d, rel);
}

/* An op asking for a placeholder at D/rel, missing when planned. */
static struct fs_op *want(struct fx *fx, const char *rel, enum fs_placeholder kind, bool optional)
{
    char p[PATH_MAX];
    struct fs_op *op;

    assert_true(fx->plan.n < sizeof(fx->skip));
    fx->plan.ops = realloc(fx->plan.ops, (fx->plan.n + 1) * sizeof(*fx->plan.ops));
    assert_non_null(fx->plan.ops);
    op = &fx->plan.ops[fx->plan.n++];
    path_of(fx, rel, p, sizeof(p));
    *op = (struct fs_op){ .kind = FS_OP_BIND_RO,
                          .ph = kind,
                          .ph_shown = true,
                          .ph_missing = true,
                          .optional = optional,
                          .why = "test" };
    op->src = strdup(p);
    op->dst = strdup(p);
    op->anchor = strdup(fx->d);
    return op;
}

static void mkd(const struct fx *fx, const char *rel)
{
    char p[PATH_MAX];

    path_of(fx, rel, p, sizeof(p));
    assert_int_equal(mkdir(p, 0755), 0);
}

static bool exists(const struct fx *fx, const char *rel, struct stat *st)
{
    char p[PATH_MAX];
    struct stat ignored;

    path_of(fx, rel, p, sizeof(p));
    return lstat(p, st ? st : &ignored) == 0;
}

static size_t entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void placeholders_are_made_marked_and_removed(void **state)
{
    struct fx *fx = *state;
    struct fs_ph_set set = { 0 };
    struct nf_err err = { 0 };
    char buf[8] = { 0 };
    struct stat st;
    char p[PATH_MAX];
    int fd;

    mkd(fx, ".git");
    want(fx, ".bashrc", FS_PH_FILE, false);
    want(fx, ".vscode", FS_PH_DIR, false);
    want(fx, ".git/commondir", FS_PH_DOTFILE, false);
    assert_int_equal(fs_placeholders_prepare(&fx->plan, &set, fx->skip, &err), 0);
    assert_int_equal(set.n, 3);
    assert_true(exists(fx, ".bashrc", &st) && S_ISREG(st.st_mode) && fs_placeholder_is(&st));
    assert_true(exists(fx, ".vscode", &st) && S_ISDIR(st.st_mode) && fs_placeholder_is(&st));
    assert_true(exists(fx, ".git/commondir", &st) && fs_placeholder_is(&st));
    /* git reads "." as "this very directory"; an empty commondir breaks it */
    path_of(fx, ".git/commondir", p, sizeof(p));
    fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, buf, sizeof(buf)), 2);
    close(fd);
    assert_string_equal(buf, ".\n");
    /* no temporary is left at the top */
    assert_int_equal(entries(fx->d), 3);
    fs_placeholders_release(&set);
    assert_int_equal(entries(fx->d), 1); /* .git */
    path_of(fx, ".git", p, sizeof(p));
    assert_int_equal(entries(p), 0);
}

/* Another run holding a placeholder keeps it: the last one removes it. */
static void the_last_run_removes_a_shared_placeholder(void **state)
{
    struct fx *fx = *state;
    struct fs_ph_set a = { 0 }, b = { 0 };
    struct nf_err err = { 0 };

    want(fx, ".zshrc", FS_PH_FILE, false);
    assert_int_equal(fs_placeholders_prepare(&fx->plan, &a, fx->skip, &err), 0);
    assert_int_equal(fs_placeholders_prepare(&fx->plan, &b, fx->skip, &err), 0);
    assert_int_equal(b.n, 1);
    fs_placeholders_release(&a);
    assert_true(exists(fx, ".zshrc", NULL));
    fs_placeholders_release(&b);
    assert_false(exists(fx, ".zshrc", NULL));
}

/* A directory on the way swapped for a symlink to elsewhere: nothing is
 * made through it. Found by the scan (optional): skipped; required: the
 * run fails. */
static void nothing_is_made_through_a_symlink(void **state)
{
    struct fx *fx = *state;
    struct fs_ph_set set = { 0 };
    struct nf_err err = { 0 };
    char p[PATH_MAX], t[PATH_MAX];

    mkd(fx, "elsewhere");
    mkd(fx, "elsewhere/.git");
    path_of(fx, "elsewhere", t, sizeof(t));
    path_of(fx, "sub", p, sizeof(p));
    assert_int_equal(symlink(t, p), 0);
    want(fx, "sub/.git/commondir", FS_PH_DOTFILE, true);
    assert_int_equal(fs_placeholders_prepare(&fx->plan, &set, fx->skip, &err), 0);
    assert_int_equal(set.n, 0);
    assert_true(fx->skip[0]);
    assert_false(exists(fx, "elsewhere/.git/commondir", NULL));
    fs_placeholders_release(&set);

    fx->plan.ops[0].optional = false;
    assert_int_equal(fs_placeholders_prepare(&fx->plan, &set, fx->skip, &err), -1);
    assert_non_null(strstr(err.msg, "vanished or changed"));
    assert_false(exists(fx, "elsewhere/.git/commondir", NULL));
    fs_placeholders_release(&set);
}

/* What a killed run half made (its temporary at the top) goes; an entry of
 * that name with content, or one a live run holds, stays. */
static void stale_temporaries_are_removed(void **state)
{
    struct fx *fx = *state;
    struct fs_ph_set set = { 0 };
    struct nf_err err = { 0 };
    char p[PATH_MAX];
    int fd;

    path_of(fx, FS_PH_TMP_PREFIX ".bashrc", p, sizeof(p));
    fd = open(p, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    mkd(fx, FS_PH_TMP_PREFIX ".vscode");
    mkd(fx, FS_PH_TMP_PREFIX "full");
    path_of(fx, FS_PH_TMP_PREFIX "full/x", p, sizeof(p));
    fd = open(p, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    fx->plan.stale = calloc(3, sizeof(*fx->plan.stale));
    fx->plan.stale[0] = (struct fs_stale){ strdup(fx->d), strdup(FS_PH_TMP_PREFIX ".bashrc") };
    fx->plan.stale[1] = (struct fs_stale){ strdup(fx->d), strdup(FS_PH_TMP_PREFIX ".vscode") };
    fx->plan.stale[2] = (struct fs_stale){ strdup(fx->d), strdup(FS_PH_TMP_PREFIX "full") };
    fx->plan.n_stale = 3;
    assert_int_equal(fs_placeholders_prepare(&fx->plan, &set, fx->skip, &err), 0);
    assert_false(exists(fx, FS_PH_TMP_PREFIX ".bashrc", NULL));
    assert_false(exists(fx, FS_PH_TMP_PREFIX ".vscode", NULL));
    assert_true(exists(fx, FS_PH_TMP_PREFIX "full/x", NULL));
    fs_placeholders_release(&set);
}

/* A name that appeared between the plan and its making is adopted, not
 * replaced, and left alone at the end when it is not ours. */
static void a_name_that_appeared_is_adopted(void **state)
{
    struct fx *fx = *state;
    struct fs_ph_set set = { 0 };
    struct nf_err err = { 0 };
    char p[PATH_MAX];
    int fd;

    want(fx, ".profile", FS_PH_FILE, false);
    path_of(fx, ".profile", p, sizeof(p));
    fd = open(p, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "mine\n", 5), 5);
    close(fd);
    assert_int_equal(fs_placeholders_prepare(&fx->plan, &set, fx->skip, &err), 0);
    fs_placeholders_release(&set);
    assert_true(exists(fx, ".profile", NULL));
    assert_int_equal(entries(fx->d), 1);
}

static int write_id_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

    if (fd >= 0)
        close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Files made in a child with a user and mount namespace of its own: with
 * or without linking by descriptor, and with /proc or a tmpfs over it. Each
 * way makes them as complete, and leaves nothing over: no temporary. */
static void files_made_in_child(struct fx *fx, bool flink, bool proc)
{
    char map[64];
    uid_t uid = getuid();
    gid_t gid = getgid();
    int status;
    pid_t c;

    want(fx, ".bashrc", FS_PH_FILE, false);
    mkd(fx, ".git");
    want(fx, ".git/commondir", FS_PH_DOTFILE, false);
    c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        struct fs_ph_set set = { 0 };
        struct nf_err err = { 0 };
        struct stat st;
        int code = 0;

        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
            _exit(77);
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
        if (write_id_file("/proc/self/setgroups", "deny") < 0 ||
            write_id_file("/proc/self/uid_map", map) < 0)
            _exit(10);
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
        if (write_id_file("/proc/self/gid_map", map) < 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            (!proc && mount("none", "/proc", "tmpfs", 0, NULL) < 0))
            _exit(11);
        fs_placeholders_flink(flink);
        if (fs_placeholders_prepare(&fx->plan, &set, fx->skip, &err) < 0 || set.n != 2)
            code = 12;
        else if (!exists(fx, ".bashrc", &st) || !S_ISREG(st.st_mode) || !fs_placeholder_is(&st))
            code = 13;
        else if (!exists(fx, ".git/commondir", &st) || !fs_placeholder_is(&st) || st.st_size != 2)
            code = 14;
        else if (entries(fx->d) != 2) /* .bashrc, .git: no temporary */
            code = 15;
        fs_placeholders_release(&set);
        if (!code && (exists(fx, ".bashrc", NULL) || exists(fx, ".git/commondir", NULL)))
            code = 16;
        _exit(code);
    }
    assert_int_equal(waitpid(c, &status, 0), c);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        skip(); /* no user namespaces here */
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_false(exists(fx, ".bashrc", NULL));
}

/* No /proc: linked by descriptor where the kernel lets its opener (6.10 and
 * later), else under a temporary renamed into place. */
static void files_are_made_without_proc_too(void **state)
{
    files_made_in_child(*state, true, false);
}

/* No /proc and no link by descriptor: under a temporary renamed into place. */
static void files_are_made_without_proc_or_flink(void **state)
{
    files_made_in_child(*state, false, false);
}

/* No link by descriptor (a kernel before 6.10): through /proc/self/fd. */
static void files_are_linked_through_proc_without_flink(void **state)
{
    files_made_in_child(*state, false, true);
}

/* The mark is a 1980 mtime anyone who may write a directory can set: a
 * marked directory is a placeholder only while it holds nothing but
 * placeholders (another run's, a few levels down). */
static void a_forged_mark_is_not_a_placeholder(void **state)
{
    struct fx *fx = *state;
    struct timespec marked[2] = { { .tv_sec = FS_PH_MTIME }, { .tv_sec = FS_PH_MTIME } };
    static const char *const dirs[] = { "empty",    "nested",     "nested/commands",
                                        "real",     "deep",       "deep/a",
                                        "deep/a/b", "deep/a/b/c", "deep/a/b/c/d" };
    char p[PATH_MAX];
    struct stat st;
    int fd;

    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        mkd(fx, dirs[i]);
    assert_int_equal(tmptree_put(fx->d, "nested/commondir", ".\n", p, sizeof(p)), 0);
    assert_int_equal(tmptree_put(fx->d, "real/config", "[core]\n", p, sizeof(p)), 0);
    /* Children first: marking a directory's entry changes no mtime of it,
     * but making one does. */
    static const char *const order[] = {
        "nested/commondir", "nested/commands", "nested",   "empty",  "real",
        "deep/a/b/c/d",     "deep/a/b/c",      "deep/a/b", "deep/a", "deep"
    };
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        path_of(fx, order[i], p, sizeof(p));
        assert_int_equal(utimensat(AT_FDCWD, p, marked, AT_SYMLINK_NOFOLLOW), 0);
    }

    path_of(fx, "empty", p, sizeof(p));
    assert_true(fs_placeholder_path(p, &st));
    path_of(fx, "nested", p, sizeof(p));
    assert_true(fs_placeholder_path(p, &st));
    path_of(fx, "real", p, sizeof(p));
    assert_int_equal(lstat(p, &st), 0);
    assert_true(fs_placeholder_is(&st)); /* the mark alone */
    assert_false(fs_placeholder_path(p, &st));
    fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_false(fs_placeholder_at(fd, &st));
    close(fd);
    path_of(fx, "deep", p, sizeof(p));
    assert_false(fs_placeholder_path(p, &st)); /* deeper than placeholders nest */
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(placeholders_are_made_marked_and_removed), T(the_last_run_removes_a_shared_placeholder),
        T(nothing_is_made_through_a_symlink),        T(stale_temporaries_are_removed),
        T(a_name_that_appeared_is_adopted),          T(files_are_made_without_proc_too),
        T(files_are_made_without_proc_or_flink),     T(files_are_linked_through_proc_without_flink),
        T(a_forged_mark_is_not_a_placeholder),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
