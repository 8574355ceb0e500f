/* The proxy's connections, private to proxy/: the connection struct and the
 * server that owns them, shared by the files that each do one part of a
 * connection's work:
 *
 *   conn.c           lifecycle, the state machine's driver, the event handlers
 *   answer.c         final answers of our own: denials, 502, SOCKS replies
 *   conn_http.c      plain HTTP: the request head, bodies, the response
 *   conn_socks.c     the SOCKS5 greeting and request
 *   conn_upstream.c  resolving, connecting, a parent proxy's CONNECT, relays
 *   conn_tunnel.c    CONNECT and SOCKS tunnels (spliced)
 *   server.c         listeners, accepting, the connection cap
 *
 * The unit tests include it too, to drive connections over socketpairs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "proxy/buf.h"
#include "proxy/host.h"
#include "proxy/http.h"
#include "proxy/relay.h"
#include "proxy/resolve.h"
#include "proxy/server.h"
#include "src/loop.h"

#define HEAD_TIMEOUT_MS    10000 /* to the first byte and to a complete head */
#define IDLE_TIMEOUT_MS    60000 /* between requests on a kept-alive connection */
#define CONNECT_TIMEOUT_MS 30000 /* resolve and connect upstream */
#define DRAIN_TIMEOUT_MS   2000
#define SOCKS_MAX          (4 + 1 + 255 + 2 + 255 + 2)
#define BODY_CHUNK         PX_BUF_CHUNK /* buffered per direction before reading stops */
#define MAX_LOCAL          64

enum conn_state {
    CS_HTTP_HEAD,
    CS_SOCKS_GREETING,
    CS_SOCKS_REQUEST,
    CS_RESOLVING,
    CS_CONNECTING,
    CS_PARENT_REPLY,
    CS_HTTP_REQ_BODY,
    CS_HTTP_RESP_HEAD,
    CS_HTTP_RESP_BODY,
    CS_TUNNEL,
    CS_FLUSH_CLOSE, /* writing a final answer */
    CS_DRAIN,       /* answer written and shut: read what is left, then close */
};

struct listener {
    struct ev_io io;
    struct px_server *s;
    bool socks;
    unsigned relay_port; /* non-zero: an external proxy's endpoint */
    struct listener *next;
};

struct conn {
    struct px_server *s;
    struct conn *prev, *next;
    struct ev_io cio; /* the client, inside the sandbox */
    struct ev_io uio; /* upstream, from the host */
    struct ev_timer timer;
    struct ev_deferred gone;
    bool socks;
    bool relay; /* to an external proxy: no request of ours, no answer */
    bool closed;
    enum conn_state state;

    struct px_buf in;        /* from the client, not yet used */
    struct px_buf up;        /* from upstream, not yet used */
    struct px_buf to_client; /* pending writes */
    struct px_buf to_up;
    struct px_buf held; /* the request, while a parent proxy answers our CONNECT */

    /* The destination of the current request, and the rule table that
     * allowed it: its resolved addresses are checked against the same one,
     * whatever a control-fd update has swapped in meanwhile. */
    const struct px_rules *rules;
    char host[PX_HOST_MAX];
    unsigned port;
    bool is_ip;
    struct px_addr addr;
    bool via_parent;
    /* Behind a parent proxy: the address the guard checked, and whether
     * our CONNECT names it instead of the name (a parent on this host).
     * A flag, not the text: every idle tunnel holds these bytes. */
    struct px_addr checked;
    bool checked_valid;
    bool pin_checked;
    struct px_addr addrs[PX_RESOLVE_MAX_ADDRS];
    size_t naddrs, next_addr;
    struct px_resolve_req *req;

    /* Plain HTTP. */
    bool is_connect;
    char up_host[PX_HOST_MAX]; /* where the open upstream connection goes */
    unsigned up_port;
    bool up_idle; /* an upstream connection kept for the next request */
    bool client_keep_alive;
    bool head_request;
    enum px_http_body req_body;
    uint64_t req_left;
    struct px_chunked req_chunk;
    enum px_http_body resp_body;
    uint64_t resp_left;
    struct px_chunked resp_chunk;
    bool resp_keep_alive;
    bool up_eof;
    /* A final response head came while the request body is still going
     * up: it waits in `up` until the body has been sent. */
    bool up_final;

