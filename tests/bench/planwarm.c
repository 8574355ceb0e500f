/* The policy and plan stage, cold and warm: nsfence's own compile of
 * `nsfence -- true` (cli_parse, then front_compile: the policy, the scan
 * for protected names, the plan, the filters), run ROUNDS times in one
 * process in the current directory, from libnsfence.a. The first round
 * pays what a run's plan stage pays: the first touch of every page of
 * code, data, stack and heap it uses in a process just exec'd. Every later
 * round finds them mapped and pays only the work itself: its system calls
 * and its computing.
 *   planwarm [ROUNDS]   (default 2001)
 * Prints "first US FAULTS" and "warm US FAULTS": the first round, then the
 * median of the others, in µs and minor page faults (getrusage). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "src/cli.h"
#include "src/err.h"
#include "src/front.h"

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static long minflt(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    char *args[] = { "nsfence", "--", "true", NULL };
    int rounds = argc > 1 ? atoi(argv[1]) : 2001;
    double *us, *flt;
    static struct front f;

    if (rounds < 2) {
        fprintf(stderr, "planwarm: ROUNDS must be 2 or more\n");
        return 2;
    }
    us = calloc((size_t)rounds, sizeof(*us));
    flt = calloc((size_t)rounds, sizeof(*flt));
    if (!us || !flt) {
        perror("planwarm");
        return 1;
    }
    for (int i = 0; i < rounds; i++) {
        struct nf_err err = { 0 };
        struct cli cli;
        long f0 = minflt();
        double t0 = now_us();

        if (cli_parse(3, args, &cli, &err) < 0 || front_compile(&cli, &f, &err) < 0) {
            fprintf(stderr, "planwarm: %s\n", err.msg);
            return 1;
        }
        us[i] = now_us() - t0;
        flt[i] = (double)(minflt() - f0);
        front_free(&f);
        cli_free(&cli);
    }
    printf("first %.0f %.0f\n", us[0], flt[0]);
    qsort(us + 1, (size_t)rounds - 1, sizeof(*us), cmp_double);
    qsort(flt + 1, (size_t)rounds - 1, sizeof(*flt), cmp_double);
    printf("warm %.0f %.0f\n", us[rounds / 2], flt[rounds / 2]);
    free(us);
    free(flt);
    return 0;
}
