/* The proxy benchmark's floor: the least an HTTP CONNECT proxy can do.
 *   relay LISTEN_PORT UPSTREAM_IPV4 [PIPE_BYTES]
 * Listens on 127.0.0.1:LISTEN_PORT (0: any free port), prints the port it
 * listens on, and serves one
 * connection at a time: reads the request head up to its blank line, takes
 * the port after the last ':' of its first line, connects to UPSTREAM_IPV4 at
 * that port (no name lookup, no policy, no limits), answers 200, then moves
 * bytes both ways by splice through a pipe of PIPE_BYTES (default 1 MiB) each
 * way until both sides have ended. What it costs is what the kernel charges
 * any relay: the second TCP connection, the wake-ups and the splice pairs.
 * nsfence's proxy is measured beside it, on the same client and upstream. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int pipe_bytes = 1 << 20;

static void die(const char *what)
{
    fprintf(stderr, "relay: %s: %s\n", what, strerror(errno));
    exit(1);
}

struct half {
    int src, dst, pipe[2];
    size_t held;
    bool eof;
};

/* Moves what src has into dst; false once src has ended and all is sent. */
static bool pump(struct half *h)
{
    if (!h->eof) {
        ssize_t n = splice(h->src, NULL, h->pipe[1], NULL, (size_t)pipe_bytes,
                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

        if (n == 0) {
            h->eof = true;
        } else if (n > 0) {
            h->held += (size_t)n;
        } else if (errno != EAGAIN) {
            return false;
        }
    }
    while (h->held) {
        ssize_t n = splice(h->pipe[0], NULL, h->dst, NULL, h->held, SPLICE_F_MOVE);

        if (n <= 0)
            return false;
        h->held -= (size_t)n;
    }
    if (h->eof)
        shutdown(h->dst, SHUT_WR);
    return !h->eof;
}

static void serve(int c, struct sockaddr_in up)
{
    char head[2048], *colon, *eol;
    size_t got = 0;
    struct half h[2] = { { .src = c }, { .dst = c } };
    int one = 1, u;

    while (!memmem(head, got, "\r\n\r\n", 4)) {
        ssize_t n = recv(c, head + got, sizeof(head) - 1 - got, 0);

        if (n <= 0 || got + (size_t)n >= sizeof(head) - 1)
            return;
        got += (size_t)n;
    }
    head[got] = '\0';
    eol = strstr(head, " HTTP/");
    if (!eol)
        return;
    *eol = '\0';
    colon = strrchr(head, ':');
    if (!colon)
        return;
    up.sin_port = htons((uint16_t)atoi(colon + 1));
    u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (u < 0)
        die("socket");
    (void)setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(u, (struct sockaddr *)&up, sizeof(up)) < 0) {
        close(u);
        return;
    }
    static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (send(c, ok, sizeof(ok) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(ok) - 1)
        goto out;
    h[0].dst = u;
    h[1].src = u;
    for (int i = 0; i < 2; i++) {
        if (pipe2(h[i].pipe, O_CLOEXEC) < 0)
            die("pipe2");
        (void)fcntl(h[i].pipe[1], F_SETPIPE_SZ, pipe_bytes);
    }
    for (bool open0 = true, open1 = true; open0 || open1;) {
        struct pollfd p[2] = { { .fd = open0 ? c : -1, .events = POLLIN },
                               { .fd = open1 ? u : -1, .events = POLLIN } };

        if (poll(p, 2, -1) < 0 && errno != EINTR)
            die("poll");
        if (p[0].revents && !pump(&h[0]))
            open0 = false;
        if (p[1].revents && !pump(&h[1]))
            open1 = false;
    }
    for (int i = 0; i < 2; i++) {
        close(h[i].pipe[0]);
        close(h[i].pipe[1]);
    }
out:
    close(u);
}

int main(int argc, char **argv)
{
    struct sockaddr_in at = { .sin_family = AF_INET }, up = { .sin_family = AF_INET };
    socklen_t at_len = sizeof(at);
    int one = 1, l;

    if (argc < 3 || argc > 4 || inet_pton(AF_INET, argv[2], &up.sin_addr) != 1) {
        fprintf(stderr, "usage: relay LISTEN_PORT UPSTREAM_IPV4 [PIPE_BYTES]\n");
        return 2;
    }
    if (argc == 4)
        pipe_bytes = atoi(argv[3]);
    at.sin_port = htons((uint16_t)atoi(argv[1]));
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0)
        die("socket");
    (void)setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(l, (struct sockaddr *)&at, sizeof(at)) < 0 || listen(l, 128) < 0)
        die("listen");
    if (getsockname(l, (struct sockaddr *)&at, &at_len) < 0)
        die("getsockname");
    printf("%d\n", ntohs(at.sin_port));
    fflush(stdout);
    for (;;) {
        int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);

        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            die("accept");
        }
        (void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        serve(c, up);
        close(c);
    }
}
