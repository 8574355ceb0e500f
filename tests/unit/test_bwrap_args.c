/* src/bwrap_args.c: bubblewrap 0.11.1's command line. Every option lands in
 * the spec in argv order; every refusal carries bwrap's own text, in the
 * order bwrap checks; --args files are read through the callback and
 * parsed in place; bw_validate makes main's combination checks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "src/bwrap_args.h"

/* ---- fake fds ------------------------------------------------------------ */

struct fake_fd {
    int fd;
    const char *data;
    size_t len;
    int error;   /* read fails with this errno */
    bool closed; /* bwrap closes what it read: a second read is EBADF */
};

struct fakes {
    struct fake_fd fd[8];
    size_t n;
    int reads;
};

static int fake_read(void *ctx, int fd, char **data, size_t *len)
{
    struct fakes *f = ctx;

    f->reads++;
    for (size_t i = 0; i < f->n; i++) {
        struct fake_fd *x = &f->fd[i];

        if (x->fd != fd)
            continue;
        if (x->closed)
            return -EBADF;
        x->closed = true;
        if (x->error)
            return -x->error;
        *data = malloc(x->len ? x->len : 1);
        assert_non_null(*data);
        memcpy(*data, x->data, x->len);
        *len = x->len;
        return 0;
    }
    return -EBADF;
}

static struct fakes fakes;

static void fake_add(int fd, const char *data, size_t len)
{
    fakes.fd[fakes.n++] = (struct fake_fd){ .fd = fd, .data = data, .len = len };
}

#define FAKE(fd, lit) fake_add((fd), (lit), sizeof(lit) - 1)

static int reset(void **state)
{
    (void)state;
    memset(&fakes, 0, sizeof(fakes));
    return 0;
}

static struct bw_parse_opts popts = { .read_fd = fake_read, .read_ctx = &fakes };

/* ---- parse helpers ------------------------------------------------------- */

static int parse_v(struct bw_spec *s, struct nf_err *err, int argc, char **argv)
{
    memset(err, 0, sizeof(*err));
    return bw_parse(argc, argv, &popts, s, err);
}

#define ARGV(...) ((char *[]){ __VA_ARGS__ })
#define ARGC(...) ((int)(sizeof(ARGV(__VA_ARGS__)) / sizeof(char *)))

/* Parses and must succeed; spec s to be freed by the caller. */
#define PARSE_OK(s, ...)                                                                           \
    do {                                                                                           \
        struct nf_err e_;                                                                          \
        if (parse_v(&(s), &e_, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__)) != 0)                         \
            fail_msg("unexpected error: %s", e_.msg);                                              \
    } while (0)

/* Parses and must fail with exactly msg. */
#define PARSE_ERR(want_, ...)                                                                      \
    do {                                                                                           \
        struct bw_spec s_;                                                                         \
        struct nf_err e_;                                                                          \
        if (parse_v(&s_, &e_, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__)) == 0)                          \
            fail_msg("accepted, want \"%s\"", (want_));                                            \
        assert_string_equal(e_.msg, (want_));                                                      \
        bw_spec_free(&s_);                                                                         \
    } while (0)

static void assert_command(const struct bw_spec *s, size_t n, ...)
{
    va_list ap;

    assert_int_equal(s->n_command, n);
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(s->command[i], va_arg(ap, const char *));
    va_end(ap);
    assert_null(s->command[n]);
}

/* ---- the command and "--" ------------------------------------------------ */

static void no_arguments_is_a_usage_error(void **state)
{
    struct bw_spec s;
    struct nf_err e;

    (void)state;
    assert_int_equal(bw_parse(0, NULL, &popts, &s, &e), 0);
    assert_int_equal(s.action, BW_ACTION_USAGE_ERROR);
    bw_spec_free(&s);
}

static void help_and_version_stop_parsing_where_they_stand(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--help", "--bogus");
    assert_int_equal(s.action, BW_ACTION_HELP);
    bw_spec_free(&s);
    PARSE_OK(s, "--unshare-net", "--version", "--perms", "bad");
    assert_int_equal(s.action, BW_ACTION_VERSION);
    bw_spec_free(&s);
    PARSE_ERR("Unknown option --bogus", "--bogus", "--help");
    PARSE_ERR("--argv0 used multiple times", "--argv0", "a", "--argv0", "b", "--version");
}

static void the_first_word_not_starting_with_a_dash_is_the_command(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--unshare-net", "ls", "--bind", "a", "b", "-l");
    assert_int_equal(s.action, BW_ACTION_RUN);
    assert_true(s.unshare_net);
    assert_int_equal(s.n_ops, 0);
    assert_command(&s, 5, "ls", "--bind", "a", "b", "-l");
    bw_spec_free(&s);
}

static void double_dash_makes_an_option_the_command(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--", "--dev-bind", "/", "/");
    assert_int_equal(s.n_ops, 0);
    assert_command(&s, 3, "--dev-bind", "/", "/");
    bw_spec_free(&s);
    PARSE_OK(s, "--ro-bind", "/", "/", "--", "--x--", "--");
    assert_int_equal(s.n_ops, 1);
    assert_command(&s, 2, "--x--", "--");
    bw_spec_free(&s);
    PARSE_ERR("Unknown option --x--", "--x--");
    PARSE_ERR("Unknown option -", "-", "x");
    PARSE_ERR("Unknown option -v", "-v", "true");
}

static void an_empty_word_is_a_command_and_dash_dash_alone_leaves_none(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "");
    assert_command(&s, 1, "");
    bw_spec_free(&s);
    PARSE_OK(s, "--unshare-ipc", "--");
    assert_command(&s, 0);
    bw_spec_free(&s);
}

/* ---- filesystem operations ----------------------------------------------- */

