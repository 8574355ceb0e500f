/* git's config syntax, read as git 2.39's config.c reads it (git_parse_source
 * and the helpers under it), the include rules of its handle_path_include,
 * and the keys whose values git hands to a program or a shell.
 *
 * Why not a library: no Debian package parses git config the way git does.
 * libgit2 is a whole git implementation, and its reader is its own, not
 * git's: it differs in the corner cases an attacker would pick (a NUL byte in
 * a subsection, a partial BOM, what counts as whitespace), and being off by
 * one quirk means missing a path that git will run. This file mirrors git's
 * reader instead, and the unit tests compare it with the installed git. */
#include "fs/gitconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util.h"

/* ---- the parser ---------------------------------------------------------- */

/* git's own ctype (sane_ctype), ASCII only whatever the locale. Its space is
 * " \t\n\r" and nothing else: a \v or \f is an ordinary byte of a value, and
 * an error at the start of a line. */
static bool is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_key_char(int c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static char to_lower(int c)
{
    return (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

struct cursor {
    const unsigned char *p;
    size_t len, pos;
    size_t line; /* what git's "bad config line N" would say */
    bool eof;
    char *key; /* the section stem, then the key being read */
    size_t klen;
    char *val;
    size_t vlen;
    int fn_ret; /* fn's negative return, 0 when the parse stopped on syntax */
};

/* One character the way git's get_next_char sees it: CRLF is one newline,
 * and the end of the buffer reads as a newline that counts as a line (every
 * call at the end counts again, which git's error line numbers show). */
static int next_char(struct cursor *c)
{
    int ch;

    if (c->pos >= c->len) {
        c->eof = true;
        c->line++;
        return '\n';
    }
    ch = c->p[c->pos++];
    if (ch == '\r' && c->pos < c->len && c->p[c->pos] == '\n') {
        c->pos++;
        ch = '\n';
    }
    if (ch == '\n')
        c->line++;
    return ch;
}

/* The value after '=' up to the end of the line. Every byte stored was read
 * from the buffer, so val (len + 1 bytes) cannot overflow. */
static int parse_value(struct cursor *c)
{
    bool quote = false, comment = false;
    size_t space = 0;

    c->vlen = 0;
    for (;;) {
        int ch = next_char(c);

        if (ch == '\n') {
            if (quote) {
                c->line--; /* git blames the line the quote opened on */
                return -1;
            }
            c->val[c->vlen] = '\0';
            return 0;
        }
        if (comment)
            continue;
        if (is_space(ch) && !quote) {
            /* inner runs of blanks become as many spaces; leading and
             * trailing ones vanish */
            if (c->vlen)
                space++;
            continue;
        }
        if (!quote && (ch == ';' || ch == '#')) {
            comment = true;
            continue;
        }
        for (; space; space--)
            c->val[c->vlen++] = ' ';
        if (ch == '\\') {
            ch = next_char(c);
            switch (ch) {
            case '\n':
                continue; /* a continuation line */
            case 't':
                ch = '\t';
                break;
            case 'b':
                ch = '\b';
                break;
            case 'n':
                ch = '\n';
                break;
            case '\\':
            case '"':
                break;
            default:
                return -1; /* git rejects unknown escapes */
            }
            c->val[c->vlen++] = (char)ch;
            continue;
        }
        if (ch == '"') {
            quote = !quote;
            continue;
        }
        c->val[c->vlen++] = (char)ch;
    }
}

/* The rest of a key name after its first letter, then an optional value.
 * 0, -1 on a syntax error, or fn's negative return (in fn_ret too). */
static int get_value(struct cursor *c, int (*fn)(void *ctx, const char *key, const char *value),
                     void *ctx)
{
    const char *value = NULL;
    int ch, r;

    for (;;) {
        ch = next_char(c);
        if (c->eof || !is_key_char(ch))
            break;
        c->key[c->klen++] = to_lower(ch);
    }
    while (ch == ' ' || ch == '\t')
        ch = next_char(c);
    if (ch != '\n') {
        if (ch != '=' || parse_value(c) < 0)
            return -1;
        value = c->val;
    }
    c->key[c->klen] = '\0';
    r = fn(ctx, c->key, value);
    if (r < 0)
        c->fn_ret = r;
    return r < 0 ? r : 0;
}

/* `[section "subsection"]` after the blank that ended the section name:
 * only `\` escapes (any character stands for itself), case kept, and the
 * closing quote must be followed by `]` at once. */
static int get_extended_base_var(struct cursor *c, int ch)
{
    do {
        if (ch == '\n')
            goto incomplete;
        ch = next_char(c);
    } while (is_space(ch));
    if (ch != '"')
        return -1;
    c->key[c->klen++] = '.';
    for (;;) {
        ch = next_char(c);
        if (ch == '\n')
            goto incomplete;
        if (ch == '"')
            break;
        if (ch == '\\') {
            ch = next_char(c);
            if (ch == '\n')
                goto incomplete;
        }
        /* A NUL is stored like git stores it: the key then reads cut at
         * it, as git's callbacks see it (`[core "hooksPath\0x"]` sets
         * core.hookspath in git). */
        c->key[c->klen++] = (char)ch;
    }
    return next_char(c) == ']' ? 0 : -1;

incomplete:
    c->line--;
    return -1;
}

/* After `[`: the section name, lowercased, with the deprecated
 * `[section.subsection]` form's dots kept. */
static int get_base_var(struct cursor *c)
{
    for (;;) {
        int ch = next_char(c);

        if (c->eof)
            return -1;
        if (ch == ']')
            return 0;
        if (is_space(ch))
            return get_extended_base_var(c, ch);
        if (!is_key_char(ch) && ch != '.')
            return -1;
        c->key[c->klen++] = to_lower(ch);
    }
}

int fs_gitcfg_parse(const char *buf, size_t len,
                    int (*fn)(void *ctx, const char *key, const char *value), void *ctx,
                    struct nf_err *err)
{
    /* Notepad writes a UTF-8 BOM; git skips a whole one and refuses a
     * partial one. */
    static const unsigned char bom[] = { 0xef, 0xbb, 0xbf };
    struct cursor c = { .p = (const unsigned char *)buf, .len = len, .line = 1 };
    _cleanup_free_ char *mem = NULL;
    size_t bom_at = 0, baselen = 0;
    bool in_bom = true, comment = false;

    /* Key and value each hold at most one byte per byte read. */
    mem = malloc(2 * (len + 2));
    if (!mem)
        return nf_err_sys(err, "out of memory");
    c.key = mem;
    c.val = mem + len + 2;
    for (;;) {
        int ch = next_char(&c);

        if (in_bom) {
            if (ch == bom[bom_at]) {
                in_bom = ++bom_at < sizeof(bom);
                continue;
            }
            if (bom_at)
                break;
            in_bom = false;
        }
        if (ch == '\n') {
            if (c.eof)
                return 0;
            comment = false;
            continue;
        }
        if (comment || is_space(ch))
            continue;
        if (ch == '#' || ch == ';') {
            comment = true;
            continue;
        }
        if (ch == '[') {
            c.klen = 0;
            if (get_base_var(&c) < 0 || c.klen < 1)
                break;
            c.key[c.klen++] = '.';
            baselen = c.klen;
            continue;
        }
        if (!is_alpha(ch))
            break;
        c.klen = baselen;
        c.key[c.klen++] = to_lower(ch);
        if (get_value(&c, fn, ctx) < 0) {
            if (c.fn_ret < 0)
                return c.fn_ret;
            break;
        }
    }
    return nf_err_set(err, EINVAL, "bad config line %zu", c.line);
}

/* ---- the entry list ------------------------------------------------------ */

static int add_src(struct fs_gitcfg_list *l, const char *path, enum fs_gitcfg_src_state state,
                   unsigned depth, bool dir, struct nf_err *err)
{
    struct fs_gitcfg_src *s;

    if (l->n_src == l->cap_src) {
        size_t cap = l->cap_src ? l->cap_src * 2 : 8;
        struct fs_gitcfg_src *v = realloc(l->src, cap * sizeof(*v));

        if (!v)
            return nf_err_sys(err, "out of memory");
        l->src = v;
        l->cap_src = cap;
    }
    s = &l->src[l->n_src];
    s->path = strdup(path);
    if (!s->path)
        return nf_err_sys(err, "out of memory");
    s->state = state;
    s->depth = depth;
    s->dir = dir;
    l->n_src++;
    return 0;
}

static int add_entry(struct fs_gitcfg_list *l, const char *key, const char *value, const char *file,
                     struct nf_err *err)
{
    struct fs_gitcfg_entry *e;

    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        struct fs_gitcfg_entry *v = realloc(l->v, cap * sizeof(*v));

        if (!v)
            return nf_err_sys(err, "out of memory");
        l->v = v;
        l->cap = cap;
    }
    e = &l->v[l->n];
    e->key = strdup(key);
    e->value = value ? strdup(value) : NULL;
    e->file = file;
    if (!e->key || (value && !e->value)) {
        free(e->key);
        free(e->value);
        return nf_err_sys(err, "out of memory");
    }
    l->n++;
    return 0;
}

void fs_gitcfg_list_free(struct fs_gitcfg_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].key);
        free(l->v[i].value);
    }
    for (size_t i = 0; i < l->n_src; i++)
        free(l->src[i].path);
    free(l->v);
    free(l->src);
    memset(l, 0, sizeof(*l));
}

