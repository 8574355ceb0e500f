/* The network policy as a rule table: srt's domain patterns
 * (domain-pattern.js), its filterNetworkRequest order, and its
 * resolved-address guard, over canonical hosts so that every spelling of an
 * address or name meets the same entry. */
#include "proxy/rules.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define REASON_DENY_LIST   "host is on the deny list"
#define REASON_NOT_ALLOWED "host is not on the allow list"
#define REASON_MALFORMED   "malformed host"

/* srt's parsePortSuffix: 1..65535 in plain decimal. A leading zero or a sign
 * is refused so `evil.com:0443` is not read as a port by one tool and as part
 * of the name by another. */
static int parse_port(const char *s, unsigned *out)
{
    size_t n = strlen(s);
    unsigned v = 0;

    if (n == 0 || n > 5 || s[0] < '1' || s[0] > '9')
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > 65535)
        return -1;
    *out = v;
    return 0;
}

/* The entry as it can be shown on one line: a newline in a config value
 * must not forge a second line of error output. */
static const char *printable(const char *s, char *buf, size_t bufsz)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;

    for (; *s && o + 5 < bufsz; s++) {
        unsigned char c = (unsigned char)*s;

        if (c >= 0x20 && c < 0x7f) {
            buf[o++] = (char)c;
        } else {
            buf[o++] = '\\';
            buf[o++] = 'x';
            buf[o++] = hex[c >> 4];
            buf[o++] = hex[c & 15];
        }
    }
    buf[o] = '\0';
    return buf;
}

static int bad(struct nf_err *err, const char *s, const char *why)
{
    char shown[256];

    return nf_err_set(err, 0, "invalid domain pattern \"%s\": %s",
                      printable(s, shown, sizeof(shown)), why);
}

static int parse_bracketed(const char *s, struct px_pattern *out, struct nf_err *err)
{
    const char *close = strchr(s, ']');
    size_t inner;

    if (!close)
        return bad(err, s, "'[' without a closing ']'");
    if (close[1] != '\0' && (close[1] != ':' || parse_port(close + 2, &out->port) < 0))
        return bad(err, s, "after ']' only a port may follow, as in [::1]:443 (1-65535)");
    inner = (size_t)(close - (s + 1));
    /* Like srt's dropZone: a zone names the link, not the address. */
    const char *pct = memchr(s + 1, '%', inner);
    if (pct)
        inner = (size_t)(pct - (s + 1));
    if (!memchr(s + 1, ':', inner) ||
        px_host_canon(s + 1, inner, out->host, &out->is_ip, &out->addr) < 0)
        return bad(err, s, "brackets must hold an IPv6 address");
    out->kind = PX_PAT_EXACT;
    return 0;
}

int px_pattern_parse(const char *s, bool deny_list, struct px_pattern *out, struct nf_err *err)
{
    char host[PX_HOST_MAX];
    const char *colon;
    size_t n = strlen(s), hlen, ncolons = 0;

    memset(out, 0, sizeof(*out));
    if (n == 0)
        return bad(err, s, "empty");
    if (strstr(s, "://"))
        return bad(err, s, "a pattern is a host name, not a URL");
    if (strchr(s, '/'))
        return bad(err, s, "a pattern is a host name and may not contain '/'");
    for (size_t i = 0; i < n; i++)
        ncolons += s[i] == ':';
    /* srt's hasValidIpv6Bracketing: `2001:db8::1:443` is itself an address,
     * so an unbracketed IPv6 with a port cannot be told from one without. */
    if (ncolons >= 2 && s[0] != '[')
        return bad(err, s, "an IPv6 address must be bracketed, as in [::1] or [::1]:443");
    if (s[0] == '[')
        return parse_bracketed(s, out, err);

    colon = strrchr(s, ':');
    hlen = colon ? (size_t)(colon - s) : n;
    if (colon && parse_port(colon + 1, &out->port) < 0)
        return bad(err, s, "the port must be 1-65535 without a leading zero");
    if (hlen >= sizeof(host))
        return bad(err, s, "too long");
    memcpy(host, s, hlen);
    host[hlen] = '\0';

    if (strcmp(host, "*") == 0) {
        if (!deny_list)
            return bad(err, s, "\"*\" would allow every host; it is only valid in a deny list");
        out->kind = PX_PAT_ANY;
        return 0;
    }
    if (strncmp(host, "*.", 2) == 0) {
        if (px_host_canon(host + 2, hlen - 2, out->host, &out->is_ip, &out->addr) < 0 || out->is_ip)
            return bad(err, s, "a wildcard must cover a domain name, as in *.example.com");
        /* `*.com` would cover a whole top-level domain. */
        if (!strchr(out->host, '.'))
            return bad(err, s, "a wildcard needs a domain of at least two labels, not a TLD");
        out->kind = PX_PAT_WILDCARD;
        out->is_ip = false;
        memset(&out->addr, 0, sizeof(out->addr));
        return 0;
    }
    if (strchr(host, '*'))
        return bad(err, s, "'*' is only valid as a whole leading label, as in *.example.com");
    if (px_host_canon(host, hlen, out->host, &out->is_ip, &out->addr) < 0)
        return bad(err, s, "not a valid host name or IPv4 address");
    /* srt refuses single labels (a typo for a real domain, or an intranet
     * name that means different hosts in different places) but localhost.
     * Judged on the spelling, so `2130706433` is refused as srt does, while
     * `127.1` is the address it spells. */
    if (hlen > 0 && host[hlen - 1] == '.')
        host[--hlen] = '\0';
    if (!memchr(host, '.', hlen) && strcmp(out->host, "localhost") != 0)
        return bad(err, s, "a single label other than localhost; write the full domain name");
    out->kind = PX_PAT_EXACT;
    return 0;
}

