/* The sandbox's network namespace starts with only `lo`, down. */
#pragma once

#include "src/err.h"

/* A bound NETLINK_ROUTE socket in the calling process's network namespace
 * (made by init, inside), close-on-exec. Returns it, or -1. */
int net_loopback_socket(struct nf_err *err);

/* Bring `lo` up through rtnetlink (one RTM_NEWLINK, libnl-3) on fd, a
 * socket from net_loopback_socket: the namespace is the socket's, so the
 * host side can send it from outside. The kernel asks CAP_NET_ADMIN in
 * that namespace of both the sender (the host side: the user namespace's
 * owner, or in it) and the socket's opener (init): where the namespace's
 * capabilities are withheld (Ubuntu's AppArmor restriction) the answer is
 * EPERM, as it was for init. The kernel then gives lo 127.0.0.1/8 and ::1.
 * Takes fd and closes it, whatever happens. */
int net_loopback_up(int fd, struct nf_err *err);
