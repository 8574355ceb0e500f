/* srt's JSON settings → the policy (see settings.h). The walk below checks
 * each object's keys as it meets them, so the first problem in the file is
 * the one reported, and every value's type before it is kept. */
#include "src/settings.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/host.h"
#include "proxy/parent.h"
#include "proxy/rules.h"
#include "src/config.h"
#include "src/log.h"
#include "src/util.h"

#define KEY_PATH_MAX 256

struct walk {
    const char *file;
    struct srt_settings *s;
    struct nf_err *err;
};

/* "FILE: KEYPATH: what", on one line. */
__attribute__((format(printf, 3, 4))) static int fail(struct walk *w, const char *path,
                                                      const char *fmt, ...)
{
    char msg[NF_ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return nf_err_set(w->err, EINVAL, "%s: %s: %s", w->file, path[0] ? path : "(root)", msg);
}

/* A key as it appears in a key path: names as they are, a record's keys
 * (any text) quoted, cut short, control characters shown as '?', so the
 * message stays one line. */
static void key_path(char *out, const char *parent, const char *key, bool quoted)
{
    char k[72];
    size_t n = 0;

    for (const char *p = key; *p && n < 64; p++)
        k[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
    if (key[0] && strlen(key) > 64)
        k[n++] = '.', k[n++] = '.', k[n++] = '.';
    k[n] = '\0';
    if (quoted)
        snprintf(out, KEY_PATH_MAX, "%s[\"%s\"]", parent, k);
    else
        snprintf(out, KEY_PATH_MAX, "%s%s%s", parent, parent[0] ? "." : "", k);
}

static void index_path(char *out, const char *parent, size_t i)
{
    snprintf(out, KEY_PATH_MAX, "%s[%zu]", parent, i);
}

static int note(struct walk *w, const char *path, const char *why)
{
    char line[NF_ERR_MSG_MAX];

    snprintf(line, sizeof(line), "%s: %s: ignored: %s", w->file, path, why);
    return pol_strv_add(&w->s->notes, line, w->err);
}

/* ---- typed values ------------------------------------------------------ */

static int get_bool(struct walk *w, const char *path, json_t *v, struct srt_opt_bool *out)
{
    if (!json_is_boolean(v))
        return fail(w, path, "expected true or false");
    out->set = true;
    out->val = json_is_true(v);
    return 0;
}

/* A JavaScript number that is an integer (3.0 counts), within min..max. */
static int get_uint(struct walk *w, const char *path, json_t *v, unsigned min, unsigned max,
                    unsigned *out)
{
    double d;

    if (json_is_integer(v)) {
        json_int_t n = json_integer_value(v);

        if (n < (json_int_t)min || n > (json_int_t)max)
            return fail(w, path, "expected an integer from %u to %u", min, max);
        *out = (unsigned)n;
        return 0;
    }
    if (!json_is_real(v))
        return fail(w, path, "expected an integer from %u to %u", min, max);
    d = json_real_value(v);
    if (!(d >= min && d <= max) || d != (double)(long long)d)
        return fail(w, path, "expected an integer from %u to %u", min, max);
    *out = (unsigned)d;
    return 0;
}

static int get_string(struct walk *w, const char *path, json_t *v, bool nonempty, char **out)
{
    char *copy;

    if (!json_is_string(v))
        return fail(w, path, "expected a string");
    if (nonempty && json_string_length(v) == 0)
        return fail(w, path, "must not be empty");
    copy = strdup(json_string_value(v));
    if (!copy)
        return nf_err_sys(w->err, "out of memory");
    free(*out);
    *out = copy;
    return 0;
}

/* A string checked but not kept. */
static int check_string(struct walk *w, const char *path, json_t *v, bool nonempty)
{
    if (!json_is_string(v))
        return fail(w, path, "expected a string");
    if (nonempty && json_string_length(v) == 0)
        return fail(w, path, "must not be empty");
    return 0;
}

static int get_strv(struct walk *w, const char *path, json_t *v, bool nonempty,
                    struct pol_strv *out)
{
    char p[KEY_PATH_MAX];
    size_t i;
    json_t *e;

    if (!json_is_array(v))
        return fail(w, path, "expected an array of strings");
    json_array_foreach(v, i, e)
    {
        index_path(p, path, i);
        if (check_string(w, p, e, nonempty) < 0)
            return -1;
        if (out && pol_strv_add(out, json_string_value(e), w->err) < 0)
            return -1;
    }
    return 0;
}

static int check_enum(struct walk *w, const char *path, json_t *v, const char *const *names,
                      size_t n, const char *expected)
{
    if (json_is_string(v))
        for (size_t i = 0; i < n; i++)
            if (strcmp(json_string_value(v), names[i]) == 0)
                return 0;
    return fail(w, path, "expected %s", expected);
}

static int check_binary_path(struct walk *w, const char *path, json_t *v)
{
    if (check_string(w, path, v, false) < 0)
        return -1;
    if (json_string_length(v) == 0)
        return fail(w, path, "Path cannot be empty");
    if (json_string_value(v)[0] != '/')
        return fail(w, path, "Binary path must be absolute");
    return 0;
}

static int expect_object(struct walk *w, const char *path, json_t *v)
{
    if (!json_is_object(v))
        return fail(w, path, "expected an object");
    return 0;
}

static int unknown(struct walk *w, const char *path)
{
    return fail(w, path, "unknown key");
}

static int missing(struct walk *w, const char *parent, const char *key)
{
    char p[KEY_PATH_MAX];

    key_path(p, parent, key, false);
    return fail(w, p, "required");
}

/* ---- filesystem -------------------------------------------------------- */

static bool has_glob_chars(const char *s)
{
    return strpbrk(s, "*?[]") != NULL;
}

/* denyRead, allowRead, allowWrite, denyWrite: "path" or {path, literal: true}. */
static int get_paths(struct walk *w, const char *path, json_t *v, bool deny, struct srt_paths *out)
{
    static const char shape[] = "Expected a path, or { \"path\": \"<path>\", \"literal\": true }";
    char p[KEY_PATH_MAX];
    size_t i;
    json_t *e;

    if (!json_is_array(v))
        return fail(w, path, "expected an array");
    free(out->v);
    out->n = 0;
    out->v = calloc(json_array_size(v) + 1, sizeof(*out->v));
    if (!out->v)
        return nf_err_sys(w->err, "out of memory");
    json_array_foreach(v, i, e)
    {
        struct srt_path *sp = &out->v[out->n];
        const char *str;

        index_path(p, path, i);
        if (json_is_string(e)) {
            str = json_string_value(e);
        } else if (json_is_object(e) && json_object_size(e) == 2 &&
                   json_is_string(json_object_get(e, "path")) &&
                   json_is_true(json_object_get(e, "literal"))) {
            str = json_string_value(json_object_get(e, "path"));
            sp->literal = true;
        } else {
            return fail(w, p, "%s", shape);
        }
        if (!*str)
            return fail(w, p, "Path cannot be empty");
        /* srt refuses an inert deny glob: as a pattern it matches nothing,
         * so it would deny nothing. */
        if (deny && !sp->literal && has_glob_chars(str) && (str[0] == '/' || str[0] == '~') &&
            str[strlen(str) - 1] == '/') {
            size_t len = strlen(str);

            while (len > 0 && str[len - 1] == '/')
                len--;
            return fail(w, p,
                        "Deny glob \"%s\" ends in a separator, so as a pattern it can match no "
                        "path. Write \"%.*s\", which is also read as the path of that name where "
                        "it exists, or add a \"**\" segment to match at any depth.",
                        str, (int)len, str);
        }
        sp->path = strdup(str);
        if (!sp->path)
            return nf_err_sys(w->err, "out of memory");
        out->n++;
    }
    return 0;
}

static int walk_filesystem(struct walk *w, json_t *o)
{
    static const char *const required[] = { "denyRead", "allowWrite", "denyWrite" };
    char p[KEY_PATH_MAX];
    const char *k;
    json_t *v;

    if (expect_object(w, "filesystem", o) < 0)
        return -1;
    json_object_foreach(o, k, v)
    {
        key_path(p, "filesystem", k, false);
        if (strcmp(k, "disabled") == 0) {
            if (get_bool(w, p, v, &w->s->filesystem.disabled) < 0)
                return -1;
        } else if (strcmp(k, "denyRead") == 0) {
            if (get_paths(w, p, v, true, &w->s->filesystem.deny_read) < 0)
                return -1;
        } else if (strcmp(k, "allowRead") == 0) {
            if (get_paths(w, p, v, false, &w->s->filesystem.allow_read) < 0)
                return -1;
        } else if (strcmp(k, "allowWrite") == 0) {
            if (get_paths(w, p, v, false, &w->s->filesystem.allow_write) < 0)
                return -1;
        } else if (strcmp(k, "denyWrite") == 0) {
            if (get_paths(w, p, v, true, &w->s->filesystem.deny_write) < 0)
                return -1;
        } else if (strcmp(k, "allowGitConfig") == 0) {
            if (get_bool(w, p, v, &w->s->filesystem.allow_git_config) < 0)
                return -1;
        } else {
            return unknown(w, p);
        }
    }
    for (size_t i = 0; i < NF_ARRAY_SIZE(required); i++)
        if (!json_object_get(o, required[i]))
            return missing(w, "filesystem", required[i]);
    return 0;
}

/* ---- network ----------------------------------------------------------- */

static int walk_reasons(struct walk *w, const char *path, json_t *o)
{
    struct srt_settings *s = w->s;
    char p[KEY_PATH_MAX];
    const char *k;
    json_t *v;

    if (expect_object(w, path, o) < 0)
        return -1;
    json_object_foreach(o, k, v)
    {
        struct srt_reason *r;

        key_path(p, path, k, true);
        if (check_string(w, p, v, true) < 0)
            return -1;
        r = realloc(s->network.reasons, (s->network.n_reasons + 1) * sizeof(*r));
        if (!r)
            return nf_err_sys(w->err, "out of memory");
        s->network.reasons = r;
        r += s->network.n_reasons;
        r->entry = strdup(k);
        r->text = strdup(json_string_value(v));
        s->network.n_reasons++;
        if (!r->entry || !r->text)
            return nf_err_sys(w->err, "out of memory");
    }
    return 0;
}

static int walk_parent_proxy(struct walk *w, const char *path, json_t *o)
{
    char p[KEY_PATH_MAX];
    const char *k;
    json_t *v;

    if (expect_object(w, path, o) < 0)
        return -1;
    w->s->network.has_parent_proxy = true;
    json_object_foreach(o, k, v)
    {
        key_path(p, path, k, false);
        if (strcmp(k, "http") == 0) {
            if (get_string(w, p, v, true, &w->s->network.parent_http) < 0)
                return -1;
        } else if (strcmp(k, "https") == 0) {
            if (get_string(w, p, v, true, &w->s->network.parent_https) < 0)
                return -1;
        } else if (strcmp(k, "noProxy") == 0) {
            if (get_string(w, p, v, false, &w->s->network.parent_no_proxy) < 0)
                return -1;
        } else {
            return unknown(w, p);
        }
    }
    return 0;
}

static int walk_network(struct walk *w, json_t *o)
{
    static const char *const required[] = { "allowedDomains", "deniedDomains" };
    static const char *const targets[] = { "refuse", "asSpelled", "normalize" };
    struct srt_settings *s = w->s;
    char p[KEY_PATH_MAX];
    const char *k;
    json_t *v;

    if (expect_object(w, "network", o) < 0)
        return -1;
    json_object_foreach(o, k, v)
    {
        int rc = 0;

        key_path(p, "network", k, false);
        if (strcmp(k, "allowedDomains") == 0) {
            rc = get_strv(w, p, v, false, &s->network.allowed_domains);
        } else if (strcmp(k, "deniedDomains") == 0) {
            rc = get_strv(w, p, v, false, &s->network.denied_domains);
        } else if (strcmp(k, "deniedDomainReasons") == 0) {
            rc = walk_reasons(w, p, v);
        } else if (strcmp(k, "strictAllowlist") == 0) {
            rc = get_bool(w, p, v, &s->network.strict_allowlist);
        } else if (strcmp(k, "deniedResolvedAddresses") == 0) {
            rc = get_strv(w, p, v, false, &s->network.denied_addresses);
        } else if (strcmp(k, "allowUnixSockets") == 0) {
            rc = get_strv(w, p, v, false, NULL);
            if (rc == 0)
                rc = note(w, p,
                          "srt ignores it on Linux (seccomp cannot filter sockets by path); "
                          "use allowAllUnixSockets");
        } else if (strcmp(k, "allowAllUnixSockets") == 0) {
            rc = get_bool(w, p, v, &s->network.allow_all_unix_sockets);
        } else if (strcmp(k, "allowLocalBinding") == 0) {
            struct srt_opt_bool b;

            rc = get_bool(w, p, v, &b);
            if (rc == 0)
                rc = note(w, p,
                          "srt ignores it on Linux (the sandbox's own loopback is always "
                          "usable)");
        } else if (strcmp(k, "allowMachLookup") == 0) {
            rc = get_strv(w, p, v, false, NULL);
            if (rc == 0)
                rc = note(w, p, "macOS only");
        } else if (strcmp(k, "httpProxyPort") == 0) {
            rc = get_uint(w, p, v, 1, 65535, &s->network.http_proxy_port);
        } else if (strcmp(k, "socksProxyPort") == 0) {
            rc = get_uint(w, p, v, 1, 65535, &s->network.socks_proxy_port);
        } else if (strcmp(k, "mitmProxy") == 0) {
            rc = expect_object(w, p, v);
            s->network.has_mitm_proxy = true;
        } else if (strcmp(k, "filterRequest") == 0) {
            s->network.has_filter_request = true;
        } else if (strcmp(k, "allowPlaintextHeaderSet") == 0) {
            rc = get_bool(w, p, v, &s->network.allow_plaintext_header_set);
        } else if (strcmp(k, "stripResponseHeaders") == 0) {
            rc = get_strv(w, p, v, true, NULL);
            s->network.has_strip_response_headers = true;
            s->network.n_strip_response_headers = json_is_array(v) ? json_array_size(v) : 0;
        } else if (strcmp(k, "refuseOpaqueTunnels") == 0) {
            rc = get_bool(w, p, v, &s->network.refuse_opaque_tunnels);
        } else if (strcmp(k, "requireHostMatch") == 0) {
            rc = get_bool(w, p, v, &s->network.require_host_match);
        } else if (strcmp(k, "ambiguousRequestTarget") == 0) {
            rc = check_enum(w, p, v, targets, NF_ARRAY_SIZE(targets),
                            "\"refuse\", \"asSpelled\" or \"normalize\"");
            if (rc == 0)
                rc = get_string(w, p, v, false, &s->network.ambiguous_request_target);
        } else if (strcmp(k, "tlsTerminate") == 0) {
            rc = expect_object(w, p, v);
            s->network.has_tls_terminate = true;
        } else if (strcmp(k, "parentProxy") == 0) {
            rc = walk_parent_proxy(w, p, v);
        } else {
            rc = unknown(w, p);
        }
        if (rc < 0)
            return -1;
    }
    for (size_t i = 0; i < NF_ARRAY_SIZE(required); i++)
        if (!json_object_get(o, required[i]))
            return missing(w, "network", required[i]);
    return 0;
}

/* ---- credentials ------------------------------------------------------- */

static bool env_name_ok(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/* One credentials.files or credentials.envVars entry. The masking
 * refinements (extract, decode, ...) are type-checked and otherwise only
 * matter with mode mask, which settings_apply refuses. */
static int walk_cred(struct walk *w, const char *path, json_t *o, bool file, struct srt_cred *out)
{
    static const char *const modes[] = { "deny", "mask" };
    static const char *const nomatch[] = { "warn", "deny", "error" };
    static const char *const decodes[] = { "jwt" };
    const char *id = file ? "path" : "name";
    char p[KEY_PATH_MAX];
    const char *k;
    json_t *v;
    bool extras = false;

    if (expect_object(w, path, o) < 0)
        return -1;
    json_object_foreach(o, k, v)
    {
        int rc;

        key_path(p, path, k, false);
        if (strcmp(k, id) == 0) {
            rc = get_string(w, p, v, file, &out->name);
            if (rc == 0 && file && !*out->name)
                rc = fail(w, p, "Path cannot be empty");
            if (rc == 0 && !file && !env_name_ok(out->name))
                rc = fail(w, p,
                          "Environment variable name must start with a letter or underscore "
                          "and contain only letters, digits, and underscores");
        } else if (strcmp(k, "mode") == 0) {
            rc = check_enum(w, p, v, modes, NF_ARRAY_SIZE(modes), "\"deny\" or \"mask\"");
            out->mask = rc == 0 && strcmp(json_string_value(v), "mask") == 0;
        } else if (strcmp(k, "extract") == 0) {
            rc = check_string(w, p, v, false);
            extras = true;
        } else if (strcmp(k, "onExtractNoMatch") == 0) {
            rc = check_enum(w, p, v, nomatch, NF_ARRAY_SIZE(nomatch),
                            "\"warn\", \"deny\" or \"error\"");
            extras = true;
        } else if (strcmp(k, "decode") == 0) {
            rc = check_enum(w, p, v, decodes, NF_ARRAY_SIZE(decodes), "\"jwt\"");
            extras = true;
        } else if (strcmp(k, "maskClaims") == 0) {
            rc = get_strv(w, p, v, true, NULL);
            extras = true;
        } else if (file && strcmp(k, "maskDuplicates") == 0) {
            struct srt_opt_bool b;

            rc = get_bool(w, p, v, &b);
            extras = true;
        } else if (strcmp(k, "injectHosts") == 0) {
            rc = get_strv(w, p, v, false, NULL);
            extras = true;
        } else {
            rc = unknown(w, p);
        }
        if (rc < 0)
            return -1;
    }
    if (!out->name)
        return missing(w, path, id);
    if (!json_object_get(o, "mode"))
        return missing(w, path, "mode");
    if (extras && !out->mask)
        return note(w, path,
                    "extract, decode, maskClaims, maskDuplicates and injectHosts only "
                    "act with mode \"mask\"");
    return 0;
}

static int walk_creds(struct walk *w, const char *path, json_t *v, bool file, struct srt_cred **out,
                      size_t *n)
{
    char p[KEY_PATH_MAX];
    size_t i;
    json_t *e;

    if (!json_is_array(v))
        return fail(w, path, "expected an array");
    free(*out);
    *n = 0;
    *out = calloc(json_array_size(v) + 1, sizeof(**out));
    if (!*out)
        return nf_err_sys(w->err, "out of memory");
    json_array_foreach(v, i, e)
    {
        index_path(p, path, i);
        (*n)++;
        if (walk_cred(w, p, e, file, &(*out)[i]) < 0)
            return -1;
    }
    return 0;
}

static int walk_credentials(struct walk *w, json_t *o)
{
    struct srt_settings *s = w->s;
    char p[KEY_PATH_MAX];
    const char *k;
    json_t *v;

    if (expect_object(w, "credentials", o) < 0)
        return -1;
    s->has_credentials = true;
    json_object_foreach(o, k, v)
    {
        int rc;

        key_path(p, "credentials", k, false);
        if (strcmp(k, "files") == 0) {
            rc = walk_creds(w, p, v, true, &s->cred_files, &s->n_cred_files);
        } else if (strcmp(k, "envVars") == 0) {
            rc = walk_creds(w, p, v, false, &s->cred_env, &s->n_cred_env);
        } else if (strcmp(k, "allowPlaintextInject") == 0) {
            struct srt_opt_bool b;

            rc = get_bool(w, p, v, &b);
            if (rc == 0)
                rc = note(w, p, "it only acts on masked credentials, which nsfence refuses");
        } else if (strcmp(k, "awsPairs") == 0) {
            rc = json_is_array(v) ? 0 : fail(w, p, "expected an array");
            s->has_aws_pairs = true;
        } else if (strcmp(k, "sigv4") == 0) {
            rc = expect_object(w, p, v);
            s->has_sigv4 = true;
        } else {
            rc = unknown(w, p);
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---- the rest of the top level ------------------------------------------ */

static int walk_ignore(struct walk *w, json_t *o)
{
    struct srt_settings *s = w->s;
    char p[KEY_PATH_MAX];
    const char *k;
    json_t *v;

    if (expect_object(w, "ignoreViolations", o) < 0)
        return -1;
    free(s->ignore);
    s->ignore = calloc(json_object_size(o) + 1, sizeof(*s->ignore));
    if (!s->ignore)
        return nf_err_sys(w->err, "out of memory");
    json_object_foreach(o, k, v)
    {
        struct srt_ignore *ig = &s->ignore[s->n_ignore++];

        key_path(p, "ignoreViolations", k, true);
        ig->command = strdup(k);
        if (!ig->command)
            return nf_err_sys(w->err, "out of memory");
        if (get_strv(w, p, v, false, &ig->paths) < 0)
            return -1;
    }
    return 0;
}

static int walk_small_object(struct walk *w, const char *name, json_t *o)
{
    char p[KEY_PATH_MAX];
    const char *k;
    json_t *v;
    bool ripgrep = strcmp(name, "ripgrep") == 0;

    if (expect_object(w, name, o) < 0)
        return -1;
    json_object_foreach(o, k, v)
    {
        int rc;

        key_path(p, name, k, false);
        if (ripgrep && strcmp(k, "command") == 0)
            rc = check_string(w, p, v, false);
        else if (ripgrep && strcmp(k, "args") == 0)
            rc = get_strv(w, p, v, false, NULL);
        else if (!ripgrep && strcmp(k, "applyPath") == 0)
            rc = check_string(w, p, v, false);
        else if (strcmp(k, "argv0") == 0)
            rc = check_string(w, p, v, false);
        else
            rc = unknown(w, p);
        if (rc < 0)
            return -1;
    }
    if (ripgrep && !json_object_get(o, "command"))
        return missing(w, name, "command");
    return note(w, name,
                ripgrep ? "nsfence scans for the mandatory denies itself; it runs no ripgrep"
                        : "nsfence installs its own seccomp filters; it runs no apply-seccomp");
}

static int walk_git(struct walk *w, json_t *o)
{
    char p[KEY_PATH_MAX];
    const char *k;
    json_t *v;

    if (expect_object(w, "git", o) < 0)
        return -1;
    json_object_foreach(o, k, v)
    {
        key_path(p, "git", k, false);
        if (strcmp(k, "safeDirectories") != 0)
            return unknown(w, p);
        if (get_strv(w, p, v, false, &w->s->git_safe_dirs) < 0)
            return -1;
    }
    return 0;
}

/* nsfence's own keys, which srt does not have: {"nsfence": {"mode": ...}}. */
static int walk_nsfence(struct walk *w, json_t *o)
{
    char p[KEY_PATH_MAX];
    const char *k;
    json_t *v;

    if (expect_object(w, "nsfence", o) < 0)
        return -1;
    json_object_foreach(o, k, v)
    {
        int m;

        key_path(p, "nsfence", k, false);
        if (strcmp(k, "mode") != 0)
            return unknown(w, p);
        m = json_is_string(v) ? pol_mode_parse(json_string_value(v)) : -1;
        if (m < 0)
            return fail(w, p, "expected \"namespaces\", \"landlock\" or \"auto\"");
        w->s->mode = m;
    }
    return 0;
}

static int walk_top(struct walk *w, json_t *root)
{
    struct srt_settings *s = w->s;
    const char *k;
    json_t *v;

    if (!json_is_object(root))
        return fail(w, "", "expected an object");
    json_object_foreach(root, k, v)
    {
        char p[KEY_PATH_MAX];
        int rc;

        key_path(p, "", k, false);
        if (strcmp(k, "network") == 0) {
            rc = walk_network(w, v);
        } else if (strcmp(k, "filesystem") == 0) {
            rc = walk_filesystem(w, v);
        } else if (strcmp(k, "credentials") == 0) {
            rc = walk_credentials(w, v);
        } else if (strcmp(k, "ignoreViolations") == 0) {
            rc = walk_ignore(w, v);
        } else if (strcmp(k, "enableWeakerNestedSandbox") == 0) {
            rc = get_bool(w, p, v, &s->weaker_nested);
        } else if (strcmp(k, "allowNestedUserNamespaces") == 0) {
            rc = get_bool(w, p, v, &s->nested_userns);
        } else if (strcmp(k, "enableWeakerNetworkIsolation") == 0 ||
                   strcmp(k, "allowAppleEvents") == 0 || strcmp(k, "allowPty") == 0) {
            struct srt_opt_bool b;

            rc = get_bool(w, p, v, &b);
            if (rc == 0)
                rc = note(w, p, "macOS only");
        } else if (strcmp(k, "windows") == 0) {
            rc = expect_object(w, p, v);
            if (rc == 0)
                rc = note(w, p, "Windows only");
        } else if (strcmp(k, "ripgrep") == 0 || strcmp(k, "seccomp") == 0) {
            rc = walk_small_object(w, k, v);
        } else if (strcmp(k, "mandatoryDenySearchDepth") == 0) {
            rc = get_uint(w, p, v, 1, POL_MAX_DEPTH, &s->mandatory_deny_depth);
        } else if (strcmp(k, "bwrapPath") == 0 || strcmp(k, "socatPath") == 0) {
            rc = check_binary_path(w, p, v);
            if (rc == 0)
                rc = note(w, p,
                          strcmp(k, "bwrapPath") == 0
                              ? "nsfence builds the sandbox itself; it runs no bubblewrap"
                              : "nsfence serves the proxy endpoints itself; it runs no socat");
        } else if (strcmp(k, "javaAgentJarPath") == 0) {
            rc = check_binary_path(w, p, v);
            if (rc == 0)
                rc = note(w, p,
                          "nsfence points the JVM at its proxy with JAVA_TOOL_OPTIONS system "
                          "properties; it loads no agent");
        } else if (strcmp(k, "nsfence") == 0) {
            rc = walk_nsfence(w, v);
        } else if (strcmp(k, "git") == 0) {
            rc = walk_git(w, v);
        } else {
            /* srt strips an unknown top-level key; nsfence cannot tell a
             * newer srt's rule from a typo, and a rule is never dropped. */
            rc = fail(w, p, "unknown key (srt 0.0.83 has no such setting)");
        }
        if (rc < 0)
            return -1;
    }
    if (!json_object_get(root, "network"))
        return missing(w, "", "network");
    if (!json_object_get(root, "filesystem"))
        return missing(w, "", "filesystem");
    return 0;
}

int settings_parse(const char *buf, size_t len, const char *file, struct srt_settings *out,
                   struct nf_err *err)
{
    json_auto_t *root = NULL;
    struct walk w = { .file = file, .s = out, .err = err };
    json_error_t jerr;
    size_t i;

    memset(out, 0, sizeof(*out));
    out->mode = -1;
    out->file = strdup(file);
    if (!out->file)
        return nf_err_sys(err, "out of memory");
    for (i = 0; i < len && buf[i] && strchr(" \t\r\n\f\v", buf[i]); i++)
        ;
    if (i == len) {
        nf_err_set(err, EINVAL, "%s: is empty. Delete it, or put a config in it.", file);
        goto fail;
    }
    /* Duplicate keys: the two spellings of one setting would leave which
     * one holds to the parser. */
    root = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!root) {
        char text[JSON_ERROR_TEXT_LENGTH];
        size_t n = 0;

        for (const char *p = jerr.text; *p && n + 1 < sizeof(text); p++)
            text[n++] = (unsigned char)*p < 0x20 ? '?' : *p;
        text[n] = '\0';
        nf_err_set(err, EINVAL, "%s:%d:%d: not valid JSON: %s", file, jerr.line, jerr.column, text);
        goto fail;
    }
    if (walk_top(&w, root) < 0)
        goto fail;
    return 0;
fail:
    settings_free(out);
    return -1;
}

/* ---- settings → policy -------------------------------------------------- */

/* srt's refusal: the file asks for something nsfence cannot do here, and
 * running without it would drop a rule. */
static int refuse(const struct srt_settings *s, const char *path, const char *what,
                  struct nf_err *err)
{
    return nf_err_set(err, ENOTSUP,
                      "%s: %s: %s; nsfence cannot honour it and refuses to run "
                      "rather than drop it",
                      s->file, path, what);
}

static int refusals(const struct srt_settings *s, struct nf_err *err)
{
    if (s->network.has_tls_terminate)
        return refuse(s, "network.tlsTerminate", "TLS termination", err);
    if (s->network.has_mitm_proxy)
        return refuse(s, "network.mitmProxy", "an upstream MITM proxy on a unix socket", err);
    if (s->network.has_filter_request)
        return refuse(s, "network.filterRequest",
                      "a per-request filter (a library callback; a settings file cannot hold one)",
                      err);
    if (s->network.refuse_opaque_tunnels.set && s->network.refuse_opaque_tunnels.val)
        return refuse(s, "network.refuseOpaqueTunnels",
                      "refusing every opaque tunnel (nsfence relays CONNECT and SOCKS tunnels)",
                      err);
    if (s->network.allow_plaintext_header_set.set && s->network.allow_plaintext_header_set.val)
        return refuse(s, "network.allowPlaintextHeaderSet", "header edits by a request filter",
                      err);
    if (s->network.n_strip_response_headers)
        return refuse(s, "network.stripResponseHeaders",
                      "stripping response headers (nsfence's proxy passes them through)", err);
    if (s->network.ambiguous_request_target &&
        strcmp(s->network.ambiguous_request_target, "refuse") != 0)
        return refuse(s, "network.ambiguousRequestTarget",
                      "a request-target policy for a request filter", err);
    if (s->has_aws_pairs)
        return refuse(s, "credentials.awsPairs", "AWS SigV4 request re-signing", err);
    if (s->has_sigv4)
        return refuse(s, "credentials.sigv4", "AWS SigV4 request signing", err);
    for (size_t i = 0; i < s->n_cred_files; i++)
        if (s->cred_files[i].mask) {
            char p[KEY_PATH_MAX];

            index_path(p, "credentials.files", i);
            return refuse(s, p, "credential masking and injection (mode \"mask\")", err);
        }
    for (size_t i = 0; i < s->n_cred_env; i++)
        if (s->cred_env[i].mask) {
            char p[KEY_PATH_MAX];

            index_path(p, "credentials.envVars", i);
            return refuse(s, p, "credential masking and injection (mode \"mask\")", err);
        }
    return 0;
}

static int apply_paths(const struct srt_settings *s, struct policy *pol, const char *name,
                       const struct srt_paths *src, struct pol_strv *dst, bool read_list,
                       struct nf_err *err)
{
    for (size_t i = 0; i < src->n; i++) {
        struct nf_err e = { 0 };

        if (cfg_add_path(pol, dst, src->v[i].path, read_list, src->v[i].literal, &e) < 0)
            return nf_err_set(err, e.code, "%s: filesystem.%s[%zu]: %s", s->file, name, i, e.msg);
    }
    return 0;
}

static int apply_list(const struct srt_settings *s, struct policy *pol, const char *path,
                      const struct pol_strv *src, const char *section, const char *key,
                      struct nf_err *err)
{
    for (size_t i = 0; i < src->n; i++) {
        struct nf_err e = { 0 };

        if (cfg_apply(pol, section, key, src->v[i], &e) < 0)
            return nf_err_set(err, e.code, "%s: %s[%zu]: %s", s->file, path, i, e.msg);
    }
    return 0;
}

static int apply_reasons(const struct srt_settings *s, struct policy *pol, struct nf_err *err)
{
    for (size_t i = 0; i < s->network.n_reasons; i++) {
        const struct srt_reason *sr = &s->network.reasons[i];
        struct pol_reason *r;
        struct px_pattern pat;
        struct nf_err e = { 0 };
        char p[KEY_PATH_MAX];

        key_path(p, "network.deniedDomainReasons", sr->entry, true);
        if (px_pattern_parse(sr->entry, true, &pat, &e) < 0)
            return nf_err_set(err, EINVAL, "%s: %s: %s", s->file, p, e.msg);
        r = realloc(pol->deny_reasons, (pol->n_deny_reasons + 1) * sizeof(*r));
        if (!r)
            return nf_err_sys(err, "out of memory");
        pol->deny_reasons = r;
        r += pol->n_deny_reasons;
        r->host = strdup(sr->entry);
        r->text = strdup(sr->text);
        if (!r->host || !r->text) {
            free(r->host);
            free(r->text);
            return nf_err_sys(err, "out of memory");
        }
        pol->n_deny_reasons++;
    }
    return 0;
}

/* parentProxy {http, https, noProxy}: nsfence's proxy has one parent for
 * every tunnel, CONNECT and plain alike. srt's https falls back to http;
 * two different URLs cannot be kept apart, so they are refused. */
static int apply_parent(const struct srt_settings *s, struct policy *pol, struct nf_err *err)
{
    const char *http = s->network.parent_http, *https = s->network.parent_https;
    const char *url = https ? https : http;
    struct nf_err e = { 0 };

    if (!s->network.has_parent_proxy)
        return 0;
    if (http && https && strcmp(http, https) != 0)
        return refuse(s, "network.parentProxy",
                      "different parents for http and https (nsfence's proxy has one)", err);
    /* The settings' list replaces nsfence's own NO_PROXY (srt's
     * `noProxy ?? env`), whether the parent comes from the settings or from
     * the environment; "" is an empty list, not the environment's. */
    if (s->network.parent_no_proxy) {
        if (strlen(s->network.parent_no_proxy) >= sizeof(((struct px_parent *)0)->no_proxy))
            return refuse(s, "network.parentProxy.noProxy",
                          "a list longer than nsfence keeps (cutting it would send the rest "
                          "through the parent)",
                          err);
        free(pol->parent_no_proxy);
        pol->parent_no_proxy = strdup(s->network.parent_no_proxy);
        if (!pol->parent_no_proxy)
            return nf_err_sys(err, "out of memory");
    }
    if (!url)
        return 0;
    if (cfg_apply(pol, "network", "parent_proxy", url, &e) < 0)
        return nf_err_set(err, EINVAL, "%s: network.parentProxy.%s: %s", s->file,
                          https ? "https" : "http", e.msg);
    return 0;
}

static int apply_git(const struct srt_settings *s, struct policy *pol, struct nf_err *err)
{
    for (size_t i = 0; i < s->git_safe_dirs.n; i++) {
        _cleanup_free_ char *d = strdup(s->git_safe_dirs.v[i]);
        size_t len;

        if (!d)
            return nf_err_sys(err, "out of memory");
        /* srt's spelling: trailing slashes go, but / stays /; an empty
         * entry (git's list reset) is skipped. */
        len = strlen(d);
        if (!len)
            continue;
        while (len > 1 && d[len - 1] == '/')
            d[--len] = '\0';
        if (!pol_strv_contains(&pol->git_safe_dirs, d) &&
            pol_strv_add(&pol->git_safe_dirs, d, err) < 0)
            return -1;
    }
    return 0;
}

static int apply_credentials(const struct srt_settings *s, struct policy *pol, struct nf_err *err)
{
    for (size_t i = 0; i < s->n_cred_env; i++)
        if (!pol_strv_contains(&pol->env_unset, s->cred_env[i].name) &&
            pol_strv_add(&pol->env_unset, s->cred_env[i].name, err) < 0)
            return -1;
    /* A denied credential file reads as nothing: a deny_read, globs
     * expanded as denyRead's are (srt's denyOnly is expand(denyRead) and
     * expand(credential deny files)). */
    for (size_t i = 0; i < s->n_cred_files; i++) {
        struct nf_err e = { 0 };

        if (cfg_add_path(pol, &pol->deny_read, s->cred_files[i].name, true, false, &e) < 0)
            return nf_err_set(err, e.code, "%s: credentials.files[%zu].path: %s", s->file, i,
                              e.msg);
    }
    return 0;
}

int settings_apply(const struct srt_settings *s, struct policy *pol, struct nf_err *err)
{
    if (refusals(s, err) < 0)
        return -1;
    for (size_t i = 0; i < s->notes.n; i++)
        log_v("%s", s->notes.v[i]);

    /* network */
    if (apply_list(s, pol, "network.allowedDomains", &s->network.allowed_domains, "network",
                   "allow_domain", err) < 0 ||
        apply_list(s, pol, "network.deniedDomains", &s->network.denied_domains, "network",
                   "deny_domain", err) < 0 ||
        apply_reasons(s, pol, err) < 0 ||
        apply_list(s, pol, "network.deniedResolvedAddresses", &s->network.denied_addresses,
                   "network", "deny_address", err) < 0 ||
        apply_parent(s, pol, err) < 0)
        return -1;
    if (s->network.allow_all_unix_sockets.set)
        pol->allow_all_unix_sockets = s->network.allow_all_unix_sockets.val;
    /* srt: an external proxy on localhost:<port> instead of the built-in
     * one, per endpoint (both set: no local proxy at all). */
    if (s->network.http_proxy_port)
        pol->http_relay_port = s->network.http_proxy_port;
    if (s->network.socks_proxy_port)
        pol->socks_relay_port = s->network.socks_proxy_port;
    /* strictAllowlist either way, requireHostMatch true: what nsfence does
     * always (no ask-callback; a Host header that disagrees is a 400). */
    if (s->network.require_host_match.set && !s->network.require_host_match.val)
        log_v("%s: network.requireHostMatch false: nsfence's proxy refuses a Host header that "
              "names another host than the request all the same",
              s->file);
    if (s->network.strict_allowlist.set && !s->network.strict_allowlist.val)
        log_v("%s: network.strictAllowlist false: nsfence has no ask-callback, so a host off "
              "the allow list is denied all the same",
              s->file);

    /* filesystem */
    if (apply_paths(s, pol, "denyRead", &s->filesystem.deny_read, &pol->deny_read, true, err) < 0 ||
        apply_paths(s, pol, "allowRead", &s->filesystem.allow_read, &pol->allow_read, true, err) <
            0 ||
        apply_paths(s, pol, "allowWrite", &s->filesystem.allow_write, &pol->allow_write, false,
                    err) < 0 ||
        apply_paths(s, pol, "denyWrite", &s->filesystem.deny_write, &pol->deny_write, false, err) <
            0)
        return -1;
    if (s->filesystem.disabled.set)
        pol->fs_disabled = s->filesystem.disabled.val;
    if (s->filesystem.allow_git_config.set)
        pol->allow_git_config = s->filesystem.allow_git_config.val;
    if (s->mandatory_deny_depth)
        pol->mandatory_deny_depth = s->mandatory_deny_depth;

    /* the rest */
    if (apply_credentials(s, pol, err) < 0 || apply_git(s, pol, err) < 0)
        return -1;
    for (size_t i = 0; i < s->n_ignore; i++) {
        struct pol_strv pats = { 0 };
        int rc = 0;

        for (size_t j = 0; rc == 0 && j < s->ignore[i].paths.n; j++) {
            const char *pat = s->ignore[i].paths.v[j];

            /* srt: "".includes matches all; nsfence refuses to hide all */
            if (*pat && !pol_strv_contains(&pats, pat))
                rc = pol_strv_add(&pats, pat, err);
        }
        if (rc == 0 && pats.n)
            rc = pol_ignore_add(pol, s->ignore[i].command, &pats, err);
        pol_strv_free(&pats);
        if (rc < 0)
            return -1;
    }
    if (s->weaker_nested.set)
        pol->proc_host = s->weaker_nested.val;
    if (s->nested_userns.set)
        pol->nested_userns = s->nested_userns.val;
    if (s->mode >= 0)
        pol->mode = (enum pol_mode)s->mode;
    return 0;
}

void settings_free(struct srt_settings *s)
{
    struct srt_paths *lists[] = { &s->filesystem.deny_read, &s->filesystem.allow_read,
                                  &s->filesystem.allow_write, &s->filesystem.deny_write };

    free(s->file);
    pol_strv_free(&s->network.allowed_domains);
    pol_strv_free(&s->network.denied_domains);
    for (size_t i = 0; i < s->network.n_reasons; i++) {
        free(s->network.reasons[i].entry);
        free(s->network.reasons[i].text);
    }
    free(s->network.reasons);
    pol_strv_free(&s->network.denied_addresses);
    free(s->network.parent_http);
    free(s->network.parent_https);
    free(s->network.parent_no_proxy);
    free(s->network.ambiguous_request_target);
    for (size_t l = 0; l < NF_ARRAY_SIZE(lists); l++) {
        for (size_t i = 0; i < lists[l]->n; i++)
            free(lists[l]->v[i].path);
        free(lists[l]->v);
    }
    for (size_t i = 0; i < s->n_cred_files; i++)
        free(s->cred_files[i].name);
    free(s->cred_files);
    for (size_t i = 0; i < s->n_cred_env; i++)
        free(s->cred_env[i].name);
    free(s->cred_env);
    for (size_t i = 0; i < s->n_ignore; i++) {
        free(s->ignore[i].command);
        pol_strv_free(&s->ignore[i].paths);
    }
    free(s->ignore);
    pol_strv_free(&s->git_safe_dirs);
    pol_strv_free(&s->notes);
    memset(s, 0, sizeof(*s));
}

int settings_load(const char *path, struct srt_settings *out, struct nf_err *err)
{
    _cleanup_close_ int fd = -1;
    _cleanup_free_ char *buf = NULL;
    struct stat st;
    size_t got = 0;

    memset(out, 0, sizeof(*out));
    /* O_NONBLOCK: a FIFO planted at the path must not hang us. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return nf_err_sys(err, "settings %s", path);
    if (fstat(fd, &st) < 0)
        return nf_err_sys(err, "settings %s", path);
    if (S_ISDIR(st.st_mode))
        return nf_err_set(err, EISDIR, "settings %s: is a directory", path);
    if (!S_ISREG(st.st_mode))
        return nf_err_set(err, EINVAL, "settings %s: not a regular file", path);
    if (st.st_size > SRT_SETTINGS_MAX_SIZE)
        return nf_err_set(err, EFBIG, "settings %s: larger than %d bytes", path,
                          SRT_SETTINGS_MAX_SIZE);
    buf = malloc((size_t)st.st_size + 1);
    if (!buf)
        return nf_err_sys(err, "out of memory");
    while (got < (size_t)st.st_size) {
        ssize_t n = RETRY_EINTR(read(fd, buf + got, (size_t)st.st_size - got));

        if (n < 0)
            return nf_err_sys(err, "settings %s", path);
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return settings_parse(buf, got, path, out, err);
}
