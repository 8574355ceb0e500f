/* src/env.c: the command's environment. The caller's variables pass
 * unchanged; SANDBOX_RUNTIME=1 always; with the network on, every common
 * client is pointed at the in-sandbox proxy endpoints, each variable exactly
 * once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "src/env.h"
#include "src/policy.h"

#define SELF "/usr/local/bin/nsfence"

static const char java_3128[] =
    "-Dhttp.proxyHost=localhost -Dhttp.proxyPort=3128 -Dhttps.proxyHost=localhost "
    "-Dhttps.proxyPort=3128 -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]";

static const char git_ssh[] = "ssh -o ControlMaster=no -o ControlPath=none -o "
                              "ProxyCommand='" SELF " connect %h %p'";

static size_t env_len(char **env)
{
    size_t n = 0;

    while (env[n])
        n++;
    return n;
}

/* How many entries define name. */
static size_t count_of(char **env, const char *name)
{
    size_t nl = strlen(name), c = 0;

    for (size_t i = 0; env[i]; i++)
        if (strncmp(env[i], name, nl) == 0 && env[i][nl] == '=')
            c++;
    return c;
}

/* The value of name, which must be defined exactly once. */
static const char *value_of(char **env, const char *name)
{
    size_t nl = strlen(name);

    if (count_of(env, name) != 1)
        fail_msg("%s is defined %zu times, want once", name, count_of(env, name));
    for (size_t i = 0; env[i]; i++)
        if (strncmp(env[i], name, nl) == 0 && env[i][nl] == '=')
            return env[i] + nl + 1;
    return NULL;
}

static void assert_var(char **env, const char *name, const char *want)
{
    const char *v = value_of(env, name);

    if (strcmp(v, want) != 0)
        fail_msg("%s: want \"%s\", got \"%s\"", name, want, v);
}

static char **build(char *const *base, bool network, unsigned http, unsigned socks,
                    const char *self)
{
    struct policy pol;
    struct nf_err err = { 0 };
    char **env = NULL;

    assert_int_equal(pol_init(&pol, "/work", "/home/u", &err), 0);
    pol.network_enabled = network;
    pol.http_port = http;
    pol.socks_port = socks;
    if (env_build(base, &pol, self, &env, &err) != 0)
        fail_msg("env_build: %s", err.msg);
    pol_free(&pol);
    assert_non_null(env);
    return env;
}

/* Every variable the network adds, with its value for the given ports. */
struct want {
    const char *name;
    char value[512];
};

static size_t network_vars(struct want *w, unsigned http, unsigned socks, const char *self)
{
    static const char *const http_vars[] = {
        "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",       "ALL_PROXY",
        "all_proxy",  "GRPC_PROXY",  "grpc_proxy", "DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY",
    };
    size_t n = 0;

    for (size_t i = 0; i < sizeof(http_vars) / sizeof(http_vars[0]); i++) {
        w[n].name = http_vars[i];
        snprintf(w[n++].value, sizeof(w[0].value), "http://localhost:%u", http);
    }
    w[n].name = "NO_PROXY";
    snprintf(w[n++].value, sizeof(w[0].value), "localhost,127.0.0.1,::1");
    w[n].name = "no_proxy";
    snprintf(w[n++].value, sizeof(w[0].value), "localhost,127.0.0.1,::1");
    w[n].name = "FTP_PROXY";
    snprintf(w[n++].value, sizeof(w[0].value), "socks5h://localhost:%u", socks);
    w[n].name = "ftp_proxy";
    snprintf(w[n++].value, sizeof(w[0].value), "socks5h://localhost:%u", socks);
    w[n].name = "RSYNC_PROXY"; /* rsync speaks HTTP CONNECT */
    snprintf(w[n++].value, sizeof(w[0].value), "localhost:%u", http);
    w[n].name = "CLOUDSDK_PROXY_TYPE";
    snprintf(w[n++].value, sizeof(w[0].value), "http");
    w[n].name = "CLOUDSDK_PROXY_ADDRESS";
    snprintf(w[n++].value, sizeof(w[0].value), "localhost");
    w[n].name = "CLOUDSDK_PROXY_PORT";
    snprintf(w[n++].value, sizeof(w[0].value), "%u", http);
    w[n].name = "NODE_USE_ENV_PROXY";
    snprintf(w[n++].value, sizeof(w[0].value), "1");
    w[n].name = "JAVA_TOOL_OPTIONS";
    snprintf(w[n++].value, sizeof(w[0].value),
             "-Dhttp.proxyHost=localhost -Dhttp.proxyPort=%u -Dhttps.proxyHost=localhost "
             "-Dhttps.proxyPort=%u -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]",
             http, http);
    if (self) {
        w[n].name = "GIT_SSH_COMMAND";
        snprintf(w[n++].value, sizeof(w[0].value),
                 "ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='%s connect %%h "
                 "%%p'",
                 self);
    }
    return n;
}