static void every_operation_is_kept_in_argv_order(void **state)
{
    struct bw_spec s;
    static const struct {
        enum bw_op_kind kind;
        const char *src, *dest;
        int fd;
        unsigned perms;
    } want[] = {
        { BW_OP_BIND, "/a", "/b", -1, 0 },
        { BW_OP_BIND_TRY, "/c", "/d", -1, 0 },
        { BW_OP_DEV_BIND, "/e", "/f", -1, 0 },
        { BW_OP_DEV_BIND_TRY, "/g", "/h", -1, 0 },
        { BW_OP_RO_BIND, "/i", "/j", -1, 0 },
        { BW_OP_RO_BIND_TRY, "/k", "/l", -1, 0 },
        { BW_OP_BIND_FD, NULL, "/m", 7, 0 },
        { BW_OP_RO_BIND_FD, NULL, "/n", 8, 0 },
        { BW_OP_REMOUNT_RO, NULL, "/o", -1, 0 },
        { BW_OP_PROC, NULL, "/proc", -1, 0 },
        { BW_OP_DEV, NULL, "/dev", -1, 0 },
        { BW_OP_TMPFS, NULL, "/tmp", -1, 0755 },
        { BW_OP_MQUEUE, NULL, "/dev/mqueue", -1, 0 },
        { BW_OP_DIR, NULL, "/p", -1, 0755 },
        { BW_OP_FILE, NULL, "/q", 9, 0666 },
        { BW_OP_BIND_DATA, NULL, "/r", 10, 0600 },
        { BW_OP_RO_BIND_DATA, NULL, "/s", 11, 0600 },
        { BW_OP_SYMLINK, "target", "/t", -1, 0 },
        { BW_OP_CHMOD, NULL, "/u", -1, 0700 },
        { BW_OP_SET_HOSTNAME, NULL, "box", -1, 0 },
        { BW_OP_BIND, "/v", "/w", -1, 0 },
    };

    (void)state;
    PARSE_OK(s, "--bind", "/a", "/b", "--bind-try", "/c", "/d", "--dev-bind", "/e", "/f",
             "--dev-bind-try", "/g", "/h", "--ro-bind", "/i", "/j", "--ro-bind-try", "/k", "/l",
             "--bind-fd", "7", "/m", "--ro-bind-fd", "8", "/n", "--remount-ro", "/o", "--proc",
             "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--mqueue", "/dev/mqueue", "--dir", "/p",
             "--file", "9", "/q", "--bind-data", "10", "/r", "--ro-bind-data", "11", "/s",
             "--symlink", "target", "/t", "--chmod", "0700", "/u", "--hostname", "box", "--bind",
             "/v", "/w", "sh");
    assert_int_equal(s.n_ops, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < s.n_ops; i++) {
        const struct bw_op *op = &s.ops[i];

        assert_int_equal(op->kind, want[i].kind);
        if (want[i].src)
            assert_string_equal(op->src, want[i].src);
        else
            assert_null(op->src);
        assert_string_equal(op->dest, want[i].dest);
        assert_int_equal(op->fd, want[i].fd);
        assert_int_equal(op->perms, want[i].perms);
        assert_false(op->perms_given);
        assert_int_equal(op->size, 0);
        assert_int_equal(op->n_srcs, 0);
    }
    assert_string_equal(s.hostname, "box");
    assert_command(&s, 1, "sh");
    bw_spec_free(&s);
}

static void each_option_names_its_missing_arguments(void **state)
{
    static const struct {
        const char *opt, *msg;
    } cases[] = {
        { "--args", "--args takes an argument" },
        { "--argv0", "--argv0 takes one argument" },
        { "--chdir", "--chdir takes one argument" },
        { "--remount-ro", "--remount-ro takes one argument" },
        { "--bind", "--bind takes two arguments" },
        { "--bind-try", "--bind-try takes two arguments" },
        { "--ro-bind", "--ro-bind takes two arguments" },
        { "--ro-bind-try", "--ro-bind-try takes two arguments" },
        { "--dev-bind", "--dev-bind takes two arguments" },
        { "--dev-bind-try", "--dev-bind-try takes two arguments" },
        { "--bind-fd", "--bind-fd takes two arguments" },
        { "--ro-bind-fd", "--bind-fd takes two arguments" },
        { "--overlay", "--overlay takes three arguments" },
        { "--tmp-overlay", "--tmp-overlay takes an argument" },
        { "--ro-overlay", "--ro-overlay takes an argument" },
        { "--proc", "--proc takes an argument" },
        { "--exec-label", "--exec-label takes an argument" },
        { "--file-label", "--file-label takes an argument" },
        { "--dev", "--dev takes an argument" },
        { "--tmpfs", "--tmpfs takes an argument" },
        { "--mqueue", "--mqueue takes an argument" },
        { "--dir", "--dir takes an argument" },
        { "--file", "--file takes two arguments" },
        { "--bind-data", "--bind-data takes two arguments" },
        { "--ro-bind-data", "--ro-bind-data takes two arguments" },
        { "--symlink", "--symlink takes two arguments" },
        { "--lock-file", "--lock-file takes an argument" },
        { "--sync-fd", "--sync-fd takes an argument" },
        { "--block-fd", "--block-fd takes an argument" },
        { "--userns-block-fd", "--userns-block-fd takes an argument" },
        { "--info-fd", "--info-fd takes an argument" },
        { "--json-status-fd", "--json-status-fd takes an argument" },
        { "--seccomp", "--seccomp takes an argument" },
        { "--add-seccomp-fd", "--add-seccomp-fd takes an argument" },
        { "--userns", "--userns takes an argument" },
        { "--userns2", "--userns2 takes an argument" },
        { "--pidns", "--pidns takes an argument" },
        { "--setenv", "--setenv takes two arguments" },
        { "--unsetenv", "--unsetenv takes an argument" },
        { "--uid", "--uid takes an argument" },
        { "--gid", "--gid takes an argument" },
        { "--hostname", "--hostname takes an argument" },
        { "--cap-add", "--cap-add takes an argument" },
        { "--cap-drop", "--cap-drop takes an argument" },
        { "--perms", "--perms takes an argument" },
        { "--size", "--size takes an argument" },
        { "--chmod", "--chmod takes two arguments" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *alone[] = { (char *)cases[i].opt };
        char *short_one[] = { (char *)cases[i].opt, "x", "y" };
        struct bw_spec s;
        struct nf_err e;

        assert_int_equal(parse_v(&s, &e, 1, alone), -1);
        assert_string_equal(e.msg, cases[i].msg);
        bw_spec_free(&s);
        /* One argument short, for the options that take two or three. */
        if (strstr(cases[i].msg, "two") || strstr(cases[i].msg, "three")) {
            int n = strstr(cases[i].msg, "two") ? 2 : 3;

            assert_int_equal(parse_v(&s, &e, n, short_one), -1);
            assert_string_equal(e.msg, cases[i].msg);
            bw_spec_free(&s);
        }
    }
}

static void fds_are_decimal_and_never_negative(void **state)
{
    static const char *const opts_taking_fd[] = {
        "--sync-fd",        "--block-fd", "--userns-block-fd", "--info-fd",
        "--json-status-fd", "--seccomp",  "--userns",          "--userns2",
        "--pidns",          "--args",     "--add-seccomp-fd",
    };
    static const char *const bad[] = {
        "", "3x", "-1", " -1", "0x3", "3 ", "2147483648", "99999999999999999999", "-",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(opts_taking_fd) / sizeof(opts_taking_fd[0]); i++)
        for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
            char *v[] = { (char *)opts_taking_fd[i], (char *)bad[j], "true" };
            char want[128];
            struct bw_spec s;
            struct nf_err e;

            assert_int_equal(parse_v(&s, &e, 3, v), -1);
            snprintf(want, sizeof(want), "Invalid fd: %s", bad[j]);
            assert_string_equal(e.msg, want);
            bw_spec_free(&s);
        }
    PARSE_ERR("Invalid fd: x", "--bind-fd", "x", "/d");
    PARSE_ERR("Invalid fd: -2", "--ro-bind-fd", "-2", "/d");
    PARSE_ERR("Invalid fd: 1.5", "--file", "1.5", "/d");
    PARSE_ERR("Invalid fd: ", "--bind-data", "", "/d");
    PARSE_ERR("Invalid fd: 0o7", "--ro-bind-data", "0o7", "/d");
}

