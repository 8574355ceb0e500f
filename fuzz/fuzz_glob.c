/* fs_glob_match, fs_glob_match_beneath, fs_glob_is_pattern and
 * fs_glob_prefix_len over arbitrary bytes: the input is "PATTERN\0PATH" (no
 * NUL: the pattern is matched against itself). The properties: a pattern
 * without glob syntax matches exactly itself, and covers exactly itself and
 * what lies beneath it; a match is covered; every match lies beneath the
 * literal prefix, which ends at a '/'; and on short ASCII inputs the answer
 * is the one a plain backtracking reading of srt's rules gives. The time a
 * match takes is libFuzzer's -timeout to watch. */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/glob.h"
#include "fuzz/fuzz.h"

/* ---- a reference: srt's rules read the slow, obvious way ----------------- */

#define REF_PATTERN_MAX 48
#define REF_PATH_MAX    96

enum ref_kind { R_LIT, R_ANY, R_SET, R_STAR, R_STARSTAR, R_DIRS };

struct ref_tok {
    enum ref_kind kind;
    char c;          /* R_LIT */
    const char *set; /* R_SET: its members, */
    size_t set_len;  /* this many bytes */
};

/* Whether c is in the set, or -1 when a range in it runs backwards. */
static int ref_set(const char *m, size_t n, char c)
{
    int in = 0;

    for (size_t j = 0; j < n;) {
        unsigned char lo = (unsigned char)m[j], hi = lo;

        if (j + 2 < n && m[j + 1] == '-') {
            hi = (unsigned char)m[j + 2];
            j += 3;
        } else {
            j += 1;
        }
        if (hi < lo)
            return -1;
        if ((unsigned char)c >= lo && (unsigned char)c <= hi)
            in = 1;
    }
    return in;
}

static size_t ref_lex(const char *p, struct ref_tok *t)
{
    size_t n = 0, len = strlen(p);

    for (size_t i = 0; i < len;) {
        if (p[i] == '[') {
            const char *close = strchr(p + i + 1, ']');
            size_t m = close ? (size_t)(close - p) - i - 1 : 0;

            if (!close) {
                t[n++] = (struct ref_tok){ .kind = R_LIT, .c = '[' };
                i++;
            } else if (m == 0 || ref_set(p + i + 1, m, 0) < 0) {
                for (size_t j = i; j <= i + m + 1; j++)
                    t[n++] = (struct ref_tok){ .kind = R_LIT, .c = p[j] };
                i += m + 2;
            } else {
                t[n++] = (struct ref_tok){ .kind = R_SET, .set = p + i + 1, .set_len = m };
                i += m + 2;
            }
        } else if (p[i] == '*') {
            size_t run = strspn(p + i, "*"), lead = run;
            bool dirs = run >= 2 && p[i + run] == '/';

            if (dirs)
                lead -= 2;
            for (size_t k = 0; k < lead / 2; k++)
                t[n++] = (struct ref_tok){ .kind = R_STARSTAR };
            if (lead % 2)
                t[n++] = (struct ref_tok){ .kind = R_STAR };
            if (dirs)
                t[n++] = (struct ref_tok){ .kind = R_DIRS };
            i += run + (dirs ? 1 : 0);
        } else if (p[i] == '?') {
            t[n++] = (struct ref_tok){ .kind = R_ANY };
            i++;
        } else {
            t[n++] = (struct ref_tok){ .kind = R_LIT, .c = p[i] };
            i++;
        }
    }
    return n;
}

struct ref {
    const struct ref_tok *t;
    size_t nt;
    const char *s;
    size_t len;
    signed char memo[REF_PATTERN_MAX + 1][REF_PATH_MAX + 1];
};

