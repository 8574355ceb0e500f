/* fs/mounts.c: one mountinfo line at a time (escapes, optional fields, an
 * empty source, malformed and overlong lines), the foreign-procfs list over
 * whole tables, and, in a private mount namespace, over the kernel's own
 * /proc/self/mountinfo. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/mounts.h"
#include "tests/unit/tmptree.h"

static int parse(const char *line, struct fs_mountinfo *mi)
{
    return fs_mountinfo_parse(line, strlen(line), mi);
}

/* ---- one line ----------------------------------------------------------- */

static void a_plain_line_gives_ids_mount_point_and_type(void **state)
{
    struct fs_mountinfo mi;

    (void)state;
    assert_int_equal(parse("21 26 0:20 / /proc rw,relatime - proc proc rw\n", &mi), 0);
    assert_int_equal(mi.mount_id, 21);
    assert_int_equal(mi.parent_id, 26);
    assert_int_equal(mi.major, 0);
    assert_int_equal(mi.minor, 20);
    assert_string_equal(mi.mount_point, "/proc");
    assert_string_equal(mi.fstype, "proc");
    /* the same without its newline */
    assert_int_equal(parse("26 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard", &mi), 0);
    assert_int_equal(mi.major, 254);
    assert_string_equal(mi.mount_point, "/");
    assert_string_equal(mi.fstype, "ext4");
}

static void the_kernels_escapes_are_decoded(void **state)
{
    struct fs_mountinfo mi;

    (void)state;
    /* what the kernel printed for a tmpfs on "/var/tmp/a b<TAB>c\d<LF>e" */
    assert_int_equal(
        parse("168 67 0:54 / /var/tmp/a\\040b\\011c\\134d\\012e rw,relatime - tmpfs tmpfs rw", &mi),
        0);
    assert_string_equal(mi.mount_point, "/var/tmp/a b\tc\\d\ne");
    assert_int_equal(parse("30 1 0:50 / /srv/my\\040chroot/proc rw - proc proc rw", &mi), 0);
    assert_string_equal(mi.mount_point, "/srv/my chroot/proc");
    assert_int_equal(parse("31 1 0:51 / /mnt/x rw - fuse.my\\040fs dev rw", &mi), 0);
    assert_string_equal(mi.fstype, "fuse.my fs");
    /* any other byte is the path's own: UTF-8, a carriage return */
    assert_int_equal(parse("32 1 0:52 / /mnt/caf\xc3\xa9\r rw - tmpfs x rw", &mi), 0);
    assert_string_equal(mi.mount_point, "/mnt/caf\xc3\xa9\r");
}

static void optional_fields_come_before_the_separator(void **state)
{
    struct fs_mountinfo mi;

    (void)state;
    assert_int_equal(parse("47 45 0:47 / /srv/a rw,relatime shared:1 - tmpfs we\\040ird rw", &mi),
                     0);
    assert_string_equal(mi.fstype, "tmpfs");
    assert_int_equal(parse("36 35 98:0 /mnt1 /mnt/parent rw,noatime shared:1 master:2 "
                           "propagate_from:3 unbindable - ext3 /dev/root rw,errors=continue",
                           &mi),
                     0);
    assert_string_equal(mi.mount_point, "/mnt/parent");
    assert_string_equal(mi.fstype, "ext3");
    /* an nsfs bind: its root is not a path */
    assert_int_equal(
        parse("612 29 0:4 net:[4026532801] /run/netns/t rw shared:5 - nsfs nsfs rw", &mi), 0);
    assert_string_equal(mi.fstype, "nsfs");
}

static void an_empty_source_is_a_field(void **state)
{
    struct fs_mountinfo mi;

    (void)state;
    /* `mount -t proc "" /srv/p`: the kernel prints the empty source as is */
    assert_int_equal(parse("45 67 0:40 / /srv/p rw,relatime - proc  rw\n", &mi), 0);
    assert_string_equal(mi.mount_point, "/srv/p");
    assert_string_equal(mi.fstype, "proc");
    /* superblock options are the rest of the line, spaces and all */
    assert_int_equal(parse("46 67 0:41 / /srv/q rw - tmpfs tmpfs rw,opt=a b c", &mi), 0);
    assert_string_equal(mi.fstype, "tmpfs");
}

