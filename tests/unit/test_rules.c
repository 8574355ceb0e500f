/* proxy/rules.c: srt's domain patterns, the deny/allow decision and the
 * resolved-address guard, over canonical hosts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "proxy/rules.h"

static struct px_addr addr_of(const char *s)
{
    struct px_addr a;

    if (px_addr_parse(s, &a) < 0)
        fail_msg("test fixture %s is not an address", s);
    return a;
}

/* ---- pattern parsing ---------------------------------------------------- */

struct accept_case {
    const char *in;
    enum px_pattern_kind kind;
    const char *host;
    unsigned port;
    bool is_ip;
};

static void check_accepts(const struct accept_case *c, size_t n, bool deny_list)
{
    for (size_t i = 0; i < n; i++) {
        struct px_pattern p;
        struct nf_err err = { 0 };

        if (px_pattern_parse(c[i].in, deny_list, &p, &err) != 0)
            fail_msg("\"%s\" should be accepted: %s", c[i].in, err.msg);
        if (p.kind != c[i].kind || strcmp(p.host, c[i].host) != 0 || p.port != c[i].port ||
            p.is_ip != c[i].is_ip)
            fail_msg("\"%s\": got kind %d host \"%s\" port %u ip %d", c[i].in, p.kind, p.host,
                     p.port, p.is_ip);
        if (p.is_ip) {
            struct px_addr want = addr_of(c[i].host);

            if (!px_addr_equal(&p.addr, &want))
                fail_msg("\"%s\": address differs from host text", c[i].in);
        }
    }
}

static void check_rejects(const char *const *in, size_t n, bool deny_list)
{
    for (size_t i = 0; i < n; i++) {
        struct px_pattern p;
        struct nf_err err = { 0 };

        if (px_pattern_parse(in[i], deny_list, &p, &err) != -1)
            fail_msg("\"%s\" should be rejected in a%s list", in[i],
                     deny_list ? " deny" : "n allow");
        if (err.msg[0] == '\0' || strchr(err.msg, '\n'))
            fail_msg("\"%s\": want a one-line reason, got \"%s\"", in[i], err.msg);
    }
}

static const struct accept_case common_accepts[] = {
    { "example.com", PX_PAT_EXACT, "example.com", 0, false },
    { "EXAMPLE.com.", PX_PAT_EXACT, "example.com", 0, false },
    { "localhost", PX_PAT_EXACT, "localhost", 0, false },
    { "LocalHost.", PX_PAT_EXACT, "localhost", 0, false },
    { "localhost:3000", PX_PAT_EXACT, "localhost", 3000, false },
    { "_dmarc.example.com", PX_PAT_EXACT, "_dmarc.example.com", 0, false },
    { "*.example.com", PX_PAT_WILDCARD, "example.com", 0, false },
    { "*.Example.COM.", PX_PAT_WILDCARD, "example.com", 0, false },
    { "*.a.b", PX_PAT_WILDCARD, "a.b", 0, false },
    { "*.co.uk", PX_PAT_WILDCARD, "co.uk", 0, false },
    { "x.y:443", PX_PAT_EXACT, "x.y", 443, false },
    { "example.com:1", PX_PAT_EXACT, "example.com", 1, false },
    { "example.com:65535", PX_PAT_EXACT, "example.com", 65535, false },
    { "*.example.com:8443", PX_PAT_WILDCARD, "example.com", 8443, false },
    { "[::1]", PX_PAT_EXACT, "::1", 0, true },
    { "[::1]:8080", PX_PAT_EXACT, "::1", 8080, true },
    { "[2001:DB8:0:0::1]:443", PX_PAT_EXACT, "2001:db8::1", 443, true },
    { "[::ffff:127.0.0.1]", PX_PAT_EXACT, "127.0.0.1", 0, true },
    { "[fe80::1%eth0]", PX_PAT_EXACT, "fe80::1", 0, true },
    { "127.0.0.1", PX_PAT_EXACT, "127.0.0.1", 0, true },
    { "127.1", PX_PAT_EXACT, "127.0.0.1", 0, true },
    { "0x7f.0.0.1", PX_PAT_EXACT, "127.0.0.1", 0, true },
    { "10.0.0.1:22", PX_PAT_EXACT, "10.0.0.1", 22, true },
};

