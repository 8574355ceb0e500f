/* proxy/host.c: canonical hosts, strict literals, CIDRs, address classes.
 * Every table row is a spelling a client or a config could use; a row that
 * fails names itself before the assertion fires. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "proxy/host.h"

static struct px_addr addr_of(const char *s)
{
    struct px_addr a;

    if (px_addr_parse(s, &a) < 0)
        fail_msg("test fixture %s is not an address", s);
    return a;
}

struct canon_case {
    const char *in;
    const char *want; /* NULL: malformed */
    bool is_ip;
};

static void check_canon(const struct canon_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char out[PX_HOST_MAX];
        struct px_addr a;
        bool is_ip = !c[i].is_ip;
        int r = px_host_canon(c[i].in, strlen(c[i].in), out, &is_ip, &a);

        if (!c[i].want) {
            if (r != -1 || out[0] != '\0')
                fail_msg("\"%s\" should be malformed, got \"%s\"", c[i].in, out);
            continue;
        }
        if (r != 0)
            fail_msg("\"%s\" should canonicalise to \"%s\", was refused", c[i].in, c[i].want);
        if (strcmp(out, c[i].want) != 0)
            fail_msg("\"%s\": want \"%s\", got \"%s\"", c[i].in, c[i].want, out);
        if (is_ip != c[i].is_ip)
            fail_msg("\"%s\": is_ip should be %d", c[i].in, c[i].is_ip);
        if (is_ip) {
            struct px_addr b = addr_of(c[i].want);
            char back[PX_HOST_MAX];

            /* the canonical text and the address agree */
            px_addr_format(&a, back, sizeof(back));
            if (strcmp(back, c[i].want) != 0 || !px_addr_equal(&a, &b))
                fail_msg("\"%s\": address does not match its text", c[i].in);
        }
    }
}

static void names_are_lowercased_and_lose_one_trailing_dot(void **state)
{
    (void)state;
    static const struct canon_case c[] = {
        { "example.com", "example.com", false },
        { "EXAMPLE.COM", "example.com", false },
        { "Example.Com.", "example.com", false },
        { "localhost", "localhost", false },
        { "LOCALHOST.", "localhost", false },
        { "_dmarc.example.com", "_dmarc.example.com", false },
        { "my-host.EXAMPLE.com", "my-host.example.com", false },
        { "123.example", "123.example", false },
        { "a", "a", false },
        { "x-1.y_2.z", "x-1.y_2.z", false },
        /* the last label is not a number, so this is a (strange) name */
        { "1.2.3.4x", "1.2.3.4x", false },
        { "example.0x1g", "example.0x1g", false },
    };
    check_canon(c, sizeof(c) / sizeof(c[0]));
}

static void malformed_names_are_refused(void **state)
{
    (void)state;
    static const struct canon_case c[] = {
        { "", NULL, false },
        { ".", NULL, false },
        { "..", NULL, false },
        { "example.com..", NULL, false },
        { "a..b.com", NULL, false },
        { ".example.com", NULL, false },
        { "exa mple.com", NULL, false },
        { "exa\tmple.com", NULL, false },
        { "example.com\r\nX-Evil: 1", NULL, false },
        { "ex%41mple.com", NULL, false },
        { "ex/ample.com", NULL, false },
        { "ex:ample.com", NULL, false },
        { "user@example.com", NULL, false },
        { "*.example.com", NULL, false },
        { "\xc3\xa9.com", NULL, false },
        { "example.com\x7f", NULL, false },
        { "[example.com]", NULL, false },
        { "[127.0.0.1]", NULL, false },
        { "exam]ple.com", NULL, false },
        /* WHATWG: a host whose last label is a number must be an IPv4 */
        { "example.123", NULL, false },
        { "example.0x10", NULL, false },
        { "foo.08", NULL, false },
    };
    check_canon(c, sizeof(c) / sizeof(c[0]));
}

static void embedded_nul_is_refused(void **state)
{
    char out[PX_HOST_MAX];

    (void)state;
    assert_int_equal(px_host_canon("a\0b.com", 7, out, NULL, NULL), -1);
    assert_int_equal(px_host_canon("127.0.0.1\0", 10, out, NULL, NULL), -1);
    assert_string_equal(out, "");
}