static void fds_take_what_strtol_takes(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--sync-fd", " 3", "--block-fd", "+4", "--info-fd", "-0", "--json-status-fd",
             "2147483647", "--userns", "05", "--userns2", "6", "--pidns", "7", "--userns-block-fd",
             "8", "--seccomp", "9", "true");
    assert_int_equal(s.sync_fd, 3);
    assert_int_equal(s.block_fd, 4);
    assert_int_equal(s.info_fd, 0);
    assert_int_equal(s.json_status_fd, 2147483647);
    assert_int_equal(s.userns_fd, 5);
    assert_int_equal(s.userns2_fd, 6);
    assert_int_equal(s.pidns_fd, 7);
    assert_int_equal(s.userns_block_fd, 8);
    assert_int_equal(s.seccomp_fd, 9);
    assert_int_equal(s.n_warnings, 0);
    bw_spec_free(&s);
    PARSE_OK(s, "true");
    assert_int_equal(s.sync_fd, -1);
    assert_int_equal(s.block_fd, -1);
    assert_int_equal(s.info_fd, -1);
    assert_int_equal(s.json_status_fd, -1);
    assert_int_equal(s.userns_fd, -1);
    assert_int_equal(s.userns2_fd, -1);
    assert_int_equal(s.pidns_fd, -1);
    assert_int_equal(s.userns_block_fd, -1);
    assert_int_equal(s.seccomp_fd, -1);
    bw_spec_free(&s);
}

/* ---- --perms and --size -------------------------------------------------- */

static void perms_apply_to_the_next_file_creating_option(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--perms", "0700", "--tmpfs", "/a", "--perms", "1777", "--dir", "/b", "--perms",
             "0640", "--file", "3", "/c", "--perms", "0", "--bind-data", "4", "/d", "--perms",
             "07777", "--ro-bind-data", "5", "/e", "--dir", "/f", "true");
    assert_int_equal(s.n_ops, 6);
    assert_int_equal(s.ops[0].perms, 0700);
    assert_int_equal(s.ops[1].perms, 01777);
    assert_int_equal(s.ops[2].perms, 0640);
    assert_int_equal(s.ops[3].perms, 0);
    assert_int_equal(s.ops[4].perms, 07777);
    for (size_t i = 0; i < 5; i++)
        assert_true(s.ops[i].perms_given);
    assert_int_equal(s.ops[5].perms, 0755);
    assert_false(s.ops[5].perms_given);
    bw_spec_free(&s);
}

static void perms_take_what_strtoul_base_8_takes(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--perms", "-0", "--dir", "/a", "--perms", " 755", "--dir", "/b", "--perms", "+7",
             "--dir", "/c", "true");
    assert_int_equal(s.ops[0].perms, 0);
    assert_int_equal(s.ops[1].perms, 0755);
    assert_int_equal(s.ops[2].perms, 07);
    bw_spec_free(&s);
}

static void bad_perms_are_refused(void **state)
{
    static const char *const bad[] = {
        "",
        "123bogus",
        "8",
        "010000",
        "-1",
        " -1",
        "18446744073709551616",
        "9223372036854775809",
        "1777777777777777777777",
        "0x7",
        " ",
    };
    char msg[] = "--perms takes an octal argument <= 07777";

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        PARSE_ERR(msg, "--perms", (char *)bad[i], "--dir", "/a");
        PARSE_ERR("--chmod takes an octal argument <= 07777", "--chmod", (char *)bad[i], "/a");
    }
}

static void perms_given_twice_or_unconsumed_are_refused(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_ERR("--perms given twice for the same action", "--perms", "0700", "--perms", "0700",
              "--dir", "/a");
    PARSE_ERR("--perms given twice for the same action", "--perms", "0700", "--perms", "bad");
    PARSE_ERR("--perms must be followed by an option that creates a file", "--perms", "0700",
              "--bind", "/a", "/b");
    PARSE_ERR("--perms must be followed by an option that creates a file", "--perms", "0700",
              "--chmod", "0700", "/a");
    PARSE_ERR("--perms must be followed by an option that creates a file", "--perms", "0700",
              "--unshare-net", "true");
    PARSE_ERR("--perms must be followed by an option that creates a file", "--perms", "0700",
              "--size", "1", "--remount-ro", "/a");
    /* The word that ends the options skips the check, as in bwrap. */
    PARSE_OK(s, "--perms", "0700", "true");
    assert_int_equal(s.n_ops, 0);
    bw_spec_free(&s);
    PARSE_OK(s, "--perms", "0700", "--");
    bw_spec_free(&s);
}

static void size_applies_to_the_next_tmpfs(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--size", "1048576", "--perms", "01777", "--tmpfs", "/tmp", "--tmpfs", "/run",
             "--perms", "0700", "--size", "0x10", "--tmpfs", "/a", "--size", "010", "--tmpfs", "/b",
             "--size", "9223372036854775807", "--tmpfs", "/c", "true");
    assert_int_equal(s.n_ops, 5);
    assert_int_equal(s.ops[0].size, 1048576);
    assert_int_equal(s.ops[0].perms, 01777);
    assert_int_equal(s.ops[1].size, 0);
    assert_int_equal(s.ops[1].perms, 0755);
    assert_int_equal(s.ops[2].size, 16);
    assert_int_equal(s.ops[2].perms, 0700);
    assert_int_equal(s.ops[3].size, 8);
    assert_int_equal(s.ops[4].size, (size_t)9223372036854775807ULL);
    bw_spec_free(&s);
}

static void bad_sizes_are_refused(void **state)
{
    static const char *const bad[] = {
        "0", "123bogus", "", "-1", " -1", " 1", "+1", "18446744073709551616", "0x", "1k", "00",
    };
    char msg[] = "--size takes a non-zero number of bytes";

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        PARSE_ERR(msg, "--size", (char *)bad[i], "--tmpfs", "/a");
    PARSE_ERR("--size (for tmpfs) is limited to 9223372036854775807", "--size",
              "9223372036854775809", "--tmpfs", "/a");
    PARSE_ERR("--size (for tmpfs) is limited to 9223372036854775807", "--size",
              "18446744073709551615", "--tmpfs", "/a");
    PARSE_ERR("--size given twice for the same action", "--size", "1", "--size", "2", "--tmpfs",
              "/a");
    PARSE_ERR("--size must be followed by --tmpfs", "--size", "1", "--dir", "/a");
    PARSE_ERR("--size must be followed by --tmpfs", "--size", "1", "--perms", "0700", "--dir",
              "/a");
    PARSE_ERR("--perms must be followed by an option that creates a file", "--perms", "0700",
              "--size", "1", "--bind", "/a", "/b");
}

