/* Landlock mode's helper: performs one write-intent call the supervisor took
 * from the command, inside the command's Landlock domain and with its
 * credentials, so it can never do what the command could not; and refuses
 * what Landlock cannot: a protected name (or a directory holding one) inside
 * a write root, chmod/chown/utimes/xattrs outside the write roots.
 *
 * The path is walked one component at a time beneath the descriptors the
 * supervisor opened from the command's /proc entries (its root, its working
 * directory or directory descriptor): symlinks are followed by their text,
 * /proc/self names the command, procfs's other links are followed by the
 * kernel one at a time. The call then acts on the pinned parent directory
 * and one name, or on the pinned object, and what is judged is the path the
 * kernel gives that directory or object, never a path re-read from the
 * command's memory. */
#pragma once

#include <stdbool.h>

#include "fs/landlock.h"
#include "fs/plan.h"
#include "src/wreq.h"

struct fs_perform_ctx {
    const struct fs_plan *fp;
    const char *tmpdir;
    /* Its write rules under /dev name the devices a command may open for
     * writing (/dev/null, the terminal): namespace mode's minimal /dev. */
    const struct fs_ll_plan *ll;
};

/* Perform rq. fds: the command's root, then dir[0], dir[1] (or the object,
 * WREQ_AT_OBJECT), -1 where unused. out->result is the call's result or
 * -errno; *fd_out a descriptor to hand the command (WREQ_OPEN), else -1. */
void fs_perform(const struct fs_perform_ctx *c, const struct wreq *rq, int root, const int dir[2],
                struct wresp *out, int *fd_out);

/* Whether opening rq may block (a FIFO or a device without O_NONBLOCK): the
 * helper then performs it on a thread of its own. */
bool fs_perform_may_block(const struct wreq *rq, int root, const int dir[2]);
