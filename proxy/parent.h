/* The parent proxy nsfence itself must go through (a corporate proxy): from
 * `[network] parent_proxy`, else nsfence's own HTTPS_PROXY / HTTP_PROXY,
 * honouring NO_PROXY. Pure functions. */
#pragma once

#include <stdbool.h>

#include "proxy/host.h"
#include "src/err.h"

struct px_parent {
    bool enabled;
    char host[PX_HOST_MAX]; /* canonical */
    bool host_is_ip;
    struct px_addr addr;
    unsigned port;
    char auth[512];      /* "Basic ..." from URL credentials, or "" */
    char no_proxy[1024]; /* the NO_PROXY list, as given */
    const char *source;  /* "parent_proxy", "HTTPS_PROXY", ... */
};

/* Parse "http://[user:pass@]host[:port][/]" or "host:port". */
int px_parent_parse(const char *url, struct px_parent *out, struct nf_err *err);

/* Choose the parent: config_url if set, else the environment (getenv is the
 * caller's: pass the values). Not enabled when nothing applies. */
int px_parent_choose(const char *config_url, const char *https_proxy, const char *http_proxy,
                     const char *no_proxy, struct px_parent *out, struct nf_err *err);

/* Whether a destination is exempt from the parent: "*", exact hosts,
 * domain suffixes (".example.com" or "example.com" match sub.example.com),
 * optional ":port", IP literals and CIDRs. host is canonical. */
bool px_no_proxy_match(const char *list, const char *host, unsigned port);
