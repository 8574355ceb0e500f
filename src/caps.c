#include "src/caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int caps_drop_all(struct nf_err *err)
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct data[2] = { { 0 } };

    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break; /* past CAP_LAST_CAP */
            return nf_err_sys(err, "drop capability %d from the bounding set", cap);
        }
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return nf_err_sys(err, "clear ambient capabilities");
    if (syscall(SYS_capset, &hdr, data) < 0)
        return nf_err_sys(err, "capset");
    return 0;
}

int caps_have(int cap)
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct data[2] = { { 0 } };

    if (syscall(SYS_capget, &hdr, data) < 0)
        return -1;
    return (data[cap / 32].effective >> (cap % 32)) & 1;
}