/* Rejected in both lists. */
static const char *const common_rejects[] = {
    "",
    "*.com",
    "*.com.",
    "*.",
    "*..com",
    "*.example.",
    "*.localhost",
    "*.1.2.3.4",
    "*example.com",
    "**.example.com",
    "*.*.example.com",
    "ex*ample.com",
    "example.*",
    "http://x",
    "https://example.com",
    "a/b",
    "example.com/",
    "foo",
    "foo.",
    "com",
    "2130706433",
    "::1",
    "2001:db8::1",
    "2001:db8::1:443",
    "fe80::1",
    "example.com:443:443",
    "[::1",
    "[::1]junk",
    "[::1]:0",
    "[::1]:",
    "[::1]:65536",
    "[::1]:0443",
    "[example.com]",
    "[1.2.3.4]",
    "[]",
    "example.com:0",
    "example.com:",
    "example.com:080",
    "example.com:65536",
    "example.com:99999",
    "example.com:123456",
    "example.com:+1",
    "example.com: 1",
    "example.com:https",
    "example.com:44x",
    "[::1]:4x3",
    "evil.com:443.allowed.com",
    ":443",
    "exa mple.com",
    "user@example.com",
    "%65xample.com",
    ".example.com",
    "example..com",
    "1.2.3.4.5",
    "example.com\n",
    "*:0",
};

static void allow_list_accepts_srt_patterns(void **state)
{
    (void)state;
    check_accepts(common_accepts, sizeof(common_accepts) / sizeof(common_accepts[0]), false);
}

static void deny_list_accepts_srt_patterns(void **state)
{
    (void)state;
    check_accepts(common_accepts, sizeof(common_accepts) / sizeof(common_accepts[0]), true);
}

static void invalid_patterns_are_rejected_with_a_reason(void **state)
{
    (void)state;
    check_rejects(common_rejects, sizeof(common_rejects) / sizeof(common_rejects[0]), false);
    check_rejects(common_rejects, sizeof(common_rejects) / sizeof(common_rejects[0]), true);
}

static void star_is_valid_only_in_a_deny_list(void **state)
{
    static const char *const allow_rejects[] = { "*", "*:22", "*:443" };
    static const struct accept_case deny_accepts[] = {
        { "*", PX_PAT_ANY, "", 0, false },
        { "*:22", PX_PAT_ANY, "", 22, false },
    };

    (void)state;
    check_rejects(allow_rejects, sizeof(allow_rejects) / sizeof(allow_rejects[0]), false);
    check_accepts(deny_accepts, sizeof(deny_accepts) / sizeof(deny_accepts[0]), true);
}

static void rejection_names_the_entry(void **state)
{
    struct px_pattern p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(px_pattern_parse("*.com", false, &p, &err), -1);
    assert_non_null(strstr(err.msg, "*.com"));
    assert_int_equal(px_pattern_parse("*", false, &p, &err), -1);
    assert_non_null(strstr(err.msg, "deny list"));
    assert_int_equal(px_pattern_parse("2001:db8::1", true, &p, &err), -1);
    assert_non_null(strstr(err.msg, "bracket"));
}

static void overlong_patterns_are_rejected(void **state)
{
    char s[400];
    struct px_pattern p;
    struct nf_err err = { 0 };

    (void)state;
    /* 62 labels of "abc." plus "com": 251 characters, a valid name */
    memset(s, 0, sizeof(s));
    for (int i = 0; i < 62; i++)
        memcpy(s + 4 * i, "abc.", 4);
    memcpy(s + 248, "com", 3);
    assert_int_equal(px_pattern_parse(s, false, &p, &err), 0);
    assert_int_equal(strlen(p.host), 251);
    memcpy(s + 248, "comxyz", 6);
    assert_int_equal(px_pattern_parse(s, false, &p, &err), -1);
    memset(s, 'a', sizeof(s) - 1);
    s[10] = '.';
    s[sizeof(s) - 1] = '\0';
    assert_int_equal(px_pattern_parse(s, true, &p, &err), -1);
    assert_true(strlen(err.msg) < sizeof(err.msg));
}

