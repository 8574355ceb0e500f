/* proxy/parent.c: the corporate proxy nsfence itself goes through (its URL,
 * the choice between config and environment, NO_PROXY), and proxy/answer.c's
 * px_status_phrase, the reason text a denied CONNECT puts on its status
 * line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "proxy/parent.h"
#include "proxy/server.h"

/* An independent base64 to check the Proxy-Authorization value against. */
static void b64(const char *in, size_t n, char *out)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;

    for (size_t i = 0; i < n; i += 3) {
        unsigned char a = (unsigned char)in[i];
        unsigned char b = i + 1 < n ? (unsigned char)in[i + 1] : 0;
        unsigned char c = i + 2 < n ? (unsigned char)in[i + 2] : 0;

        out[o++] = t[a >> 2];
        out[o++] = t[(a & 3) << 4 | b >> 4];
        out[o++] = i + 1 < n ? t[(b & 15) << 2 | c >> 6] : '=';
        out[o++] = i + 2 < n ? t[c & 63] : '=';
    }
    out[o] = '\0';
}

/* ---- px_parent_parse --------------------------------------------------------- */

struct parse_case {
    const char *url;
    const char *host; /* NULL: refused */
    unsigned port;
    bool is_ip;
    const char *auth;
};

static void check_parse(const struct parse_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct px_parent p;
        struct nf_err err = { 0 };
        int r = px_parent_parse(c[i].url, &p, &err);

        if (!c[i].host) {
            if (r != -1)
                fail_msg("\"%s\" should be refused, got host \"%s\" port %u", c[i].url, p.host,
                         p.port);
            if (err.msg[0] == '\0')
                fail_msg("\"%s\": refused without a message", c[i].url);
            continue;
        }
        if (r != 0)
            fail_msg("\"%s\" should parse, was refused: %s", c[i].url, err.msg);
        if (!p.enabled)
            fail_msg("\"%s\": not enabled", c[i].url);
        if (strcmp(p.host, c[i].host) != 0)
            fail_msg("\"%s\": host want \"%s\", got \"%s\"", c[i].url, c[i].host, p.host);
        if (p.port != c[i].port)
            fail_msg("\"%s\": port want %u, got %u", c[i].url, c[i].port, p.port);
        if (p.host_is_ip != c[i].is_ip)
            fail_msg("\"%s\": host_is_ip should be %d", c[i].url, c[i].is_ip);
        if (strcmp(p.auth, c[i].auth ? c[i].auth : "") != 0)
            fail_msg("\"%s\": auth want \"%s\", got \"%s\"", c[i].url, c[i].auth ? c[i].auth : "",
                     p.auth);
    }
}

static void http_urls_give_host_and_port(void **state)
{
    static const struct parse_case c[] = {
        { "http://proxy.corp:3128", "proxy.corp", 3128, false, NULL },
        { "http://proxy.corp:3128/", "proxy.corp", 3128, false, NULL },
        { "HTTP://Proxy.CORP:8080", "proxy.corp", 8080, false, NULL },
        { "http://proxy.corp.:1", "proxy.corp", 1, false, NULL },
        { "http://proxy.corp:65535", "proxy.corp", 65535, false, NULL },
        { "proxy.corp:3128", "proxy.corp", 3128, false, NULL },
        { "http://10.0.0.1:3128", "10.0.0.1", 3128, true, NULL },
        { "http://0x0a000001:3128", "10.0.0.1", 3128, true, NULL },
        { "10.0.0.1:8080", "10.0.0.1", 8080, true, NULL },
    };

    (void)state;
    check_parse(c, sizeof(c) / sizeof(c[0]));
}

static void missing_port_is_1080(void **state)
{
    static const struct parse_case c[] = {
        { "http://proxy.corp", "proxy.corp", 1080, false, NULL },
        { "http://proxy.corp/", "proxy.corp", 1080, false, NULL },
        { "proxy.corp", "proxy.corp", 1080, false, NULL },
        { "http://[::1]", "::1", 1080, true, NULL },
        { "http://u:p@proxy.corp", "proxy.corp", 1080, false, "Basic dTpw" },
    };

    (void)state;
    check_parse(c, sizeof(c) / sizeof(c[0]));
}