static void assert_exact_network_env(char **env, char *const *base, size_t nbase, unsigned http,
                                     unsigned socks, const char *self)
{
    struct want w[32];
    size_t n = network_vars(w, http, socks, self);

    /* the caller's variables first, in their order */
    for (size_t i = 0; i < nbase; i++)
        assert_string_equal(env[i], base[i]);
    assert_var(env, "SANDBOX_RUNTIME", "1");
    for (size_t i = 0; i < n; i++)
        assert_var(env, w[i].name, w[i].value);
    /* and nothing else */
    assert_int_equal(env_len(env), nbase + 1 + n);
}

static void network_on_sets_every_proxy_variable(void **state)
{
    char *const base[] = { "PATH=/usr/bin:/bin", "HOME=/home/u", "TERM=xterm", NULL };
    char **env = build(base, true, 3128, 1080, SELF);

    (void)state;
    assert_exact_network_env(env, base, 3, 3128, 1080, SELF);
    /* the values the contract spells out */
    assert_var(env, "HTTP_PROXY", "http://localhost:3128");
    assert_var(env, "https_proxy", "http://localhost:3128");
    assert_var(env, "ALL_PROXY", "http://localhost:3128");
    assert_var(env, "NO_PROXY", "localhost,127.0.0.1,::1");
    assert_var(env, "FTP_PROXY", "socks5h://localhost:1080");
    assert_var(env, "RSYNC_PROXY", "localhost:3128");
    assert_var(env, "JAVA_TOOL_OPTIONS", java_3128);
    assert_var(env, "GIT_SSH_COMMAND", git_ssh);
    env_free(env);
}

static void network_off_adds_only_sandbox_runtime(void **state)
{
    char *const base[] = { "PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", NULL };
    char **env = build(base, false, 3128, 1080, SELF);

    (void)state;
    assert_int_equal(env_len(env), 4);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(env[i], base[i]);
    assert_string_equal(env[3], "SANDBOX_RUNTIME=1");
    assert_int_equal(count_of(env, "HTTP_PROXY"), 0);
    assert_int_equal(count_of(env, "GIT_SSH_COMMAND"), 0);
    assert_int_equal(count_of(env, "JAVA_TOOL_OPTIONS"), 0);
    env_free(env);
}

static void network_off_leaves_the_callers_variables_alone(void **state)
{
    char *const base[] = { "JAVA_TOOL_OPTIONS=-Xmx1g", "GIT_SSH_COMMAND=ssh -v", NULL };
    char **env = build(base, false, 3128, 1080, SELF);

    (void)state;
    assert_int_equal(env_len(env), 3);
    assert_var(env, "JAVA_TOOL_OPTIONS", "-Xmx1g");
    assert_var(env, "GIT_SSH_COMMAND", "ssh -v");
    assert_var(env, "SANDBOX_RUNTIME", "1");
    env_free(env);
}

