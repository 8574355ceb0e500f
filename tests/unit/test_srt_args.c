/* src/srt_args.c and ctl_fd_parse: srt 0.0.83's command line as commander
 * reads it, srt's shell quoting, its exit statuses, and its reasons for a
 * settings file that did not load. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "src/control.h"
#include "src/srt_args.h"

/* A writable argv (commander puts back a short flag's rest in place). */
struct argv {
    char *v[32];
    int n;
};

static struct argv mk(const char *first, ...)
{
    struct argv a = { .n = 0 };
    va_list ap;

    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *))
        a.v[a.n++] = strdup(s);
    va_end(ap);
    a.v[a.n] = NULL;
    return a;
}

static void drop(struct argv *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
}

static void words_are(const struct srt_args *p, const char *want)
{
    char got[1024] = "";

    for (size_t i = 0; i < p->argc; i++) {
        if (i)
            strcat(got, "|");
        strcat(got, p->argv[i]);
    }
    assert_string_equal(got, want);
}

static void options_before_the_command(void **state)
{
    struct argv a = mk("srt", "-d", "-s", "f.json", "--control-fd", "5", "ls", "-la", NULL);
    struct srt_args p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(srt_args_parse(a.n, a.v, &p, &err), 0);
    assert_int_equal(p.action, SRT_RUN);
    assert_true(p.debug);
    assert_string_equal(p.settings, "f.json");
    assert_string_equal(p.control_fd, "5");
    assert_null(p.command);
    words_are(&p, "ls|-la");
    srt_args_free(&p);
    drop(&a);
}

static void unknown_options_flow_into_the_command(void **state)
{
    struct argv a = mk("srt", "grep", "-r", "--color=auto", "x", ".", NULL);
    struct srt_args p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(srt_args_parse(a.n, a.v, &p, &err), 0);
    words_are(&p, "grep|-r|--color=auto|x|.");
    srt_args_free(&p);
    drop(&a);
}

/* commander has no pass-through here: srt's own options are taken wherever
 * they stand before `--`. */
static void known_options_are_taken_anywhere_before_double_dash(void **state)
{
    struct argv a = mk("srt", "ls", "-d", "/x", NULL);
    struct argv b = mk("srt", "ls", "--", "-d", "/x", NULL);
    struct srt_args p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(srt_args_parse(a.n, a.v, &p, &err), 0);
    assert_true(p.debug);
    words_are(&p, "ls|/x");
    srt_args_free(&p);
    assert_int_equal(srt_args_parse(b.n, b.v, &p, &err), 0);
    assert_false(p.debug);
    words_are(&p, "ls|-d|/x");
    srt_args_free(&p);
    drop(&a);
    drop(&b);
}

static void combined_short_flags_and_attached_values(void **state)
{
    struct argv a = mk("srt", "-dc", "echo hi", NULL);
    struct argv b = mk("srt", "-sfile.json", "-cexit 3", "--settings=other.json", NULL);
    struct srt_args p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(srt_args_parse(a.n, a.v, &p, &err), 0);
    assert_true(p.debug);
    assert_string_equal(p.command, "echo hi");
    srt_args_free(&p);
    assert_int_equal(srt_args_parse(b.n, b.v, &p, &err), 0);
    assert_string_equal(p.settings, "other.json");
    assert_string_equal(p.command, "exit 3");
    srt_args_free(&p);
    drop(&a);
    drop(&b);
}

static void a_missing_value_is_commanders_error(void **state)
{
    struct argv a = mk("srt", "-c", NULL);
    struct argv b = mk("srt", "--settings", NULL);
    struct srt_args p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(srt_args_parse(a.n, a.v, &p, &err), -1);
    assert_string_equal(err.msg, "error: option '-c <command>' argument missing");
    assert_int_equal(srt_args_parse(b.n, b.v, &p, &err), -1);
    assert_string_equal(err.msg, "error: option '-s, --settings <path>' argument missing");
    drop(&a);
    drop(&b);
}

static void version_help_and_subcommands(void **state)
{
    struct argv v = mk("srt", "ls", "-V", NULL);
    struct argv h = mk("srt", "ls", "-x", "--help", NULL);
    struct argv h2 = mk("srt", "help", NULL);
    struct argv s = mk("srt", "proxy", "--port", "1", NULL);
    struct argv nh = mk("srt", "--", "ls", "--help", NULL);
    struct srt_args p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(srt_args_parse(v.n, v.v, &p, &err), 0);
    assert_int_equal(p.action, SRT_VERSION_ACTION);
    assert_int_equal(srt_args_parse(h.n, h.v, &p, &err), 0);
    assert_int_equal(p.action, SRT_HELP);
    assert_int_equal(srt_args_parse(h2.n, h2.v, &p, &err), 0);
    assert_int_equal(p.action, SRT_HELP);
    assert_int_equal(srt_args_parse(s.n, s.v, &p, &err), 0);
    assert_int_equal(p.action, SRT_SUBCOMMAND);
    assert_string_equal(p.subcommand, "proxy");
    assert_int_equal(srt_args_parse(nh.n, nh.v, &p, &err), 0);
    assert_int_equal(p.action, SRT_RUN);
    words_are(&p, "ls|--help");
    srt_args_free(&p);
    drop(&v);
    drop(&h);
    drop(&h2);
    drop(&s);
    drop(&nh);
}

