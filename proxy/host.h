/* Canonical host names, IP addresses, CIDRs and the address classes of the
 * resolved-address guard. Pure functions over buffers: no I/O, no globals. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h> /* AF_INET, AF_INET6 */

#define PX_HOST_MAX 256 /* canonical host text, including the NUL */

struct px_addr {
    int family;    /* AF_INET or AF_INET6 */
    uint8_t b[16]; /* network order; IPv4 uses b[0..3] */
};

struct px_cidr {
    struct px_addr addr; /* host bits cleared */
    unsigned prefix;     /* 0..32 or 0..128 */
};

/* Canonicalise a host as a client spelled it (no port; IPv6 may be
 * bracketed): lower case; one trailing dot removed; the numeric IPv4
 * spellings inet_aton accepts ("2130706433", "0x7f.1", "127.1", octal) to a
 * dotted quad; IPv6 compressed (RFC 5952) without brackets; IPv4-mapped IPv6
 * to IPv4. Names must be [a-z0-9._-] only, no empty label, at most 253
 * characters. Returns 0, or -1 when the host is malformed (empty, '%' zone,
 * control or other characters, bad brackets). On success *is_ip says whether
 * it is an IP literal and *addr holds it (both may be NULL). */
int px_host_canon(const char *in, size_t len, char out[PX_HOST_MAX], bool *is_ip,
                  struct px_addr *addr);

/* A strict literal: dotted-quad IPv4 or IPv6 (no brackets, no zone). 0 or -1. */
int px_addr_parse(const char *s, struct px_addr *out);

/* Canonical text of an address (dotted quad; RFC 5952 IPv6). */
void px_addr_format(const struct px_addr *a, char *out, size_t outsz);

bool px_addr_equal(const struct px_addr *a, const struct px_addr *b);

/* The IPv4 address embedded in an IPv6 one: IPv4-mapped ::ffff:a.b.c.d,
 * IPv4-compatible ::a.b.c.d (not :: or ::1), IPv4-translated
 * ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002:AABB:CCDD::/48.
 * Returns true and fills *v4 when there is one. */
bool px_addr_embedded_v4(const struct px_addr *a, struct px_addr *v4);

/* "10.0.0.0/8", "fd00::/8", a bare address (/32 or /128); IPv6 may be
 * bracketed; an IPv4-mapped IPv6 CIDR (::ffff:10.0.0.0/104) becomes the IPv4
 * one (10.0.0.0/8). Host bits are cleared. Returns 0 or -1. */
int px_cidr_parse(const char *s, struct px_cidr *out);

/* True when a (or, for IPv6, the IPv4 it embeds) lies in c. */
bool px_cidr_contains(const struct px_cidr *c, const struct px_addr *a);

/* Address classes, in the priority order of srt's message. */
enum px_class {
    PX_CLASS_DENY_LISTED = 1u << 0,  /* an IP-literal deny_domain entry */
    PX_CLASS_LOOPBACK = 1u << 1,     /* 127.0.0.0/8, ::1 */
    PX_CLASS_UNSPECIFIED = 1u << 2,  /* 0.0.0.0/8, :: */
    PX_CLASS_LINK_LOCAL = 1u << 3,   /* 169.254.0.0/16, fe80::/10 */
    PX_CLASS_MULTICAST = 1u << 4,    /* 224.0.0.0/4, ff00::/8 */
    PX_CLASS_BROADCAST = 1u << 5,    /* 255.255.255.255 */
    PX_CLASS_METADATA = 1u << 6,     /* cloud metadata services */
    PX_CLASS_LISTED = 1u << 7,       /* a deny_address CIDR */
    PX_CLASS_HOST = 1u << 8,         /* an address of this host's interfaces */
    PX_CLASS_NON_LOOPBACK = 1u << 9, /* "localhost" resolving elsewhere */
};

/* The built-in classes of a (LOOPBACK..METADATA), checking the address and
 * the IPv4 it embeds. 0 when none applies (private ranges included). */
unsigned px_addr_builtin_classes(const struct px_addr *a);

/* "a loopback address / one of this host's addresses": each set bit's text
 * joined by " / " in the enum's order. */
void px_class_text(unsigned classes, char *out, size_t outsz);