static void ipv6_needs_brackets(void **state)
{
    static const struct parse_case c[] = {
        { "http://[::1]:3128", "::1", 3128, true, NULL },
        { "http://[2001:DB8:0:0::1]:8080/", "2001:db8::1", 8080, true, NULL },
        { "http://[::ffff:10.0.0.1]:3128", "10.0.0.1", 3128, true, NULL },
        { "[fd00::2]:3128", "fd00::2", 3128, true, NULL },
        { "http://::1:3128", NULL, 0, false, NULL },
        { "http://[::1:3128", NULL, 0, false, NULL },
        { "http://[::1]3128", NULL, 0, false, NULL },
        { "http://[::1]:", NULL, 0, false, NULL },
        { "http://[]:3128", NULL, 0, false, NULL },
        { "http://[fe80::1%eth0]:3128", NULL, 0, false, NULL },
        { "http://[proxy.corp]:3128", NULL, 0, false, NULL },
    };

    (void)state;
    check_parse(c, sizeof(c) / sizeof(c[0]));
}

static void credentials_become_basic_auth(void **state)
{
    static const struct parse_case c[] = {
        /* base64("user:pass") */
        { "http://user:pass@proxy.corp:3128", "proxy.corp", 3128, false, "Basic dXNlcjpwYXNz" },
        /* no password: "user:" */
        { "http://user@proxy.corp:3128", "proxy.corp", 3128, false, "Basic dXNlcjo=" },
        /* empty user: ":pass" */
        { "http://:pass@proxy.corp:3128", "proxy.corp", 3128, false, "Basic OnBhc3M=" },
        /* percent-decoded: "us er:p@ss:w/rd" */
        { "http://us%20er:p%40ss%3Aw%2Frd@proxy.corp:3128", "proxy.corp", 3128, false,
          "Basic dXMgZXI6cEBzczp3L3Jk" },
        /* upper- and lower-case hex; a colon in the password stays */
        { "http://%41%62:x:y@h:1", "h", 1, false, "Basic QWI6eDp5" },
        /* percent-decoding applies to credentials only, and UTF-8 passes */
        { "http://J%C3%BCrgen:pw@[::1]:3128", "::1", 3128, true, "Basic SsO8cmdlbjpwdw==" },
    };

    (void)state;
    check_parse(c, sizeof(c) / sizeof(c[0]));
}

static void bad_percent_escapes_are_refused(void **state)
{
    static const struct parse_case c[] = {
        { "http://us%4:p@h:1", NULL, 0, false, NULL },
        { "http://us%zz:p@h:1", NULL, 0, false, NULL },
        { "http://u:p%@h:1", NULL, 0, false, NULL },
        { "http://u:p%4@h:1", NULL, 0, false, NULL },
        { "http://u%:p@h:1", NULL, 0, false, NULL },
        /* the host is never percent-decoded */
        { "http://pr%6Fxy.corp:1", NULL, 0, false, NULL },
    };

    (void)state;
    check_parse(c, sizeof(c) / sizeof(c[0]));
}

static void other_schemes_are_refused(void **state)
{
    static const char *const urls[] = {
        "https://proxy.corp:3128", "socks5://proxy.corp:1080", "socks5h://proxy.corp:1080",
        "ftp://proxy.corp:21",     "://proxy.corp:1",          "httpx://proxy.corp:1",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        struct px_parent p;
        struct nf_err err = { 0 };

        if (px_parent_parse(urls[i], &p, &err) != -1)
            fail_msg("\"%s\" should be refused", urls[i]);
        assert_false(p.enabled);
        if (!strstr(err.msg, "only http://"))
            fail_msg("\"%s\": message should say only http:// is supported: %s", urls[i], err.msg);
    }
}

static void paths_queries_and_fragments_are_refused(void **state)
{
    static const struct parse_case c[] = {
        { "http://proxy.corp:3128/path", NULL, 0, false, NULL },
        { "http://proxy.corp:3128//", NULL, 0, false, NULL },
        { "http://proxy.corp/x", NULL, 0, false, NULL },
        { "http://proxy.corp:3128?x=1", NULL, 0, false, NULL },
        { "http://proxy.corp:3128#frag", NULL, 0, false, NULL },
        { "http://proxy.corp:3128/?", NULL, 0, false, NULL },
    };
    struct px_parent p;
    struct nf_err err = { 0 };

    (void)state;
    check_parse(c, sizeof(c) / sizeof(c[0]));
    assert_int_equal(px_parent_parse("http://proxy.corp:3128/path", &p, &err), -1);
    assert_non_null(strstr(err.msg, "path"));
}

