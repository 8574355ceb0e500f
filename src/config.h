/* The INI config (inih) → the policy. cfg_parse_buffer is pure (the fuzz
 * target and the unit tests call it); cfg_load reads the file. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "src/err.h"
#include "src/policy.h"

/* Apply one key. section and key as written; value already trimmed. Errors
 * describe the value; the caller adds file, line and key. */
int cfg_apply(struct policy *pol, const char *section, const char *key, const char *value,
              struct nf_err *err);

/* Add one path to a filesystem list of pol (sv is one of its four), by
 * the rules every front end shares: normalised against pol's cwd and home,
 * a trailing "/" "**" folded away, other globs only in read lists (read_list) and
 * never rooted at `/` alone. literal: the path as spelled, no glob (srt's
 * `{path, literal: true}`); recorded in pol->literal_paths. */
int cfg_add_path(struct policy *pol, struct pol_strv *sv, const char *v, bool read_list,
                 bool literal, struct nf_err *err);

/* Parse a whole INI buffer into pol. Any problem — unknown section or key,
 * bad value, syntax error, a NUL byte, a line too long for inih — is an error
 * "FILE:LINE: [section] key: what". */
int cfg_parse_buffer(struct policy *pol, const char *file, const char *buf, size_t len,
                     struct nf_err *err);

/* Read and parse path. explicit: --config was given, so a missing or
 * unreadable file is an error; otherwise ENOENT, ENOTDIR and EACCES mean "no
 * config" and return 0 with *loaded false. */
int cfg_load(struct policy *pol, const char *path, bool explicit, bool *loaded, struct nf_err *err);

/* The default config paths in lookup order: $XDG_CONFIG_HOME/nsfence/config.ini
 * (when XDG_CONFIG_HOME is absolute) and ~/.config/nsfence/config.ini. Writes
 * up to two normalised paths; returns how many. */
size_t cfg_default_paths(const char *xdg_config_home, const char *home, char out[2][4096]);
