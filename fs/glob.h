/* Glob patterns in deny_read and allow_read, read as srt 0.0.83 reads them
 * (parseGlob), matched without a regex.
 *
 * Syntax: `*` is any run of characters but '/'; `**` is any run, '/'
 * included; `**` followed by '/' is zero or more whole directories; `?` is
 * one character but '/'; `[set]` runs from '[' to the first ']', its members
 * are literal ('*', '?' and '/' included), `a-z` is a range, and '^' or '!'
 * do not negate. An empty `[]` or a set with a backwards range is literal
 * text, and so is a '[' with no ']' after it. There are no escapes. A
 * character is a UTF-8 sequence (a byte that is not part of one counts
 * alone), so `?` matches "é" as srt's `[^/]` does.
 *
 * A deny pattern also covers what lies beneath a match (srt's regex is the
 * pattern + `(/.*)?$`). Patterns are absolute and lexically normal: the
 * caller took relative ones against the working directory. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether s holds glob syntax: a `*`, a `?`, or a '[' that opens a valid
 * set. "a[]" and "a[z-a]" are literal names. */
bool fs_glob_is_pattern(const char *s);

/* Whether the whole of path matches pattern. Pure; the work is bounded by
 * strlen(pattern) * strlen(path) whatever the input. A pattern of PATH_MAX
 * bytes or more matches nothing (no path that long can be opened). */
bool fs_glob_match(const char *pattern, const char *path);

/* Whether path matches pattern or lies beneath a match: the rule of a deny
 * (`*.d` in /a covers /a/x.d/y). */
bool fs_glob_match_beneath(const char *pattern, const char *path);

/* The length of pattern's literal directory prefix, the components before
 * the first one that holds a wildcard: 4 ("/a/b") for `*.txt` in /a/b. 0
 * when only the root comes before it (a wildcard in the first component:
 * `**` then /x, or `e*` at the root); such a pattern would walk the whole
 * file system and is refused. A pattern without wildcards is its own prefix
 * (strlen). For an absolute pattern, pattern[result] is '/' or the
 * terminating NUL. */
size_t fs_glob_prefix_len(const char *pattern);
