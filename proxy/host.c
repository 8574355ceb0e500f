/* Canonical hosts, IP literals, CIDRs and address classes.
 *
 * The allow list compares strings, but the kernel connects to addresses: every
 * spelling that reaches the same address must compare equal, or `0x7f.1`
 * walks past a deny entry for 127.0.0.1. The parsers here are our own and
 * strict. libc's inet_aton accepts trailing garbage after a space, and
 * inet_pton/getaddrinfo differ between glibc versions and under static
 * linking; a filter cannot depend on that. */
#include "proxy/host.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "src/util.h"

/* srt's isValidHost limit, on the raw spelling including brackets. */
#define RAW_HOST_MAX 255
/* RFC 1035 text form without the trailing dot. */
#define NAME_MAX_LEN 253

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static char to_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '.' ||
           c == '-' || c == '_';
}

static void set_v4(struct px_addr *a, uint32_t v)
{
    memset(a, 0, sizeof(*a));
    a->family = AF_INET;
    a->b[0] = (uint8_t)(v >> 24);
    a->b[1] = (uint8_t)(v >> 16);
    a->b[2] = (uint8_t)(v >> 8);
    a->b[3] = (uint8_t)v;
}

/* One decimal octet of a strict dotted quad: 1-3 digits, no leading zero,
 * at most 255. Leading zeros are refused because half the world reads them
 * as octal and the other half as decimal. */
static int parse_octet(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;

    if (n == 0 || n > 3 || (n > 1 && s[0] == '0'))
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > 255)
        return -1;
    *out = v;
    return 0;
}

static int parse_dotted_quad(const char *s, size_t n, uint8_t out[4])
{
    size_t start = 0;
    int part = 0;

    for (size_t i = 0; i <= n; i++) {
        unsigned v;

        if (i < n && s[i] != '.')
            continue;
        if (part == 4 || parse_octet(s + start, i - start, &v) < 0)
            return -1;
        out[part++] = (uint8_t)v;
        start = i + 1;
    }
    return part == 4 ? 0 : -1;
}

/* WHATWG "IPv4 number parser": 0x/0X hex, a leading 0 octal, else decimal;
 * an empty number after the prefix is 0. Values saturate just above 2^32,
 * which every caller rejects anyway, so no input can overflow. */
static int parse_v4_number(const char *s, size_t n, uint64_t *out)
{
    const uint64_t cap = (uint64_t)1 << 33;
    unsigned radix = 10;
    uint64_t v = 0;

    if (n == 0)
        return -1;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        radix = 16;
        s += 2;
        n -= 2;
    } else if (n >= 2 && s[0] == '0') {
        radix = 8;
        s++;
        n--;
    }
    for (size_t i = 0; i < n; i++) {
        int d = nf_hex_value(s[i]);

        if (d < 0 || (unsigned)d >= radix)
            return -1;
        v = v * radix + (unsigned)d;
        if (v > cap)
            v = cap;
    }
    *out = v;
    return 0;
}

/* WHATWG "ends in a number": whether the host must be read as IPv4 (and is
 * then refused if it is not one), so that `foo.0x10` cannot pass as a name
 * that a resolver would read as an address. */
static bool ends_in_number(const char *s, size_t n)
{
    size_t start;

    if (n > 0 && s[n - 1] == '.') {
        if (n == 1)
            return false;
        n--;
    }
    start = n;
    while (start > 0 && s[start - 1] != '.')
        start--;
    if (start == n)
        return false;
    bool digits = true;
    for (size_t i = start; i < n; i++)
        if (!is_digit(s[i]))
            digits = false;
    if (digits)
        return true;
    uint64_t ignored;
    return parse_v4_number(s + start, n - start, &ignored) == 0;
}

/* WHATWG "IPv4 parser", the inet_aton shorthands: 1 to 4 parts, the last
 * filling the remaining bytes (`127.1`, `2130706433`, `0x7f.0.0.1`). */