static void sandbox_runtime_is_always_one_and_once(void **state)
{
    char *const base[] = { "SANDBOX_RUNTIME=0", "A=b", NULL };
    char **env;

    (void)state;
    for (int net = 0; net < 2; net++) {
        env = build(base, net, 3128, 1080, SELF);
        assert_var(env, "SANDBOX_RUNTIME", "1");
        /* replaced where it was */
        assert_string_equal(env[0], "SANDBOX_RUNTIME=1");
        env_free(env);
    }
    env = build(NULL, false, 3128, 1080, NULL);
    assert_int_equal(env_len(env), 1);
    assert_string_equal(env[0], "SANDBOX_RUNTIME=1");
    env_free(env);
    env = build(NULL, true, 3128, 1080, NULL);
    assert_var(env, "SANDBOX_RUNTIME", "1");
    env_free(env);
}

static void existing_proxy_variables_are_replaced_not_duplicated(void **state)
{
    char *const base[] = {
        "HTTP_PROXY=http://corp:8080",
        "https_proxy=http://corp:8080",
        "NO_PROXY=.corp",
        "FTP_PROXY=ftp://corp",
        "RSYNC_PROXY=corp:873",
        "PATH=/bin",
        NULL,
    };
    char **env = build(base, true, 3128, 1080, SELF);
    struct want w[32];
    size_t n = network_vars(w, 3128, 1080, SELF);

    (void)state;
    /* in place, so the caller's order is kept */
    assert_string_equal(env[0], "HTTP_PROXY=http://localhost:3128");
    assert_string_equal(env[1], "https_proxy=http://localhost:3128");
    assert_string_equal(env[2], "NO_PROXY=localhost,127.0.0.1,::1");
    assert_string_equal(env[5], "PATH=/bin");
    for (size_t i = 0; i < n; i++)
        assert_var(env, w[i].name, w[i].value);
    /* the five replaced ones are not counted twice */
    assert_int_equal(env_len(env), 1 + 1 + n);
    env_free(env);
}

/* A launcher may pass a name twice; most shells take the LAST definition
 * (bash, dash, python's os.environ), so every copy must be replaced, or the
 * command talks to the caller's proxy instead of the sandbox's. */
static void duplicate_definitions_in_the_base_are_all_replaced(void **state)
{
    char *const base[] = { "HTTP_PROXY=http://a:1", "PATH=/bin",         "HTTP_PROXY=http://b:2",
                           "SANDBOX_RUNTIME=0",     "SANDBOX_RUNTIME=0", NULL };
    char **env = build(base, true, 3128, 1080, SELF);
    size_t proxies = count_of(env, "HTTP_PROXY"), runtimes = count_of(env, "SANDBOX_RUNTIME");

    (void)state;
    if (proxies == 1 && runtimes == 1) {
        assert_var(env, "HTTP_PROXY", "http://localhost:3128");
        assert_var(env, "SANDBOX_RUNTIME", "1");
    }
    env_free(env);
    if (proxies != 1 || runtimes != 1)
        fail_msg("HTTP_PROXY defined %zu times, SANDBOX_RUNTIME %zu times; want once each", proxies,
                 runtimes);
}

static void names_are_matched_whole(void **state)
{
    char *const base[] = { "HTTP_PROXY_EXTRA=keep", "XHTTP_PROXY=keep", "HTTP_PROX=keep",
                           "http_proxy_=keep",      "NOEQUALS",         NULL };
    char **env = build(base, true, 3128, 1080, SELF);

    (void)state;
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(env[i], base[i]);
    assert_var(env, "HTTP_PROXY", "http://localhost:3128");
    assert_var(env, "http_proxy", "http://localhost:3128");
    env_free(env);
}

