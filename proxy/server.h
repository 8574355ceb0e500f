/* The host-side proxy: serves the endpoints init made inside the sandbox's
 * network namespace, on the one event loop. Every destination goes through
 * the rule table first; names are resolved once, on the host, and the
 * resolved-address guard drops what the sandbox must not reach. */
#pragma once

#include <stdbool.h>

#include "proxy/parent.h"
#include "proxy/rules.h"
#include "src/err.h"
#include "src/loop.h"
#include "src/violations.h"

struct px_server_config {
    const struct px_rules *rules;
    const struct px_parent *parent; /* enabled or not */
    unsigned max_connections;
    struct vio_list *violations;
    /* Non-zero: that endpoint is an external proxy's on the host's
     * 127.0.0.1:<port> (srt's httpProxyPort / socksProxyPort). Each
     * connection is relayed to it byte for byte; the rules, the guard and
     * the parent never see it. */
    unsigned http_relay_port;
    unsigned socks_relay_port;
};

struct px_server;

int px_server_new(struct px_server **out, struct ev_loop *loop, const struct px_server_config *cfg,
                  struct nf_err *err);

/* Serve a listening socket; takes ownership of fd. */
int px_server_listen(struct px_server *s, int fd, bool socks, struct nf_err *err);

/* Serve one connection already accepted (Landlock mode: the supervisor's,
 * whose other end it handed the command); takes ownership of fd. Over
 * max_connections it is closed at once. */
int px_server_adopt(struct px_server *s, int fd, bool socks, struct nf_err *err);

/* Decide every request from now on by rules (a live update: srt's
 * --control-fd). A request already decided keeps the table that decided
 * it, so the caller keeps every table it handed in alive until
 * px_server_free. */
void px_server_set_rules(struct px_server *s, const struct px_rules *rules);

/* Close every connection and listener. */
void px_server_free(struct px_server *s);

/* The 403 status phrase srt sends for a denied CONNECT: control, bidi and
 * zero-width characters become spaces, '<' and '>' go, other non-printable
 * ASCII becomes '?', trimmed, at most 500 characters, "Forbidden" if empty.
 * Pure; exposed for tests. */
void px_status_phrase(const char *reason, char *out, size_t outsz);