static bool ref_at(struct ref *r, size_t ti, size_t i)
{
    bool ok = false;

    if (ti == r->nt)
        return i == r->len;
    if (r->memo[ti][i] >= 0)
        return r->memo[ti][i];
    switch (r->t[ti].kind) {
    case R_LIT:
        ok = i < r->len && r->s[i] == r->t[ti].c && ref_at(r, ti + 1, i + 1);
        break;
    case R_ANY:
        ok = i < r->len && r->s[i] != '/' && ref_at(r, ti + 1, i + 1);
        break;
    case R_SET:
        ok = i < r->len && ref_set(r->t[ti].set, r->t[ti].set_len, r->s[i]) == 1 &&
             ref_at(r, ti + 1, i + 1);
        break;
    case R_STAR:
        for (size_t k = i; !ok; k++) {
            ok = ref_at(r, ti + 1, k);
            if (k == r->len || r->s[k] == '/')
                break;
        }
        break;
    case R_STARSTAR:
        for (size_t k = i; !ok && k <= r->len; k++)
            ok = ref_at(r, ti + 1, k);
        break;
    case R_DIRS:
        ok = ref_at(r, ti + 1, i);
        for (size_t k = i; !ok && k < r->len; k++)
            if (r->s[k] == '/')
                ok = ref_at(r, ti + 1, k + 1);
        break;
    }
    r->memo[ti][i] = ok;
    return ok;
}

static bool ref_match(const struct ref_tok *t, size_t nt, const char *s, size_t len)
{
    static struct ref r;

    r.t = t;
    r.nt = nt;
    r.s = s;
    r.len = len;
    memset(r.memo, -1, sizeof(r.memo));
    return ref_at(&r, 0, 0);
}

static bool ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return false;
    return true;
}

static void check_reference(const char *pattern, const char *path)
{
    struct ref_tok t[REF_PATTERN_MAX];
    size_t nt, len = strlen(path);
    bool beneath;

    if (strlen(pattern) > REF_PATTERN_MAX || len > REF_PATH_MAX || !ascii(pattern) || !ascii(path))
        return;
    nt = ref_lex(pattern, t);
    CHECK(fs_glob_match(pattern, path) == ref_match(t, nt, path, len));
    beneath = ref_match(t, nt, path, len);
    for (size_t k = 0; !beneath && k < len; k++)
        if (path[k] == '/')
            beneath = ref_match(t, nt, path, k);
    CHECK(fs_glob_match_beneath(pattern, path) == beneath);
}

/* ---- the properties ------------------------------------------------------ */

static void check_literal(const char *pattern, const char *path)
{
    size_t n = strlen(pattern);
    bool within = strncmp(path, pattern, n) == 0 && (path[n] == '\0' || path[n] == '/');

    if (n >= PATH_MAX)
        return;
    CHECK(fs_glob_match(pattern, pattern));
    CHECK(fs_glob_match(pattern, path) == (strcmp(pattern, path) == 0));
    CHECK(fs_glob_match_beneath(pattern, path) == within);
}

static void check_prefix(const char *pattern, const char *path, bool pat, bool m, bool b)
{
    size_t len = strlen(pattern), n = fs_glob_prefix_len(pattern);

    CHECK(n <= len);
    CHECK(pattern[n] == '/' || pattern[n] == '\0' || (n == 0 && pattern[0] != '/'));
    if (!pat) {
        CHECK(n == len);
        return;
    }
    CHECK(n < len);
    if (n == 0)
        return;
    CHECK(pattern[n] == '/');
    /* what matches lies beneath the prefix */
    if (m || b)
        CHECK(strncmp(path, pattern, n) == 0 && path[n] == '/');
}

/* data[0..n) as a string, in a buffer of its exact size: ASan sees a read
 * past its NUL. */
static char *string(const uint8_t *data, size_t n)
{
    char *s = malloc(n + 1);

    CHECK(s != NULL);
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t plen = nul ? (size_t)(nul - data) : size;
    char *pattern = string(data, plen);
    char *path = nul ? string(nul + 1, size - plen - 1) : string(data, plen);
    bool pat, m, b;

    pat = fs_glob_is_pattern(pattern);
    m = fs_glob_match(pattern, path);
    b = fs_glob_match_beneath(pattern, path);
    CHECK(!m || b);
    if (plen >= PATH_MAX)
        CHECK(!m && !b);
    if (!pat)
        check_literal(pattern, path);
    check_prefix(pattern, path, pat, m, b);
    check_reference(pattern, path);
    free(pattern);
    free(path);
    return 0;
}
