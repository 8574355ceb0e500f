/* px_cidr_parse and px_cidr_contains. The properties: the parsed network has
 * no host bits, contains itself and every address that differs only in host
 * bits, and no address that differs in a network bit; its text re-parses to
 * the same range. */
#include <stdint.h>
#include <stdio.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1), text[PX_HOST_MAX + 8];
    struct px_cidr c, again;
    unsigned bits;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (px_cidr_parse(s, &c) < 0) {
        free(s);
        return 0;
    }
    bits = c.addr.family == AF_INET ? 32 : 128;
    check(c.addr.family == AF_INET || c.addr.family == AF_INET6);
    check(c.prefix <= bits);
    check(px_cidr_contains(&c, &c.addr));
    for (unsigned i = c.prefix; i < bits; i++)
        check(!(c.addr.b[i / 8] & (0x80 >> (i % 8))));

    px_addr_format(&c.addr, text, PX_HOST_MAX);
    snprintf(text + strlen(text), 8, "/%u", c.prefix);
    check(px_cidr_parse(text, &again) == 0);
    check(px_addr_equal(&again.addr, &c.addr) && again.prefix == c.prefix);

    /* flip one bit chosen by the input's length: inside the prefix it
     * leaves the range, outside it stays */
    if (bits) {
        struct px_addr a = c.addr;
        unsigned bit = (unsigned)(size * 7919u) % bits;

        a.b[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
        check(px_cidr_contains(&c, &a) == (bit >= c.prefix));
    }
    /* the mapped spelling of an IPv4 member is a member */
    if (c.addr.family == AF_INET) {
        struct px_addr m = { .family = AF_INET6 };

        m.b[10] = m.b[11] = 0xff;
        memcpy(m.b + 12, c.addr.b, 4);
        check(px_cidr_contains(&c, &m));
    }
    free(s);
    return 0;
}