/* ---- overlays ------------------------------------------------------------ */

static void overlay_sources_go_to_the_next_overlay_in_order(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--overlay-src", "/l1", "--overlay-src", "/l2", "--overlay", "/rw", "/work", "/o",
             "--overlay-src", "/l3", "--tmp-overlay", "/t", "--overlay-src", "/l4", "--overlay-src",
             "/l5", "--ro-overlay", "/r", "true");
    assert_int_equal(s.n_ops, 3);
    assert_int_equal(s.ops[0].kind, BW_OP_OVERLAY);
    assert_string_equal(s.ops[0].src, "/rw");
    assert_string_equal(s.ops[0].workdir, "/work");
    assert_string_equal(s.ops[0].dest, "/o");
    assert_int_equal(s.ops[0].n_srcs, 2);
    assert_string_equal(s.ops[0].srcs[0], "/l1");
    assert_string_equal(s.ops[0].srcs[1], "/l2");
    assert_int_equal(s.ops[1].kind, BW_OP_TMP_OVERLAY);
    assert_string_equal(s.ops[1].dest, "/t");
    assert_int_equal(s.ops[1].n_srcs, 1);
    assert_string_equal(s.ops[1].srcs[0], "/l3");
    assert_int_equal(s.ops[2].kind, BW_OP_RO_OVERLAY);
    assert_int_equal(s.ops[2].n_srcs, 2);
    assert_string_equal(s.ops[2].srcs[0], "/l4");
    assert_string_equal(s.ops[2].srcs[1], "/l5");
    bw_spec_free(&s);
}

static void overlay_sources_must_be_followed_by_an_overlay(void **state)
{
    const char *m = "--overlay-src must be followed by another --overlay-src or one of "
                    "--overlay, --tmp-overlay, or --ro-overlay";

    (void)state;
    PARSE_ERR("--overlay requires at least one --overlay-src", "--overlay", "a", "b", "c");
    PARSE_ERR("--tmp-overlay requires at least one --overlay-src", "--tmp-overlay", "a");
    PARSE_ERR("--ro-overlay requires at least two --overlay-src", "--overlay-src", "x",
              "--ro-overlay", "a");
    PARSE_ERR("--overlay takes three arguments", "--overlay", "a", "b");
    PARSE_ERR(m, "--overlay-src", "a", "--bind", "/a", "/b");
    PARSE_ERR(m, "--overlay-src", "a", "--perms", "0700", "--dir", "/a");
    PARSE_ERR(m, "--overlay-src", "a", "true");
    PARSE_ERR(m, "--overlay-src", "a", "--", "true");
    PARSE_ERR(m, "--overlay-src");
    PARSE_ERR(m, "--overlay-src", "a", "--overlay-src");
    /* A pending --perms is checked first, as bwrap checks it first. */
    PARSE_ERR("--perms must be followed by an option that creates a file", "--perms", "0700",
              "--overlay-src");
    PARSE_ERR("--perms must be followed by an option that creates a file", "--perms", "0700",
              "--overlay-src", "a", "--tmp-overlay", "/t");
}

static void setuid_mode_refuses_overlays_and_size_before_counting(void **state)
{
    struct bw_parse_opts su = popts;
    static const char *const refused[] = { "--overlay-src", "--overlay", "--tmp-overlay",
                                           "--ro-overlay", "--size" };

    (void)state;
    su.setuid_mode = true;
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char *v[] = { (char *)refused[i] };
        char want[128];
        struct bw_spec s;
        struct nf_err e;

        assert_int_equal(bw_parse(1, v, &su, &s, &e), -1);
        snprintf(want, sizeof(want), "The %s option is not permitted in setuid mode", refused[i]);
        assert_string_equal(e.msg, want);
        bw_spec_free(&s);
    }
}

/* ---- last-one-wins options and warnings ---------------------------------- */

static void repeated_options_warn_in_order_and_the_last_wins(void **state)
{
    struct bw_spec s;
    static const char *const want[] = { "--chdir",           "--sync-fd", "--block-fd",
                                        "--userns-block-fd", "--info-fd", "--json-status-fd",
                                        "--seccomp",         "--userns",  "--userns2",
                                        "--pidns",           "--uid",     "--gid",
                                        "--hostname" };

    (void)state;
    PARSE_OK(s, "--chdir", "/a", "--chdir", "/b", "--sync-fd", "1", "--sync-fd", "2", "--block-fd",
             "1", "--block-fd", "3", "--userns-block-fd", "1", "--userns-block-fd", "4",
             "--info-fd", "1", "--info-fd", "5", "--json-status-fd", "1", "--json-status-fd", "6",
             "--seccomp", "1", "--seccomp", "7", "--userns", "1", "--userns", "8", "--userns2", "1",
             "--userns2", "9", "--pidns", "1", "--pidns", "10", "--uid", "1", "--uid", "11",
             "--gid", "1", "--gid", "12", "--hostname", "a", "--level-prefix", "--hostname", "b",
             "true");
    assert_int_equal(s.n_warnings, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < s.n_warnings; i++) {
        char msg[128];

        snprintf(msg, sizeof(msg), "Only the last %s option will take effect", want[i]);
        assert_string_equal(s.warnings[i].msg, msg);
        /* --level-prefix came just before the last --hostname. */
        assert_int_equal(s.warnings[i].level_prefix, i + 1 == s.n_warnings);
    }
    assert_string_equal(s.chdir, "/b");
    assert_int_equal(s.sync_fd, 2);
    assert_int_equal(s.block_fd, 3);
    assert_int_equal(s.userns_block_fd, 4);
    assert_int_equal(s.info_fd, 5);
    assert_int_equal(s.json_status_fd, 6);
    assert_int_equal(s.seccomp_fd, 7);
    assert_int_equal(s.userns_fd, 8);
    assert_int_equal(s.userns2_fd, 9);
    assert_int_equal(s.pidns_fd, 10);
    assert_true(s.has_uid && s.has_gid);
    assert_int_equal(s.uid, 11);
    assert_int_equal(s.gid, 12);
    assert_string_equal(s.hostname, "b");
    assert_true(s.level_prefix);
    /* Each --hostname is also an op, run in order. */
    assert_int_equal(s.n_ops, 2);
    assert_string_equal(s.ops[0].dest, "a");
    assert_string_equal(s.ops[1].dest, "b");
    bw_spec_free(&s);
}

