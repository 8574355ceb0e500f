#include "net/loopback.h"

#include <errno.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "src/util.h"

static void sock_freep(struct nl_sock **s)
{
    if (*s)
        nl_socket_free(*s);
}

static void link_putp(struct rtnl_link **l)
{
    if (*l)
        rtnl_link_put(*l);
}

/* libnl's codes are negative NLE_* values, not errno; report its text. On
 * hosts whose user namespaces lack CAP_NET_ADMIN (Ubuntu's AppArmor
 * restriction), this is where it shows: say so. */
static int nl_fail(struct nf_err *err, const char *what, int rc)
{
    int code = rc == -NLE_PERM ? EPERM : EIO;

    nf_err_set(err, code, "bring up lo: %s: %s", what, nl_geterror(rc));
    if (rc == -NLE_PERM)
        nf_err_hint(err, "the user namespace has no CAP_NET_ADMIN; on Ubuntu 23.10+ "
                         "kernel.apparmor_restrict_unprivileged_userns=1 does this: install "
                         "nsfence's AppArmor profile or set the sysctl to 0");
    return -1;
}

int net_loopback_up(struct nf_err *err)
{
    _cleanup_(sock_freep) struct nl_sock *sk = nl_socket_alloc();
    _cleanup_(link_putp) struct rtnl_link *orig = NULL;
    _cleanup_(link_putp) struct rtnl_link *change = NULL;
    int rc;

    if (!sk)
        return nf_err_set(err, ENOMEM, "bring up lo: out of memory");
    rc = nl_connect(sk, NETLINK_ROUTE);
    if (rc < 0)
        return nl_fail(err, "netlink socket", rc);
    orig = rtnl_link_alloc();
    change = rtnl_link_alloc();
    if (!orig || !change)
        return nf_err_set(err, ENOMEM, "bring up lo: out of memory");
    /* lo is always ifindex 1 in a new namespace: one request, no lookup. */
    rtnl_link_set_ifindex(orig, 1);
    rtnl_link_set_name(orig, "lo");
    rtnl_link_set_flags(change, IFF_UP);
    rc = rtnl_link_change(sk, orig, change, 0);
    if (rc < 0)
        return nl_fail(err, "RTM_NEWLINK", rc);
    return 0;
}
