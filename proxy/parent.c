#include "proxy/parent.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <strings.h>

#include "src/util.h"

/* Percent-decode src[0..n) into out; -1 on a bad escape or overflow. */
static int pct_decode(const char *src, size_t n, char *out, size_t outsz)
{
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)src[i];

        if (c == '%') {
            int a, b;

            if (i + 2 >= n)
                return -1;
            a = nf_hex_value(src[i + 1]);
            b = nf_hex_value(src[i + 2]);
            if (a < 0 || b < 0)
                return -1;
            c = a * 16 + b;
            i += 2;
            if (c == 0)
                return -1; /* a NUL would cut the credentials short */
        }
        if (o + 1 >= outsz)
            return -1;
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return 0;
}

static void base64(const unsigned char *in, size_t n, char *out, size_t outsz)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;

    for (size_t i = 0; i < n && o + 5 < outsz; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);

        out[o++] = t[(v >> 18) & 63];
        out[o++] = t[(v >> 12) & 63];
        out[o++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? t[v & 63] : '=';
    }
    out[o] = '\0';
}

int px_parent_parse(const char *url, struct px_parent *out, struct nf_err *err)
{
    const char *p = url, *at, *end, *colon, *hstart, *hend;
    char user[256], pass[256];
    unsigned long port = 1080; /* curl's default for a proxy without a port */

    memset(out, 0, sizeof(*out));
    if (strncasecmp(p, "http://", 7) == 0)
        p += 7;
    else if (strstr(p, "://"))
        return nf_err_set(err, EINVAL, "parent proxy %s: only http:// proxies are supported", url);
    end = p + strcspn(p, "/?#");
    if (*end && strcmp(end, "/") != 0)
        return nf_err_set(err, EINVAL, "parent proxy %s: a path is not allowed", url);
    at = memchr(p, '@', (size_t)(end - p));
    if (at) {
        const char *sep = memchr(p, ':', (size_t)(at - p));
        char cred[520];
        size_t len;

        if (pct_decode(p, sep ? (size_t)(sep - p) : (size_t)(at - p), user, sizeof(user)) < 0 ||
            pct_decode(sep ? sep + 1 : at, sep ? (size_t)(at - sep - 1) : 0, pass, sizeof(pass)) <
                0)
            return nf_err_set(err, EINVAL, "parent proxy: bad credentials in the URL");
        len = (size_t)snprintf(cred, sizeof(cred), "%s:%s", user, pass);
        if (len >= sizeof(cred) || 6 + (len + 2) / 3 * 4 + 1 > sizeof(out->auth))
            return nf_err_set(err, EINVAL, "parent proxy: credentials too long");
        strcpy(out->auth, "Basic ");
        base64((const unsigned char *)cred, len, out->auth + 6, sizeof(out->auth) - 6);
        p = at + 1;
    }
    hstart = p;
    if (*p == '[') {
        const char *rb = memchr(p, ']', (size_t)(end - p));

        if (!rb)
            return nf_err_set(err, EINVAL, "parent proxy %s: bad IPv6 address", url);
        hend = rb + 1;
        colon = hend < end && *hend == ':' ? hend : NULL;
    } else {
        colon = memchr(p, ':', (size_t)(end - p));
        hend = colon ? colon : end;
    }
    if (colon) {
        if (colon + 1 >= end)
            return nf_err_set(err, EINVAL, "parent proxy %s: empty port", url);
        port = 0;
        for (const char *d = colon + 1; d < end; d++) {
            if (*d < '0' || *d > '9' || port > 65535)
                return nf_err_set(err, EINVAL, "parent proxy %s: bad port", url);
            port = port * 10 + (unsigned long)(*d - '0');
        }
        if (port == 0 || port > 65535)
            return nf_err_set(err, EINVAL, "parent proxy %s: bad port", url);
    } else if (hend != end) {
        return nf_err_set(err, EINVAL, "parent proxy %s: malformed", url);
    }
    if (px_host_canon(hstart, (size_t)(hend - hstart), out->host, &out->host_is_ip, &out->addr) < 0)
        return nf_err_set(err, EINVAL, "parent proxy %s: malformed host", url);
    out->port = (unsigned)port;
    out->enabled = true;
    return 0;
}

int px_parent_choose(const char *config_url, const char *https_proxy, const char *http_proxy,
                     const char *no_proxy, struct px_parent *out, struct nf_err *err)
{
    const char *url = NULL, *source = NULL;

    memset(out, 0, sizeof(*out));
    if (config_url && *config_url) {
        url = config_url;
        source = "parent_proxy";
    } else if (https_proxy && *https_proxy) {
        url = https_proxy;
        source = "HTTPS_PROXY";
    } else if (http_proxy && *http_proxy) {
        url = http_proxy;
        source = "HTTP_PROXY";
    }
    if (!url)
        return 0;
    if (px_parent_parse(url, out, err) < 0)
        return nf_err_prefix(err, "%s", source);
    out->source = source;
    if (no_proxy)
        snprintf(out->no_proxy, sizeof(out->no_proxy), "%s", no_proxy);
    return 0;
}

static bool suffix_match(const char *host, const char *dom, size_t dlen)
{
    size_t hlen = strlen(host);

    if (dlen && dom[0] == '.') {
        dom++;
        dlen--;
    }
    if (!dlen)
        return false;
    if (hlen == dlen)
        return strncasecmp(host, dom, dlen) == 0;
    return hlen > dlen && host[hlen - dlen - 1] == '.' &&
           strncasecmp(host + hlen - dlen, dom, dlen) == 0;
}

/* One NO_PROXY entry, trimmed, into item; returns the rest of the list. */
static const char *next_item(const char *p, char *item, size_t itemsz)
{
    const char *e = p + strcspn(p, ",");
    const char *a = p, *b = e;

    while (a < b && (*a == ' ' || *a == '\t'))
        a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
        b--;
    item[0] = '\0';
    if ((size_t)(b - a) < itemsz) {
        memcpy(item, a, (size_t)(b - a));
        item[b - a] = '\0';
    }
    return *e ? e + 1 : e;
}

bool px_no_proxy_match(const char *list, const char *host, unsigned port)
{
    struct px_addr ha;
    bool host_ip = px_addr_parse(host, &ha) == 0;

    for (const char *p = list; p && *p;) {
        char item[300];
        char *colon;
        unsigned iport = 0;

        p = next_item(p, item, sizeof(item));
        if (!item[0])
            continue;
        if (strcmp(item, "*") == 0)
            return true;
        /* host:port or [v6]:port, but not a bare IPv6 address */
        colon = strrchr(item, ':');
        if (colon && (strchr(item, ':') == colon || (item[0] == '[' && colon[-1] == ']'))) {
            iport = (unsigned)strtoul(colon + 1, NULL, 10);
            *colon = '\0';
        }
        if (iport && iport != port)
            continue;
        if (item[0] == '[') {
            size_t l = strlen(item);

            if (l < 3 || item[l - 1] != ']')
                continue;
            memmove(item, item + 1, l - 2);
            item[l - 2] = '\0';
        }
        if (host_ip) {
            struct px_cidr c;

            if (px_cidr_parse(item, &c) == 0 && px_cidr_contains(&c, &ha))
                return true;
            continue;
        }
        if (suffix_match(host, item, strlen(item)))
            return true;
    }
    return false;
}