static void bad_ports_are_refused(void **state)
{
    static const struct parse_case c[] = {
        { "http://proxy.corp:0", NULL, 0, false, NULL },
        { "http://proxy.corp:65536", NULL, 0, false, NULL },
        { "http://proxy.corp:99999999999999999999", NULL, 0, false, NULL },
        { "http://proxy.corp:", NULL, 0, false, NULL },
        { "http://proxy.corp:/", NULL, 0, false, NULL },
        { "http://proxy.corp:abc", NULL, 0, false, NULL },
        { "http://proxy.corp:80x", NULL, 0, false, NULL },
        { "http://proxy.corp:80:90", NULL, 0, false, NULL },
        { "http://proxy.corp:-1", NULL, 0, false, NULL },
        { "http://proxy.corp:0x50", NULL, 0, false, NULL },
    };

    (void)state;
    check_parse(c, sizeof(c) / sizeof(c[0]));
}

/* A port is digits: what strtoul also accepts (sign, leading blanks) is
 * a typo or a smuggling attempt, not a port. */
static void ports_with_signs_or_blanks_are_refused(void **state)
{
    static const struct parse_case c[] = {
        { "http://proxy.corp:+80", NULL, 0, false, NULL },
        { "http://proxy.corp: 80", NULL, 0, false, NULL },
        { "http://proxy.corp:\t80", NULL, 0, false, NULL },
    };

    (void)state;
    check_parse(c, sizeof(c) / sizeof(c[0]));
}

static void malformed_hosts_are_refused(void **state)
{
    static const struct parse_case c[] = {
        { "", NULL, 0, false, NULL },
        { "http://", NULL, 0, false, NULL },
        { "http:///", NULL, 0, false, NULL },
        { "http://:3128", NULL, 0, false, NULL },
        { "http://user:pass@", NULL, 0, false, NULL },
        { "http://user:pass@:3128", NULL, 0, false, NULL },
        { "http://pro xy:3128", NULL, 0, false, NULL },
        { "http://proxy\r\n:3128", NULL, 0, false, NULL },
        { "http://*.corp:3128", NULL, 0, false, NULL },
        /* an unencoded '@' in the password leaves "ss@proxy.corp" as host */
        { "http://u:p@ss@proxy.corp:3128", NULL, 0, false, NULL },
    };

    (void)state;
    check_parse(c, sizeof(c) / sizeof(c[0]));
}

/* The header must carry the credentials the URL gave, or nsfence must say
 * it cannot: a silently cut value only fails later, at the proxy, as a 407
 * nobody can explain. */
static void long_credentials_are_encoded_whole_or_refused(void **state)
{
    char url[1024], cred[600], want[1024];
    struct px_parent p;
    struct nf_err err = { 0 };
    int r;

    (void)state;
    memset(cred, 'u', 200);
    cred[200] = ':';
    memset(cred + 201, 'p', 200);
    cred[401] = '\0';
    snprintf(url, sizeof(url), "http://%s@proxy.corp:3128", cred);
    r = px_parent_parse(url, &p, &err);
    if (r == 0) {
        strcpy(want, "Basic ");
        b64(cred, strlen(cred), want + 6);
        if (strcmp(p.auth, want) != 0)
            fail_msg("401 bytes of credentials: header is %zu characters, should be %zu",
                     strlen(p.auth), strlen(want));
    } else {
        assert_int_equal(r, -1);
        assert_true(err.msg[0] != '\0');
    }
}

static void encoded_nul_in_credentials_is_not_silently_dropped(void **state)
{
    struct px_parent p;
    struct nf_err err = { 0 };
    char want[64];
    int r;

    (void)state;
    r = px_parent_parse("http://a%00b:c@proxy.corp:3128", &p, &err);
    if (r == 0) {
        strcpy(want, "Basic ");
        b64("a\0b:c", 5, want + 6);
        assert_string_equal(p.auth, want);
    } else {
        assert_int_equal(r, -1);
    }
}

