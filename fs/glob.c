#include "fs/glob.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* ---- characters ---------------------------------------------------------- */

/* A byte that is not part of a valid UTF-8 sequence stands alone, as this
 * plus its value: outside Unicode, so no sequence decodes to it, and a name
 * that is not UTF-8 still matches itself. */
#define STRAY_BYTE 0x110000u

static uint32_t stray(unsigned char c, size_t *len)
{
    *len = 1;
    return STRAY_BYTE + c;
}

/* The character at s (s < end): its value, and its length in *len. Overlong
 * forms and surrogates are not characters, so each text has one reading. */
static uint32_t u8_next(const unsigned char *s, const unsigned char *end, size_t *len)
{
    unsigned char c = s[0];
    uint32_t v, min;
    size_t n;

    if (c < 0x80) {
        *len = 1;
        return c;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, v = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return stray(c, len);
    }
    if ((size_t)(end - s) < n)
        return stray(c, len);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return stray(c, len);
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return stray(c, len);
    *len = n;
    return v;
}

/* ---- the pattern's tokens ------------------------------------------------ */

enum tok {
    TOK_LIT,      /* one character, itself */
    TOK_ANY,      /* `?` */
    TOK_SET,      /* `[...]` */
    TOK_STAR,     /* `*` */
    TOK_STARSTAR, /* `**` */
    TOK_DIRS,     /* `**` and the '/' after it: zero or more whole directories */
};

/* Members of the set p[a..b), checked for c. -1 when a range runs
 * backwards: the set is then literal text. */
static int set_has(const unsigned char *p, size_t a, size_t b, uint32_t c)
{
    int found = 0;

    for (size_t j = a; j < b;) {
        uint32_t lo, hi;
        size_t n;

        lo = hi = u8_next(p + j, p + b, &n);
        j += n;
        if (j + 1 < b && p[j] == '-') {
            hi = u8_next(p + j + 1, p + b, &n);
            j += 1 + n;
            if (hi < lo)
                return -1;
        }
        if (c >= lo && c <= hi)
            found = 1;
    }
    return found;
}

/* Reads tokens left to right. The cursors only move forward, so a whole
 * pattern is read in linear time: no rescan for each '[' of "[[[[..." or
 * each '*' of a long run. */
struct lexer {
    const unsigned char *p;
    size_t len;
    size_t close;         /* the first ']' after the last '[' looked at, or len */
    size_t run_end;       /* the end of the run of '*' being read */
    size_t literal_until; /* the text of an invalid set, read as literal */
};

/* A run of stars reads as srt's regex rewrite reads it: first `**` + '/'
 * (the last two stars of the run), then pairs from the left, then a lone
 * `*`. So `***` followed by '/' is `*` then `**` + '/', which matches
 * "x/y/" and also "" and "x". */
static enum tok lex_stars(struct lexer *lx, size_t i, size_t *end)
{
    size_t n;
    bool dirs;

    if (i >= lx->run_end) {
        lx->run_end = i;
        while (lx->run_end < lx->len && lx->p[lx->run_end] == '*')
            lx->run_end++;
    }
    n = lx->run_end - i;
    dirs = n >= 2 && lx->run_end < lx->len && lx->p[lx->run_end] == '/';
    if (dirs && n == 2) {
        *end = i + 3;
        return TOK_DIRS;
    }
    if (dirs)
        n -= 2; /* what comes before the last two */
    *end = i + (n >= 2 ? 2 : 1);
    return n >= 2 ? TOK_STARSTAR : TOK_STAR;
}

static enum tok lex_set(struct lexer *lx, size_t i, size_t *end)
{
    size_t n;

    if (lx->close <= i) {
        lx->close = i + 1;
        while (lx->close < lx->len && lx->p[lx->close] != ']')
            lx->close++;
    }
    if (lx->close < lx->len && lx->close > i + 1 && set_has(lx->p, i + 1, lx->close, 0) >= 0) {
        *end = lx->close + 1;
        return TOK_SET;
    }
    /* An unclosed '[' is one literal character; `[]` and a backwards set
     * are literal up to their ']'. */
    if (lx->close < lx->len)
        lx->literal_until = lx->close + 1;
    (void)u8_next(lx->p + i, lx->p + lx->len, &n);
    *end = i + n;
    return TOK_LIT;
}

