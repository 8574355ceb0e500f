/* The proxy benchmark's upstream: one epoll loop serving ports of ADDR.
 *   7, 7001-7004   echo: every byte comes back (round trips; idle tunnels
 *                  sit here, each batch on a port of its own)
 *   19             source: read "BYTES\n", send that many bytes; the client
 *                  closes (a proxy losing bytes after a FIN is no part of this)
 *   80             HTTP/1.1: every request head gets a small fixed 200
 * Usage: upstream ADDR. Prints "ready" once listening. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

enum kind { ECHO, SOURCE, HTTP };

/* A tunnel the proxy closes leaves a TIME_WAIT on the proxy's side for a
 * minute; tens of thousands of them towards one port would use up the
 * ephemeral ports, so each batch of tunnels goes to another echo port. */
static const struct {
    enum kind kind;
    unsigned short port;
} services[] = { { ECHO, 7 },    { ECHO, 7001 }, { ECHO, 7002 }, { ECHO, 7003 },
                 { ECHO, 7004 }, { SOURCE, 19 }, { HTTP, 80 } };

static const char response[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                               "Content-Length: 13\r\n\r\nhello, world\n";

struct conn {
    int fd;
    enum kind kind;
    bool listening;
    bool close_after; /* HTTP: the client asked for Connection: close */
    uint32_t events;
    unsigned long long left; /* SOURCE: bytes still to send */
    size_t in_len, out_len;
    char in[2048];
    char out[4096];
};

static int ep;
static char zeros[1 << 20];

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void drop(struct conn *c)
{
    close(c->fd);
    free(c);
}

/* Read interest while nothing is pending, write interest while something is. */
static void watch(struct conn *c)
{
    uint32_t ev = c->out_len || c->left ? EPOLLOUT : EPOLLIN;
    struct epoll_event e = { .events = ev, .data.ptr = c };

    if (ev != c->events && epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e) < 0)
        die("epoll_ctl");
    c->events = ev;
}

/* Append a response for each complete request head in c->in while there is
 * room. Returns true when it answered any. */
static bool answer(struct conn *c)
{
    bool any = false;
    char *end;

    while (!c->close_after && c->out_len + sizeof(response) <= sizeof(c->out) &&
           (end = memmem(c->in, c->in_len, "\r\n\r\n", 4))) {
        size_t head = (size_t)(end - c->in) + 4;

        c->in[head - 1] = '\0';
        if (strcasestr(c->in, "\nconnection: close"))
            c->close_after = true;
        memcpy(c->out + c->out_len, response, sizeof(response) - 1);
        c->out_len += sizeof(response) - 1;
        memmove(c->in, c->in + head, c->in_len - head);
        c->in_len -= head;
        any = true;
    }
    return any;
}

/* Send what is pending, answering buffered requests as room frees up.
 * Returns false when the connection is finished or broken. */
static bool flush(struct conn *c)
{
    for (;;) {
        ssize_t n;

        if (c->out_len) {
            n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL);
            if (n < 0)
                return errno == EAGAIN;
            memmove(c->out, c->out + n, c->out_len - (size_t)n);
            c->out_len -= (size_t)n;
        } else if (c->left) {
            n = send(c->fd, zeros, c->left < sizeof(zeros) ? (size_t)c->left : sizeof(zeros),
                     MSG_NOSIGNAL);
            if (n < 0)
                return errno == EAGAIN;
            c->left -= (unsigned long long)n;
        } else if (c->kind != HTTP || !answer(c)) {
            return !c->close_after;
        }
    }
}

static bool readable(struct conn *c)
{
    ssize_t n;

    if (c->kind == ECHO) {
        n = recv(c->fd, c->out, sizeof(c->out), 0);
        if (n <= 0)
            return n < 0 && errno == EAGAIN;
        c->out_len = (size_t)n;
        return flush(c);
    }
    n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - 1 - c->in_len, 0);
    if (n <= 0)
        return n < 0 && errno == EAGAIN;
    c->in_len += (size_t)n;
    if (c->kind == HTTP)
        return flush(c) &&
               (c->in_len < sizeof(c->in) - 1 || memmem(c->in, c->in_len, "\r\n\r\n", 4));
    if (!memchr(c->in, '\n', c->in_len))
        return c->in_len < sizeof(c->in) - 1;
    c->left = strtoull(c->in, NULL, 10);
    c->in_len = 0;
    return flush(c);
}

static void accept_all(struct conn *l)
{
    int one = 1, fd;

    while ((fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
        struct conn *c = calloc(1, sizeof(*c));
        struct epoll_event e = { .events = EPOLLIN };

        if (!c)
            die("calloc");
        c->fd = fd;
        c->kind = l->kind;
        c->events = EPOLLIN;
        e.data.ptr = c;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0)
            die("epoll_ctl");
    }
}

static void listen_on(const char *addr, enum kind kind, unsigned short port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
    struct conn *l = calloc(1, sizeof(*l));
    struct epoll_event e = { .events = EPOLLIN, .data.ptr = l };
    int one = 1;

    if (!l)
        die("calloc");
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        fprintf(stderr, "upstream: not an IPv4 address: %s\n", addr);
        exit(2);
    }
    l->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    l->kind = kind;
    l->listening = true;
    if (l->fd < 0 || setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l->fd, 4096) < 0)
        die("listen");
    if (epoll_ctl(ep, EPOLL_CTL_ADD, l->fd, &e) < 0)
        die("epoll_ctl");
}

int main(int argc, char **argv)
{
    struct rlimit r;
    struct epoll_event evs[256];

    if (argc != 2) {
        fprintf(stderr, "usage: upstream ADDR\n");
        return 2;
    }
    /* One descriptor per idle tunnel, ten thousand of them. */
    if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
        r.rlim_cur = r.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &r);
    }
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        die("epoll_create1");
    for (size_t i = 0; i < sizeof(services) / sizeof(services[0]); i++)
        listen_on(argv[1], services[i].kind, services[i].port);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);

        if (n < 0 && errno != EINTR)
            die("epoll_wait");
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;

            if (c->listening)
                accept_all(c);
            else if (!(evs[i].events & EPOLLOUT ? flush(c) : readable(c)))
                drop(c);
            else
                watch(c);
        }
    }
}
