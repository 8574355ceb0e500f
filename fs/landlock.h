/* The filesystem policy as a Landlock ruleset, for hosts that refuse the
 * namespaces the mount plan needs (a container's seccomp profile): the host
 * readable but for the denied paths, writes only beneath the write roots.
 * Landlock only ever grants: a denied entry is expressed by granting read on
 * everything beside it, along the path to it; what it cannot express at all
 * (protected names inside a write root, chmod, chown, utimes, xattrs) is the
 * supervisor's, which performs those calls itself. The ruleset is data first
 * (explain prints it), then made and applied in the command. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/plan.h"
#include "src/err.h"

/* Access rights by bit, as the kernel numbers them (linux/landlock.h of
 * Debian 12 stops at ABI 2). */
#define FS_LL_EXECUTE     (1ULL << 0)
#define FS_LL_WRITE_FILE  (1ULL << 1)
#define FS_LL_READ_FILE   (1ULL << 2)
#define FS_LL_READ_DIR    (1ULL << 3)
#define FS_LL_REMOVE_DIR  (1ULL << 4)
#define FS_LL_REMOVE_FILE (1ULL << 5)
#define FS_LL_MAKE_CHAR   (1ULL << 6)
#define FS_LL_MAKE_DIR    (1ULL << 7)
#define FS_LL_MAKE_REG    (1ULL << 8)
#define FS_LL_MAKE_SOCK   (1ULL << 9)
#define FS_LL_MAKE_FIFO   (1ULL << 10)
#define FS_LL_MAKE_BLOCK  (1ULL << 11)
#define FS_LL_MAKE_SYM    (1ULL << 12)
#define FS_LL_REFER       (1ULL << 13) /* ABI 2 */
#define FS_LL_TRUNCATE    (1ULL << 14) /* ABI 3 */
#define FS_LL_IOCTL_DEV   (1ULL << 15) /* ABI 5 */

#define FS_LL_NET_BIND_TCP    (1ULL << 0) /* ABI 4 */
#define FS_LL_NET_CONNECT_TCP (1ULL << 1)

#define FS_LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define FS_LL_SCOPE_SIGNAL        (1ULL << 1)

struct fs_ll_rule {
    char *path;
    uint64_t access;
};

struct fs_ll_plan {
    int abi; /* the running kernel's Landlock ABI; 0: none */
    uint64_t handled_fs;
    uint64_t handled_net; /* every TCP bind and connect refused: no rule grants one */
    uint64_t scoped;
    struct fs_ll_rule *rules;
    size_t n;
    size_t cap;
    /* The run's private temporary directory (TMPDIR), writable: there is no
     * private /tmp without a mount namespace. Made by the host side for a
     * run, removed after it; NULL in a plan only printed. */
    char *tmpdir;
    /* Where every run of this user makes its TMPDIR: denied reading (a
     * concurrent run's is there). */
    char *tmp_parent;
};

/* The running kernel's Landlock ABI version; 0 when Landlock is absent or
 * off (errno says why). */
int fs_ll_abi(void);

/* Build the ruleset for the filesystem plan: read rules split around the
 * plan's denied-read paths (reads the directories on the way to each, as
 * they are now), write rules for its write roots and the devices a
 * command writes to (/dev/null, the terminal). */
int fs_ll_build(const struct fs_plan *fp, int abi, struct fs_ll_plan *out, struct nf_err *err);
int fs_ll_add(struct fs_ll_plan *p, const char *path, uint64_t access, struct nf_err *err);
void fs_ll_free(struct fs_ll_plan *p);

/* "read_file,read_dir,...": the rights' names. */
void fs_ll_access_format(uint64_t access, char *buf, size_t sz);

/* In the command (no_new_privs set, no allocation: it may share its
 * parent's memory): make the ruleset and restrict the calling thread's
 * process to it. A rule's path that vanished is skipped; any other failure
 * is an error, never a weaker domain. */
int fs_ll_apply(const struct fs_ll_plan *p, struct nf_err *err);

/* After the helper is made in the same domain: one more, scope-only layer
 * for the command alone, so that it cannot signal the helper (a domain
 * reaches only its own and those below it; ABI 6). Nothing below ABI 6. */
int fs_ll_scope_below(const struct fs_ll_plan *p, struct nf_err *err);

/* Whether the supervisor may let the command write at abs, by the plan's
 * lists: fs_plan_writable, but a denied-read directory is no scratch here
 * (it is the host's own) and /tmp is not private: only tmpdir is. Pure. */
bool fs_ll_writable(const struct fs_plan *fp, const char *tmpdir, const char *abs);

/* Whether abs is a protected or denied-read path, or an ancestor of one
 * (renaming or removing it would move what is protected). Pure. */
bool fs_ll_holds_protected(const struct fs_plan *fp, const char *abs);

/* The run's private TMPDIR: a new directory (0700) in the user's own
 * (0700) directory of them in nsfence's $TMPDIR, else /tmp; removed with everything in it after the
 * run, beneath its descriptor, links never followed. */
int fs_ll_tmpdir_make(char **out, struct nf_err *err);
/* $TMPDIR (else /tmp)/nsfence-UID: where fs_ll_tmpdir_make makes them. */
int fs_ll_tmpdir_parent(char *out, size_t sz);
int fs_ll_tmpdir_remove(const char *path, struct nf_err *err);
