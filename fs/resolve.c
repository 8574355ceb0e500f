#include "fs/resolve.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_HOPS 40 /* the kernel's MAXSYMLINKS */

int fs_resolve(const char *path, char *out, size_t outsz, enum fs_res *res, size_t *missing_at,
               struct nf_err *err)
{
    return fs_resolve_links(path, out, outsz, res, missing_at, NULL, NULL, err);
}

int fs_resolve_links(const char *path, char *out, size_t outsz, enum fs_res *res,
                     size_t *missing_at, void (*on_link)(void *ctx, const char *link), void *ctx,
                     struct nf_err *err)
{
    char rest[PATH_MAX * 2];
    char *p;
    size_t len = 0;
    int hops = 0;

    if (path[0] != '/')
        return nf_err_set(err, EINVAL, "%s: not an absolute path", path);
    if (strlen(path) >= sizeof(rest) / 2)
        return nf_err_set(err, ENAMETOOLONG, "%.64s...: path too long", path);
    if (outsz < PATH_MAX)
        return nf_err_set(err, EINVAL, "resolve buffer too small");
    strcpy(rest, path);
    out[0] = '\0'; /* "" stands for "/" while walking */
    p = rest;
    for (;;) {
        char comp[NAME_MAX + 1];
        char link[PATH_MAX];
        struct stat st;
        size_t clen;
        ssize_t n;

        while (*p == '/')
            p++;
        if (!*p)
            break;
        clen = strcspn(p, "/");
        if (clen > NAME_MAX)
            return nf_err_set(err, ENAMETOOLONG, "%s: a component is too long", path);
        memcpy(comp, p, clen);
        comp[clen] = '\0';
        p += clen;
        if (strcmp(comp, ".") == 0)
            continue;
        if (strcmp(comp, "..") == 0) {
            while (len > 0 && out[len - 1] != '/')
                len--;
            if (len > 0)
                len--;
            out[len] = '\0';
            continue;
        }
        if (len + 1 + clen + 1 > PATH_MAX)
            return nf_err_set(err, ENAMETOOLONG, "%.64s...: path too long", path);
        out[len] = '/';
        memcpy(out + len + 1, comp, clen + 1);
        if (lstat(out, &st) < 0) {
            if (errno == ENOENT) {
                /* The rest cannot resolve through symlinks that do not exist
                 * yet: keep it as spelled, lexically. */
                size_t first = len + 1 + clen;

                len = first;
                while (*p) {
                    size_t l;

                    while (*p == '/')
                        p++;
                    if (!*p)
                        break;
                    l = strcspn(p, "/");
                    if ((l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.')) {
                        /* "missing/.." names the missing directory's parent,
                         * which exists; refuse rather than guess. */
                        return nf_err_set(err, EINVAL, "%s: '.' or '..' after a missing name",
                                          path);
                    }
                    if (len + 1 + l + 1 > PATH_MAX)
                        return nf_err_set(err, ENAMETOOLONG, "%.64s...: path too long", path);
                    out[len] = '/';
                    memcpy(out + len + 1, p, l);
                    len += 1 + l;
                    out[len] = '\0';
                    p += l;
                }
                *res = FS_RES_MISSING;
                if (missing_at)
                    *missing_at = first;
                return 0;
            }
            if (errno == ENOTDIR) {
                *res = FS_RES_IMPOSSIBLE;
                return 0;
            }
            return nf_err_sys(err, "resolve %s: %s", path, out);
        }
        if (!S_ISLNK(st.st_mode)) {
            if (p[strspn(p, "/")] && !S_ISDIR(st.st_mode)) {
                *res = FS_RES_IMPOSSIBLE;
                return 0;
            }
            len += 1 + clen;
            continue;
        }
        if (on_link)
            on_link(ctx, out);
        if (++hops > MAX_HOPS)
            return nf_err_set(err, ELOOP, "resolve %s: too many levels of symbolic links", path);
        n = readlink(out, link, sizeof(link) - 1);
        if (n < 0)
            return nf_err_sys(err, "resolve %s: readlink %s", path, out);
        if (n == 0)
            return nf_err_set(err, ENOENT, "resolve %s: %s is an empty symlink", path, out);
        link[n] = '\0';
        if ((size_t)n + strlen(p) + 2 > sizeof(rest))
            return nf_err_set(err, ENAMETOOLONG, "%.64s...: path too long", path);
        {
            /* rest becomes "link/p" (or "link" when nothing is left), in
             * place: p lies inside rest, so what is left moves first. */
            size_t ll = (size_t)n, pl = strlen(p);

            memmove(rest + ll + 1, p, pl + 1);
            memcpy(rest, link, ll);
            rest[ll] = pl ? '/' : '\0';
        }
        p = rest;
        if (link[0] == '/')
            len = 0;
        out[len] = '\0';
    }
    if (len == 0)
        strcpy(out, "/");
    *res = FS_RES_EXISTS;
    return 0;
}
