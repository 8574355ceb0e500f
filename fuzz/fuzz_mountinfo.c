/* fs_mountinfo_parse over arbitrary bytes as one line, and
 * fs_foreign_procfs_in over them as a whole table. The properties: a parsed
 * mount point is absolute and lexically normal; the kernel's own spelling
 * of what was parsed (escaped again) parses to the same fields; a final
 * '\n' changes nothing; a refused line leaves no mount point behind; the
 * list holds normal paths outside /proc, each once, and an error is one
 * line. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/mounts.h"
#include "fuzz/fuzz.h"

/* The kernel's escaping of a mount point or a type (" \t\n\\" as \ooo). */
static size_t escape(const char *s, char *out)
{
    size_t o = 0;

    for (; *s; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
            o += (size_t)sprintf(out + o, "\\%03o", (unsigned char)*s);
        else
            out[o++] = *s;
    }
    out[o] = '\0';
    return o;
}

static void check_round_trip(const struct fs_mountinfo *mi)
{
    static char line[4 * PATH_MAX + 4 * FS_FSTYPE_MAX + 128];
    static char mp[4 * PATH_MAX + 1], type[4 * FS_FSTYPE_MAX + 1];
    static struct fs_mountinfo again;
    int n;

    escape(mi->mount_point, mp);
    escape(mi->fstype, type);
    n = snprintf(line, sizeof(line), "%u %u %u:%u / %s rw shared:1 - %s  rw\n", mi->mount_id,
                 mi->parent_id, mi->major, mi->minor, mp, type);
    CHECK(n > 0 && (size_t)n < sizeof(line));
    CHECK(fs_mountinfo_parse(line, (size_t)n, &again) == 0);
    CHECK(again.mount_id == mi->mount_id && again.parent_id == mi->parent_id);
    CHECK(again.major == mi->major && again.minor == mi->minor);
    CHECK(strcmp(again.mount_point, mi->mount_point) == 0);
    CHECK(strcmp(again.fstype, mi->fstype) == 0);
}

static void check_list(const char *text, size_t size)
{
    struct pol_strv l = { 0 };
    struct nf_err err = { 0 };

    if (fs_foreign_procfs_in(text, size, &l, &err) < 0) {
        CHECK(err.msg[0] != '\0' && !strchr(err.msg, '\n'));
    } else {
        for (size_t i = 0; i < l.n; i++) {
            fuzz_check_normal_path(l.v[i]);
            CHECK(!pol_path_within(l.v[i], "/proc"));
            for (size_t j = 0; j < i; j++)
                CHECK(strcmp(l.v[i], l.v[j]) != 0);
        }
        CHECK(l.n == 0 || l.v[l.n] == NULL);
    }
    pol_strv_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fs_mountinfo mi, nl;
    char *line = fuzz_copy(data, size);
    int r = fs_mountinfo_parse(line, size, &mi);

    CHECK(r == 0 || r == -EINVAL || r == -ENAMETOOLONG);
    if (r == 0) {
        fuzz_check_normal_path(mi.mount_point);
        CHECK(mi.fstype[0] != '\0');
        check_round_trip(&mi);
    } else {
        CHECK(mi.mount_point[0] == '\0');
    }
    if (size == 0 || line[size - 1] != '\n') {
        char *with = malloc(size + 1);

        CHECK(with != NULL);
        memcpy(with, data, size);
        with[size] = '\n';
        CHECK(fs_mountinfo_parse(with, size + 1, &nl) == r);
        CHECK(strcmp(nl.mount_point, mi.mount_point) == 0 && strcmp(nl.fstype, mi.fstype) == 0);
        free(with);
    }
    check_list(line, size);
    free(line);
    return 0;
}