/* ---- matching ----------------------------------------------------------- */

struct match_case {
    const char *pattern;
    bool deny_list;
    const char *host; /* as a client spells it; canonicalised here */
    unsigned port;
    bool match;
};

static void patterns_match_canonical_hosts(void **state)
{
    static const struct match_case c[] = {
        { "example.com", false, "example.com", 443, true },
        { "example.com", false, "EXAMPLE.COM.", 80, true },
        { "EXAMPLE.com.", false, "example.com", 80, true },
        { "example.com", false, "www.example.com", 443, false },
        { "example.com", false, "example.com.evil.org", 443, false },
        { "example.com", false, "notexample.com", 443, false },
        { "*.example.com", false, "api.example.com", 443, true },
        { "*.example.com", false, "A.B.Example.Com", 443, true },
        { "*.example.com", false, "example.com", 443, false },
        { "*.example.com", false, "example.com.", 443, false },
        { "*.example.com", false, "badexample.com", 443, false },
        { "*.example.com", false, "malicious-example.com", 443, false },
        { "*.example.com", false, "example.com.evil.org", 443, false },
        { "*.github.com", false, "raw.githubusercontent.com", 443, false },
        { "*.github.com", false, "github.com", 443, false },
        { "*.github.com", false, "api.github.com", 443, true },
        { "example.com:443", false, "example.com", 443, true },
        { "example.com:443", false, "example.com", 80, false },
        { "*.example.com:8443", false, "a.example.com", 8443, true },
        { "*.example.com:8443", false, "a.example.com", 443, false },
        { "127.0.0.1", false, "127.0.0.1", 80, true },
        { "127.0.0.1", false, "127.1", 80, true },
        { "127.0.0.1", false, "2130706433", 80, true },
        { "127.0.0.1", false, "0x7f.0.0.1", 80, true },
        { "127.0.0.1", false, "0177.0.0.1", 80, true },
        { "127.0.0.1", false, "::ffff:127.0.0.1", 80, true },
        { "127.0.0.1", false, "[::ffff:7f00:1]", 80, true },
        { "127.0.0.1", false, "127.0.0.2", 80, false },
        { "127.1", false, "127.0.0.1", 80, true },
        { "[::1]", false, "0:0:0:0:0:0:0:1", 1, true },
        { "[::1]", false, "[::1]", 65535, true },
        { "[::1]:8080", false, "::1", 8080, true },
        { "[::1]:8080", false, "::1", 80, false },
        { "[2001:db8::1]", false, "2001:DB8:0:0:0:0:0:1", 443, true },
        { "localhost", false, "LOCALHOST.", 80, true },
        { "localhost", false, "127.0.0.1", 80, false },
        { "*", true, "anything.example", 1, true },
        { "*", true, "10.0.0.1", 1, true },
        { "*:22", true, "github.com", 22, true },
        { "*:22", true, "github.com", 443, false },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct px_pattern p;
        struct nf_err err;
        char host[PX_HOST_MAX];
        bool is_ip;

        if (px_pattern_parse(c[i].pattern, c[i].deny_list, &p, &err) != 0)
            fail_msg("pattern \"%s\": %s", c[i].pattern, err.msg);
        if (px_host_canon(c[i].host, strlen(c[i].host), host, &is_ip, NULL) != 0)
            fail_msg("host \"%s\" is malformed", c[i].host);
        if (px_pattern_match(&p, host, is_ip, c[i].port) != c[i].match)
            fail_msg("\"%s\" %s \"%s\" port %u", c[i].pattern,
                     c[i].match ? "should match" : "should not match", c[i].host, c[i].port);
    }
}