static void a_warning_stands_even_when_the_value_after_it_fails(void **state)
{
    struct bw_spec s;
    struct nf_err e;

    (void)state;
    assert_int_equal(parse_v(&s, &e, 4, ARGV("--sync-fd", "3", "--sync-fd", "x")), -1);
    assert_string_equal(e.msg, "Invalid fd: x");
    assert_int_equal(s.n_warnings, 1);
    assert_string_equal(s.warnings[0].msg, "Only the last --sync-fd option will take effect");
    bw_spec_free(&s);
}

static void level_prefix_is_known_when_an_error_comes(void **state)
{
    struct bw_spec s;
    struct nf_err e;

    (void)state;
    assert_int_equal(parse_v(&s, &e, 2, ARGV("--bogus", "--level-prefix")), -1);
    assert_false(s.level_prefix);
    bw_spec_free(&s);
    assert_int_equal(parse_v(&s, &e, 2, ARGV("--level-prefix", "--bogus")), -1);
    assert_true(s.level_prefix);
    bw_spec_free(&s);
}

static void argv0_may_be_given_once(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--argv0", "sh", "/bin/bash");
    assert_string_equal(s.argv0, "sh");
    bw_spec_free(&s);
    PARSE_ERR("--argv0 used multiple times", "--argv0", "a", "--argv0", "b", "true");
}

static void uids_and_gids_are_non_negative_decimal(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--uid", "0", "--gid", "65534", "true");
    assert_int_equal(s.uid, 0);
    assert_int_equal(s.gid, 65534);
    bw_spec_free(&s);
    PARSE_ERR("Invalid uid: -1", "--uid", "-1", "true");
    PARSE_ERR("Invalid uid: ", "--uid", "", "true");
    PARSE_ERR("Invalid uid: 1a", "--uid", "1a", "true");
    PARSE_ERR("Invalid gid: 4294967295", "--gid", "4294967295", "true");
    PARSE_ERR("Invalid gid: root", "--gid", "root", "true");
}

static void labels_fail_without_selinux_after_the_count(void **state)
{
    struct bw_parse_opts se = popts;
    struct bw_spec s;
    struct nf_err e;

    (void)state;
    PARSE_ERR("labeling not supported on this system", "--exec-label", "x", "true");
    PARSE_ERR("labeling not supported on this system", "--file-label", "x", "true");
    PARSE_ERR("--exec-label takes an argument", "--exec-label");
    se.labels_supported = true;
    assert_int_equal(
        bw_parse(5, ARGV("--exec-label", "a", "--file-label", "b", "true"), &se, &s, &e), 0);
    assert_string_equal(s.exec_label, "a");
    assert_string_equal(s.file_label, "b");
    bw_spec_free(&s);
}

/* ---- namespaces, process options ----------------------------------------- */

static void unshare_all_expands_and_share_net_after_it_clears_net(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--unshare-all", "true");
    assert_true(s.unshare_user_try && s.unshare_ipc && s.unshare_pid && s.unshare_net);
    assert_true(s.unshare_uts && s.unshare_cgroup_try);
    assert_false(s.unshare_user || s.unshare_cgroup);
    bw_spec_free(&s);
    PARSE_OK(s, "--unshare-all", "--share-net", "true");
    assert_false(s.unshare_net);
    assert_true(s.unshare_pid);
    bw_spec_free(&s);
    PARSE_OK(s, "--share-net", "--unshare-all", "true");
    assert_true(s.unshare_net);
    bw_spec_free(&s);
    PARSE_OK(s, "--unshare-user", "--unshare-cgroup", "--unshare-net", "--share-net", "true");
    assert_true(s.unshare_user && s.unshare_cgroup);
    assert_false(s.unshare_net || s.unshare_ipc);
    bw_spec_free(&s);
}

static void process_flags_are_recorded(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--new-session", "--die-with-parent", "--as-pid-1", "--level-prefix",
             "--disable-userns", "--assert-userns-disabled", "--unshare-user-try", "--unshare-ipc",
             "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try", "--lock-file", "/a",
             "--lock-file", "/b", "true");
    assert_true(s.new_session && s.die_with_parent && s.as_pid_1 && s.level_prefix);
    assert_true(s.disable_userns && s.assert_userns_disabled);
    assert_true(s.unshare_user_try && s.unshare_ipc && s.unshare_pid && s.unshare_uts);
    assert_true(s.unshare_cgroup_try);
    assert_int_equal(s.n_lock_files, 2);
    assert_string_equal(s.lock_files[0], "/a");
    assert_string_equal(s.lock_files[1], "/b");
    bw_spec_free(&s);
}

static void env_operations_keep_argv_order(void **state)
{
    struct bw_spec s;

    (void)state;
    PARSE_OK(s, "--setenv", "A", "1", "--clearenv", "--unsetenv", "B", "--setenv", "C", "", "true");
    assert_int_equal(s.n_env, 4);
    assert_int_equal(s.env[0].kind, BW_ENV_SET);
    assert_string_equal(s.env[0].name, "A");
    assert_string_equal(s.env[0].value, "1");
    assert_int_equal(s.env[1].kind, BW_ENV_CLEAR);
    assert_int_equal(s.env[2].kind, BW_ENV_UNSET);
    assert_string_equal(s.env[2].name, "B");
    assert_string_equal(s.env[3].value, "");
    bw_spec_free(&s);
    PARSE_ERR("setenv failed", "--setenv", "", "x", "true");
    PARSE_ERR("setenv failed", "--setenv", "A=B", "x", "true");
    PARSE_ERR("unsetenv failed", "--unsetenv", "", "true");
    PARSE_ERR("unsetenv failed", "--unsetenv", "A=", "true");
}

