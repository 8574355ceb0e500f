/* Replays a fuzz target's corpus as a regression test (TAP), so every input
 * that ever mattered runs in `make test` under ASan+UBSan. A crash or a
 * sanitizer report aborts the run, which prove counts as a failure. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int skip_dots(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

int main(int argc, char **argv)
{
    struct dirent **names;
    int n;

    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    n = scandir(argv[1], &names, skip_dots, by_name);
    if (n <= 0) {
        printf("1..1\nnot ok 1 - corpus %s is missing or empty\n", argv[1]);
        return 1;
    }
    printf("1..%d\n", n);
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        uint8_t *buf;
        int fd;

        snprintf(path, sizeof(path), "%s/%s", argv[1], names[i]->d_name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
            printf("not ok %d - %s: cannot read\n", i + 1, names[i]->d_name);
            continue;
        }
        buf = malloc((size_t)st.st_size + 1);
        if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size) {
            printf("not ok %d - %s: short read\n", i + 1, names[i]->d_name);
            free(buf);
            close(fd);
            continue;
        }
        close(fd);
        fflush(stdout);
        LLVMFuzzerTestOneInput(buf, (size_t)st.st_size);
        free(buf);
        printf("ok %d - %s\n", i + 1, names[i]->d_name);
        free(names[i]);
    }
    free(names);
    return 0;
}
