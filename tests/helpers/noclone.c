/* Runs a program under a seccomp filter that refuses new user namespaces as
 * Docker's default profile does (clone and unshare with CLONE_NEWUSER: EPERM;
 * clone3: ENOSYS), to show nsfence explains the refusal and runs nothing:
 *   noclone PROGRAM ARGS...
 * With --mounts, the user namespace is let through and every way to mount
 * in it is refused instead (EPERM), as Ubuntu's AppArmor restriction leaves
 * a new user namespace: made, then without the right to mount. */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int refuse_mounts(scmp_filter_ctx ctx)
{
    static const char *const calls[] = { "mount",     "fsopen",        "fsmount",   "move_mount",
                                         "open_tree", "mount_setattr", "pivot_root" };

    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        int nr = seccomp_syscall_resolve_name(calls[i]);

        if (nr != __NR_SCMP_ERROR && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) < 0)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    struct scmp_arg_cmp newuser = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
    int mounts = argc > 1 && strcmp(argv[1], "--mounts") == 0;

    argv += mounts;
    argc -= mounts;
    if (argc < 2 || !ctx)
        return 2;
    if (mounts
            ? refuse_mounts(ctx) < 0
            : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, newuser) < 0 ||
                  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1, newuser) < 0 ||
                  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) < 0) {
        perror("noclone: seccomp");
        return 2;
    }
    if (seccomp_load(ctx) < 0) {
        perror("noclone: seccomp");
        return 2;
    }
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