static void caps_are_read_as_libcap_reads_them(void **state)
{
    struct bw_spec s;

    (void)state;
    assert_int_equal(bw_cap_from_name("cap_chown"), 0);
    assert_int_equal(bw_cap_from_name("CAP_SYS_ADMIN"), 21);
    assert_int_equal(bw_cap_from_name("Cap_Net_Raw"), 13);
    assert_int_equal(bw_cap_from_name("cap_checkpoint_restore"), 40);
    assert_int_equal(bw_cap_from_name("cap_chown2"), 0); /* the name ends at the digit */
    assert_int_equal(bw_cap_from_name("cap_bpf-x"), 39); /* and at the dash */
    assert_int_equal(bw_cap_from_name("5"), 5);
    assert_int_equal(bw_cap_from_name("0x29"), 41);
    assert_int_equal(bw_cap_from_name("63"), 63);
    assert_int_equal(bw_cap_from_name("64"), -1);
    assert_int_equal(bw_cap_from_name("chown"), -1);
    assert_int_equal(bw_cap_from_name(" 5"), -1);
    assert_int_equal(bw_cap_from_name("cap_"), -1);
    assert_int_equal(bw_cap_from_name("cap_chownx"), -1);
    assert_int_equal(bw_cap_from_name(""), -1);

    PARSE_OK(s, "--cap-drop", "ALL", "--cap-add", "cap_net_admin", "--cap-add", "all", "--cap-drop",
             "CAP_SYS_ADMIN", "true");
    assert_int_equal(s.n_caps, 4);
    assert_false(s.caps[0].add);
    assert_int_equal(s.caps[0].cap, BW_CAP_ALL);
    assert_true(s.caps[1].add);
    assert_int_equal(s.caps[1].cap, 12);
    assert_int_equal(s.caps[2].cap, BW_CAP_ALL);
    assert_int_equal(s.caps[3].cap, 21);
    assert_true(bw_caps_apply(&s, 0) == ~((uint64_t)1 << 21));
    bw_spec_free(&s);
    PARSE_OK(s, "--cap-drop", "cap_chown", "--cap-add", "cap_kill", "true");
    assert_true(bw_caps_apply(&s, 0x3) == 0x22);
    bw_spec_free(&s);
    PARSE_ERR("unknown cap: chown", "--cap-add", "chown", "true");
    PARSE_ERR("unknown cap: 64", "--cap-drop", "64", "true");
    PARSE_ERR("unknown cap: ALLx", "--cap-drop", "ALLx", "true");
}

/* ---- seccomp ------------------------------------------------------------- */

static void add_seccomp_fd_is_read_while_parsing(void **state)
{
    struct bw_spec s;

    (void)state;
    FAKE(5, "01234567abcdefgh");
    FAKE(6, "");
    PARSE_OK(s, "--add-seccomp-fd", "5", "--add-seccomp-fd", "6", "true");
    assert_int_equal(fakes.reads, 2);
    assert_int_equal(s.n_seccomp_progs, 2);
    assert_int_equal(s.seccomp_progs[0].len, 16);
    assert_memory_equal(s.seccomp_progs[0].data, "01234567abcdefgh", 16);
    assert_int_equal(s.seccomp_progs[1].len, 0);
    assert_int_equal(s.seccomp_fd, -1);
    bw_spec_free(&s);
}

static void seccomp_data_errors_have_bwraps_words(void **state)
{
    (void)state;
    FAKE(5, "0123456");
    PARSE_ERR("Invalid seccomp data, must be multiple of 8", "--add-seccomp-fd", "5", "true");
    PARSE_ERR("Can't read seccomp data: Bad file descriptor", "--add-seccomp-fd", "9", "true");
    fakes.fd[fakes.n++] = (struct fake_fd){ .fd = 7, .error = EIO };
    PARSE_ERR("Can't read seccomp data: Input/output error", "--add-seccomp-fd", "7", "true");
    /* Read and closed by the first: the second read fails. */
    FAKE(8, "01234567");
    PARSE_ERR("Can't read seccomp data: Bad file descriptor", "--add-seccomp-fd", "8",
              "--add-seccomp-fd", "8", "true");
}

static void seccomp_and_add_seccomp_fd_exclude_each_other(void **state)
{
    (void)state;
    FAKE(5, "01234567");
    PARSE_ERR("--seccomp cannot be combined with --add-seccomp-fd", "--add-seccomp-fd", "5",
              "--seccomp", "6", "true");
    PARSE_ERR("--add-seccomp-fd cannot be combined with --seccomp", "--seccomp", "6",
              "--add-seccomp-fd", "5", "true");
    /* The combination is refused before the fd is read. */
    PARSE_ERR("--add-seccomp-fd cannot be combined with --seccomp", "--seccomp", "6",
              "--add-seccomp-fd", "bad", "true");
}

static void no_reader_means_every_read_fails(void **state)
{
    struct bw_parse_opts none = { 0 };
    struct bw_spec s;
    struct nf_err e;

    (void)state;
    assert_int_equal(bw_parse(2, ARGV("--args", "3"), &none, &s, &e), -1);
    assert_string_equal(e.msg, "Can't read --args data: Bad file descriptor");
    bw_spec_free(&s);
}

/* ---- --args -------------------------------------------------------------- */

static void args_files_are_parsed_in_place(void **state)
{
    struct bw_spec s;

    (void)state;
    FAKE(5, "--bind\0/c\0/d\0--setenv\0K\0v\0");
    FAKE(6, "--tmpfs\0/t"); /* no final NUL */
    PARSE_OK(s, "--bind", "/a", "/b", "--args", "5", "--bind", "/e", "/f", "--args", "6", "true",
             "x");
    assert_int_equal(s.n_ops, 4);
    assert_string_equal(s.ops[0].src, "/a");
    assert_string_equal(s.ops[1].src, "/c");
    assert_string_equal(s.ops[1].dest, "/d");
    assert_string_equal(s.ops[2].src, "/e");
    assert_int_equal(s.ops[3].kind, BW_OP_TMPFS);
    assert_string_equal(s.ops[3].dest, "/t");
    assert_int_equal(s.n_env, 1);
    assert_string_equal(s.env[0].value, "v");
    assert_command(&s, 2, "true", "x");
    bw_spec_free(&s);
}

static void a_command_word_in_an_args_file_ends_only_the_file(void **state)
{
    struct bw_spec s;

    (void)state;
    FAKE(5, "--unshare-ipc\0ignored\0--unshare-net\0");
    FAKE(6, "--\0--unshare-uts\0");
    FAKE(7, "");
    PARSE_OK(s, "--args", "5", "--args", "6", "--args", "7", "--unshare-pid", "true");
    assert_true(s.unshare_ipc && s.unshare_pid);
    assert_false(s.unshare_net || s.unshare_uts);
    assert_command(&s, 1, "true");
    bw_spec_free(&s);
    FAKE(8, "\0");
    PARSE_OK(s, "--args", "8", "sh");
    assert_command(&s, 1, "sh");
    bw_spec_free(&s);
}

static void args_are_not_allowed_in_an_args_file(void **state)
{
    (void)state;
    FAKE(5, "--unshare-ipc\0--args\0");
    PARSE_ERR("--args not supported in arguments file", "--args", "5", "true");
    FAKE(6, "--args\0--args\0");
    PARSE_ERR("--args not supported in arguments file", "--args", "6", "true");
}

static void args_file_errors_have_bwraps_words(void **state)
{
    (void)state;
    PARSE_ERR("Can't read --args data: Bad file descriptor", "--args", "4", "true");
    PARSE_ERR("Invalid fd: -4", "--args", "-4", "true");
    FAKE(5, "--bogus\0");
    PARSE_ERR("Unknown option --bogus", "--args", "5", "true");
    FAKE(6, "--perms\0000700\0");
    PARSE_ERR("--perms must be followed by an option that creates a file", "--args", "6", "--dir",
              "/a", "true");
    FAKE(7, "--overlay-src\0/l\0");
    PARSE_ERR("--overlay-src must be followed by another --overlay-src or one of --overlay, "
              "--tmp-overlay, or --ro-overlay",
              "--args", "7", "--tmp-overlay", "/t", "true");
    FAKE(8, "--overlay-src\0");
    PARSE_ERR("--overlay-src must be followed by another --overlay-src or one of --overlay, "
              "--tmp-overlay, or --ro-overlay",
              "--args", "8", "true");
}