bool px_pattern_match(const struct px_pattern *p, const char *host, bool host_is_ip, unsigned port)
{
    size_t hl, bl;

    if (p->port && p->port != port)
        return false;
    switch (p->kind) {
    case PX_PAT_ANY:
        return true;
    case PX_PAT_WILDCARD:
        /* Never an IP: `::ffff:1.2.3.4%x.example.com` style payloads must
         * not pass a suffix test while the stack dials the address. */
        if (host_is_ip)
            return false;
        hl = strlen(host);
        bl = strlen(p->host);
        return hl > bl + 1 && host[hl - bl - 1] == '.' && strcasecmp(host + hl - bl, p->host) == 0;
    case PX_PAT_EXACT:
        return strcasecmp(host, p->host) == 0;
    }
    return false;
}

static bool same_pattern(const struct px_pattern *a, const struct px_pattern *b)
{
    return a->kind == b->kind && a->port == b->port && strcmp(a->host, b->host) == 0;
}

/* The configured text for deny entry `entry`: keyed by the entry as written,
 * compared case-insensitively or by what it means (`EXAMPLE.com.` keys
 * `example.com`). A later line for the same entry overrides an earlier one,
 * as a later key does in srt's deniedDomainReasons object. */
static const char *find_reason(const struct policy *pol, const char *entry,
                               const struct px_pattern *p)
{
    const char *text = NULL;

    for (size_t i = 0; i < pol->n_deny_reasons; i++) {
        const struct pol_reason *r = &pol->deny_reasons[i];
        struct px_pattern rp;
        struct nf_err ignored;

        if (!r->host || !r->text)
            continue;
        if (strcasecmp(r->host, entry) == 0 ||
            (px_pattern_parse(r->host, true, &rp, &ignored) == 0 && same_pattern(&rp, p)))
            text = r->text;
    }
    return text;
}

