/* fs_gitcfg_parse over arbitrary bytes, then fs_gitcfg_code_paths over what
 * it listed, with a fixed worktree and home. The properties: it never
 * crashes or leaks; an error is "bad config line N" with N within the input;
 * a key ends in a lowercase key name after its last dot (or is one, before
 * any section); a callback's failure stops the parse at once; what parses
 * (without a NUL byte, which cuts keys as git cuts them) lists the same
 * entries again when written back out in canonical form; and every code
 * path is absolute, normal, sorted and listed once. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/gitconfig.h"
#include "fuzz/fuzz.h"

#define WORKTREE "/work/proj"
#define HOME     "/home/user"
#define CFG_FILE WORKTREE "/.git/config"

static bool is_key_name(const char *s)
{
    if (!(*s >= 'a' && *s <= 'z'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
            return false;
    return true;
}

static void check_key(const char *key, bool cut)
{
    const char *first = strchr(key, '.'), *last = strrchr(key, '.');

    CHECK(key[0] != '\0');
    if (cut)
        return;
    CHECK(is_key_name(last ? last + 1 : key));
    /* the section: lowercase key characters, possibly none (`[ "x"]`) */
    for (const char *p = key; first && p < first; p++)
        CHECK((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
    CHECK(!first || first != last || first > key);
}

struct stopper {
    size_t n, stop_at;
};

static int stop_at(void *ctx, const char *key, const char *value)
{
    struct stopper *s = ctx;

    (void)key;
    (void)value;
    return ++s->n == s->stop_at ? -7 : 0;
}

/* The list written back as canonical git config: every section header
 * spelled out, every value quoted and escaped. */
static char *write_back(const struct fs_gitcfg_list *l, size_t *len)
{
    size_t cap = 64;
    char *out;
    size_t o = 0;
    const char *prev = NULL;
    size_t prevlen = 0;

    for (size_t i = 0; i < l->n; i++)
        cap += 16 + 4 * strlen(l->v[i].key) + 2 * (l->v[i].value ? strlen(l->v[i].value) : 0);
    out = malloc(cap);
    CHECK(out != NULL);
    for (size_t i = 0; i < l->n; i++) {
        const char *key = l->v[i].key, *value = l->v[i].value;
        const char *first = strchr(key, '.'), *last = strrchr(key, '.');
        size_t stem = last ? (size_t)(last - key) : 0;

        if (last && (!prev || prevlen != stem || memcmp(prev, key, stem) != 0)) {
            out[o++] = '[';
            memcpy(out + o, key, (size_t)(first - key));
            o += (size_t)(first - key);
            if (first != last) {
                out[o++] = ' ';
                out[o++] = '"';
                for (const char *p = first + 1; p < last; p++) {
                    if (*p == '"' || *p == '\\')
                        out[o++] = '\\';
                    out[o++] = *p;
                }
                out[o++] = '"';
            }
            out[o++] = ']';
            out[o++] = '\n';
            prev = key;
            prevlen = stem;
        }
        CHECK(last || !prev); /* a key without a section comes first */
        o += (size_t)sprintf(out + o, "\t%s", last ? last + 1 : key);
        if (value) {
            out[o++] = '=';
            out[o++] = '"';
            for (const char *p = value; *p; p++) {
                switch (*p) {
                case '\n':
                    out[o++] = '\\';
                    out[o++] = 'n';
                    break;
                case '\t':
                    out[o++] = '\\';
                    out[o++] = 't';
                    break;
                case '\b':
                    out[o++] = '\\';
                    out[o++] = 'b';
                    break;
                case '"':
                case '\\':
                    out[o++] = '\\';
                    out[o++] = *p;
                    break;
                default:
                    out[o++] = *p;
                }
            }
            out[o++] = '"';
        }
        out[o++] = '\n';
        CHECK(o < cap);
    }
    *len = o;
    return out;
}

static void check_same(const struct fs_gitcfg_list *a, const struct fs_gitcfg_list *b)
{
    CHECK(a->n == b->n);
    for (size_t i = 0; i < a->n; i++) {
        CHECK(strcmp(a->v[i].key, b->v[i].key) == 0);
        CHECK(!a->v[i].value == !b->v[i].value);
        CHECK(!a->v[i].value || strcmp(a->v[i].value, b->v[i].value) == 0);
    }
}

static void check_paths(const struct fs_gitcfg_paths *p)
{
    for (size_t i = 0; i < p->n; i++) {
        fuzz_check_normal_path(p->v[i].path);
        CHECK(i == 0 || strcmp(p->v[i - 1].path, p->v[i].path) < 0);
    }
    for (size_t i = 0; i < p->unresolved.n; i++) {
        CHECK(p->unresolved.v[i][0] != '\0');
        CHECK(i == 0 || strcmp(p->unresolved.v[i - 1], p->unresolved.v[i]) < 0);
    }
    CHECK(!p->unresolved.v || !p->unresolved.v[p->unresolved.n]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = fuzz_copy(data, size);
    bool cut = memchr(data, '\0', size) != NULL;
    struct fs_gitcfg_list l = { 0 }, again = { 0 };
    struct fs_gitcfg_paths paths = { 0 };
    struct nf_err err = { 0 };
    struct stopper st = { 0 };
    int r = fs_gitcfg_parse_list(buf, size, CFG_FILE, &l, &err);

    if (r < 0) {
        size_t newlines = 0;
        long line;

        for (size_t i = 0; i < size; i++)
            newlines += data[i] == '\n';
        CHECK(strncmp(err.msg, "bad config line ", 16) == 0);
        line = strtol(err.msg + 16, NULL, 10);
        CHECK(line >= 1 && (size_t)line <= newlines + 2);
    }
    for (size_t i = 0; i < l.n; i++) {
        check_key(l.v[i].key, cut);
        CHECK(l.v[i].file == l.src[0].path);
    }

    /* a callback that fails stops the parse there, error untouched */
    st.stop_at = l.n ? size % l.n + 1 : 0;
    err.msg[0] = '\0';
    if (st.stop_at) {
        CHECK(fs_gitcfg_parse(buf, size, stop_at, &st, &err) == -7);
        CHECK(st.n == st.stop_at && err.msg[0] == '\0');
    }

    if (r == 0 && !cut) {
        size_t len;
        char *text = write_back(&l, &len);

        if (fs_gitcfg_parse_list(text, len, CFG_FILE, &again, &err) < 0) {
            fprintf(stderr, "written back:\n%.*s\n%s\n", (int)len, text, err.msg);
            CHECK(!"the written-back config parses");
        }
        check_same(&l, &again);
        free(text);
    }

    CHECK(fs_gitcfg_code_paths(&l, WORKTREE, HOME, &paths, &err) == 0);
    check_paths(&paths);

    fs_gitcfg_paths_free(&paths);
    fs_gitcfg_list_free(&again);
    fs_gitcfg_list_free(&l);
    free(buf);
    return 0;
}
