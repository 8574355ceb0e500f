#include "tests/unit/tmptree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tmptree_make(const char *tag, char *out, size_t outsz)
{
    char tmpl[PATH_MAX];
    char real[PATH_MAX];

    umask(022);
    if (snprintf(tmpl, sizeof(tmpl), "/var/tmp/nsfence-test-%s-XXXXXX", tag) >= (int)sizeof(tmpl))
        return -1;
    if (!mkdtemp(tmpl))
        return -1;
    if (!realpath(tmpl, real) || strlen(real) >= outsz || chmod(real, 0755) < 0) {
        rmdir(tmpl);
        return -1;
    }
    memcpy(out, real, strlen(real) + 1);
    return 0;
}

/* Whether the name is gone. A pass over a directory is repeated while it
 * removes something (removing while reading may skip names); one that
 * removes nothing ends the walk, so a name that cannot go (a mount point a
 * failed test left) is reported instead of spun on. */
static bool rm_tree(int at, const char *name)
{
    struct stat st;
    DIR *dir;
    int fd;

    if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(at, name, 0) == 0 || errno == ENOENT;
    fchmodat(at, name, 0700, 0);
    fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (dir) {
        for (bool again = true; again;) {
            struct dirent *e;

            again = false;
            rewinddir(dir);
            while ((e = readdir(dir))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                if (rm_tree(dirfd(dir), e->d_name))
                    again = true;
            }
        }
        closedir(dir);
    } else if (fd >= 0) {
        close(fd);
    }
    if (unlinkat(at, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
        return true;
    fprintf(stderr, "tmptree: cannot remove %s: %s\n", name, strerror(errno));
    return false;
}

void tmptree_remove(const char *path)
{
    (void)rm_tree(AT_FDCWD, path);
}

int tmptree_put(const char *dir, const char *rel, const char *content, char *failed,
                size_t failedsz)
{
    char path[PATH_MAX];
    size_t len = (size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel);
    int fd;

    for (char *p = path + strlen(dir) + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            goto fail;
        *p = '/';
    }
    if (path[len - 1] == '/')
        return 0;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        goto fail;
    if (content && write(fd, content, strlen(content)) != (ssize_t)strlen(content)) {
        close(fd);
        goto fail;
    }
    close(fd);
    return 0;
fail:
    snprintf(failed, failedsz, "%s", path);
    return -1;
}

int tmptree_symlink(const char *dir, const char *target, const char *name, char *failed,
                    size_t failedsz)
{
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (symlink(target, path) == 0)
        return 0;
    snprintf(failed, failedsz, "%s", path);
    return -1;
}