static void base64_padding_is_right_for_every_length(void **state)
{
    (void)state;
    for (size_t n = 0; n < 40; n++) {
        char user[64], url[128], want[128];
        struct px_parent p;
        struct nf_err err = { 0 };

        memset(user, 'a' + (char)(n % 26), n);
        user[n] = '\0';
        snprintf(url, sizeof(url), "http://%s:@h:1", user);
        assert_int_equal(px_parent_parse(url, &p, &err), 0);
        strcpy(want, "Basic ");
        user[n] = ':';
        b64(user, n + 1, want + 6);
        assert_string_equal(p.auth, want);
    }
}

/* ---- px_parent_choose ---------------------------------------------------- */

static void config_beats_https_proxy_beats_http_proxy(void **state)
{
    struct px_parent p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(
        px_parent_choose("http://cfg:1", "http://https:2", "http://http:3", NULL, &p, &err), 0);
    assert_true(p.enabled);
    assert_string_equal(p.host, "cfg");
    assert_int_equal(p.port, 1);
    assert_string_equal(p.source, "parent_proxy");

    assert_int_equal(px_parent_choose(NULL, "http://https:2", "http://http:3", NULL, &p, &err), 0);
    assert_string_equal(p.host, "https");
    assert_int_equal(p.port, 2);
    assert_string_equal(p.source, "HTTPS_PROXY");

    assert_int_equal(px_parent_choose(NULL, NULL, "http://http:3", NULL, &p, &err), 0);
    assert_string_equal(p.host, "http");
    assert_int_equal(p.port, 3);
    assert_string_equal(p.source, "HTTP_PROXY");
}

static void empty_values_are_skipped(void **state)
{
    struct px_parent p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(px_parent_choose("", "", "http://http:3", NULL, &p, &err), 0);
    assert_string_equal(p.source, "HTTP_PROXY");
    assert_int_equal(px_parent_choose("", "http://https:2", "", NULL, &p, &err), 0);
    assert_string_equal(p.source, "HTTPS_PROXY");
}

static void nothing_set_means_no_parent(void **state)
{
    struct px_parent p;
    struct nf_err err = { 0 };

    (void)state;
    memset(&p, 0xa5, sizeof(p));
    assert_int_equal(px_parent_choose(NULL, NULL, NULL, "example.com", &p, &err), 0);
    assert_false(p.enabled);
    assert_null(p.source);
    assert_string_equal(p.auth, "");
    assert_int_equal(px_parent_choose("", "", "", NULL, &p, &err), 0);
    assert_false(p.enabled);
}

static void no_proxy_is_kept_with_the_chosen_parent(void **state)
{
    struct px_parent p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(px_parent_choose(NULL, "http://u:p@h:2", NULL, " .corp, 10.0.0.0/8", &p, &err),
                     0);
    assert_string_equal(p.no_proxy, " .corp, 10.0.0.0/8");
    assert_string_equal(p.auth, "Basic dTpw");
    assert_int_equal(px_parent_choose("http://h:1", NULL, NULL, NULL, &p, &err), 0);
    assert_string_equal(p.no_proxy, "");
}

static void a_bad_url_is_an_error_naming_its_source(void **state)
{
    struct px_parent p;
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(px_parent_choose("https://cfg:1", "http://ok:2", NULL, NULL, &p, &err), -1);
    assert_false(p.enabled);
    assert_true(strncmp(err.msg, "parent_proxy: ", 14) == 0);
    memset(&err, 0, sizeof(err));
    /* a broken HTTPS_PROXY is not silently replaced by HTTP_PROXY */
    assert_int_equal(px_parent_choose(NULL, "http://h:0", "http://ok:2", NULL, &p, &err), -1);
    assert_true(strncmp(err.msg, "HTTPS_PROXY: ", 13) == 0);
    memset(&err, 0, sizeof(err));
    assert_int_equal(px_parent_choose(NULL, NULL, "http://h/x", NULL, &p, &err), -1);
    assert_true(strncmp(err.msg, "HTTP_PROXY: ", 12) == 0);
}

/* ---- px_no_proxy_match ------------------------------------------------------ */

struct np_case {
    const char *list;
    const char *host;
    unsigned port;
    bool want;
};

static void check_np(const struct np_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (px_no_proxy_match(c[i].list, c[i].host, c[i].port) != c[i].want)
            fail_msg("NO_PROXY \"%s\" vs %s:%u: want %s", c[i].list ? c[i].list : "NULL", c[i].host,
                     c[i].port, c[i].want ? "match" : "no match");
}

