/* fs/gitconfig.c: git's config files and the paths in them that git runs
 * later. The reader is checked against the installed git itself: for each
 * case the test writes files into a private tree, runs
 * `git config --includes --list -z --file F` there, and requires
 * fs_gitcfg_load to list the same entries byte for byte, and to refuse
 * exactly what git refuses, naming the same line. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/gitconfig.h"
#include "tests/unit/tmptree.h"

/* ---- fixture: a private directory D ------------------------------------- */

struct fx {
    char d[256];
};

static int fx_setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));

    if (!fx || tmptree_make("gitconfig", fx->d, sizeof(fx->d)) < 0) {
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *fx = *state;

    tmptree_remove(fx->d);
    free(fx);
    return 0;
}

/* Write dir/rel (making its directories), "$D" in text standing for dir. */
static void put(const char *dir, const char *rel, const char *text, size_t len)
{
    char path[PATH_MAX];
    char *buf = malloc(len * 4 + 1);
    size_t o = 0;
    int fd;

    assert_non_null(buf);
    for (size_t i = 0; i < len; i++) {
        if (i + 1 < len && text[i] == '$' && text[i + 1] == 'D') {
            memcpy(buf + o, dir, strlen(dir));
            o += strlen(dir);
            i++;
        } else {
            buf[o++] = text[i];
        }
    }
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    for (char *p = path + strlen(dir) + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            fail_msg("mkdir %s: %s", path, strerror(errno));
        *p = '/';
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, buf, o) != (ssize_t)o)
        fail_msg("write %s: %s", path, strerror(errno));
    close(fd);
    free(buf);
}

static void puts_(const char *dir, const char *rel, const char *text)
{
    put(dir, rel, text, strlen(text));
}

/* ---- git itself, and the loader rendered as git prints it --------------- */

#define OUT_MAX (256 * 1024)

struct listing {
    char out[OUT_MAX]; /* `git config --list -z`: "key\nvalue\0" or "key\0" */
    size_t len;
    bool ok;
    long bad_line; /* N of "bad config line N", -1 when not said */
    char msg[1024];
};

static long bad_line_in(const char *s)
{
    const char *p = strstr(s, "bad config line ");

    return p ? strtol(p + strlen("bad config line "), NULL, 10) : -1;
}

/* Run git on dir/main with HOME=dir/home and no other config. */
static void git_list(const char *dir, struct listing *g)
{
    char cmd[4 * PATH_MAX], errpath[PATH_MAX];
    FILE *p, *e;
    size_t n;
    int status;

    if (snprintf(errpath, sizeof(errpath), "%s/git.err", dir) >= (int)sizeof(errpath))
        fail_msg("%s: path too long", dir);
    /* env -i: nothing of the caller's git environment (GIT_DIR,
     * GIT_CONFIG_PARAMETERS, XDG_CONFIG_HOME) may leak in */
    if (snprintf(cmd, sizeof(cmd),
                 "cd '%s' && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME='%s/home' LC_ALL=C "
                 "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "
                 "git config --includes --list -z --file '%s/main' 2>'%s'",
                 dir, dir, dir, errpath) >= (int)sizeof(cmd))
        fail_msg("%s: path too long", dir);
    p = popen(cmd, "r");
    if (!p)
        fail_msg("popen git: %s", strerror(errno));
    g->len = fread(g->out, 1, sizeof(g->out), p);
    status = pclose(p);
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
        fail_msg("git is needed for the differential tests and could not run (status %d)", status);
    g->ok = WEXITSTATUS(status) == 0;
    g->msg[0] = '\0';
    e = fopen(errpath, "re");
    if (e) {
        n = fread(g->msg, 1, sizeof(g->msg) - 1, e);
        g->msg[n] = '\0';
        fclose(e);
    }
    g->bad_line = bad_line_in(g->msg);
    unlink(errpath);
}

static void render(const struct fs_gitcfg_list *l, struct listing *o)
{
    o->len = 0;
    for (size_t i = 0; i < l->n; i++) {
        const struct fs_gitcfg_entry *e = &l->v[i];
        int n = e->value ? snprintf(o->out + o->len, OUT_MAX - o->len, "%s\n%s", e->key, e->value)
                         : snprintf(o->out + o->len, OUT_MAX - o->len, "%s", e->key);

        assert_true(n >= 0 && o->len + (size_t)n + 1 < OUT_MAX);
        o->len += (size_t)n + 1; /* snprintf's NUL is git's separator */
    }
}

static void our_list(const char *dir, struct listing *o)
{
    struct fs_gitcfg_list l = { 0 };
    struct nf_err err = { 0 };
    char home[PATH_MAX], main_path[PATH_MAX];
    struct fs_gitcfg_env env = { .home = home };

    if (snprintf(home, sizeof(home), "%s/home", dir) >= (int)sizeof(home) ||
        snprintf(main_path, sizeof(main_path), "%s/main", dir) >= (int)sizeof(main_path))
        fail_msg("%s: path too long", dir);
    o->ok = fs_gitcfg_load(main_path, &env, &l, &err) == 0;
    snprintf(o->msg, sizeof(o->msg), "%s", o->ok ? "" : err.msg);
    o->bad_line = bad_line_in(o->msg);
    render(&l, o);
    fs_gitcfg_list_free(&l);
}

