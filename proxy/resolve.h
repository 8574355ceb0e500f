/* Asynchronous DNS through c-ares on the host side's event loop: no blocking
 * getaddrinfo (a slow resolver must not stall other connections) and no NSS
 * (the static binary reads /etc/hosts and /etc/resolv.conf itself). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "proxy/host.h"
#include "src/err.h"
#include "src/loop.h"

#define PX_RESOLVE_MAX_ADDRS 16

struct px_resolver;
struct px_resolve_req;

/* status 0 with addresses, or a c-ares error; msg describes it. */
typedef void (*px_resolve_cb)(void *arg, int status, const char *msg, const struct px_addr *addrs,
                              size_t n);

/* search: resolv.conf's search list applies (a name the user configured,
 * the parent proxy's); never for a name the sandbox asked for. */
int px_resolver_new(struct px_resolver **out, struct ev_loop *loop, bool search,
                    struct nf_err *err);
void px_resolver_free(struct px_resolver *r);

/* Look host up (A and AAAA, hosts file first). The callback runs later, from
 * the loop, unless the request is cancelled first. */
struct px_resolve_req *px_resolve(struct px_resolver *r, const char *host, px_resolve_cb cb,
                                  void *arg);
void px_resolve_cancel(struct px_resolve_req *req);
