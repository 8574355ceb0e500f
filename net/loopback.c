#include "net/loopback.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/util.h"

static void sock_freep(struct nl_sock **s)
{
    if (*s)
        nl_socket_free(*s);
}

static void msg_freep(struct nl_msg **m)
{
    if (*m)
        nlmsg_free(*m);
}

/* libnl's codes are negative NLE_* values, not errno; report its text. On
 * hosts whose user namespaces lack CAP_NET_ADMIN (Ubuntu's AppArmor
 * restriction), this is where it shows: say so. */
static int nl_fail(struct nf_err *err, const char *what, int rc)
{
    int code = rc == -NLE_PERM ? EPERM : rc == -NLE_NOMEM ? ENOMEM : EIO;

    nf_err_set(err, code, "bring up lo: %s: %s", what, nl_geterror(rc));
    if (rc == -NLE_PERM)
        nf_err_hint(err, "the user namespace has no CAP_NET_ADMIN; on Ubuntu 23.10+ "
                         "kernel.apparmor_restrict_unprivileged_userns=1 does this: install "
                         "nsfence's AppArmor profile or set the sysctl to 0");
    return -1;
}

int net_loopback_socket(struct nf_err *err)
{
    struct sockaddr_nl self = { .nl_family = AF_NETLINK };
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

    /* Bound here, inside: libnl takes its port from the socket's name. */
    if (fd < 0 || bind(fd, (struct sockaddr *)&self, sizeof(self)) < 0) {
        nf_err_sys(err, "bring up lo: netlink socket");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* One bare RTM_NEWLINK through libnl-3's message API: the same 32 bytes
 * rtnl_link_change sent, without two link objects to build them, and without
 * libnl-route-3, whose constructors register cache ops at the start of every
 * nsfence process, sandboxed or not. Sent by the host side, whose pages are
 * its own: in init, a clone, every page libnl's allocations touch is a
 * copy-on-write fault. */
int net_loopback_up(int fd, struct nf_err *err)
{
    _cleanup_(sock_freep) struct nl_sock *sk = nl_socket_alloc();
    _cleanup_(msg_freep) struct nl_msg *msg = NULL;
    /* lo is always ifindex 1 in a new namespace: one request, no lookup.
     * IFF_UP in ifi_change too, or the kernel leaves every flag alone. */
    struct ifinfomsg ifi = {
        .ifi_family = AF_UNSPEC,
        .ifi_index = 1,
        .ifi_flags = IFF_UP,
        .ifi_change = IFF_UP,
    };
    int rc;

    if (!sk) {
        close(fd);
        return nf_err_set(err, ENOMEM, "bring up lo: out of memory");
    }
    /* From here the socket is libnl's, closed with it. */
    rc = nl_socket_set_fd(sk, NETLINK_ROUTE, fd);
    if (rc < 0) {
        close(fd);
        return nl_fail(err, "netlink socket", rc);
    }
    /* The only answer is one NLMSG_ERROR of a few dozen bytes (at most our
     * 32-byte request echoed; the socket asks for no extended ACK): 1 KiB
     * holds it, so skip the MSG_PEEK|MSG_TRUNC recvmsg libnl would spend
     * sizing the read. The request gets the 32 bytes it needs: libnl's
     * defaults (16 KiB to receive, a page to send) each took a heap page
     * touched for the first time. */
    nl_socket_disable_msg_peek(sk);
    rc = nl_socket_set_msg_buf_size(sk, 1024);
    if (rc < 0)
        return nl_fail(err, "netlink socket", rc);
    msg = nlmsg_alloc_size(NLMSG_SPACE(sizeof(ifi)));
    if (!msg)
        return nf_err_set(err, ENOMEM, "bring up lo: out of memory");
    if (!nlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, RTM_NEWLINK, 0, NLM_F_REQUEST | NLM_F_ACK))
        return nf_err_set(err, ENOMEM, "bring up lo: out of memory");
    rc = nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO);
    if (rc < 0)
        return nl_fail(err, "RTM_NEWLINK", rc);
    rc = nl_send_auto(sk, msg);
    if (rc < 0)
        return nl_fail(err, "RTM_NEWLINK", rc);
    /* The kernel's NLMSG_ERROR answer: 0 is the ACK; an errno comes back
     * from libnl as its NLE_* code (EPERM -> NLE_PERM). */
    rc = nl_wait_for_ack(sk);
    if (rc < 0)
        return nl_fail(err, "RTM_NEWLINK", rc);
    return 0;
}
