#include "net/endpoints.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/util.h"

#define BACKLOG 4096

static int listen_on(int family, unsigned port, int *out, struct nf_err *err)
{
    union {
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } a;
    socklen_t len;
    int one = 1;
    _cleanup_close_ int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    *out = -1;
    memset(&a, 0, sizeof(a));
    if (fd < 0) {
        if (family == AF_INET6 && (errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT))
            return 0; /* no IPv6 in this kernel */
        return nf_err_sys(err, "proxy endpoint: socket");
    }
    if (family == AF_INET) {
        a.v4.sin_family = AF_INET;
        a.v4.sin_port = htons((uint16_t)port);
        a.v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof(a.v4);
    } else {
        a.v6.sin6_family = AF_INET6;
        a.v6.sin6_port = htons((uint16_t)port);
        a.v6.sin6_addr = in6addr_loopback;
        len = sizeof(a.v6);
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
            return nf_err_sys(err, "proxy endpoint: IPV6_V6ONLY");
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
        return nf_err_sys(err, "proxy endpoint: SO_REUSEADDR");
    if (bind(fd, (struct sockaddr *)&a, len) < 0) {
        if (family == AF_INET6 && (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT))
            return 0; /* IPv6 disabled: no ::1 on lo */
        return nf_err_sys(err, "proxy endpoint: bind %s port %u",
                          family == AF_INET ? "127.0.0.1" : "::1", port);
    }
    if (listen(fd, BACKLOG) < 0)
        return nf_err_sys(err, "proxy endpoint: listen");
    *out = steal_fd(&fd);
    return 0;
}

int net_endpoints_open(unsigned http_port, unsigned socks_port, struct net_endpoints *e,
                       struct nf_err *err)
{
    const struct {
        int family;
        unsigned port;
        enum net_endpoint_proto proto;
    } want[] = {
        { AF_INET, http_port, NET_EP_HTTP },
        { AF_INET6, http_port, NET_EP_HTTP },
        { AF_INET, socks_port, NET_EP_SOCKS },
        { AF_INET6, socks_port, NET_EP_SOCKS },
    };

    e->n = 0;
    for (size_t i = 0; i < NF_ARRAY_SIZE(want); i++) {
        int fd;

        if (listen_on(want[i].family, want[i].port, &fd, err) < 0) {
            net_endpoints_close(e);
            return -1;
        }
        if (fd < 0)
            continue;
        e->fd[e->n] = fd;
        e->proto[e->n] = want[i].proto;
        e->n++;
    }
    return 0;
}

void net_endpoints_close(struct net_endpoints *e)
{
    for (size_t i = 0; i < e->n; i++)
        close(e->fd[i]);
    e->n = 0;
}
