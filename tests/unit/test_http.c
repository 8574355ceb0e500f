/* proxy/http.c: request and response heads, framing, the rebuilt upstream
 * request and the chunked-body framer. Every input is copied into a heap
 * buffer of exactly its length so that ASan catches a read past the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/http.h"

#define S(lit) lit, sizeof(lit) - 1

static char *dup_exact(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);

    assert_non_null(p);
    memcpy(p, s, n);
    return p;
}

static const char *result_name(enum px_http_result r)
{
    switch (r) {
    case PX_HTTP_INCOMPLETE:
        return "INCOMPLETE";
    case PX_HTTP_OK:
        return "OK";
    case PX_HTTP_BAD:
        return "BAD";
    case PX_HTTP_TOO_LARGE:
        return "TOO_LARGE";
    }
    return "?";
}

static const char *body_name(enum px_http_body b)
{
    switch (b) {
    case PX_BODY_NONE:
        return "NONE";
    case PX_BODY_LENGTH:
        return "LENGTH";
    case PX_BODY_CHUNKED:
        return "CHUNKED";
    case PX_BODY_CLOSE:
        return "CLOSE";
    }
    return "?";
}

static void expect_span(const char *name, const char *what, const char *got, size_t got_len,
                        const char *want)
{
    if (!want) {
        if (got) {
            fail_msg("%s: %s is \"%.*s\", want none", name, what, (int)got_len, got);
        }
        return;
    }
    if (!got || got_len != strlen(want) || memcmp(got, want, got_len) != 0) {
        fail_msg("%s: %s is \"%.*s\", want \"%s\"", name, what, got ? (int)got_len : 0,
                 got ? got : "", want);
    }
}

static bool inside(const char *p, size_t n, const char *buf, size_t len)
{
    return p >= buf && n <= len && p - buf <= (ptrdiff_t)(len - n);
}

/* Invariants of every OK parse: the head fits the buffer and the limit, and
 * every pointer handed out points into the head. */
static void check_headers_inside(const char *name, const struct px_http_header *h, size_t n,
                                 size_t head_len, const char *buf, size_t len)
{
    if (head_len == 0 || head_len > len || head_len > PX_HTTP_HEAD_MAX) {
        fail_msg("%s: head_len %zu of %zu", name, head_len, len);
    }
    if (n > PX_HTTP_MAX_HEADERS) {
        fail_msg("%s: %zu headers", name, n);
    }
    for (size_t i = 0; i < n; i++) {
        if (!inside(h[i].name, h[i].name_len, buf, head_len) ||
            !inside(h[i].value, h[i].value_len, buf, head_len) || h[i].name_len == 0) {
            fail_msg("%s: header %zu outside the head", name, i);
        }
    }
}

/* ---- requests that parse ---------------------------------------------- */

struct req_ok {
    const char *name;
    const char *in;
    size_t len;
    bool is_connect;
    const char *host;
    unsigned port;
    const char *target;
    int minor;
    bool keep_alive;
    enum px_http_body body;
    uint64_t cl;
};

static const struct req_ok req_ok_cases[] = {
    { "plain_get", S("GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n"), false,
      "example.com", 80, "/", 1, true, PX_BODY_NONE, 0 },
    { "scheme_is_case_insensitive_and_host_kept_as_sent",
      S("GET HTTP://Example.COM:8080/a/b?c=d HTTP/1.1\r\n\r\n"), false, "Example.COM", 8080,
      "/a/b?c=d", 1, true, PX_BODY_NONE, 0 },
    { "fragment_dropped", S("GET http://example.com/p?q=1#frag HTTP/1.1\r\n\r\n"), false,
      "example.com", 80, "/p?q=1", 1, true, PX_BODY_NONE, 0 },
    { "empty_path_is_slash", S("GET http://example.com HTTP/1.1\r\n\r\n"), false, "example.com", 80,
      "/", 1, true, PX_BODY_NONE, 0 },
    { "empty_path_with_fragment_is_slash", S("GET http://example.com#x HTTP/1.1\r\n\r\n"), false,
      "example.com", 80, "/", 1, true, PX_BODY_NONE, 0 },
    { "query_without_path_keeps_query", S("GET http://example.com?q=1#f HTTP/1.1\r\n\r\n"), false,
      "example.com", 80, "?q=1", 1, true, PX_BODY_NONE, 0 },
    { "ipv6_host_with_port", S("GET http://[::1]:8080/x HTTP/1.1\r\n\r\n"), false, "::1", 8080,
      "/x", 1, true, PX_BODY_NONE, 0 },
    { "ipv6_host_default_port_http10", S("GET http://[2001:db8::1]/ HTTP/1.0\r\n\r\n"), false,
      "2001:db8::1", 80, "/", 0, false, PX_BODY_NONE, 0 },
    { "ipv4_mapped_ipv6_host", S("GET http://[::ffff:1.2.3.4]/ HTTP/1.1\r\n\r\n"), false,
      "::ffff:1.2.3.4", 80, "/", 1, true, PX_BODY_NONE, 0 },
    { "port_1_and_sub_delims_in_host", S("GET http://a_b-c~d.example:1/ HTTP/1.1\r\n\r\n"), false,
      "a_b-c~d.example", 1, "/", 1, true, PX_BODY_NONE, 0 },
    { "port_65535", S("GET http://h:65535/ HTTP/1.1\r\n\r\n"), false, "h", 65535, "/", 1, true,
      PX_BODY_NONE, 0 },
    { "connect", S("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"), true,
      "example.com", 443, NULL, 1, true, PX_BODY_NONE, 0 },
    { "connect_ipv6", S("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n"), true, "2001:db8::1", 443,
      NULL, 1, true, PX_BODY_NONE, 0 },
    { "connect_port_leading_zeros", S("CONNECT h:00443 HTTP/1.1\r\n\r\n"), true, "h", 443, NULL, 1,
      true, PX_BODY_NONE, 0 },
    { "connect_content_length_zero", S("CONNECT h:443 HTTP/1.1\r\nContent-Length: 0\r\n\r\n"), true,
      "h", 443, NULL, 1, true, PX_BODY_NONE, 0 },
    { "content_length", S("POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n"), false, "h", 80,
      "/", 1, true, PX_BODY_LENGTH, 5 },
    { "content_length_zero", S("POST http://h/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n"), false, "h",
      80, "/", 1, true, PX_BODY_LENGTH, 0 },
    { "content_length_trimmed", S("POST http://h/ HTTP/1.1\r\nContent-Length: \t 12 \t\r\n\r\n"),
      false, "h", 80, "/", 1, true, PX_BODY_LENGTH, 12 },
    { "content_length_int64_max",
      S("POST http://h/ HTTP/1.1\r\nContent-Length: 9223372036854775807\r\n\r\n"), false, "h", 80,
      "/", 1, true, PX_BODY_LENGTH, 9223372036854775807ull },
    { "chunked", S("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), false, "h", 80,
      "/", 1, true, PX_BODY_CHUNKED, 0 },
    { "chunked_case_and_ows", S("POST http://h/ HTTP/1.1\r\nTransfer-Encoding:  ChUnKeD \r\n\r\n"),
      false, "h", 80, "/", 1, true, PX_BODY_CHUNKED, 0 },
    { "bare_lf_header_lines", S("GET http://h/ HTTP/1.1\r\nHost: h\nAccept: */*\n\n"), false, "h",
      80, "/", 1, true, PX_BODY_NONE, 0 },
    { "bare_lf_blank_line", S("GET http://h/ HTTP/1.1\r\n\n"), false, "h", 80, "/", 1, true,
      PX_BODY_NONE, 0 },
    { "token_method", S("M-SEARCH http://h/ HTTP/1.1\r\n\r\n"), false, "h", 80, "/", 1, true,
      PX_BODY_NONE, 0 },
    { "lowercase_connect_is_another_method", S("connect http://h/ HTTP/1.1\r\n\r\n"), false, "h",
      80, "/", 1, true, PX_BODY_NONE, 0 },
    { "obs_text_in_value", S("GET http://h/ HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n"), false, "h", 80,
      "/", 1, true, PX_BODY_NONE, 0 },
    { "empty_value", S("GET http://h/ HTTP/1.1\r\nX:\r\nY: \r\n\r\n"), false, "h", 80, "/", 1, true,
      PX_BODY_NONE, 0 },
    { "http10_keep_alive", S("GET http://h/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), false,
      "h", 80, "/", 0, true, PX_BODY_NONE, 0 },
};

static void check_req_ok(const struct req_ok *c, const char *buf, size_t len,
                         const struct px_http_request *r)
{
    check_headers_inside(c->name, r->headers, r->n_headers, r->head_len, buf, len);
    if (r->head_len != c->len) {
        fail_msg("%s: head_len %zu, want %zu", c->name, r->head_len, c->len);
    }
    if (r->is_connect != c->is_connect || r->port != c->port || r->version_minor != c->minor ||
        r->keep_alive != c->keep_alive || r->body != c->body || r->content_length != c->cl) {
        fail_msg("%s: connect=%d port=%u minor=%d keep_alive=%d body=%s cl=%llu", c->name,
                 r->is_connect, r->port, r->version_minor, r->keep_alive, body_name(r->body),
                 (unsigned long long)r->content_length);
    }
    expect_span(c->name, "host", r->host, r->host_len, c->host);
    expect_span(c->name, "target", r->target, r->target_len, c->target);
    if (!inside(r->host, r->host_len, buf, len) || !inside(r->method, r->method_len, buf, len)) {
        fail_msg("%s: host or method outside the buffer", c->name);
    }
}

static void request_accepts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(req_ok_cases) / sizeof(req_ok_cases[0]); i++) {
        const struct req_ok *c = &req_ok_cases[i];
        struct px_http_request r;
        char *buf = dup_exact(c->in, c->len);
        enum px_http_result res = px_http_parse_request(buf, c->len, &r);

        if (res != PX_HTTP_OK) {
            fail_msg("%s: %s, want OK", c->name, result_name(res));
        }
        check_req_ok(c, buf, c->len, &r);
        free(buf);
    }
}

