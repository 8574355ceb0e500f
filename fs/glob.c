#include "fs/glob.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/policy.h"
#include "src/syscalls.h"
#include "src/util.h"

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

/* Whether a state but the accepting one is live: more characters could
 * still lead to a match. */
static bool prog_open(const struct prog *g, const uint64_t *set)
{
    for (size_t w = 0; w < g->words; w++) {
        uint64_t bits = set[w];

        if (w == g->len / 64)
            bits &= ~(1ULL << (g->len % 64));
        if (bits)
            return true;
    }
    return false;
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

/* ---- hits ----------------------------------------------------------------- */

void fs_glob_hits_free(struct fs_glob_hits *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->v[i].path);
    free(h->v);
    memset(h, 0, sizeof(*h));
}

/* Which hit holds a path: open addressing over indices into out->v, so a
 * walk of thousands of matches stays linear. */
struct seen {
    size_t *slot; /* index + 1; 0 is empty */
    size_t cap;   /* a power of two, more than twice the hits */
};

static size_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return (size_t)h;
}

static size_t *seen_find(const struct seen *t, const struct fs_glob_hits *out, const char *path)
{
    size_t i = hash(path) & (t->cap - 1);

    while (t->slot[i] && strcmp(out->v[t->slot[i] - 1].path, path) != 0)
        i = (i + 1) & (t->cap - 1);
    return &t->slot[i];
}

static int seen_fit(struct seen *t, const struct fs_glob_hits *out, size_t n, struct nf_err *err)
{
    size_t cap = t->cap ? t->cap : 64;
    size_t *old = t->slot;

    if (n * 2 < t->cap)
        return 0;
    while (n * 2 >= cap)
        cap *= 2;
    t->slot = calloc(cap, sizeof(*t->slot));
    if (!t->slot) {
        t->slot = old;
        return nf_err_sys(err, "out of memory");
    }
    t->cap = cap;
    free(old);
    for (size_t i = 0; i < out->n; i++)
        *seen_find(t, out, out->v[i].path) = i + 1;
    return 0;
}

/* ---- the walk ------------------------------------------------------------- */

/* One directory on the way down. */
struct level {
    dev_t dev;
    ino_t ino;
    char *real;     /* where it really is; PATH_MAX */
    char *scratch;  /* its entries' paths; PATH_MAX */
    uint64_t *base; /* the states after its path and a '/' */
    uint64_t *a, *b;
};

struct walk {
    const char *pattern;
    struct prog g;
    bool follow;
    unsigned max_dirs, max_depth, dirs;
    struct level *lv; /* max_depth + 1 */
    struct fs_glob_hits *out;
    struct seen seen;
};

static int add(struct walk *w, const char *path, enum fs_glob_kind kind, struct nf_err *err)
{
    struct fs_glob_hits *out = w->out;
    size_t *slot;

    if (seen_fit(&w->seen, out, out->n + 1, err) < 0)
        return -1;
    slot = seen_find(&w->seen, out, path);
    if (*slot) {
        /* A directory that matched and could not be listed is unlistable:
         * nothing beneath it was seen. */
        if (kind > out->v[*slot - 1].kind)
            out->v[*slot - 1].kind = kind;
        return 0;
    }
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 16;
        struct fs_glob_hit *v = realloc(out->v, cap * sizeof(*v));

        if (!v)
            return nf_err_sys(err, "out of memory");
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n].path = strdup(path);
    if (!out->v[out->n].path)
        return nf_err_sys(err, "out of memory");
    out->v[out->n].kind = kind;
    *slot = ++out->n;
    return 0;
}

/* parent/name into out (PATH_MAX); -1 when it does not fit. */
static int join(const char *parent, const char *name, char *out)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", strcmp(parent, "/") ? parent : "", name);

    return n < 0 || n >= PATH_MAX ? -1 : 0;
}

/* Where an open fd really is, into out (PATH_MAX). 1 when it has gone
 * (removed meanwhile, or out of our reach), 2 when its path is PATH_MAX long
 * or more: nothing can be mounted there by name. */
static int fd_real(int fd, const struct stat *st, char *out, struct nf_err *err)
{
    char link[32];
    ssize_t n;

    if (st->st_nlink == 0)
        return 1;
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, out, PATH_MAX);
    if (n < 0) {
        nf_err_sys(err, "readlink %s", link);
        return nf_err_hint(err, "is /proc mounted?");
    }
    if (n >= PATH_MAX)
        return 2;
    out[n] = '\0';
    return out[0] == '/' ? 0 : 1;
}

/* Errors that say a name leads nowhere the sandboxed command could reach
 * either: gone, dangling, a loop, a name too long, or a directory on the way
 * that it, with our credentials, cannot search. */
