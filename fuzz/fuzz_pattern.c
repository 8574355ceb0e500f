/* px_pattern_parse in both lists, then matching against fixed hosts. The
 * properties: the allow list accepts a subset of what the deny list does, and
 * reads it the same way; `*` is never allowed; a wildcard never matches its
 * apex or an IP; an exact pattern matches its own host. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
    if (!ok)
        abort();
}

static const char *const hosts[] = {
    "example.com", "api.example.com", "localhost", "127.0.0.1", "::1", "a.b.c.d.e", "10.0.0.1",
};

static void exercise(const struct px_pattern *p)
{
    char sub[PX_HOST_MAX + 2];

    for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
        char canon[PX_HOST_MAX];
        bool ip;

        check(px_host_canon(hosts[i], strlen(hosts[i]), canon, &ip, NULL) == 0);
        (void)px_pattern_match(p, canon, ip, 443);
        (void)px_pattern_match(p, canon, ip, p->port);
    }
    switch (p->kind) {
    case PX_PAT_ANY:
        check(px_pattern_match(p, "anything.example", false, p->port ? p->port : 1));
        break;
    case PX_PAT_WILDCARD:
        check(!p->is_ip && strchr(p->host, '.'));
        check(!px_pattern_match(p, p->host, false, p->port));
        check(!px_pattern_match(p, "127.0.0.1", true, p->port));
        if (strlen(p->host) + 3 <= PX_HOST_MAX) {
            strcpy(sub, "x.");
            strcat(sub, p->host);
            check(px_pattern_match(p, sub, false, p->port ? p->port : 443));
        }
        break;
    case PX_PAT_EXACT: {
        char again[PX_HOST_MAX];
        bool ip;

        check(px_pattern_match(p, p->host, p->is_ip, p->port ? p->port : 443));
        check(px_host_canon(p->host, strlen(p->host), again, &ip, NULL) == 0);
        check(strcmp(again, p->host) == 0 && ip == p->is_ip);
        if (p->port)
            check(!px_pattern_match(p, p->host, p->is_ip, p->port == 1 ? 2 : p->port - 1));
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct px_pattern allow, deny;
    struct nf_err err;
    char *s = malloc(size + 1);
    int ra, rd;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    ra = px_pattern_parse(s, false, &allow, &err);
    if (ra < 0)
        check(err.msg[0] != '\0' && !strchr(err.msg, '\n'));
    rd = px_pattern_parse(s, true, &deny, &err);
    if (ra == 0) {
        check(rd == 0);
        check(allow.kind != PX_PAT_ANY);
        check(allow.kind == deny.kind && allow.port == deny.port &&
              strcmp(allow.host, deny.host) == 0);
        check(allow.port <= 65535);
        exercise(&allow);
    }
    if (rd == 0)
        exercise(&deny);
    free(s);
    return 0;
}
