/* fs/landlock.c and src/lmode.c: what the supervisor lets the command write
 * in Landlock mode (the plan's lists, with no private /tmp and no scratch
 * directories), the read rules split around a denied path, the property
 * table per ABI, and the private TMPDIR's removal whatever the command left
 * in it. */
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/landlock.h"
#include "src/lmode.h"
#include "tests/unit/tmptree.h"

static char *roots[] = { "/w", "/w/sub/other" };
static char *protected_[] = { "/w/.bashrc", "/w/.git/hooks", "/w/.git/config", "/w/sub/.vscode" };
static char *scratch[] = { "/w/secret" };
static char *read_only[] = { "/w/secret/readme", "/w/ro" };

static struct fs_plan plan(void)
{
    struct fs_plan p = { 0 };

    p.write_roots = roots;
    p.n_write_roots = 2;
    p.protected_paths = protected_;
    p.n_protected = 4;
    p.scratch = scratch;
    p.n_scratch = 1;
    p.read_only = read_only;
    p.n_read_only = 2;
    return p;
}

static void writable_follows_the_plan_without_private_places(void **state)
{
    struct fs_plan p = plan();

    (void)state;
    assert_true(fs_ll_writable(&p, NULL, "/w"));
    assert_true(fs_ll_writable(&p, NULL, "/w/x"));
    assert_true(fs_ll_writable(&p, NULL, "/w/.git/HEAD"));
    assert_true(fs_ll_writable(&p, NULL, "/w/sub/other/y"));
    /* protected, and everything beneath a protected directory */
    assert_false(fs_ll_writable(&p, NULL, "/w/.bashrc"));
    assert_false(fs_ll_writable(&p, NULL, "/w/.git/hooks"));
    assert_false(fs_ll_writable(&p, NULL, "/w/.git/hooks/pre-commit"));
    assert_false(fs_ll_writable(&p, NULL, "/w/.git/config"));
    assert_false(fs_ll_writable(&p, NULL, "/w/sub/.vscode/tasks.json"));
    /* a name that only starts like a protected one is not it */
    assert_true(fs_ll_writable(&p, NULL, "/w/.bashrc2"));
    assert_true(fs_ll_writable(&p, NULL, "/w/.git/hooksx"));
    /* outside every write root */
    assert_false(fs_ll_writable(&p, NULL, "/"));
    assert_false(fs_ll_writable(&p, NULL, "/etc/passwd"));
    assert_false(fs_ll_writable(&p, NULL, "/wx"));
    /* /tmp is the host's here: namespace mode's private /tmp is not */
    assert_false(fs_ll_writable(&p, NULL, "/tmp/x"));
    assert_true(fs_ll_writable(&p, "/tmp/nsfence-abc", "/tmp/nsfence-abc/x"));
    assert_false(fs_ll_writable(&p, "/tmp/nsfence-abc", "/tmp/nsfence-abcd/x"));
    /* a denied-read directory is the host's own here, not a scratch tmpfs */
    assert_false(fs_ll_writable(&p, NULL, "/w/secret"));
    assert_false(fs_ll_writable(&p, NULL, "/w/secret/new"));
    assert_false(fs_ll_writable(&p, NULL, "/w/secret/readme"));
    assert_false(fs_ll_writable(&p, NULL, "/w/ro/x"));
    p.unrestricted = true;
    assert_true(fs_ll_writable(&p, NULL, "/etc/passwd"));
}

static void holds_protected_names_every_ancestor(void **state)
{
    struct fs_plan p = plan();

    (void)state;
    assert_true(fs_ll_holds_protected(&p, "/w/.git"));
    assert_true(fs_ll_holds_protected(&p, "/w/.git/hooks"));
    assert_true(fs_ll_holds_protected(&p, "/w/sub"));
    assert_true(fs_ll_holds_protected(&p, "/w"));
    assert_true(fs_ll_holds_protected(&p, "/"));
    assert_false(fs_ll_holds_protected(&p, "/w/sub/other"));
    assert_false(fs_ll_holds_protected(&p, "/w/.gi"));
    assert_false(fs_ll_holds_protected(&p, "/w/x"));
}