/* The listing with NULs shown as "|", for a failure message. */
static const char *visible(const struct listing *l, char *buf, size_t size)
{
    size_t n = l->len < size - 1 ? l->len : size - 1;

    for (size_t i = 0; i < n; i++)
        buf[i] = l->out[i] == '\0' ? '|' : l->out[i] == '\n' ? '=' : l->out[i];
    buf[n] = '\0';
    return buf;
}

struct file {
    const char *rel;
    const char *text;
    size_t len;
};

#define F(rel, lit)                                                                                \
    {                                                                                              \
        rel, lit, sizeof(lit) - 1                                                                  \
    }
#define MAX_FILES 12

struct gcase {
    const char *name;
    struct file files[MAX_FILES]; /* files[0] is "main" */
};

/* Both readers on one case in its own directory: the same entries, the same
 * verdict, and on a syntax error the same line. */
static void same_as_git(const struct fx *fx, const struct gcase *c)
{
    static struct listing g, o;
    char dir[PATH_MAX], a[2048], b[2048];

    snprintf(dir, sizeof(dir), "%s/%s", fx->d, c->name);
    if (mkdir(dir, 0755) < 0)
        fail_msg("mkdir %s: %s", dir, strerror(errno));
    for (size_t i = 0; i < MAX_FILES && c->files[i].rel; i++)
        put(dir, c->files[i].rel, c->files[i].text, c->files[i].len);
    git_list(dir, &g);
    our_list(dir, &o);
    if (g.ok && g.len == 0)
        fail_msg("%s: git listed nothing (%s)", c->name, g.msg);
    if (g.ok != o.ok)
        fail_msg("%s: git %s (%s), we %s (%s)", c->name, g.ok ? "accepts" : "refuses", g.msg,
                 o.ok ? "accept" : "refuse", o.msg);
    if (g.len != o.len || memcmp(g.out, o.out, g.len) != 0)
        fail_msg("%s: git lists\n  %s\nwe list\n  %s", c->name, visible(&g, a, sizeof(a)),
                 visible(&o, b, sizeof(b)));
    if (!g.ok && g.bad_line >= 0 && o.bad_line >= 0 && g.bad_line != o.bad_line)
        fail_msg("%s: git says \"%s\", we say \"%s\"", c->name, g.msg, o.msg);
}

/* ---- the differential cases --------------------------------------------- */

static const struct gcase accepted[] = {
    { "sections_keys_values",
      { F("main", "# comment\n"
                  "; another\n"
                  "[core]\n"
                  "\teditor = vim\n"
                  "\tbare = false\n"
                  "[Section]\n"
                  "Key-1 = Value  # trailing\n"
                  "k2=v2;c\n"
                  "empty =\n"
                  "bool\n"
                  "  indented\t=\tx\t\n"
                  "[a.B.c]\n"
                  "x = 1\n"
                  "[sub \"Case.Sensitive\"]\n"
                  "x = 1\n"
                  "[sub \"q\\\"uo\\\\te\\x\"]  x = 2\n"
                  "[ \"nosection\"]\n"
                  "x = 3\n"
                  "[sub\t\"tab\"] x = 4\n"
                  "[A]k=1[not a section]\n") } },
    { "values",
      { F("main", "[v]\n"
                  "a = \"  padded  \"\n"
                  "b = one   two\tthree   \n"
                  "c = \"quoted # not ; a comment\" # a comment\n"
                  "d = x\\ty\\nz\\bw\\\\v\\\"u\n"
                  "e = first \\\n"
                  "    second\n"
                  "f = \"in quote \\\n"
                  "continued\"\n"
                  "g = a\"b\"c\" d \"e\n"
                  "h = \\\n"
                  "i = ; only a comment\n"
                  "j = \"\"\n"
                  "k = x \"\" y\n"
                  "l = trailing backslash at the end \\") } },
    { "crlf_and_bom", { F("main", "\xef\xbb\xbf[a]\r\nk = v\r\nj = x\ry \r\n\r\n[b]\rk\r\n") } },
    { "nul_and_control_bytes",
      { F("main", "[core \"hookspath\0x\"]\nk = v\n"
                  "[v]\n"
                  "a = x\0y\n"
                  "b = a\vb\fc\n"
                  "c = \x80\xff\n") } },
    { "key_before_any_section", { F("main", "top = 1\nflag\n[a]k=2\n") } },
    { "deprecated_subsection",
      { F("main", "[Remote.Origin]\nURL = x\n[a.]\nk=1\n[.b]\nk=2\n[a.b \"c\"]k=3\n") } },
    { "boolean_keys", { F("main", "[a]\nflag\nflag2 ; comment\nother=\n[b]\nlast") } },
    { "nested_relative_includes",
      { F("main", "[a]\nk=1\n[include]\npath = sub/inc1\n[a]\nk=3\n"),
        F("sub/inc1", "[b]\nk=2\n[include]\npath = ../other/inc2\n"),
        F("other/inc2", "[c]\nk=4\n[include]\npath=./inc3\n"), F("other/inc3", "[d]k=5") } },
    { "tilde_includes",
      { F("main", "[include]\npath = ~/.gitinc\npath = ~/missing\n[after]k\n"),
        F("home/.gitinc", "[h]\nk=1\n[include]\npath=more/x\n"), F("home/more/x", "[m]k=2\n") } },
    { "absolute_include",
      { F("main", "[include]\npath = $D/abs/../abs/inc\n"), F("abs/inc", "[x]k=1\n") } },
    { "includeif_true_in_file_mode",
      { F("main", "[remote \"o\"]\n"
                  "url = https://example.com/r\n"
                  "[includeIf \"hasconfig:remote.*.url:https://example.com/**\"]\n"
                  "path = cond\n"),
        F("cond", "[c]\nk=1\n") } },
    { "missing_and_repeated_includes",
      { F("main", "[include]\npath = nothere\npath = twice\npath = twice\npath = no/dir/x\n"),
        F("twice", "[t]\nk=1\n") } },
    { "include_spellings",
      { F("main", "[include \"x\"]\npath=inc\n[includeIf]\npath=inc\n[Include]\nPath = inc2\n"),
        F("inc", "[i]\nk=1\n"), F("inc2", "[j]\nk=2\n") } },
    { "include_depth_ten",
      { F("main", "[include]path=i1"), F("i1", "[d]k=1\n[include]path=i2"),
        F("i2", "[d]k=2\n[include]path=i3"), F("i3", "[d]k=3\n[include]path=i4"),
        F("i4", "[d]k=4\n[include]path=i5"), F("i5", "[d]k=5\n[include]path=i6"),
        F("i6", "[d]k=6\n[include]path=i7"), F("i7", "[d]k=7\n[include]path=i8"),
        F("i8", "[d]k=8\n[include]path=i9"), F("i9", "[d]k=9\n[include]path=i10"),
        F("i10", "[d]k=10\n[include]path=i11") } },
};

