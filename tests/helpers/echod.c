/* A TCP echo server on epoll, for tests that hold many tunnels open at once:
 *   echod ADDR PORT     (runs until killed; prints "ready" when listening) */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *ai;
    struct rlimit rl;
    int l, ep, one = 1;

    if (argc != 3) {
        fprintf(stderr, "usage: echod ADDR PORT\n");
        return 2;
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getaddrinfo(argv[1], argv[2], &hints, &ai) != 0)
        return 1;
    l = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (l < 0 || bind(l, ai->ai_addr, ai->ai_addrlen) < 0 || listen(l, 4096) < 0) {
        perror("echod");
        return 1;
    }
    ep = epoll_create1(0);
    {
        struct epoll_event ev = { .events = EPOLLIN, .data.fd = l };

        epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
    }
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        struct epoll_event evs[256];
        int n = epoll_wait(ep, evs, 256, -1);

        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;

            if (fd == l) {
                int c;

                while ((c = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    struct epoll_event ev = { .events = EPOLLIN, .data.fd = c };

                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
                }
                continue;
            }
            {
                char buf[16384];
                ssize_t r = recv(fd, buf, sizeof(buf), 0);

                if (r <= 0) {
                    if (r < 0 && errno == EAGAIN)
                        continue;
                    close(fd);
                    continue;
                }
                if (send(fd, buf, (size_t)r, MSG_NOSIGNAL) < 0)
                    close(fd);
            }
        }
    }
}
