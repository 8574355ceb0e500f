#include "src/caps.h"

#include <errno.h>
#include <stdint.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int caps_set(uint64_t keep, struct nf_err *err)
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct data[2] = { { 0 } };
    int last = -1;

    for (int cap = 0; cap <= 63; cap++) {
        if (keep >> cap & 1) {
            if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0)
                break; /* past CAP_LAST_CAP */
            last = cap;
            continue;
        }
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break;
            return nf_err_sys(err, "drop capability %d from the bounding set", cap);
        }
        last = cap;
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return nf_err_sys(err, "clear ambient capabilities");
    for (int i = 0; i < 2; i++) {
        uint32_t bits = (uint32_t)(keep >> (32 * i));

        data[i].effective = data[i].permitted = data[i].inheritable = bits;
    }
    if (syscall(SYS_capset, &hdr, data) < 0)
        return nf_err_sys(err, "capset");
    /* Kept across execve for a command that is not uid 0 inside. */
    for (int cap = 0; cap <= last; cap++)
        if (keep >> cap & 1 && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0 &&
            errno != EINVAL && errno != EPERM)
            return nf_err_sys(err, "raise ambient capability %d", cap);
    return 0;
}

int caps_clear(struct nf_err *err)
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct data[2] = { { 0 } };

    for (int cap = 0; cap <= 63; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break;
            if (errno != EPERM)
                return nf_err_sys(err, "drop capability %d from the bounding set", cap);
        }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return nf_err_sys(err, "clear ambient capabilities");
    if (syscall(SYS_capset, &hdr, data) < 0)
        return nf_err_sys(err, "capset");
    return 0;
}

int caps_raise_ambient(uint64_t caps, struct nf_err *err)
{
    for (int cap = 0; cap <= 63; cap++)
        if (caps >> cap & 1 && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0 &&
            errno != EINVAL && errno != EPERM)
            return nf_err_sys(err, "Adding ambient capability %d", cap);
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
