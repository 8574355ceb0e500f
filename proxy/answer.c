/* The answers the proxy gives a client itself, after which it closes: a
 * denial (srt's 403s and SOCKS "not allowed"), a bad gateway, an unreachable
 * host. Each records the violation the user is shown. */
#include "proxy/conn.h"

#include <stdio.h>
#include <string.h>

#include "proxy/socks5.h"
#include "src/violations.h"

#define BLOCKED_BODY "Connection blocked by network allowlist"

void px_status_phrase(const char *reason, char *out, size_t outsz)
{
    size_t o = 0;
    const unsigned char *p = (const unsigned char *)(reason ? reason : "");

    while (*p && o + 1 < outsz && o < 500) {
        size_t inv = vio_invisible_len(p), len;

        if (inv) {
            /* controls and invisible formatting (bidi, zero-width) */
            out[o++] = ' ';
            p += inv;
            continue;
        }
        if (*p == '<' || *p == '>') {
            p++;
            continue;
        }
        if (*p < 0x80) {
            out[o++] = (char)*p++;
            continue;
        }
        /* A status line is ASCII: one '?' per character, and an invalid
         * byte swallows nothing after it. */
        len = vio_utf8_len(p);
        if (!len) {
            /* An invalid sequence is one character: its lead and the
             * continuation bytes that follow it, never more. */
            size_t want = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 1;

            for (len = 1; len < want && (p[len] & 0xc0) == 0x80; len++)
                ;
        }
        out[o++] = '?';
        p += len;
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    {
        size_t lead = 0;

        while (lead < o && out[lead] == ' ')
            lead++;
        memmove(out, out + lead, o - lead);
        o -= lead;
    }
    if (o == 0)
        snprintf(out, outsz, "Forbidden");
    else
        out[o] = '\0';
}

void px_conn_respond(struct conn *c, const void *data, size_t len)
{
    /* What is already queued is whole messages the client waits for (the
     * SOCKS method choice when a refused request came in the same read as
     * the greeting, a 100 Continue): the answer goes after them. */
    if (px_buf_append(&c->to_client, data, len) < 0) {
        px_conn_close(c);
        return;
    }
    px_conn_close_upstream(c);
    c->state = CS_FLUSH_CLOSE;
    (void)px_conn_arm(c, HEAD_TIMEOUT_MS); /* the last step either way */
}

void px_conn_respond_text(struct conn *c, const char *text)
{
    px_conn_respond(c, text, strlen(text));
}

void px_conn_socks_reply(struct conn *c, uint8_t rep)
{
    uint8_t r[10];

    px_socks_reply(rep, r);
    px_conn_respond(c, r, sizeof(r));
}

void px_conn_deny(struct conn *c, const char *shown_host, const char *reason)
{
    char msg[1024];

    vio_add_network(c->s->cfg.violations, shown_host, c->port, reason);
    if (c->socks) {
        px_conn_socks_reply(c, PX_SOCKS_REP_NOT_ALLOWED);
        return;
    }
    if (c->is_connect) {
        char phrase[512];

        px_status_phrase(reason, phrase, sizeof(phrase));
        snprintf(msg, sizeof(msg),
                 "HTTP/1.1 403 %s\r\nContent-Type: text/plain\r\n"
                 "X-Proxy-Error: blocked-by-allowlist\r\n\r\n" BLOCKED_BODY,
                 phrase);
    } else {
        snprintf(msg, sizeof(msg),
                 "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                 "X-Proxy-Error: blocked-by-allowlist\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n" BLOCKED_BODY "\n",
                 sizeof(BLOCKED_BODY));
    }
    px_conn_respond_text(c, msg);
}

void px_conn_guard_deny(struct conn *c, unsigned classes)
{
    char cls[512], reason[600], body[1024], msg[2048];

    px_class_text(classes, cls, sizeof(cls));
    snprintf(reason, sizeof(reason), "resolved to %s", cls);
    vio_add_network(c->s->cfg.violations, c->host, c->port, reason);
    if (c->socks) {
        px_conn_socks_reply(c, PX_SOCKS_REP_NOT_ALLOWED);
        return;
    }
    snprintf(body, sizeof(body), "Connection to %s blocked: %s", c->host, reason);
    if (c->is_connect)
        snprintf(msg, sizeof(msg),
                 "HTTP/1.1 403 %s\r\nContent-Type: text/plain\r\n"
                 "X-Proxy-Error: blocked-by-sandbox-runtime\r\n\r\n%s",
                 reason, body);
    else
        snprintf(msg, sizeof(msg),
                 "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                 "X-Proxy-Error: blocked-by-sandbox-runtime\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n%s\n",
                 strlen(body) + 1, body);
    px_conn_respond_text(c, msg);
}

void px_conn_upstream_failed(struct conn *c)
{
    /* srt's bridge closes when the external proxy cannot be reached; an
     * answer of ours would be bytes that proxy never sent. */
    if (c->relay)
        px_conn_close(c);
    else if (c->socks)
        px_conn_socks_reply(c, PX_SOCKS_REP_HOST_UNREACHABLE);
    else
        px_conn_respond_text(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n"
                                "Connection: close\r\n\r\n");
}