static void wildcard_never_matches_an_ip_literal(void **state)
{
    struct px_pattern p = { .kind = PX_PAT_WILDCARD, .host = "0.0.1" };

    (void)state;
    /* a suffix test alone would pass: 127.0.0.1 ends with ".0.0.1" */
    assert_false(px_pattern_match(&p, "127.0.0.1", true, 80));
    strcpy(p.host, "allowed.com");
    assert_false(px_pattern_match(&p, "x.allowed.com", true, 80));
    assert_true(px_pattern_match(&p, "x.allowed.com", false, 80));
}

/* ---- the decision ------------------------------------------------------- */

struct fixture {
    struct policy pol;
    struct px_rules rules;
};

static void add_reason(struct policy *pol, const char *host, const char *text)
{
    struct pol_reason *r = realloc(pol->deny_reasons, (pol->n_deny_reasons + 1) * sizeof(*r));

    assert_non_null(r);
    pol->deny_reasons = r;
    r[pol->n_deny_reasons].host = strdup(host);
    r[pol->n_deny_reasons].text = strdup(text);
    pol->n_deny_reasons++;
}

static void add_all(struct pol_strv *sv, const char *const *v)
{
    struct nf_err err;

    for (; v && *v; v++)
        assert_int_equal(pol_strv_add(sv, *v, &err), 0);
}

static struct fixture *fixture_new(const char *const *allow, const char *const *deny,
                                   const char *const *deny_address)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct nf_err err;

    assert_non_null(f);
    assert_int_equal(pol_init(&f->pol, "/tmp", NULL, &err), 0);
    add_all(&f->pol.allow_domain, allow);
    add_all(&f->pol.deny_domain, deny);
    add_all(&f->pol.deny_address, deny_address);
    return f;
}

static void fixture_build(struct fixture *f)
{
    struct nf_err err = { 0 };

    if (px_rules_build(&f->pol, &f->rules, &err) != 0)
        fail_msg("px_rules_build: %s", err.msg);
}

static void fixture_free(struct fixture *f)
{
    px_rules_free(&f->rules);
    pol_free(&f->pol);
    free(f);
}

struct decide_case {
    const char *host;
    unsigned port;
    bool allow;
    const char *reason; /* when denied */
    const char *canon;  /* the decision's host */
};

static void check_decide(const struct px_rules *r, const struct decide_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct px_decision d;

        px_rules_decide(r, c[i].host, strlen(c[i].host), c[i].port, &d);
        if (d.allow != c[i].allow)
            fail_msg("\"%s\":%u should be %s (%s)", c[i].host, c[i].port,
                     c[i].allow ? "allowed" : "denied", d.reason ? d.reason : "allowed");
        if (c[i].allow && d.reason != NULL)
            fail_msg("\"%s\": an allowed decision carries no reason", c[i].host);
        if (!c[i].allow && (!d.reason || strcmp(d.reason, c[i].reason) != 0))
            fail_msg("\"%s\": want reason \"%s\", got \"%s\"", c[i].host, c[i].reason,
                     d.reason ? d.reason : "(null)");
        if (strcmp(d.host, c[i].canon) != 0)
            fail_msg("\"%s\": want host \"%s\", got \"%s\"", c[i].host, c[i].canon, d.host);
    }
}

