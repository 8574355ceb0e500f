/* srt's control channel on nsfence's host side: one ev_io on the caller's
 * descriptor, a line buffer, and the rule tables each valid line built
 * (kept until the end: a request decided by an older table may still be
 * resolving). */
#include "src/control.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/rules.h"
#include "src/log.h"
#include "src/policy.h"
#include "src/settings.h"
#include "src/util.h"

#define KILL_GRACE_MS 2000 /* srt: SIGTERM, then SIGKILL after 2000 ms */

struct ctl_table {
    struct ctl_table *next;
    struct policy pol; /* the rules' strings point into it */
    struct px_rules rules;
};

struct ctl_channel {
    struct ctl_config cfg;
    struct ev_loop *loop;
    struct ev_io io;
    struct ev_timer kill_timer;
    bool watching;
    char *line; /* the line being read */
    size_t len, cap;
    bool overlong; /* the line outgrew SRT_SETTINGS_MAX_SIZE: invalid */
    unsigned delivered;
    bool failed;
    struct nf_err fail;
    pid_t target;
    struct ctl_table *tables;
};

int ctl_fd_parse(const char *s, struct nf_err *err)
{
    long v = 0;

    if (!s || !*s)
        goto bad;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            goto bad;
        if (v < 1000000000)
            v = v * 10 + (*p - '0');
    }
    if (v >= 3 && v < 1000000000)
        return (int)v;
bad:
    return nf_err_set(err, EINVAL,
                      "must be an integer file descriptor >= 3 (0-2 are stdin, stdout and "
                      "stderr).");
}

/* Node's form of a system error: "EBADF: bad file descriptor, fstat". */
static int node_error(struct nf_err *err, int code, const char *syscall)
{
    const char *name = strerrorname_np(code);
    char text[256];

    snprintf(text, sizeof(text), "%s", strerror(code));
    if (text[0] >= 'A' && text[0] <= 'Z')
        text[0] = (char)(text[0] - 'A' + 'a');
    return nf_err_set(err, code, "%s: %s, %s", name ? name : "EIO", text, syscall);
}

int ctl_fd_check(int fd, struct nf_err *err)
{
    struct stat st;
    int flags;

    if (fstat(fd, &st) < 0)
        return node_error(err, errno, "fstat");
    flags = fcntl(fd, F_GETFD);
    /* The command must not hold the channel that loosens its own policy. */
    if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
        return node_error(err, errno, "fcntl");
    return 0;
}