static void java_tool_options_are_appended_after_the_callers(void **state)
{
    char *const base[] = { "JAVA_TOOL_OPTIONS=-Xmx1g -Dfoo=bar", NULL };
    char *const empty[] = { "JAVA_TOOL_OPTIONS=", NULL };
    char want[1024];
    char **env;

    (void)state;
    env = build(base, true, 3128, 1080, SELF);
    snprintf(want, sizeof(want), "-Xmx1g -Dfoo=bar %s", java_3128);
    assert_var(env, "JAVA_TOOL_OPTIONS", want);
    /* in place */
    assert_true(strncmp(env[0], "JAVA_TOOL_OPTIONS=-Xmx1g", 24) == 0);
    env_free(env);

    /* an empty one gets no leading space */
    env = build(empty, true, 3128, 1080, SELF);
    assert_var(env, "JAVA_TOOL_OPTIONS", java_3128);
    env_free(env);
}

/* The JVM takes the last -D of a name: the proxy settings must arrive whole
 * whatever the caller's options, or Java clients silently go direct (and
 * fail) or read a cut-off port. */
static void long_java_tool_options_keep_the_proxy_settings_whole(void **state)
{
    static char entry[2100], want[4096];
    char *base[2] = { entry, NULL };
    char **env;
    size_t got;
    bool same;

    (void)state;
    strcpy(entry, "JAVA_TOOL_OPTIONS=");
    memset(entry + 18, 'x', 2000);
    entry[2018] = '\0';
    env = build(base, true, 3128, 1080, SELF);
    snprintf(want, sizeof(want), "%s %s", entry + 18, java_3128);
    got = strlen(value_of(env, "JAVA_TOOL_OPTIONS"));
    same = strcmp(value_of(env, "JAVA_TOOL_OPTIONS"), want) == 0;
    env_free(env);
    if (!same)
        fail_msg("JAVA_TOOL_OPTIONS is %zu characters, want %zu (caller's + proxy settings)", got,
                 strlen(want));
}

static void git_ssh_command_names_the_given_binary(void **state)
{
    char *const base[] = { "GIT_SSH_COMMAND=ssh -i key", NULL };
    char **env;

    (void)state;
    env = build(base, true, 3128, 1080, "/opt/nsfence/bin/nsfence");
    assert_var(env, "GIT_SSH_COMMAND",
               "ssh -o ControlMaster=no -o ControlPath=none -o "
               "ProxyCommand='/opt/nsfence/bin/nsfence connect %h %p'");
    env_free(env);
    /* without a known binary nothing is set, and the caller's stays */
    env = build(base, true, 3128, 1080, NULL);
    assert_var(env, "GIT_SSH_COMMAND", "ssh -i key");
    env_free(env);
}

/* ---- a small POSIX shell word splitter, to check GIT_SSH_COMMAND the way
 * git (sh -c) and then ssh (ProxyCommand through the shell) read it ---- */

static size_t sh_words(const char *s, char words[][512], size_t max)
{
    size_t n = 0;

    for (;;) {
        size_t o = 0;
        bool any = false;

        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        if (!*s || n == max)
            return n;
        while (*s && !(*s == ' ' || *s == '\t' || *s == '\n')) {
            any = true;
            if (*s == '\'') {
                const char *e = strchr(s + 1, '\'');

                if (!e)
                    return (size_t)-1; /* unterminated: sh fails */
                memcpy(words[n] + o, s + 1, (size_t)(e - s - 1));
                o += (size_t)(e - s - 1);
                s = e + 1;
            } else if (*s == '"') {
                s++;
                while (*s && *s != '"') {
                    if (*s == '\\' && (s[1] == '"' || s[1] == '\\' || s[1] == '$' || s[1] == '`'))
                        s++;
                    words[n][o++] = *s++;
                }
                if (!*s)
                    return (size_t)-1;
                s++;
            } else if (*s == '\\' && s[1]) {
                words[n][o++] = s[1];
                s += 2;
            } else {
                words[n][o++] = *s++;
            }
        }
        if (any)
            words[n++][o] = '\0';
    }
}

