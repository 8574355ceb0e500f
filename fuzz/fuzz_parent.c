/* The parent-proxy URL, the NO_PROXY list and the denial status phrase over
 * arbitrary bytes (each comes from the environment or the config). The
 * properties: a parsed URL has a canonical host, a port in 1..65535 and a
 * well-formed Basic header, and prints back to a URL that parses the same;
 * px_parent_choose agrees with px_parent_parse; adding a non-matching entry
 * to a NO_PROXY list never changes its answer; a status phrase is non-empty
 * printable ASCII without '<', '>' or edge spaces, at most 500 characters. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/parent.h"
#include "proxy/server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
    if (!ok)
        abort();
}

static void check_parsed(const struct px_parent *p)
{
    char host[PX_HOST_MAX], again_url[PX_HOST_MAX + 32];
    struct px_parent again;
    struct nf_err err = { 0 };
    bool is_ip;
    size_t n;

    check(p->enabled);
    check(p->port >= 1 && p->port <= 65535);
    n = strlen(p->host);
    check(n > 0 && n < PX_HOST_MAX);
    /* canonical: canonicalising again changes nothing */
    check(px_host_canon(p->host, n, host, &is_ip, NULL) == 0);
    check(strcmp(host, p->host) == 0 && is_ip == p->host_is_ip);
    if (p->auth[0]) {
        size_t b = strlen(p->auth) - 6;

        check(strncmp(p->auth, "Basic ", 6) == 0);
        check(b > 0 && b % 4 == 0);
        check(strspn(p->auth + 6, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789+/=") == b);
    }
    /* printed back without credentials, it parses to the same place */
    snprintf(again_url, sizeof(again_url), strchr(p->host, ':') ? "http://[%s]:%u" : "http://%s:%u",
             p->host, p->port);
    check(px_parent_parse(again_url, &again, &err) == 0);
    check(strcmp(again.host, p->host) == 0 && again.port == p->port);
    check(again.auth[0] == '\0');
}

static void check_phrase(const char *in)
{
    char out[600], small[8];
    size_t n;

    px_status_phrase(in, out, sizeof(out));
    n = strlen(out);
    check(n > 0 && n <= 500);
    check(out[0] != ' ' && out[n - 1] != ' ');
    for (size_t i = 0; i < n; i++)
        check(out[i] >= 0x20 && out[i] < 0x7f && out[i] != '<' && out[i] != '>');
    /* and a short buffer is never overrun */
    px_status_phrase(in, small, sizeof(small));
    check(strlen(small) < sizeof(small));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct {
        const char *host;
        unsigned port;
    } dests[] = {
        { "example.com", 443 }, { "sub.example.com", 80 }, { "10.1.2.3", 8080 },
        { "::1", 443 },         { "localhost", 3128 },     { "2001:db8::1", 22 },
    };
    char *s = malloc(size + 1), *prefixed;
    struct px_parent p, chosen;
    struct nf_err err = { 0 }, err2 = { 0 };
    int r;

    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';

    r = px_parent_parse(s, &p, &err);
    if (r == 0)
        check_parsed(&p);
    else
        check(r == -1 && err.msg[0] != '\0' && !p.enabled);
    /* the config URL is taken as is, however the environment is set */
    check(px_parent_choose(s, "http://env:1", NULL, s, &chosen, &err2) == (s[0] ? r : 0));
    if (s[0] && r == 0)
        check(strcmp(chosen.host, p.host) == 0 && chosen.port == p.port &&
              strcmp(chosen.auth, p.auth) == 0);
    if (!s[0])
        check(strcmp(chosen.host, "env") == 0);

    prefixed = malloc(size + 32);
    if (!prefixed)
        abort();
    snprintf(prefixed, size + 32, "nomatch.invalid,%s", s);
    for (size_t i = 0; i < sizeof(dests) / sizeof(dests[0]); i++) {
        bool m = px_no_proxy_match(s, dests[i].host, dests[i].port);

        check(px_no_proxy_match(prefixed, dests[i].host, dests[i].port) == m);
        /* "*" alone matches everything, whatever else is listed */
        if (strcmp(s, "*") == 0)
            check(m);
    }
    free(prefixed);

    check_phrase(s);
    free(s);
    return 0;
}