    struct px_half c2u, u2c;
};

struct px_server {
    struct ev_loop *loop;
    struct px_server_config cfg;
    struct px_resolver *resolver;        /* names the sandbox asked for */
    struct px_resolver *parent_resolver; /* the parent proxy's, with resolv.conf's search list */
    struct listener *listeners;
    bool paused;
    struct conn *conns;
    unsigned nconns;
    struct ev_timer retry_accept;
    struct px_pipe_pool pipes;
    /* This host's own addresses, for the guard, refreshed once a second. */
    struct px_addr local[MAX_LOCAL];
    size_t nlocal;
    uint64_t local_at;
    bool local_valid;
    /* How a connection reaches upstream (a non-blocking socket, connecting
     * or connected; -1 when it cannot) and arms its deadline:
     * px_conn_connect_tcp and ev_timer_start, which the unit tests replace
     * with socketpairs and a failing timer. */
    int (*connect_upstream)(const struct px_addr *a, unsigned port);
    int (*timer_start)(struct ev_loop *loop, struct ev_timer *t, uint64_t after_ms);
};

/* conn.c */
/* Serve a connected client socket (ownership of fd passes, even on failure):
 * relay_port non-zero relays it to an external proxy's endpoint. Returns 0,
 * or -1 when it could not be taken on (fd closed). */
int px_conn_new(struct px_server *s, int fd, bool socks, unsigned relay_port);
void px_conn_close(struct conn *c);
void px_conn_close_fd(struct px_server *s, struct ev_io *io);
void px_conn_close_upstream(struct conn *c);
/* Restart the connection's deadline; when the timer cannot start, the
 * connection is closed and -1 returned. */
int px_conn_arm(struct conn *c, uint64_t ms);
/* Advance the state machine as far as buffered data allows. */
void px_conn_step(struct conn *c);
/* Watch for what the state and the buffers call for. */
void px_conn_update(struct conn *c);

/* answer.c: each ends in CS_FLUSH_CLOSE (or closes). */
void px_conn_respond(struct conn *c, const void *data, size_t len);
void px_conn_respond_text(struct conn *c, const char *text);
void px_conn_socks_reply(struct conn *c, uint8_t rep);
void px_conn_deny(struct conn *c, const char *shown_host, const char *reason);
void px_conn_guard_deny(struct conn *c, unsigned classes);
void px_conn_upstream_failed(struct conn *c);

/* conn_http.c */
void px_conn_http_request(struct conn *c);
void px_conn_http_req_body(struct conn *c);
void px_conn_http_resp_head(struct conn *c);
void px_conn_http_resp_body(struct conn *c);

/* conn_socks.c */
void px_conn_socks_step(struct conn *c);

/* conn_upstream.c */
/* A non-blocking TCP socket connecting (or connected) to a:port, or -1. */
int px_conn_connect_tcp(const struct px_addr *a, unsigned port);
void px_conn_start_resolve(struct conn *c);
void px_conn_start_relay(struct conn *c, unsigned port);
void px_conn_try_next_addr(struct conn *c);
void px_conn_connected(struct conn *c);
void px_conn_parent_connect(struct conn *c);
void px_conn_parent_reply(struct conn *c);

/* conn_tunnel.c */
void px_conn_tunnel_start(struct conn *c);
/* After events on the client (cev) and upstream (uev) sockets. */
void px_conn_tunnel_pump(struct conn *c, uint32_t cev, uint32_t uev);
void px_conn_tunnel_events(const struct conn *c, uint32_t *client, uint32_t *upstream);
/* The connection becomes a tunnel once upstream is connected (CONNECT or
 * SOCKS straight to the destination, or a relay): its sockets are watched
 * edge-triggered from the connect on (PX_TUNNEL_EVENTS), so that the
 * tunnel's start changes no mask. */
#define PX_TUNNEL_EVENTS (EPOLLIN | EPOLLRDHUP | EPOLLET)
bool px_conn_tunnel_bound(const struct conn *c);
/* An edge-triggered event on a socket: what the tunnel's pumps must read. */
void px_conn_tunnel_note(struct conn *c, const struct ev_io *io, uint32_t revents);

/* server.c */
void px_server_resume_accept(struct px_server *s);
