/* Opens N tunnels through the HTTP proxy at once, all held open together,
 * and checks each one echoes a token of its own:
 *   tunnels PROXYPORT TARGET N    (TARGET = host:port of an echo server)
 * Prints "ok N" or what went wrong. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static int read_until(int s, char *buf, size_t cap, const char *end)
{
    size_t got = 0;

    while (got + 1 < cap) {
        ssize_t r = recv(s, buf + got, 1, 0);

        if (r <= 0)
            return -1;
        got++;
        buf[got] = '\0';
        if (strstr(buf, end))
            return 0;
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    struct rlimit rl;
    int n, *fds;

    if (argc != 4)
        return fprintf(stderr, "usage: tunnels PROXYPORT TARGET N\n"), 2;
    n = atoi(argv[3]);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    fds = calloc((size_t)n, sizeof(*fds));
    sa.sin_port = htons((uint16_t)atoi(argv[1]));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* Connect and send every CONNECT first, so all are pending together. */
    for (int i = 0; i < n; i++) {
        char req[512];

        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            printf("connect %d: %s\n", i, strerror(errno));
            return 1;
        }
        snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", argv[2], argv[2]);
        send(fds[i], req, strlen(req), 0);
    }
    for (int i = 0; i < n; i++) {
        char head[1024];

        if (read_until(fds[i], head, sizeof(head), "\r\n\r\n") < 0 ||
            strncmp(head, "HTTP/1.1 200", 12) != 0) {
            printf("tunnel %d: no 200: %.40s\n", i, head);
            return 1;
        }
    }
    for (int i = 0; i < n; i++) {
        char tok[32];

        snprintf(tok, sizeof(tok), "token-%06d\n", i);
        send(fds[i], tok, strlen(tok), 0);
    }
    for (int i = n - 1; i >= 0; i--) {
        char want[32], got[64];

        snprintf(want, sizeof(want), "token-%06d\n", i);
        if (read_until(fds[i], got, sizeof(got), "\n") < 0 || strcmp(got, want) != 0) {
            printf("tunnel %d: bad echo\n", i);
            return 1;
        }
    }
    printf("ok %d\n", n);
    return 0;
}