static void deny_beats_allow_and_the_rest_is_not_allowed(void **state)
{
    static const char *const allow[] = { "*.example.com", "github.com", "127.0.0.1",
                                         "[::1]:8080",    "localhost",  NULL };
    static const char *const deny[] = { "bad.example.com", "*.ads.example.com", "*:22", NULL };
    static const struct decide_case c[] = {
        { "good.example.com", 443, true, NULL, "good.example.com" },
        { "GOOD.example.com.", 443, true, NULL, "good.example.com" },
        { "bad.example.com", 443, false, "host is on the deny list", "bad.example.com" },
        { "BAD.Example.com.", 443, false, "host is on the deny list", "bad.example.com" },
        { "x.ads.example.com", 443, false, "host is on the deny list", "x.ads.example.com" },
        { "github.com", 443, true, NULL, "github.com" },
        { "github.com", 22, false, "host is on the deny list", "github.com" },
        { "example.com", 443, false, "host is not on the allow list", "example.com" },
        { "other.org", 443, false, "host is not on the allow list", "other.org" },
        { "2130706433", 80, true, NULL, "127.0.0.1" },
        { "0x7f.1", 80, true, NULL, "127.0.0.1" },
        { "[::ffff:127.0.0.1]", 80, true, NULL, "127.0.0.1" },
        { "127.0.0.2", 80, false, "host is not on the allow list", "127.0.0.2" },
        { "[0:0::1]", 8080, true, NULL, "::1" },
        { "::1", 80, false, "host is not on the allow list", "::1" },
        { "localhost", 3000, true, NULL, "localhost" },
        { "exa mple.com", 443, false, "malformed host", "" },
        { "", 443, false, "malformed host", "" },
        { "fe80::1%eth0", 443, false, "malformed host", "" },
        { "evil.com\r\nX: y", 443, false, "malformed host", "" },
        { "a..example.com", 443, false, "malformed host", "" },
        { "example.0x10", 443, false, "malformed host", "" },
        { "4294967296", 443, false, "malformed host", "" },
    };
    struct fixture *f = fixture_new(allow, deny, NULL);

    (void)state;
    fixture_build(f);
    check_decide(&f->rules, c, sizeof(c) / sizeof(c[0]));
    fixture_free(f);
}

static void decision_reports_the_canonical_address(void **state)
{
    static const char *const allow[] = { "10.0.0.1", NULL };
    struct fixture *f = fixture_new(allow, NULL, NULL);
    struct px_decision d;
    struct px_addr want = addr_of("10.0.0.1");

    (void)state;
    fixture_build(f);
    px_rules_decide(&f->rules, "167772161", 9, 80, &d);
    assert_true(d.allow);
    assert_true(d.is_ip);
    assert_true(px_addr_equal(&d.addr, &want));
    px_rules_decide(&f->rules, "example.com", 11, 80, &d);
    assert_false(d.is_ip);
    /* only hostlen bytes are read */
    px_rules_decide(&f->rules, "10.0.0.1junk", 8, 80, &d);
    assert_true(d.allow);
    fixture_free(f);
}

static void empty_policy_denies_everything(void **state)
{
    static const struct decide_case c[] = {
        { "example.com", 443, false, "host is not on the allow list", "example.com" },
        { "127.0.0.1", 80, false, "host is not on the allow list", "127.0.0.1" },
    };
    struct fixture *f = fixture_new(NULL, NULL, NULL);

    (void)state;
    fixture_build(f);
    check_decide(&f->rules, c, sizeof(c) / sizeof(c[0]));
    fixture_free(f);
}

static void deny_star_denies_every_host(void **state)
{
    static const char *const allow[] = { "example.com", NULL };
    static const char *const deny[] = { "*", NULL };
    static const struct decide_case c[] = {
        { "example.com", 443, false, "host is on the deny list", "example.com" },
        { "1.2.3.4", 443, false, "host is on the deny list", "1.2.3.4" },
    };
    struct fixture *f = fixture_new(allow, deny, NULL);

    (void)state;
    fixture_build(f);
    check_decide(&f->rules, c, sizeof(c) / sizeof(c[0]));
    fixture_free(f);
}

static void deny_reasons_follow_their_entry(void **state)
{
    static const char *const allow[] = { "*.example.com", NULL };
    static const char *const deny[] = { "tracker.example.com",
                                        "*.ads.example.com",
                                        "x.ads.example.com",
                                        "Mixed.Example.com.",
                                        "plain.example.com",
                                        "*:25",
                                        NULL };
    static const struct decide_case c[] = {
        { "tracker.example.com", 443, false, "tracking is not allowed", "tracker.example.com" },
        /* the first matching entry's reason, not the most specific one */
        { "x.ads.example.com", 443, false, "no ads", "x.ads.example.com" },
        { "y.ads.example.com", 443, false, "no ads", "y.ads.example.com" },
        { "mixed.example.com", 443, false, "keyed by meaning", "mixed.example.com" },
        { "plain.example.com", 443, false, "host is on the deny list", "plain.example.com" },
        { "mail.example.com", 25, false, "no mail", "mail.example.com" },
        { "mail.example.com", 587, true, NULL, "mail.example.com" },
    };
    struct fixture *f = fixture_new(allow, deny, NULL);

    (void)state;
    add_reason(&f->pol, "tracker.example.com", "tracking is not allowed");
    add_reason(&f->pol, "*.ADS.example.com", "no ads");
    add_reason(&f->pol, "x.ads.example.com", "x is also ads");
    add_reason(&f->pol, "mixed.example.com", "keyed by meaning");
    add_reason(&f->pol, "*:25", "no mail");
    add_reason(&f->pol, "unused.example.com", "never used");
    fixture_build(f);
    assert_string_equal(f->rules.deny_reason[2], "x is also ads");
    assert_null(f->rules.deny_reason[4]);
    check_decide(&f->rules, c, sizeof(c) / sizeof(c[0]));
    fixture_free(f);
}