/* fn's return when it failed and set err itself: tells it from a syntax
 * error (-1), which the reader of the file names the file for. */
#define FN_FAILED (-2)

struct parse_list_ctx {
    struct fs_gitcfg_list *out;
    const char *file;
    struct nf_err *err;
};

static int parse_list_entry(void *ctx, const char *key, const char *value)
{
    struct parse_list_ctx *pc = ctx;

    return add_entry(pc->out, key, value, pc->file, pc->err) < 0 ? FN_FAILED : 0;
}

int fs_gitcfg_parse_list(const char *buf, size_t len, const char *file, struct fs_gitcfg_list *out,
                         struct nf_err *err)
{
    struct parse_list_ctx pc = { .out = out, .err = err };

    if (add_src(out, file, FS_GITCFG_READ, 0, false, err) < 0)
        return -1;
    pc.file = out->src[out->n_src - 1].path;
    if (fs_gitcfg_parse(buf, len, parse_list_entry, &pc, err) < 0)
        return -1;
    return 0;
}

/* ---- the loader ---------------------------------------------------------- */

struct loader {
    const struct fs_gitcfg_env *env;
    struct fs_gitcfg_list *out;
    size_t total;
    struct nf_err *err;
};

/* One file being parsed: raw is its path as git spells it (a relative
 * include is taken against it, `..` and all), file its normalised form. */
