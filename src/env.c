#include "src/env.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/util.h"

struct envb {
    char **v;
    size_t n;
};

static int put(struct envb *e, const char *name, const char *value, struct nf_err *err)
{
    size_t nl = strlen(name);
    char *entry;

    bool placed = false;

    if (asprintf(&entry, "%s=%s", name, value) < 0)
        return nf_err_sys(err, "out of memory");
    /* Replace the first copy and drop any later one: shells and most
     * programs take the last copy of a duplicated name. */
    for (size_t i = 0; i < e->n;) {
        if (strncmp(e->v[i], name, nl) != 0 || e->v[i][nl] != '=') {
            i++;
            continue;
        }
        free(e->v[i]);
        if (!placed) {
            e->v[i++] = entry;
            placed = true;
            continue;
        }
        memmove(&e->v[i], &e->v[i + 1], (e->n - i) * sizeof(*e->v));
        e->n--;
    }
    if (placed)
        return 0;
    {
        char **v = realloc(e->v, (e->n + 2) * sizeof(*v));

        if (!v) {
            free(entry);
            return nf_err_sys(err, "out of memory");
        }
        e->v = v;
    }
    e->v[e->n++] = entry;
    e->v[e->n] = NULL;
    return 0;
}

static const char *lookup(const struct envb *e, const char *name)
{
    size_t nl = strlen(name);

    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->v[i], name, nl) == 0 && e->v[i][nl] == '=')
            return e->v[i] + nl + 1;
    return NULL;
}

/* Every copy of name goes. */
static void drop(struct envb *e, const char *name)
{
    size_t nl = strlen(name);

    for (size_t i = 0; i < e->n;) {
        if (strncmp(e->v[i], name, nl) != 0 || e->v[i][nl] != '=') {
            i++;
            continue;
        }
        free(e->v[i]);
        memmove(&e->v[i], &e->v[i + 1], (e->n - i) * sizeof(*e->v));
        e->n--;
    }
}

/* git's safe.directory for each directory, as srt's buildGitConfigEnv sets
 * it: numbering continues an inherited GIT_CONFIG_COUNT (an explicit 0 is
 * the caller's opt-out: nothing added); each directory, and it with "/" "*" appended (a repo
 * anywhere beneath it); more than 8 directories become a single `*`. */
#define GIT_SAFE_WILDCARD_THRESHOLD 8

static int put_git_entry(struct envb *e, unsigned long *n, const char *value, struct nf_err *err)
{
    char key[64];

    snprintf(key, sizeof(key), "GIT_CONFIG_KEY_%lu", *n);
    if (put(e, key, "safe.directory", err) < 0)
        return -1;
    snprintf(key, sizeof(key), "GIT_CONFIG_VALUE_%lu", *n);
    if (put(e, key, value, err) < 0)
        return -1;
    (*n)++;
    return 0;
}

static int put_git_safe_dirs(struct envb *e, const struct pol_strv *dirs, struct nf_err *err)
{
    const char *count = lookup(e, "GIT_CONFIG_COUNT");
    unsigned long start = 0, n;
    char buf[32];

    if (!dirs->n || (count && strcmp(count, "0") == 0))
        return 0;
    /* JavaScript's parseInt: leading digits, else 0. */
    for (const char *p = count; p && *p >= '0' && *p <= '9' && start < 1000000; p++)
        start = start * 10 + (unsigned long)(*p - '0');
    n = start;
    if (dirs->n > GIT_SAFE_WILDCARD_THRESHOLD) {
        if (put_git_entry(e, &n, "*", err) < 0)
            return -1;
    } else {
        for (size_t i = 0; i < dirs->n; i++) {
            _cleanup_free_ char *glob = NULL;
            const char *d = dirs->v[i];
            size_t len = strlen(d);

            if (asprintf(&glob, "%s%s*", d, len && d[len - 1] == '/' ? "" : "/") < 0) {
                glob = NULL;
                return nf_err_sys(err, "out of memory");
            }
            if (put_git_entry(e, &n, d, err) < 0 || put_git_entry(e, &n, glob, err) < 0)
                return -1;
        }
    }
    snprintf(buf, sizeof(buf), "%lu", n);
    return put(e, "GIT_CONFIG_COUNT", buf, err);
}