static void a_modifier_before_args_applies_inside_the_file(void **state)
{
    struct bw_spec s;

    (void)state;
    FAKE(5, "--dir\0/a\0");
    PARSE_OK(s, "--perms", "0700", "--args", "5", "true");
    assert_int_equal(s.ops[0].perms, 0700);
    bw_spec_free(&s);
    FAKE(6, "--overlay-src\0/l2\0--tmp-overlay\0/t\0");
    PARSE_OK(s, "--overlay-src", "/l1", "--args", "6", "true");
    assert_int_equal(s.ops[0].n_srcs, 2);
    assert_string_equal(s.ops[0].srcs[0], "/l1");
    assert_string_equal(s.ops[0].srcs[1], "/l2");
    bw_spec_free(&s);
}

static void help_in_an_args_file_stops_everything(void **state)
{
    struct bw_spec s;

    (void)state;
    FAKE(5, "--help\0--bogus\0");
    PARSE_OK(s, "--args", "5", "--bogus");
    assert_int_equal(s.action, BW_ACTION_HELP);
    bw_spec_free(&s);
}

/* n arguments: "--unshare-ipc" repeated, then "true". */
static char **many(size_t n)
{
    char **v = calloc(n + 1, sizeof(*v));

    assert_non_null(v);
    for (size_t i = 0; i + 1 < n; i++)
        v[i] = "--unshare-ipc";
    v[n - 1] = "true";
    return v;
}

/* NUL-terminated "--unshare-ipc" n times, in a static buffer. */
static const char *many_data(size_t n, size_t *len)
{
    static char buf[9100 * 14];
    size_t o = 0;

    assert_true(n <= 9100);
    for (size_t i = 0; i < n; i++) {
        memcpy(buf + o, "--unshare-ipc", 14);
        o += 14;
    }
    *len = o;
    return buf;
}

static void at_most_9000_arguments_in_all(void **state)
{
    const char *msg = "Exceeded maximum number of arguments 9000";
    struct bw_spec s;
    struct nf_err e;
    char **v;
    const char *d;
    size_t len;

    (void)state;
    v = many(9000);
    assert_int_equal(parse_v(&s, &e, 9000, v), 0);
    bw_spec_free(&s);
    free(v);
    v = many(9001);
    assert_int_equal(parse_v(&s, &e, 9001, v), -1);
    assert_string_equal(e.msg, msg);
    bw_spec_free(&s);
    free(v);

    /* Three on the command line and 8997 in the file: 9000. */
    d = many_data(8997, &len);
    fake_add(5, d, len);
    assert_int_equal(parse_v(&s, &e, 3, ARGV("--args", "5", "true")), 0);
    bw_spec_free(&s);
    reset(NULL);
    d = many_data(8998, &len);
    fake_add(5, d, len);
    assert_int_equal(parse_v(&s, &e, 3, ARGV("--args", "5", "true")), -1);
    assert_string_equal(e.msg, msg);
    bw_spec_free(&s);

    /* Files add up. */
    reset(NULL);
    d = many_data(4000, &len);
    fake_add(5, d, len);
    fake_add(6, d, len);
    fake_add(7, d, len);
    assert_int_equal(parse_v(&s, &e, 7, ARGV("--args", "5", "--args", "6", "--args", "7", "true")),
                     -1);
    assert_string_equal(e.msg, msg);
    bw_spec_free(&s);
}

/* ---- bw_validate --------------------------------------------------------- */

static const struct bw_host user = { .real_uid = 1000, .real_gid = 1000 };
static const struct bw_host root = { .real_uid = 0, .real_gid = 0 };

static int validate_v(const struct bw_host *h, struct nf_err *e, struct bw_spec *s, int argc,
                      char **argv)
{
    if (parse_v(s, e, argc, argv) != 0)
        fail_msg("parse: %s", e->msg);
    return bw_validate(s, h, e);
}

#define VALIDATE_ERR(host, want_, ...)                                                             \
    do {                                                                                           \
        struct bw_spec s_;                                                                         \
        struct nf_err e_;                                                                          \
        if (validate_v((host), &e_, &s_, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__)) == 0)               \
            fail_msg("accepted, want \"%s\"", (want_));                                            \
        assert_string_equal(e_.msg, (want_));                                                      \
        bw_spec_free(&s_);                                                                         \
    } while (0)

#define VALIDATE_OK(host, s, ...)                                                                  \
    do {                                                                                           \
        struct nf_err e_;                                                                          \
        if (validate_v((host), &e_, &(s), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__)) != 0)              \
            fail_msg("refused: %s", e_.msg);                                                       \
    } while (0)

static void validate_userns_combinations(void **state)
{
    struct bw_host su = user;

    (void)state;
    su.setuid_mode = true;
    /* Checked before the implied --unshare-user. */
    VALIDATE_ERR(&user, "--userns-block-fd requires --unshare-user", "--userns-block-fd", "3",
                 "--info-fd", "4", "true");
    VALIDATE_ERR(&user, "--userns-block-fd requires --info-fd", "--unshare-user",
                 "--userns-block-fd", "3", "true");
    VALIDATE_ERR(&user, "--userns not compatible --unshare-user", "--userns", "3", "--unshare-user",
                 "true");
    VALIDATE_ERR(&user, "--userns not compatible --unshare-user-try", "--unshare-all", "--userns",
                 "3", "true");
    VALIDATE_ERR(&user, "--disable-userns requires --unshare-user", "--disable-userns", "true");
    VALIDATE_ERR(&user, "--disable-userns is not compatible with  --userns-block-fd",
                 "--unshare-user", "--disable-userns", "--userns-block-fd", "3", "--info-fd", "4",
                 "true");
    VALIDATE_ERR(&su, "--userns doesn't work in setuid mode", "--userns", "3", "true");
    VALIDATE_ERR(&su, "--userns2 doesn't work in setuid mode", "--userns2", "3", "true");
    VALIDATE_ERR(&su, "--cap-add in setuid mode can be used only by root", "--cap-add", "cap_kill",
                 "true");
}

