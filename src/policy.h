/* The policy model: plain data, no syscalls. Built from the defaults, the
 * config file and the command line (src/config.c, src/cli.c); every other
 * folder receives it read-only and never sees argv or the INI. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "src/err.h"

struct pol_strv {
    char **v;
    size_t n;
};

/* `[network] deny_reason = HOST: text` */
struct pol_reason {
    char *host;
    char *text;
};

/* srt's ignoreViolations entry: a violation whose path (a network one:
 * whose line) contains one of patterns is not reported when the command's
 * text contains command; "*" is any command. */
struct pol_ignore {
    char *command;
    struct pol_strv patterns;
};

/* Which engine builds the sandbox. */
enum pol_mode {
    POL_MODE_NAMESPACES, /* new namespaces and mounts: every property */
    POL_MODE_LANDLOCK,   /* Landlock, seccomp and a supervisor, where namespaces are
                            refused (a container); what is weaker is said at every run */
    POL_MODE_AUTO,       /* namespaces where they work, else Landlock */
};

/* "namespaces", "landlock", "auto"; -1 for anything else. Pure. */
int pol_mode_parse(const char *s);
const char *pol_mode_name(enum pol_mode m);

struct policy {
    /* Context the paths were resolved against. */
    char *cwd;
    char *home; /* NULL when $HOME is unset or not absolute */

    /* [filesystem] — every path absolute and lexically normalised. */
    struct pol_strv allow_write;
    struct pol_strv deny_write;
    struct pol_strv deny_read;
    struct pol_strv allow_read;
    unsigned mandatory_deny_depth;
    /* `.git` may be created at the top of a write root (off: a repository
     * planted there would run its config's programs on the host's next git
     * command). */
    bool allow_git_init;
    /* nsfence's own config files: always write-protected, existing or not. */
    struct pol_strv config_files;
    /* The global and system git config files the user's git reads (every
     * place it may look): read for the paths they name, and protected. */
    struct pol_strv git_config_files;
    /* Read-list entries taken as spelled, never as globs (srt's
     * `{"path": ..., "literal": true}`). */
    struct pol_strv literal_paths;
    /* `.git/config` may be written (srt's allowGitConfig); hooks and the
     * rest of the mandatory denies hold. */
    bool allow_git_config;
    /* No filesystem rules at all (srt's filesystem.disabled): the host tree
     * writable, nothing protected, hidden or private but /dev and /proc. */
    bool fs_disabled;

    /* [network] */
    bool network_enabled;
    struct pol_strv allow_domain;
    struct pol_strv deny_domain;
    struct pol_reason *deny_reasons;
    size_t n_deny_reasons;
    struct pol_strv deny_address;
    bool allow_all_unix_sockets;
    unsigned http_port;
    unsigned socks_port;
    char *parent_proxy; /* NULL: from nsfence's own environment */
    /* The parent's exemptions (srt's parentProxy.noProxy); NULL: nsfence's
     * own NO_PROXY. */
    char *parent_no_proxy;
    /* An external proxy on the host's 127.0.0.1 serves an endpoint instead
     * of nsfence's (srt's httpProxyPort / socksProxyPort): each connection
     * to that endpoint is relayed to this port byte for byte, judged by
     * that proxy and not by nsfence's rules. 0: nsfence's own proxy. */
    unsigned http_relay_port;
    unsigned socks_relay_port;
    unsigned max_connections;

    /* [monitor] */
    bool monitor_enabled;
    struct pol_strv monitor_ignore;
    struct pol_ignore *ignore_violations;
    size_t n_ignore_violations;
    char *monitor_log;

    /* [sandbox] */
    enum pol_mode mode;
    bool new_session;
    /* The host's /proc bound in place of a fresh one, for a host (a
     * container with a masked /proc) where procfs cannot be mounted: the
     * command then sees every host process (srt's enableWeakerNestedSandbox). */
    bool proc_host;
    /* The command may make user namespaces (and mount in the mount
     * namespaces they own): srt's allowNestedUserNamespaces. */
    bool nested_userns;

    /* Environment: variables removed from the command's environment
     * (credentials with mode deny), and directories git treats as safe
     * (GIT_CONFIG_COUNT/KEY/VALUE, as srt sets them). */
    struct pol_strv env_unset;
    struct pol_strv git_safe_dirs;
};

#define POL_DEFAULT_DEPTH      3
#define POL_MAX_DEPTH          10
#define POL_DEFAULT_HTTP_PORT  3128
#define POL_DEFAULT_SOCKS_PORT 1080
#define POL_DEFAULT_MAX_CONNS  4096

/* The built-in default: cwd writable, network through the proxy with an
 * empty allow list, observer on. cwd must be absolute; home may be NULL. */
int pol_init(struct policy *pol, const char *cwd, const char *home, struct nf_err *err);
void pol_free(struct policy *pol);

int pol_strv_add(struct pol_strv *sv, const char *s, struct nf_err *err);
bool pol_strv_contains(const struct pol_strv *sv, const char *s);

/* Append an ignoreViolations entry (command and patterns copied). */
int pol_ignore_add(struct policy *pol, const char *command, const struct pol_strv *patterns,
                   struct nf_err *err);
void pol_strv_free(struct pol_strv *sv);

/* Lexically normalise a user-supplied path: a leading `~` or `~/` becomes
 * home, a relative path is taken against cwd, `.`, `..` and repeated or
 * trailing slashes are folded. Pure: no I/O. Fails on an empty path, `~user`,
 * `~` without an absolute home, or a result longer than outsz or PATH_MAX. */
int pol_path_normalize(const char *in, const char *cwd, const char *home, char *out, size_t outsz,
                       struct nf_err *err);

/* The length of the longest of v[] that holds abs (equal or an ancestor),
 * or -1. Pure. */
ssize_t pol_path_deepest(char *const *v, size_t n, const char *abs);

/* True when path equals dir or lies beneath it (both normalised). */
bool pol_path_within(const char *path, const char *dir);

/* True when path's last component is .git, in any case (what git opens on
 * a case-insensitive file system). */
bool pol_path_names_git(const char *path);

/* Number of components: "/" is 0, "/a" is 1, "/a/b" is 2. */
unsigned pol_path_depth(const char *path);