static void numeric_ipv4_spellings_become_a_dotted_quad(void **state)
{
    (void)state;
    static const struct canon_case c[] = {
        { "127.0.0.1", "127.0.0.1", true },
        { "127.0.0.1.", "127.0.0.1", true },
        { "2130706433", "127.0.0.1", true },
        { "2130706433.", "127.0.0.1", true },
        { "0x7f.1", "127.0.0.1", true },
        { "0X7F.1", "127.0.0.1", true },
        { "0x7f.0.0.1", "127.0.0.1", true },
        { "0x7f000001", "127.0.0.1", true },
        { "127.1", "127.0.0.1", true },
        { "127.0.1", "127.0.0.1", true },
        { "0177.0.0.1", "127.0.0.1", true },
        { "0177.1", "127.0.0.1", true },
        { "017700000001", "127.0.0.1", true },
        { "00000000000000000000000000177.0.0.1", "127.0.0.1", true },
        { "0", "0.0.0.0", true },
        { "0x", "0.0.0.0", true },
        { "0.0", "0.0.0.0", true },
        { "4294967295", "255.255.255.255", true },
        { "0xffffffff", "255.255.255.255", true },
        { "1.2.65535", "1.2.255.255", true },
        { "1.16777215", "1.255.255.255", true },
        { "169.254.43518", "169.254.169.254", true },
        { "0xa9.0xfe.0xa9.0xfe", "169.254.169.254", true },
        { "0251.0376.0251.0376", "169.254.169.254", true },
        { "10.0.0.1", "10.0.0.1", true },
    };
    check_canon(c, sizeof(c) / sizeof(c[0]));
}

static void out_of_range_ipv4_parts_are_refused(void **state)
{
    (void)state;
    static const struct canon_case c[] = {
        { "4294967296", NULL, false },
        { "0x100000000", NULL, false },
        { "99999999999999999999999999", NULL, false },
        { "0xffffffffffffffffffffffffffff", NULL, false },
        { "256.0.0.1", NULL, false },
        { "1.2.3.256", NULL, false },
        { "1.2.65536", NULL, false },
        { "1.16777216", NULL, false },
        { "1.2.3.4.5", NULL, false },
        { "08.1.1.1", NULL, false },
        { "09", NULL, false },
        { "0x1g.1", NULL, false },
        { "1..2.3", NULL, false },
        { "1.2.3.4..", NULL, false },
        { "0400.0.0.1", NULL, false },
    };
    check_canon(c, sizeof(c) / sizeof(c[0]));
}

static void ipv6_is_compressed_per_rfc5952(void **state)
{
    (void)state;
    static const struct canon_case c[] = {
        { "::1", "::1", true },
        { "[::1]", "::1", true },
        { "[0:0:0:0:0:0:0:1]", "::1", true },
        { "0000:0000:0000:0000:0000:0000:0000:0001", "::1", true },
        { "::", "::", true },
        { "[::]", "::", true },
        { "0:0:0:0:0:0:0:0", "::", true },
        { "1::", "1::", true },
        { "2001:DB8::1", "2001:db8::1", true },
        { "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1", true },
        /* leftmost of two equal runs */
        { "2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1", true },
        /* the longest run, not the first */
        { "1:0:0:2:0:0:0:3", "1:0:0:2::3", true },
        /* a single zero field is not compressed */
        { "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1", true },
        { "::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8", true },
        { "1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0", true },
        { "1:2:3:4:5:6::8", "1:2:3:4:5:6:0:8", true },
        { "fe80::1", "fe80::1", true },
        { "FD00:EC2::254", "fd00:ec2::254", true },
        /* only IPv4-mapped becomes IPv4; other embedded forms stay IPv6 */
        { "::127.0.0.1", "::7f00:1", true },
        { "64:ff9b::1.2.3.4", "64:ff9b::102:304", true },
        { "::ffff:0:1.2.3.4", "::ffff:0:102:304", true },
    };
    check_canon(c, sizeof(c) / sizeof(c[0]));
}