static const struct gcase refused[] = {
    { "comment_after_bare_key", { F("main", "[a]\nk # c\n") } },
    { "vertical_tab_is_not_space", { F("main", "[a]\n\vk=1\n") } },
    { "unterminated_quote", { F("main", "[a]\n\n\nk=\"x\n") } },
    { "unknown_escape", { F("main", "[a]\nk=\\q\n") } },
    { "partial_bom", { F("main", "\xef\xbb[a]k=1") } },
    { "blank_after_subsection", { F("main", "[a \"x\" ]k=1") } },
    { "key_starting_with_digit", { F("main", "[a]k=1\nk2=\n3k=4\n") } },
    { "quote_then_backslash_at_eof", { F("main", "[a]k=\"\\") } },
    { "empty_section", { F("main", "[]k=1") } },
    { "unclosed_section", { F("main", "[a]\nk=1\n[a") } },
    { "newline_in_subsection", { F("main", "[a]\nk=1\n[a \"x\n\"]") } },
    { "escaped_newline_in_subsection", { F("main", "[a]\nk=1\n[b \"c\\\n\"]\n") } },
    { "subsection_at_eof", { F("main", "[a]\nk=1\n[b \"c\"") } },
    { "non_ascii_key", { F("main", "[a]\n\x80=1") } },
    { "dot_in_key", { F("main", "\n\n[a]\nk.x=1\n") } },
    { "bad_line_in_include",
      { F("main", "[a]k=1\n[include]path=sub/inc\n[b]k=2\n"), F("sub/inc", "[i]\nk=1\n!\n") } },
    { "include_without_value", { F("main", "[a]k=1\n[include]\npath\n") } },
    { "include_loop", { F("main", "[a]k=1\n[include]\npath = main\n") } },
    { "include_depth_eleven",
      { F("main", "[include]path=i1"), F("i1", "[include]path=i2"), F("i2", "[include]path=i3"),
        F("i3", "[include]path=i4"), F("i4", "[include]path=i5"), F("i5", "[include]path=i6"),
        F("i6", "[include]path=i7"), F("i7", "[include]path=i8"), F("i8", "[include]path=i9"),
        F("i9", "[include]path=i10"), F("i10", "[include]path=i11"), F("i11", "[d]k=11\n") } },
};

static void reader_lists_what_git_lists(void **state)
{
    for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
        same_as_git(*state, &accepted[i]);
}

static void reader_refuses_what_git_refuses(void **state)
{
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        same_as_git(*state, &refused[i]);
}

/* ---- the parser alone ---------------------------------------------------- */

struct collected {
    char text[4096];
    size_t o;
    int stop_at; /* return -5 on this entry (1-based), 0: never */
    int n;
};