static void star_matches_everything(void **state)
{
    static const struct np_case c[] = {
        { "*", "example.com", 443, true },
        { "*", "10.0.0.1", 80, true },
        { "*", "::1", 80, true },
        { "a.com, * ,b.com", "example.com", 1, true },
        { " * ", "x", 1, true },
        /* a star inside a name is not a wildcard */
        { "*.example.com", "a.example.com", 443, false },
        { "**", "example.com", 443, false },
    };

    (void)state;
    check_np(c, sizeof(c) / sizeof(c[0]));
}

static void names_match_exactly_or_as_a_domain_suffix(void **state)
{
    static const struct np_case c[] = {
        { "example.com", "example.com", 443, true },
        { "EXAMPLE.com", "example.com", 443, true },
        { "example.com", "sub.example.com", 443, true },
        { "example.com", "a.b.example.com", 443, true },
        { ".example.com", "sub.example.com", 443, true },
        { ".example.com", "example.com", 443, true },
        { "localhost", "localhost", 80, true },
        /* never part of a label */
        { "example.com", "badexample.com", 443, false },
        { ".example.com", "badexample.com", 443, false },
        { "example.com", "example.com.evil.org", 443, false },
        { "example.com", "example.co", 443, false },
        { "example.com", "xample.com", 443, false },
        { "sub.example.com", "example.com", 443, false },
        { "com", "example.com", 443, true },
        { ".", "example.com", 443, false },
        { "..", "example.com", 443, false },
    };

    (void)state;
    check_np(c, sizeof(c) / sizeof(c[0]));
}

static void port_entries_match_only_that_port(void **state)
{
    static const struct np_case c[] = {
        { "example.com:443", "example.com", 443, true },
        { "example.com:443", "example.com", 80, false },
        { "example.com:443", "sub.example.com", 443, true },
        { ".example.com:8080", "sub.example.com", 8080, true },
        { ".example.com:8080", "sub.example.com", 80, false },
        { "10.0.0.1:22", "10.0.0.1", 22, true },
        { "10.0.0.1:22", "10.0.0.1", 23, false },
        { "10.0.0.0/8:22", "10.1.1.1", 22, true },
        { "[::1]:8080", "::1", 8080, true },
        { "[::1]:8080", "::1", 80, false },
        { "[2001:db8::]/32:443", "2001:db8::1", 443, false }, /* not a form we take */
        { "example.com:80, example.com:443", "example.com", 443, true },
    };

    (void)state;
    check_np(c, sizeof(c) / sizeof(c[0]));
}

static void ip_literals_and_cidrs_match_addresses(void **state)
{
    static const struct np_case c[] = {
        { "10.0.0.1", "10.0.0.1", 80, true },
        { "10.0.0.1", "10.0.0.2", 80, false },
        { "10.0.0.0/8", "10.200.3.4", 80, true },
        { "10.0.0.0/8", "11.0.0.1", 80, false },
        { "192.168.1.0/24", "192.168.1.255", 80, true },
        { "192.168.1.0/24", "192.168.2.1", 80, false },
        { "0.0.0.0/0", "8.8.8.8", 53, true },
        /* an address never suffix-matches like a name */
        { "0.0.1", "10.0.0.1", 80, false },
        { "1", "10.0.0.1", 80, false },
        { "0.1", "10.0.0.1", 80, false },
        /* and a name never matches an address entry */
        { "127.0.0.1", "localhost", 80, false },
        { "localhost", "127.0.0.1", 80, false },
    };

    (void)state;
    check_np(c, sizeof(c) / sizeof(c[0]));
}

static void ipv6_entries_match_with_or_without_brackets(void **state)
{
    static const struct np_case c[] = {
        { "::1", "::1", 80, true },
        { "[::1]", "::1", 80, true },
        { "::1", "::2", 80, false },
        { "2001:db8::/32", "2001:db8:1::5", 443, true },
        { "2001:db8::/32", "2001:db9::5", 443, false },
        { "2001:DB8::1", "2001:db8::1", 443, true },
        { "fe80::/10", "fe80::1", 443, true },
        { "::1", "127.0.0.1", 80, false },
        { "[::1", "::1", 80, false },
        { "[]", "::1", 80, false },
    };

    (void)state;
    check_np(c, sizeof(c) / sizeof(c[0]));
}

