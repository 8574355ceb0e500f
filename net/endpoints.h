/* The proxy endpoints: TCP listeners inside the sandbox's network namespace,
 * created by init before the command exists (so the command's first connect
 * never races them) and handed to the host side, which serves them. */
#pragma once

#include <stddef.h>

#include "src/err.h"

enum net_endpoint_proto {
    NET_EP_HTTP,
    NET_EP_SOCKS,
};

#define NET_MAX_ENDPOINTS 4

struct net_endpoints {
    int fd[NET_MAX_ENDPOINTS];
    enum net_endpoint_proto proto[NET_MAX_ENDPOINTS];
    size_t n;
};

/* Listen on 127.0.0.1 and, where the kernel has IPv6, ::1, at each port.
 * Runs inside the network namespace, after lo is up. */
int net_endpoints_open(unsigned http_port, unsigned socks_port, struct net_endpoints *out,
                       struct nf_err *err);
void net_endpoints_close(struct net_endpoints *e);