struct frame {
    struct loader *ld;
    const char *raw;
    const char *file;
    unsigned depth;
};

static int load_file(struct loader *ld, const char *raw, unsigned depth, const char *from);

/* git's parse_config_key(var, "includeif", &cond, ..., &name) with name
 * "path": a subsection (even an empty one) is required. */
static bool is_include_key(const char *key)
{
    const char *last;

    if (strcmp(key, "include.path") == 0)
        return true;
    if (strncmp(key, "includeif.", 10) != 0)
        return false;
    last = strrchr(key, '.');
    return last > key + 9 && strcmp(last, ".path") == 0;
}

/* An include directive's value to the path git would open (handle_path_include
 * and interpolate_path): `%(prefix)/` and `~`/`~/` expanded, a relative path
 * taken against the including file's directory. NULL with *unresolved set
 * when it cannot be expanded here. */
static char *include_target(const struct frame *f, const char *value, bool *unresolved,
                            struct nf_err *err)
{
    const char *base = "", *rest = value, *sep = "";
    size_t baselen = 0;
    char *raw;

    *unresolved = false;
    if (strncmp(value, "%(prefix)/", 10) == 0) {
        if (!f->ld->env->prefix || f->ld->env->prefix[0] != '/') {
            *unresolved = true;
            return NULL;
        }
        base = f->ld->env->prefix;
        baselen = strlen(base);
        sep = "/";
        rest = value + 10;
    } else if (value[0] == '~') {
        /* `~user/` needs the password database, which a pure planner
         * does not read: the caller decides. */
        if ((value[1] != '\0' && value[1] != '/') || !f->ld->env->home ||
            f->ld->env->home[0] != '/') {
            *unresolved = true;
            return NULL;
        }
        base = f->ld->env->home;
        baselen = strlen(base);
        rest = value + 1;
    } else if (value[0] != '/') {
        base = f->raw;
        baselen = (size_t)(strrchr(f->raw, '/') - f->raw) + 1;
    }
    if (asprintf(&raw, "%.*s%s%s", (int)baselen, base, sep, rest) < 0) {
        nf_err_sys(err, "out of memory");
        return NULL;
    }
    return raw;
}

static int include(struct frame *f, const char *key, const char *value)
{
    struct loader *ld = f->ld;
    _cleanup_free_ char *raw = NULL;
    bool unresolved;

    /* git refuses the file then ("missing value for 'include.path'") */
    if (!value)
        return nf_err_set(ld->err, EINVAL, "%s: %s has no value", f->file, key);
    /* An empty path names the including file's directory, which git
     * cannot read either (it fails or reads nothing): nothing to follow
     * or to protect. */
    if (value[0] == '\0')
        return 0;
    raw = include_target(f, value, &unresolved, ld->err);
    if (unresolved)
        return add_src(ld->out, value, FS_GITCFG_UNRESOLVED, f->depth + 1, false, ld->err);
    if (!raw)
        return -1;
    return load_file(ld, raw, f->depth + 1, f->file);
}

static int on_entry(void *ctx, const char *key, const char *value)
{
    struct frame *f = ctx;

    if (add_entry(f->ld->out, key, value, f->file, f->ld->err) < 0)
        return FN_FAILED;
    /* The directive is listed before what it includes, as git lists it. */
    if (is_include_key(key) && include(f, key, value) < 0)
        return FN_FAILED;
    return 0;
}

/* Read a whole regular file of at most FS_GITCFG_MAX_SIZE bytes. */
static int read_capped(int fd, const char *file, const struct stat *st, char **buf, size_t *len,
                       struct nf_err *err)
{
    size_t cap = (size_t)st->st_size + 1, n = 0;
    _cleanup_free_ char *b = NULL;

