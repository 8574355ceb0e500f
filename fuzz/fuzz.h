/* What the fuzz targets share: an invariant check that aborts (libFuzzer
 * and the corpus replay both report an abort), and an exact-size heap copy
 * of a prefix, so ASan sees a read one byte past it. */
#pragma once

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