static void ipv4_mapped_ipv6_becomes_ipv4(void **state)
{
    (void)state;
    static const struct canon_case c[] = {
        { "::ffff:127.0.0.1", "127.0.0.1", true },
        { "::FFFF:7f00:1", "127.0.0.1", true },
        { "[::ffff:169.254.169.254]", "169.254.169.254", true },
        { "0:0:0:0:0:ffff:a00:1", "10.0.0.1", true },
        { "::ffff:0.0.0.0", "0.0.0.0", true },
    };
    check_canon(c, sizeof(c) / sizeof(c[0]));
}

static void malformed_ipv6_is_refused(void **state)
{
    (void)state;
    static const struct canon_case c[] = {
        { "fe80::1%eth0", NULL, false },
        { "[fe80::1%25eth0]", NULL, false },
        { "::ffff:1.2.3.4%x.allowed.com", NULL, false },
        { "[::1", NULL, false },
        { "::1]", NULL, false },
        { "[]", NULL, false },
        { "[[::1]]", NULL, false },
        { "[::1]:443", NULL, false },
        { "1:2:3:4:5:6:7:8:9", NULL, false },
        { "1:2:3:4:5:6:7", NULL, false },
        { ":::", NULL, false },
        { "1:::2", NULL, false },
        { "1::2::3", NULL, false },
        { ":1", NULL, false },
        { "1:", NULL, false },
        { "12345::", NULL, false },
        { "g::1", NULL, false },
        { "::1.2.3", NULL, false },
        { "::1.2.3.04", NULL, false },
        { "::256.1.1.1", NULL, false },
        { "::ffff:1.2.3.4:5", NULL, false },
        { "::ffff:1.2.3.4.5", NULL, false },
        { "1:2:3:4:5:6:7:1.2.3.4", NULL, false },
        { "::0x7f.1", NULL, false },
        { "1:2:3:4:5:6:7:8::", NULL, false },
        { "::1:2:3:4:5:6:7:8", NULL, false },
        { ":: 1", NULL, false },
    };
    check_canon(c, sizeof(c) / sizeof(c[0]));
}

static void names_over_253_characters_are_refused(void **state)
{
    char name[300], out[PX_HOST_MAX];

    (void)state;
    /* 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 */
    memset(name, 'a', sizeof(name));
    name[63] = name[127] = name[191] = '.';
    name[253] = '\0';
    assert_int_equal(px_host_canon(name, 253, out, NULL, NULL), 0);
    assert_int_equal(strlen(out), 253);
    /* a trailing dot does not count */
    name[253] = '.';
    assert_int_equal(px_host_canon(name, 254, out, NULL, NULL), 0);
    assert_int_equal(strlen(out), 253);
    name[253] = 'a';
    assert_int_equal(px_host_canon(name, 254, out, NULL, NULL), -1);
    /* nor does anything over 255 raw characters */
    memset(name, '0', 256);
    name[256] = '\0';
    assert_int_equal(px_host_canon(name, 256, out, NULL, NULL), -1);
    assert_int_equal(px_host_canon(name + 1, 255, out, NULL, NULL), 0);
    assert_string_equal(out, "0.0.0.0");
}

static void canonical_output_is_a_fixed_point(void **state)
{
    static const char *in[] = {
        "EXAMPLE.com.", "0x7f.1", "::FFFF:7f00:1", "[2001:db8:0:0:1:0:0:1]", "64:ff9b::1.2.3.4",
        "4294967295",   "::",     "a.b-c_d.e",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        char once[PX_HOST_MAX], twice[PX_HOST_MAX];

        assert_int_equal(px_host_canon(in[i], strlen(in[i]), once, NULL, NULL), 0);
        assert_int_equal(px_host_canon(once, strlen(once), twice, NULL, NULL), 0);
        assert_string_equal(once, twice);
    }
}

