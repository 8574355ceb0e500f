/* Tries one syscall (or a few) the way an escape would, and prints the
 * result as "ok" or the errno's name:
 *   trysys NAME...
 * Names: unix unix-highbits vsock inet socketpair socketpair-dgram
 * socketpair-raw socketpair-dgram-highbits dgram-send=PATH (a datagram
 * socketpair's sendto to the unix socket at PATH) io_uring_setup io_uring_enter
 * io_uring_register unshare-user unshare-mount unshare-net mount umount-proc
 * setns pivot_root open_tree move_mount fsopen fsconfig fsmount fspick
 * mount_setattr open_tree_attr clone3 clone-newuser fork vfork thread
 * tiocsti tiocsti-highbits tioclinux ptrace-init kill-init stop-init
 * procmem-init x32 tiocsti-inject fscrypt-add-key fscrypt-remove-key
 * fscrypt-set-policy (each on the working directory) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fscrypt.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/un.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static const char *ename(int e)
{
    switch (e) {
    case EPERM:
        return "EPERM";
    case ENOSYS:
        return "ENOSYS";
    case EACCES:
        return "EACCES";
    case EINVAL:
        return "EINVAL";
    case EBADF:
        return "EBADF";
    case EFAULT:
        return "EFAULT";
    case ENOENT:
        return "ENOENT";
    case ESRCH:
        return "ESRCH";
    case EIO:
        return "EIO";
    case ENOTTY:
        return "ENOTTY";
    case EROFS:
        return "EROFS";
    case EOPNOTSUPP:
        return "EOPNOTSUPP";
    case ENOKEY:
        return "ENOKEY";
    default: {
        static char buf[32];

        snprintf(buf, sizeof(buf), "errno%d", e);
        return buf;
    }
    }
}

static void report(const char *name, long rc)
{
    if (rc < 0)
        printf("%s %s\n", name, ename(errno));
    else
        printf("%s ok\n", name);
    fflush(stdout);
}

static void *thread_fn(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *n = argv[i];
        long rc = 0;

        errno = 0;
        if (!strcmp(n, "unix"))
            rc = socket(AF_UNIX, SOCK_STREAM, 0);
        else if (!strcmp(n, "unix-highbits"))
            rc = syscall(SYS_socket, (1UL << 32) | AF_UNIX, SOCK_STREAM, 0);
        else if (!strcmp(n, "vsock"))
            rc = socket(AF_VSOCK, SOCK_STREAM, 0);
        else if (!strcmp(n, "inet"))
            rc = socket(AF_INET, SOCK_STREAM, 0);
        else if (!strcmp(n, "socketpair")) {
            int sv[2];

            rc = socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
        } else if (!strcmp(n, "socketpair-dgram")) {
            int sv[2];

            rc = socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv);
        } else if (!strcmp(n, "socketpair-raw")) {
            int sv[2];

            rc = socketpair(AF_UNIX, SOCK_RAW, 0, sv);
        } else if (!strcmp(n, "socketpair-dgram-highbits")) {
            int sv[2];

            rc = syscall(SYS_socketpair, (1UL << 32) | AF_UNIX, (1UL << 32) | SOCK_DGRAM, 0, sv);
        } else if (!strncmp(n, "dgram-send=", 11)) {
            struct sockaddr_un a = { .sun_family = AF_UNIX };
            int sv[2];

            snprintf(a.sun_path, sizeof(a.sun_path), "%s", n + 11);
            rc = socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
            if (rc == 0)
                rc = sendto(sv[0], "escaped", 7, 0, (struct sockaddr *)&a, sizeof(a));
            report("dgram-send", rc);
            continue;
        } else if (!strcmp(n, "io_uring_setup"))
            rc = syscall(425, 1, NULL);
        else if (!strcmp(n, "io_uring_enter"))
            rc = syscall(426, -1, 0, 0, 0, NULL, 0);
        else if (!strcmp(n, "io_uring_register"))
            rc = syscall(427, -1, 0, NULL, 0);
        else if (!strcmp(n, "unshare-user"))
            rc = unshare(CLONE_NEWUSER);
        else if (!strcmp(n, "unshare-mount"))
            rc = unshare(CLONE_NEWNS);
        else if (!strcmp(n, "unshare-net"))
            rc = unshare(CLONE_NEWNET);
        else if (!strcmp(n, "mount"))
            rc = mount("none", "/tmp", "tmpfs", 0, NULL);
        else if (!strcmp(n, "umount-proc"))
            rc = umount2("/proc", MNT_DETACH);
        else if (!strcmp(n, "setns"))
            rc = syscall(SYS_setns, open("/proc/self/ns/net", O_RDONLY), 0);
        else if (!strcmp(n, "pivot_root"))
            rc = syscall(SYS_pivot_root, "/tmp", "/tmp");
        else if (!strcmp(n, "open_tree"))
            rc = syscall(428, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */);
        else if (!strcmp(n, "move_mount"))
            rc = syscall(429, -1, "", -1, "", 0);
        else if (!strcmp(n, "fsopen"))
            rc = syscall(430, "tmpfs", 0);
        else if (!strcmp(n, "fsconfig"))
            rc = syscall(431, -1, 0, NULL, NULL, 0);
        else if (!strcmp(n, "fsmount"))
            rc = syscall(432, -1, 0, 0);
        else if (!strcmp(n, "fspick"))
            rc = syscall(433, AT_FDCWD, "/", 0);
        else if (!strcmp(n, "mount_setattr"))
            rc = syscall(442, -1, "", 0, NULL, 0);
        else if (!strcmp(n, "open_tree_attr"))
            rc = syscall(467, AT_FDCWD, "/", 1, NULL, 0);
        else if (!strcmp(n, "clone3")) {
            uint64_t args[11] = { 0 };

            rc = syscall(435, args, sizeof(args));
            if (rc == 0)
                _exit(0);
        } else if (!strcmp(n, "clone-newuser")) {
            rc = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
            if (rc == 0)
                _exit(0);
            if (rc > 0)
                waitpid((pid_t)rc, NULL, 0);
        } else if (!strcmp(n, "fork")) {
            pid_t p = fork();

            if (p == 0)
                _exit(7);
            rc = p;
            if (p > 0) {
                int st;

                waitpid(p, &st, 0);
                rc = WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : -1;
            }
        } else if (!strcmp(n, "vfork")) {
            pid_t p = vfork();

            if (p == 0)
                _exit(0);
            rc = p;
            if (p > 0)
                waitpid(p, NULL, 0);
        } else if (!strcmp(n, "thread")) {
            pthread_t t;

            errno = pthread_create(&t, NULL, thread_fn, NULL);
            rc = errno ? -1 : pthread_join(t, NULL);
        } else if (!strcmp(n, "tiocsti")) {
            char c = 'x';

            rc = ioctl(0, TIOCSTI, &c);
        } else if (!strcmp(n, "tiocsti-highbits")) {
            char c = 'x';

            rc = syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, &c);
        } else if (!strcmp(n, "tioclinux")) {
            char sub = 2;

            rc = ioctl(0, TIOCLINUX, &sub);
        } else if (!strcmp(n, "fscrypt-add-key")) {
            struct {
                struct fscrypt_add_key_arg arg;
                uint8_t raw[64];
            } k = { .arg = { .key_spec = { .type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER },
                             .raw_size = 64 } };
            int fd = open(".", O_RDONLY | O_DIRECTORY);

            rc = ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, &k.arg);
        } else if (!strcmp(n, "fscrypt-remove-key")) {
            struct fscrypt_remove_key_arg r = { .key_spec = {
                                                    .type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER } };
            int fd = open(".", O_RDONLY | O_DIRECTORY);

            rc = ioctl(fd, FS_IOC_REMOVE_ENCRYPTION_KEY, &r);
        } else if (!strcmp(n, "fscrypt-set-policy")) {
            struct fscrypt_policy_v2 p = { .version = FSCRYPT_POLICY_V2,
                                           .contents_encryption_mode = FSCRYPT_MODE_AES_256_XTS,
                                           .filenames_encryption_mode = FSCRYPT_MODE_AES_256_CTS };
            int fd = open(".", O_RDONLY | O_DIRECTORY);

            rc = ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, &p);
        } else if (!strcmp(n, "tiocsti-inject")) {
            /* What an attacker would push into the caller's terminal. */
            const char *s = "echo INJECTED\n";

            for (; *s; s++)
                if ((rc = ioctl(0, TIOCSTI, s)) < 0)
                    break;
        } else if (!strcmp(n, "ptrace-init"))
            rc = ptrace(PTRACE_ATTACH, 1, NULL, NULL);
        else if (!strcmp(n, "kill-init")) {
            kill(1, SIGKILL);
            usleep(100000);
            rc = kill(1, 0); /* still there? */
        } else if (!strcmp(n, "stop-init")) {
            char path[64], state = '?';
            FILE *f;

            kill(1, SIGSTOP);
            usleep(100000);
            snprintf(path, sizeof(path), "/proc/1/stat");
            f = fopen(path, "r");
            if (f) {
                if (fscanf(f, "%*d %*s %c", &state) != 1)
                    state = '?';
                fclose(f);
            }
            printf("stop-init state %c\n", state);
            continue;
        } else if (!strcmp(n, "procmem-init"))
            rc = open("/proc/1/mem", O_RDWR);
        else if (!strcmp(n, "x32")) {
            fflush(stdout);
            rc = syscall(0x40000000 | SYS_getpid);
        } else {
            fprintf(stderr, "trysys: unknown %s\n", n);
            return 2;
        }
        report(n, rc);
    }
    return 0;
}
