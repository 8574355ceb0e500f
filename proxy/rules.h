/* The network policy as a rule table: domain patterns, the deny/allow
 * decision, and the resolved-address guard. Pure: the orchestration builds
 * the table from the policy once; the proxy consults it per connection. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "proxy/host.h"
#include "src/err.h"
#include "src/policy.h"

enum px_pattern_kind {
    PX_PAT_EXACT,    /* example.com, 10.0.0.1, ::1 (canonical) */
    PX_PAT_WILDCARD, /* *.example.com: strict subdomains, never the apex or an IP */
    PX_PAT_ANY,      /* "*" — valid only in a deny list */
};

struct px_pattern {
    enum px_pattern_kind kind;
    char host[PX_HOST_MAX]; /* canonical; for a wildcard, the base without "*." */
    bool is_ip;
    struct px_addr addr; /* when is_ip */
    unsigned port;       /* 0: any port */
};

/* Parse a domain pattern: `example.com`, `*.example.com`, optional `:port`
 * (1..65535), IP literals, bracketed IPv6 (`[::1]`, `[::1]:443`); in a deny
 * list also `*` and `*:port`. Rejected, with a one-line reason in err:
 * `*.com`, `*` in an allow list, `http://x`, `a/b`, single labels other than
 * `localhost`, unbracketed IPv6 with a port, empty labels, bad ports. */
int px_pattern_parse(const char *s, bool deny_list, struct px_pattern *out, struct nf_err *err);

/* host is canonical (px_host_canon). */
bool px_pattern_match(const struct px_pattern *p, const char *host, bool host_is_ip, unsigned port);

struct px_rules {
    struct px_pattern *deny;
    const char **deny_reason; /* per deny entry: the configured text or NULL */
    size_t n_deny;
    struct px_pattern *allow;
    size_t n_allow;
    struct px_cidr *deny_address;
    size_t n_deny_address;
};

/* Build from pol->deny_domain, deny_reasons, allow_domain, deny_address.
 * The strings in the table point into pol, which must outlive it. */
int px_rules_build(const struct policy *pol, struct px_rules *out, struct nf_err *err);
void px_rules_free(struct px_rules *r);

struct px_decision {
    bool allow;
    const char *reason;     /* why denied: "malformed host", "host is on the
                               deny list", a deny_reason text, "host is not on
                               the allow list"; NULL when allowed */
    char host[PX_HOST_MAX]; /* canonical host ("" when malformed) */
    bool is_ip;
    struct px_addr addr; /* when is_ip */
};

/* The decision for a destination as the client spelled it: malformed host →
 * deny; deny entries in order (first match, its reason or "host is on the
 * deny list"); allow entries → allow; else "host is not on the allow list". */
void px_rules_decide(const struct px_rules *r, const char *host, size_t hostlen, unsigned port,
                     struct px_decision *out);

/* The resolved-address guard for one address of an allowed name (canonical,
 * not an IP literal), dialled directly. Returns 0 when the address may be
 * used, else the px_class bits that drop it. In order: an IP-literal deny
 * entry matching the address → DENY_LISTED; an IP-literal allow entry equal to
 * it → allowed; host "localhost" or "*.localhost" → allowed only if loopback
 * (else NON_LOOPBACK); built-in classes; deny_address → LISTED; one of
 * local[0..n_local) → HOST. */
unsigned px_guard_check(const struct px_rules *r, const char *host, unsigned port,
                        const struct px_addr *a, const struct px_addr *local, size_t n_local);