static void whitespace_and_empty_entries_are_ignored(void **state)
{
    static const struct np_case c[] = {
        { " example.com ", "example.com", 443, true },
        { "a.org , example.com", "example.com", 443, true },
        { "a.org,\texample.com\t,b.org", "example.com", 443, true },
        { ",,example.com,,", "example.com", 443, true },
        { " , ,example.com", "example.com", 443, true },
        { "", "example.com", 443, false },
        { ",", "example.com", 443, false },
        { " , , ", "example.com", 443, false },
        { NULL, "example.com", 443, false },
        { "a.org,b.org", "example.com", 443, false },
        /* a space inside an entry is not a separator */
        { "a.org example.com", "example.com", 443, false },
    };

    (void)state;
    check_np(c, sizeof(c) / sizeof(c[0]));
}

static void overlong_entries_are_skipped_not_truncated(void **state)
{
    char list[2048];

    (void)state;
    /* an entry longer than the parser's buffer must not be cut down to
     * a prefix that matches */
    memset(list, 'a', 600);
    strcpy(list + 600, ".example.com");
    assert_false(px_no_proxy_match(list, "example.com", 443));
    strcat(list, ",example.com");
    assert_true(px_no_proxy_match(list, "example.com", 443));
    assert_true(px_no_proxy_match(list, "x.example.com", 443));
}

/* ---- px_status_phrase ------------------------------------------------------- */

struct phrase_case {
    const char *in;
    const char *want;
};

/* Reports every failing case at once. */
static void check_phrase(const struct phrase_case *c, size_t n)
{
    char bad[2048] = "";

    for (size_t i = 0; i < n; i++) {
        char out[600];
        size_t l = strlen(bad);

        px_status_phrase(c[i].in, out, sizeof(out));
        if (strcmp(out, c[i].want) != 0)
            snprintf(bad + l, sizeof(bad) - l, "\n  case %zu: want \"%s\", got \"%s\"", i,
                     c[i].want, out);
    }
    if (bad[0])
        fail_msg("%s", bad);
}

static void phrase_keeps_printable_ascii(void **state)
{
    static const struct phrase_case c[] = {
        { "host is not on the allow list", "host is not on the allow list" },
        { "host is on the deny list", "host is on the deny list" },
        { "policy: see https://wiki/x?y=1 (ask #infra)",
          "policy: see https://wiki/x?y=1 (ask #infra)" },
    };

    (void)state;
    check_phrase(c, sizeof(c) / sizeof(c[0]));
}

static void phrase_cannot_inject_headers(void **state)
{
    static const struct phrase_case c[] = {
        { "blocked\r\nX-Evil: 1\r\n\r\nHTTP/1.1 200 OK", "blocked  X-Evil: 1    HTTP/1.1 200 OK" },
        { "a\tb", "a b" },
        { "a\x01\x1f\x7f"
          "b",
          "a   b" },
        { "a\nb", "a b" },
    };
    char out[600];

    (void)state;
    check_phrase(c, sizeof(c) / sizeof(c[0]));
    px_status_phrase("x\r\ny\0z", out, sizeof(out));
    assert_null(strchr(out, '\r'));
    assert_null(strchr(out, '\n'));
}

static void phrase_drops_angle_brackets(void **state)
{
    static const struct phrase_case c[] = {
        { "<script>alert(1)</script>", "scriptalert(1)/script" },
        { "a <b> c", "a b c" },
        { "<>", "Forbidden" },
    };

    (void)state;
    check_phrase(c, sizeof(c) / sizeof(c[0]));
}

static void phrase_gives_one_question_mark_per_non_ascii_character(void **state)
{
    static const struct phrase_case c[] = {
        { "caf\xc3\xa9", "caf?" },
        { "\xe6\x97\xa5\xe6\x9c\xac", "??" },
        { "x\xf0\x9f\x98\x80y", "x?y" },
        { "\xe2\x80\x90", "?" },     /* U+2010 hyphen: visible, so '?' */
        { "\xe2\x80\xa2 x", "? x" }, /* U+2022 bullet */
    };

    (void)state;
    check_phrase(c, sizeof(c) / sizeof(c[0]));
}

