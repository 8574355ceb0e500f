/* sc_path_resolve and sc_classify over arbitrary bytes: the input is
 * "BASE\0REL" (no NUL: REL alone, with no base), as the observer reads them
 * from /proc/PID/cwd and the command's memory. The properties: a result is
 * absolute and lexically normal, resolving it again changes nothing, a
 * buffer one byte too short is refused without being overrun, an absolute
 * REL does not depend on the base, and the verdict is one of the three and
 * agrees with the built-in exceptions. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "seccomp/observer.h"
#include "src/policy.h"

static void check(bool ok)
{
    if (!ok)
        abort();
}

static char *const roots[] = { "/work/proj", "/tmp/build", "/" };
static char *const protected_paths[] = { "/work/proj/.git/hooks", "/work/proj/.bashrc",
                                         "/tmp/build/.vscode" };

static void check_verdicts(const char *p)
{
    /* no roots but "/": everything is allowed unless protected */
    const struct sc_observer_config all = {
        .write_roots = roots + 2,
        .n_write_roots = 1,
        .protected_paths = protected_paths,
        .n_protected = 3,
    };
    /* two roots, no "/" */
    const struct sc_observer_config some = {
        .write_roots = roots,
        .n_write_roots = 2,
        .protected_paths = protected_paths,
        .n_protected = 3,
    };
    const struct sc_observer_config none = { 0 };
    enum sc_verdict va = sc_classify(&all, p), vs = sc_classify(&some, p),
                    vn = sc_classify(&none, p);
    bool prot = false;

    for (size_t i = 0; i < 3; i++)
        prot |= pol_path_within(p, protected_paths[i]);
    check(va == SC_ALLOWED || va == SC_OUTSIDE || va == SC_PROTECTED);
    check(va == (prot ? SC_PROTECTED : SC_ALLOWED));
    check(vs == SC_PROTECTED || vs == SC_ALLOWED || vs == SC_OUTSIDE);
    check((vs == SC_PROTECTED) == prot);
    /* nothing protected and no roots: never protected */
    check(vn == SC_ALLOWED || vn == SC_OUTSIDE);
    /* a root or a built-in exception can only widen what is allowed */
    check(vn != SC_ALLOWED || prot || vs == SC_ALLOWED);
    if (pol_path_within(p, "/work/proj") && !prot)
        check(vs == SC_ALLOWED);
    if (pol_path_within(p, "/tmp") && strcmp(p, "/tmp") != 0)
        check(vn == SC_ALLOWED);
    if (strcmp(p, "/tmp") == 0 || strcmp(p, "/dev") == 0 || strcmp(p, "/") == 0)
        check(vn == SC_OUTSIDE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    char *base = NULL, *rel, *tight;
    char out[PATH_MAX], again[PATH_MAX];
    size_t n;
    int r;

    if (nul) {
        size_t bl = (size_t)(nul - data);

        base = malloc(bl + 1);
        rel = malloc(size - bl);
        if (!base || !rel)
            abort();
        memcpy(base, data, bl);
        base[bl] = '\0';
        memcpy(rel, nul + 1, size - bl - 1);
        rel[size - bl - 1] = '\0';
    } else {
        rel = malloc(size + 1);
        if (!rel)
            abort();
        memcpy(rel, data, size);
        rel[size] = '\0';
    }

    r = sc_path_resolve(base, rel, out, sizeof(out));
    /* A relative REL is BASE + "/" + REL spelled as one absolute path: the
     * same answer, the same failures (a leading '~' included: to the kernel
     * it is an ordinary name). */
    if (base && base[0] == '/' && rel[0] != '/') {
        char *joined = malloc(strlen(base) + strlen(rel) + 2);

        if (!joined)
            abort();
        strcpy(joined, base);
        strcat(joined, "/");
        strcat(joined, rel);
        check(sc_path_resolve(NULL, joined, again, sizeof(again)) == r);
        check(r < 0 || strcmp(out, again) == 0);
        free(joined);
    }
    if (r == 0) {
        n = strlen(out);
        fuzz_check_normal_path(out);
        /* a normal absolute path resolves to itself, whatever the base,
         * in a buffer of its exact size */
        check(sc_path_resolve(NULL, out, again, sizeof(again)) == 0);
        check(strcmp(out, again) == 0);
        check(sc_path_resolve("/elsewhere", out, again, n + 1) == 0);
        check(strcmp(out, again) == 0);
        /* one byte short is refused, and nothing is written past it */
        tight = malloc(n);
        if (!tight)
            abort();
        check(sc_path_resolve(base, rel, tight, n) == -1);
        free(tight);
        if (rel[0] == '/') {
            check(sc_path_resolve("/x/y", rel, again, sizeof(again)) == 0);
            check(strcmp(out, again) == 0);
        } else {
            check(base && base[0] == '/');
        }
        check_verdicts(out);
    }
    free(base);
    free(rel);
    return 0;
}