static void later_reason_for_the_same_entry_wins(void **state)
{
    static const char *const deny[] = { "a.example.com", NULL };
    struct fixture *f = fixture_new(NULL, deny, NULL);

    (void)state;
    add_reason(&f->pol, "a.example.com", "first");
    add_reason(&f->pol, "A.example.com", "second");
    fixture_build(f);
    assert_string_equal(f->rules.deny_reason[0], "second");
    fixture_free(f);
}

static void build_fails_on_an_invalid_entry_naming_it(void **state)
{
    static const struct {
        const char *allow, *deny, *cidr, *want1, *want2;
    } c[] = {
        { "*.com", NULL, NULL, "allow_domain", "*.com" },
        { "*", NULL, NULL, "allow_domain", "\"*\"" },
        { "http://example.com", NULL, NULL, "allow_domain", "http://example.com" },
        { NULL, "foo", NULL, "deny_domain", "foo" },
        { NULL, "::1", NULL, "deny_domain", "::1" },
        { NULL, NULL, "10.0.0.0/33", "deny_address", "10.0.0.0/33" },
        { NULL, NULL, "example.com", "deny_address", "example.com" },
        { NULL, NULL, "10.0.0.0/8\nforged line", "deny_address", "10.0.0.0/8\\x0aforged" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        const char *const allow[] = { "ok.example.com", c[i].allow, NULL };
        const char *const deny[] = { "ok.example.org", c[i].deny, NULL };
        const char *const cidr[] = { "10.0.0.0/8", c[i].cidr, NULL };
        struct fixture *f = fixture_new(allow, deny, cidr);
        struct nf_err err = { 0 };

        assert_int_equal(px_rules_build(&f->pol, &f->rules, &err), -1);
        if (!strstr(err.msg, c[i].want1) || !strstr(err.msg, c[i].want2) || strchr(err.msg, '\n'))
            fail_msg("error \"%s\" should name %s and %s", err.msg, c[i].want1, c[i].want2);
        assert_null(f->rules.deny);
        assert_int_equal(f->rules.n_allow, 0);
        fixture_free(f);
    }
}

/* ---- the resolved-address guard ---------------------------------------- */

struct guard_case {
    const char *host;
    unsigned port;
    const char *addr;
    unsigned want;
};

static void guard_drops_addresses_in_srt_order(void **state)
{
    static const char *const allow[] = { "api.example.com", "10.0.0.5",  "[::1]:8080",
                                         "127.0.0.2",       "localhost", NULL };
    static const char *const deny[] = { "10.9.9.9", "[fd00::99]:443", "*.bad.example", NULL };
    static const char *const cidrs[] = { "192.168.0.0/16", "::ffff:172.16.0.0/108", "fd12::/16",
                                         NULL };
    static const struct guard_case c[] = {
        { "api.example.com", 443, "93.184.216.34", 0 },
        { "api.example.com", 443, "2606:2800:220:1::1", 0 },
        /* private ranges pass unless listed */
        { "api.example.com", 443, "10.0.0.6", 0 },
        { "api.example.com", 443, "fc00::1", 0 },
        /* built-in classes */
        { "api.example.com", 443, "127.0.0.1", PX_CLASS_LOOPBACK },
        { "api.example.com", 443, "::1", PX_CLASS_LOOPBACK },
        { "api.example.com", 443, "0.0.0.0", PX_CLASS_UNSPECIFIED },
        { "api.example.com", 443, "::", PX_CLASS_UNSPECIFIED },
        { "api.example.com", 443, "169.254.169.254", PX_CLASS_LINK_LOCAL },
        { "api.example.com", 443, "::ffff:169.254.169.254", PX_CLASS_LINK_LOCAL },
        { "api.example.com", 443, "::169.254.169.254", PX_CLASS_LINK_LOCAL },
        { "api.example.com", 443, "::ffff:0:169.254.169.254", PX_CLASS_LINK_LOCAL },
        { "api.example.com", 443, "64:ff9b::a9fe:a9fe", PX_CLASS_LINK_LOCAL },
        { "api.example.com", 443, "2002:a9fe:a9fe::", PX_CLASS_LINK_LOCAL },
        { "api.example.com", 443, "fe80::1", PX_CLASS_LINK_LOCAL },
        { "api.example.com", 443, "224.0.0.1", PX_CLASS_MULTICAST },
        { "api.example.com", 443, "ff02::1", PX_CLASS_MULTICAST },
        { "api.example.com", 443, "255.255.255.255", PX_CLASS_BROADCAST },
        { "api.example.com", 443, "100.100.100.200", PX_CLASS_METADATA },
        { "api.example.com", 443, "168.63.129.16", PX_CLASS_METADATA },
        { "api.example.com", 443, "fd00:ec2::254", PX_CLASS_METADATA },
        { "api.example.com", 443, "64:ff9b::6464:64c8", PX_CLASS_METADATA },
        /* one class per address: the first in priority order */
        { "api.example.com", 443, "2002:7f00:1::", PX_CLASS_LOOPBACK },
        /* IP-literal deny entries, also through the carried IPv4 */
        { "api.example.com", 443, "10.9.9.9", PX_CLASS_DENY_LISTED },
        { "api.example.com", 443, "::ffff:10.9.9.9", PX_CLASS_DENY_LISTED },
        { "api.example.com", 443, "64:ff9b::a09:909", PX_CLASS_DENY_LISTED },
        { "api.example.com", 443, "2002:a09:909::1", PX_CLASS_DENY_LISTED },
        { "api.example.com", 443, "fd00::99", PX_CLASS_DENY_LISTED },
        { "api.example.com", 80, "fd00::99", 0 },
        /* IP-literal allow entries: the exact address (and port) only */
        { "api.example.com", 443, "127.0.0.2", 0 },
        { "api.example.com", 443, "::ffff:127.0.0.2", 0 },
        { "api.example.com", 443, "64:ff9b::7f00:2", PX_CLASS_LOOPBACK },
        { "api.example.com", 8080, "::1", 0 },
        { "api.example.com", 8081, "::1", PX_CLASS_LOOPBACK },
        /* deny_address */
        { "api.example.com", 443, "192.168.1.1", PX_CLASS_LISTED },
        { "api.example.com", 443, "::ffff:192.168.1.1", PX_CLASS_LISTED },
        { "api.example.com", 443, "64:ff9b::c0a8:101", PX_CLASS_LISTED },
        { "api.example.com", 443, "172.20.0.1", PX_CLASS_LISTED },
        { "api.example.com", 443, "172.32.0.1", 0 },
        { "api.example.com", 443, "fd12:1::1", PX_CLASS_LISTED },
        { "api.example.com", 443, "fd13::1", 0 },
        /* this host's addresses */
        { "api.example.com", 443, "203.0.113.7", PX_CLASS_HOST },
        { "api.example.com", 443, "::ffff:203.0.113.7", PX_CLASS_HOST },
        { "api.example.com", 443, "64:ff9b::cb00:7107", PX_CLASS_HOST },
        { "api.example.com", 443, "2001:db8::7", PX_CLASS_HOST },
        { "api.example.com", 443, "198.51.100.9", PX_CLASS_HOST },
        { "api.example.com", 443, "203.0.113.8", 0 },
        /* the localhost rule */
        { "localhost", 80, "127.0.0.1", 0 },
        { "localhost", 80, "127.9.9.9", 0 },
        { "localhost", 80, "::1", 0 },
        { "localhost", 80, "::ffff:127.0.0.1", 0 },
        { "localhost", 80, "64:ff9b::7f00:1", PX_CLASS_NON_LOOPBACK },
        { "localhost", 80, "93.184.216.34", PX_CLASS_NON_LOOPBACK },
        { "localhost", 80, "203.0.113.7", PX_CLASS_NON_LOOPBACK },
        { "app.localhost", 80, "127.0.0.1", 0 },
        { "app.localhost", 80, "10.0.0.1", PX_CLASS_NON_LOOPBACK },
        { "localhost", 80, "10.9.9.9", PX_CLASS_DENY_LISTED },
        { "localhost", 80, "10.0.0.5", 0 },
        { "notlocalhost.example", 80, "127.0.0.1", PX_CLASS_LOOPBACK },
        { "localhost.example", 80, "127.0.0.1", PX_CLASS_LOOPBACK },
        /* an IP-literal destination is not re-judged */
        { "127.0.0.1", 80, "127.0.0.1", 0 },
        { "::1", 80, "::1", 0 },
    };
    const struct px_addr local[] = { addr_of("203.0.113.7"), addr_of("2001:db8::7"),
                                     addr_of("::ffff:198.51.100.9") };
    struct fixture *f = fixture_new(allow, deny, cidrs);

    (void)state;
    fixture_build(f);
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct px_addr a = addr_of(c[i].addr);
        unsigned got = px_guard_check(&f->rules, c[i].host, c[i].port, &a, local, 3);

        if (got != c[i].want) {
            char want_text[512], got_text[512];

            px_class_text(c[i].want, want_text, sizeof(want_text));
            px_class_text(got, got_text, sizeof(got_text));
            fail_msg("%s:%u -> %s: want \"%s\", got \"%s\"", c[i].host, c[i].port, c[i].addr,
                     want_text, got_text);
        }
    }
    fixture_free(f);
}

