#include "src/policy.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int pol_strv_add(struct pol_strv *sv, const char *s, struct nf_err *err)
{
    char **v;
    char *copy;

    copy = strdup(s);
    if (!copy)
        return nf_err_sys(err, "out of memory");
    v = realloc(sv->v, (sv->n + 2) * sizeof(*v));
    if (!v) {
        free(copy);
        return nf_err_sys(err, "out of memory");
    }
    v[sv->n++] = copy;
    v[sv->n] = NULL;
    sv->v = v;
    return 0;
}

bool pol_strv_contains(const struct pol_strv *sv, const char *s)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strcmp(sv->v[i], s) == 0)
            return true;
    return false;
}

void pol_strv_free(struct pol_strv *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = 0;
}

int pol_init(struct policy *pol, const char *cwd, const char *home, struct nf_err *err)
{
    memset(pol, 0, sizeof(*pol));
    pol->mandatory_deny_depth = POL_DEFAULT_DEPTH;
    pol->network_enabled = true;
    pol->http_port = POL_DEFAULT_HTTP_PORT;
    pol->socks_port = POL_DEFAULT_SOCKS_PORT;
    pol->max_connections = POL_DEFAULT_MAX_CONNS;
    pol->monitor_enabled = true;
    pol->cwd = strdup(cwd);
    if (!pol->cwd)
        return nf_err_sys(err, "out of memory");
    if (home && home[0] == '/') {
        pol->home = strdup(home);
        if (!pol->home)
            return nf_err_sys(err, "out of memory");
    }
    return pol_strv_add(&pol->allow_write, cwd, err);
}

void pol_free(struct policy *pol)
{
    free(pol->cwd);
    free(pol->home);
    pol_strv_free(&pol->allow_write);
    pol_strv_free(&pol->deny_write);
    pol_strv_free(&pol->deny_read);
    pol_strv_free(&pol->allow_read);
    pol_strv_free(&pol->config_files);
    pol_strv_free(&pol->git_config_files);
    pol_strv_free(&pol->literal_paths);
    pol_strv_free(&pol->env_unset);
    pol_strv_free(&pol->git_safe_dirs);
    pol_strv_free(&pol->allow_domain);
    pol_strv_free(&pol->deny_domain);
    for (size_t i = 0; i < pol->n_deny_reasons; i++) {
        free(pol->deny_reasons[i].host);
        free(pol->deny_reasons[i].text);
    }
    free(pol->deny_reasons);
    pol_strv_free(&pol->deny_address);
    free(pol->parent_proxy);
    free(pol->parent_no_proxy);
    pol_strv_free(&pol->monitor_ignore);
    for (size_t i = 0; i < pol->n_ignore_violations; i++) {
        free(pol->ignore_violations[i].command);
        pol_strv_free(&pol->ignore_violations[i].patterns);
    }
    free(pol->ignore_violations);
    free(pol->monitor_log);
    memset(pol, 0, sizeof(*pol));
}

int pol_ignore_add(struct policy *pol, const char *command, const struct pol_strv *patterns,
                   struct nf_err *err)
{
    struct pol_ignore *v =
        realloc(pol->ignore_violations, (pol->n_ignore_violations + 1) * sizeof(*v));
    struct pol_ignore *e;

    if (!v)
        return nf_err_sys(err, "out of memory");
    pol->ignore_violations = v;
    e = &v[pol->n_ignore_violations];
    memset(e, 0, sizeof(*e));
    e->command = strdup(command);
    if (!e->command)
        return nf_err_sys(err, "out of memory");
    pol->n_ignore_violations++;
    for (size_t i = 0; i < patterns->n; i++)
        if (pol_strv_add(&e->patterns, patterns->v[i], err) < 0)
            return -1;
    return 0;
}

/* Append one component to out (which holds a normalised absolute path),
 * folding "." and "..". */
static int push_component(char *out, size_t *len, size_t outsz, const char *c, size_t clen)
{
    if (clen == 0 || (clen == 1 && c[0] == '.'))
        return 0;
    if (clen == 2 && c[0] == '.' && c[1] == '.') {
        while (*len > 1 && out[*len - 1] != '/')
            (*len)--;
        if (*len > 1)
            (*len)--; /* drop the separator, never the root */
        out[*len] = '\0';
        return 0;
    }
    if (*len + (*len > 1) + clen + 1 > outsz)
        return -1;
    if (*len > 1)
        out[(*len)++] = '/';
    memcpy(out + *len, c, clen);
    *len += clen;
    out[*len] = '\0';
    return 0;
}

static int push_path(char *out, size_t *len, size_t outsz, const char *p)
{
    while (*p) {
        const char *slash;
        size_t clen;

        while (*p == '/')
            p++;
        slash = strchr(p, '/');
        clen = slash ? (size_t)(slash - p) : strlen(p);
        if (push_component(out, len, outsz, p, clen) < 0)
            return -1;
        p += clen;
    }
    return 0;
}

int pol_path_normalize(const char *in, const char *cwd, const char *home, char *out, size_t outsz,
                       struct nf_err *err)
{
    size_t len = 1;
    const char *rest = in;

    if (outsz < 2)
        return nf_err_set(err, ENAMETOOLONG, "path buffer too small");
    if (!in || in[0] == '\0')
        return nf_err_set(err, EINVAL, "empty path");
    out[0] = '/';
    out[1] = '\0';
    if (in[0] == '~') {
        if (in[1] != '\0' && in[1] != '/')
            return nf_err_set(err, EINVAL, "%s: ~user paths are not supported; write the path out",
                              in);
        if (!home || home[0] != '/')
            return nf_err_set(err, EINVAL, "%s: $HOME is not set to an absolute path", in);
        if (push_path(out, &len, outsz, home) < 0)
            goto too_long;
        rest = in + 1;
    } else if (in[0] != '/') {
        if (!cwd || cwd[0] != '/')
            return nf_err_set(err, EINVAL, "%s: no working directory to resolve against", in);
        if (push_path(out, &len, outsz, cwd) < 0)
            goto too_long;
    }
    if (push_path(out, &len, outsz, rest) < 0)
        goto too_long;
    if (len >= PATH_MAX)
        goto too_long;
    return 0;

too_long:
    return nf_err_set(err, ENAMETOOLONG, "%.64s...: path too long", in);
}

bool pol_path_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

unsigned pol_path_depth(const char *path)
{
    unsigned d = 0;

    for (const char *p = path; *p; p++)
        if (*p == '/' && p[1] != '\0')
            d++;
    return d;
}

bool pol_path_names_git(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash && strcasecmp(slash + 1, ".git") == 0;
}

int pol_mode_parse(const char *s)
{
    if (strcmp(s, "namespaces") == 0)
        return POL_MODE_NAMESPACES;
    if (strcmp(s, "landlock") == 0)
        return POL_MODE_LANDLOCK;
    if (strcmp(s, "auto") == 0)
        return POL_MODE_AUTO;
    return -1;
}

const char *pol_mode_name(enum pol_mode m)
{
    switch (m) {
    case POL_MODE_NAMESPACES:
        return "namespaces";
    case POL_MODE_LANDLOCK:
        return "landlock";
    case POL_MODE_AUTO:
        return "auto";
    }
    return "?";
}

ssize_t pol_path_deepest(char *const *v, size_t n, const char *abs)
{
    ssize_t best = -1;

    for (size_t i = 0; i < n; i++)
        if (pol_path_within(abs, v[i]) && (ssize_t)strlen(v[i]) > best)
            best = (ssize_t)strlen(v[i]);
    return best;
}