    if (st->st_size > FS_GITCFG_MAX_SIZE)
        goto too_big;
    b = malloc(cap);
    if (!b)
        return nf_err_sys(err, "out of memory");
    for (;;) {
        ssize_t r;

        if (n == cap) {
            /* the file grew since fstat */
            char *nb;

            if (cap > FS_GITCFG_MAX_SIZE)
                goto too_big;
            cap = cap * 2 > FS_GITCFG_MAX_SIZE + 1 ? FS_GITCFG_MAX_SIZE + 1 : cap * 2;
            nb = realloc(b, cap);
            if (!nb)
                return nf_err_sys(err, "out of memory");
            b = nb;
        }
        r = RETRY_EINTR(read(fd, b + n, cap - n));
        if (r < 0)
            return nf_err_sys(err, "read %s", file);
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > FS_GITCFG_MAX_SIZE)
        goto too_big;
    *buf = steal_pointer(&b);
    *len = n;
    return 0;

too_big:
    return nf_err_set(err, EFBIG, "git config %s: larger than %d bytes", file, FS_GITCFG_MAX_SIZE);
}

static int load_file(struct loader *ld, const char *raw, unsigned depth, const char *from)
{
    struct fs_gitcfg_list *out = ld->out;
    _cleanup_close_ int fd = -1;
    _cleanup_free_ char *buf = NULL;
    char file[PATH_MAX];
    struct frame f;
    struct stat st;
    size_t len = 0;
    int r;

    if (pol_path_normalize(raw, NULL, NULL, file, sizeof(file), ld->err) < 0)
        return nf_err_prefix(ld->err, "git config");
    /* O_NONBLOCK: a FIFO planted at an include path must not hang the run
     * (git would hang on it); O_NOCTTY: nor may a terminal become ours. */
    fd = open(raw, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return add_src(out, file, FS_GITCFG_ABSENT, depth, false, ld->err);
        if (errno == EACCES)
            return add_src(out, file, FS_GITCFG_UNREADABLE, depth, false, ld->err);
        return nf_err_sys(ld->err, "open %s", file);
    }
    /* git counts only the includes it can open, and dies past the limit
     * ("exceeded maximum include depth"): a loop of includes ends here. */
    if (depth > FS_GITCFG_MAX_DEPTH)
        return nf_err_set(ld->err, ELOOP,
                          "git config %s: includes nested deeper than %d (included from %s)", file,
                          FS_GITCFG_MAX_DEPTH, from);
    if (fstat(fd, &st) < 0)
        return nf_err_sys(ld->err, "stat %s", file);
    if (!S_ISREG(st.st_mode))
        return add_src(out, file, FS_GITCFG_NOT_REGULAR, depth, S_ISDIR(st.st_mode), ld->err);
    if (read_capped(fd, file, &st, &buf, &len, ld->err) < 0)
        return -1;
    /* ten nested includes need not hold ten descriptors */
    close(steal_fd(&fd));
    ld->total += len;
    if (ld->total > FS_GITCFG_MAX_TOTAL)
        return nf_err_set(ld->err, EFBIG,
                          "git config %s: its includes add up to more than %d bytes", file,
                          FS_GITCFG_MAX_TOTAL);
    if (add_src(out, file, FS_GITCFG_READ, depth, false, ld->err) < 0)
        return -1;
    f = (struct frame){
        .ld = ld, .raw = raw, .file = out->src[out->n_src - 1].path, .depth = depth
    };
    r = fs_gitcfg_parse(buf, len, on_entry, &f, ld->err);
    if (r == -1)
        return nf_err_prefix(ld->err, "git config %s", file);
    return r < 0 ? -1 : 0;
}

int fs_gitcfg_load(const char *path, const struct fs_gitcfg_env *env, struct fs_gitcfg_list *out,
                   struct nf_err *err)
{
    struct loader ld = { .env = env, .out = out, .err = err };

    if (!path || path[0] != '/')
        return nf_err_set(err, EINVAL, "git config %s: not an absolute path", path ? path : "");
    return load_file(&ld, path, 0, path);
}

/* ---- the paths git runs or reads later ----------------------------------- */

struct collect {
    struct fs_gitcfg_paths *out;
    const char *worktree;
    const char *home; /* NULL unless absolute */
    struct nf_err *err;
};

static int add_path(struct collect *co, const char *path, bool dir)
{
    struct fs_gitcfg_paths *p = co->out;

    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        struct fs_gitcfg_path *v = realloc(p->v, cap * sizeof(*v));

        if (!v)
            return nf_err_sys(co->err, "out of memory");
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n].path = strdup(path);
    if (!p->v[p->n].path)
        return nf_err_sys(co->err, "out of memory");
    p->v[p->n].dir = dir;
    p->n++;
    return 0;
}

static int add_unresolved(struct collect *co, const char *s)
{
    return pol_strv_add(&co->out->unresolved, s, co->err);
}