static void malformed_lines_are_refused(void **state)
{
    static const char *const bad[] = {
        "",
        "\n",
        "21 26 0:20 / /proc rw,relatime proc proc rw",      /* no separator */
        "21 26 0:20 / /proc rw,relatime -",                 /* nothing after it */
        "21 26 0:20 / /proc rw,relatime - proc",            /* no source */
        "21 26 0:20 / /proc rw,relatime - proc proc",       /* no superblock options */
        "21 26 0:20 / /proc rw,relatime - proc proc ",      /* empty superblock options */
        "21 26 0:20 / /proc rw,relatime -  proc rw",        /* empty type */
        "21 26 0:20 / /proc - proc proc rw",                /* no options */
        "21  26 0:20 / /proc rw - proc proc rw",            /* an empty field */
        " 21 26 0:20 / /proc rw - proc proc rw",            /* leading space */
        "x1 26 0:20 / /proc rw - proc proc rw",             /* id not a number */
        "21 -1 0:20 / /proc rw - proc proc rw",             /* parent not a number */
        "99999999999 26 0:20 / /proc rw - proc proc rw",    /* id overflows */
        "21 26 0.20 / /proc rw - proc proc rw",             /* no colon in the device */
        "21 26 0: / /proc rw - proc proc rw",               /* no minor */
        "21 26 :20 / /proc rw - proc proc rw",              /* no major */
        "21 26 0:20 / proc rw - proc proc rw",              /* relative mount point */
        "21 26 0:20 / /srv//proc rw - proc proc rw",        /* not normal */
        "21 26 0:20 / /srv/proc/ rw - proc proc rw",        /* trailing slash */
        "21 26 0:20 / /proc/../srv/proc rw - proc proc rw", /* dot-dot */
        "21 26 0:20 / /srv/./proc rw - proc proc rw",       /* dot */
        "21 26 0:20 / /srv/proc/.. rw - proc proc rw",      /* final dot-dot */
        "21 26 0:20 / /srv/a\\04 rw - proc proc rw",        /* short escape */
        "21 26 0:20 / /srv/a\\04x rw - proc proc rw",       /* not octal */
        "21 26 0:20 / /srv/a\\400 rw - proc proc rw",       /* more than a byte */
        "21 26 0:20 / /srv/a\\000b rw - proc proc rw",      /* NUL */
        "21 26 0:20 / /srv/a\\ rw - proc proc rw",          /* lone backslash */
        "21 26 0:20 / /srv/a\\x20 rw - proc proc rw",       /* not the kernel's escape */
        "21 26 0:20 / /srv/a rw - pr\\oc proc rw",          /* bad escape in the type */
        "21 26 0:20 / /srv/a rw - proc proc rw\n22 26 0:20 / /b rw - proc proc rw", /* two */
    };
    static const char nul[] = "21 26 0:20 / /srv/a\0b rw - proc proc rw";
    struct fs_mountinfo mi;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int r = parse(bad[i], &mi);

        if (r != -EINVAL)
            fail_msg("line %zu '%s' gave %d, not -EINVAL", i, bad[i], r);
        assert_string_equal(mi.mount_point, "");
    }
    /* a NUL inside the line, past what strlen sees */
    assert_int_equal(fs_mountinfo_parse(nul, sizeof(nul) - 1, &mi), -EINVAL);
}

/* name: "/" and n - 1 more bytes. */
static void long_name(char *name, size_t n)
{
    memset(name, 'a', n);
    name[0] = '/';
    name[n] = '\0';
}