static int parse_v4_loose(const char *s, size_t n, struct px_addr *out)
{
    uint64_t num[4];
    size_t nparts = 0, start = 0;
    uint64_t v;

    if (n > 0 && s[n - 1] == '.')
        n--;
    if (n == 0)
        return -1;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.')
            continue;
        if (nparts == 4 || parse_v4_number(s + start, i - start, &num[nparts]) < 0)
            return -1;
        nparts++;
        start = i + 1;
    }
    for (size_t i = 0; i + 1 < nparts; i++)
        if (num[i] > 255)
            return -1;
    if (num[nparts - 1] >= (uint64_t)1 << (8 * (5 - nparts)))
        return -1;
    v = num[nparts - 1];
    for (size_t i = 0; i + 1 < nparts; i++)
        v += num[i] << (8 * (3 - i));
    set_v4(out, (uint32_t)v);
    return 0;
}

/* WHATWG "IPv6 parser" (the same grammar as RFC 4291 text form): 1-4 hex
 * digits per piece, one `::`, an optional dotted quad in the last 32 bits.
 * No zone, no brackets. */
static int parse_v6(const char *s, size_t n, struct px_addr *out)
{
    uint16_t piece[8] = { 0 };
    int idx = 0, compress = -1;
    size_t p = 0;

    if (n == 0)
        return -1;
    if (s[0] == ':') {
        if (n < 2 || s[1] != ':')
            return -1;
        p = 2;
        idx = 1;
        compress = 1;
    }
    while (p < n) {
        unsigned v = 0;
        size_t len = 0;

        if (idx == 8)
            return -1;
        if (s[p] == ':') {
            if (compress != -1)
                return -1;
            p++;
            compress = ++idx;
            continue;
        }
        while (len < 4 && p < n && nf_hex_value(s[p]) >= 0) {
            v = v * 16 + (unsigned)nf_hex_value(s[p]);
            p++;
            len++;
        }
        if (p < n && s[p] == '.') {
            uint8_t q[4];
            size_t end;

            if (len == 0 || idx > 6)
                return -1;
            p -= len;
            /* The dotted quad must run to the end of the address. */
            for (end = p; end < n && (is_digit(s[end]) || s[end] == '.'); end++)
                ;
            if (end != n || parse_dotted_quad(s + p, n - p, q) < 0)
                return -1;
            piece[idx++] = (uint16_t)(q[0] << 8 | q[1]);
            piece[idx++] = (uint16_t)(q[2] << 8 | q[3]);
            p = n;
            break;
        }
        if (len == 0)
            return -1;
        if (p < n) {
            if (s[p] != ':')
                return -1;
            p++;
            if (p == n)
                return -1;
        }
        piece[idx++] = (uint16_t)v;
    }
    if (compress != -1) {
        int swaps = idx - compress;

        idx = 7;
        while (idx != 0 && swaps > 0) {
            uint16_t t = piece[idx];

            piece[idx] = piece[compress + swaps - 1];
            piece[compress + swaps - 1] = t;
            idx--;
            swaps--;
        }
    } else if (idx != 8) {
        return -1;
    }
    memset(out, 0, sizeof(*out));
    out->family = AF_INET6;
    for (int i = 0; i < 8; i++) {
        out->b[2 * i] = (uint8_t)(piece[i] >> 8);
        out->b[2 * i + 1] = (uint8_t)piece[i];
    }
    return 0;
}

