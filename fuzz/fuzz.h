/* What the fuzz targets share: an invariant check that aborts (libFuzzer
 * and the corpus replay both report an abort), and an exact-size heap copy
 * of a prefix, so ASan sees a read one byte past it. */
#pragma once

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static inline void *fuzz_copy(const void *s, size_t n)
{
    void *p = malloc(n ? n : 1);

    CHECK(p != NULL);
    if (n)
        memcpy(p, s, n);
    return p;
}

/* An absolute, lexically normal path: no "//", "/./" or "/../", no final
 * "/", "/." or "/.." but for "/" itself. */
static inline void fuzz_check_normal_path(const char *p)
{
    size_t n = strlen(p);

    CHECK(p[0] == '/');
    CHECK(n < PATH_MAX);
    CHECK(!strstr(p, "//"));
    CHECK(!strstr(p, "/./"));
    CHECK(!strstr(p, "/../"));
    CHECK(n == 1 || p[n - 1] != '/');
    CHECK(!(n >= 2 && strcmp(p + n - 2, "/.") == 0));
    CHECK(!(n >= 3 && strcmp(p + n - 3, "/..") == 0));
}