static int collect(void *ctx, const char *key, const char *value)
{
    struct collected *c = ctx;

    c->o += (size_t)snprintf(c->text + c->o, sizeof(c->text) - c->o, "%s%s%s;", key,
                             value ? "=" : "", value ? value : "");
    return ++c->n == c->stop_at ? -5 : 0;
}

static void parser_passes_keys_as_git_config_list_prints_them(void **state)
{
    static const char cfg[] = "[Core]\n\tHooksPath = \"./h\" # x\n[Diff \"Foo.Bar\"]\n"
                              "TextConv = sh ./tc\n[Alias]\nSt = !sh x\n";
    struct collected c = { .n = 0 };
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(fs_gitcfg_parse(cfg, sizeof(cfg) - 1, collect, &c, &err), 0);
    assert_string_equal(c.text, "core.hookspath=./h;diff.Foo.Bar.textconv=sh ./tc;alias.st=!sh x;");
}

static void parser_stops_when_the_callback_fails(void **state)
{
    static const char cfg[] = "[a]\nk=1\nl=2\nm=3\n";
    struct collected c = { .stop_at = 2 };
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(fs_gitcfg_parse(cfg, sizeof(cfg) - 1, collect, &c, &err), -5);
    assert_string_equal(c.text, "a.k=1;a.l=2;");
    assert_string_equal(err.msg, "");
}

static void parser_error_names_the_line(void **state)
{
    static const char cfg[] = "[a]\nk=1\n\n  = x\n";
    struct collected c = { .n = 0 };
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(fs_gitcfg_parse(cfg, sizeof(cfg) - 1, collect, &c, &err), -1);
    assert_string_equal(err.msg, "bad config line 4");
    assert_int_equal(err.code, EINVAL);
}

static void parser_reads_only_len_bytes(void **state)
{
    char *cfg = malloc(8);
    struct collected c = { .n = 0 };
    struct nf_err err = { 0 };

    (void)state;
    assert_non_null(cfg);
    memcpy(cfg, "[a]k=xyz", 8); /* no NUL after it: ASan sees any overread */
    assert_int_equal(fs_gitcfg_parse(cfg, 6, collect, &c, &err), 0);
    assert_string_equal(c.text, "a.k=x;");
    assert_int_equal(fs_gitcfg_parse(cfg, 0, collect, &c, &err), 0);
    free(cfg);
}

/* ---- the loader's own rules ---------------------------------------------- */

static const struct fs_gitcfg_src *src_named(const struct fs_gitcfg_list *l, const char *path)
{
    for (size_t i = 0; i < l->n_src; i++)
        if (strcmp(l->src[i].path, path) == 0)
            return &l->src[i];
    fail_msg("no source %s", path);
    return NULL;
}

static int load(const struct fx *fx, const char *rel, const struct fs_gitcfg_env *env,
                struct fs_gitcfg_list *l, struct nf_err *err)
{
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", fx->d, rel);
    return fs_gitcfg_load(path, env, l, err);
}

static void includeif_is_followed_whatever_the_condition(void **state)
{
    struct fx *fx = *state;
    struct fs_gitcfg_env env = { 0 };
    struct fs_gitcfg_list l = { 0 };
    struct nf_err err = { 0 };
    char b[PATH_MAX];

    puts_(fx->d, "c",
          "[includeIf \"onbranch:evil\"]\npath = b\n"
          "[includeIf \"gitdir:/nowhere/\"]\npath = g\n"
          "[includeIf \"\"]\npath = e\n"
          "[includeIf \"unknown:x\"]\npath = u\n");
    puts_(fx->d, "b", "[core]\nfsmonitor = ./evil\n");
    puts_(fx->d, "g", "[g]\nk\n");
    assert_int_equal(load(fx, "c", &env, &l, &err), 0);
    assert_int_equal(l.n, 6);
    assert_string_equal(l.v[1].key, "core.fsmonitor");
    assert_string_equal(l.v[1].value, "./evil");
    snprintf(b, sizeof(b), "%s/b", fx->d);
    assert_ptr_equal(l.v[1].file, src_named(&l, b)->path);
    assert_string_equal(l.v[3].key, "g.k");
    assert_null(l.v[3].value);
    assert_int_equal(l.n_src, 5);
    assert_int_equal(l.src[0].depth, 0);
    assert_int_equal(l.src[1].state, FS_GITCFG_READ);
    assert_int_equal(l.src[1].depth, 1);
    assert_int_equal(l.src[3].state, FS_GITCFG_ABSENT);
    assert_int_equal(l.src[4].state, FS_GITCFG_ABSENT);
    fs_gitcfg_list_free(&l);
}