/* A client that sends its head one byte at a time gets INCOMPLETE until the
 * last byte, then exactly what it would have got at once. */
static void request_byte_at_a_time(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(req_ok_cases) / sizeof(req_ok_cases[0]); i++) {
        const struct req_ok *c = &req_ok_cases[i];
        struct px_http_request r;

        for (size_t k = 0; k <= c->len; k++) {
            char *buf = dup_exact(c->in, k);
            enum px_http_result res = px_http_parse_request(buf, k, &r);

            if (k < c->len && res != PX_HTTP_INCOMPLETE) {
                fail_msg("%s: prefix %zu gives %s", c->name, k, result_name(res));
            }
            if (k == c->len) {
                assert_int_equal(res, PX_HTTP_OK);
                check_req_ok(c, buf, k, &r);
            }
            free(buf);
        }
    }
}

static void request_head_len_excludes_body(void **state)
{
    static const char in[] = "POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET x";
    struct px_http_request r;

    (void)state;
    assert_int_equal(px_http_parse_request(in, sizeof(in) - 1, &r), PX_HTTP_OK);
    assert_int_equal(r.head_len, sizeof(in) - 1 - strlen("helloGET x"));
    assert_int_equal(r.body, PX_BODY_LENGTH);
}

static void request_headers_trimmed_and_found(void **state)
{
    static const char in[] = "GET http://h/ HTTP/1.1\r\n"
                             "X-A:value\r\n"
                             "X-B: \t spaced out \t \r\n"
                             "x-c:\t\r\n"
                             "Host:  the.host:81  \r\n"
                             "X-A: second\r\n\r\n";
    struct px_http_request r;
    const struct px_http_header *h;

    (void)state;
    assert_int_equal(px_http_parse_request(in, sizeof(in) - 1, &r), PX_HTTP_OK);
    assert_int_equal(r.n_headers, 5);
    expect_span("trim", "X-A", r.headers[0].value, r.headers[0].value_len, "value");
    expect_span("trim", "X-B", r.headers[1].value, r.headers[1].value_len, "spaced out");
    expect_span("trim", "x-c", r.headers[2].value, r.headers[2].value_len, "");
    expect_span("trim", "name", r.headers[1].name, r.headers[1].name_len, "X-B");
    expect_span("trim", "host_header", r.host_header, r.host_header_len, "the.host:81");
    h = px_http_find(r.headers, r.n_headers, "x-a");
    assert_ptr_equal(h, &r.headers[0]);
    h = px_http_find(r.headers, r.n_headers, "X-C");
    assert_ptr_equal(h, &r.headers[2]);
    assert_null(px_http_find(r.headers, r.n_headers, "X-D"));
    assert_null(px_http_find(r.headers, r.n_headers, "X-"));
    assert_null(px_http_find(r.headers, 0, "X-A"));
}

/* ---- requests that are refused --------------------------------------- */

struct req_bad {
    const char *name;
    const char *in;
    size_t len;
    enum px_http_result want;
};

#define RB(name, lit)                                                                              \
    {                                                                                              \
        name, S(lit), PX_HTTP_BAD                                                                  \
    }