/* p against the worktree, `~` and `~/` against home, into abs. 1 when
 * resolved; 0 when it went to the unresolved list (`~user`, no home, too
 * long for anyone to open). */
static int resolve(struct collect *co, const char *p, char abs[PATH_MAX])
{
    struct nf_err ignored;

    if (p[0] == '~' && ((p[1] != '\0' && p[1] != '/') || !co->home))
        return add_unresolved(co, p) < 0 ? -1 : 0;
    if (pol_path_normalize(p, co->worktree, co->home, abs, PATH_MAX, &ignored) < 0)
        return add_unresolved(co, p) < 0 ? -1 : 0;
    return 1;
}

static int add_resolved(struct collect *co, const char *p, bool dir)
{
    char abs[PATH_MAX];
    int r = resolve(co, p, abs);

    return r <= 0 ? r : add_path(co, abs, dir);
}

/* A value git reads with git_config_pathname (interpolate_path): `~` and
 * `%(prefix)/` expanded by git itself, relative to the worktree. */
static int resolve_git_path(struct collect *co, const char *value, char abs[PATH_MAX])
{
    if (!value || value[0] == '\0')
        return 0;
    if (strncmp(value, "%(prefix)/", 10) == 0)
        return add_unresolved(co, value) < 0 ? -1 : 0;
    return resolve(co, value, abs);
}

/* core.hooksPath. husky 9 points it at `.husky/_`, whose stub scripts run
 * `.husky/<hook>`: the parent of a hooks directory named `_` is code too. */
static int hooks_path(struct collect *co, const char *value)
{
    char abs[PATH_MAX];
    char *slash;
    int r = resolve_git_path(co, value, abs);

    if (r <= 0)
        return r;
    if (add_path(co, abs, true) < 0)
        return -1;
    slash = strrchr(abs, '/');
    if (strcmp(slash, "/_") != 0)
        return 0;
    if (slash == abs)
        slash++; /* "/_": the parent is "/" */
    *slash = '\0';
    return add_path(co, abs, true);
}

/* The blanks and operators that end a word in sh. */
#define SHELL_BREAKS " \t\n;|&()<>`"
/* A quoted word holding one of these is a script of its own, split again
 * (`sh -c "./evil.sh; x"`); so is the argument of `-c`. */
#define SHELL_SCRIPT ";|&<>`$"
/* `sh -c "sh -c '...'"` is split this many times at most. */
#define SHELL_MAX_NESTING 3

struct word_fn {
    int (*fn)(struct collect *co, const char *w, const char *lit, unsigned depth, void *st);
    void *st;
};

static void put(char *w, char *lit, size_t *k, char ch, bool literal)
{
    w[*k] = ch;
    lit[(*k)++] = literal;
}

/* Split s into words as sh would, without expanding anything: quotes and
 * backslashes removed, words ended by blanks and by ;|&()<>` outside
 * quotes, a `#` starting a word starting a comment. lit[i] is 1 when w[i]
 * was quoted or escaped (a quoted `~` or `$` is not expanded). */
static int each_word(struct collect *co, const char *s, unsigned depth, const struct word_fn *wf)
{
    size_t n = strlen(s), k = 0;
    _cleanup_free_ char *w = malloc(n + 1);
    _cleanup_free_ char *lit = malloc(n + 1);
    enum { PLAIN, SINGLE, DOUBLE } q = PLAIN;
    bool started = false;

    if (!w || !lit)
        return nf_err_sys(co->err, "out of memory");
    for (size_t i = 0;; i++) {
        char ch = s[i];

        if (ch == '\0' || (q == PLAIN && strchr(SHELL_BREAKS, ch))) {
            if (k > 0) {
                w[k] = '\0';
                if (wf->fn(co, w, lit, depth, wf->st) < 0)
                    return -1;
            }
            k = 0;
            started = false;
            if (ch == '\0')
                return 0;
            continue;
        }
        switch (q) {
        case SINGLE:
            if (ch == '\'')
                q = PLAIN;
            else
                put(w, lit, &k, ch, 1);
            continue;
        case DOUBLE:
            if (ch == '"') {
                q = PLAIN;
            } else if (ch == '\\' && s[i + 1] && strchr("\\\"$`\n", s[i + 1])) {
                if (s[++i] != '\n')
                    put(w, lit, &k, s[i], 1);
            } else {
                /* "$x" and "`x`" still expand inside double quotes */
                put(w, lit, &k, ch, ch != '$' && ch != '`');
            }
            continue;
        case PLAIN:
            break;
        }
        if (ch == '#' && !started) {
            while (s[i + 1] && s[i + 1] != '\n')
                i++;
            continue;
        }
        started = true;
        if (ch == '\'') {
            q = SINGLE;
        } else if (ch == '"') {
            q = DOUBLE;
        } else if (ch == '\\') {
            if (s[i + 1] == '\n')
                i++;
            else if (s[i + 1])
                put(w, lit, &k, s[++i], 1);
            else
                put(w, lit, &k, ch, 1);
        } else {
            put(w, lit, &k, ch, 0);
        }
    }
}