static void fifo_directory_and_device_includes_are_skipped(void **state)
{
    struct fx *fx = *state;
    struct fs_gitcfg_env env = { 0 };
    struct fs_gitcfg_list l = { 0 };
    struct nf_err err = { 0 };
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/fifo", fx->d);
    assert_int_equal(mkfifo(path, 0644), 0);
    mkdir(strcat(strcpy(path, fx->d), "/dir"), 0755);
    /* a FIFO nobody writes to would block a plain open forever */
    puts_(fx->d, "c", "[include]\npath = fifo\npath = dir\npath = /dev/null\npath = dir/\n[a]k\n");
    assert_int_equal(load(fx, "c", &env, &l, &err), 0);
    assert_int_equal(l.n, 5);
    assert_int_equal(l.n_src, 5);
    for (size_t i = 1; i < 5; i++)
        assert_int_equal(l.src[i].state, FS_GITCFG_NOT_REGULAR);
    assert_false(l.src[1].dir);
    assert_true(l.src[2].dir);
    assert_string_equal(l.src[3].path, "/dev/null");
    assert_string_equal(l.src[4].path, l.src[2].path);
    fs_gitcfg_list_free(&l);
}

static void missing_top_file_is_absent_not_an_error(void **state)
{
    struct fx *fx = *state;
    struct fs_gitcfg_env env = { 0 };
    struct fs_gitcfg_list l = { 0 };
    struct nf_err err = { 0 };

    assert_int_equal(load(fx, "nothere/config", &env, &l, &err), 0);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.n_src, 1);
    assert_int_equal(l.src[0].state, FS_GITCFG_ABSENT);
    fs_gitcfg_list_free(&l);
    assert_int_equal(fs_gitcfg_load("relative/config", &env, &l, &err), -1);
    assert_int_equal(err.code, EINVAL);
    fs_gitcfg_list_free(&l);
}

static void oversized_file_is_an_error(void **state)
{
    struct fx *fx = *state;
    struct fs_gitcfg_env env = { 0 };
    struct fs_gitcfg_list l = { 0 };
    struct nf_err err = { 0 };
    size_t n = FS_GITCFG_MAX_SIZE + 1;
    char *big = malloc(n);

    assert_non_null(big);
    memset(big, '\n', n);
    put(fx->d, "big", big, n);
    put(fx->d, "fits", big, n - 1);
    free(big);
    puts_(fx->d, "c", "[include]\npath = fits\npath = big\n");
    assert_int_equal(load(fx, "c", &env, &l, &err), -1);
    assert_int_equal(err.code, EFBIG);
    assert_non_null(strstr(err.msg, "/big"));
    fs_gitcfg_list_free(&l);
}

static void unresolvable_include_paths_are_recorded(void **state)
{
    struct fx *fx = *state;
    struct fs_gitcfg_env env = { 0 };
    struct fs_gitcfg_list l = { 0 };
    struct nf_err err = { 0 };
    char want[PATH_MAX];

    puts_(fx->d, "c", "[include]\npath = ~root/x\npath = ~/y\npath = %(prefix)/etc/z\npath =\n");
    assert_int_equal(load(fx, "c", &env, &l, &err), 0);
    assert_int_equal(l.n_src, 4); /* an empty path names nothing */
    assert_int_equal(l.src[1].state, FS_GITCFG_UNRESOLVED);
    assert_string_equal(l.src[1].path, "~root/x");
    assert_int_equal(l.src[2].state, FS_GITCFG_UNRESOLVED);
    assert_string_equal(l.src[3].path, "%(prefix)/etc/z");
    fs_gitcfg_list_free(&l);

    /* with a home and a prefix they resolve; the recorded path is normal */
    env.home = fx->d;
    env.prefix = fx->d;
    assert_int_equal(load(fx, "c", &env, &l, &err), 0);
    assert_int_equal(l.src[1].state, FS_GITCFG_UNRESOLVED);
    snprintf(want, sizeof(want), "%s/y", fx->d);
    assert_string_equal(l.src[2].path, want);
    assert_int_equal(l.src[2].state, FS_GITCFG_ABSENT);
    snprintf(want, sizeof(want), "%s/etc/z", fx->d);
    assert_string_equal(l.src[3].path, want);
    fs_gitcfg_list_free(&l);
}

/* 0, or which check failed; runs as uid 65534 when the suite is root. */
static int check_unreadable(const struct fx *fx)
{
    struct fs_gitcfg_env env = { 0 };
    struct fs_gitcfg_list l = { 0 };
    struct nf_err err = { 0 };
    char path[PATH_MAX];
    int r = 0;

    snprintf(path, sizeof(path), "%s/c", fx->d);
    if (fs_gitcfg_load(path, &env, &l, &err) < 0)
        r = 1;
    else if (l.n != 2 || l.n_src != 3)
        r = 2;
    else if (l.src[1].state != FS_GITCFG_UNREADABLE || l.src[2].state != FS_GITCFG_UNREADABLE)
        r = 3;
    if (r)
        fprintf(stderr, "# %s\n", err.msg);
    fs_gitcfg_list_free(&l);
    return r;
}