static bool leads_nowhere(int e)
{
    return e == ENOENT || e == ENOTDIR || e == ELOOP || e == EACCES || e == ENAMETOOLONG;
}

/* Whether the directory st, really at real, is one on the way down or holds
 * one: descending would walk the same tree again, without end (`self -> .`,
 * `up -> ../..`, a link to /). */
static bool leads_back(const struct walk *w, unsigned depth, const struct stat *st,
                       const char *real)
{
    for (unsigned i = 0; i <= depth; i++) {
        if (w->lv[i].dev == st->st_dev && w->lv[i].ino == st->st_ino)
            return true;
        if (pol_path_within(w->lv[i].real, real))
            return true;
    }
    return false;
}

static int walk_dir(struct walk *w, int fd, unsigned depth, struct nf_err *err);

/* List the directory real at depth, reached as name under dfd, or through
 * a symlink as pathfd; base holds the states after its path and a '/'. A
 * directory beyond the bounds is reported, not walked. */
static int enter(struct walk *w, int dfd, const char *name, int pathfd, const char *real,
                 unsigned depth, const uint64_t *base, struct nf_err *err)
{
    struct level *lv = &w->lv[depth];
    struct stat st;
    int fd;

    if (depth > w->max_depth || w->dirs >= w->max_dirs)
        return add(w, real, FS_GLOB_UNWALKED, err);
    if (pathfd >= 0)
        fd = RETRY_EINTR(openat(pathfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    else
        fd = RETRY_EINTR(openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    if (fd < 0) {
        if (errno == EACCES || errno == EPERM)
            return add(w, real, FS_GLOB_UNLISTABLE, err);
        if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
            return 0; /* removed or replaced meanwhile */
        return nf_err_sys(err, "glob %s: open %s", w->pattern, real);
    }
    if (fstat(fd, &st) < 0) {
        close(fd);
        return nf_err_sys(err, "glob %s: stat %s", w->pattern, real);
    }
    if (!lv->real && !(lv->real = malloc(PATH_MAX))) {
        close(fd);
        return nf_err_sys(err, "out of memory");
    }
    w->dirs++;
    lv->dev = st.st_dev;
    lv->ino = st.st_ino;
    strcpy(lv->real, real);
    memcpy(lv->base, base, w->g.words * sizeof(*base));
    return walk_dir(w, fd, depth, err);
}

/* A symlink named in dir (really at dir_real): in a deny walk, reported where
 * it leads when it matched, and walked when it leads to a directory that
 * could hold matches and is not back up the tree. */
static int visit_link(struct walk *w, int dir, const char *dir_real, unsigned depth,
                      const char *name, bool matched, const uint64_t *beneath, struct nf_err *err)
{
    _cleanup_close_ int pfd = -1;
    _cleanup_free_ char *real = NULL;
    struct stat st;
    int r;

    if (!w->follow)
        return 0;
    /* Followed from its own directory's fd; a magic link (/proc/PID/root,
     * /proc/self/fd/N) planted by the command is not followed. */
    pfd = RETRY_EINTR(nf_openat2(dir, name, O_PATH | O_CLOEXEC, RESOLVE_NO_MAGICLINKS));
    if (pfd < 0) {
        if (leads_nowhere(errno))
            return 0;
        return nf_err_sys(err, "glob %s: follow %s/%s", w->pattern, dir_real, name);
    }
    if (fstat(pfd, &st) < 0)
        return nf_err_sys(err, "glob %s: stat %s/%s", w->pattern, dir_real, name);
    real = malloc(PATH_MAX);
    if (!real)
        return nf_err_sys(err, "out of memory");
    r = fd_real(pfd, &st, real, err);
    if (r < 0)
        return -1;
    if (r == 1)
        return 0;
    if (r == 2)
        return add(w, dir_real, FS_GLOB_UNWALKED, err);
    if (matched) {
        /* A tmpfs on / would hide every mount before it; the directory
         * holding the link stands in for it, as in srt, never / itself. */
        if (strcmp(real, "/") != 0)
            r = add(w, real, S_ISDIR(st.st_mode) ? FS_GLOB_DIR : FS_GLOB_FILE, err);
        else if (strcmp(dir_real, "/") != 0)
            r = add(w, dir_real, FS_GLOB_DIR, err);
        if (r < 0)
            return -1;
    }
    if (!beneath || !S_ISDIR(st.st_mode) || leads_back(w, depth, &st, real))
        return 0;
    return enter(w, dir, name, pfd, real, depth + 1, beneath, err);
}

/* One entry of the directory at depth. Only what could match, or hold a
 * match, costs a system call. */
static int visit(struct walk *w, int dir, unsigned depth, const char *name, unsigned char type,
                 struct nf_err *err)
{
    struct level *lv = &w->lv[depth];
    uint64_t *cur = lv->a, *spare = lv->b;
    const uint64_t *beneath = NULL;
    bool matched;

    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return 0;
    memcpy(cur, lv->base, w->g.words * sizeof(*cur));
    if (!prog_read(&w->g, &cur, &spare, name, strlen(name)))
        return 0;
    matched = has(cur, w->g.len);
    if (prog_read(&w->g, &cur, &spare, "/", 1) && prog_open(&w->g, cur))
        beneath = cur;
    if (!matched && !beneath)
        return 0;
    if (type == DT_UNKNOWN) {
        struct stat st;

        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (leads_nowhere(errno))
                return 0;
            return nf_err_sys(err, "glob %s: stat %s/%s", w->pattern, lv->real, name);
        }
        type = IFTODT(st.st_mode);
    }
    if (type == DT_LNK)
        return visit_link(w, dir, lv->real, depth, name, matched, beneath, err);
    if (type != DT_DIR)
        beneath = NULL;
    if (!lv->scratch && !(lv->scratch = malloc(PATH_MAX)))
        return nf_err_sys(err, "out of memory");
    /* A path too long to name cannot be mounted on: its directory is
     * reported whole instead. */
    if (join(lv->real, name, lv->scratch) < 0)
        return add(w, lv->real, FS_GLOB_UNWALKED, err);
    if (matched && add(w, lv->scratch, type == DT_DIR ? FS_GLOB_DIR : FS_GLOB_FILE, err) < 0)
        return -1;
    if (!beneath)
        return 0;
    return enter(w, dir, name, -1, lv->scratch, depth + 1, beneath, err);
}

static int walk_dir(struct walk *w, int fd, unsigned depth, struct nf_err *err)
{
    _cleanup_(closedirp) DIR *d = fdopendir(fd);
    struct dirent *e;

    if (!d) {
        close(fd);
        return nf_err_sys(err, "glob %s: list %s", w->pattern, w->lv[depth].real);
    }
    while ((errno = 0, e = readdir(d)))
        if (visit(w, dirfd(d), depth, e->d_name, e->d_type, err) < 0)
            return -1;
    if (errno)
        return nf_err_sys(err, "glob %s: list %s", w->pattern, w->lv[depth].real);
    return 0;
}

/* srt also reads the pattern as the path it spells ("a[1].txt" names a file
 * of that name where one exists): walked one name at a time from the
 * prefix, following symlinks only in a deny walk. */
static int add_literal(struct walk *w, int prefix, const char *rest, struct nf_err *err)
{
    uint64_t resolve = RESOLVE_NO_MAGICLINKS | (w->follow ? 0 : RESOLVE_NO_SYMLINKS);
    _cleanup_close_ int held = -1;
    _cleanup_free_ char *real = malloc(PATH_MAX);
    _cleanup_free_ char *path = malloc(PATH_MAX);
    char name[NAME_MAX + 1];
    struct stat st;
    int dir = prefix, r;

    if (!real || !path)
        return nf_err_sys(err, "out of memory");
    for (;;) {
        size_t n = strcspn(rest, "/");
        int fd;

        if (n > NAME_MAX)
            return 0; /* no such name can exist */
        memcpy(name, rest, n);
        name[n] = '\0';
        rest += n;
        if (*rest == '\0')
            break;
        rest++;
        fd = RETRY_EINTR(nf_openat2(dir, name, O_PATH | O_DIRECTORY | O_CLOEXEC, resolve));
        if (fd < 0) {
            if (leads_nowhere(errno))
                return 0;
            return nf_err_sys(err, "glob %s: open %s", w->pattern, name);
        }
        nf_closep(&held);
        dir = held = fd;
    }
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (leads_nowhere(errno))
            return 0;
        return nf_err_sys(err, "glob %s: stat %s", w->pattern, name);
    }
    {
        struct stat ds;

        if (fstat(dir, &ds) < 0)
            return nf_err_sys(err, "glob %s: stat", w->pattern);
        r = fd_real(dir, &ds, real, err);
    }
    if (r != 0)
        return r < 0 ? -1 : 0;
    if (S_ISLNK(st.st_mode))
        return visit_link(w, dir, real, 0, name, true, NULL, err);
    if (join(real, name, path) < 0)
        return add(w, real, FS_GLOB_UNWALKED, err);
    return add(w, path, S_ISDIR(st.st_mode) ? FS_GLOB_DIR : FS_GLOB_FILE, err);
}

/* Absolute and lexically normal: no empty, "." or ".." component, no
 * trailing '/'. The walk joins names onto what it opened; a ".." in the
 * pattern would make what it reports differ from what it matched. */
static bool normal(const char *p)
{
    if (p[0] != '/')
        return false;
    for (const char *c = p + 1;; c += strcspn(c, "/") + 1) {
        size_t n = strcspn(c, "/");

        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (c[n] == '\0')
            return true;
    }
}

static int hit_cmp(const void *a, const void *b)
{
    return strcmp(((const struct fs_glob_hit *)a)->path, ((const struct fs_glob_hit *)b)->path);
}

static int expand(struct walk *w, size_t plen, struct nf_err *err)
{
    _cleanup_close_ int pfd = -1;
    _cleanup_free_ char *real = malloc(PATH_MAX);
    char prefix[PATH_MAX];
    uint64_t *cur = w->lv[0].a, *spare = w->lv[0].b;
    struct stat st;
    int r;

    if (!real)
        return nf_err_sys(err, "out of memory");
    memcpy(prefix, w->pattern, plen);
    prefix[plen] = '\0';
    /* The prefix is the caller's, resolved as srt resolves it: symlinks are
     * followed, but not magic links. */
    pfd = RETRY_EINTR(
        nf_openat2(AT_FDCWD, prefix, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_MAGICLINKS));
    if (pfd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0; /* nothing there to match */
        /* A deny that cannot be resolved must fail the run. */
        return nf_err_sys(err, "glob %s: open %s", w->pattern, prefix);
    }
    if (fstat(pfd, &st) < 0)
        return nf_err_sys(err, "glob %s: stat %s", w->pattern, prefix);
    r = fd_real(pfd, &st, real, err);
    if (r < 0)
        return -1;
    if (r == 1)
        return 0;
    if (r == 2)
        return nf_err_set(err, ENAMETOOLONG, "glob %s: %s leads to a path too long", w->pattern,
                          prefix);

    prog_start(&w->g, cur);
    if (!prog_read(&w->g, &cur, &spare, w->pattern, plen + 1))
        return 0; /* cannot happen: the prefix and its '/' are the pattern's own */
    r = enter(w, -1, NULL, pfd, real, 0, cur, err);
    if (r < 0)
        return -1;
    return add_literal(w, pfd, w->pattern + plen + 1, err);
}

int fs_glob_expand(const char *pattern, const struct fs_glob_opts *opts, struct fs_glob_hits *out,
                   struct nf_err *err)
{
    size_t len = strlen(pattern), plen = fs_glob_prefix_len(pattern), n0 = out->n;
    _cleanup_free_ uint8_t *kind = NULL;
    _cleanup_free_ uint16_t *next = NULL;
    _cleanup_free_ uint64_t *sets = NULL;
    struct walk w = { .pattern = pattern, .out = out, .follow = opts->follow_links };
    int r = -1;

    if (len >= PATH_MAX)
        return nf_err_set(err, ENAMETOOLONG, "glob %.64s...: pattern too long", pattern);
    if (!normal(pattern))
        return nf_err_set(err, EINVAL, "glob %s: not an absolute, normal path", pattern);
    if (!fs_glob_is_pattern(pattern))
        return nf_err_set(err, EINVAL, "glob %s: no wildcard in it", pattern);
    if (plen == 0)
        return nf_err_set(err, EINVAL,
                          "glob %s: a wildcard in its first component would walk the whole "
                          "file system",
                          pattern);
    w.max_dirs = opts->max_dirs ? opts->max_dirs : FS_GLOB_MAX_DIRS;
    w.max_depth = opts->max_depth ? opts->max_depth : FS_GLOB_MAX_DEPTH;
    if (w.max_depth > FS_GLOB_DEPTH_LIMIT)
        w.max_depth = FS_GLOB_DEPTH_LIMIT;

    kind = malloc(len + 1);
    next = malloc((len + 1) * sizeof(*next));
    w.lv = calloc(w.max_depth + 1, sizeof(*w.lv));
    sets = malloc((size_t)(w.max_depth + 1) * 3 * SET_WORDS(len) * sizeof(*sets));
    if (!kind || !next || !w.lv || !sets) {
        nf_err_sys(err, "out of memory");
        goto out;
    }
    prog_build(&w.g, pattern, len, kind, next);
    for (unsigned i = 0; i <= w.max_depth; i++) {
        w.lv[i].base = sets + (size_t)i * 3 * w.g.words;
        w.lv[i].a = w.lv[i].base + w.g.words;
        w.lv[i].b = w.lv[i].a + w.g.words;
    }
    if (seen_fit(&w.seen, out, out->n, err) < 0)
        goto out;
    r = expand(&w, plen, err);
out:
    if (r < 0) {
        for (size_t i = n0; i < out->n; i++)
            free(out->v[i].path);
        out->n = n0;
    } else {
        if (out->n > 1)
            qsort(out->v, out->n, sizeof(*out->v), hit_cmp);
    }
    for (unsigned i = 0; w.lv && i <= w.max_depth; i++) {
        free(w.lv[i].real);
        free(w.lv[i].scratch);
    }
    free(w.lv);
    free(w.seen.slot);
    return r < 0 ? -1 : 0;
}
