/* px_host_canon and the strict literal parser over arbitrary bytes. Beyond
 * not crashing, the properties a filter depends on: canonical text is a fixed
 * point (a second pass never changes a decision), and an IP literal's text
 * and address always agree. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
    if (!ok)
        abort();
}

static void check_canon(const char *in, size_t len)
{
    char once[PX_HOST_MAX], twice[PX_HOST_MAX], text[PX_HOST_MAX];
    struct px_addr a1, a2, parsed;
    bool ip1, ip2;

    if (px_host_canon(in, len, once, &ip1, &a1) < 0) {
        check(once[0] == '\0');
        return;
    }
    check(strlen(once) < PX_HOST_MAX && once[0] != '\0');
    check(px_host_canon(once, strlen(once), twice, &ip2, &a2) == 0);
    check(strcmp(once, twice) == 0 && ip1 == ip2);
    if (!ip1) {
        check(strlen(once) <= 253 && once[strlen(once) - 1] != '.');
        for (const char *p = once; *p; p++)
            check((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ||
                  *p == '_');
        return;
    }
    check(px_addr_equal(&a1, &a2));
    check(px_addr_parse(once, &parsed) == 0 && px_addr_equal(&parsed, &a1));
    px_addr_format(&a1, text, sizeof(text));
    check(strcmp(text, once) == 0);
    /* IPv4-mapped never survives canonicalisation */
    if (a1.family == AF_INET6)
        check(!(a1.b[10] == 0xff && a1.b[11] == 0xff && !memcmp(a1.b, "\0\0\0\0\0\0\0\0\0\0", 10)));
}

static void check_literal(const char *in)
{
    char text[PX_HOST_MAX], canon[PX_HOST_MAX];
    struct px_addr a, back, v4;
    bool ip;

    if (px_addr_parse(in, &a) < 0)
        return;
    check(a.family == AF_INET || a.family == AF_INET6);
    px_addr_format(&a, text, sizeof(text));
    check(px_addr_parse(text, &back) == 0 && px_addr_equal(&a, &back));
    /* a strict literal is also a valid host, meaning the same address */
    check(px_host_canon(in, strlen(in), canon, &ip, &back) == 0 && ip);
    if (px_addr_equal(&a, &back))
        check(strcmp(canon, text) == 0);
    else
        check(px_addr_embedded_v4(&a, &v4) && px_addr_equal(&v4, &back));
    if (px_addr_embedded_v4(&a, &v4))
        check(v4.family == AF_INET && a.family == AF_INET6);
    px_class_text(px_addr_builtin_classes(&a), text, sizeof(text));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    check_canon(s, size);
    check_literal(s);
    free(s);
    return 0;
}
