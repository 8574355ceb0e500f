/* pol_path_normalize over arbitrary bytes: the input is "PATH\0CWD\0HOME",
 * a missing part being NULL. The properties: a result is absolute and
 * lexically normal (no "//", "/./", "/../", no trailing '/' but for "/"),
 * normalising it again changes nothing even in a buffer of its exact size,
 * and an error always says something. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "src/policy.h"

static void check(bool ok)
{
    if (!ok)
        abort();
}

/* The next NUL-terminated part of data, or NULL when there is none. */
static char *next_part(const uint8_t **data, size_t *size, bool *present)
{
    const uint8_t *nul;
    size_t n;
    char *s;

    if (!*present)
        return NULL;
    nul = memchr(*data, '\0', *size);
    n = nul ? (size_t)(nul - *data) : *size;
    s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, *data, n);
    s[n] = '\0';
    *present = nul != NULL;
    *data += nul ? n + 1 : n;
    *size -= nul ? n + 1 : n;
    return s;
}

static unsigned slashes(const char *p)
{
    unsigned n = 0;

    for (; *p; p++)
        n += *p == '/';
    return n;
}

static void check_normal(const char *p)
{
    fuzz_check_normal_path(p);
    check(pol_path_within(p, "/"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool present = true;
    char *path = next_part(&data, &size, &present);
    char *cwd = next_part(&data, &size, &present);
    char *home = next_part(&data, &size, &present);
    char out[PATH_MAX], again[PATH_MAX];
    struct nf_err err = { 0 };

    if (pol_path_normalize(path, cwd, home, out, sizeof(out), &err) == 0) {
        check_normal(out);
        check(pol_path_normalize(out, cwd, home, again, sizeof(again), &err) == 0);
        check(strcmp(out, again) == 0);
        check(pol_path_normalize(out, NULL, NULL, again, strlen(out) + 1, &err) == 0);
        check(strcmp(out, again) == 0);
        check(pol_path_within(out, out));
        check(pol_path_depth(out) == (strcmp(out, "/") == 0 ? 0 : slashes(out)));
    } else {
        check(err.msg[0] != '\0');
    }
    free(path);
    free(cwd);
    free(home);
    return 0;
}
