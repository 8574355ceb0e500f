/* Runs a program under a seccomp filter that refuses new user namespaces as
 * Docker's default profile does (clone and unshare with CLONE_NEWUSER: EPERM;
 * clone3: ENOSYS), to show nsfence explains the refusal and runs nothing:
 *   noclone PROGRAM ARGS... */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    struct scmp_arg_cmp newuser = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);

    if (argc < 2 || !ctx)
        return 2;
    if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, newuser) < 0 ||
        seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1, newuser) < 0 ||
        seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) < 0 ||
        seccomp_load(ctx) < 0) {
        perror("noclone: seccomp");
        return 2;
    }
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