/* `-c`, `-lc`, `-ec`...: the next word is a script. */
static bool is_dash_c(const char *w)
{
    return w[0] == '-' && w[1] != '-' && strchr(w, 'c') && !strchr(w + 1, '=');
}

struct program_words {
    bool script_next;
};

/* One word of a program's command line: the path it names, if it looks
 * like one. In `NAME=VALUE` or `--opt=VALUE` the path is VALUE. */
static int program_word(struct collect *co, const char *w, const char *lit, unsigned depth,
                        void *st)
{
    struct program_words *pw = st, inner = { false };
    const struct word_fn again = { program_word, &inner };
    const char *eq = strchr(w, '='), *slash = strchr(w, '/');
    size_t off = eq && (!slash || eq < slash) ? (size_t)(eq + 1 - w) : 0;
    const char *c = w + off;
    bool tilde = c[0] == '~' && !lit[off];
    /* only quoting can have kept a script inside one word */
    bool script = pw->script_next || (memchr(lit, 1, strlen(w)) && strpbrk(w, SHELL_SCRIPT));
    _cleanup_free_ char *tmp = NULL;

    pw->script_next = is_dash_c(w);
    /* a script is its words, not a path */
    if (script && depth < SHELL_MAX_NESTING)
        return each_word(co, w, depth + 1, &again);
    if (!strchr(c, '/') && !tilde)
        return 0;
    /* a URL (a remote, a proxy) is never a program git runs */
    if (strstr(c, "://"))
        return 0;
    if (c[0] == '$' && !lit[off]) {
        const char *rest = NULL;

        if (strncmp(c, "$HOME", 5) == 0)
            rest = c + 5;
        else if (strncmp(c, "${HOME}", 7) == 0)
            rest = c + 7;
        if (rest && (rest[0] == '\0' || rest[0] == '/') && !strchr(rest, '$')) {
            if (asprintf(&tmp, "~%s", rest) < 0)
                return nf_err_sys(co->err, "out of memory");
            return add_resolved(co, tmp, false);
        }
    }
    /* Any other expansion names a path only the shell knows. */
    for (size_t i = off; w[i]; i++)
        if ((w[i] == '$' || w[i] == '`') && !lit[i])
            return add_unresolved(co, c);
    if (c[0] == '~' && !tilde) {
        /* a quoted `~` is a directory of that name */
        if (asprintf(&tmp, "./%s", c) < 0)
            return nf_err_sys(co->err, "out of memory");
        return add_resolved(co, tmp, false);
    }
    return add_resolved(co, c, false);
}

static int program(struct collect *co, const char *value, bool argv0)
{
    struct program_words pw = { false };
    const struct word_fn wf = { program_word, &pw };

    if (!value)
        return 0;
    /* `!cmd` is a shell command for aliases, credential helpers and
     * submodule.*.update alike */
    if (value[0] == '!')
        value++;
    /* git execs some values as one argv[0], without a shell: the whole
     * value is then the path, blanks and all, `~` not expanded */
    if (argv0 && (strchr(value, '/') || value[0] == '~')) {
        _cleanup_free_ char *tmp = NULL;

        if (asprintf(&tmp, "%s%s", value[0] == '~' ? "./" : "", value) < 0)
            return nf_err_sys(co->err, "out of memory");
        if (add_resolved(co, tmp, false) < 0)
            return -1;
    }
    return each_word(co, value, 0, &wf);
}

/* What git_config_maybe_bool accepts. A boolean never holds a '/' or
 * starts with '~', so this only spares the word splitter. */
static bool is_bool(const char *v)
{
    static const char *const words[] = { "true", "yes", "on", "false", "no", "off" };
    char *end;

    if (!v || v[0] == '\0')
        return true;
    for (size_t i = 0; i < NF_ARRAY_SIZE(words); i++)
        if (strcasecmp(v, words[i]) == 0)
            return true;
    errno = 0;
    (void)strtoimax(v, &end, 0);
    if (end == v || errno == ERANGE)
        return false;
    return end[0] == '\0' || (end[1] == '\0' && strchr("kKmMgG", end[0]));
}

enum prog_kind {
    PROG_SHELL, /* run through sh: every path-like word */
    PROG_ARGV0, /* exec'ed as one path, without a shell (and words, to be safe) */
    PROG_NONBOOL,
    PROG_BANG,  /* only a `!command` value is a command */
    PROG_ALIAS, /* `!command`, or arguments to git */
};

enum sub_rule {
    SUB_NONE, /* section.key */
    SUB_SOME, /* section.<subsection>.key */
    SUB_ANY,
};

/* Keys whose value git hands to a program or a shell. A name of "*" is any
 * name; "*cmd" any name ending in "cmd". */
