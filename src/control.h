/* The control channel (`--control-fd N`, srt's protocol): JSON lines, each
 * a complete settings object; a valid one replaces the proxy's network
 * rules (allow and deny lists, deny reasons, denied resolved addresses) for
 * every request decided from then on, while the command runs. An invalid
 * line is reported and ignored; EOF is not an error. Served on the host
 * side's event loop; the descriptor never reaches the sandbox. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "proxy/server.h"
#include "src/err.h"
#include "src/loop.h"

/* Whose conventions the channel's own messages follow. */
enum ctl_style {
    CTL_STYLE_NSFENCE, /* "nsfence: ..." and -v lines */
    CTL_STYLE_SRT,     /* srt's lines; debug lines "[SandboxDebug] ..." */
};

struct ctl_channel;

/* Pure: srt's check of the option's value (`^\d+$`, >= 3). Returns the fd,
 * or -1 with srt's reason in err. */
int ctl_fd_parse(const char *s, struct nf_err *err);

/* Before anything else is opened: fd must be open (srt's "is not usable");
 * it is made close-on-exec, so neither the sandbox nor any helper inherits
 * it. */
int ctl_fd_check(int fd, struct nf_err *err);

struct ctl_config {
    int fd;
    enum ctl_style style;
    bool debug;           /* srt's -d / SRT_DEBUG */
    const char *cwd;      /* relative paths in a line are taken against these, */
    const char *home;     /* as the settings file's were */
    struct px_server *px; /* NULL: no proxy (no network); lines are checked only */
};

/* Start reading cfg->fd on loop (a regular file is read to its end at
 * once). Takes ownership of the fd. */
int ctl_start(struct ctl_channel **out, struct ev_loop *loop, const struct ctl_config *cfg,
              struct nf_err *err);

/* The sandbox's init, to stop when the channel fails before its first
 * line (srt: SIGTERM, then SIGKILL after two seconds). */
void ctl_set_target(struct ctl_channel *ch, pid_t pid);

/* The channel failed before delivering an update: the run must fail with
 * err's message (srt's "Refusing to run the command without the control
 * channel it asks for."). */
bool ctl_failed(const struct ctl_channel *ch, struct nf_err *err);

/* Stop reading; frees every rule table handed to the proxy, so call after
 * px_server_free. */
void ctl_free(struct ctl_channel *ch);