static void guard_classes_of_several_addresses_join_in_order(void **state)
{
    static const char *const addrs[] = { "203.0.113.7", "127.0.0.1", "169.254.169.254" };
    const struct px_addr local[] = { addr_of("203.0.113.7") };
    struct fixture *f = fixture_new(NULL, NULL, NULL);
    unsigned classes = 0;
    char text[256];

    (void)state;
    fixture_build(f);
    for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
        struct px_addr a = addr_of(addrs[i]);

        classes |= px_guard_check(&f->rules, "evil.example", 443, &a, local, 1);
    }
    px_class_text(classes, text, sizeof(text));
    assert_string_equal(text,
                        "a loopback address / a link-local address / one of this host's addresses");
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(allow_list_accepts_srt_patterns),
        cmocka_unit_test(deny_list_accepts_srt_patterns),
        cmocka_unit_test(invalid_patterns_are_rejected_with_a_reason),
        cmocka_unit_test(star_is_valid_only_in_a_deny_list),
        cmocka_unit_test(rejection_names_the_entry),
        cmocka_unit_test(overlong_patterns_are_rejected),
        cmocka_unit_test(patterns_match_canonical_hosts),
        cmocka_unit_test(wildcard_never_matches_an_ip_literal),
        cmocka_unit_test(deny_beats_allow_and_the_rest_is_not_allowed),
        cmocka_unit_test(decision_reports_the_canonical_address),
        cmocka_unit_test(empty_policy_denies_everything),
        cmocka_unit_test(deny_star_denies_every_host),
        cmocka_unit_test(deny_reasons_follow_their_entry),
        cmocka_unit_test(later_reason_for_the_same_entry_wins),
        cmocka_unit_test(build_fails_on_an_invalid_entry_naming_it),
        cmocka_unit_test(guard_drops_addresses_in_srt_order),
        cmocka_unit_test(guard_classes_of_several_addresses_join_in_order),
    };

    return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