static const struct req_bad req_bad_cases[] = {
    /* request targets */
    RB("origin_form", "GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
    RB("asterisk_form", "OPTIONS * HTTP/1.1\r\n\r\n"),
    RB("authority_form_without_connect", "GET h:80 HTTP/1.1\r\n\r\n"),
    RB("https_scheme", "GET https://h/ HTTP/1.1\r\n\r\n"),
    RB("ftp_scheme", "GET ftp://h/ HTTP/1.1\r\n\r\n"),
    RB("httpx_scheme", "GET httpx://h/ HTTP/1.1\r\n\r\n"),
    RB("one_slash", "GET http:/h/ HTTP/1.1\r\n\r\n"),
    RB("no_slashes", "GET http:h HTTP/1.1\r\n\r\n"),
    RB("userinfo", "GET http://user@h/ HTTP/1.1\r\n\r\n"),
    RB("userinfo_with_password", "GET http://u:p@h/ HTTP/1.1\r\n\r\n"),
    RB("userinfo_allowed_at_evil", "GET http://allowed.com@evil.com/ HTTP/1.1\r\n\r\n"),
    RB("userinfo_before_ipv6", "GET http://u@[::1]/ HTTP/1.1\r\n\r\n"),
    RB("backslash_in_host", "GET http://evil.com\\allowed.com/ HTTP/1.1\r\n\r\n"),
    RB("percent_in_host", "GET http://127%2e0.0.1/ HTTP/1.1\r\n\r\n"),
    RB("empty_host", "GET http:///x HTTP/1.1\r\n\r\n"),
    RB("empty_host_with_port", "GET http://:80/ HTTP/1.1\r\n\r\n"),
    RB("empty_port", "GET http://h:/ HTTP/1.1\r\n\r\n"),
    RB("port_zero", "GET http://h:0/ HTTP/1.1\r\n\r\n"),
    RB("port_65536", "GET http://h:65536/ HTTP/1.1\r\n\r\n"),
    RB("port_overflow", "GET http://h:99999999999999999999999/ HTTP/1.1\r\n\r\n"),
    RB("port_hex", "GET http://h:8a/ HTTP/1.1\r\n\r\n"),
    RB("port_plus", "GET http://h:+80/ HTTP/1.1\r\n\r\n"),
    RB("port_negative", "GET http://h:-1/ HTTP/1.1\r\n\r\n"),
    RB("two_ports", "GET http://h:80:81/ HTTP/1.1\r\n\r\n"),
    RB("ipv6_unbracketed", "GET http://::1/ HTTP/1.1\r\n\r\n"),
    RB("ipv6_unclosed", "GET http://[::1/ HTTP/1.1\r\n\r\n"),
    RB("ipv6_empty", "GET http://[]/ HTTP/1.1\r\n\r\n"),
    RB("ipv6_no_colon", "GET http://[1.2.3.4]/ HTTP/1.1\r\n\r\n"),
    RB("ipv6_bad_char", "GET http://[zz::1]/ HTTP/1.1\r\n\r\n"),
    RB("ipv6_zone_id", "GET http://[fe80::1%25eth0]/ HTTP/1.1\r\n\r\n"),
    RB("ipv6_junk_after_bracket", "GET http://[::1]x/ HTTP/1.1\r\n\r\n"),
    RB("ipv6_empty_port", "GET http://[::1]:/ HTTP/1.1\r\n\r\n"),
    RB("connect_no_port", "CONNECT example.com HTTP/1.1\r\n\r\n"),
    RB("connect_empty_port", "CONNECT example.com: HTTP/1.1\r\n\r\n"),
    RB("connect_port_zero", "CONNECT example.com:0 HTTP/1.1\r\n\r\n"),
    RB("connect_port_65536", "CONNECT example.com:65536 HTTP/1.1\r\n\r\n"),
    RB("connect_ipv6_no_port", "CONNECT [::1] HTTP/1.1\r\n\r\n"),
    RB("connect_ipv6_unbracketed", "CONNECT ::1:443 HTTP/1.1\r\n\r\n"),
    RB("connect_absolute_url", "CONNECT http://h:443/ HTTP/1.1\r\n\r\n"),
    RB("connect_userinfo", "CONNECT u@h:443 HTTP/1.1\r\n\r\n"),
    RB("connect_path", "CONNECT h:443/x HTTP/1.1\r\n\r\n"),
    RB("connect_empty_host", "CONNECT :443 HTTP/1.1\r\n\r\n"),
    RB("lowercase_connect_authority", "connect h:443 HTTP/1.1\r\n\r\n"),
    /* request line */
    RB("two_spaces", "GET  http://h/ HTTP/1.1\r\n\r\n"),
    RB("tab_separator", "GET\thttp://h/ HTTP/1.1\r\n\r\n"),
    RB("leading_space", " GET http://h/ HTTP/1.1\r\n\r\n"),
    RB("trailing_space", "GET http://h/ HTTP/1.1 \r\n\r\n"),
    RB("version_1_2", "GET http://h/ HTTP/1.2\r\n\r\n"),
    RB("version_2", "GET http://h/ HTTP/2.0\r\n\r\n"),
    RB("version_lowercase", "GET http://h/ http/1.1\r\n\r\n"),
    RB("version_1_10", "GET http://h/ HTTP/1.10\r\n\r\n"),
    RB("http09_no_version", "GET http://h/\r\n\r\n"),
    RB("empty_method", " http://h/ HTTP/1.1\r\n\r\n"),
    RB("method_not_token", "G(T http://h/ HTTP/1.1\r\n\r\n"),
    RB("bare_lf_request_line", "GET http://h/ HTTP/1.1\n\r\n"),
    RB("empty_line_before_request", "\r\nGET http://h/ HTTP/1.1\r\n\r\n"),
    RB("bare_cr_request_line", "GET http://h/ HTTP/1.1\rX: y\r\n\r\n"),
    RB("space_in_target", "GET http://h/a b HTTP/1.1\r\n\r\n"),
    RB("non_ascii_in_target", "GET http://h/\xc3\xa9 HTTP/1.1\r\n\r\n"),
    RB("del_in_target", "GET http://h/\x7f HTTP/1.1\r\n\r\n"),
    RB("control_in_target", "GET http://h/\x01 HTTP/1.1\r\n\r\n"),
    { "nul_in_target", S("GET http://h/\0 HTTP/1.1\r\n\r\n"), PX_HTTP_BAD },
    RB("http2_preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
    RB("tls_client_hello", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"),
    /* header lines */
    RB("obs_fold", "GET http://h/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n"),
    RB("obs_fold_tab", "GET http://h/ HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n"),
    RB("whitespace_first_header", "GET http://h/ HTTP/1.1\r\n X: a\r\n\r\n"),
    RB("space_before_colon", "GET http://h/ HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n"),
    RB("tab_before_colon", "GET http://h/ HTTP/1.1\r\nContent-Length\t: 5\r\n\r\n"),
    RB("no_colon", "GET http://h/ HTTP/1.1\r\nNoColon\r\n\r\n"),
    RB("empty_name", "GET http://h/ HTTP/1.1\r\n: x\r\n\r\n"),
    RB("name_with_space", "GET http://h/ HTTP/1.1\r\nX Y: z\r\n\r\n"),
    RB("name_not_token", "GET http://h/ HTTP/1.1\r\nX(: z\r\n\r\n"),
    RB("bare_cr_in_value", "GET http://h/ HTTP/1.1\r\nX: a\rb\r\n\r\n"),
    RB("cr_cr_lf", "GET http://h/ HTTP/1.1\r\nX: a\r\r\n\r\n"),
    RB("bare_cr_blank_line", "GET http://h/ HTTP/1.1\r\nX: a\r\n\r\r\n"),
    { "nul_in_value", S("GET http://h/ HTTP/1.1\r\nX: a\0b\r\n\r\n"), PX_HTTP_BAD },
    { "nul_in_name", S("GET http://h/ HTTP/1.1\r\nX\0: a\r\n\r\n"), PX_HTTP_BAD },
    RB("vt_in_value", "GET http://h/ HTTP/1.1\r\nX: a\x0b"
                      "b\r\n\r\n"),
    RB("del_in_value", "GET http://h/ HTTP/1.1\r\nX: a\x7f\r\n\r\n"),
    RB("esc_in_value", "GET http://h/ HTTP/1.1\r\nX: \x1b[31m\r\n\r\n"),
    /* framing: smuggling */
    RB("cl_duplicate_equal", "POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\n"
                             "Content-Length: 5\r\n\r\n"),
    RB("cl_duplicate_different", "POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\n"
                                 "content-length: 6\r\n\r\n"),
    RB("cl_list", "POST http://h/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n"),
    RB("cl_plus", "POST http://h/ HTTP/1.1\r\nContent-Length: +5\r\n\r\n"),
    RB("cl_negative", "POST http://h/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n"),
    RB("cl_inner_space", "POST http://h/ HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n"),
    RB("cl_hex", "POST http://h/ HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n"),
    RB("cl_empty", "POST http://h/ HTTP/1.1\r\nContent-Length:\r\n\r\n"),
    RB("cl_int64_max_plus_1", "POST http://h/ HTTP/1.1\r\n"
                              "Content-Length: 9223372036854775808\r\n\r\n"),
    RB("cl_uint64_overflow", "POST http://h/ HTTP/1.1\r\n"
                             "Content-Length: 18446744073709551616\r\n\r\n"),
    RB("cl_huge", "POST http://h/ HTTP/1.1\r\n"
                  "Content-Length: 99999999999999999999999999999999999999\r\n\r\n"),
    RB("cl_then_te", "POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n"),
    RB("te_then_cl", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                     "Content-Length: 5\r\n\r\n"),
    RB("te_gzip", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"),
    RB("te_gzip_chunked", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
    RB("te_chunked_gzip", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"),
    RB("te_chunked_twice",
       "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"),
    RB("te_two_headers", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                         "Transfer-Encoding: chunked\r\n\r\n"),
    RB("te_chunked_then_identity", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                                   "Transfer-Encoding: identity\r\n\r\n"),
    RB("te_empty", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n"),
    RB("te_only_commas", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: , ,\r\n\r\n"),
    RB("te_xchunked", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n"),
    RB("te_chunked_param", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked;x=1\r\n\r\n"),
    RB("te_quoted", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: \"chunked\"\r\n\r\n"),
    RB("te_vertical_tab", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding:\x0b"
                          "chunked\r\n\r\n"),
    RB("te_form_feed", "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\x0c\r\n\r\n"),
    RB("te_in_http10", "POST http://h/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"),
    RB("connect_with_body", "CONNECT h:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n"),
    RB("connect_chunked", "CONNECT h:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
    RB("duplicate_host", "GET http://h/ HTTP/1.1\r\nHost: h\r\nHost: evil\r\n\r\n"),
    /* refused before the head is complete */
    { "nul_in_unfinished_line", S("GET http://h/ HTTP/1.1\r\nX: \0"), PX_HTTP_BAD },
    RB("bare_cr_in_unfinished_line", "GET http://h/ HTTP/1.1\r\nX: a\rb"),
    RB("bad_request_line_before_headers_end", "GET / HTTP/1.1\r\nX: a"),
};

static void request_rejects(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(req_bad_cases) / sizeof(req_bad_cases[0]); i++) {
        const struct req_bad *c = &req_bad_cases[i];
        struct px_http_request r;
        char *buf = dup_exact(c->in, c->len);
        enum px_http_result res = px_http_parse_request(buf, c->len, &r);

        if (res != c->want) {
            fail_msg("%s: %s, want %s", c->name, result_name(res), result_name(c->want));
        }
        /* No prefix of a refused head is ever accepted. */
        for (size_t k = 0; k < c->len; k++) {
            res = px_http_parse_request(buf, k, &r);
            if (res != PX_HTTP_INCOMPLETE && res != c->want) {
                fail_msg("%s: prefix %zu gives %s", c->name, k, result_name(res));
            }
        }
        free(buf);
    }
}

/* ---- limits ------------------------------------------------------------ */

/* A request whose head is exactly total bytes long (padded by one header). */
static char *head_of_size(size_t total, size_t *len)
{
    static const char start[] = "GET http://h/ HTTP/1.1\r\nX: ";
    static const char end[] = "\r\n\r\n";
    char *buf = malloc(total);
    size_t pad = total - (sizeof(start) - 1) - (sizeof(end) - 1);

    assert_non_null(buf);
    memcpy(buf, start, sizeof(start) - 1);
    memset(buf + sizeof(start) - 1, 'a', pad);
    memcpy(buf + total - (sizeof(end) - 1), end, sizeof(end) - 1);
    *len = total;
    return buf;
}

static void request_head_limit(void **state)
{
    struct px_http_request r;
    size_t len;
    char *buf;

    (void)state;
    buf = head_of_size(PX_HTTP_HEAD_MAX, &len);
    assert_int_equal(px_http_parse_request(buf, len, &r), PX_HTTP_OK);
    assert_int_equal(r.head_len, PX_HTTP_HEAD_MAX);
    assert_int_equal(px_http_parse_request(buf, len - 1, &r), PX_HTTP_INCOMPLETE);
    free(buf);

    buf = head_of_size(PX_HTTP_HEAD_MAX + 1, &len);
    assert_int_equal(px_http_parse_request(buf, len, &r), PX_HTTP_TOO_LARGE);
    /* Exactly the limit held and still no end: no point waiting. */
    assert_int_equal(px_http_parse_request(buf, PX_HTTP_HEAD_MAX, &r), PX_HTTP_TOO_LARGE);
    assert_int_equal(px_http_parse_request(buf, PX_HTTP_HEAD_MAX - 1, &r), PX_HTTP_INCOMPLETE);
    free(buf);

    /* One endless line, far past the limit. */
    len = 4 * PX_HTTP_HEAD_MAX;
    buf = malloc(len);
    assert_non_null(buf);
    memcpy(buf, "GET http://h/", 13);
    memset(buf + 13, 'a', len - 13);
    assert_int_equal(px_http_parse_request(buf, len, &r), PX_HTTP_TOO_LARGE);
    free(buf);
}

static char *with_headers(const char *first, size_t n, size_t *len)
{
    size_t cap = 64 + n * 16;
    char *buf = malloc(cap);
    size_t off;

    assert_non_null(buf);
    off = (size_t)snprintf(buf, cap, "%s\r\n", first);
    for (size_t i = 0; i < n; i++) {
        off += (size_t)snprintf(buf + off, cap - off, "X-%zu: v\r\n", i);
    }
    off += (size_t)snprintf(buf + off, cap - off, "\r\n");
    *len = off;
    return buf;
}

static void header_count_limit(void **state)
{
    struct px_http_request r;
    struct px_http_response resp;
    size_t len;
    char *buf;

    (void)state;
    buf = with_headers("GET http://h/ HTTP/1.1", PX_HTTP_MAX_HEADERS, &len);
    assert_int_equal(px_http_parse_request(buf, len, &r), PX_HTTP_OK);
    assert_int_equal(r.n_headers, PX_HTTP_MAX_HEADERS);
    free(buf);

    buf = with_headers("GET http://h/ HTTP/1.1", PX_HTTP_MAX_HEADERS + 1, &len);
    assert_int_equal(px_http_parse_request(buf, len, &r), PX_HTTP_TOO_LARGE);
    /* Known as soon as the extra header line is complete. */
    assert_int_equal(px_http_parse_request(buf, len - 2, &r), PX_HTTP_TOO_LARGE);
    free(buf);

    buf = with_headers("HTTP/1.1 200 OK", PX_HTTP_MAX_HEADERS, &len);
    assert_int_equal(px_http_parse_response(buf, len, false, &resp), PX_HTTP_OK);
    assert_int_equal(resp.n_headers, PX_HTTP_MAX_HEADERS);
    free(buf);

    buf = with_headers("HTTP/1.1 200 OK", PX_HTTP_MAX_HEADERS + 1, &len);
    assert_int_equal(px_http_parse_response(buf, len, false, &resp), PX_HTTP_TOO_LARGE);
    free(buf);
}

/* ---- keep-alive ---------------------------------------------------------- */

struct ka_case {
    const char *conn; /* header lines, or "" */
    bool ka10;
    bool ka11;
};

static const struct ka_case ka_cases[] = {
    { "", false, true },
    { "Connection: close\r\n", false, false },
    { "Connection: CLOSE\r\n", false, false },
    { "Connection: keep-alive\r\n", true, true },
    { "Connection: Keep-Alive\r\n", true, true },
    { "Connection: keep-alive, close\r\n", false, false },
    { "Connection: foo, close\r\n", false, false },
    { "Connection: , ,close,\r\n", false, false },
    { "Connection: upgrade\r\n", false, true },
    { "Connection: closed\r\n", false, true },
    { "Connection: keep-alive\r\nConnection: close\r\n", false, false },
    { "Connection: x\r\nConnection: Keep-Alive \r\n", true, true },
    { "Proxy-Connection: keep-alive\r\n", false, true },
    { "Keep-Alive: timeout=5\r\n", false, true },
};

static void keep_alive_matrix(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(ka_cases) / sizeof(ka_cases[0]); i++) {
        for (int minor = 0; minor <= 1; minor++) {
            bool want = minor ? ka_cases[i].ka11 : ka_cases[i].ka10;
            struct px_http_request r;
            struct px_http_response resp;
            char buf[512];
            int n;

            n = snprintf(buf, sizeof(buf), "GET http://h/ HTTP/1.%d\r\n%s\r\n", minor,
                         ka_cases[i].conn);
            assert_int_equal(px_http_parse_request(buf, (size_t)n, &r), PX_HTTP_OK);
            if (r.keep_alive != want) {
                fail_msg("request 1.%d [%s]: keep_alive %d", minor, ka_cases[i].conn, r.keep_alive);
            }
            n = snprintf(buf, sizeof(buf), "HTTP/1.%d 200 OK\r\nContent-Length: 0\r\n%s\r\n", minor,
                         ka_cases[i].conn);
            assert_int_equal(px_http_parse_response(buf, (size_t)n, false, &resp), PX_HTTP_OK);
            if (resp.keep_alive != want) {
                fail_msg("response 1.%d [%s]: keep_alive %d", minor, ka_cases[i].conn,
                         resp.keep_alive);
            }
        }
    }
}

/* ---- responses ------------------------------------------------------------ */

struct resp_ok {
    const char *name;
    const char *in;
    size_t len;
    bool head_request;
    int status;
    int minor;
    enum px_http_body body;
    uint64_t cl;
    bool keep_alive;
};

static const struct resp_ok resp_ok_cases[] = {
    { "content_length", S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"), false, 200, 1,
      PX_BODY_LENGTH, 5, true },
    { "chunked", S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), false, 200, 1,
      PX_BODY_CHUNKED, 0, true },
    { "chunked_final_after_gzip", S("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
      false, 200, 1, PX_BODY_CHUNKED, 0, true },
    { "chunked_final_across_headers",
      S("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"), false,
      200, 1, PX_BODY_CHUNKED, 0, true },
    { "chunked_not_final_reads_to_close",
      S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"), false, 200, 1,
      PX_BODY_CLOSE, 0, false },
    { "gzip_only_reads_to_close", S("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n"), false,
      200, 1, PX_BODY_CLOSE, 0, false },
    { "no_framing_reads_to_close", S("HTTP/1.1 200 OK\r\n\r\n"), false, 200, 1, PX_BODY_CLOSE, 0,
      false },
    { "http10_chunked_is_faulty",
      S("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n"
        "Connection: keep-alive\r\n\r\n"),
      false, 200, 0, PX_BODY_CLOSE, 0, false },
    { "http10_length", S("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n"), false, 200, 0,
      PX_BODY_LENGTH, 3, false },
    { "http10_length_keep_alive",
      S("HTTP/1.0 200 OK\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\n"), false, 200, 0,
      PX_BODY_LENGTH, 3, true },
    { "connection_close", S("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"),
      false, 200, 1, PX_BODY_LENGTH, 3, false },
    { "head_with_length", S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"), true, 200, 1,
      PX_BODY_NONE, 0, true },
    { "head_with_chunked", S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), true, 200, 1,
      PX_BODY_NONE, 0, true },
    { "head_without_framing", S("HTTP/1.1 200 OK\r\n\r\n"), true, 200, 1, PX_BODY_NONE, 0, true },
    { "no_content", S("HTTP/1.1 204 No Content\r\n\r\n"), false, 204, 1, PX_BODY_NONE, 0, true },
    { "not_modified_with_length", S("HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n"),
      false, 304, 1, PX_BODY_NONE, 0, true },
    { "continue", S("HTTP/1.1 100 Continue\r\n\r\n"), false, 100, 1, PX_BODY_NONE, 0, true },
    { "switching_protocols", S("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"), false,
      101, 1, PX_BODY_NONE, 0, true },
    { "not_found_length", S("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"), false, 404, 1,
      PX_BODY_LENGTH, 0, true },
    { "no_reason_no_space", S("HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n"), false, 200, 1,
      PX_BODY_LENGTH, 1, true },
    { "empty_reason", S("HTTP/1.1 200 \r\nContent-Length: 1\r\n\r\n"), false, 200, 1,
      PX_BODY_LENGTH, 1, true },
    { "reason_with_obs_text_and_tab", S("HTTP/1.1 599 D\xc3\xa9j\xc3\xa0\tvu\r\n\r\n"), false, 599,
      1, PX_BODY_CLOSE, 0, false },
    { "bare_lf_headers", S("HTTP/1.1 200 OK\r\nContent-Length: 2\nX: y\n\n"), false, 200, 1,
      PX_BODY_LENGTH, 2, true },
};

static void check_resp_ok(const struct resp_ok *c, const char *buf,
                          const struct px_http_response *r)
{
    check_headers_inside(c->name, r->headers, r->n_headers, r->head_len, buf, c->len);
    if (r->head_len != c->len || r->status != c->status || r->version_minor != c->minor ||
        r->body != c->body || r->content_length != c->cl || r->keep_alive != c->keep_alive) {
        fail_msg("%s: head_len=%zu status=%d minor=%d body=%s cl=%llu keep_alive=%d", c->name,
                 r->head_len, r->status, r->version_minor, body_name(r->body),
                 (unsigned long long)r->content_length, r->keep_alive);
    }
}

static void response_accepts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(resp_ok_cases) / sizeof(resp_ok_cases[0]); i++) {
        const struct resp_ok *c = &resp_ok_cases[i];
        struct px_http_response r;

        for (size_t k = 0; k <= c->len; k++) {
            char *buf = dup_exact(c->in, k);
            enum px_http_result res = px_http_parse_response(buf, k, c->head_request, &r);

            if (k < c->len && res != PX_HTTP_INCOMPLETE) {
                fail_msg("%s: prefix %zu gives %s", c->name, k, result_name(res));
            }
            if (k == c->len) {
                if (res != PX_HTTP_OK) {
                    fail_msg("%s: %s, want OK", c->name, result_name(res));
                }
                check_resp_ok(c, buf, &r);
            }
            free(buf);
        }
    }
}

static const struct req_bad resp_bad_cases[] = {
    RB("bare_lf_status_line", "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n"),
    RB("two_digit_status", "HTTP/1.1 20 OK\r\n\r\n"),
    RB("four_digit_status", "HTTP/1.1 2000 OK\r\n\r\n"),
    RB("status_600", "HTTP/1.1 600 X\r\n\r\n"),
    RB("status_099", "HTTP/1.1 099 X\r\n\r\n"),
    RB("status_not_digits", "HTTP/1.1 2x0 OK\r\n\r\n"),
    RB("version_1_2", "HTTP/1.2 200 OK\r\n\r\n"),
    RB("version_2", "HTTP/2 200 OK\r\n\r\n"),
    RB("icy", "ICY 200 OK\r\n\r\n"),
    RB("two_spaces", "HTTP/1.1  200 OK\r\n\r\n"),
    RB("control_in_reason", "HTTP/1.1 200 O\x01K\r\n\r\n"),
    RB("bare_cr_in_reason", "HTTP/1.1 200 O\rK\r\n\r\n"),
    RB("cl_duplicate", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n"),
    RB("cl_and_te", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"),
    RB("cl_and_te_head",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n"),
    RB("chunked_twice", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"),
    RB("te_empty", "HTTP/1.1 200 OK\r\nTransfer-Encoding: \r\n\r\n"),
    RB("cl_overflow", "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551617\r\n\r\n"),
    RB("cl_not_number", "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n"),
    RB("obs_fold", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n"),
    RB("space_before_colon", "HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\n"),
    { "nul_in_header", S("HTTP/1.1 200 OK\r\nX: \0\r\n\r\n"), PX_HTTP_BAD },
    RB("bare_cr", "HTTP/1.1 200 OK\r\nX: a\r\rY: b\r\n\r\n"),
    RB("response_splitting_cr", "HTTP/1.1 200 OK\r\nSet-Cookie: a\rHTTP/1.1 200 OK\r\n\r\n"),
};

static void response_rejects(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(resp_bad_cases) / sizeof(resp_bad_cases[0]); i++) {
        const struct req_bad *c = &resp_bad_cases[i];
        struct px_http_response r;
        char *buf = dup_exact(c->in, c->len);
        enum px_http_result res = px_http_parse_response(buf, c->len, false, &r);

        if (res != c->want) {
            fail_msg("%s: %s, want %s", c->name, result_name(res), result_name(c->want));
        }
        for (size_t k = 0; k < c->len; k++) {
            res = px_http_parse_response(buf, k, false, &r);
            if (res != PX_HTTP_INCOMPLETE && res != c->want) {
                fail_msg("%s: prefix %zu gives %s", c->name, k, result_name(res));
            }
        }
        free(buf);
    }
}

static void response_head_limit(void **state)
{
    struct px_http_response r;
    size_t len = PX_HTTP_HEAD_MAX + 10;
    char *buf = malloc(len);

    (void)state;
    assert_non_null(buf);
    memcpy(buf, "HTTP/1.1 200 OK\r\nX: ", 20);
    memset(buf + 20, 'b', len - 20);
    assert_int_equal(px_http_parse_response(buf, len, false, &r), PX_HTTP_TOO_LARGE);
    assert_int_equal(px_http_parse_response(buf, 100, false, &r), PX_HTTP_INCOMPLETE);
    free(buf);
}

/* ---- hop-by-hop and the rebuilt request ---------------------------------- */

static void hop_by_hop(void **state)
{
    static const char in[] = "GET http://h/ HTTP/1.1\r\n"
                             "Connection: X-Secret, content-length, keep-alive\r\n"
                             "Keep-Alive: 5\r\n"
                             "PROXY-AUTHORIZATION: Basic eA==\r\n"
                             "Proxy-Authenticate: x\r\n"
                             "Proxy-Connection: keep-alive\r\n"
                             "TE: trailers\r\n"
                             "Trailer: X\r\n"
                             "Upgrade: h2c\r\n"
                             "x-secret: 1\r\n"
                             "X-Secret-2: 2\r\n"
                             "Content-Length: 0\r\n"
                             "Host: h\r\n\r\n";
    static const bool want[] = { true, true, true, true,  true,  true,
                                 true, true, true, false, false, false };
    struct px_http_request r;

    (void)state;
    assert_int_equal(px_http_parse_request(in, sizeof(in) - 1, &r), PX_HTTP_OK);
    assert_int_equal(r.n_headers, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < r.n_headers; i++) {
        if (px_http_is_hop_by_hop(&r, &r.headers[i]) != want[i]) {
            fail_msg("header %zu (%.*s): hop-by-hop %d", i, (int)r.headers[i].name_len,
                     r.headers[i].name, !want[i]);
        }
    }
    /* Without a request only the fixed list applies. */
    assert_true(px_http_is_hop_by_hop(NULL, &r.headers[1]));
    assert_false(px_http_is_hop_by_hop(NULL, &r.headers[9]));
}

struct build_case {
    const char *name;
    const char *in;
    const char *host;
    unsigned port;
    const char *want;
};

static const struct build_case build_cases[] = {
    { "host_replaced_order_kept",
      "GET http://example.com/a?b#c HTTP/1.1\r\nHost: other.example\r\nUser-Agent: t\r\n"
      "Accept: */*\r\n\r\n",
      "example.com", 80,
      "GET /a?b HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\nAccept: */*\r\n\r\n" },
    { "ipv6_and_port", "GET http://[2001:DB8::1]:8080/ HTTP/1.1\r\n\r\n", "2001:db8::1", 8080,
      "GET / HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\n\r\n" },
    { "ipv6_port_80", "GET http://[::1]/x HTTP/1.1\r\n\r\n", "::1", 80,
      "GET /x HTTP/1.1\r\nHost: [::1]\r\n\r\n" },
    { "non_80_port", "GET http://h:8080 HTTP/1.1\r\n\r\n", "h", 8080,
      "GET / HTTP/1.1\r\nHost: h:8080\r\n\r\n" },
    { "http10_client_sent_as_11", "HEAD http://h/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "h",
      80, "HEAD / HTTP/1.1\r\nHost: h\r\n\r\n" },
    { "hop_by_hop_stripped",
      "POST http://h/p HTTP/1.1\r\nConnection: close, X-Foo\r\nKeep-Alive: 5\r\n"
      "Proxy-Authorization: Basic eA==\r\nProxy-Connection: keep-alive\r\nTE: trailers\r\n"
      "Trailer: X\r\nUpgrade: h2c\r\nX-Foo: 1\r\nX-Bar: 2\r\nContent-Length: 3\r\n\r\n",
      "h", 80, "POST /p HTTP/1.1\r\nHost: h\r\nX-Bar: 2\r\nContent-Length: 3\r\n\r\n" },
    { "content_length_survives_connection",
      "POST http://h/ HTTP/1.1\r\nConnection: Content-Length\r\nContent-Length: 3\r\n\r\n", "h", 80,
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n" },
    { "chunked_forwarded",
      "POST http://h/ HTTP/1.1\r\nTransfer-Encoding:  Chunked \r\nX: y\r\n\r\n", "h", 80,
      "POST / HTTP/1.1\r\nHost: h\r\nX: y\r\nTransfer-Encoding: chunked\r\n\r\n" },
    { "query_without_path", "GET http://h?q=1 HTTP/1.1\r\n\r\n", "h", 80,
      "GET /?q=1 HTTP/1.1\r\nHost: h\r\n\r\n" },
    { "values_trimmed_crlf_normalised", "GET http://h/ HTTP/1.1\r\nX:   a b \t\nY:\n\n", "h", 80,
      "GET / HTTP/1.1\r\nHost: h\r\nX: a b\r\nY: \r\n\r\n" },
    { "canonical_host_used", "GET http://0x7f.1:81/ HTTP/1.1\r\n\r\n", "127.0.0.1", 81,
      "GET / HTTP/1.1\r\nHost: 127.0.0.1:81\r\n\r\n" },
};

static void build_request_exact(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(build_cases) / sizeof(build_cases[0]); i++) {
        const struct build_case *c = &build_cases[i];
        size_t want_len = strlen(c->want);
        struct px_http_request r;
        char out[1024];
        ssize_t n;

        if (px_http_parse_request(c->in, strlen(c->in), &r) != PX_HTTP_OK) {
            fail_msg("%s: does not parse", c->name);
        }
        n = px_http_build_request(&r, c->host, c->port, out, sizeof(out));
        if (n < 0 || (size_t)n != want_len || memcmp(out, c->want, want_len) != 0) {
            fail_msg("%s: built \"%.*s\"", c->name, n < 0 ? 0 : (int)n, out);
        }
        /* Every buffer too small by any amount fails whole, and never
         * writes past its end. */
        for (size_t sz = 0; sz < want_len; sz++) {
            char *small = malloc(sz ? sz : 1);

            assert_non_null(small);
            if (px_http_build_request(&r, c->host, c->port, small, sz) != -1) {
                fail_msg("%s: fits in %zu bytes", c->name, sz);
            }
            free(small);
        }
        {
            char *exact = malloc(want_len);

            assert_non_null(exact);
            assert_int_equal(px_http_build_request(&r, c->host, c->port, exact, want_len),
                             (ssize_t)want_len);
            free(exact);
        }
    }
}

static void build_request_refuses(void **state)
{
    static const char get[] = "GET http://h/ HTTP/1.1\r\n\r\n";
    static const char conn[] = "CONNECT h:443 HTTP/1.1\r\n\r\n";
    struct px_http_request r;
    char out[256];

    (void)state;
    assert_int_equal(px_http_parse_request(conn, sizeof(conn) - 1, &r), PX_HTTP_OK);
    assert_int_equal(px_http_build_request(&r, "h", 443, out, sizeof(out)), -1);
    assert_int_equal(px_http_parse_request(get, sizeof(get) - 1, &r), PX_HTTP_OK);
    /* A host that would inject a header or a second request. */
    assert_int_equal(px_http_build_request(&r, "h\r\nX: y", 80, out, sizeof(out)), -1);
    assert_int_equal(px_http_build_request(&r, "h x", 80, out, sizeof(out)), -1);
    assert_int_equal(px_http_build_request(&r, "", 80, out, sizeof(out)), -1);
    assert_int_equal(px_http_build_request(&r, "[::1]", 80, out, sizeof(out)), -1);
    assert_int_equal(px_http_build_request(&r, "h", 0, out, sizeof(out)), -1);
    assert_int_equal(px_http_build_request(&r, "h", 65536, out, sizeof(out)), -1);
    assert_int_equal(px_http_build_request(&r, "h", 65535, out, sizeof(out)),
                     (ssize_t)strlen("GET / HTTP/1.1\r\nHost: h:65535\r\n\r\n"));
}

/* ---- chunked bodies ------------------------------------------------------ */

struct chunk_ok {
    const char *name;
    const char *in;
    size_t len;
};

static const struct chunk_ok chunk_ok_cases[] = {
    { "last_chunk_only", S("0\r\n\r\n") },
    { "one_chunk", S("5\r\nhello\r\n0\r\n\r\n") },
    { "two_chunks", S("5\r\nhello\r\n1\r\n!\r\n0\r\n\r\n") },
    { "upper_hex", S("A\r\n0123456789\r\n0\r\n\r\n") },
    { "lower_hex", S("a\r\n0123456789\r\n0\r\n\r\n") },
    { "leading_zeros", S("0005\r\nhello\r\n000\r\n\r\n") },
    { "extension", S("5;name=value\r\nhello\r\n0;last\r\n\r\n") },
    { "extension_bws", S("5 \t;name = \"quoted ; value\"\r\nhello\r\n0\r\n\r\n") },
    { "data_with_crlf", S("4\r\n\r\n\r\n\r\n0\r\n\r\n") },
    { "data_with_nul", S("3\r\n\0\0\0\r\n0\r\n\r\n") },
    { "trailers", S("0\r\nX-Trailer: v\r\nY:\r\n\r\n") },
    { "data_and_trailers", S("2\r\nhi\r\n0\r\nChecksum: abc \r\n\r\n") },
};

static void chunked_whole(const struct chunk_ok *c)
{
    /* The body ends where it ends; what follows is the next message. */
    size_t len = c->len + 5;
    char *buf = malloc(len);
    struct px_chunked st = { 0 };
    bool done;
    ssize_t n;

    assert_non_null(buf);
    memcpy(buf, c->in, c->len);
    memcpy(buf + c->len, "GET /", 5);
    n = px_chunked_feed(&st, buf, len, &done);
    if (n != (ssize_t)c->len || !done) {
        fail_msg("%s: whole: %zd done=%d, want %zu", c->name, n, done, c->len);
    }
    /* Once done, nothing more belongs to the body. */
    n = px_chunked_feed(&st, buf + c->len, 5, &done);
    if (n != 0 || !done) {
        fail_msg("%s: after done: %zd done=%d", c->name, n, done);
    }
    free(buf);
}

static void chunked_split_everywhere(const struct chunk_ok *c)
{
    for (size_t cut = 0; cut <= c->len; cut++) {
        struct px_chunked st = { 0 };
        char *a = dup_exact(c->in, cut);
        char *b = dup_exact(c->in + cut, c->len - cut);
        bool done;
        ssize_t n1, n2;

        n1 = px_chunked_feed(&st, a, cut, &done);
        if (n1 != (ssize_t)cut || (done && cut != c->len)) {
            fail_msg("%s: cut %zu first part: %zd done=%d", c->name, cut, n1, done);
        }
        n2 = px_chunked_feed(&st, b, c->len - cut, &done);
        if (n2 != (ssize_t)(c->len - cut) || !done) {
            fail_msg("%s: cut %zu second part: %zd done=%d", c->name, cut, n2, done);
        }
        free(a);
        free(b);
    }
}

static void chunked_byte_at_a_time(const struct chunk_ok *c)
{
    struct px_chunked st = { 0 };
    bool done = false;

    for (size_t i = 0; i < c->len; i++) {
        ssize_t n = px_chunked_feed(&st, c->in + i, 1, &done);

        if (n != 1 || done != (i == c->len - 1)) {
            fail_msg("%s: byte %zu: %zd done=%d", c->name, i, n, done);
        }
    }
    /* An empty feed changes nothing. */
    assert_int_equal(px_chunked_feed(&st, c->in, 0, &done), 0);
    assert_true(done);
}

static void chunked_accepts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(chunk_ok_cases) / sizeof(chunk_ok_cases[0]); i++) {
        chunked_whole(&chunk_ok_cases[i]);
        chunked_split_everywhere(&chunk_ok_cases[i]);
        chunked_byte_at_a_time(&chunk_ok_cases[i]);
    }
}

static void chunked_incomplete(void **state)
{
    struct px_chunked st = { 0 };
    bool done = true;

    (void)state;
    assert_int_equal(px_chunked_feed(&st, "", 0, &done), 0);
    assert_false(done);
    /* The largest size we accept is still only a size. */
    assert_int_equal(px_chunked_feed(&st, "7fffffffffffffff\r\nab", 20, &done), 20);
    assert_false(done);
    assert_int_equal(st.remaining, 0x7fffffffffffffffull - 2);
}

struct chunk_bad {
    const char *name;
    const char *in;
    size_t len;
};

static const struct chunk_bad chunk_bad_cases[] = {
    { "empty_size", S("\r\n") },
    { "not_hex", S("x\r\n") },
    { "0x_prefix", S("0x5\r\nhello\r\n0\r\n\r\n") },
    { "plus_sign", S("+5\r\nhello\r\n0\r\n\r\n") },
    { "minus_sign", S("-1\r\n") },
    { "leading_space", S(" 5\r\nhello\r\n0\r\n\r\n") },
    { "bare_lf_after_size", S("5\nhello\r\n0\r\n\r\n") },
    { "bare_cr_after_size", S("5\rhello") },
    { "trailing_space_no_ext", S("5 \r\nhello\r\n0\r\n\r\n") },
    { "junk_after_space", S("5 x\r\n") },
    { "lf_in_extension", S("5;a\nb\r\nhello\r\n") },
    { "nul_in_extension", S("5;\0\r\n") },
    { "del_in_extension", S("5;\x7f\r\n") },
    { "data_too_long", S("5\r\nhelloX\r\n0\r\n\r\n") },
    { "bare_lf_after_data", S("5\r\nhello\n0\r\n\r\n") },
    { "cr_then_junk_after_data", S("5\r\nhello\rx") },
    { "size_2_pow_64", S("10000000000000000\r\n") },
    { "size_2_pow_63", S("8000000000000000\r\n") },
    { "size_all_f", S("ffffffffffffffffff\r\n") },
    { "trailer_obs_fold", S("0\r\nX: a\r\n b\r\n\r\n") },
    { "trailer_no_colon", S("0\r\nXY\r\n\r\n") },
    { "trailer_empty_name", S("0\r\n: a\r\n\r\n") },
    { "trailer_space_before_colon", S("0\r\nX : a\r\n\r\n") },
    { "trailer_bare_lf", S("0\r\nX: a\n\r\n") },
    { "trailer_nul", S("0\r\nX: \0\r\n\r\n") },
    { "end_bare_lf", S("0\r\n\n") },
    { "end_cr_junk", S("0\r\n\rx") },
    { "last_chunk_bare_lf", S("0\n\r\n") },
};

static void chunked_rejects(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(chunk_bad_cases) / sizeof(chunk_bad_cases[0]); i++) {
        const struct chunk_bad *c = &chunk_bad_cases[i];
        struct px_chunked st = { 0 };
        bool done;
        ssize_t n = px_chunked_feed(&st, c->in, c->len, &done);

        if (n != -1) {
            fail_msg("%s: whole: %zd, want -1", c->name, n);
        }
        /* Stays refused. */
        if (px_chunked_feed(&st, "0\r\n\r\n", 5, &done) != -1) {
            fail_msg("%s: accepted after an error", c->name);
        }
        /* Byte at a time reaches the same verdict. */
        memset(&st, 0, sizeof(st));
        n = 0;
        for (size_t k = 0; k < c->len && n != -1; k++) {
            n = px_chunked_feed(&st, c->in + k, 1, &done);
            if (n != -1 && done) {
                fail_msg("%s: done at byte %zu", c->name, k);
            }
        }
        if (n != -1) {
            fail_msg("%s: byte at a time accepted", c->name);
        }
    }
}

static void chunked_line_limits(void **state)
{
    char line[4200];
    struct px_chunked st = { 0 };
    bool done;

    (void)state;
    /* A size line of exactly 4096 bytes (before CRLF) is fine... */
    line[0] = '1';
    line[1] = ';';
    memset(line + 2, 'a', 4094);
    assert_int_equal(px_chunked_feed(&st, line, 4096, &done), 4096);
    assert_int_equal(px_chunked_feed(&st, "\r\nx\r\n0\r\n\r\n", 10, &done), 10);
    assert_true(done);
    /* ...one more byte is not. */
    memset(&st, 0, sizeof(st));
    memset(line + 2, 'a', 4095);
    assert_int_equal(px_chunked_feed(&st, line, 4097, &done), -1);
    /* Nor is an endless run of leading zeros. */
    memset(&st, 0, sizeof(st));
    memset(line, '0', 4097);
    assert_int_equal(px_chunked_feed(&st, line, 4096, &done), 4096);
    assert_int_equal(px_chunked_feed(&st, line, 1, &done), -1);
    /* The line counter restarts for every chunk. */
    memset(&st, 0, sizeof(st));
    for (int i = 0; i < 3; i++) {
        line[0] = '1';
        line[1] = ';';
        memset(line + 2, 'b', 4094);
        memcpy(line + 4096, "\r\nz\r\n", 5);
        assert_int_equal(px_chunked_feed(&st, line, 4101, &done), 4101);
    }
    assert_int_equal(px_chunked_feed(&st, "0\r\n\r\n", 5, &done), 5);
    assert_true(done);
}

static void chunked_trailer_limit(void **state)
{
    size_t len = PX_HTTP_HEAD_MAX + 16;
    char *buf = malloc(len);
    struct px_chunked st = { 0 };
    bool done;

    (void)state;
    assert_non_null(buf);
    memcpy(buf, "0\r\nX: ", 6);
    memset(buf + 6, 'v', len - 6);
    assert_int_equal(px_chunked_feed(&st, buf, len, &done), -1);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_accepts),
        cmocka_unit_test(request_byte_at_a_time),
        cmocka_unit_test(request_head_len_excludes_body),
        cmocka_unit_test(request_headers_trimmed_and_found),
        cmocka_unit_test(request_rejects),
        cmocka_unit_test(request_head_limit),
        cmocka_unit_test(header_count_limit),
        cmocka_unit_test(keep_alive_matrix),
        cmocka_unit_test(response_accepts),
        cmocka_unit_test(response_rejects),
        cmocka_unit_test(response_head_limit),
        cmocka_unit_test(hop_by_hop),
        cmocka_unit_test(build_request_exact),
        cmocka_unit_test(build_request_refuses),
        cmocka_unit_test(chunked_accepts),
        cmocka_unit_test(chunked_incomplete),
        cmocka_unit_test(chunked_rejects),
        cmocka_unit_test(chunked_line_limits),
        cmocka_unit_test(chunked_trailer_limit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