static const struct {
    const char *section;
    enum sub_rule sub;
    const char *name;
    enum prog_kind kind;
} programs[] = {
    { "core", SUB_NONE, "fsmonitor", PROG_NONBOOL },
    { "core", SUB_NONE, "sshcommand", PROG_SHELL },
    { "core", SUB_NONE, "editor", PROG_SHELL },
    { "core", SUB_NONE, "pager", PROG_SHELL },
    { "core", SUB_NONE, "askpass", PROG_ARGV0 },
    { "core", SUB_NONE, "gitproxy", PROG_SHELL },
    { "core", SUB_NONE, "alternaterefscommand", PROG_SHELL },
    { "sequence", SUB_NONE, "editor", PROG_SHELL },
    { "credential", SUB_ANY, "helper", PROG_SHELL },
    { "diff", SUB_SOME, "textconv", PROG_SHELL },
    { "diff", SUB_SOME, "command", PROG_SHELL },
    { "diff", SUB_NONE, "external", PROG_SHELL },
    { "filter", SUB_SOME, "clean", PROG_SHELL },
    { "filter", SUB_SOME, "smudge", PROG_SHELL },
    { "filter", SUB_SOME, "process", PROG_SHELL },
    { "merge", SUB_SOME, "driver", PROG_SHELL },
    { "gpg", SUB_ANY, "program", PROG_ARGV0 },
    { "gpg", SUB_SOME, "defaultkeycommand", PROG_SHELL },
    { "alias", SUB_ANY, "*", PROG_ALIAS },
    { "pager", SUB_ANY, "*", PROG_NONBOOL },
    { "interactive", SUB_NONE, "difffilter", PROG_SHELL },
    { "difftool", SUB_SOME, "cmd", PROG_SHELL },
    { "difftool", SUB_SOME, "path", PROG_ARGV0 },
    { "mergetool", SUB_SOME, "cmd", PROG_SHELL },
    { "mergetool", SUB_SOME, "path", PROG_ARGV0 },
    { "remote", SUB_SOME, "receivepack", PROG_SHELL },
    { "remote", SUB_SOME, "uploadpack", PROG_SHELL },
    { "uploadpack", SUB_NONE, "packobjectshook", PROG_SHELL },
    { "web", SUB_NONE, "browser", PROG_SHELL },
    { "help", SUB_NONE, "browser", PROG_SHELL },
    { "browser", SUB_SOME, "cmd", PROG_SHELL },
    { "browser", SUB_SOME, "path", PROG_ARGV0 },
    { "man", SUB_SOME, "cmd", PROG_SHELL },
    { "man", SUB_SOME, "path", PROG_ARGV0 },
    { "sendemail", SUB_ANY, "*cmd", PROG_SHELL },
    { "sendemail", SUB_ANY, "smtpserver", PROG_ARGV0 },
    { "submodule", SUB_SOME, "update", PROG_BANG },
    { "tar", SUB_SOME, "command", PROG_SHELL },
    { "trailer", SUB_SOME, "command", PROG_SHELL },
    { "trailer", SUB_SOME, "cmd", PROG_SHELL },
    { "imap", SUB_NONE, "tunnel", PROG_SHELL },
    { "guitool", SUB_SOME, "cmd", PROG_SHELL },
};

static bool name_matches(const char *pattern, const char *name)
{
    size_t pl = strlen(pattern), nl = strlen(name);

    if (strcmp(pattern, "*") == 0)
        return true;
    if (pattern[0] == '*')
        return nl >= pl - 1 && strcasecmp(name + nl - (pl - 1), pattern + 1) == 0;
    return strcasecmp(pattern, name) == 0;
}

static int entry_paths(struct collect *co, const char *key, const char *value, unsigned depth);

struct git_args {
    bool config_next;
};

/* An alias without `!` is arguments to git, and `git -c core.pager=./x log`
 * or `--exec-path=./x` runs what they name. */
static int git_arg_word(struct collect *co, const char *w, const char *lit, unsigned depth,
                        void *st)
{
    struct git_args *ga = st;
    _cleanup_free_ char *key = NULL;
    char *eq, *first, *last;

    (void)lit;
    if (ga->config_next) {
        ga->config_next = false;
        eq = strchr(w, '=');
        key = strndup(w, eq ? (size_t)(eq - w) : strlen(w));
        if (!key)
            return nf_err_sys(co->err, "out of memory");
        /* git -c canonicalises like the parser: section and name
         * lowercased, subsection kept */
        first = strchr(key, '.');
        last = strrchr(key, '.');
        for (char *p = key; first && p < first; p++)
            *p = to_lower(*p);
        for (char *p = last; p && *p; p++)
            *p = to_lower(*p);
        return entry_paths(co, key, eq ? eq + 1 : NULL, depth + 1);
    }
    if (strcmp(w, "-c") == 0) {
        ga->config_next = true;
        return 0;
    }
    if (strncmp(w, "--exec-path=", 12) == 0 && w[12])
        return add_resolved(co, w + 12, true);
    return 0;
}

