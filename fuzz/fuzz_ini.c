/* cfg_parse_buffer over arbitrary bytes, into a policy with a fixed cwd and
 * home. The properties: it never crashes or leaks; an error is one line
 * "fuzz.ini:LINE: ..." with LINE within the input; a config it accepts holds
 * only normalised absolute paths, in-range numbers, and network entries
 * that the proxy's rule table builds from without complaint. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy/rules.h"
#include "src/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FILE "fuzz.ini"

static void check(bool ok)
{
    if (!ok)
        abort();
}

static void check_normalised(const char *p)
{
    char again[PATH_MAX];
    struct nf_err err;

    check(p[0] == '/');
    check(pol_path_normalize(p, NULL, NULL, again, sizeof(again), &err) == 0);
    check(strcmp(again, p) == 0);
}

static void check_paths(const struct pol_strv *sv)
{
    for (size_t i = 0; i < sv->n; i++) {
        check_normalised(sv->v[i]);
        for (size_t j = 0; j < i; j++)
            check(strcmp(sv->v[i], sv->v[j]) != 0); /* added once */
    }
    check(sv->v == NULL || sv->v[sv->n] == NULL);
}

static void check_error(const char *msg, const uint8_t *data, size_t size)
{
    const char *p = msg + strlen(FUZZ_FILE ":");
    size_t lines = 1;
    long line;
    char *end;

    check(msg[0] != '\0' && !strchr(msg, '\n'));
    check(strncmp(msg, FUZZ_FILE ":", strlen(FUZZ_FILE ":")) == 0);
    line = strtol(p, &end, 10);
    check(end != p && end[0] == ':' && end[1] == ' ');
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    check(line >= 1 && (size_t)line <= lines);
}

static void check_policy(const struct policy *pol)
{
    struct px_rules rules;
    struct nf_err err;

    check_paths(&pol->allow_write);
    check_paths(&pol->deny_write);
    check_paths(&pol->deny_read);
    check_paths(&pol->allow_read);
    if (pol->monitor_log)
        check_normalised(pol->monitor_log);
    check(pol->mandatory_deny_depth >= 1 && pol->mandatory_deny_depth <= POL_MAX_DEPTH);
    check(pol->http_port >= 1 && pol->http_port <= 65535);
    check(pol->socks_port >= 1 && pol->socks_port <= 65535);
    check(pol->max_connections >= 1);
    check(!pol->parent_proxy || strncasecmp(pol->parent_proxy, "http://", 7) == 0);
    for (size_t i = 0; i < pol->monitor_ignore.n; i++)
        check(pol->monitor_ignore.v[i][0] != '\0');
    for (size_t i = 0; i < pol->n_deny_reasons; i++)
        check(pol->deny_reasons[i].host[0] != '\0' && pol->deny_reasons[i].text[0] != '\0');
    /* What the config accepts, the proxy must be able to load. */
    check(px_rules_build(pol, &rules, &err) == 0);
    px_rules_free(&rules);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct policy pol;
    struct nf_err err = { 0 };

    check(pol_init(&pol, "/work/proj", "/home/user", &err) == 0);
    if (cfg_parse_buffer(&pol, FUZZ_FILE, (const char *)data, size, &err) < 0)
        check_error(err.msg, data, size);
    else
        check_policy(&pol);
    pol_free(&pol);
    return 0;
}