static void a_mount_point_too_long_to_name_still_gives_its_type(void **state)
{
    static char line[PATH_MAX + 200], name[PATH_MAX + 8];
    struct fs_mountinfo mi;

    (void)state;
    /* one byte more than fits with its NUL */
    long_name(name, PATH_MAX);
    snprintf(line, sizeof(line), "21 26 0:20 / %s rw - proc proc rw", name);
    assert_int_equal(parse(line, &mi), -ENAMETOOLONG);
    assert_string_equal(mi.mount_point, "");
    assert_string_equal(mi.fstype, "proc");
    /* one byte shorter fits exactly */
    long_name(name, PATH_MAX - 1);
    snprintf(line, sizeof(line), "21 26 0:20 / %s rw - proc proc rw", name);
    assert_int_equal(parse(line, &mi), 0);
    assert_int_equal(strlen(mi.mount_point), PATH_MAX - 1);
    /* an escape counts once decoded: "\040" is one byte */
    long_name(name, PATH_MAX + 2);
    memcpy(name + 100, "\\040", 4);
    snprintf(line, sizeof(line), "21 26 0:20 / %s rw - proc proc rw", name);
    assert_int_equal(parse(line, &mi), 0);
    assert_int_equal(strlen(mi.mount_point), PATH_MAX - 1);
    assert_int_equal(mi.mount_point[100], ' ');
    long_name(name, PATH_MAX + 3);
    memcpy(name + 100, "\\040", 4);
    snprintf(line, sizeof(line), "21 26 0:20 / %s rw - proc proc rw", name);
    assert_int_equal(parse(line, &mi), -ENAMETOOLONG);
    /* malformed beats too long */
    long_name(name, PATH_MAX);
    memcpy(name + 100, "\\9", 2);
    snprintf(line, sizeof(line), "21 26 0:20 / %s rw - proc proc rw", name);
    assert_int_equal(parse(line, &mi), -EINVAL);
    /* a type too long to hold cannot be "proc" */
    long_name(name, FS_FSTYPE_MAX + 1);
    snprintf(line, sizeof(line), "21 26 0:20 / /srv rw - %s proc rw", name + 1);
    assert_int_equal(parse(line, &mi), -ENAMETOOLONG);
    assert_string_equal(mi.fstype, "");
    assert_string_equal(mi.mount_point, "");
}

/* ---- the list ------------------------------------------------------------ */

static const char table[] =
    "21 26 0:20 / /proc rw,relatime - proc proc rw\n"
    "22 26 0:21 / /sys rw,relatime - sysfs sysfs rw\n"
    "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
    "50 21 0:44 / /proc/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw\n"
    "51 21 0:45 / /proc/sys rw - proc proc rw\n"
    "60 26 0:46 / /srv/chroot/proc rw shared:7 - proc proc rw\n"
    "61 26 0:47 / /procfoo rw - proc none rw\n"
    "62 60 0:46 / /srv/chroot/proc rw - proc proc rw\n"
    "63 26 0:48 / /srv/my\\040box/proc rw - proc  rw\n"
    "64 26 0:49 / /srv/tmp rw - tmpfs proc rw\n"
    "65 26 0:50 /sys /srv/sysbind rw master:3 - proc proc rw";

static void every_procfs_but_procs_own_once_in_order(void **state)
{
    struct pol_strv l = { 0 };
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(fs_foreign_procfs_in(table, strlen(table), &l, &err), 0);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.v[0], "/srv/chroot/proc");
    assert_string_equal(l.v[1], "/procfoo"); /* beside /proc, not beneath it */
    assert_string_equal(l.v[2], "/srv/my box/proc");
    assert_string_equal(l.v[3], "/srv/sysbind"); /* a bind of a procfs subtree */
    assert_null(l.v[4]);
    pol_strv_free(&l);
}

static void a_malformed_line_is_an_error_naming_it(void **state)
{
    static const char text[] = "21 26 0:20 / /proc rw - proc proc rw\n"
                               "60 26 0:46 / /srv/a rw - proc proc rw\n"
                               "61 26 0:47 / /srv/b rw proc proc rw\n"
                               "62 26 0:48 / /srv/c rw - proc proc rw\n";
    struct pol_strv l = { 0 };
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(fs_foreign_procfs_in(text, strlen(text), &l, &err), -1);
    assert_int_equal(err.code, EINVAL);
    assert_non_null(strstr(err.msg, "line 3"));
    pol_strv_free(&l);
    /* a blank line is malformed too: the kernel never prints one */
    memset(&err, 0, sizeof(err));
    assert_int_equal(fs_foreign_procfs_in("21 26 0:20 / /srv rw - proc p rw\n\n", 34, &l, &err),
                     -1);
    assert_non_null(strstr(err.msg, "line 2"));
    pol_strv_free(&l);
}