static void unreadable_include_is_skipped_and_reported(void **state)
{
    struct fx *fx = *state;
    char path[PATH_MAX];
    pid_t pid;
    int status;

    puts_(fx->d, "c", "[include]\npath = secret\npath = locked/x\n");
    puts_(fx->d, "secret", "[s]k=1\n");
    puts_(fx->d, "locked/x", "[s]k=2\n");
    assert_int_equal(chmod(strcat(strcpy(path, fx->d), "/secret"), 0), 0);
    assert_int_equal(chmod(strcat(strcpy(path, fx->d), "/locked"), 0), 0);
    if (geteuid() != 0) {
        assert_int_equal(check_unreadable(fx), 0);
        return;
    }
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
            setresuid(65534, 65534, 65534) < 0)
            _exit(77);
        _exit(check_unreadable(fx));
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        fail_msg("running as root and cannot drop to uid 65534: EACCES not checked");
    if (WEXITSTATUS(status) != 0)
        fail_msg("unreadable include as uid 65534: check %d failed", WEXITSTATUS(status));
}

/* ---- the paths git runs later -------------------------------------------- */

#define WT   "/w/proj"
#define HOME "/home/u"

/* The paths text for a config: "d /path\nf /path\n", then "? word\n" for
 * each unresolved word. */
static void paths_of(const char *cfg, const char *home, char *text, size_t size)
{
    struct fs_gitcfg_list l = { 0 };
    struct fs_gitcfg_paths p = { 0 };
    struct nf_err err = { 0 };
    size_t o = 0;

    if (fs_gitcfg_parse_list(cfg, strlen(cfg), WT "/.git/config", &l, &err) < 0)
        fail_msg("parse \"%s\": %s", cfg, err.msg);
    if (fs_gitcfg_code_paths(&l, WT, home, &p, &err) < 0)
        fail_msg("code paths of \"%s\": %s", cfg, err.msg);
    text[0] = '\0';
    for (size_t i = 0; i < p.n; i++)
        o += (size_t)snprintf(text + o, size - o, "%c %s\n", p.v[i].dir ? 'd' : 'f', p.v[i].path);
    for (size_t i = 0; i < p.unresolved.n; i++)
        o += (size_t)snprintf(text + o, size - o, "? %s\n", p.unresolved.v[i]);
    fs_gitcfg_list_free(&l);
    fs_gitcfg_paths_free(&p);
}

static void expect_paths(const char *cfg, const char *want)
{
    char got[4096];

    paths_of(cfg, HOME, got, sizeof(got));
    if (strcmp(got, want) != 0)
        fail_msg("config\n%s\nwant\n%sgot\n%s", cfg, want, got);
}

static void husky_hooks_directory_protects_its_parent(void **state)
{
    (void)state;
    expect_paths("[core]\nhooksPath = .husky/_\n", "d " WT "/.husky\n"
                                                   "d " WT "/.husky/_\n");
    expect_paths("[core]\nhooksPath = .husky\n", "d " WT "/.husky\n");
}

static void hooks_path_is_resolved_like_git(void **state)
{
    (void)state;
    expect_paths("[core]\nhooksPath = hooks/./x/..\n", "d " WT "/hooks\n");
    expect_paths("[core]\nhooksPath = ~/hooks\n", "d " HOME "/hooks\n");
    expect_paths("[core]\nhooksPath = ~\n", "d " HOME "\n");
    expect_paths("[core]\nhooksPath = /etc/h//\n", "d /etc/h\n");
    expect_paths("[core]\nhooksPath = ~bob/h\n", "? ~bob/h\n");
    expect_paths("[core]\nhooksPath = %(prefix)/h\n", "? %(prefix)/h\n");
    expect_paths("[core]\nhooksPath\nhooksPath =\n[Core \"x\"]\nhooksPath = /nope\n", "");
    /* `~` without a home cannot be resolved */
    {
        char got[256];

        paths_of("[core]\nhooksPath = ~/h\n", NULL, got, sizeof(got));
        assert_string_equal(got, "? ~/h\n");
    }
}

static void fsmonitor_boolean_is_not_a_program(void **state)
{
    (void)state;
    expect_paths("[core]\nfsmonitor = true\nfsmonitor = false\nfsmonitor = 1\nfsmonitor\n", "");
    expect_paths("[core]\nfsmonitor = ./fsmon.sh\n", "f " WT "/fsmon.sh\n");
    expect_paths("[core]\nfsmonitor = .git/hooks/fsmonitor-watchman\n",
                 "f " WT "/.git/hooks/fsmonitor-watchman\n");
}

static void shell_alias_names_its_scripts(void **state)
{
    (void)state;
    expect_paths("[alias]\nx = !sh ./evil.sh\n", "f " WT "/evil.sh\n");
    expect_paths("[alias]\nx = \"!f() { ~/bin/x --y; }; f\"\n", "f " HOME "/bin/x\n");
    expect_paths("[alias]\nx = \"!./a|../b&&c;/d\"\n", "f /d\n"
                                                       "f /w/b\n"
                                                       "f " WT "/a\n");
}