/* The token at i; its end in *end. */
static enum tok lex(struct lexer *lx, size_t i, size_t *end)
{
    size_t n;

    if (i >= lx->literal_until) {
        switch (lx->p[i]) {
        case '*':
            return lex_stars(lx, i, end);
        case '?':
            *end = i + 1;
            return TOK_ANY;
        case '[':
            return lex_set(lx, i, end);
        default:
            break;
        }
    }
    (void)u8_next(lx->p + i, lx->p + lx->len, &n);
    *end = i + n;
    return TOK_LIT;
}

/* The offset of the first wildcard in p[0..len), or len. */
static size_t first_wildcard(const unsigned char *p, size_t len)
{
    struct lexer lx = { .p = p, .len = len };

    for (size_t i = 0, end; i < len; i = end)
        if (lex(&lx, i, &end) != TOK_LIT)
            return i;
    return len;
}

bool fs_glob_is_pattern(const char *s)
{
    size_t len = strlen(s);

    return first_wildcard((const unsigned char *)s, len) < len;
}

size_t fs_glob_prefix_len(const char *pattern)
{
    size_t len = strlen(pattern);
    size_t w = first_wildcard((const unsigned char *)pattern, len);

    if (w == len)
        return len;
    while (w > 0 && pattern[w - 1] != '/')
        w--;
    return w > 0 ? w - 1 : 0;
}

/* ---- the matcher ---------------------------------------------------------- */

/* The pattern as a nondeterministic automaton whose states are its byte
 * offsets: state i is "about to match the token at i", state len accepts.
 * Sets of states are bitmaps, and a path is read once, one character at a
 * time, so the work is bounded by len(pattern) * len(path) whatever the
 * input: no backtracking, nothing a crafted pattern can blow up. */
enum st {
    ST_NONE, /* inside a longer token: never live */
    ST_LIT,
    ST_ANY,
    ST_SET,
    ST_STAR,     /* loops on a character but '/'; may leave without one */
    ST_STARSTAR, /* loops on any character; may leave without one */
    ST_DIRS,     /* `**` + '/' at i: skip it, or loop at i+1 (ST_STARSTAR)
                    until the '/' at i+2 (ST_LIT) */
    ST_END,
};

struct prog {
    const unsigned char *p;
    size_t len;
    uint8_t *kind;  /* len + 1 */
    uint16_t *next; /* len + 1: where a token's state leads */
    size_t words;   /* of a state set */
};

#define SET_WORDS(len) ((len) / 64 + 1)

static void prog_build(struct prog *g, const char *pattern, size_t len, uint8_t *kind,
                       uint16_t *next)
{
    struct lexer lx = { .p = (const unsigned char *)pattern, .len = len };

    g->p = lx.p;
    g->len = len;
    g->kind = kind;
    g->next = next;
    g->words = SET_WORDS(len);
    memset(kind, ST_NONE, len + 1);
    for (size_t i = 0, end; i < len; i = end) {
        switch (lex(&lx, i, &end)) {
        case TOK_LIT:
            kind[i] = ST_LIT;
            break;
        case TOK_ANY:
            kind[i] = ST_ANY;
            break;
        case TOK_SET:
            kind[i] = ST_SET;
            break;
        case TOK_STAR:
            kind[i] = ST_STAR;
            break;
        case TOK_STARSTAR:
            kind[i] = ST_STARSTAR;
            break;
        case TOK_DIRS:
            kind[i] = ST_DIRS;
            kind[i + 1] = ST_STARSTAR;
            next[i + 1] = (uint16_t)(i + 2);
            kind[i + 2] = ST_LIT;
            next[i + 2] = (uint16_t)(i + 3);
            break;
        }
        next[i] = (uint16_t)end;
    }
    kind[len] = ST_END;
}

static inline bool has(const uint64_t *set, size_t s)
{
    return set[s / 64] >> (s % 64) & 1;
}

/* Add the states reached without reading a character. Such moves only go
 * forward, so one ascending sweep takes every chain of them. */