static void access_names(void **state)
{
    char buf[256];

    (void)state;
    fs_ll_access_format(FS_LL_READ_FILE | FS_LL_READ_DIR | FS_LL_EXECUTE, buf, sizeof(buf));
    assert_string_equal(buf, "execute,read_file,read_dir");
    fs_ll_access_format(FS_LL_TRUNCATE | FS_LL_IOCTL_DEV, buf, sizeof(buf));
    assert_string_equal(buf, "truncate,ioctl_dev");
    fs_ll_access_format(0, buf, sizeof(buf));
    assert_string_equal(buf, "");
}

static enum lmode_status status_of(int abi, const char *prefix)
{
    struct lmode_row rows[32];
    size_t n = lmode_table(abi, rows, 32);

    for (size_t i = 0; i < n; i++)
        if (strncmp(rows[i].property, prefix, strlen(prefix)) == 0)
            return rows[i].status;
    fail_msg("no row \"%s\"", prefix);
    return LMODE_ABSENT;
}

/* The table says what the ABI gives, never more. */
static void property_table_follows_the_abi(void **state)
{
    (void)state;
    assert_int_equal(status_of(7, "writes only"), LMODE_ENFORCED);
    assert_int_equal(status_of(0, "writes only"), LMODE_ABSENT);
    assert_int_equal(status_of(3, "network only"), LMODE_ABSENT);
    assert_int_equal(status_of(4, "network only"), LMODE_ENFORCED);
    assert_int_equal(status_of(5, "signals"), LMODE_ABSENT);
    assert_int_equal(status_of(6, "signals"), LMODE_ENFORCED);
    assert_int_equal(status_of(4, "device ioctls"), LMODE_ABSENT);
    assert_int_equal(status_of(5, "device ioctls"), LMODE_ENFORCED);
    assert_int_equal(status_of(7, "read denies"), LMODE_PARTIAL);
    assert_int_equal(status_of(7, "process visibility"), LMODE_ABSENT);
    assert_int_equal(status_of(7, "private /tmp"), LMODE_PARTIAL);
}

static bool has_rule(const struct fs_ll_plan *ll, const char *path, uint64_t *access)
{
    for (size_t i = 0; i < ll->n; i++)
        if (strcmp(ll->rules[i].path, path) == 0) {
            *access = ll->rules[i].access;
            return true;
        }
    return false;
}

/* A denied directory gets no rule; every entry beside it, and beside each
 * directory on the way to it, gets read; the directories on the way get
 * read_dir alone; a carve-out inside gets read again. */
static void read_rules_split_around_a_denied_path(void **state)
{
    char d[512], failed[PATH_MAX], path[PATH_MAX], sub[PATH_MAX], carve[PATH_MAX];
    struct fs_plan p = { 0 };
    struct fs_op ops[2] = { { 0 } };
    struct fs_ll_plan ll;
    struct nf_err err = { 0 };
    uint64_t a;
    const uint64_t read = FS_LL_READ_FILE | FS_LL_READ_DIR | FS_LL_EXECUTE;

    (void)state;
    assert_int_equal(tmptree_make("landlock", d, sizeof(d)), 0);
    assert_int_equal(tmptree_put(d, "a/secret/key", "k", failed, sizeof(failed)), 0);
    assert_int_equal(tmptree_put(d, "a/secret/pub/id.pub", "p", failed, sizeof(failed)), 0);
    assert_int_equal(tmptree_put(d, "a/beside", "b", failed, sizeof(failed)), 0);
    assert_int_equal(tmptree_put(d, "other/f", "o", failed, sizeof(failed)), 0);
    snprintf(sub, sizeof(sub), "%s/a/secret", d);
    snprintf(carve, sizeof(carve), "%s/a/secret/pub", d);
    ops[0] = (struct fs_op){ .kind = FS_OP_MASK_DIR, .dst = sub, .why = "deny_read" };
    ops[1] =
        (struct fs_op){ .kind = FS_OP_BIND_RO, .src = carve, .dst = carve, .why = "allow_read" };
    p.ops = ops;
    p.n = 2;
    p.write_roots = (char *[]){ d };
    p.n_write_roots = 1;
    assert_int_equal(fs_ll_build(&p, 7, &ll, &err), 0);
    assert_true(has_rule(&ll, "/", &a));
    assert_int_equal(a, FS_LL_READ_DIR);
    snprintf(path, sizeof(path), "%s/a", d);
    assert_true(has_rule(&ll, path, &a));
    assert_int_equal(a & read, FS_LL_READ_DIR);
    assert_false(has_rule(&ll, sub, &a));
    assert_true(has_rule(&ll, carve, &a));
    assert_int_equal(a & read, read);
    snprintf(path, sizeof(path), "%s/a/beside", d);
    assert_true(has_rule(&ll, path, &a));
    assert_int_equal(a & read, read);
    snprintf(path, sizeof(path), "%s/other", d);
    assert_true(has_rule(&ll, path, &a));
    assert_int_equal(a & read, read);
    assert_true(has_rule(&ll, "/etc", &a));
    assert_int_equal(a & read, read);
    /* the write root writes, without reading through the split */
    assert_true(has_rule(&ll, d, &a));
    assert_true(a & FS_LL_WRITE_FILE);
    assert_int_equal(ll.handled_net, FS_LL_NET_BIND_TCP | FS_LL_NET_CONNECT_TCP);
    assert_int_equal(ll.scoped, FS_LL_SCOPE_ABSTRACT_UNIX | FS_LL_SCOPE_SIGNAL);
    fs_ll_free(&ll);
    /* what an older ABI cannot handle is not asked for */
    assert_int_equal(fs_ll_build(&p, 3, &ll, &err), 0);
    assert_int_equal(ll.handled_net, 0);
    assert_int_equal(ll.scoped, 0);
    assert_false(ll.handled_fs & FS_LL_IOCTL_DEV);
    assert_true(ll.handled_fs & FS_LL_TRUNCATE);
    fs_ll_free(&ll);
    assert_int_equal(fs_ll_build(&p, 0, &ll, &err), -1);
    tmptree_remove(d);
}

