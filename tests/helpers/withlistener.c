/* Runs a program under a seccomp USER_NOTIF listener of its own (on a
 * syscall nothing calls), as another sandbox's observer would be: a process
 * tree may have only one listener, so nsfence's observer cannot be
 * installed under it (EBUSY).
 *   withlistener PROGRAM ARGS... */
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

    if (argc < 2 || !ctx)
        return 2;
    if (seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(kexec_load), 0) < 0 ||
        seccomp_load(ctx) < 0) {
        perror("withlistener: seccomp");
        return 2;
    }
    /* Kept open across exec: a listener lives as long as its fd does. */
    if (fcntl(seccomp_notify_fd(ctx), F_SETFD, 0) < 0) {
        perror("withlistener: fcntl");
        return 2;
    }
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