static void validate_implies_a_user_namespace_as_bwrap_does(void **state)
{
    struct bw_host try_ok = user;
    struct bw_host su = user;
    struct bw_spec s;

    (void)state;
    VALIDATE_OK(&user, s, "true");
    assert_true(s.unshare_user);
    assert_int_equal(s.uid, 1000);
    assert_int_equal(s.gid, 1000);
    bw_spec_free(&s);
    VALIDATE_OK(&user, s, "--userns", "3", "true");
    assert_false(s.unshare_user);
    bw_spec_free(&s);
    VALIDATE_OK(&root, s, "true");
    assert_false(s.unshare_user);
    bw_spec_free(&s);
    VALIDATE_OK(&root, s, "--unshare-user-try", "true");
    assert_false(s.unshare_user);
    bw_spec_free(&s);
    try_ok.real_uid = 0;
    try_ok.userns_try_ok = true;
    VALIDATE_OK(&try_ok, s, "--unshare-all", "true");
    assert_true(s.unshare_user);
    bw_spec_free(&s);
    su.setuid_mode = true;
    VALIDATE_OK(&su, s, "--cap-add", "cap_kill", "--cap-drop", "ALL", "true");
    assert_false(s.unshare_user);
    bw_spec_free(&s);
}

static void validate_without_a_command_is_a_usage_error_after_the_userns_checks(void **state)
{
    struct bw_spec s;

    (void)state;
    VALIDATE_OK(&root, s, "--hostname", "x");
    assert_int_equal(s.action, BW_ACTION_USAGE_ERROR);
    bw_spec_free(&s);
    VALIDATE_ERR(&root, "--disable-userns requires --unshare-user", "--disable-userns");
}

static void validate_sandbox_options(void **state)
{
    struct bw_spec s;

    (void)state;
    VALIDATE_ERR(&root, "Specifying --uid requires --unshare-user or --userns", "--uid", "5",
                 "true");
    VALIDATE_ERR(&root, "Specifying --gid requires --unshare-user or --userns", "--gid", "5",
                 "true");
    VALIDATE_OK(&root, s, "--uid", "0", "--gid", "0", "true");
    bw_spec_free(&s);
    VALIDATE_OK(&user, s, "--uid", "5", "--gid", "6", "true");
    assert_int_equal(s.uid, 5);
    assert_int_equal(s.gid, 6);
    bw_spec_free(&s);
    VALIDATE_OK(&root, s, "--userns", "3", "--uid", "5", "true");
    bw_spec_free(&s);
    VALIDATE_ERR(&root, "Specifying --hostname requires --unshare-uts", "--hostname", "h", "true");
    VALIDATE_OK(&root, s, "--unshare-uts", "--hostname", "h", "true");
    bw_spec_free(&s);
    VALIDATE_ERR(&root, "Specifying --as-pid-1 requires --unshare-pid", "--as-pid-1", "true");
    VALIDATE_ERR(&root, "Specifying --as-pid-1 and --lock-file is not permitted", "--unshare-pid",
                 "--as-pid-1", "--lock-file", "/l", "true");
    VALIDATE_OK(&root, s, "--unshare-pid", "--as-pid-1", "true");
    bw_spec_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(no_arguments_is_a_usage_error, reset),
        cmocka_unit_test_setup(help_and_version_stop_parsing_where_they_stand, reset),
        cmocka_unit_test_setup(the_first_word_not_starting_with_a_dash_is_the_command, reset),
        cmocka_unit_test_setup(double_dash_makes_an_option_the_command, reset),
        cmocka_unit_test_setup(an_empty_word_is_a_command_and_dash_dash_alone_leaves_none, reset),
        cmocka_unit_test_setup(every_operation_is_kept_in_argv_order, reset),
        cmocka_unit_test_setup(each_option_names_its_missing_arguments, reset),
        cmocka_unit_test_setup(fds_are_decimal_and_never_negative, reset),
        cmocka_unit_test_setup(fds_take_what_strtol_takes, reset),
        cmocka_unit_test_setup(perms_apply_to_the_next_file_creating_option, reset),
        cmocka_unit_test_setup(perms_take_what_strtoul_base_8_takes, reset),
        cmocka_unit_test_setup(bad_perms_are_refused, reset),
        cmocka_unit_test_setup(perms_given_twice_or_unconsumed_are_refused, reset),
        cmocka_unit_test_setup(size_applies_to_the_next_tmpfs, reset),
        cmocka_unit_test_setup(bad_sizes_are_refused, reset),
        cmocka_unit_test_setup(overlay_sources_go_to_the_next_overlay_in_order, reset),
        cmocka_unit_test_setup(overlay_sources_must_be_followed_by_an_overlay, reset),
        cmocka_unit_test_setup(setuid_mode_refuses_overlays_and_size_before_counting, reset),
        cmocka_unit_test_setup(repeated_options_warn_in_order_and_the_last_wins, reset),
        cmocka_unit_test_setup(a_warning_stands_even_when_the_value_after_it_fails, reset),
        cmocka_unit_test_setup(level_prefix_is_known_when_an_error_comes, reset),
        cmocka_unit_test_setup(argv0_may_be_given_once, reset),
        cmocka_unit_test_setup(uids_and_gids_are_non_negative_decimal, reset),
        cmocka_unit_test_setup(labels_fail_without_selinux_after_the_count, reset),
        cmocka_unit_test_setup(unshare_all_expands_and_share_net_after_it_clears_net, reset),
        cmocka_unit_test_setup(process_flags_are_recorded, reset),
        cmocka_unit_test_setup(env_operations_keep_argv_order, reset),
        cmocka_unit_test_setup(caps_are_read_as_libcap_reads_them, reset),
        cmocka_unit_test_setup(add_seccomp_fd_is_read_while_parsing, reset),
        cmocka_unit_test_setup(seccomp_data_errors_have_bwraps_words, reset),
        cmocka_unit_test_setup(seccomp_and_add_seccomp_fd_exclude_each_other, reset),
        cmocka_unit_test_setup(no_reader_means_every_read_fails, reset),
        cmocka_unit_test_setup(args_files_are_parsed_in_place, reset),
        cmocka_unit_test_setup(a_command_word_in_an_args_file_ends_only_the_file, reset),
        cmocka_unit_test_setup(args_are_not_allowed_in_an_args_file, reset),
        cmocka_unit_test_setup(args_file_errors_have_bwraps_words, reset),
        cmocka_unit_test_setup(a_modifier_before_args_applies_inside_the_file, reset),
        cmocka_unit_test_setup(help_in_an_args_file_stops_everything, reset),
        cmocka_unit_test_setup(at_most_9000_arguments_in_all, reset),
        cmocka_unit_test_setup(validate_userns_combinations, reset),
        cmocka_unit_test_setup(validate_implies_a_user_namespace_as_bwrap_does, reset),
        cmocka_unit_test_setup(validate_without_a_command_is_a_usage_error_after_the_userns_checks,
                               reset),
        cmocka_unit_test_setup(validate_sandbox_options, reset),
    };

    return cmocka_run_group_tests_name("bwrap_args", tests, NULL, NULL);
}