static void git_alias_names_what_its_options_run(void **state)
{
    (void)state;
    /* arguments to git, not a program: a path there is just a file */
    expect_paths("[alias]\nlg = log --oneline -- src/main.c\n", "");
    expect_paths("[alias]\np = -c core.pager=./p log\n", "f " WT "/p\n");
    expect_paths("[alias]\np = -c Core.HooksPath=hk status\n", "d " WT "/hk\n");
    expect_paths("[alias]\ne = --exec-path=./bin status\n", "d " WT "/bin\n");
    expect_paths("[alias]\ni = -c include.path=/etc/inc -c include.path=rel status\n",
                 "f /etc/inc\n");
}

static void program_words_honour_quotes(void **state)
{
    (void)state;
    expect_paths("[core]\neditor = '/opt/my editor/ed' --wait\n", "f /opt/my editor/ed\n");
    expect_paths("[core]\neditor = sh -c \\\"./a.sh x\\\"\n", "f " WT "/a.sh\n");
    /* a script is its words: nothing of "sh -c './x; y'" is a path itself */
    expect_paths("[core]\neditor = \"sh -c \\\"sh -c './x; y'\\\" # c\"\n", "f " WT "/x\n");
    expect_paths("[core]\npager = \\\"~/x\\\" ~/y \\\\~/z\n", "f " HOME "/y\n"
                                                              "f " WT "/~/x\n"
                                                              "f " WT "/~/z\n");
    expect_paths("[core]\nsshCommand = ssh -i $HOME/.ssh/k -F ${HOME}/c -o X=$OTHER/p\n",
                 "f " HOME "/.ssh/k\n"
                 "f " HOME "/c\n"
                 "? $OTHER/p\n");
    expect_paths("[core]\neditor = ~bob/ed\n", "? ~bob/ed\n");
    expect_paths("[diff \"pdf\"]\ntextconv = BIN=./tools/t sh # ./not/this\n",
                 "f " WT "/tools/t\n");
}

static void program_keys_are_recognised(void **state)
{
    (void)state;
    expect_paths("[credential \"https://example.com\"]\nhelper = !~/bin/cred\n"
                 "[credential]\nhelper = store --file=/s/creds\n"
                 "[Diff \"PDF\"]\ntextconv = ./conv\ncommand = ./cmd\n"
                 "[diff]\nexternal = ./ext\n"
                 "[filter \"lfs\"]\nclean = git-lfs clean -- %f\nsmudge = ./sm\nprocess = ./pr\n"
                 "[merge \"m\"]\ndriver = ./md %O %A %B\n"
                 "[gpg]\nprogram = /opt/gnu pg/gpg\n[gpg \"ssh\"]\nprogram = ./ssh-keygen\n"
                 "[pager]\nlog = false\ndiff = ./pg\n"
                 "[interactive]\ndiffFilter = ./df\n"
                 "[sequence]\neditor = ./seq\n"
                 "[remote \"o\"]\nurl = https://example.com/x\nuploadpack = ./up\n"
                 "receivepack = ./rp\n"
                 "[sendemail]\ntoCmd = ./to\n[sendemail \"id\"]\nccCmd = ./cc\n",
                 "f " HOME "/bin/cred\n"
                 "f /opt/gnu\n"
                 "f /opt/gnu pg/gpg\n"
                 "f /s/creds\n"
                 "f " WT "/cc\n"
                 "f " WT "/cmd\n"
                 "f " WT "/conv\n"
                 "f " WT "/df\n"
                 "f " WT "/ext\n"
                 "f " WT "/md\n"
                 "f " WT "/pg\n"
                 "f " WT "/pg/gpg\n"
                 "f " WT "/pr\n"
                 "f " WT "/rp\n"
                 "f " WT "/seq\n"
                 "f " WT "/sm\n"
                 "f " WT "/ssh-keygen\n"
                 "f " WT "/to\n"
                 "f " WT "/up\n");
    /* keys that name no program, and program keys in the wrong place */
    expect_paths("[user]\nname = /x/y\n[http]\nproxy = http://p/x\n[ssh]\nvariant = ./v\n"
                 "[diff]\ntextconv = ./no\n[filter]\nclean = ./no\n[submodule \"s\"]\n"
                 "update = rebase\n[alias \"x\"]\ny = log a/b\n",
                 "");
    expect_paths("[submodule \"s\"]\nupdate = !./up.sh\n", "f " WT "/up.sh\n");
}