/* s single-quoted for a POSIX shell. */
static char *shell_quote(const char *s)
{
    size_t n = 2;
    char *out, *o;

    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 4 : 1;
    out = o = malloc(n + 1);
    if (!out)
        return NULL;
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

/* git runs GIT_SSH_COMMAND through a shell, ssh runs ProxyCommand through
 * another and expands % in it: the path of nsfence is quoted for both, so a
 * space, a quote or a % in it cannot change the command. */
static char *git_ssh_command(const char *self)
{
    bool plain = true;

    for (const char *p = self; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                strchr("/._+-", *p);
    if (plain) {
        char *out;

        if (asprintf(&out,
                     "ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='%s connect %%h "
                     "%%p'",
                     self) < 0)
            return NULL;
        return out;
    }
    char *pct = malloc(strlen(self) * 2 + 1), *o = pct;
    char *inner = NULL, *proxy = NULL, *arg = NULL, *out = NULL;

    if (!pct)
        return NULL;
    for (const char *p = self; *p; p++) {
        *o++ = *p;
        if (*p == '%')
            *o++ = '%';
    }
    *o = '\0';
    inner = shell_quote(pct);
    if (inner && asprintf(&proxy, "ProxyCommand=%s connect %%h %%p", inner) >= 0 &&
        (arg = shell_quote(proxy)) &&
        asprintf(&out, "ssh -o ControlMaster=no -o ControlPath=none -o %s", arg) < 0)
        out = NULL;
    free(pct);
    free(inner);
    free(proxy);
    free(arg);
    return out;
}

int env_build(char *const *base, const struct policy *pol, const char *self, char ***out,
              struct nf_err *err)
{
    struct envb e = { 0 };
    char http[64], socks[64], port[16];
    char *java;
    size_t n = 0;
    int rc;

    while (base && base[n])
        n++;
    e.v = calloc(n + 1, sizeof(*e.v));
    if (!e.v)
        return nf_err_sys(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        e.v[i] = strdup(base[i]);
        if (!e.v[i]) {
            e.n = i;
            goto oom;
        }
    }
    e.n = n;
    /* Credentials the settings deny are absent inside, before anything is
     * set: a denied GIT_CONFIG_COUNT restarts git's numbering. */
    for (size_t i = 0; i < pol->env_unset.n; i++)
        drop(&e, pol->env_unset.v[i]);
    if (put(&e, "SANDBOX_RUNTIME", "1", err) < 0)
        goto fail;
    if (put_git_safe_dirs(&e, &pol->git_safe_dirs, err) < 0)
        goto fail;
    if (pol->network_enabled) {
        static const char *const http_vars[] = {
            "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",       "ALL_PROXY",
            "all_proxy",  "GRPC_PROXY",  "grpc_proxy", "DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY",
        };
        const char *jto;

        snprintf(http, sizeof(http), "http://localhost:%u", pol->http_port);
        snprintf(socks, sizeof(socks), "socks5h://localhost:%u", pol->socks_port);
        snprintf(port, sizeof(port), "%u", pol->http_port);
        for (size_t i = 0; i < NF_ARRAY_SIZE(http_vars); i++)
            if (put(&e, http_vars[i], http, err) < 0)
                goto fail;
        if (put(&e, "NO_PROXY", "localhost,127.0.0.1,::1", err) < 0 ||
            put(&e, "no_proxy", "localhost,127.0.0.1,::1", err) < 0 ||
            put(&e, "FTP_PROXY", socks, err) < 0 || put(&e, "ftp_proxy", socks, err) < 0)
            goto fail;
        /* rsync speaks HTTP CONNECT to RSYNC_PROXY, not SOCKS. */
        snprintf(socks, sizeof(socks), "localhost:%u", pol->http_port);
        if (put(&e, "RSYNC_PROXY", socks, err) < 0 ||
            put(&e, "CLOUDSDK_PROXY_TYPE", "http", err) < 0 ||
            put(&e, "CLOUDSDK_PROXY_ADDRESS", "localhost", err) < 0 ||
            put(&e, "CLOUDSDK_PROXY_PORT", port, err) < 0 ||
            put(&e, "NODE_USE_ENV_PROXY", "1", err) < 0)
            goto fail;
        /* The JVM ignores the *_PROXY variables; its system properties, last
         * one winning, go after whatever the caller had. */
        jto = lookup(&e, "JAVA_TOOL_OPTIONS");
        if (asprintf(&java,
                     "%s%s-Dhttp.proxyHost=localhost -Dhttp.proxyPort=%u "
                     "-Dhttps.proxyHost=localhost -Dhttps.proxyPort=%u "
                     "-Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]",
                     jto ? jto : "", jto && *jto ? " " : "", pol->http_port, pol->http_port) < 0)
            goto oom;
        rc = put(&e, "JAVA_TOOL_OPTIONS", java, err);
        free(java);
        if (rc < 0)
            goto fail;
        /* git over ssh: the connection goes through the HTTP proxy with
         * CONNECT, made by nsfence itself (no socat in the sandbox). */
        if (self) {
            char *ssh = git_ssh_command(self);

            if (!ssh)
                goto oom;
            rc = put(&e, "GIT_SSH_COMMAND", ssh, err);
            free(ssh);
            if (rc < 0)
                goto fail;
        }
    }
    *out = e.v;
    return 0;
oom:
    nf_err_sys(err, "out of memory");
fail:
    env_free(e.v);
    return -1;
}

int env_fix_tmpdir(char ***envp, const struct fs_plan *fs, char *old, size_t oldsz,
                   struct nf_err *err)
{
    struct envb e = { .v = *envp };
    const char *t;
    char norm[PATH_MAX];
    struct nf_err ignored;
    bool usable = false;
    int rc;

    while (e.v && e.v[e.n])
        e.n++;
    t = lookup(&e, "TMPDIR");
    if (!t || !*t)
        return 0;
    /* Lexical, as everything the plan lists is resolved already: a TMPDIR
     * reached through a symlink is replaced by /tmp, which works as well. */
    if (t[0] == '/' && pol_path_normalize(t, "/", NULL, norm, sizeof(norm), &ignored) == 0) {
        /* The private /tmp is empty: only /tmp itself exists there (with
         * no filesystem rules, the host's /tmp and every path is there). */
        usable = strcmp(norm, "/tmp") == 0 || fs->unrestricted;
        for (size_t i = 0; !usable && i < fs->n_write_roots; i++)
            usable = pol_path_within(norm, fs->write_roots[i]) && fs_plan_writable(fs, norm);
    }
    if (usable)
        return 0;
    snprintf(old, oldsz, "%s", t);
    rc = put(&e, "TMPDIR", "/tmp", err);
    *envp = e.v;
    return rc < 0 ? -1 : 1;
}

int env_set(char ***envp, const char *name, const char *value, struct nf_err *err)
{
    struct envb e = { .v = *envp };
    int rc;

    while (e.v && e.v[e.n])
        e.n++;
    rc = put(&e, name, value, err);
    *envp = e.v;
    return rc;
}

void env_unset(char **envp, const char *name)
{
    struct envb e = { .v = envp };

    while (e.v && e.v[e.n])
        e.n++;
    drop(&e, name);
}

void env_free(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}
