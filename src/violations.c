#include "src/violations.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "src/log.h"

#define LINE_MAX_LEN 4096

int vio_init(struct vio_list *l, const struct policy *pol, const char *command, struct nf_err *err)
{
    memset(l, 0, sizeof(*l));
    l->ignore = &pol->monitor_ignore;
    l->ignore_cmd = pol->ignore_violations;
    l->n_ignore_cmd = pol->n_ignore_violations;
    l->command = command;
    l->log_fd = -1;
    if (pol->monitor_log) {
        l->log_fd =
            open(pol->monitor_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
        if (l->log_fd < 0)
            return nf_err_sys(err, "violations log %s", pol->monitor_log);
    }
    return 0;
}

void vio_free(struct vio_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->lines[i]);
    free(l->lines);
    if (l->log_fd >= 0)
        close(l->log_fd);
    memset(l, 0, sizeof(*l));
    l->log_fd = -1;
}

void vio_sanitize(const char *in, char *out, size_t outsz)
{
    size_t o = 0;
    bool space = false;

    if (!outsz)
        return;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 1 < outsz;) {
        size_t inv = vio_invisible_len(p);

        if (inv) {
            if (!space && o > 0)
                out[o++] = ' ';
            space = true;
            p += inv;
            continue;
        }
        if (*p == '<' || *p == '>') {
            p++;
            continue;
        }
        out[o++] = (char)*p;
        space = *p == ' ';
        p++;
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
}

size_t vio_utf8_len(const unsigned char *p)
{
    size_t n;
    unsigned cp;

    if (p[0] < 0x80)
        return 1;
    if ((p[0] & 0xe0) == 0xc0)
        n = 2, cp = p[0] & 0x1f;
    else if ((p[0] & 0xf0) == 0xe0)
        n = 3, cp = p[0] & 0x0f;
    else if ((p[0] & 0xf8) == 0xf0)
        n = 4, cp = p[0] & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void vio_json_escape(const char *s, char *out, size_t outsz)
{
    size_t o = 0;

    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        char tmp[8];
        const char *piece = tmp;
        size_t plen;
        size_t adv = 1;

        if (*p == '"' || *p == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)*p;
            plen = 2;
        } else if (*p < 0x20 || *p == 0x7f) {
            plen = (size_t)snprintf(tmp, sizeof(tmp), "\\u%04x", *p);
        } else if (*p < 0x80) {
            tmp[0] = (char)*p;
            plen = 1;
        } else if ((adv = vio_utf8_len(p)) > 0) {
            piece = (const char *)p;
            plen = adv;
        } else {
            piece = "\\ufffd";
            plen = 6;
            adv = 1;
        }
        if (o + plen + 1 > outsz)
            break;
        memcpy(out + o, piece, plen);
        o += plen;
        p += adv;
    }
    if (outsz)
        out[o < outsz ? o : outsz - 1] = '\0';
}

size_t vio_invisible_len(const unsigned char *p)
{
    size_t n;
    unsigned cp;

    if (*p < 0x20 || *p == 0x7f)
        return 1;
    if (*p < 0x80 || !(n = vio_utf8_len(p)))
        return 0;
    cp = n == 2 ? (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu)
         : n == 3
             ? (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu)
             : (p[0] & 0x07u) << 18 | (p[1] & 0x3fu) << 12 | (p[2] & 0x3fu) << 6 | (p[3] & 0x3fu);
    if ((cp >= 0x80 && cp <= 0x9f) || cp == 0xad || cp == 0x61c || (cp >= 0x200b && cp <= 0x200f) ||
        cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
        (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff ||
        (cp >= 0xe0000 && cp <= 0xe007f))
        return n;
    return 0;
}

bool vio_ignored_for(const struct pol_ignore *v, size_t n, const char *command, const char *subject)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].command, "*") != 0 && !(command && strstr(command, v[i].command)))
            continue;
        for (size_t j = 0; j < v[i].patterns.n; j++)
            if (strstr(subject, v[i].patterns.v[j]))
                return true;
    }
    return false;
}

static bool ignored(const struct vio_list *l, const char *line)
{
    for (size_t i = 0; l->ignore && i < l->ignore->n; i++)
        if (strstr(line, l->ignore->v[i]))
            return true;
    return false;
}

/* Returns true when the line is new (kept, and to be logged). */
static bool keep(struct vio_list *l, const char *line)
{
    char **v;

    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->lines[i], line) == 0)
            return false;
    if (l->n >= VIO_MAX) {
        l->dropped++;
        return true;
    }
    v = realloc(l->lines, (l->n + 1) * sizeof(*v));
    if (!v)
        return false;
    l->lines = v;
    v[l->n] = strdup(line);
    if (v[l->n])
        l->n++;
    return true;
}

