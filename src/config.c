#include "src/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/glob.h"
#include "proxy/host.h"
#include "proxy/rules.h"
#include "src/util.h"

#define CFG_MAX_SIZE (1024 * 1024)

static int parse_bool(const char *v, bool *out, struct nf_err *err)
{
    static const char *const yes[] = { "true", "yes", "on", "1" };
    static const char *const no[] = { "false", "no", "off", "0" };

    for (size_t i = 0; i < NF_ARRAY_SIZE(yes); i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(v, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return nf_err_set(err, EINVAL, "'%s' is not a boolean (true or false)", v);
}

static int parse_uint(const char *v, unsigned min, unsigned max, unsigned *out, struct nf_err *err)
{
    unsigned long n = 0;

    if (!*v)
        return nf_err_set(err, EINVAL, "empty value; expected a number from %u to %u", min, max);
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9' || n > max)
            return nf_err_set(err, EINVAL, "'%s' is not a number from %u to %u", v, min, max);
        n = n * 10 + (unsigned long)(*p - '0');
    }
    if (n < min || n > max)
        return nf_err_set(err, EINVAL, "'%s' is not a number from %u to %u", v, min, max);
    *out = (unsigned)n;
    return 0;
}

/* A path for one of the filesystem lists. Globs follow srt: a trailing
 * "/" "**" means the directory itself, in every list; other globs are read
 * patterns only (expanded when the run starts), and one that would walk
 * the whole file system from `/` is refused rather than skipped. Nothing is
 * ever taken silently as a literal name that protects nothing. A literal
 * entry is the path as spelled: no glob, no folding of a trailing "/" "**". */
int cfg_add_path(struct policy *pol, struct pol_strv *sv, const char *v, bool read_list,
                 bool literal, struct nf_err *err)
{
    char path[PATH_MAX];
    size_t len;
    bool pattern;

    if (pol_path_normalize(v, pol->cwd, pol->home, path, sizeof(path), err) < 0)
        return -1;
    len = strlen(path);
    if (!literal && len > 3 && strcmp(path + len - 3, "/**") == 0)
        path[len - 3] = '\0';
    pattern = fs_glob_is_pattern(path);
    if (pattern && !literal) {
        if (!read_list)
            return nf_err_set(err, EINVAL,
                              "'%s': a write list takes paths and `DIR/**`, not other globs", v);
        if (fs_glob_prefix_len(path) == 0)
            return nf_err_set(err, EINVAL,
                              "'%s': a pattern whose literal prefix is / alone would walk the "
                              "whole file system; start it with a directory",
                              v);
    }
    /* One spelling is read one way in both read lists (fs/plan.c asks
     * literal_paths): the same string as a glob and as a literal name
     * would lose one of the two rules. */
    if (pattern && read_list) {
        bool is_literal = pol_strv_contains(&pol->literal_paths, path);
        bool seen =
            pol_strv_contains(&pol->deny_read, path) || pol_strv_contains(&pol->allow_read, path);

        if ((literal && seen && !is_literal) || (!literal && is_literal))
            return nf_err_set(err, EINVAL, "'%s' is given both as a glob and as a literal path", v);
        if (literal && !is_literal && pol_strv_add(&pol->literal_paths, path, err) < 0)
            return -1;
    }
    if (pol_strv_contains(sv, path))
        return 0;
    return pol_strv_add(sv, path, err);
}

static int add_path(struct policy *pol, struct pol_strv *sv, const char *v, bool read_list,
                    struct nf_err *err)
{
    return cfg_add_path(pol, sv, v, read_list, false, err);
}

static int set_string(char **slot, const char *v, struct nf_err *err)
{
    char *copy = strdup(v);

    if (!copy)
        return nf_err_sys(err, "out of memory");
    free(*slot);
    *slot = copy;
    return 0;
}

static int add_domain(struct pol_strv *sv, const char *v, bool deny, struct nf_err *err)
{
    struct px_pattern p;

    if (px_pattern_parse(v, deny, &p, err) < 0)
        return -1;
    return pol_strv_add(sv, v, err);
}

/* `HOST: text` — HOST is the deny_domain entry as written (it may hold a
 * port or a bracketed IPv6, so the separator is a colon followed by a
 * space, or a colon ending the line). */
static int add_reason(struct policy *pol, const char *v, struct nf_err *err)
{
    const char *sep = NULL;
    struct pol_reason *r;
    struct px_pattern p;
    _cleanup_free_ char *host = NULL;
    _cleanup_free_ char *text = NULL;

    for (const char *c = v; *c; c++) {
        if (*c == ':' && (c[1] == ' ' || c[1] == '\t' || c[1] == '\0')) {
            sep = c;
            break;
        }
    }
    if (!sep || sep == v)
        return nf_err_set(err, EINVAL, "'%s' is not 'HOST: reason'", v);
    host = strndup(v, (size_t)(sep - v));
    sep++;
    while (*sep == ' ' || *sep == '\t')
        sep++;
    if (!*sep)
        return nf_err_set(err, EINVAL, "'%s' has an empty reason", v);
    text = strdup(sep);
    if (!host || !text)
        return nf_err_sys(err, "out of memory");
    if (px_pattern_parse(host, true, &p, err) < 0)
        return -1;
    r = realloc(pol->deny_reasons, (pol->n_deny_reasons + 1) * sizeof(*r));
    if (!r)
        return nf_err_sys(err, "out of memory");
    pol->deny_reasons = r;
    r[pol->n_deny_reasons].host = steal_pointer(&host);
    r[pol->n_deny_reasons].text = steal_pointer(&text);
    pol->n_deny_reasons++;
    return 0;
}

static int add_cidr(struct pol_strv *sv, const char *v, struct nf_err *err)
{
    struct px_cidr c;

    if (px_cidr_parse(v, &c) < 0)
        return nf_err_set(err, EINVAL, "'%s' is not an address or CIDR", v);
    return pol_strv_add(sv, v, err);
}

/* http://host:port, nothing else: credentials in the URL would leak into
 * logs, and an https:// parent needs TLS we do not speak. */
static int check_parent_proxy(const char *v, struct nf_err *err)
{
    const char *h;
    const char *colon;
    char host[PX_HOST_MAX];
    unsigned port;

    if (strncasecmp(v, "http://", 7) != 0)
        return nf_err_set(err, EINVAL, "'%s' is not http://HOST:PORT", v);
    h = v + 7;
    if (strchr(h, '@'))
        return nf_err_set(err, EINVAL, "'%s': credentials in the URL are not supported", v);
    colon = strrchr(h, ':');
    if (!colon || colon == h || (strchr(h, '/') && strchr(h, '/') < colon))
        return nf_err_set(err, EINVAL, "'%s' is not http://HOST:PORT", v);
    {
        const char *end = colon + 1 + strcspn(colon + 1, "/");
        char portbuf[8];
        size_t plen = (size_t)(end - colon - 1);

        if (plen == 0 || plen >= sizeof(portbuf) || (*end && strcmp(end, "/") != 0))
            return nf_err_set(err, EINVAL, "'%s' is not http://HOST:PORT", v);
        memcpy(portbuf, colon + 1, plen);
        portbuf[plen] = '\0';
        if (parse_uint(portbuf, 1, 65535, &port, err) < 0)
            return nf_err_prefix(err, "parent proxy port");
    }
    if (px_host_canon(h, (size_t)(colon - h), host, NULL, NULL) < 0)
        return nf_err_set(err, EINVAL, "'%s': malformed host", v);
    return 0;
}

int cfg_apply(struct policy *pol, const char *section, const char *key, const char *v,
              struct nf_err *err)
{
    bool b;

    if (strcmp(section, "filesystem") == 0) {
        if (strcmp(key, "allow_write") == 0)
            return add_path(pol, &pol->allow_write, v, false, err);
        if (strcmp(key, "deny_write") == 0)
            return add_path(pol, &pol->deny_write, v, false, err);
        if (strcmp(key, "deny_read") == 0)
            return add_path(pol, &pol->deny_read, v, true, err);
        if (strcmp(key, "allow_read") == 0)
            return add_path(pol, &pol->allow_read, v, true, err);
        if (strcmp(key, "mandatory_deny_depth") == 0)
            return parse_uint(v, 1, POL_MAX_DEPTH, &pol->mandatory_deny_depth, err);
        if (strcmp(key, "allow_git_init") == 0)
            return parse_bool(v, &pol->allow_git_init, err);
    } else if (strcmp(section, "network") == 0) {
        if (strcmp(key, "allow_domain") == 0)
            return add_domain(&pol->allow_domain, v, false, err);
        if (strcmp(key, "deny_domain") == 0)
            return add_domain(&pol->deny_domain, v, true, err);
        if (strcmp(key, "deny_reason") == 0)
            return add_reason(pol, v, err);
        if (strcmp(key, "deny_address") == 0)
            return add_cidr(&pol->deny_address, v, err);
        if (strcmp(key, "allow_all_unix_sockets") == 0)
            return parse_bool(v, &pol->allow_all_unix_sockets, err);
        if (strcmp(key, "enabled") == 0)
            return parse_bool(v, &pol->network_enabled, err);
        if (strcmp(key, "http_port") == 0)
            return parse_uint(v, 1, 65535, &pol->http_port, err);
        if (strcmp(key, "socks_port") == 0)
            return parse_uint(v, 1, 65535, &pol->socks_port, err);
        if (strcmp(key, "max_connections") == 0)
            return parse_uint(v, 1, 1000000, &pol->max_connections, err);
        if (strcmp(key, "parent_proxy") == 0) {
            if (check_parent_proxy(v, err) < 0)
                return -1;
            return set_string(&pol->parent_proxy, v, err);
        }
    } else if (strcmp(section, "monitor") == 0) {
        if (strcmp(key, "enabled") == 0)
            return parse_bool(v, &pol->monitor_enabled, err);
        if (strcmp(key, "ignore") == 0) {
            if (!*v)
                return nf_err_set(err, EINVAL, "empty pattern");
            return pol_strv_add(&pol->monitor_ignore, v, err);
        }
        if (strcmp(key, "log") == 0) {
            char path[PATH_MAX];

            if (pol_path_normalize(v, pol->cwd, pol->home, path, sizeof(path), err) < 0)
                return -1;
            return set_string(&pol->monitor_log, path, err);
        }
    } else if (strcmp(section, "sandbox") == 0) {
        if (strcmp(key, "mode") == 0) {
            int m = pol_mode_parse(v);

            if (m < 0)
                return nf_err_set(err, EINVAL, "\"%s\": expected namespaces, landlock or auto", v);
            pol->mode = (enum pol_mode)m;
            return 0;
        }
        if (strcmp(key, "new_session") == 0) {
            if (parse_bool(v, &b, err) < 0)
                return -1;
            pol->new_session = b;
            return 0;
        }
    } else {
        return nf_err_set(err, EINVAL, "unknown section");
    }
    return nf_err_set(err, EINVAL, "unknown key");
}

static bool known_section(const char *s, size_t n)
{
    static const char *const names[] = { "filesystem", "network", "monitor", "sandbox" };

    for (size_t i = 0; i < NF_ARRAY_SIZE(names); i++)
        if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
            return true;
    return false;
}

struct cfg_reader {
    const char *buf;
    size_t len;
    size_t pos;
    int line; /* number of the line last handed to inih */
    /* First error, kept; inih goes on after a handler error. */
    bool failed;
    int fail_line;
    struct nf_err fail;
    struct policy *pol;
};

static void reader_fail(struct cfg_reader *r, int line, const char *fmt, const char *a)
{
    if (r->failed)
        return;
    r->failed = true;
    r->fail_line = line;
    nf_err_set(&r->fail, EINVAL, fmt, a);
}

/* fgets for inih over our buffer. inih silently splits a line longer than
 * its buffer into two; we refuse such a line instead, and we see every
 * section header, so an unknown empty section is an error too. */
static char *reader_gets(char *str, int num, void *stream)
{
    struct cfg_reader *r = stream;
    const char *start;
    const char *nl;
    size_t n;
    size_t i;

    if (r->failed || r->pos >= r->len || num < 2)
        return NULL;
    start = r->buf + r->pos;
    nl = memchr(start, '\n', r->len - r->pos);
    n = nl ? (size_t)(nl - start) + 1 : r->len - r->pos;
    r->line++;
    /* inih needs room for '\r', '\n' and the NUL besides the text. */
    if (n + 1 > (size_t)num) {
        char limit[32];

        snprintf(limit, sizeof(limit), "%d", num - 3);
        reader_fail(r, r->line, "line too long (at most %s characters)", limit);
        return NULL;
    }
    r->pos += n;
    /* Leading whitespace is dropped here: to inih an indented line continues
     * the previous value, which would turn an indented `deny_write = ...`
     * into part of an allow_write path and silently drop the deny. A UTF-8
     * BOM on the first line goes too. */
    if (r->line == 1 && n >= 3 && memcmp(start, "\xef\xbb\xbf", 3) == 0) {
        start += 3;
        n -= 3;
    }
    for (i = 0; i < n && isspace((unsigned char)start[i]) && start[i] != '\n'; i++)
        ;
    memcpy(str, start + i, n - i);
    str[n - i] = '\0';
    if (str[0] == '[') {
        const char *close = strchr(str, ']');

        if (close && !known_section(str + 1, (size_t)(close - str - 1))) {
            char name[128];

            snprintf(name, sizeof(name), "%.*s", (int)(close - str - 1), str + 1);
            reader_fail(r, r->line, "[%s]: unknown section", name);
            return NULL;
        }
    }
    return str;
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
    struct cfg_reader *r = user;
    struct nf_err err = { 0 };

    if (r->failed)
        return 1;
    if (!*section) {
        r->failed = true;
        r->fail_line = r->line;
        nf_err_set(&r->fail, EINVAL, "%s: key outside a section", key);
        return 0;
    }
    if (cfg_apply(r->pol, section, key, value, &err) < 0) {
        r->failed = true;
        r->fail_line = r->line;
        nf_err_set(&r->fail, err.code, "[%s] %s: %s", section, key, err.msg);
        return 0;
    }
    return 1;
}

int cfg_parse_buffer(struct policy *pol, const char *file, const char *buf, size_t len,
                     struct nf_err *err)
{
    struct cfg_reader r = { .buf = buf, .len = len, .pol = pol };
    const char *nul = memchr(buf, '\0', len);
    int rc;

    if (nul) {
        int line = 1;

        for (const char *p = buf; p < nul; p++)
            line += *p == '\n';
        return nf_err_set(err, EINVAL, "%s:%d: contains a NUL byte", file, line);
    }
    rc = ini_parse_stream(reader_gets, &r, handler, &r);
    /* inih goes on after an error: report whichever came first. */
    if (r.failed && !(rc > 0 && rc < r.fail_line))
        return nf_err_set(err, r.fail.code, "%s:%d: %s", file, r.fail_line, r.fail.msg);
    if (rc > 0)
        return nf_err_set(err, EINVAL, "%s:%d: syntax error (expected [section] or key = value)",
                          file, rc);
    if (rc < 0)
        return nf_err_set(err, ENOMEM, "%s: cannot parse (out of memory)", file);
    return 0;
}

int cfg_load(struct policy *pol, const char *path, bool explicit, bool *loaded, struct nf_err *err)
{
    _cleanup_close_ int fd = -1;
    _cleanup_free_ char *buf = NULL;
    struct stat st;
    size_t got = 0;

    *loaded = false;
    /* O_NONBLOCK: a FIFO planted at the config path must not hang us. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (!explicit && (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
            return 0;
        return nf_err_sys(err, "config %s", path);
    }
    if (fstat(fd, &st) < 0)
        return nf_err_sys(err, "config %s", path);
    if (S_ISDIR(st.st_mode))
        return nf_err_set(err, EISDIR, "config %s: is a directory", path);
    if (!S_ISREG(st.st_mode))
        return nf_err_set(err, EINVAL, "config %s: not a regular file", path);
    if (st.st_size > CFG_MAX_SIZE)
        return nf_err_set(err, EFBIG, "config %s: larger than %d bytes", path, CFG_MAX_SIZE);
    buf = malloc((size_t)st.st_size + 1);
    if (!buf)
        return nf_err_sys(err, "out of memory");
    while (got < (size_t)st.st_size) {
        ssize_t n = RETRY_EINTR(read(fd, buf + got, (size_t)st.st_size - got));

        if (n < 0)
            return nf_err_sys(err, "config %s", path);
        if (n == 0)
            break;
        got += (size_t)n;
    }
    if (cfg_parse_buffer(pol, path, buf, got, err) < 0)
        return -1;
    *loaded = true;
    return 0;
}

size_t cfg_default_paths(const char *xdg, const char *home, char out[2][4096])
{
    struct nf_err ignored;
    size_t n = 0;
    char raw[4096];

    if (xdg && xdg[0] == '/' && snprintf(raw, sizeof(raw), "%s/nsfence/config.ini", xdg) < 4096 &&
        pol_path_normalize(raw, "/", NULL, out[n], 4096, &ignored) == 0)
        n++;
    if (home && home[0] == '/' &&
        snprintf(raw, sizeof(raw), "%s/.config/nsfence/config.ini", home) < 4096 &&
        pol_path_normalize(raw, "/", NULL, out[n], 4096, &ignored) == 0 &&
        (n == 0 || strcmp(out[0], out[n]) != 0))
        n++;
    return n;
}