static void closure(const struct prog *g, uint64_t *set)
{
    for (size_t w = 0; w < g->words; w++) {
        uint64_t bits = set[w];

        while (bits) {
            size_t s = w * 64 + (size_t)__builtin_ctzll(bits), to[2];
            size_t n = 0;

            bits &= bits - 1;
            switch ((enum st)g->kind[s]) {
            case ST_STAR:
            case ST_STARSTAR:
                to[n++] = g->next[s];
                break;
            case ST_DIRS:
                to[n++] = s + 1;
                to[n++] = g->next[s];
                break;
            case ST_NONE:
            case ST_LIT:
            case ST_ANY:
            case ST_SET:
            case ST_END:
                break;
            }
            for (size_t k = 0; k < n; k++) {
                uint64_t bit = 1ULL << (to[k] % 64);

                set[to[k] / 64] |= bit;
                if (to[k] / 64 == w)
                    bits |= bit;
            }
        }
    }
}

static void prog_start(const struct prog *g, uint64_t *set)
{
    memset(set, 0, g->words * sizeof(*set));
    set[0] = 1;
    closure(g, set);
}

/* Read character c: the states of cur that take it, into nxt. Whether any
 * state is live after it. */
static bool prog_step(const struct prog *g, const uint64_t *cur, uint64_t *nxt, uint32_t c)
{
    uint64_t any = 0;

    memset(nxt, 0, g->words * sizeof(*nxt));
    for (size_t w = 0; w < g->words; w++) {
        for (uint64_t bits = cur[w]; bits; bits &= bits - 1) {
            size_t s = w * 64 + (size_t)__builtin_ctzll(bits), to = SIZE_MAX, n;

            switch ((enum st)g->kind[s]) {
            case ST_LIT:
                if (u8_next(g->p + s, g->p + g->len, &n) == c)
                    to = g->next[s];
                break;
            case ST_ANY:
                if (c != '/')
                    to = g->next[s];
                break;
            case ST_SET:
                if (set_has(g->p, s + 1, g->next[s] - 1u, c) == 1)
                    to = g->next[s];
                break;
            case ST_STAR:
                if (c != '/')
                    to = s;
                break;
            case ST_STARSTAR:
                to = s;
                break;
            case ST_NONE:
            case ST_DIRS:
            case ST_END:
                break;
            }
            if (to != SIZE_MAX)
                nxt[to / 64] |= 1ULL << (to % 64);
        }
    }
    closure(g, nxt);
    for (size_t w = 0; w < g->words; w++)
        any |= nxt[w];
    return any != 0;
}

/* Read s[0..n) from the states in *cur (the other buffer is *spare). false
 * as soon as no state is live. */
static bool prog_read(const struct prog *g, uint64_t **cur, uint64_t **spare, const char *s,
                      size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;

    while (p < end) {
        uint64_t *t;
        size_t l;

        if (!prog_step(g, *cur, *spare, u8_next(p, end, &l)))
            return false;
        t = *cur, *cur = *spare, *spare = t;
        p += l;
    }
    return true;
}

static bool match(const char *pattern, const char *path, bool beneath)
{
    size_t len = strlen(pattern);
    uint8_t kind[PATH_MAX];
    uint16_t next[PATH_MAX];
    uint64_t a[SET_WORDS(PATH_MAX)], b[SET_WORDS(PATH_MAX)];
    uint64_t *cur = a, *spare = b;
    const char *p = path;
    struct prog g;

    if (len >= PATH_MAX)
        return false;
    prog_build(&g, pattern, len, kind, next);
    prog_start(&g, cur);
    if (!beneath)
        return prog_read(&g, &cur, &spare, path, strlen(path)) && has(cur, len);
    /* srt's deny regex is the pattern + `(/.*)?$`: a match ending where
     * a '/' follows covers the rest. */
    for (;;) {
        size_t n = strcspn(p, "/");

        if (!prog_read(&g, &cur, &spare, p, n))
            return false;
        if (has(cur, len))
            return true;
        if (p[n] == '\0')
            return false;
        if (!prog_read(&g, &cur, &spare, p + n, 1))
            return false;
        p += n + 1;
    }
}

bool fs_glob_match(const char *pattern, const char *path)
{
    return match(pattern, path, false);
}

bool fs_glob_match_beneath(const char *pattern, const char *path)
{
    return match(pattern, path, true);
}