static void log_json(struct vio_list *l, const char *fields)
{
    char buf[LINE_MAX_LEN * 3];
    struct timeval tv;
    struct tm tm;
    int n;

    if (l->log_fd < 0)
        return;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    n = snprintf(buf, sizeof(buf), "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",%s}\n",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (long)(tv.tv_usec / 1000), fields);
    if (n > 0 && (size_t)n < sizeof(buf) && write(l->log_fd, buf, (size_t)n) != n)
        log_warn("violations log: %s", strerror(errno));
}

void vio_add_network(struct vio_list *l, const char *host, unsigned port, const char *reason)
{
    char raw[LINE_MAX_LEN];
    char line[LINE_MAX_LEN];
    char jhost[LINE_MAX_LEN], jreason[LINE_MAX_LEN];
    char fields[LINE_MAX_LEN * 2 + 256];
    bool v6 = strchr(host, ':') != NULL;

    snprintf(raw, sizeof(raw), "deny network-outbound %s%s%s:%u (%s)", v6 ? "[" : "", host,
             v6 ? "]" : "", port, reason);
    vio_sanitize(raw, line, sizeof(line));
    /* srt matches a network violation's whole line, as formed. */
    if (ignored(l, line) || vio_ignored_for(l->ignore_cmd, l->n_ignore_cmd, l->command, raw) ||
        !keep(l, line))
        return;
    vio_json_escape(host, jhost, sizeof(jhost));
    vio_json_escape(reason, jreason, sizeof(jreason));
    snprintf(fields, sizeof(fields),
             "\"kind\":\"network\",\"host\":\"%s\",\"port\":%u,\"reason\":\"%s\",\"pid\":null",
             jhost, port, jreason);
    log_json(l, fields);
}

void vio_add_file(struct vio_list *l, const char *syscall, const char *path, const char *reason,
                  pid_t pid)
{
    char raw[LINE_MAX_LEN];
    char line[LINE_MAX_LEN];
    char jpath[LINE_MAX_LEN], jreason[512];
    char fields[LINE_MAX_LEN * 2 + 256];

    snprintf(raw, sizeof(raw), "deny %s %s", syscall, path);
    vio_sanitize(raw, line, sizeof(line));
    /* srt matches a file violation's path only, not its line. */
    if (ignored(l, line) || vio_ignored_for(l->ignore_cmd, l->n_ignore_cmd, l->command, path) ||
        !keep(l, line))
        return;
    vio_json_escape(path, jpath, sizeof(jpath));
    vio_json_escape(reason, jreason, sizeof(jreason));
    snprintf(fields, sizeof(fields),
             "\"kind\":\"file\",\"syscall\":\"%s\",\"path\":\"%s\",\"reason\":\"%s\",\"pid\":%d",
             syscall, jpath, jreason, (int)pid);
    log_json(l, fields);
}

static void add_git(struct vio_list *l, const char *verb, const char *path, const char *reason)
{
    char raw[LINE_MAX_LEN];
    char line[LINE_MAX_LEN];
    char jpath[LINE_MAX_LEN];
    char fields[LINE_MAX_LEN + 256];

    snprintf(raw, sizeof(raw), "%s git-repository %s (%s)", verb, path, reason);
    vio_sanitize(raw, line, sizeof(line));
    if (ignored(l, line) || vio_ignored_for(l->ignore_cmd, l->n_ignore_cmd, l->command, path) ||
        !keep(l, line))
        return;
    vio_json_escape(path, jpath, sizeof(jpath));
    snprintf(fields, sizeof(fields),
             "\"kind\":\"git-repository\",\"path\":\"%s\",\"reason\":\"%s\"", jpath, reason);
    log_json(l, fields);
}

void vio_add_git(struct vio_list *l, const char *path)
{
    add_git(l, "created", path, "git run there will obey the config and hooks the command wrote");
}

void vio_add_git_changed(struct vio_list *l, const char *path)
{
    add_git(l, "changed", path,
            "its config, hooks or git directory was replaced during the run, not by the "
            "command, which could not: the read-only protection went with the file replaced, "
            "and git run there obeys what replaced it");
}

void vio_print_block(const struct vio_list *l, int fd)
{
    FILE *f;

    if (l->n == 0)
        return;
    f = fdopen(dup(fd), "w");
    if (!f)
        return;
    fputs("\n<sandbox_violations>\n", f);
    if (l->mode)
        fprintf(f, "%s\n", l->mode);
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "%s\n", l->lines[i]);
    if (l->dropped)
        fprintf(f, "... %zu more not shown\n", l->dropped);
    fputs("</sandbox_violations>", f);
    fclose(f);
}