static void phrase_turns_invisible_formatting_into_spaces(void **state)
{
    static const struct phrase_case c[] = {
        { "a\xc2\xad"
          "b",
          "a b" }, /* U+00AD soft hyphen */
        { "a\xe2\x80\x8b"
          "b",
          "a b" }, /* U+200B zero width space */
        { "a\xe2\x80\x8f"
          "b",
          "a b" }, /* U+200F RLM */
        { "a\xe2\x80\xaa"
          "b",
          "a b" }, /* U+202A LRE */
        { "a\xe2\x80\xae"
          "b",
          "a b" }, /* U+202E RLO */
        { "a\xe2\x81\xa6"
          "b",
          "a b" }, /* U+2066 LRI */
        { "a\xe2\x81\xa9"
          "b",
          "a b" }, /* U+2069 PDI */
        { "a\xef\xbb\xbf"
          "b",
          "a b" }, /* U+FEFF */
        { "\xe2\x80\xae\xe2\x80\x8b", "Forbidden" },
    };

    (void)state;
    check_phrase(c, sizeof(c) / sizeof(c[0]));
}

/* srt's sanitiser (§5) has more invisible characters than the ones above:
 * the Arabic letter mark (a bidi mark), line/paragraph separators, the
 * zero-width word joiner family, and the C1 controls. */
static void phrase_turns_the_rest_of_srts_invisible_set_into_spaces(void **state)
{
    static const struct phrase_case c[] = {
        { "a\xd8\x9c"
          "b",
          "a b" }, /* U+061C ALM */
        { "a\xe2\x80\xa8"
          "b",
          "a b" }, /* U+2028 LS */
        { "a\xe2\x80\xa9"
          "b",
          "a b" }, /* U+2029 PS */
        { "a\xe2\x81\xa0"
          "b",
          "a b" }, /* U+2060 word joiner */
        { "a\xe2\x81\xa4"
          "b",
          "a b" }, /* U+2064 invisible plus */
        { "a\xc2\x85"
          "b",
          "a b" }, /* U+0085 NEL */
        { "a\xc2\x9b"
          "b",
          "a b" }, /* U+009B CSI */
    };

    (void)state;
    check_phrase(c, sizeof(c) / sizeof(c[0]));
}

/* A stray byte that is not UTF-8 (a Latin-1 reason, say) is one character:
 * the ASCII after it is text, not the rest of a sequence. */
static void phrase_does_not_swallow_ascii_after_a_bad_byte(void **state)
{
    static const struct phrase_case c[] = {
        { "\xe9tude interdite", "?tude interdite" },
        { "caf\xe9 ok", "caf? ok" },
        { "\xc3"
          "ABC",
          "?ABC" },
        { "\xf0xyz", "?xyz" },
        { "a\x80"
          "b",
          "a?b" },
    };

    (void)state;
    check_phrase(c, sizeof(c) / sizeof(c[0]));
}

static void phrase_is_trimmed_and_forbidden_when_empty(void **state)
{
    static const struct phrase_case c[] = {
        { "  host is not on the allow list \r\n", "host is not on the allow list" },
        { "\t\tx", "x" },
        { "", "Forbidden" },
        { "   ", "Forbidden" },
        { "\r\n\t", "Forbidden" },
        { "<<>>", "Forbidden" },
        { " < > ", "Forbidden" },
    };
    char out[64];

    (void)state;
    check_phrase(c, sizeof(c) / sizeof(c[0]));
    px_status_phrase(NULL, out, sizeof(out));
    assert_string_equal(out, "Forbidden");
}

static void phrase_is_at_most_500_characters(void **state)
{
    char in[2000], out[1024], want[1024];

    (void)state;
    memset(in, 'a', 600);
    in[600] = '\0';
    px_status_phrase(in, out, sizeof(out));
    assert_int_equal(strlen(out), 500);
    assert_true(strspn(out, "a") == 500);

    /* a multi-byte character counts once */
    memset(in, 'a', 499);
    strcpy(in + 499, "\xc3\xa9\xc3\xa9zzz");
    px_status_phrase(in, out, sizeof(out));
    memset(want, 'a', 499);
    strcpy(want + 499, "?");
    assert_string_equal(out, want);

    for (int i = 0; i < 300; i++)
        memcpy(in + i * 3, "\xe6\x97\xa5", 3);
    in[900] = '\0';
    px_status_phrase(in, out, sizeof(out));
    assert_int_equal(strlen(out), 300);

    /* a cut that ends in a space is trimmed */
    memset(in, 'a', 499);
    strcpy(in + 499, " b");
    px_status_phrase(in, out, sizeof(out));
    assert_int_equal(strlen(out), 499);
}