static void check_git_ssh_reaches(const char *self)
{
    char *const base[] = { NULL };
    char **env = build(base, true, 3128, 1080, self);
    char cmd[1024], outer[16][512], inner[16][512];
    const char *pc = NULL;
    size_t n, m;

    snprintf(cmd, sizeof(cmd), "%s", value_of(env, "GIT_SSH_COMMAND"));
    env_free(env);
    n = sh_words(cmd, outer, 16);

    if (n == (size_t)-1)
        fail_msg("self \"%s\": GIT_SSH_COMMAND does not parse as shell words: %s", self, cmd);
    for (size_t i = 0; i < n; i++)
        if (strncmp(outer[i], "ProxyCommand=", 13) == 0)
            pc = outer[i] + 13;
    if (!pc)
        fail_msg("self \"%s\": no ProxyCommand in %s", self, cmd);
    m = sh_words(pc, inner, 16);
    if (m != 4 || strcmp(inner[0], self) != 0 || strcmp(inner[1], "connect") != 0 ||
        strcmp(inner[2], "%h") != 0 || strcmp(inner[3], "%p") != 0)
        fail_msg("self \"%s\": ssh would run \"%s\" (%zu words), not the binary", self, pc, m);
}

static void git_ssh_command_survives_a_plain_path(void **state)
{
    (void)state;
    check_git_ssh_reaches(SELF);
    check_git_ssh_reaches("/home/u/.local/bin/nsfence-0.1_x86-64");
}

/* ~/My Tools/nsfence is a path people have. */
static void git_ssh_command_survives_spaces_and_quotes_in_the_path(void **state)
{
    (void)state;
    check_git_ssh_reaches("/home/u/My Tools/nsfence");
    check_git_ssh_reaches("/opt/it's/nsfence");
}

static void custom_ports_are_reflected_everywhere(void **state)
{
    char *const base[] = { "PATH=/bin", NULL };
    char **env = build(base, true, 8080, 9050, SELF);

    (void)state;
    assert_exact_network_env(env, base, 1, 8080, 9050, SELF);
    assert_var(env, "HTTPS_PROXY", "http://localhost:8080");
    assert_var(env, "DOCKER_HTTPS_PROXY", "http://localhost:8080");
    assert_var(env, "ftp_proxy", "socks5h://localhost:9050");
    assert_var(env, "RSYNC_PROXY", "localhost:8080");
    assert_var(env, "CLOUDSDK_PROXY_PORT", "8080");
    assert_non_null(strstr(value_of(env, "JAVA_TOOL_OPTIONS"), "-Dhttps.proxyPort=8080 "));
    for (size_t i = 0; env[i]; i++)
        if (strstr(env[i], "3128") || strstr(env[i], "1080"))
            fail_msg("default port left in %s", env[i]);
    env_free(env);

    env = build(base, true, 1, 65535, NULL);
    assert_var(env, "HTTP_PROXY", "http://localhost:1");
    assert_var(env, "FTP_PROXY", "socks5h://localhost:65535");
    env_free(env);
}

static void the_base_is_copied_not_shared(void **state)
{
    char a[] = "A=1", b[] = "HTTP_PROXY=http://corp:1";
    char *const base[] = { a, b, NULL };
    char **env = build(base, true, 3128, 1080, SELF);

    (void)state;
    assert_true(env[0] != a);
    assert_true(env[1] != b);
    assert_string_equal(a, "A=1");
    assert_string_equal(b, "HTTP_PROXY=http://corp:1");
    env_free(env);
    env_free(NULL);
}

/* TMPDIR from the caller: kept where the command can write it, /tmp
 * otherwise (mktemp fails in a read-only directory). */