static void no_command_is_no_words(void **state)
{
    struct argv a = mk("srt", "-d", NULL);
    struct srt_args p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(srt_args_parse(a.n, a.v, &p, &err), 0);
    assert_int_equal(p.argc, 0);
    srt_args_free(&p);
    drop(&a);
}

static void quote_keeps_argument_boundaries(void **state)
{
    char *w[] = { "printf", "%s\n", "a b", "it's", "", "x=y", "=x", "a,b:c@d+e" };
    char *q = srt_quote(w, 8);

    (void)state;
    assert_non_null(q);
    assert_string_equal(q, "printf '%s\n' 'a b' 'it'\"'\"'s' '' x=y '=x' a,b:c@d+e");
    free(q);
}

static void exit_statuses_are_srts(void **state)
{
    char msg[64];

    (void)state;
    assert_int_equal(srt_exit_status(42, 0, msg, sizeof(msg)), 42);
    assert_string_equal(msg, "");
    assert_int_equal(srt_exit_status(137, 0, msg, sizeof(msg)), 137);
    assert_int_equal(srt_exit_status(143, SIGTERM, msg, sizeof(msg)), 0);
    assert_int_equal(srt_exit_status(3, SIGINT, msg, sizeof(msg)), 0);
    assert_int_equal(srt_exit_status(128 + SIGHUP, SIGHUP, msg, sizeof(msg)), 1);
    assert_string_equal(msg, "Process killed by signal: SIGHUP");
    /* The command outlived the signal: its own status. */
    assert_int_equal(srt_exit_status(0, SIGUSR1, msg, sizeof(msg)), 0);
    assert_string_equal(msg, "");
}

static void settings_reasons_are_srts(void **state)
{
    char out[512];

    (void)state;
    srt_settings_reason("/h/s.json", "/h/s.json: is empty. Delete it, or put a config in it.", out,
                        sizeof(out));
    assert_string_equal(out, "/h/s.json is empty. Delete it, or put a config in it.");
    srt_settings_reason("/h/s.json", "/h/s.json:2:5: not valid JSON: '}' expected", out,
                        sizeof(out));
    assert_string_equal(out, "/h/s.json is not valid JSON: '}' expected (line 2, column 5)");
    srt_settings_reason("/h/s.json", "/h/s.json: network.allowedDomains: required", out,
                        sizeof(out));
    assert_string_equal(out, "/h/s.json does not hold a valid config \xe2\x80\x94 "
                             "network.allowedDomains: required");
    srt_settings_reason("/h/s.json", "something else", out, sizeof(out));
    assert_string_equal(out, "something else");
}

static void control_fd_values(void **state)
{
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(ctl_fd_parse("3", &err), 3);
    assert_int_equal(ctl_fd_parse("017", &err), 17);
    assert_int_equal(ctl_fd_parse("2", &err), -1);
    assert_string_equal(err.msg, "must be an integer file descriptor >= 3 (0-2 are stdin, stdout "
                                 "and stderr).");
    assert_int_equal(ctl_fd_parse("-4", &err), -1);
    assert_int_equal(ctl_fd_parse("4x", &err), -1);
    assert_int_equal(ctl_fd_parse("", &err), -1);
    assert_int_equal(ctl_fd_parse("99999999999", &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_before_the_command),
        cmocka_unit_test(unknown_options_flow_into_the_command),
        cmocka_unit_test(known_options_are_taken_anywhere_before_double_dash),
        cmocka_unit_test(combined_short_flags_and_attached_values),
        cmocka_unit_test(a_missing_value_is_commanders_error),
        cmocka_unit_test(version_help_and_subcommands),
        cmocka_unit_test(no_command_is_no_words),
        cmocka_unit_test(quote_keeps_argument_boundaries),
        cmocka_unit_test(exit_statuses_are_srts),
        cmocka_unit_test(settings_reasons_are_srts),
        cmocka_unit_test(control_fd_values),
    };

    return cmocka_run_group_tests_name("srt_args", tests, NULL, NULL);
}
