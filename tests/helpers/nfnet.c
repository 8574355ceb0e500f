/* Network probe for the tests: reports what the sandbox's network lets a
 * process do, as one word per line, errno names on failure.
 *   nfnet connect HOST PORT     TCP connect (numeric host)
 *   nfnet loopback ADDR         listen on ADDR:0, connect to it, pass a byte
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int addr_of(const char *host, const char *port, struct sockaddr_storage *ss, socklen_t *len)
{
    struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *ai;

    if (getaddrinfo(host, port, &hints, &ai) != 0)
        return -1;
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

static int fail(const char *what)
{
    printf("%s: %s\n", what, strerror(errno));
    return 1;
}

int main(int argc, char **argv)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int s;

    if (argc == 4 && strcmp(argv[1], "connect") == 0) {
        if (addr_of(argv[2], argv[3], &ss, &len) < 0)
            return printf("bad address\n"), 2;
        s = socket(ss.ss_family, SOCK_STREAM, 0);
        if (s < 0)
            return fail("socket");
        if (connect(s, (struct sockaddr *)&ss, len) < 0)
            return fail("connect");
        printf("connected\n");
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "loopback") == 0) {
        int l, c, a;
        char b = 'x', r = 0;

        if (addr_of(argv[2], "0", &ss, &len) < 0)
            return printf("bad address\n"), 2;
        l = socket(ss.ss_family, SOCK_STREAM, 0);
        if (l < 0)
            return fail("socket");
        if (bind(l, (struct sockaddr *)&ss, len) < 0)
            return fail("bind");
        if (listen(l, 1) < 0)
            return fail("listen");
        len = sizeof(ss);
        if (getsockname(l, (struct sockaddr *)&ss, &len) < 0)
            return fail("getsockname");
        c = socket(ss.ss_family, SOCK_STREAM, 0);
        if (c < 0 || connect(c, (struct sockaddr *)&ss, len) < 0)
            return fail("connect");
        a = accept(l, NULL, NULL);
        if (a < 0 || write(c, &b, 1) != 1 || read(a, &r, 1) != 1 || r != 'x')
            return fail("exchange");
        printf("ok\n");
        return 0;
    }
    fprintf(stderr, "usage: nfnet connect HOST PORT | nfnet loopback ADDR\n");
    return 2;
}