static void phrase_respects_a_short_buffer(void **state)
{
    char out[16];

    (void)state;
    memset(out, 'Z', sizeof(out));
    px_status_phrase("host is not on the allow list", out, 8);
    assert_string_equal(out, "host is");
    assert_int_equal(out[8], 'Z');
    px_status_phrase("\xe6\x97\xa5\xe6\x97\xa5\xe6\x97\xa5", out, 3);
    assert_string_equal(out, "??");
    px_status_phrase("", out, 4);
    assert_string_equal(out, "For");
    out[0] = 'Z';
    px_status_phrase("x", out, 0);
    assert_int_equal(out[0], 'Z');
}

static void phrase_never_reads_past_a_cut_sequence(void **state)
{
    /* each ends right inside a multi-byte sequence; ASan checks the reads */
    static const char *const cut[] = { "\xe2", "\xe2\x80", "\xf0\x9f", "\xf0\x9f\x98", "\xc2" };

    (void)state;
    for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
        size_t n = strlen(cut[i]);
        char *heap = malloc(n + 1), out[16];

        assert_non_null(heap);
        memcpy(heap, cut[i], n + 1);
        px_status_phrase(heap, out, sizeof(out));
        assert_string_equal(out, "?");
        free(heap);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(http_urls_give_host_and_port),
        cmocka_unit_test(missing_port_is_1080),
        cmocka_unit_test(ipv6_needs_brackets),
        cmocka_unit_test(credentials_become_basic_auth),
        cmocka_unit_test(bad_percent_escapes_are_refused),
        cmocka_unit_test(other_schemes_are_refused),
        cmocka_unit_test(paths_queries_and_fragments_are_refused),
        cmocka_unit_test(bad_ports_are_refused),
        cmocka_unit_test(ports_with_signs_or_blanks_are_refused),
        cmocka_unit_test(malformed_hosts_are_refused),
        cmocka_unit_test(long_credentials_are_encoded_whole_or_refused),
        cmocka_unit_test(encoded_nul_in_credentials_is_not_silently_dropped),
        cmocka_unit_test(base64_padding_is_right_for_every_length),
        cmocka_unit_test(config_beats_https_proxy_beats_http_proxy),
        cmocka_unit_test(empty_values_are_skipped),
        cmocka_unit_test(nothing_set_means_no_parent),
        cmocka_unit_test(no_proxy_is_kept_with_the_chosen_parent),
        cmocka_unit_test(a_bad_url_is_an_error_naming_its_source),
        cmocka_unit_test(star_matches_everything),
        cmocka_unit_test(names_match_exactly_or_as_a_domain_suffix),
        cmocka_unit_test(port_entries_match_only_that_port),
        cmocka_unit_test(ip_literals_and_cidrs_match_addresses),
        cmocka_unit_test(ipv6_entries_match_with_or_without_brackets),
        cmocka_unit_test(whitespace_and_empty_entries_are_ignored),
        cmocka_unit_test(overlong_entries_are_skipped_not_truncated),
        cmocka_unit_test(phrase_keeps_printable_ascii),
        cmocka_unit_test(phrase_cannot_inject_headers),
        cmocka_unit_test(phrase_drops_angle_brackets),
        cmocka_unit_test(phrase_gives_one_question_mark_per_non_ascii_character),
        cmocka_unit_test(phrase_turns_invisible_formatting_into_spaces),
        cmocka_unit_test(phrase_turns_the_rest_of_srts_invisible_set_into_spaces),
        cmocka_unit_test(phrase_does_not_swallow_ascii_after_a_bad_byte),
        cmocka_unit_test(phrase_is_trimmed_and_forbidden_when_empty),
        cmocka_unit_test(phrase_is_at_most_500_characters),
        cmocka_unit_test(phrase_respects_a_short_buffer),
        cmocka_unit_test(phrase_never_reads_past_a_cut_sequence),
    };

    return cmocka_run_group_tests_name("parent", tests, NULL, NULL);
}
