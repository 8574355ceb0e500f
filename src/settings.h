/* srt 0.0.83's JSON settings (`--settings FILE.json`) → the policy.
 * settings_parse is pure (the fuzz target and the unit tests call it): it
 * reads the buffer with jansson into struct srt_settings, a plain mirror of
 * srt's schema, checking every type and refusing duplicate keys and keys it
 * does not know, at any depth (srt strips unknown top-level keys; nsfence
 * refuses them too, since a key it does not know may be a rule it would
 * drop). settings_apply maps what was read onto the policy, and refuses
 * what nsfence cannot honour on Linux. Every error names the file and the
 * key path: `settings.json: network.allowedDomains[2]: expected a string`. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "src/err.h"
#include "src/policy.h"

/* Largest settings file read. */
#define SRT_SETTINGS_MAX_SIZE (1024 * 1024)

struct srt_opt_bool {
    bool set;
    bool val;
};

/* A filesystem entry: "path", or {"path": "...", "literal": true}. */
struct srt_path {
    char *path;
    bool literal;
};

struct srt_paths {
    struct srt_path *v;
    size_t n;
};

/* deniedDomainReasons: the deniedDomains entry it explains, and the text. */
struct srt_reason {
    char *entry;
    char *text;
};

/* ignoreViolations: command pattern → path patterns. */
struct srt_ignore {
    char *command;
    struct pol_strv paths;
};

/* A credentials.files or credentials.envVars entry. */
struct srt_cred {
    char *name; /* the path (files) or the variable's name (envVars) */
    bool mask;  /* mode "mask"; else "deny" */
};

struct srt_settings {
    char *file; /* as given to settings_parse, for settings_apply's messages */

    struct {
        struct pol_strv allowed_domains;
        struct pol_strv denied_domains;
        struct srt_reason *reasons;
        size_t n_reasons;
        struct srt_opt_bool strict_allowlist;
        struct pol_strv denied_addresses;
        struct srt_opt_bool allow_all_unix_sockets;
        unsigned http_proxy_port; /* 0: unset */
        unsigned socks_proxy_port;
        bool has_parent_proxy;
        char *parent_http, *parent_https, *parent_no_proxy; /* NULL: unset */
        struct srt_opt_bool refuse_opaque_tunnels;
        struct srt_opt_bool require_host_match;
        struct srt_opt_bool allow_plaintext_header_set;
        bool has_strip_response_headers;
        size_t n_strip_response_headers;
        char *ambiguous_request_target; /* NULL: unset */
        bool has_mitm_proxy;
        bool has_tls_terminate;
        bool has_filter_request;
    } network;

    struct {
        struct srt_opt_bool disabled;
        struct srt_paths deny_read, allow_read, allow_write, deny_write;
        struct srt_opt_bool allow_git_config;
    } filesystem;

    bool has_credentials;
    struct srt_cred *cred_files;
    size_t n_cred_files;
    struct srt_cred *cred_env;
    size_t n_cred_env;
    bool has_aws_pairs;
    bool has_sigv4;

    struct srt_ignore *ignore;
    size_t n_ignore;
    struct srt_opt_bool weaker_nested;
    struct srt_opt_bool nested_userns;
    unsigned mandatory_deny_depth; /* 0: unset */
    int mode;                      /* nsfence.mode (a key of ours): enum pol_mode, -1 unset */
    struct pol_strv git_safe_dirs;

    /* Keys accepted but without effect here (ignored by srt on Linux, for
     * another OS, or configuring a tool nsfence does not use): each a
     * sentence settings_apply says under -v. */
    struct pol_strv notes;
};

/* Parse a whole settings buffer. file names the file in messages. On error
 * out holds nothing (it is freed). */
int settings_parse(const char *buf, size_t len, const char *file, struct srt_settings *out,
                   struct nf_err *err);

/* Add what s says to pol (after the INI config, before the flags: scalars
 * replace the config's, lists append). A key nsfence cannot honour is an
 * error saying so; nothing is dropped. */
int settings_apply(const struct srt_settings *s, struct policy *pol, struct nf_err *err);

void settings_free(struct srt_settings *s);

/* Read path (at most SRT_SETTINGS_MAX_SIZE bytes; missing, unreadable,
 * empty or whitespace-only are errors) and parse it. */
int settings_load(const char *path, struct srt_settings *out, struct nf_err *err);