static void only_a_procfs_too_long_to_name_is_an_error(void **state)
{
    static char text[2 * PATH_MAX + 400], name[PATH_MAX + 1];
    struct pol_strv l = { 0 };
    struct nf_err err = { 0 };

    (void)state;
    memset(name, 'a', sizeof(name) - 1);
    name[0] = '/';
    name[PATH_MAX] = '\0';
    snprintf(text, sizeof(text),
             "70 26 0:60 / %s rw - tmpfs tmpfs rw\n"
             "71 26 0:61 / /srv/p rw - proc proc rw\n",
             name);
    assert_int_equal(fs_foreign_procfs_in(text, strlen(text), &l, &err), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.v[0], "/srv/p");
    pol_strv_free(&l);
    snprintf(text, sizeof(text), "71 26 0:61 / %s rw - proc proc rw\n", name);
    assert_int_equal(fs_foreign_procfs_in(text, strlen(text), &l, &err), -1);
    assert_int_equal(err.code, ENAMETOOLONG);
    assert_non_null(strstr(err.msg, "line 1"));
    pol_strv_free(&l);
}

static void the_list_appends_to_what_is_there(void **state)
{
    struct pol_strv l = { 0 };
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(pol_strv_add(&l, "/srv/chroot/proc", &err), 0);
    assert_int_equal(fs_foreign_procfs_in(table, strlen(table), &l, &err), 0);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.v[0], "/srv/chroot/proc");
    assert_string_equal(l.v[1], "/procfoo");
    pol_strv_free(&l);
}

/* ---- the kernel's own table ---------------------------------------------- */

/* In a child with a mount namespace of its own: procfs on D/p, twice (one
 * hides the other), and on "D/with space/p". Bit i of the exit status: check
 * i failed; 77 when the namespace or the mounts cannot be made. */
static int kernel_table_in_child(const char *d)
{
    char p[PATH_MAX], q[PATH_MAX], sp[PATH_MAX];
    struct pol_strv l = { 0 };
    struct nf_err err = { 0 };
    ssize_t ip = -1, iq = -1;
    int bad = 0;

    snprintf(p, sizeof(p), "%s/p", d);
    snprintf(sp, sizeof(sp), "%s/with space", d);
    snprintf(q, sizeof(q), "%s/with space/p", d);
    if (mkdir(p, 0755) < 0 || mkdir(sp, 0755) < 0 || mkdir(q, 0755) < 0)
        return 77;
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("proc", p, "proc", 0, NULL) < 0 || mount("proc", p, "proc", 0, NULL) < 0 ||
        mount("proc", q, "proc", 0, NULL) < 0)
        return 77;
    if (fs_foreign_procfs(&l, &err) < 0)
        return 0x40;
    for (size_t i = 0; i < l.n; i++) {
        if (pol_path_within(l.v[i], "/proc"))
            bad |= 1;
        for (size_t j = 0; j < i; j++)
            if (strcmp(l.v[i], l.v[j]) == 0)
                bad |= 2;
        if (strcmp(l.v[i], p) == 0)
            ip = (ssize_t)i;
        if (strcmp(l.v[i], q) == 0)
            iq = (ssize_t)i;
    }
    if (ip < 0)
        bad |= 4;
    if (iq < 0)
        bad |= 8; /* the escaped space decoded */
    if (ip > iq)
        bad |= 0x10; /* the table's order */
    pol_strv_free(&l);
    return bad;
}

static void the_kernels_table_lists_a_second_procfs(void **state)
{
    char d[256];
    int status;
    pid_t pid;

    (void)state;
    assert_int_equal(tmptree_make("mounts", d, sizeof(d)), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(kernel_table_in_child(d));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    tmptree_remove(d);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        fail_msg("cannot make a mount namespace with a procfs in it (run the unit tests as root)");
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_plain_line_gives_ids_mount_point_and_type),
        cmocka_unit_test(the_kernels_escapes_are_decoded),
        cmocka_unit_test(optional_fields_come_before_the_separator),
        cmocka_unit_test(an_empty_source_is_a_field),
        cmocka_unit_test(malformed_lines_are_refused),
        cmocka_unit_test(a_mount_point_too_long_to_name_still_gives_its_type),
        cmocka_unit_test(every_procfs_but_procs_own_once_in_order),
        cmocka_unit_test(a_malformed_line_is_an_error_naming_it),
        cmocka_unit_test(only_a_procfs_too_long_to_name_is_an_error),
        cmocka_unit_test(the_list_appends_to_what_is_there),
        cmocka_unit_test(the_kernels_table_lists_a_second_procfs),
    };

    return cmocka_run_group_tests_name("mounts", tests, NULL, NULL);
}
