/* Times commands side by side: each round runs every command once, in turn,
 * so drift in the machine's load hits all of them alike.
 *   timeit [-n ROUNDS] [-w WARMUP] [-q] -- NAME CMD ARGS... ::: NAME CMD ARGS... ...
 * Prints, per command, "NAME median_us mean_us p90_us min_us" (one line
 * each); -q sends the commands' output to /dev/null. A command that exits
 * non-zero is reported and stops the run. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct cmd {
    const char *name;
    char **argv;
    double *us;
};

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static int run(struct cmd *c, int quiet, double *out)
{
    double t0 = now_us();
    int st;
    pid_t p = fork();

    if (p == 0) {
        if (quiet) {
            int fd = open("/dev/null", O_WRONLY);

            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp(c->argv[0], c->argv);
        _exit(127);
    }
    if (p < 0 || waitpid(p, &st, 0) < 0)
        return -1;
    *out = now_us() - t0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "timeit: %s failed (status %d)\n", c->name, st);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = 200, warm = 20, quiet = 0, i = 1, n = 0;
    struct cmd cmds[16];

    for (; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "-n"))
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-w"))
            warm = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-q"))
            quiet = 1;
    }
    for (i++; i < argc && n < 16;) {
        cmds[n].name = argv[i++];
        cmds[n].argv = &argv[i];
        while (i < argc && strcmp(argv[i], ":::"))
            i++;
        if (i < argc)
            argv[i++] = NULL;
        cmds[n].us = calloc((size_t)rounds, sizeof(double));
        n++;
    }
    for (int r = -warm; r < rounds; r++)
        for (int c = 0; c < n; c++) {
            double us;

            if (run(&cmds[c], quiet, &us) < 0)
                return 1;
            if (r >= 0)
                cmds[c].us[r] = us;
        }
    for (int c = 0; c < n; c++) {
        double sum = 0;

        qsort(cmds[c].us, (size_t)rounds, sizeof(double), cmp);
        for (int r = 0; r < rounds; r++)
            sum += cmds[c].us[r];
        printf("%s %.0f %.0f %.0f %.0f\n", cmds[c].name, cmds[c].us[rounds / 2], sum / rounds,
               cmds[c].us[rounds * 9 / 10], cmds[c].us[0]);
    }
    return 0;
}
