/* The proxy benchmark's client: straight to the upstream, or through an HTTP
 * proxy's CONNECT tunnel with -x PROXY_IPV4:PORT.
 *   client [-x PROXY] bulk HOST PORT BYTES ROUNDS
 *       read BYTES from the source, ROUNDS times: prints the median Gbit/s
 *   client [-x PROXY] latency HOST PORT N
 *       N sequential new connections, each with one echo round trip: prints
 *       the median µs from connect() to the echoed byte
 *   client [-x PROXY] hold|hold-used HOST PORT N
 *       prints "ready", waits for a line on stdin, opens up to N idle
 *       tunnels (stopping at the first failure), prints "held K", and keeps
 *       them until stdin ends; hold-used makes one echo round trip on each
 *       first, as a tunnel that has carried a TLS handshake has */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_storage peer; /* the proxy, or the upstream itself */
static socklen_t peer_len;
static bool via_proxy;
static const char *host, *port;

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
    fprintf(stderr, "client: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Resolve once, so per-connection times hold no name lookup of ours. */
static void resolve(const char *h, const char *p)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;
    int rc = getaddrinfo(h, p, &hints, &ai);

    if (rc != 0) {
        fprintf(stderr, "client: %s: %s\n", h, gai_strerror(rc));
        exit(1);
    }
    memcpy(&peer, ai->ai_addr, ai->ai_addrlen);
    peer_len = ai->ai_addrlen;
    freeaddrinfo(ai);
}

static bool send_all(int fd, const void *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

        if (w <= 0)
            return false;
        p = (const char *)p + w;
        n -= (size_t)w;
    }
    return true;
}

/* A connected socket to HOST:PORT, through the proxy's tunnel if there is
 * one, or -1 with the reason on stderr. Blocking, with a timeout, so that a
 * proxy out of descriptors shows up as a failure rather than a hang. */
static int open_conn(void)
{
    struct timeval tv = { .tv_sec = 5 };
    char req[600], head[1024];
    size_t got = 0;
    int one = 1;
    int fd = socket(peer.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        perror("client: socket");
        return -1;
    }
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&peer, peer_len) < 0) {
        perror("client: connect");
        goto fail;
    }
    if (!via_proxy)
        return fd;
    snprintf(req, sizeof(req), "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host, port, host,
             port);
    if (!send_all(fd, req, strlen(req))) {
        perror("client: send CONNECT");
        goto fail;
    }
    /* The proxy says nothing after its head until we speak. */
    while (!memmem(head, got, "\r\n\r\n", 4)) {
        ssize_t n = recv(fd, head + got, sizeof(head) - 1 - got, 0);

        if (n <= 0 || got + (size_t)n >= sizeof(head) - 1) {
            fprintf(stderr, "client: no answer to CONNECT: %s\n",
                    n < 0 ? strerror(errno) : "closed");
            goto fail;
        }
        got += (size_t)n;
    }
    head[got] = '\0';
    if (strncmp(head, "HTTP/1.1 200", 12) != 0 && strncmp(head, "HTTP/1.0 200", 12) != 0) {
        fprintf(stderr, "client: CONNECT refused: %.*s\n", (int)strcspn(head, "\r"), head);
        goto fail;
    }
    return fd;
fail:
    close(fd);
    return -1;
}

static bool echo_once(int fd)
{
    char b = 'x';

    return send_all(fd, &b, 1) && recv(fd, &b, 1, MSG_WAITALL) == 1;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int bulk(unsigned long long bytes, int rounds)
{
    static char buf[1 << 20];
    double *gbps = calloc((size_t)rounds, sizeof(*gbps));
    char req[32];

    for (int r = 0; r < rounds; r++) {
        unsigned long long left = bytes;
        int fd = open_conn();
        double t0;

        if (fd < 0)
            return 1;
        snprintf(req, sizeof(req), "%llu\n", bytes);
        t0 = now_us();
        if (!send_all(fd, req, strlen(req)))
            die("send");
        while (left) {
            ssize_t n = recv(fd, buf, left < sizeof(buf) ? (size_t)left : sizeof(buf), 0);

            if (n <= 0) {
                fprintf(stderr, "client: source ended %llu bytes early\n", left);
                return 1;
            }
            left -= (unsigned long long)n;
        }
        gbps[r] = (double)bytes * 8 / ((now_us() - t0) * 1e3);
        close(fd);
    }
    printf("%.2f\n", median(gbps, rounds));
    return 0;
}

static int latency(int n)
{
    double *us = calloc((size_t)n, sizeof(*us));

    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        int fd = open_conn();

        if (fd < 0 || !echo_once(fd)) {
            fprintf(stderr, "client: connection %d failed\n", i);
            return 1;
        }
        us[i] = now_us() - t0;
        close(fd);
    }
    printf("%.1f\n", median(us, n));
    return 0;
}

static int hold(int n, bool used)
{
    char line[64];
    int held = 0;

    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin))
        return 1;
    for (; held < n; held++) {
        int fd = open_conn();

        if (fd < 0)
            break;
        if (used && !echo_once(fd)) {
            fprintf(stderr, "client: tunnel %d does not echo\n", held);
            close(fd);
            break;
        }
    }
    printf("held %d\n", held);
    fflush(stdout);
    while (fgets(line, sizeof(line), stdin))
        ;
    return 0;
}

int main(int argc, char **argv)
{
    struct rlimit r;
    int a = 1;

    if (argc > 2 && strcmp(argv[1], "-x") == 0) {
        char *colon = strrchr(argv[2], ':');

        if (!colon) {
            fprintf(stderr, "client: -x wants IPV4:PORT\n");
            return 2;
        }
        *colon = '\0';
        resolve(argv[2], colon + 1);
        via_proxy = true;
        a = 3;
    }
    if (argc - a < 4 || argc - a != (strcmp(argv[a], "bulk") == 0 ? 5 : 4)) {
        fprintf(stderr,
                "usage: client [-x PROXY] bulk|latency|hold|hold-used HOST PORT N [ROUNDS]\n");
        return 2;
    }
    host = argv[a + 1];
    port = argv[a + 2];
    if (!via_proxy)
        resolve(host, port);
    /* One descriptor per held tunnel. */
    if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
        r.rlim_cur = r.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &r);
    }
    if (strcmp(argv[a], "bulk") == 0)
        return bulk(strtoull(argv[a + 3], NULL, 10), atoi(argv[a + 4]));
    if (strcmp(argv[a], "latency") == 0)
        return latency(atoi(argv[a + 3]));
    if (strcmp(argv[a], "hold") == 0 || strcmp(argv[a], "hold-used") == 0)
        return hold(atoi(argv[a + 3]), strcmp(argv[a], "hold-used") == 0);
    fprintf(stderr, "client: unknown mode %s\n", argv[a]);
    return 2;
}
