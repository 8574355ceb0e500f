#include "fs/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/util.h"

/* One field of a line: the bytes between two single spaces. */
struct field {
    const char *p;
    size_t n;
};

/* The field at *pos, up to the next space or the end of the line; false
 * once the line is used up. Fields are split on every space, so an empty
 * one (the kernel's empty SOURCE) is a field, not a separator. */
static bool next_field(const char *line, size_t len, size_t *pos, struct field *f)
{
    const char *sp;

    if (*pos > len)
        return false;
    f->p = line + *pos;
    sp = memchr(f->p, ' ', len - *pos);
    f->n = sp ? (size_t)(sp - f->p) : len - *pos;
    *pos += f->n + 1;
    return true;
}

static bool parse_uint(const char *p, size_t n, unsigned *out)
{
    uint64_t v = 0;

    if (n == 0 || n > 10)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    if (v > UINT_MAX)
        return false;
    *out = (unsigned)v;
    return true;
}

static bool is_octal(char c)
{
    return c >= '0' && c <= '7';
}

/* f with its \ooo escapes decoded into out (outsz bytes with the NUL).
 * The kernel escapes every backslash, so a lone one means the line is not
 * what we think it is. A field too long to fit is still checked to its end:
 * a malformed line is reported as such however long it is. */
static int decode(struct field f, char *out, size_t outsz)
{
    size_t o = 0;
    bool too_long = false;

    for (size_t i = 0; i < f.n; i++) {
        unsigned char c = (unsigned char)f.p[i];

        if (c == '\\') {
            unsigned v;

            if (f.n - i < 4 || !is_octal(f.p[i + 1]) || !is_octal(f.p[i + 2]) ||
                !is_octal(f.p[i + 3]))
                return -EINVAL;
            v = (unsigned)(f.p[i + 1] - '0') * 64 + (unsigned)(f.p[i + 2] - '0') * 8 +
                (unsigned)(f.p[i + 3] - '0');
            /* \000 would end the path early: "/srv/x\000" must not read
             * as "/srv/x". */
            if (v == 0 || v > 0xff)
                return -EINVAL;
            c = (unsigned char)v;
            i += 3;
        }
        if (o + 1 < outsz)
            out[o++] = (char)c;
        else
            too_long = true;
    }
    out[too_long ? 0 : o] = '\0';
    return too_long ? -ENAMETOOLONG : 0;
}

/* Absolute, no empty, "." or ".." component, no trailing slash but "/".
 * The kernel prints mount points this way; anything else would let a path
 * such as "/proc/../srv/chroot/proc" pass for one beneath /proc. */
static bool is_normal_absolute(const char *p)
{
    if (p[0] != '/')
        return false;
    if (p[1] == '\0')
        return true;
    for (const char *c = p; *c;) {
        const char *next = strchr(c + 1, '/');
        size_t n = next ? (size_t)(next - c - 1) : strlen(c + 1);

        if (n == 0 || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
            return false;
        if (!next)
            break;
        c = next;
    }
    return true;
}

int fs_mountinfo_parse(const char *line, size_t len, struct fs_mountinfo *out)
{
    struct field f[6], opt, type, source;
    const char *colon;
    size_t pos = 0;
    int rt, rm;

    out->mount_point[0] = '\0';
    out->fstype[0] = '\0';
    if (len && line[len - 1] == '\n')
        len--;
    if (memchr(line, '\0', len) || memchr(line, '\n', len))
        return -EINVAL;
    /* ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS */
    for (size_t i = 0; i < NF_ARRAY_SIZE(f); i++)
        if (!next_field(line, len, &pos, &f[i]) || f[i].n == 0)
            return -EINVAL;
    /* The optional fields ("shared:1", "master:2", "unbindable"...), up to
     * the separator: none of them is a lone "-", and a space in a mount
     * point is escaped, so no path can forge one. */
    do {
        if (!next_field(line, len, &pos, &opt) || opt.n == 0)
            return -EINVAL;
    } while (!(opt.n == 1 && opt.p[0] == '-'));
    /* FSTYPE SOURCE, then the superblock options: the rest of the line,
     * spaces and all (a filesystem's show_options is not ours to vet). */
    if (!next_field(line, len, &pos, &type) || type.n == 0 ||
        !next_field(line, len, &pos, &source) || pos >= len)
        return -EINVAL;

    if (!parse_uint(f[0].p, f[0].n, &out->mount_id) || !parse_uint(f[1].p, f[1].n, &out->parent_id))
        return -EINVAL;
    colon = memchr(f[2].p, ':', f[2].n);
    if (!colon || !parse_uint(f[2].p, (size_t)(colon - f[2].p), &out->major) ||
        !parse_uint(colon + 1, f[2].n - (size_t)(colon - f[2].p) - 1, &out->minor))
        return -EINVAL;

    rt = decode(type, out->fstype, sizeof(out->fstype));
    rm = decode(f[4], out->mount_point, sizeof(out->mount_point));
    if (rt == -EINVAL || rm == -EINVAL || f[4].p[0] != '/' ||
        (rm == 0 && !is_normal_absolute(out->mount_point))) {
        out->mount_point[0] = '\0';
        out->fstype[0] = '\0';
        return -EINVAL;
    }
    if (rt < 0 || rm < 0) {
        out->mount_point[0] = '\0';
        return -ENAMETOOLONG;
    }
    return 0;
}

int fs_foreign_procfs_in(const char *text, size_t len, struct pol_strv *out, struct nf_err *err)
{
    struct fs_mountinfo mi;
    size_t lineno = 0;

    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        int r = fs_mountinfo_parse(text + pos, n, &mi);

        lineno++;
        pos += n + 1;
        if (r == -EINVAL)
            return nf_err_set(err, EINVAL,
                              "line %zu is malformed: cannot tell whether it mounts a procfs",
                              lineno);
        if (strcmp(mi.fstype, "proc") != 0)
            continue;
        if (r == -ENAMETOOLONG)
            return nf_err_set(err, ENAMETOOLONG,
                              "line %zu: a procfs is mounted at a path longer than PATH_MAX, "
                              "which the sandbox could not mask",
                              lineno);
        if (pol_path_within(mi.mount_point, "/proc") || pol_strv_contains(out, mi.mount_point))
            continue;
        if (pol_strv_add(out, mi.mount_point, err) < 0)
            return -1;
    }
    return 0;
}

int fs_foreign_procfs(struct pol_strv *out, struct nf_err *err)
{
    _cleanup_close_ int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    _cleanup_free_ char *buf = NULL;
    size_t len = 0, cap = 0;

    if (fd < 0)
        return nf_err_sys(err, "open /proc/self/mountinfo");
    for (;;) {
        ssize_t n;

        if (cap - len < 4096) {
            size_t ncap = cap ? cap * 2 : 16384;
            char *nbuf = realloc(buf, ncap);

            if (!nbuf)
                return nf_err_sys(err, "out of memory");
            buf = nbuf;
            cap = ncap;
        }
        n = RETRY_EINTR(read(fd, buf + len, cap - len));
        if (n < 0)
            return nf_err_sys(err, "read /proc/self/mountinfo");
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (fs_foreign_procfs_in(buf, len, out, err) < 0)
        return nf_err_prefix(err, "/proc/self/mountinfo");
    return 0;
}