static void include_targets_are_code(void **state)
{
    struct fs_gitcfg_list l = { 0 };
    struct fs_gitcfg_paths p = { 0 };
    struct nf_err err = { 0 };
    static const char cfg[] = "[core]\neditor = /opt/inc/x\n";

    (void)state;
    assert_int_equal(fs_gitcfg_parse_list(cfg, sizeof(cfg) - 1, "/top", &l, &err), 0);
    /* as fs_gitcfg_load would have recorded them */
    l.src = realloc(l.src, 5 * sizeof(*l.src));
    assert_non_null(l.src);
    l.src[1] = (struct fs_gitcfg_src){ strdup("/opt/inc/x"), FS_GITCFG_ABSENT, 1, false };
    l.src[2] = (struct fs_gitcfg_src){ strdup("~bob/inc"), FS_GITCFG_UNRESOLVED, 1, false };
    l.src[3] = (struct fs_gitcfg_src){ strdup("/d"), FS_GITCFG_NOT_REGULAR, 2, true };
    l.src[4] = (struct fs_gitcfg_src){ strdup("/opt/inc/x"), FS_GITCFG_READ, 1, false };
    l.n_src = l.cap_src = 5;
    assert_int_equal(fs_gitcfg_code_paths(&l, WT, HOME, &p, &err), 0);
    /* the top file is the caller's own; each path once */
    assert_int_equal(p.n, 2);
    assert_string_equal(p.v[0].path, "/d");
    assert_true(p.v[0].dir);
    assert_string_equal(p.v[1].path, "/opt/inc/x");
    assert_false(p.v[1].dir);
    assert_int_equal(p.unresolved.n, 1);
    assert_string_equal(p.unresolved.v[0], "~bob/inc");
    assert_null(p.unresolved.v[1]);
    fs_gitcfg_paths_free(&p);
    fs_gitcfg_list_free(&l);
}

/* The whole chain on real files: what an included file names counts, and
 * so does every file the includes name, read or not. */
static void loaded_config_yields_its_includes_and_programs(void **state)
{
    struct fx *fx = *state;
    struct fs_gitcfg_env env = { .home = fx->d };
    struct fs_gitcfg_list l = { 0 };
    struct fs_gitcfg_paths p = { 0 };
    struct nf_err err = { 0 };
    char wt[300], cfg[320], got[4096], want[4096];
    size_t o = 0;

    snprintf(wt, sizeof(wt), "%s/wt", fx->d);
    snprintf(cfg, sizeof(cfg), "%s/.git/config", wt);
    puts_(fx->d, "wt/.git/config",
          "[core]\nbare = false\n[include]\npath = ../shared/extra\npath = ~/absent\n");
    puts_(fx->d, "wt/shared/extra", "[core]\nhooksPath = .husky/_\n[alias]\nx = !./x.sh\n");
    assert_int_equal(fs_gitcfg_load(cfg, &env, &l, &err), 0);
    assert_int_equal(fs_gitcfg_code_paths(&l, wt, fx->d, &p, &err), 0);
    got[0] = '\0';
    for (size_t i = 0; i < p.n; i++)
        o += (size_t)snprintf(got + o, sizeof(got) - o, "%c %s\n", p.v[i].dir ? 'd' : 'f',
                              p.v[i].path);
    snprintf(want, sizeof(want),
             "f %s/absent\n"
             "d %s/.husky\n"
             "d %s/.husky/_\n"
             "f %s/shared/extra\n"
             "f %s/x.sh\n",
             fx->d, wt, wt, wt, wt);
    assert_string_equal(got, want);
    assert_int_equal(p.unresolved.n, 0);
    fs_gitcfg_paths_free(&p);
    fs_gitcfg_list_free(&l);
}

static void code_paths_need_an_absolute_worktree(void **state)
{
    struct fs_gitcfg_list l = { 0 };
    struct fs_gitcfg_paths p = { 0 };
    struct nf_err err = { 0 };

    (void)state;
    assert_int_equal(fs_gitcfg_code_paths(&l, "rel", HOME, &p, &err), -1);
    assert_int_equal(err.code, EINVAL);
    assert_int_equal(fs_gitcfg_code_paths(&l, NULL, HOME, &p, &err), -1);
    fs_gitcfg_paths_free(&p);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(reader_lists_what_git_lists),
        T(reader_refuses_what_git_refuses),
        cmocka_unit_test(parser_passes_keys_as_git_config_list_prints_them),
        cmocka_unit_test(parser_stops_when_the_callback_fails),
        cmocka_unit_test(parser_error_names_the_line),
        cmocka_unit_test(parser_reads_only_len_bytes),
        T(includeif_is_followed_whatever_the_condition),
        T(fifo_directory_and_device_includes_are_skipped),
        T(missing_top_file_is_absent_not_an_error),
        T(oversized_file_is_an_error),
        T(unresolvable_include_paths_are_recorded),
        T(unreadable_include_is_skipped_and_reported),
        cmocka_unit_test(husky_hooks_directory_protects_its_parent),
        cmocka_unit_test(hooks_path_is_resolved_like_git),
        cmocka_unit_test(fsmonitor_boolean_is_not_a_program),
        cmocka_unit_test(shell_alias_names_its_scripts),
        cmocka_unit_test(git_alias_names_what_its_options_run),
        cmocka_unit_test(program_words_honour_quotes),
        cmocka_unit_test(program_keys_are_recognised),
        cmocka_unit_test(include_targets_are_code),
        T(loaded_config_yields_its_includes_and_programs),
        cmocka_unit_test(code_paths_need_an_absolute_worktree),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