static void say_debug(const struct ctl_channel *ch, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say_debug(const struct ctl_channel *ch, const char *fmt, ...)
{
    char msg[NF_ERR_MSG_MAX + 256];
    va_list ap;

    if (ch->cfg.style == CTL_STYLE_SRT ? !ch->cfg.debug : !log_verbose_enabled)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (ch->cfg.style == CTL_STYLE_SRT)
        fprintf(stderr, "[SandboxDebug] %s\n", msg);
    else
        log_verbose("%s", msg);
}

static void table_free(struct ctl_table *t)
{
    px_rules_free(&t->rules);
    pol_free(&t->pol);
    free(t);
}

/* One line: a whole settings object, or nothing at all. */
static int apply_line(struct ctl_channel *ch, const char *line, size_t len, struct nf_err *err)
{
    struct srt_settings s;
    struct ctl_table *t;
    char name[64];
    int rc;

    snprintf(name, sizeof(name), "control fd %d", ch->cfg.fd);
    if (settings_parse(line, len, name, &s, err) < 0)
        return -1;
    t = calloc(1, sizeof(*t));
    if (!t) {
        settings_free(&s);
        return nf_err_sys(err, "out of memory");
    }
    rc = pol_init(&t->pol, ch->cfg.cwd, ch->cfg.home, err);
    if (rc == 0)
        rc = settings_apply(&s, &t->pol, err);
    settings_free(&s);
    if (rc == 0)
        rc = px_rules_build(&t->pol, &t->rules, err);
    if (rc < 0) {
        table_free(t);
        return -1;
    }
    t->next = ch->tables;
    ch->tables = t;
    if (ch->cfg.px)
        px_server_set_rules(ch->cfg.px, &t->rules);
    return 0;
}

static void on_line(struct ctl_channel *ch, const char *line, size_t len)
{
    struct nf_err e = { 0 };
    size_t i;

    for (i = 0; i < len && strchr(" \t\r\n\f\v", line[i]); i++)
        ;
    if (i == len && !ch->overlong)
        return; /* a blank line is no update (srt) */
    if (ch->overlong) {
        nf_err_set(&e, EFBIG, "control fd %d: line longer than %d bytes", ch->cfg.fd,
                   SRT_SETTINGS_MAX_SIZE);
    } else if (apply_line(ch, line, len, &e) == 0) {
        ch->delivered++;
        say_debug(ch, "Config updated from control fd %d: %.*s", ch->cfg.fd,
                  (int)(len > 4096 ? 4096 : len), line);
        return;
    }
    ch->delivered++;
    fprintf(stderr, "Invalid config on control fd %d: ignored, previous config still in force\n",
            ch->cfg.fd);
    say_debug(ch, "%s", e.msg);
}

/* Split what arrived into lines ("\r\n" and "\n" both end one). */
static void take_lines(struct ctl_channel *ch, bool eof)
{
    size_t start = 0;

    for (size_t i = 0; i < ch->len; i++) {
        size_t end = i;

        if (ch->line[i] != '\n')
            continue;
        if (end > start && ch->line[end - 1] == '\r')
            end--;
        on_line(ch, ch->line + start, end - start);
        ch->overlong = false;
        start = i + 1;
    }
    memmove(ch->line, ch->line + start, ch->len - start);
    ch->len -= start;
    if (eof && (ch->len || ch->overlong)) {
        on_line(ch, ch->line, ch->len);
        ch->len = 0;
        ch->overlong = false;
    }
}

static void stop_watching(struct ctl_channel *ch)
{
    if (ch->watching)
        ev_io_stop(ch->loop, &ch->io);
    ch->watching = false;
    if (ch->io.fd >= 0)
        close(ch->io.fd);
    ch->io.fd = -1;
}

static void on_kill_timer(struct ev_loop *loop, struct ev_timer *t)
{
    struct ctl_channel *ch = container_of(t, struct ctl_channel, kill_timer);

    (void)loop;
    if (ch->target > 0)
        (void)kill(ch->target, SIGKILL);
}

static void channel_error(struct ctl_channel *ch, int code)
{
    struct nf_err e = { 0 };

    node_error(&e, code, "read");
    stop_watching(ch);
    if (ch->delivered) {
        /* The command keeps running under the last update. */
        if (ch->cfg.style == CTL_STYLE_SRT)
            fprintf(stderr,
                    "Error reading control fd %d: %s. The control channel is closed; no further "
                    "updates will be applied.\n",
                    ch->cfg.fd, e.msg);
        else
            log_error("error reading control fd %d: %s. The control channel is closed; no "
                      "further updates will be applied.",
                      ch->cfg.fd, e.msg);
        return;
    }
    ch->failed = true;
    nf_err_set(&ch->fail, code,
               "control fd %d failed before delivering an update: %s. Refusing to run the "
               "command without the control channel it asks for.",
               ch->cfg.fd, e.msg);
    if (ch->target > 0) {
        (void)kill(ch->target, SIGTERM);
        (void)ev_timer_start(ch->loop, &ch->kill_timer, KILL_GRACE_MS);
    }
}

/* One read per readiness: level-triggered, so the descriptor (shared with
 * the caller, perhaps) keeps its blocking mode. */
static int read_some(struct ctl_channel *ch)
{
    ssize_t n;

    if (ch->cap - ch->len < 4096) {
        size_t cap = ch->cap ? ch->cap * 2 : 8192;
        char *l;

        if (ch->len > SRT_SETTINGS_MAX_SIZE) {
            /* Keep reading to the end of the line, but not its bytes. */
            ch->overlong = true;
            ch->len = 0;
        } else {
            l = realloc(ch->line, cap);
            if (!l)
                return -ENOMEM;
            ch->line = l;
            ch->cap = cap;
        }
    }
    n = RETRY_EINTR(read(ch->io.fd, ch->line + ch->len, ch->cap - ch->len));
    if (n < 0)
        return errno == EAGAIN ? 1 : -errno;
    if (n == 0) {
        take_lines(ch, true);
        return 0;
    }
    ch->len += (size_t)n;
    take_lines(ch, false);
    return 1;
}

static void on_readable(struct ev_loop *loop, struct ev_io *io, uint32_t revents)
{
    struct ctl_channel *ch = container_of(io, struct ctl_channel, io);
    int rc;

    (void)loop;
    (void)revents;
    rc = read_some(ch);
    if (rc == 0) {
        say_debug(ch, "Control fd %d closed", ch->cfg.fd);
        stop_watching(ch);
    } else if (rc < 0) {
        channel_error(ch, -rc);
    }
}

int ctl_start(struct ctl_channel **out, struct ev_loop *loop, const struct ctl_config *cfg,
              struct nf_err *err)
{
    struct ctl_channel *ch = calloc(1, sizeof(*ch));

    *out = NULL;
    if (!ch) {
        close(cfg->fd);
        return nf_err_sys(err, "out of memory");
    }
    ch->cfg = *cfg;
    ch->loop = loop;
    ch->io.fd = cfg->fd;
    ch->io.cb = on_readable;
    ch->kill_timer.cb = on_kill_timer;
    *out = ch;
    if (ev_io_start(loop, &ch->io, EPOLLIN) == 0) {
        ch->watching = true;
        say_debug(ch, "Listening for config updates on fd %d", cfg->fd);
        return 0;
    }
    if (errno != EPERM)
        return nf_err_sys(err, "control fd %d: epoll_ctl", cfg->fd);
    /* A regular file (epoll refuses it): its reads never block; take every
     * line now, before the command starts. */
    for (;;) {
        int rc = read_some(ch);

        if (rc == 0)
            break;
        if (rc < 0) {
            channel_error(ch, -rc);
            break;
        }
    }
    stop_watching(ch);
    return 0;
}

void ctl_set_target(struct ctl_channel *ch, pid_t pid)
{
    if (ch)
        ch->target = pid;
}

bool ctl_failed(const struct ctl_channel *ch, struct nf_err *err)
{
    if (!ch || !ch->failed)
        return false;
    *err = ch->fail;
    return true;
}

void ctl_free(struct ctl_channel *ch)
{
    if (!ch)
        return;
    stop_watching(ch);
    ev_timer_stop(ch->loop, &ch->kill_timer);
    while (ch->tables) {
        struct ctl_table *t = ch->tables;

        ch->tables = t->next;
        table_free(t);
    }
    free(ch->line);
    free(ch);
}
