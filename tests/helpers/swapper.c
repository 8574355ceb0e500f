/* The attacker of a concurrent run: exchanges two names as fast as it can
 * (renameat2 RENAME_EXCHANGE, atomic), so that a directory and a symlink
 * to somewhere else keep trading places under whoever resolves a path
 * through them:
 *   swapper A B STOPFILE
 * Runs until STOPFILE exists (or 120 s pass); prints how many swaps it made. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    unsigned long swaps = 0;
    time_t end = time(NULL) + 120;

    if (argc != 4) {
        fprintf(stderr, "usage: swapper A B STOPFILE\n");
        return 2;
    }
    while (access(argv[3], F_OK) < 0 && time(NULL) < end) {
        for (int i = 0; i < 256; i++) {
            if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) < 0) {
                perror("renameat2");
                return 1;
            }
            swaps++;
        }
    }
    /* Leave them as they were found. */
    if (swaps % 2 && renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) == 0)
        swaps++;
    printf("%lu\n", swaps);
    return 0;
}
