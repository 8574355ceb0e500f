/* A raw TCP client for byte-exact protocol tests.
 *   rawtcp HOST PORT STEP...
 * Steps, in order:
 *   x:HEX     send these bytes (hex)
 *   s:TEXT    send TEXT, with \r and \n escapes decoded
 *   r:N       read exactly N bytes and print them as hex on one line
 *   all       read until EOF and print what came, C-escaped, on one line
 *   sleep:MS  pause
 * A read that hits EOF early prints "EOF after K bytes: HEX". */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int dial(const char *host, const char *port)
{
    struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *ai;
    int s;

    if (getaddrinfo(host, port, &hints, &ai) != 0)
        return -1;
    s = socket(ai->ai_family, SOCK_STREAM, 0);
    if (s >= 0 && connect(s, ai->ai_addr, ai->ai_addrlen) < 0) {
        close(s);
        s = -1;
    }
    freeaddrinfo(ai);
    return s;
}

static void send_all(int s, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = send(s, p, n, MSG_NOSIGNAL);

        if (w <= 0) {
            printf("send: %s\n", strerror(errno));
            exit(1);
        }
        p += w;
        n -= (size_t)w;
    }
}

int main(int argc, char **argv)
{
    int s;

    if (argc < 3) {
        fprintf(stderr, "usage: rawtcp HOST PORT STEP...\n");
        return 2;
    }
    s = dial(argv[1], argv[2]);
    if (s < 0) {
        printf("connect: %s\n", strerror(errno));
        return 1;
    }
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];
        unsigned char buf[1 << 16];

        if (strncmp(a, "x:", 2) == 0) {
            size_t n = 0;

            for (const char *h = a + 2; h[0] && h[1] && n < sizeof(buf); h += 2) {
                unsigned v;

                sscanf(h, "%2x", &v);
                buf[n++] = (unsigned char)v;
            }
            send_all(s, buf, n);
        } else if (strncmp(a, "s:", 2) == 0) {
            size_t n = 0;

            for (const char *t = a + 2; *t && n < sizeof(buf); t++) {
                if (t[0] == '\\' && t[1] == 'r')
                    buf[n++] = '\r', t++;
                else if (t[0] == '\\' && t[1] == 'n')
                    buf[n++] = '\n', t++;
                else
                    buf[n++] = (unsigned char)*t;
            }
            send_all(s, buf, n);
        } else if (strncmp(a, "r:", 2) == 0) {
            size_t want = strtoul(a + 2, NULL, 10), got = 0;

            while (got < want && got < sizeof(buf)) {
                ssize_t r = recv(s, buf + got, want - got, 0);

                if (r <= 0)
                    break;
                got += (size_t)r;
            }
            if (got < want)
                printf("EOF after %zu bytes: ", got);
            for (size_t k = 0; k < got; k++)
                printf("%02x", buf[k]);
            printf("\n");
        } else if (strcmp(a, "all") == 0) {
            ssize_t r;

            while ((r = recv(s, buf, sizeof(buf), 0)) > 0)
                for (ssize_t k = 0; k < r; k++) {
                    if (buf[k] == '\r')
                        printf("\\r");
                    else if (buf[k] == '\n')
                        printf("\\n");
                    else if (buf[k] < 0x20 || buf[k] >= 0x7f)
                        printf("\\x%02x", buf[k]);
                    else
                        putchar(buf[k]);
                }
            printf("\n");
        } else if (strncmp(a, "sleep:", 6) == 0) {
            struct timespec ts = { 0, 0 };
            long ms = strtol(a + 6, NULL, 10);

            ts.tv_sec = ms / 1000;
            ts.tv_nsec = (ms % 1000) * 1000000L;
            nanosleep(&ts, NULL);
        } else {
            fprintf(stderr, "rawtcp: unknown step %s\n", a);
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}
