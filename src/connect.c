#include "src/connect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/util.h"

/* The proxy from HTTPS_PROXY / HTTP_PROXY (http://localhost:PORT, as nsfence
 * sets them), else localhost:3128. Only loopback makes sense here: no name
 * lookup, so the static binary needs no NSS. */
static int proxy_addr(struct sockaddr_in *sa, struct nf_err *err)
{
    const char *v = getenv("HTTPS_PROXY");
    const char *hp;
    char host[64] = "localhost";
    unsigned long port = 3128;

    if (!v || !*v)
        v = getenv("HTTP_PROXY");
    if (v && *v) {
        const char *colon;
        char *end;

        hp = strstr(v, "://") ? strstr(v, "://") + 3 : v;
        colon = strrchr(hp, ':');
        if (!colon || (size_t)(colon - hp) >= sizeof(host))
            return nf_err_set(err, EINVAL, "connect: cannot use proxy %s", v);
        memcpy(host, hp, (size_t)(colon - hp));
        host[colon - hp] = '\0';
        port = strtoul(colon + 1, &end, 10);
        if ((*end && *end != '/') || port == 0 || port > 65535)
            return nf_err_set(err, EINVAL, "connect: cannot use proxy %s", v);
    }
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    if (strcmp(host, "localhost") == 0)
        sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return nf_err_set(err, EINVAL, "connect: proxy host %s is not localhost or an IPv4 address",
                          host);
    return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = RETRY_EINTR(write(fd, p, n));

        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int connect_main(const char *host, const char *port, struct nf_err *err)
{
    struct sockaddr_in sa;
    char req[1024], head[8192];
    size_t got = 0;
    char *end = NULL;
    _cleanup_close_ int s = -1;
    bool in_open = true, out_open = true;

    const char *inside = getenv("SANDBOX_RUNTIME");

    /* Run by hand on the host there is no proxy to tunnel through: say so,
     * rather than "Connection refused". */
    if (!inside || strcmp(inside, "1") != 0)
        return nf_err_set(err, EINVAL,
                          "connect only works inside an nsfence sandbox: it tunnels through the "
                          "sandbox's HTTP proxy (git over ssh uses it through GIT_SSH_COMMAND)");
    if (proxy_addr(&sa, err) < 0)
        return -1;
    s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        return nf_err_sys(err, "connect: proxy");
    if (strchr(host, ':'))
        snprintf(req, sizeof(req), "CONNECT [%s]:%s HTTP/1.1\r\nHost: [%s]:%s\r\n\r\n", host, port,
                 host, port);
    else
        snprintf(req, sizeof(req), "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host, port,
                 host, port);
    if (write_all(s, req, strlen(req)) < 0)
        return nf_err_sys(err, "connect: send");
    /* Read the reply head byte by byte: what follows it is the tunnel's. */
    while (!end) {
        ssize_t n;

        if (got + 1 >= sizeof(head))
            return nf_err_set(err, EPROTO, "connect: the proxy's reply is too long");
        n = RETRY_EINTR(read(s, head + got, 1));
        if (n <= 0)
            return nf_err_set(err, EPROTO, "connect: the proxy closed the connection");
        got += (size_t)n;
        head[got] = '\0';
        end = strstr(head, "\r\n\r\n");
    }
    if (strncmp(head, "HTTP/1.1 200", 12) != 0 && strncmp(head, "HTTP/1.0 200", 12) != 0) {
        *strchrnul(head, '\r') = '\0';
        return nf_err_set(err, EACCES, "connect %s:%s: %s", host, port, head);
    }
    while (in_open || out_open) {
        struct pollfd p[2] = { { .fd = in_open ? STDIN_FILENO : -1, .events = POLLIN },
                               { .fd = out_open ? s : -1, .events = POLLIN } };
        char buf[65536];

        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return nf_err_sys(err, "connect: poll");
        }
        if (p[0].revents) {
            ssize_t n = RETRY_EINTR(read(STDIN_FILENO, buf, sizeof(buf)));

            if (n <= 0) {
                in_open = false;
                (void)shutdown(s, SHUT_WR);
            } else if (write_all(s, buf, (size_t)n) < 0) {
                return nf_err_sys(err, "connect: send");
            }
        }
        if (p[1].revents) {
            ssize_t n = RETRY_EINTR(read(s, buf, sizeof(buf)));

            if (n <= 0)
                out_open = false;
            else if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
                return nf_err_sys(err, "connect: write");
        }
    }
    return 0;
}