static void addr_parse_accepts_only_strict_literals(void **state)
{
    static const struct {
        const char *in;
        int family; /* 0: refused */
    } c[] = {
        { "1.2.3.4", AF_INET },
        { "0.0.0.0", AF_INET },
        { "255.255.255.255", AF_INET },
        { "::1", AF_INET6 },
        { "::ffff:1.2.3.4", AF_INET6 },
        { "2001:db8::1", AF_INET6 },
        { "01.2.3.4", 0 },
        { "1.2.3", 0 },
        { "127.1", 0 },
        { "2130706433", 0 },
        { "0x7f.0.0.1", 0 },
        { "1.2.3.4.", 0 },
        { "1.2.3.4.5", 0 },
        { "256.1.1.1", 0 },
        { "1.2.3.1000", 0 },
        { " 1.2.3.4", 0 },
        { "1.2.3.4 ", 0 },
        { "", 0 },
        { "[::1]", 0 },
        { "fe80::1%eth0", 0 },
        { "example.com", 0 },
        { "1.2.3.-4", 0 },
        { "+1.2.3.4", 0 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct px_addr a;
        int r = px_addr_parse(c[i].in, &a);

        if (c[i].family == 0 && r != -1)
            fail_msg("\"%s\" should be refused", c[i].in);
        if (c[i].family != 0 && (r != 0 || a.family != c[i].family))
            fail_msg("\"%s\" should parse as family %d", c[i].in, c[i].family);
    }
}

static void addr_format_is_canonical_text(void **state)
{
    static const struct {
        const char *in, *want;
    } c[] = {
        { "1.2.3.4", "1.2.3.4" },
        { "0:0:0:0:0:0:0:1", "::1" },
        { "::ffff:1.2.3.4", "::ffff:102:304" },
        { "2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1" },
        { "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8" },
        { "abcd:ef01::", "abcd:ef01::" },
        { "0:0:1::", "0:0:1::" },
        { "1:0:0:0:1:0:0:0", "1::1:0:0:0" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct px_addr a = addr_of(c[i].in);
        char out[PX_HOST_MAX];

        px_addr_format(&a, out, sizeof(out));
        if (strcmp(out, c[i].want) != 0)
            fail_msg("%s: want %s, got %s", c[i].in, c[i].want, out);
    }
}

static void addr_format_never_overflows_a_short_buffer(void **state)
{
    struct px_addr a = addr_of("1111:2222:3333:4444:5555:6666:7777:8888");
    char out[8];

    (void)state;
    memset(out, 'x', sizeof(out));
    px_addr_format(&a, out, sizeof(out));
    assert_true(memchr(out, '\0', sizeof(out)) != NULL);
    px_addr_format(&a, out, 0);
}

static void addr_equal_compares_family_and_bytes(void **state)
{
    struct px_addr a = addr_of("1.2.3.4"), b = addr_of("1.2.3.4"), c = addr_of("1.2.3.5");
    struct px_addr m = addr_of("::ffff:1.2.3.4");

    (void)state;
    assert_true(px_addr_equal(&a, &b));
    assert_false(px_addr_equal(&a, &c));
    assert_false(px_addr_equal(&a, &m));
}

static void embedded_ipv4_is_found_in_every_delivering_form(void **state)
{
    static const struct {
        const char *in, *v4; /* NULL: none */
    } c[] = {
        { "::ffff:1.2.3.4", "1.2.3.4" },
        { "::1.2.3.4", "1.2.3.4" },
        { "::ffff:0:1.2.3.4", "1.2.3.4" },
        { "64:ff9b::1.2.3.4", "1.2.3.4" },
        { "64:ff9b::a9fe:a9fe", "169.254.169.254" },
        { "2002:a9fe:a9fe::", "169.254.169.254" },
        { "2002:7f00:1:1234::5", "127.0.0.1" },
        { "::0.0.0.2", "0.0.0.2" },
        { "::", NULL },
        { "::1", NULL },
        { "64:ff9b:1::1.2.3.4", NULL },
        { "64:ff9b:0:0:1::1.2.3.4", NULL },
        { "2001:db8::1", NULL },
        { "fe80::1", NULL },
        { "1.2.3.4", NULL },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct px_addr a = addr_of(c[i].in), v4;
        bool got = px_addr_embedded_v4(&a, &v4);

        if (got != (c[i].v4 != NULL))
            fail_msg("%s: embedded IPv4 %s expected", c[i].in, c[i].v4 ? "" : "not");
        if (got) {
            struct px_addr want = addr_of(c[i].v4);

            if (!px_addr_equal(&v4, &want))
                fail_msg("%s: want %s", c[i].in, c[i].v4);
        }
    }
}

static void cidrs_parse_to_network_and_prefix(void **state)
{
    static const struct {
        const char *in, *net; /* net NULL: refused */
        unsigned prefix;
    } c[] = {
        { "10.0.0.0/8", "10.0.0.0", 8 },
        { "10.1.2.3/8", "10.0.0.0", 8 },
        { "172.16.0.0/12", "172.16.0.0", 12 },
        { "192.168.1.255/31", "192.168.1.254", 31 },
        { "1.2.3.4", "1.2.3.4", 32 },
        { "1.2.3.4/32", "1.2.3.4", 32 },
        { "0.0.0.0/0", "0.0.0.0", 0 },
        { "255.255.255.255/0", "0.0.0.0", 0 },
        { "fd00::/8", "fd00::", 8 },
        { "fd12:3456::1/8", "fd00::", 8 },
        { "fe80::/10", "fe80::", 10 },
        { "febf:ffff::/10", "fe80::", 10 },
        { "::1", "::1", 128 },
        { "::/0", "::", 0 },
        { "[::1]", "::1", 128 },
        { "[fd00::]/8", "fd00::", 8 },
        { "2001:db8::ffff/127", "2001:db8::fffe", 127 },
        { "::ffff:10.0.0.0/104", "10.0.0.0", 8 },
        { "::ffff:10.1.2.3", "10.1.2.3", 32 },
        { "::ffff:0:0/96", "0.0.0.0", 0 },
        { "fe80::1%eth0/64", "fe80::", 64 },
        { "10.0.0.0/33", NULL, 0 },
        { "::/129", NULL, 0 },
        { "10.0.0.0/08", NULL, 0 },
        { "10.0.0.0/00", NULL, 0 },
        { "10.0.0.0/0008", NULL, 0 },
        { "10.0.0.0/", NULL, 0 },
        { "10.0.0.0/-1", NULL, 0 },
        { "10.0.0.0/+8", NULL, 0 },
        { "10.0.0.0/8/8", NULL, 0 },
        { "10.0.0.0/8 ", NULL, 0 },
        { "10.0.0.0 /8", NULL, 0 },
        { "/8", NULL, 0 },
        { "10.0.0/8", NULL, 0 },
        { "10/8", NULL, 0 },
        { "example.com/8", NULL, 0 },
        { "", NULL, 0 },
        { "[10.0.0.0]/8", NULL, 0 },
        { "[::1]/", NULL, 0 },
        { "[::1/64]", NULL, 0 },
        { "::ffff:10.0.0.0/95", NULL, 0 },
        { "10.0.0.1%eth0", NULL, 0 },
        { "fe80::1%", NULL, 0 },
        { "fe80::1%e/th0/64", NULL, 0 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct px_cidr cidr;
        int r = px_cidr_parse(c[i].in, &cidr);

        if (!c[i].net) {
            if (r != -1)
                fail_msg("\"%s\" should be refused", c[i].in);
            continue;
        }
        struct px_addr want = addr_of(c[i].net);
        if (r != 0 || !px_addr_equal(&cidr.addr, &want) || cidr.prefix != c[i].prefix)
            fail_msg("\"%s\": want %s/%u", c[i].in, c[i].net, c[i].prefix);
    }
}

static void cidr_contains_the_address_or_its_embedded_ipv4(void **state)
{
    static const struct {
        const char *cidr, *addr;
        bool in;
    } c[] = {
        { "10.0.0.0/8", "10.0.0.0", true },
        { "10.0.0.0/8", "10.255.255.255", true },
        { "10.0.0.0/8", "11.0.0.0", false },
        { "10.0.0.0/8", "9.255.255.255", false },
        { "10.0.0.0/8", "::ffff:10.1.2.3", true },
        { "10.0.0.0/8", "::10.1.2.3", true },
        { "10.0.0.0/8", "64:ff9b::a01:203", true },
        { "10.0.0.0/8", "2002:a01:203::1", true },
        { "10.0.0.0/8", "64:ff9b:1::a01:203", false },
        { "::ffff:10.0.0.0/104", "10.9.9.9", true },
        { "192.168.1.254/31", "192.168.1.255", true },
        { "192.168.1.254/31", "192.168.1.253", false },
        { "1.2.3.4", "1.2.3.4", true },
        { "1.2.3.4", "1.2.3.5", false },
        { "0.0.0.0/0", "203.0.113.1", true },
        { "0.0.0.0/0", "2001:db8::1", false },
        { "fd00::/8", "fdff::1", true },
        { "fd00::/8", "fe00::1", false },
        { "fd00::/8", "10.0.0.1", false },
        { "::/0", "2001:db8::1", true },
        { "::/0", "10.0.0.1", false },
        { "fe80::/10", "febf::1", true },
        { "fe80::/10", "fec0::1", false },
        { "::1", "::1", true },
        { "::1", "::2", false },
        { "2001:db8::/127", "2001:db8::1", true },
        { "2001:db8::/127", "2001:db8::2", false },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct px_cidr cidr;
        struct px_addr a = addr_of(c[i].addr);

        assert_int_equal(px_cidr_parse(c[i].cidr, &cidr), 0);
        if (px_cidr_contains(&cidr, &a) != c[i].in)
            fail_msg("%s %s %s", c[i].cidr, c[i].in ? "should contain" : "should not contain",
                     c[i].addr);
    }
}

static void builtin_classes_cover_srt_ranges_and_embedded_forms(void **state)
{
    static const struct {
        const char *addr;
        unsigned classes;
    } c[] = {
        { "127.0.0.1", PX_CLASS_LOOPBACK },
        { "127.255.255.254", PX_CLASS_LOOPBACK },
        { "0.0.0.0", PX_CLASS_UNSPECIFIED },
        { "0.1.2.3", PX_CLASS_UNSPECIFIED },
        { "169.254.169.254", PX_CLASS_LINK_LOCAL },
        { "169.254.0.1", PX_CLASS_LINK_LOCAL },
        { "224.0.0.1", PX_CLASS_MULTICAST },
        { "239.255.255.255", PX_CLASS_MULTICAST },
        { "255.255.255.255", PX_CLASS_BROADCAST },
        { "100.100.100.200", PX_CLASS_METADATA },
        { "168.63.129.16", PX_CLASS_METADATA },
        { "192.0.0.192", PX_CLASS_METADATA },
        { "::1", PX_CLASS_LOOPBACK },
        { "::", PX_CLASS_UNSPECIFIED },
        { "fe80::1", PX_CLASS_LINK_LOCAL },
        { "febf::1", PX_CLASS_LINK_LOCAL },
        { "ff02::1", PX_CLASS_MULTICAST },
        { "fd00:ec2::254", PX_CLASS_METADATA },
        { "fd00:ec2::23", PX_CLASS_METADATA },
        { "fd00:ec2:ffff::1", PX_CLASS_METADATA },
        { "fd20:ce::254", PX_CLASS_METADATA },
        { "fd00:c1::a9fe:a9fe", PX_CLASS_METADATA },
        { "fd00:42::42", PX_CLASS_METADATA },
        { "fd00:a9fe:a9fe::1", PX_CLASS_METADATA },
        { "fd00:100::100:200", PX_CLASS_METADATA },
        /* embedded IPv4 */
        { "::ffff:127.0.0.1", PX_CLASS_LOOPBACK },
        { "::127.0.0.1", PX_CLASS_LOOPBACK },
        { "::ffff:0:169.254.169.254", PX_CLASS_LINK_LOCAL },
        { "::ffff:169.254.169.254", PX_CLASS_LINK_LOCAL },
        { "64:ff9b::a9fe:a9fe", PX_CLASS_LINK_LOCAL },
        { "64:ff9b::100.100.100.200", PX_CLASS_METADATA },
        { "2002:7f00:1::", PX_CLASS_LOOPBACK },
        { "2002:a9fe:a9fe::1", PX_CLASS_LINK_LOCAL },
        { "::ffff:255.255.255.255", PX_CLASS_BROADCAST },
        { "::ffff:224.0.0.1", PX_CLASS_MULTICAST },
        { "::ffff:0.0.0.0", PX_CLASS_UNSPECIFIED },
        /* nothing: private ranges and neighbours of the listed addresses */
        { "10.0.0.1", 0 },
        { "172.16.0.1", 0 },
        { "192.168.1.1", 0 },
        { "100.64.0.1", 0 },
        { "8.8.8.8", 0 },
        { "240.0.0.1", 0 },
        { "100.100.100.201", 0 },
        { "168.63.129.17", 0 },
        { "192.0.0.193", 0 },
        { "fc00::1", 0 },
        { "fec0::1", 0 },
        { "fd00:ec3::254", 0 },
        { "fd20:ce::253", 0 },
        { "fd00:42::43", 0 },
        { "2001:4860:4860::8888", 0 },
        { "64:ff9b:1::7f00:1", 0 },
        { "::ffff:10.0.0.1", 0 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct px_addr a = addr_of(c[i].addr);
        unsigned got = px_addr_builtin_classes(&a);

        if (got != c[i].classes)
            fail_msg("%s: want classes %#x, got %#x", c[i].addr, c[i].classes, got);
    }
}

static void class_text_names_each_class_in_srt_order(void **state)
{
    static const struct {
        unsigned classes;
        const char *text;
    } c[] = {
        { 0, "" },
        { PX_CLASS_DENY_LISTED, "a deny-listed address" },
        { PX_CLASS_LOOPBACK, "a loopback address" },
        { PX_CLASS_UNSPECIFIED, "an unspecified address" },
        { PX_CLASS_LINK_LOCAL, "a link-local address" },
        { PX_CLASS_MULTICAST, "a multicast address" },
        { PX_CLASS_BROADCAST, "the broadcast address" },
        { PX_CLASS_METADATA, "a cloud metadata address" },
        { PX_CLASS_LISTED, "a listed address" },
        { PX_CLASS_HOST, "one of this host's addresses" },
        { PX_CLASS_NON_LOOPBACK, "a non-loopback address" },
        { PX_CLASS_HOST | PX_CLASS_LOOPBACK, "a loopback address / one of this host's addresses" },
        { PX_CLASS_METADATA | PX_CLASS_LINK_LOCAL | PX_CLASS_DENY_LISTED,
          "a deny-listed address / a link-local address / a cloud metadata address" },
        { 0x3ff, "a deny-listed address / a loopback address / an unspecified address / "
                 "a link-local address / a multicast address / the broadcast address / "
                 "a cloud metadata address / a listed address / one of this host's "
                 "addresses / a non-loopback address" },
        { 0x400, "" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char out[512];

        px_class_text(c[i].classes, out, sizeof(out));
        assert_string_equal(out, c[i].text);
    }
}

static void class_text_stays_inside_a_short_buffer(void **state)
{
    char out[12];

    (void)state;
    memset(out, 'x', sizeof(out));
    px_class_text(0x3ff, out, sizeof(out));
    assert_true(strlen(out) < sizeof(out));
    px_class_text(PX_CLASS_LOOPBACK, out, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_are_lowercased_and_lose_one_trailing_dot),
        cmocka_unit_test(malformed_names_are_refused),
        cmocka_unit_test(embedded_nul_is_refused),
        cmocka_unit_test(numeric_ipv4_spellings_become_a_dotted_quad),
        cmocka_unit_test(out_of_range_ipv4_parts_are_refused),
        cmocka_unit_test(ipv6_is_compressed_per_rfc5952),
        cmocka_unit_test(ipv4_mapped_ipv6_becomes_ipv4),
        cmocka_unit_test(malformed_ipv6_is_refused),
        cmocka_unit_test(names_over_253_characters_are_refused),
        cmocka_unit_test(canonical_output_is_a_fixed_point),
        cmocka_unit_test(addr_parse_accepts_only_strict_literals),
        cmocka_unit_test(addr_format_is_canonical_text),
        cmocka_unit_test(addr_format_never_overflows_a_short_buffer),
        cmocka_unit_test(addr_equal_compares_family_and_bytes),
        cmocka_unit_test(embedded_ipv4_is_found_in_every_delivering_form),
        cmocka_unit_test(cidrs_parse_to_network_and_prefix),
        cmocka_unit_test(cidr_contains_the_address_or_its_embedded_ipv4),
        cmocka_unit_test(builtin_classes_cover_srt_ranges_and_embedded_forms),
        cmocka_unit_test(class_text_names_each_class_in_srt_order),
        cmocka_unit_test(class_text_stays_inside_a_short_buffer),
    };

    return cmocka_run_group_tests_name("host", tests, NULL, NULL);
}