/* Whatever the command left in its TMPDIR goes, and nothing outside it: a
 * symlink to outside is removed, not followed; an unreadable directory and
 * a tree deeper than the remover's descriptor budget go too. */
static void tmpdir_removal_leaves_nothing_and_follows_nothing(void **state)
{
    char d[512], failed[PATH_MAX], path[PATH_MAX], outside[PATH_MAX];
    char *tmp = NULL;
    struct nf_err err = { 0 };
    struct stat st;
    int fd;

    (void)state;
    assert_int_equal(tmptree_make("llout", d, sizeof(d)), 0);
    assert_int_equal(tmptree_put(d, "keep/file", "precious", failed, sizeof(failed)), 0);
    snprintf(outside, sizeof(outside), "%s/keep", d);
    setenv("TMPDIR", d, 1);
    assert_int_equal(fs_ll_tmpdir_make(&tmp, &err), 0);
    unsetenv("TMPDIR");
    assert_int_equal(strncmp(tmp, d, strlen(d)), 0);
    assert_int_equal(stat(tmp, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_int_equal(tmptree_symlink(tmp, outside, "link", failed, sizeof(failed)), 0);
    assert_int_equal(tmptree_put(tmp, "locked/inner/f", "x", failed, sizeof(failed)), 0);
    snprintf(path, sizeof(path), "%s/locked", tmp);
    assert_int_equal(chmod(path, 0), 0);
    /* 100 levels: more than the remover keeps open at once */
    fd = open(tmp, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    for (int i = 0; i < 100; i++) {
        int next;

        assert_int_equal(mkdirat(fd, "d", 0700), 0);
        next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
        assert_true(next >= 0);
        close(fd);
        fd = next;
    }
    close(openat(fd, "leaf", O_CREAT | O_WRONLY, 0600));
    close(fd);
    if (fs_ll_tmpdir_remove(tmp, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(lstat(tmp, &st), -1);
    assert_int_equal(errno, ENOENT);
    snprintf(path, sizeof(path), "%s/keep/file", d);
    assert_int_equal(stat(path, &st), 0);
    /* gone already: nothing to do */
    assert_int_equal(fs_ll_tmpdir_remove(tmp, &err), 0);
    free(tmp);
    tmptree_remove(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writable_follows_the_plan_without_private_places),
        cmocka_unit_test(holds_protected_names_every_ancestor),
        cmocka_unit_test(access_names),
        cmocka_unit_test(property_table_follows_the_abi),
        cmocka_unit_test(read_rules_split_around_a_denied_path),
        cmocka_unit_test(tmpdir_removal_leaves_nothing_and_follows_nothing),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
