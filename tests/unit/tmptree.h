/* A private directory tree under /var/tmp for the unit tests that work on
 * real files (scan, resolve, plan). */
#pragma once

#include <stddef.h>

/* mkdtemp /var/tmp/nsfence-test-TAG-XXXXXX, its realpath in out, mode 0755
 * (traversable by uid 65534 for the permission cases). 0, or -1. */
int tmptree_make(const char *tag, char *out, size_t outsz);

/* rm -rf without following links; unlistable directories made listable. */
void tmptree_remove(const char *path);

/* Under dir: "a/b/" makes the directories a and a/b; "a/f" makes a and the
 * file f, holding content (NULL: empty). 0, or -1 with errno set and the
 * path that failed in failed. */
int tmptree_put(const char *dir, const char *rel, const char *content, char *failed,
                size_t failedsz);

/* dir/name -> target. 0, or -1 with errno set and dir/name in failed. */
int tmptree_symlink(const char *dir, const char *target, const char *name, char *failed,
                    size_t failedsz);