int px_rules_build(const struct policy *pol, struct px_rules *out, struct nf_err *err)
{
    size_t nd = pol->deny_domain.n, na = pol->allow_domain.n, nc = pol->deny_address.n;

    memset(out, 0, sizeof(*out));
    if ((nd && (!(out->deny = calloc(nd, sizeof(*out->deny))) ||
                !(out->deny_reason = calloc(nd, sizeof(*out->deny_reason))))) ||
        (na && !(out->allow = calloc(na, sizeof(*out->allow)))) ||
        (nc && !(out->deny_address = calloc(nc, sizeof(*out->deny_address))))) {
        px_rules_free(out);
        return nf_err_set(err, ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nd; i++) {
        if (px_pattern_parse(pol->deny_domain.v[i], true, &out->deny[i], err) < 0)
            goto fail_deny;
        out->deny_reason[i] = find_reason(pol, pol->deny_domain.v[i], &out->deny[i]);
        out->n_deny++;
    }
    for (size_t i = 0; i < na; i++) {
        if (px_pattern_parse(pol->allow_domain.v[i], false, &out->allow[i], err) < 0)
            goto fail_allow;
        out->n_allow++;
    }
    for (size_t i = 0; i < nc; i++) {
        if (px_cidr_parse(pol->deny_address.v[i], &out->deny_address[i]) < 0) {
            char shown[256];

            nf_err_set(err, 0, "deny_address \"%s\": not an IP address or CIDR range",
                       printable(pol->deny_address.v[i], shown, sizeof(shown)));
            px_rules_free(out);
            return -1;
        }
        out->n_deny_address++;
    }
    return 0;

fail_deny:
    px_rules_free(out);
    return nf_err_prefix(err, "deny_domain");
fail_allow:
    px_rules_free(out);
    return nf_err_prefix(err, "allow_domain");
}

void px_rules_free(struct px_rules *r)
{
    free(r->deny);
    free(r->deny_reason);
    free(r->allow);
    free(r->deny_address);
    memset(r, 0, sizeof(*r));
}

void px_rules_decide(const struct px_rules *r, const char *host, size_t hostlen, unsigned port,
                     struct px_decision *out)
{
    memset(out, 0, sizeof(*out));
    if (px_host_canon(host, hostlen, out->host, &out->is_ip, &out->addr) < 0) {
        out->host[0] = '\0';
        out->reason = REASON_MALFORMED;
        return;
    }
    for (size_t i = 0; i < r->n_deny; i++) {
        if (px_pattern_match(&r->deny[i], out->host, out->is_ip, port)) {
            out->reason = r->deny_reason[i] ? r->deny_reason[i] : REASON_DENY_LIST;
            return;
        }
    }
    for (size_t i = 0; i < r->n_allow; i++) {
        if (px_pattern_match(&r->allow[i], out->host, out->is_ip, port)) {
            out->allow = true;
            return;
        }
    }
    out->reason = REASON_NOT_ALLOWED;
}

/* The IPv4 spelling of an IPv4-mapped address: the stack dials the IPv4
 * one, and srt's BlockList matches either spelling against an IPv4 rule. */
static struct px_addr unmapped(const struct px_addr *a)
{
    static const uint8_t mapped_prefix[12] = { [10] = 0xff, [11] = 0xff };
    struct px_addr v4 = { .family = AF_INET };

    if (a->family != AF_INET6 || memcmp(a->b, mapped_prefix, sizeof(mapped_prefix)) != 0)
        return *a;
    memcpy(v4.b, a->b + 12, 4);
    return v4;
}

static bool ip_entry_applies(const struct px_pattern *p, unsigned port)
{
    return p->kind == PX_PAT_EXACT && p->is_ip && (p->port == 0 || p->port == port);
}

static bool is_loopback_name(const char *host)
{
    size_t n = strlen(host);

    if (n > 0 && host[n - 1] == '.')
        n--;
    if (n == 9 && strncasecmp(host, "localhost", 9) == 0)
        return true;
    return n > 10 && strncasecmp(host + n - 10, ".localhost", 10) == 0;
}

static bool is_loopback_addr(const struct px_addr *a)
{
    static const uint8_t v6_loopback[16] = { [15] = 1 };

    if (a->family == AF_INET)
        return a->b[0] == 127;
    return a->family == AF_INET6 && memcmp(a->b, v6_loopback, 16) == 0;
}

/* srt reports one class per dropped address, the first in priority order;
 * the caller ORs the classes of every dropped address into one message. */
unsigned px_guard_check(const struct px_rules *r, const char *host, unsigned port,
                        const struct px_addr *a, const struct px_addr *local, size_t n_local)
{
    struct px_addr addr = unmapped(a), v4, lit;
    bool has_v4 = px_addr_embedded_v4(&addr, &v4);
    unsigned classes;

    /* An IP-literal destination was judged by the allow list itself. */
    if (px_addr_parse(host, &lit) == 0)
        return 0;
    /* The carried IPv4 only ever adds denials: a deny entry for 10.0.0.1
     * also refuses 64:ff9b::a00:1. */
    for (size_t i = 0; i < r->n_deny; i++) {
        const struct px_pattern *p = &r->deny[i];

        if (ip_entry_applies(p, port) &&
            (px_addr_equal(&addr, &p->addr) || (has_v4 && px_addr_equal(&v4, &p->addr))))
            return PX_CLASS_DENY_LISTED;
    }
    /* ...and never earns an allowance: ::1 carries 0.0.0.1, and an allow
     * entry for 0.0.0.1 must not open loopback. */
    for (size_t i = 0; i < r->n_allow; i++) {
        const struct px_pattern *p = &r->allow[i];

        if (ip_entry_applies(p, port) && px_addr_equal(&addr, &p->addr))
            return 0;
    }
    /* RFC 6761: localhost names mean loopback, whatever DNS says; a name
     * under .localhost that resolves elsewhere is someone else's answer. */
    if (is_loopback_name(host))
        return is_loopback_addr(&addr) ? 0 : PX_CLASS_NON_LOOPBACK;
    classes = px_addr_builtin_classes(&addr);
    if (classes)
        return classes & -classes;
    for (size_t i = 0; i < r->n_deny_address; i++)
        if (px_cidr_contains(&r->deny_address[i], &addr))
            return PX_CLASS_LISTED;
    /* A service bound to 0.0.0.0 answers on every local address exactly as
     * on loopback. */
    for (size_t i = 0; i < n_local; i++) {
        struct px_addr l = unmapped(&local[i]);

        if (px_addr_equal(&addr, &l) || (has_v4 && px_addr_equal(&v4, &l)))
            return PX_CLASS_HOST;
    }
    return 0;
}