static bool zero_bytes(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

static bool is_mapped(const struct px_addr *a)
{
    return a->family == AF_INET6 && zero_bytes(a->b, 10) && a->b[10] == 0xff && a->b[11] == 0xff;
}

/* An IPv4-mapped address is the IPv4 address on the wire (the kernel dials
 * the IPv4 one), so it is spelled and compared as one. */
static void unmap(struct px_addr *a)
{
    if (is_mapped(a)) {
        uint8_t v4[4];

        memcpy(v4, a->b + 12, 4);
        memset(a, 0, sizeof(*a));
        a->family = AF_INET;
        memcpy(a->b, v4, 4);
    }
}

int px_addr_parse(const char *s, struct px_addr *out)
{
    size_t n = strlen(s);
    struct px_addr a;

    if (memchr(s, ':', n)) {
        if (parse_v6(s, n, &a) < 0)
            return -1;
    } else {
        memset(&a, 0, sizeof(a));
        a.family = AF_INET;
        if (parse_dotted_quad(s, n, a.b) < 0)
            return -1;
    }
    *out = a;
    return 0;
}

void px_addr_format(const struct px_addr *a, char *out, size_t outsz)
{
    size_t len = 0;
    int best = -1, best_len = 0;
    uint16_t w[8];

    if (outsz == 0)
        return;
    out[0] = '\0';
    if (a->family == AF_INET) {
        snprintf(out, outsz, "%u.%u.%u.%u", a->b[0], a->b[1], a->b[2], a->b[3]);
        return;
    }
    if (a->family != AF_INET6)
        return;
    for (int i = 0; i < 8; i++)
        w[i] = (uint16_t)(a->b[2 * i] << 8 | a->b[2 * i + 1]);
    /* RFC 5952 §4.2: the longest run of two or more zero fields, the first
     * one on a tie; a lone zero field stays "0". */
    for (int i = 0; i < 8;) {
        int j = i;

        while (j < 8 && w[j] == 0)
            j++;
        if (j - i >= 2 && j - i > best_len) {
            best = i;
            best_len = j - i;
        }
        i = (j == i) ? i + 1 : j;
    }
    for (int i = 0; i < 8; i++) {
        int r;

        if (i == best) {
            r = snprintf(out + len, outsz - len, "::");
            i += best_len - 1;
        } else {
            r = snprintf(out + len, outsz - len, "%s%x", (i > 0 && i != best + best_len) ? ":" : "",
                         w[i]);
        }
        if (r < 0 || (size_t)r >= outsz - len)
            return;
        len += (size_t)r;
    }
}

bool px_addr_equal(const struct px_addr *a, const struct px_addr *b)
{
    if (a->family != b->family)
        return false;
    return memcmp(a->b, b->b, a->family == AF_INET ? 4 : 16) == 0;
}

int px_host_canon(const char *in, size_t len, char out[PX_HOST_MAX], bool *is_ip,
                  struct px_addr *addr)
{
    struct px_addr a;
    const char *s = in;
    size_t n = len;
    bool bracketed = false;

    out[0] = '\0';
    if (n == 0 || n > RAW_HOST_MAX)
        return -1;
    if (s[0] == '[') {
        if (n < 3 || s[n - 1] != ']')
            return -1;
        s++;
        n -= 2;
        bracketed = true;
    }
    /* Brackets only ever hold IPv6; a colon outside them can only be IPv6.
     * '%' (a zone) fails both grammars: srt refuses zones because
     * `::ffff:1.2.3.4%x.allowed.com` passes a suffix match on the name while
     * the stack dials 1.2.3.4. */
    if (bracketed || memchr(s, ':', n)) {
        if (parse_v6(s, n, &a) < 0)
            return -1;
        unmap(&a);
        px_addr_format(&a, out, PX_HOST_MAX);
        if (is_ip)
            *is_ip = true;
        if (addr)
            *addr = a;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!is_name_char(s[i]))
            return -1;
    if (ends_in_number(s, n)) {
        if (parse_v4_loose(s, n, &a) < 0)
            return -1;
        px_addr_format(&a, out, PX_HOST_MAX);
        if (is_ip)
            *is_ip = true;
        if (addr)
            *addr = a;
        return 0;
    }
    if (s[n - 1] == '.')
        n--;
    if (n == 0 || n > NAME_MAX_LEN)
        return -1;
    /* An empty label is not a name a resolver looks up the same way twice
     * (`a..com`, `.a.com`); refuse rather than guess. */
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.' && (i == 0 || i + 1 == n || s[i + 1] == '.'))
            return -1;
    for (size_t i = 0; i < n; i++)
        out[i] = to_lower(s[i]);
    out[n] = '\0';
    if (is_ip)
        *is_ip = false;
    if (addr)
        memset(addr, 0, sizeof(*addr));
    return 0;
}

bool px_addr_embedded_v4(const struct px_addr *a, struct px_addr *v4)
{
    const uint8_t *b = a->b;
    const uint8_t *src = NULL;

    if (a->family != AF_INET6)
        return false;
    if (is_mapped(a)) {
        src = b + 12;
    } else if (zero_bytes(b, 12)) {
        /* IPv4-compatible, but :: and ::1 are themselves, not 0.0.0.x. */
        if (!(b[12] == 0 && b[13] == 0 && b[14] == 0 && b[15] <= 1))
            src = b + 12;
    } else if (zero_bytes(b, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0) {
        src = b + 12; /* IPv4-translated ::ffff:0:a.b.c.d (RFC 2765) */
    } else if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b &&
               zero_bytes(b + 4, 8)) {
        src = b + 12; /* NAT64 well-known prefix; 64:ff9b:1::/48 has no fixed layout */
    } else if (b[0] == 0x20 && b[1] == 0x02) {
        src = b + 2; /* 6to4 */
    }
    if (!src)
        return false;
    if (v4) {
        memset(v4, 0, sizeof(*v4));
        v4->family = AF_INET;
        memcpy(v4->b, src, 4);
    }
    return true;
}

/* A prefix of 1..3 digits, "0" the only one that may start with 0: `/08`
 * is octal to some tools and decimal to others. */
static int parse_prefix(const char *s, unsigned max, unsigned *out)
{
    size_t n = strlen(s);
    unsigned v = 0;

    if (n == 0 || n > 3 || (n > 1 && s[0] == '0'))
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

static void clear_host_bits(struct px_addr *a, unsigned prefix)
{
    size_t nbytes = a->family == AF_INET ? 4 : 16;

    for (size_t i = 0; i < nbytes; i++) {
        unsigned keep = prefix > 8 * i ? prefix - 8 * (unsigned)i : 0;

        if (keep < 8)
            a->b[i] &= (uint8_t)(0xff00u >> keep);
    }
}

int px_cidr_parse(const char *s, struct px_cidr *out)
{
    char buf[64];
    const char *slash = strchr(s, '/');
    size_t alen = slash ? (size_t)(slash - s) : strlen(s);
    const char *p = s;
    struct px_addr a;
    unsigned max, prefix;
    char *pct;

    if (alen >= 2 && s[0] == '[') {
        if (s[alen - 1] != ']')
            return -1;
        p = s + 1;
        alen -= 2;
        if (!memchr(p, ':', alen))
            return -1;
    }
    if (alen == 0 || alen >= sizeof(buf))
        return -1;
    memcpy(buf, p, alen);
    buf[alen] = '\0';
    /* srt drops an IPv6 zone from a range: the same address on every link
     * is denied, which only widens a deny. */
    pct = strchr(buf, '%');
    if (pct) {
        if (!memchr(buf, ':', (size_t)(pct - buf)) || pct[1] == '\0')
            return -1;
        for (const char *z = pct + 1; *z; z++)
            if (!is_name_char(*z))
                return -1;
        *pct = '\0';
    }
    if (px_addr_parse(buf, &a) < 0)
        return -1;
    max = a.family == AF_INET ? 32 : 128;
    prefix = max;
    if (slash && parse_prefix(slash + 1, max, &prefix) < 0)
        return -1;
    /* `::ffff:10.0.0.0/104` is 10.0.0.0/8: stored as IPv4 so it matches the
     * IPv4 spelling of the same addresses. A mapped range shorter than /96
     * also covers non-mapped IPv6; srt refuses it, so do we. */
    if (is_mapped(&a)) {
        if (prefix < 96)
            return -1;
        unmap(&a);
        prefix -= 96;
    }
    clear_host_bits(&a, prefix);
    out->addr = a;
    out->prefix = prefix;
    return 0;
}

static bool in_prefix(const struct px_cidr *c, const struct px_addr *a)
{
    unsigned full = c->prefix / 8, rest = c->prefix % 8;

    if (a->family != c->addr.family)
        return false;
    if (memcmp(a->b, c->addr.b, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff00u >> rest);
    return (a->b[full] & mask) == (c->addr.b[full] & mask);
}

bool px_cidr_contains(const struct px_cidr *c, const struct px_addr *a)
{
    struct px_addr v4;

    if (in_prefix(c, a))
        return true;
    return c->addr.family == AF_INET && px_addr_embedded_v4(a, &v4) && in_prefix(c, &v4);
}

static unsigned v4_classes(const uint8_t *b)
{
    unsigned c = 0;

    if (b[0] == 127)
        c |= PX_CLASS_LOOPBACK;
    if (b[0] == 0)
        c |= PX_CLASS_UNSPECIFIED;
    if (b[0] == 169 && b[1] == 254)
        c |= PX_CLASS_LINK_LOCAL;
    if ((b[0] & 0xf0) == 224)
        c |= PX_CLASS_MULTICAST;
    if (b[0] == 255 && b[1] == 255 && b[2] == 255 && b[3] == 255)
        c |= PX_CLASS_BROADCAST;
    /* Metadata services outside link-local: Alibaba, Azure WireServer,
     * Oracle Classic. 169.254.169.254 is already link-local. */
    static const uint8_t meta[][4] = {
        { 100, 100, 100, 200 },
        { 168, 63, 129, 16 },
        { 192, 0, 0, 192 },
    };
    for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
        if (memcmp(b, meta[i], 4) == 0)
            c |= PX_CLASS_METADATA;
    return c;
}

static unsigned v6_classes(const uint8_t *b)
{
    unsigned c = 0;

    if (zero_bytes(b, 15) && b[15] == 1)
        c |= PX_CLASS_LOOPBACK;
    if (zero_bytes(b, 16))
        c |= PX_CLASS_UNSPECIFIED;
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
        c |= PX_CLASS_LINK_LOCAL;
    if (b[0] == 0xff)
        c |= PX_CLASS_MULTICAST;
    /* AWS's whole fd00:ec2::/32 service block (IMDS ::254, EKS Pod Identity
     * ::23, DNS, NTP), then single addresses: GCP IPv6-only, OCI, Scaleway,
     * Akamai/Linode, Alibaba. */
    if (b[0] == 0xfd && b[1] == 0x00 && b[2] == 0x0e && b[3] == 0xc2)
        c |= PX_CLASS_METADATA;
    static const uint8_t meta[][16] = {
        { 0xfd, 0x20, 0x00, 0xce, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54 },
        { 0xfd, 0x00, 0x00, 0xc1, 0, 0, 0, 0, 0, 0, 0, 0, 0xa9, 0xfe, 0xa9, 0xfe },
        { 0xfd, 0x00, 0x00, 0x42, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x42 },
        { 0xfd, 0x00, 0xa9, 0xfe, 0xa9, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x01 },
        { 0xfd, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0x02, 0x00 },
    };
    for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
        if (memcmp(b, meta[i], 16) == 0)
            c |= PX_CLASS_METADATA;
    return c;
}

unsigned px_addr_builtin_classes(const struct px_addr *a)
{
    struct px_addr v4;

    if (a->family == AF_INET)
        return v4_classes(a->b);
    if (a->family != AF_INET6)
        return 0;
    /* A NAT64, 6to4, mapped or compatible answer is delivered to the IPv4
     * address it carries: `64:ff9b::a9fe:a9fe` is the metadata service. */
    return v6_classes(a->b) | (px_addr_embedded_v4(a, &v4) ? v4_classes(v4.b) : 0);
}

static const char *class_name(enum px_class c)
{
    switch (c) {
    case PX_CLASS_DENY_LISTED:
        return "a deny-listed address";
    case PX_CLASS_LOOPBACK:
        return "a loopback address";
    case PX_CLASS_UNSPECIFIED:
        return "an unspecified address";
    case PX_CLASS_LINK_LOCAL:
        return "a link-local address";
    case PX_CLASS_MULTICAST:
        return "a multicast address";
    case PX_CLASS_BROADCAST:
        return "the broadcast address";
    case PX_CLASS_METADATA:
        return "a cloud metadata address";
    case PX_CLASS_LISTED:
        return "a listed address";
    case PX_CLASS_HOST:
        return "one of this host's addresses";
    case PX_CLASS_NON_LOOPBACK:
        return "a non-loopback address";
    }
    return NULL;
}

void px_class_text(unsigned classes, char *out, size_t outsz)
{
    static const enum px_class order[] = {
        PX_CLASS_DENY_LISTED, PX_CLASS_LOOPBACK,     PX_CLASS_UNSPECIFIED, PX_CLASS_LINK_LOCAL,
        PX_CLASS_MULTICAST,   PX_CLASS_BROADCAST,    PX_CLASS_METADATA,    PX_CLASS_LISTED,
        PX_CLASS_HOST,        PX_CLASS_NON_LOOPBACK,
    };
    size_t len = 0;

    if (outsz == 0)
        return;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        int r;

        if (!(classes & (unsigned)order[i]))
            continue;
        r = snprintf(out + len, outsz - len, "%s%s", len ? " / " : "", class_name(order[i]));
        if (r < 0 || (size_t)r >= outsz - len)
            return;
        len += (size_t)r;
    }
}
