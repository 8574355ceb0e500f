/* src/settings.c: srt's JSON settings → the policy. Every key lands where
 * it should or is refused by name; every malformed file is one line
 * "FILE: KEYPATH: what"; duplicate keys, wrong types and unknown keys are
 * errors at any depth. The JSON below is written with ' for " (q()). */
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

#include "src/env.h"
#include "src/settings.h"

#define FILE_NAME "s.json"
#define CWD       "/w/p"
#define HOME      "/home/u"

/* The two required objects, with room for more keys in each. */
#define NET(extra)   "'network':{'allowedDomains':[],'deniedDomains':[]" extra "}"
#define FS(extra)    "'filesystem':{'denyRead':[],'allowWrite':[],'denyWrite':[]" extra "}"
#define DOC(n, f, t) "{" n "," f t "}"
#define BASE(top)    DOC(NET(""), FS(""), top)

/* ---- helpers ------------------------------------------------------------ */

static char *q(const char *text)
{
    char *s = strdup(text);

    assert_non_null(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    return s;
}

static void policy_new(struct policy *pol)
{
    struct nf_err err = { 0 };

    if (pol_init(pol, CWD, HOME, &err) < 0)
        fail_msg("pol_init: %s", err.msg);
}

static void parse_ok(const char *text, struct srt_settings *s)
{
    struct nf_err err = { 0 };
    char *json = q(text);

    if (settings_parse(json, strlen(json), FILE_NAME, s, &err) != 0)
        fail_msg("settings %s should parse: %s", json, err.msg);
    free(json);
}

/* Parse and apply text into a fresh pol. */
static void load_ok(const char *text, struct policy *pol)
{
    struct srt_settings s;
    struct nf_err err = { 0 };

    policy_new(pol);
    parse_ok(text, &s);
    if (settings_apply(&s, pol, &err) != 0)
        fail_msg("settings %s should apply: %s", text, err.msg);
    settings_free(&s);
}

static void check_message(const char *what, const char *msg, const char *needle1,
                          const char *needle2)
{
    if (strncmp(msg, FILE_NAME ": ", strlen(FILE_NAME ": ")) != 0 &&
        strncmp(msg, FILE_NAME ":", strlen(FILE_NAME ":")) != 0)
        fail_msg("%s: message \"%s\" does not name the file", what, msg);
    if (strchr(msg, '\n'))
        fail_msg("%s: message \"%s\" is not one line", what, msg);
    if (needle1 && !strstr(msg, needle1))
        fail_msg("%s: message \"%s\" does not mention \"%s\"", what, msg, needle1);
    if (needle2 && !strstr(msg, needle2))
        fail_msg("%s: message \"%s\" does not mention \"%s\"", what, msg, needle2);
}

/* settings_parse refuses text; the message holds the needles. */
static void parse_error(const char *text, const char *needle1, const char *needle2)
{
    struct srt_settings s;
    struct nf_err err = { 0 };
    char *json = q(text);

    if (settings_parse(json, strlen(json), FILE_NAME, &s, &err) != -1)
        fail_msg("settings %s should not parse", json);
    check_message(json, err.msg, needle1, needle2);
    free(json);
}

/* text parses, and settings_apply refuses it. */
static void apply_error(const char *text, const char *needle1, const char *needle2)
{
    struct srt_settings s;
    struct policy pol;
    struct nf_err err = { 0 };

    policy_new(&pol);
    parse_ok(text, &s);
    if (settings_apply(&s, &pol, &err) != -1)
        fail_msg("settings %s should be refused", text);
    check_message(text, err.msg, needle1, needle2);
    settings_free(&s);
    pol_free(&pol);
}

static void assert_strv(const struct pol_strv *sv, const char *const *want, size_t n,
                        const char *what)
{
    if (sv->n != n)
        fail_msg("%s: want %zu entries, got %zu", what, n, sv->n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(sv->v[i], want[i]) != 0)
            fail_msg("%s[%zu]: want \"%s\", got \"%s\"", what, i, want[i], sv->v[i]);
}

/* ---- network ------------------------------------------------------------ */

static void network_lists_land_in_the_policy(void **state)
{
    static const char *const allow[] = { "example.com", "*.npmjs.org", "api.x.org:443" };
    static const char *const deny[] = { "evil.example.com", "*:22" };
    static const char *const addr[] = { "10.0.0.0/8", "fc00::/7" };
    struct policy pol;

    (void)state;
    load_ok(DOC("'network':{'allowedDomains':['example.com','*.npmjs.org','api.x.org:443'],"
                "'deniedDomains':['evil.example.com','*:22'],"
                "'deniedDomainReasons':{'*:22':'no ssh'},"
                "'deniedResolvedAddresses':['10.0.0.0/8','fc00::/7'],"
                "'allowAllUnixSockets':true}",
                FS(""), ""),
            &pol);
    assert_strv(&pol.allow_domain, allow, 3, "allow_domain");
    assert_strv(&pol.deny_domain, deny, 2, "deny_domain");
    assert_strv(&pol.deny_address, addr, 2, "deny_address");
    assert_int_equal(pol.n_deny_reasons, 1);
    assert_string_equal(pol.deny_reasons[0].host, "*:22");
    assert_string_equal(pol.deny_reasons[0].text, "no ssh");
    assert_true(pol.allow_all_unix_sockets);
    pol_free(&pol);
}

static void allow_all_unix_sockets_false_replaces_the_config(void **state)
{
    struct srt_settings s;
    struct policy pol;
    struct nf_err err = { 0 };

    (void)state;
    policy_new(&pol);
    pol.allow_all_unix_sockets = true; /* as an INI config set it */
    parse_ok(DOC(NET(",'allowAllUnixSockets':false"), FS(""), ""), &s);
    assert_int_equal(settings_apply(&s, &pol, &err), 0);
    assert_false(pol.allow_all_unix_sockets);
    settings_free(&s);
    pol_free(&pol);
}

static void bad_network_values_are_refused_by_index(void **state)
{
    (void)state;
    apply_error(DOC("'network':{'allowedDomains':['ok.com','*'],'deniedDomains':[]}", FS(""), ""),
                "network.allowedDomains[1]: ", NULL);
    apply_error(
        DOC("'network':{'allowedDomains':[],'deniedDomains':['http://x.com/']}", FS(""), ""),
        "network.deniedDomains[0]: ", NULL);
    apply_error(DOC(NET(",'deniedResolvedAddresses':['nope']"), FS(""), ""),
                "network.deniedResolvedAddresses[0]: ", "not an address");
    apply_error(DOC(NET(",'deniedDomainReasons':{'x y':'why'}"), FS(""), ""),
                "network.deniedDomainReasons[\"x y\"]: ", NULL);
    parse_error(DOC(NET(",'deniedDomainReasons':{'a.com':''}"), FS(""), ""),
                "network.deniedDomainReasons[\"a.com\"]: ", "must not be empty");
}

static void parent_proxy_maps_to_the_one_parent(void **state)
{
    struct policy pol;

    (void)state;
    load_ok(DOC(NET(",'parentProxy':{'http':'http://proxy.corp:8080'}"), FS(""), ""), &pol);
    assert_string_equal(pol.parent_proxy, "http://proxy.corp:8080");
    pol_free(&pol);
    load_ok(DOC(NET(",'parentProxy':{'https':'http://p:3128','http':'http://p:3128'}"), FS(""), ""),
            &pol);
    assert_string_equal(pol.parent_proxy, "http://p:3128");
    pol_free(&pol);
    load_ok(DOC(NET(",'parentProxy':{}"), FS(""), ""), &pol);
    assert_null(pol.parent_proxy);
    pol_free(&pol);
    apply_error(DOC(NET(",'parentProxy':{'https':'http://a:1','http':'http://b:2'}"), FS(""), ""),
                "network.parentProxy: ", "refuses");
    apply_error(DOC(NET(",'parentProxy':{'http':'socks5://a:1'}"), FS(""), ""),
                "network.parentProxy.http: ", NULL);
    parse_error(DOC(NET(",'parentProxy':{'http':3}"), FS(""), ""),
                "network.parentProxy.http: ", "expected a string");
    parse_error(DOC(NET(",'parentProxy':{'ftp':'x'}"), FS(""), ""),
                "network.parentProxy.ftp: ", "unknown key");
}

static void parent_no_proxy_replaces_the_environments(void **state)
{
    struct policy pol;
    char doc[2200], *list;

    (void)state;
    load_ok(
        DOC(NET(",'parentProxy':{'http':'http://a:1','noProxy':'x.com,.corp:8080'}"), FS(""), ""),
        &pol);
    assert_string_equal(pol.parent_proxy, "http://a:1");
    assert_string_equal(pol.parent_no_proxy, "x.com,.corp:8080");
    pol_free(&pol);
    /* Without a parent of its own the list still applies, to the parent
     * nsfence's environment names (srt: noProxy ?? NO_PROXY). */
    load_ok(DOC(NET(",'parentProxy':{'noProxy':'x.com'}"), FS(""), ""), &pol);
    assert_null(pol.parent_proxy);
    assert_string_equal(pol.parent_no_proxy, "x.com");
    pol_free(&pol);
    /* "" is an empty list: nothing exempt, the environment's NO_PROXY unused. */
    load_ok(DOC(NET(",'parentProxy':{'noProxy':''}"), FS(""), ""), &pol);
    assert_string_equal(pol.parent_no_proxy, "");
    pol_free(&pol);
    load_ok(DOC(NET(",'parentProxy':{'http':'http://a:1'}"), FS(""), ""), &pol);
    assert_null(pol.parent_no_proxy);
    pol_free(&pol);
    /* A list too long to keep whole is refused, not cut. */
    list = calloc(1, 1100);
    assert_non_null(list);
    memset(list, 'a', 1099);
    snprintf(doc, sizeof(doc), DOC(NET(",'parentProxy':{'noProxy':'%s'}"), FS(""), ""), list);
    apply_error(doc, "network.parentProxy.noProxy: ", "refuses");
    free(list);
}

static void proxy_ports_relay_their_endpoint_to_the_external_proxy(void **state)
{
    struct policy pol;

    (void)state;
    load_ok(DOC(NET(",'httpProxyPort':8080"), FS(""), ""), &pol);
    assert_int_equal(pol.http_relay_port, 8080);
    assert_int_equal(pol.socks_relay_port, 0);
    /* The endpoints inside keep their ports: the environment still names
     * localhost:3128 and :1080. */
    assert_int_equal(pol.http_port, POL_DEFAULT_HTTP_PORT);
    assert_int_equal(pol.socks_port, POL_DEFAULT_SOCKS_PORT);
    assert_true(pol.network_enabled);
    pol_free(&pol);
    load_ok(DOC(NET(",'socksProxyPort':1081"), FS(""), ""), &pol);
    assert_int_equal(pol.http_relay_port, 0);
    assert_int_equal(pol.socks_relay_port, 1081);
    pol_free(&pol);
    load_ok(DOC(NET(",'httpProxyPort':65535,'socksProxyPort':1"), FS(""), ""), &pol);
    assert_int_equal(pol.http_relay_port, 65535);
    assert_int_equal(pol.socks_relay_port, 1);
    pol_free(&pol);
    load_ok(BASE(""), &pol);
    assert_int_equal(pol.http_relay_port, 0);
    assert_int_equal(pol.socks_relay_port, 0);
    pol_free(&pol);
}

static void hardening_knobs_nsfence_already_obeys_are_accepted(void **state)
{
    struct policy pol;

    (void)state;
    load_ok(DOC(NET(",'strictAllowlist':true,'requireHostMatch':true,'refuseOpaqueTunnels':false,"
                    "'allowPlaintextHeaderSet':false,'stripResponseHeaders':[],"
                    "'ambiguousRequestTarget':'refuse'"),
                FS(""), ""),
            &pol);
    pol_free(&pol);
    load_ok(DOC(NET(",'strictAllowlist':false,'requireHostMatch':false"), FS(""), ""), &pol);
    pol_free(&pol);
    parse_error(DOC(NET(",'ambiguousRequestTarget':'maybe'"), FS(""), ""),
                "network.ambiguousRequestTarget: ", "expected \"refuse\"");
    parse_error(DOC(NET(",'stripResponseHeaders':['']"), FS(""), ""),
                "network.stripResponseHeaders[0]: ", "must not be empty");
}

static void keys_nsfence_cannot_honour_are_refused(void **state)
{
    static const struct {
        const char *doc;
        const char *path;
    } rows[] = {
        { DOC(NET(",'tlsTerminate':{}"), FS(""), ""), "network.tlsTerminate: " },
        { DOC(NET(",'mitmProxy':{'socketPath':'/s','domains':['a.com']}"), FS(""), ""),
          "network.mitmProxy: " },
        { DOC(NET(",'filterRequest':null"), FS(""), ""), "network.filterRequest: " },
        { DOC(NET(",'refuseOpaqueTunnels':true"), FS(""), ""), "network.refuseOpaqueTunnels: " },
        { DOC(NET(",'allowPlaintextHeaderSet':true"), FS(""), ""),
          "network.allowPlaintextHeaderSet: " },
        { DOC(NET(",'stripResponseHeaders':['set-cookie']"), FS(""), ""),
          "network.stripResponseHeaders: " },
        { DOC(NET(",'ambiguousRequestTarget':'asSpelled'"), FS(""), ""),
          "network.ambiguousRequestTarget: " },
        { BASE(",'credentials':{'awsPairs':[]}"), "credentials.awsPairs: " },
        { BASE(",'credentials':{'sigv4':{'streaming':'deny'}}"), "credentials.sigv4: " },
        { BASE(",'credentials':{'files':[{'path':'~/.aws','mode':'deny'},"
               "{'path':'~/.npmrc','mode':'mask'}]}"),
          "credentials.files[1]: " },
        { BASE(",'credentials':{'envVars':[{'name':'TOKEN','mode':'mask'}]}"),
          "credentials.envVars[0]: " },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        apply_error(rows[i].doc, rows[i].path, "cannot honour it and refuses to run");
}

static void settings_for_other_systems_and_tools_are_noted(void **state)
{
    static const char *const keys[] = {
        "network.allowUnixSockets",
        "network.allowLocalBinding",
        "network.allowMachLookup",
        "enableWeakerNetworkIsolation",
        "allowAppleEvents",
        "allowPty",
        "windows",
        "ripgrep",
        "seccomp",
        "bwrapPath",
        "socatPath",
        "javaAgentJarPath",
    };
    struct srt_settings s;
    struct policy pol;
    struct nf_err err = { 0 };

    (void)state;
    parse_ok(
        DOC(NET(",'allowUnixSockets':['/run/x.sock'],'allowLocalBinding':true,"
                "'allowMachLookup':['com.x.*']"),
            FS(""),
            ",'enableWeakerNetworkIsolation':false,'allowAppleEvents':true,'allowPty':true,"
            "'windows':{'backend':'mxc'},'ripgrep':{'command':'rg','args':['-u'],'argv0':'rg'},"
            "'seccomp':{'applyPath':'/x','argv0':'a'},'bwrapPath':'/usr/bin/bwrap',"
            "'socatPath':'/usr/bin/socat','javaAgentJarPath':'/opt/a.jar'"),
        &s);
    assert_int_equal(s.notes.n, sizeof(keys) / sizeof(keys[0]));
    for (size_t i = 0; i < s.notes.n; i++) {
        char want[128];

        snprintf(want, sizeof(want), FILE_NAME ": %s: ignored: ", keys[i]);
        if (strncmp(s.notes.v[i], want, strlen(want)) != 0)
            fail_msg("note %zu: want \"%s...\", got \"%s\"", i, want, s.notes.v[i]);
    }
    policy_new(&pol);
    assert_int_equal(settings_apply(&s, &pol, &err), 0);
    settings_free(&s);
    pol_free(&pol);
    parse_error(BASE(",'bwrapPath':'bwrap'"), "bwrapPath: ", "Binary path must be absolute");
    parse_error(BASE(",'socatPath':''"), "socatPath: ", "Path cannot be empty");
    parse_error(BASE(",'ripgrep':{'args':[]}"), "ripgrep.command: ", "required");
    parse_error(BASE(",'ripgrep':{'command':'rg','x':1}"), "ripgrep.x: ", "unknown key");
    parse_error(BASE(",'seccomp':{'command':'x'}"), "seccomp.command: ", "unknown key");
    parse_error(BASE(",'windows':[]"), "windows: ", "expected an object");
    parse_error(BASE(",'allowPty':1"), "allowPty: ", "expected true or false");
}

/* ---- filesystem --------------------------------------------------------- */

static void filesystem_lists_take_the_config_rules(void **state)
{
    static const char *const deny_read[] = { "/home/u/.ssh", "/w/p/secrets/*.pem", "/etc/x" };
    static const char *const allow_read[] = { "/home/u/.ssh/known_hosts" };
    static const char *const allow_write[] = { "/w/p", "/w/p/build", "/var/tmp/c" };
    static const char *const deny_write[] = { "/w/p/.env" };
    struct policy pol;

    (void)state;
    load_ok(DOC(NET(""),
                "'filesystem':{'denyRead':['~/.ssh','secrets/*.pem','/etc/x/'],"
                "'allowRead':['~/.ssh/known_hosts'],"
                "'allowWrite':['.','build/**','/var/tmp/c'],'denyWrite':['./.env'],"
                "'allowGitConfig':true}",
                ",'mandatoryDenySearchDepth':5"),
            &pol);
    assert_strv(&pol.deny_read, deny_read, 3, "deny_read");
    assert_strv(&pol.allow_read, allow_read, 1, "allow_read");
    assert_strv(&pol.allow_write, allow_write, 3, "allow_write");
    assert_strv(&pol.deny_write, deny_write, 1, "deny_write");
    assert_int_equal(pol.literal_paths.n, 0);
    assert_true(pol.allow_git_config);
    assert_int_equal(pol.mandatory_deny_depth, 5);
    pol_free(&pol);
}

static void literal_entries_are_never_globs(void **state)
{
    static const char *const deny_read[] = { "/w/p/[WIP]/a*.txt", "/w/p/d/**" };
    static const char *const allow_write[] = { "/w/p", "/w/p/x*y", "/w/p/out/**" };
    struct policy pol;

    (void)state;
    load_ok(DOC(NET(""),
                "'filesystem':{'denyRead':[{'path':'[WIP]/a*.txt','literal':true},"
                "{'path':'d/**','literal':true}],"
                "'allowWrite':[{'literal':true,'path':'x*y'},{'path':'out/**','literal':true}],"
                "'denyWrite':[]}",
                ""),
            &pol);
    assert_strv(&pol.deny_read, deny_read, 2, "deny_read");
    assert_strv(&pol.literal_paths, deny_read, 2, "literal_paths");
    assert_strv(&pol.allow_write, allow_write, 3, "allow_write");
    pol_free(&pol);
    /* A literal with no glob syntax is just the path. */
    load_ok(DOC(NET(""), FS(",'allowRead':[{'path':'/plain','literal':true}]"), ""), &pol);
    assert_int_equal(pol.literal_paths.n, 0);
    pol_free(&pol);
}

static void one_spelling_cannot_be_both_glob_and_literal(void **state)
{
    (void)state;
    apply_error(DOC(NET(""),
                    "'filesystem':{'denyRead':['/a/*.txt'],"
                    "'allowRead':[{'path':'/a/*.txt','literal':true}],"
                    "'allowWrite':[],'denyWrite':[]}",
                    ""),
                "filesystem.allowRead[0]: ", "both as a glob and as a literal");
    apply_error(DOC(NET(""),
                    "'filesystem':{'denyRead':[{'path':'/a/*.txt','literal':true}],"
                    "'allowRead':['/a/*.txt'],'allowWrite':[],'denyWrite':[]}",
                    ""),
                "filesystem.allowRead[0]: ", "both as a glob and as a literal");
}

static void filesystem_entry_errors_name_the_entry(void **state)
{
    static const char shape[] = "Expected a path, or { \"path\": \"<path>\", \"literal\": true }";

    (void)state;
    parse_error(DOC(NET(""), FS(",'allowRead':['/a',{'path':'/b'}]"), ""),
                "filesystem.allowRead[1]: ", shape);
    parse_error(DOC(NET(""), FS(",'allowRead':[{'path':'/b','literal':false}]"), ""),
                "filesystem.allowRead[0]: ", shape);
    parse_error(DOC(NET(""), FS(",'allowRead':[{'path':'/b','literal':true,'x':1}]"), ""),
                "filesystem.allowRead[0]: ", shape);
    parse_error(DOC(NET(""), FS(",'allowRead':[7]"), ""), "filesystem.allowRead[0]: ", shape);
    parse_error(DOC(NET(""), FS(",'allowRead':['']"), ""),
                "filesystem.allowRead[0]: ", "Path cannot be empty");
    parse_error(DOC(NET(""), FS(",'allowRead':[{'path':'','literal':true}]"), ""),
                "filesystem.allowRead[0]: ", "Path cannot be empty");
    parse_error(DOC(NET(""), FS(",'allowRead':'/a'"), ""),
                "filesystem.allowRead: ", "expected an array");
    parse_error(
        DOC(NET(""), "'filesystem':{'denyRead':['~/logs/*/'],'allowWrite':[],'denyWrite':[]}", ""),
        "filesystem.denyRead[0]: ",
        "Deny glob \"~/logs/*/\" ends in a separator, so as a pattern it can match no "
        "path. Write \"~/logs/*\"");
    parse_error(
        DOC(NET(""), "'filesystem':{'denyRead':[],'allowWrite':[],'denyWrite':['/w/[a]/']}", ""),
        "filesystem.denyWrite[0]: ", "ends in a separator");
    /* Not rooted, or literal: live. */
    parse_error(DOC(NET(""), FS(",'x':1"), ""), "filesystem.x: ", "unknown key");
    apply_error(
        DOC(NET(""), "'filesystem':{'denyRead':[],'allowWrite':['/w/*.log'],'denyWrite':[]}", ""),
        "filesystem.allowWrite[0]: ", "not other globs");
    apply_error(DOC(NET(""), "'filesystem':{'denyRead':['/*'],'allowWrite':[],'denyWrite':[]}", ""),
                "filesystem.denyRead[0]: ", "whole file system");
    apply_error(
        DOC(NET(""), "'filesystem':{'denyRead':['~user/x'],'allowWrite':[],'denyWrite':[]}", ""),
        "filesystem.denyRead[0]: ", NULL);
}

static void trailing_separator_deny_entries_that_are_live_parse(void **state)
{
    struct srt_settings s;

    (void)state;
    parse_ok(DOC(NET(""),
                 "'filesystem':{'denyRead':['logs/*/',{'path':'/w/[a]/','literal':true},'/plain/'],"
                 "'allowWrite':[],'denyWrite':[]}",
                 ""),
             &s);
    settings_free(&s);
}

static void depth_is_an_integer_from_1_to_10(void **state)
{
    struct policy pol;

    (void)state;
    load_ok(BASE(",'mandatoryDenySearchDepth':3.0"), &pol);
    assert_int_equal(pol.mandatory_deny_depth, 3);
    pol_free(&pol);
    load_ok(BASE(",'mandatoryDenySearchDepth':10"), &pol);
    assert_int_equal(pol.mandatory_deny_depth, 10);
    pol_free(&pol);
    parse_error(BASE(",'mandatoryDenySearchDepth':0"),
                "mandatoryDenySearchDepth: ", "expected an integer from 1 to 10");
    parse_error(BASE(",'mandatoryDenySearchDepth':11"), "mandatoryDenySearchDepth: ", NULL);
    parse_error(BASE(",'mandatoryDenySearchDepth':2.5"), "mandatoryDenySearchDepth: ", NULL);
    parse_error(BASE(",'mandatoryDenySearchDepth':'3'"), "mandatoryDenySearchDepth: ", NULL);
    parse_error(BASE(",'mandatoryDenySearchDepth':1e300"), "mandatoryDenySearchDepth: ", NULL);
    parse_error(DOC(NET(",'httpProxyPort':0"), FS(""), ""),
                "network.httpProxyPort: ", "expected an integer from 1 to 65535");
    parse_error(DOC(NET(",'socksProxyPort':99999999999999999999"), FS(""), ""), "s.json:", NULL);
}

/* ---- the rest ----------------------------------------------------------- */

static void credential_denies_hide_the_variable_and_the_file(void **state)
{
    static const char *const unset[] = { "GITHUB_TOKEN", "_X1" };
    static const char *const deny_read[] = { "/home/u/.aws", "/w/p/a*b" };
    struct policy pol;

    (void)state;
    load_ok(BASE(",'credentials':{'envVars':[{'name':'GITHUB_TOKEN','mode':'deny'},"
                 "{'name':'_X1','mode':'deny','extract':'x'}],"
                 "'files':[{'path':'~/.aws','mode':'deny'},{'path':'a*b','mode':'deny'}],"
                 "'allowPlaintextInject':false}"),
            &pol);
    assert_strv(&pol.env_unset, unset, 2, "env_unset");
    assert_strv(&pol.deny_read, deny_read, 2, "deny_read");
    /* A pattern, expanded as denyRead's are (srt's denyOnly expands both). */
    assert_false(pol_strv_contains(&pol.literal_paths, "/w/p/a*b"));
    pol_free(&pol);
}

static void credential_entry_errors_name_the_entry(void **state)
{
    (void)state;
    parse_error(BASE(",'credentials':{'envVars':[{'name':'1X','mode':'deny'}]}"),
                "credentials.envVars[0].name: ", "Environment variable name must start");
    parse_error(BASE(",'credentials':{'envVars':[{'name':'X'}]}"),
                "credentials.envVars[0].mode: ", "required");
    parse_error(BASE(",'credentials':{'envVars':[{'mode':'deny'}]}"),
                "credentials.envVars[0].name: ", "required");
    parse_error(BASE(",'credentials':{'files':[{'path':'/a','mode':'hide'}]}"),
                "credentials.files[0].mode: ", "expected \"deny\" or \"mask\"");
    parse_error(BASE(",'credentials':{'files':[{'path':'','mode':'deny'}]}"),
                "credentials.files[0].path: ", NULL);
    parse_error(BASE(",'credentials':{'files':[{'path':'/a','mode':'deny','injectHost':[]}]}"),
                "credentials.files[0].injectHost: ", "unknown key");
    parse_error(
        BASE(",'credentials':{'envVars':[{'name':'X','mode':'deny','maskDuplicates':true}]}"),
        "credentials.envVars[0].maskDuplicates: ", "unknown key");
    parse_error(BASE(",'credentials':{'injectHosts':[]}"),
                "credentials.injectHosts: ", "unknown key");
    parse_error(BASE(",'credentials':{'files':{}}"), "credentials.files: ", "expected an array");
    parse_error(BASE(",'credentials':{'files':[{'path':'/a','mode':'deny','decode':'b64'}]}"),
                "credentials.files[0].decode: ", "expected \"jwt\"");
}

static void ignore_violations_become_per_command_ignores(void **state)
{
    static const char *const star[] = { "/w/p/.cache", "node_modules" };
    static const char *const npm[] = { "/tmp" };
    struct policy pol;

    (void)state;
    load_ok(BASE(",'ignoreViolations':{'*':['/w/p/.cache','node_modules','','node_modules'],"
                 "'npm test':['/tmp'],'make':['']}"),
            &pol);
    /* srt's keys as they are; an empty pattern (which would hide all) and
     * repeats dropped, and with them an entry left with nothing */
    assert_int_equal(pol.n_ignore_violations, 2);
    assert_string_equal(pol.ignore_violations[0].command, "*");
    assert_strv(&pol.ignore_violations[0].patterns, star, 2, "*");
    assert_string_equal(pol.ignore_violations[1].command, "npm test");
    assert_strv(&pol.ignore_violations[1].patterns, npm, 1, "npm test");
    /* the INI's line-substring ignores are another thing */
    assert_int_equal(pol.monitor_ignore.n, 0);
    pol_free(&pol);
    parse_error(BASE(",'ignoreViolations':{'*':'/x'}"),
                "ignoreViolations[\"*\"]: ", "expected an array of strings");
    parse_error(BASE(",'ignoreViolations':{'*':[1]}"),
                "ignoreViolations[\"*\"][0]: ", "expected a string");
}

static void nested_sandbox_flags(void **state)
{
    struct policy pol;

    (void)state;
    load_ok(BASE(",'enableWeakerNestedSandbox':true,'allowNestedUserNamespaces':false"), &pol);
    assert_true(pol.proc_host);
    assert_false(pol.nested_userns);
    pol_free(&pol);
    load_ok(BASE(",'enableWeakerNestedSandbox':false"), &pol);
    assert_false(pol.proc_host);
    assert_false(pol.nested_userns);
    pol_free(&pol);
    load_ok(BASE(",'allowNestedUserNamespaces':true"), &pol);
    assert_true(pol.nested_userns);
    pol_free(&pol);
}

/* {"nsfence": {"mode": ...}}: a key of ours beside srt's. */
static void nsfence_mode_key(void **state)
{
    struct policy pol;

    (void)state;
    load_ok(BASE(",'nsfence':{'mode':'landlock'}"), &pol);
    assert_int_equal(pol.mode, POL_MODE_LANDLOCK);
    pol_free(&pol);
    load_ok(BASE(",'nsfence':{'mode':'auto'}"), &pol);
    assert_int_equal(pol.mode, POL_MODE_AUTO);
    pol_free(&pol);
    load_ok(BASE(""), &pol);
    assert_int_equal(pol.mode, POL_MODE_NAMESPACES);
    pol_free(&pol);
    parse_error(BASE(",'nsfence':{'mode':'chroot'}"), "nsfence.mode: ", "\"namespaces\"");
    parse_error(BASE(",'nsfence':{'mode':1}"), "nsfence.mode: ", "\"landlock\"");
    parse_error(BASE(",'nsfence':{'modes':'landlock'}"), "nsfence.modes: ", "unknown key");
    parse_error(BASE(",'nsfence':'landlock'"), "nsfence: ", "expected an object");
}

static void filesystem_disabled_is_honoured(void **state)
{
    struct policy pol;

    (void)state;
    load_ok(DOC(NET(""), FS(",'disabled':true"), ""), &pol);
    assert_true(pol.fs_disabled);
    pol_free(&pol);
    load_ok(DOC(NET(""), FS(",'disabled':false"), ""), &pol);
    assert_false(pol.fs_disabled);
    pol_free(&pol);
}

static void git_safe_directories_reach_the_environment(void **state)
{
    static const char *const dirs[] = { "/repo", "/", "~/w" };
    static char *base[] = { "PATH=/bin", "GIT_CONFIG_COUNT=2", "TOKEN=s", "TOKEN=t", NULL };
    static const char *const want[] = {
        "GIT_CONFIG_KEY_2=safe.directory",
        "GIT_CONFIG_VALUE_2=/repo",
        "GIT_CONFIG_KEY_3=safe.directory",
        "GIT_CONFIG_VALUE_3=/repo/*",
        "GIT_CONFIG_VALUE_4=/",
        "GIT_CONFIG_VALUE_5=/*",
        "GIT_CONFIG_VALUE_6=~/w",
        "GIT_CONFIG_VALUE_7=~/w/*",
        "GIT_CONFIG_COUNT=8",
    };
    struct policy pol;
    struct nf_err err = { 0 };
    char **env = NULL;

    (void)state;
    load_ok(BASE(",'git':{'safeDirectories':['/repo//','/','','~/w','/repo']},"
                 "'credentials':{'envVars':[{'name':'TOKEN','mode':'deny'}]}"),
            &pol);
    assert_strv(&pol.git_safe_dirs, dirs, 3, "git_safe_dirs");
    pol.network_enabled = false;
    assert_int_equal(env_build(base, &pol, NULL, &env, &err), 0);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        bool found = false;

        for (size_t j = 0; env[j] && !found; j++)
            found = strcmp(env[j], want[i]) == 0;
        if (!found)
            fail_msg("environment lacks %s", want[i]);
    }
    for (size_t j = 0; env[j]; j++)
        if (strncmp(env[j], "TOKEN=", 6) == 0)
            fail_msg("a denied variable is inside: %s", env[j]);
    env_free(env);
    pol_free(&pol);
    parse_error(BASE(",'git':{'safeDirectory':[]}"), "git.safeDirectory: ", "unknown key");
}

static void git_count_zero_opts_out_and_many_dirs_become_a_star(void **state)
{
    static char *zero[] = { "GIT_CONFIG_COUNT=0", NULL };
    static char *none[] = { "A=1", NULL };
    struct policy pol;
    struct nf_err err = { 0 };
    char **env = NULL;

    (void)state;
    load_ok(BASE(",'git':{'safeDirectories':['/1','/2','/3','/4','/5','/6','/7','/8','/9']}"),
            &pol);
    pol.network_enabled = false;
    assert_int_equal(env_build(zero, &pol, NULL, &env, &err), 0);
    for (size_t j = 0; env[j]; j++)
        assert_null(strstr(env[j], "GIT_CONFIG_KEY"));
    env_free(env);
    assert_int_equal(env_build(none, &pol, NULL, &env, &err), 0);
    {
        bool star = false, count = false;

        for (size_t j = 0; env[j]; j++) {
            star |= strcmp(env[j], "GIT_CONFIG_VALUE_0=*") == 0;
            count |= strcmp(env[j], "GIT_CONFIG_COUNT=1") == 0;
        }
        assert_true(star && count);
    }
    env_free(env);
    pol_free(&pol);
}

/* ---- shape of the file -------------------------------------------------- */

static void type_errors_name_the_key_path(void **state)
{
    (void)state;
    parse_error(
        DOC("'network':{'allowedDomains':['a.com','b.com',3],'deniedDomains':[]}", FS(""), ""),
        "s.json: network.allowedDomains[2]: expected a string", NULL);
    parse_error(DOC("'network':{'allowedDomains':'a.com','deniedDomains':[]}", FS(""), ""),
                "network.allowedDomains: ", "expected an array of strings");
    parse_error(DOC(NET(",'strictAllowlist':'yes'"), FS(""), ""),
                "network.strictAllowlist: ", "expected true or false");
    parse_error("{'network':[],'filesystem':{}}", "s.json: network: ", "expected an object");
    parse_error(DOC(NET(""), "'filesystem':null", ""), "filesystem: ", "expected an object");
    parse_error("[]", "s.json: (root): expected an object", NULL);
    parse_error("\"x\"", "(root)", NULL);
    parse_error(DOC(NET(""), FS(""), ",'git':[]"), "git: ", "expected an object");
    parse_error(DOC(NET(""), FS(""), ",'enableWeakerNestedSandbox':null"),
                "enableWeakerNestedSandbox: ", "expected true or false");
}

static void unknown_keys_are_errors_at_every_depth(void **state)
{
    (void)state;
    parse_error(DOC(NET(",'allowedDomain':[]"), FS(""), ""),
                "network.allowedDomain: ", "unknown key");
    parse_error(DOC(NET(""), FS(",'allowGitconfig':true"), ""),
                "filesystem.allowGitconfig: ", "unknown key");
    parse_error(BASE(",'credentials':{'files':[{'path':'/a','mode':'deny','x':1}]}"),
                "credentials.files[0].x: ", "unknown key");
    /* srt strips these; nsfence refuses them (see settings.h). */
    parse_error(BASE(",'$schema':'x'"), "s.json: $schema: ", "unknown key");
    parse_error(BASE(",'enableWeakerNestedSandBox':true"),
                "enableWeakerNestedSandBox: ", "unknown key");
}

static void required_keys_are_required(void **state)
{
    (void)state;
    parse_error("{" FS("") "}", "s.json: network: required", NULL);
    parse_error("{" NET("") "}", "s.json: filesystem: required", NULL);
    parse_error(DOC("'network':{'deniedDomains':[]}", FS(""), ""),
                "network.allowedDomains: ", "required");
    parse_error(DOC("'network':{'allowedDomains':[]}", FS(""), ""),
                "network.deniedDomains: ", "required");
    parse_error(DOC(NET(""), "'filesystem':{'allowWrite':[],'denyWrite':[]}", ""),
                "filesystem.denyRead: ", "required");
    parse_error(DOC(NET(""), "'filesystem':{'denyRead':[],'denyWrite':[]}", ""),
                "filesystem.allowWrite: ", "required");
    parse_error(DOC(NET(""), "'filesystem':{'denyRead':[],'allowWrite':[]}", ""),
                "filesystem.denyWrite: ", "required");
}

static void duplicate_keys_are_errors(void **state)
{
    (void)state;
    parse_error("{'network':{'allowedDomains':[],'allowedDomains':['a.com'],'deniedDomains':[]},"
                "'filesystem':{'denyRead':[],'allowWrite':[],'denyWrite':[]}}",
                "s.json:1:", "duplicate object key near '\"allowedDomains\"'");
    parse_error(BASE(",'allowPty':true,'allowPty':false"), "duplicate object key", NULL);
    parse_error(BASE(",'ignoreViolations':{'*':[],'*':['/x']}"), "duplicate object key", NULL);
}

static void broken_and_empty_files_are_errors(void **state)
{
    (void)state;
    parse_error("", "s.json: is empty. Delete it, or put a config in it.", NULL);
    parse_error(" \n\t\r\n", "s.json: is empty", NULL);
    parse_error("{", "s.json:1:", "not valid JSON");
    parse_error("{'network':{}} x", "not valid JSON", NULL);
    parse_error(BASE("") "\n\n//comment", "s.json:3:", "not valid JSON");
    parse_error("{'a':'\\u0000'}", "not valid JSON", NULL);
    {
        static const char nul[] = "{\"network\"\0:1}";
        struct srt_settings s;
        struct nf_err err = { 0 };

        assert_int_equal(settings_parse(nul, sizeof(nul) - 1, FILE_NAME, &s, &err), -1);
        check_message("NUL", err.msg, "not valid JSON", NULL);
    }
}

static void error_messages_carry_no_control_characters(void **state)
{
    struct srt_settings s;
    struct nf_err err = { 0 };
    static const char text[] = "{\"network\":{\"a\\nb\\u001b[31m\":1}}";

    (void)state;
    assert_int_equal(settings_parse(text, strlen(text), FILE_NAME, &s, &err), -1);
    for (const char *p = err.msg; *p; p++)
        if ((unsigned char)*p < 0x20)
            fail_msg("control character in \"%s\"", err.msg);
    check_message(text, err.msg, "network.a?b?[31m: unknown key", NULL);
}

/* ---- settings_load ------------------------------------------------------ */

static char dir[] = "/var/tmp/test_settings.XXXXXX";

static int dir_setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int dir_teardown(void **state)
{
    char cmd[PATH_MAX + 16];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void load_reads_files_and_refuses_bad_ones(void **state)
{
    char path[PATH_MAX];
    struct srt_settings s;
    struct nf_err err = { 0 };
    char *json = q(BASE(""));

    (void)state;
    snprintf(path, sizeof(path), "%s/ok.json", dir);
    write_file(path, json);
    free(json);
    assert_int_equal(settings_load(path, &s, &err), 0);
    assert_string_equal(s.file, path);
    settings_free(&s);

    snprintf(path, sizeof(path), "%s/missing.json", dir);
    assert_int_equal(settings_load(path, &s, &err), -1);
    assert_non_null(strstr(err.msg, "No such file"));
    assert_non_null(strstr(err.msg, path));

    snprintf(path, sizeof(path), "%s/empty.json", dir);
    write_file(path, "  \n");
    assert_int_equal(settings_load(path, &s, &err), -1);
    assert_non_null(strstr(err.msg, "is empty"));

    assert_int_equal(settings_load(dir, &s, &err), -1);
    assert_non_null(strstr(err.msg, "is a directory"));

    snprintf(path, sizeof(path), "%s/bad.json", dir);
    write_file(path, "{\"network\":1}");
    assert_int_equal(settings_load(path, &s, &err), -1);
    assert_non_null(strstr(err.msg, "network: expected an object"));
    assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(network_lists_land_in_the_policy),
        cmocka_unit_test(allow_all_unix_sockets_false_replaces_the_config),
        cmocka_unit_test(bad_network_values_are_refused_by_index),
        cmocka_unit_test(parent_proxy_maps_to_the_one_parent),
        cmocka_unit_test(parent_no_proxy_replaces_the_environments),
        cmocka_unit_test(proxy_ports_relay_their_endpoint_to_the_external_proxy),
        cmocka_unit_test(hardening_knobs_nsfence_already_obeys_are_accepted),
        cmocka_unit_test(keys_nsfence_cannot_honour_are_refused),
        cmocka_unit_test(settings_for_other_systems_and_tools_are_noted),
        cmocka_unit_test(filesystem_lists_take_the_config_rules),
        cmocka_unit_test(literal_entries_are_never_globs),
        cmocka_unit_test(one_spelling_cannot_be_both_glob_and_literal),
        cmocka_unit_test(filesystem_entry_errors_name_the_entry),
        cmocka_unit_test(trailing_separator_deny_entries_that_are_live_parse),
        cmocka_unit_test(depth_is_an_integer_from_1_to_10),
        cmocka_unit_test(credential_denies_hide_the_variable_and_the_file),
        cmocka_unit_test(credential_entry_errors_name_the_entry),
        cmocka_unit_test(ignore_violations_become_per_command_ignores),
        cmocka_unit_test(nested_sandbox_flags),
        cmocka_unit_test(nsfence_mode_key),
        cmocka_unit_test(filesystem_disabled_is_honoured),
        cmocka_unit_test(git_safe_directories_reach_the_environment),
        cmocka_unit_test(git_count_zero_opts_out_and_many_dirs_become_a_star),
        cmocka_unit_test(type_errors_name_the_key_path),
        cmocka_unit_test(unknown_keys_are_errors_at_every_depth),
        cmocka_unit_test(required_keys_are_required),
        cmocka_unit_test(duplicate_keys_are_errors),
        cmocka_unit_test(broken_and_empty_files_are_errors),
        cmocka_unit_test(error_messages_carry_no_control_characters),
        cmocka_unit_test_setup_teardown(load_reads_files_and_refuses_bad_ones, dir_setup,
                                        dir_teardown),
    };

    return cmocka_run_group_tests_name("settings", tests, NULL, NULL);
}