/* `-c` inside an alias may name an alias again: bounded. */
#define ALIAS_MAX_NESTING 3

/* The paths one entry names. depth > 0: the entry came from `git -c` in an
 * alias, where an absolute include.path is followed too. */
static int entry_paths(struct collect *co, const char *key, const char *value, unsigned depth)
{
    const char *first = strchr(key, '.'), *last = strrchr(key, '.');
    size_t seclen;
    char abs[PATH_MAX];

    if (!first || depth > ALIAS_MAX_NESTING)
        return 0;
    seclen = (size_t)(first - key);
    if (strcasecmp(key, "core.hookspath") == 0)
        return hooks_path(co, value);
    /* git init and clone copy this directory's hooks into the new repo */
    if (strcasecmp(key, "init.templatedir") == 0) {
        int r = resolve_git_path(co, value, abs);

        return r <= 0 ? r : add_path(co, abs, true);
    }
    if (depth > 0 && is_include_key(key) && value && (value[0] == '/' || value[0] == '~')) {
        int r = resolve_git_path(co, value, abs);

        return r <= 0 ? r : add_path(co, abs, false);
    }
    for (size_t i = 0; i < NF_ARRAY_SIZE(programs); i++) {
        bool has_sub = first != last;

        if (strlen(programs[i].section) != seclen ||
            strncasecmp(programs[i].section, key, seclen) != 0)
            continue;
        if ((programs[i].sub == SUB_NONE && has_sub) || (programs[i].sub == SUB_SOME && !has_sub))
            continue;
        if (!name_matches(programs[i].name, last + 1))
            continue;
        switch (programs[i].kind) {
        case PROG_SHELL:
            return program(co, value, false);
        case PROG_ARGV0:
            return program(co, value, true);
        case PROG_NONBOOL:
            return is_bool(value) ? 0 : program(co, value, false);
        case PROG_BANG:
            return value && value[0] == '!' ? program(co, value, false) : 0;
        case PROG_ALIAS: {
            struct git_args ga = { false };
            const struct word_fn wf = { git_arg_word, &ga };

            if (!value)
                return 0;
            if (value[0] == '!')
                return program(co, value, false);
            return each_word(co, value, depth, &wf);
        }
        }
    }
    return 0;
}

static int path_cmp(const void *a, const void *b)
{
    return strcmp(((const struct fs_gitcfg_path *)a)->path,
                  ((const struct fs_gitcfg_path *)b)->path);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, each path once (a directory if any mention was one). */
static void sort_unique(struct fs_gitcfg_paths *p)
{
    size_t k = 0;
    struct pol_strv *u = &p->unresolved;

    if (p->n)
        qsort(p->v, p->n, sizeof(*p->v), path_cmp);
    for (size_t i = 0; i < p->n; i++) {
        if (k > 0 && strcmp(p->v[k - 1].path, p->v[i].path) == 0) {
            p->v[k - 1].dir |= p->v[i].dir;
            free(p->v[i].path);
            continue;
        }
        p->v[k++] = p->v[i];
    }
    p->n = k;
    if (u->n)
        qsort(u->v, u->n, sizeof(*u->v), str_cmp);
    k = 0;
    for (size_t i = 0; i < u->n; i++) {
        if (k > 0 && strcmp(u->v[k - 1], u->v[i]) == 0) {
            free(u->v[i]);
            continue;
        }
        u->v[k++] = u->v[i];
    }
    u->n = k;
    if (u->v)
        u->v[k] = NULL;
}

int fs_gitcfg_code_paths(const struct fs_gitcfg_list *cfg, const char *worktree, const char *home,
                         struct fs_gitcfg_paths *out, struct nf_err *err)
{
    struct collect co = { .out = out, .worktree = worktree, .err = err };
    int r = 0;

    if (!worktree || worktree[0] != '/')
        return nf_err_set(err, EINVAL, "git worktree %s: not an absolute path",
                          worktree ? worktree : "");
    co.home = home && home[0] == '/' ? home : NULL;
    for (size_t i = 0; i < cfg->n_src && r >= 0; i++) {
        const struct fs_gitcfg_src *s = &cfg->src[i];

        if (s->depth == 0)
            continue;
        if (s->state == FS_GITCFG_UNRESOLVED)
            r = add_unresolved(&co, s->path);
        else
            r = add_path(&co, s->path, s->dir);
    }
    for (size_t i = 0; i < cfg->n && r >= 0; i++)
        r = entry_paths(&co, cfg->v[i].key, cfg->v[i].value, 0);
    sort_unique(out);
    return r < 0 ? -1 : 0;
}

void fs_gitcfg_paths_free(struct fs_gitcfg_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i].path);
    free(p->v);
    pol_strv_free(&p->unresolved);
    memset(p, 0, sizeof(*p));
}