static void tmpdir_not_writable_inside_becomes_tmp(void **state)
{
    static char *roots[] = { "/work", "/tmp/build" };
    static char *prot[] = { "/work/.git/hooks" };
    static char *masked[] = { "/work/cache" };
    static char *carve[] = { "/work/cache/ro" };
    const struct fs_plan fs = { .write_roots = roots,
                                .n_write_roots = 2,
                                .protected_paths = prot,
                                .n_protected = 1,
                                .scratch = masked,
                                .n_scratch = 1,
                                .read_only = carve,
                                .n_read_only = 1 };
    static const struct {
        const char *tmpdir; /* NULL: unset */
        const char *want;   /* NULL: unset */
        int rc;
    } c[] = {
        { NULL, NULL, 0 },
        { "/tmp", "/tmp", 0 },
        { "/tmp/", "/tmp/", 0 },
        { "/work/tmp", "/work/tmp", 0 },
        { "/work", "/work", 0 },
        { "/tmp/build/t", "/tmp/build/t", 0 },
        { "/var/tmp", "/tmp", 1 },
        { "/run/user/1000", "/tmp", 1 },
        { "/tmp/user-1000", "/tmp", 1 }, /* the private /tmp is empty */
        { "/work/.git/hooks/t", "/tmp", 1 },
        { "/work/cache/ro/t", "/tmp", 1 },
        { "relative/tmp", "/tmp", 1 },
        { "/workx", "/tmp", 1 },
        { "", "", 0 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char *const with[] = { "PATH=/bin", NULL, "HOME=/h", NULL };
        char entry[256], old[256] = "";
        char **env = NULL;
        struct policy pol;
        struct nf_err err = { 0 };
        int rc;

        snprintf(entry, sizeof(entry), "TMPDIR=%s", c[i].tmpdir ? c[i].tmpdir : "");
        ((char **)with)[1] = c[i].tmpdir ? entry : "X=1";
        assert_int_equal(pol_init(&pol, "/work", "/h", &err), 0);
        pol.network_enabled = false;
        assert_int_equal(env_build(with, &pol, NULL, &env, &err), 0);
        rc = env_fix_tmpdir(&env, &fs, old, sizeof(old), &err);
        if (rc != c[i].rc)
            fail_msg("TMPDIR=%s: want %d, got %d", c[i].tmpdir ? c[i].tmpdir : "(unset)", c[i].rc,
                     rc);
        if (c[i].want)
            assert_var(env, "TMPDIR", c[i].want);
        else
            for (size_t k = 0; env[k]; k++)
                assert_false(strncmp(env[k], "TMPDIR=", 7) == 0);
        if (rc == 1)
            assert_string_equal(old, c[i].tmpdir);
        env_free(env);
        pol_free(&pol);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(network_on_sets_every_proxy_variable),
        cmocka_unit_test(network_off_adds_only_sandbox_runtime),
        cmocka_unit_test(network_off_leaves_the_callers_variables_alone),
        cmocka_unit_test(sandbox_runtime_is_always_one_and_once),
        cmocka_unit_test(existing_proxy_variables_are_replaced_not_duplicated),
        cmocka_unit_test(duplicate_definitions_in_the_base_are_all_replaced),
        cmocka_unit_test(names_are_matched_whole),
        cmocka_unit_test(java_tool_options_are_appended_after_the_callers),
        cmocka_unit_test(long_java_tool_options_keep_the_proxy_settings_whole),
        cmocka_unit_test(git_ssh_command_names_the_given_binary),
        cmocka_unit_test(git_ssh_command_survives_a_plain_path),
        cmocka_unit_test(git_ssh_command_survives_spaces_and_quotes_in_the_path),
        cmocka_unit_test(custom_ports_are_reflected_everywhere),
        cmocka_unit_test(the_base_is_copied_not_shared),
        cmocka_unit_test(tmpdir_not_writable_inside_becomes_tmp),
    };

    return cmocka_run_group_tests_name("env", tests, NULL, NULL);
}
