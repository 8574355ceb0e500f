/* Developer tool, not part of the build: lists the functions of a program
 * that one run of it executes, in the order it first does, for the linker to
 * lay them out together (make hot-order writes tools/hot-order.txt).
 *   hotorder OUT PROGRAM ARGS...
 * PROGRAM runs single-stepped under ptrace, with every process it forks or
 * clones, until each execs something else or exits. The names of the
 * functions those steps land in (nm PROGRAM) that OUT does not list yet are
 * appended to it, so several runs (the nsfence, bwrap and srt front ends)
 * add up.
 *
 * Why: where a page fault costs 10 us or more (a VM with shadow page
 * tables), every 64 KiB window of code a process touches first costs one,
 * and a fork's child faults them all again (the kernel does not copy the
 * page tables of file mappings). The code one run executes is about 220 KiB
 * of functions scattered over 1.2 MiB of text; together, it fits in four
 * windows. What the forked and cloned processes run (init, the command
 * before its exec) is listed first, apart from what only the first process
 * runs: a child, which refaults every window it runs code in, then runs
 * code from as few windows as it can. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

struct sym {
    unsigned long addr, size;
    char *name;
    bool listed;
    unsigned long first; /* when it first ran: 1 for the first function, 0: never */
    bool in_child;       /* a process the program forked or cloned ran it */
};

static struct sym *syms;
static size_t n_syms;

static void die(const char *what)
{
    fprintf(stderr, "hotorder: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* The program's functions, by address (nm -n), with their sizes. */
static void load_symbols(const char *program)
{
    char cmd[4096], line[1024], name[512], type;
    unsigned long addr, size;
    size_t cap = 0;
    FILE *p;

    snprintf(cmd, sizeof(cmd), "nm -n -S --defined-only '%s'", program);
    p = popen(cmd, "r");
    if (!p)
        die("nm");
    while (fgets(line, sizeof(line), p)) {
        if (sscanf(line, "%lx %lx %c %511s", &addr, &size, &type, name) != 4 ||
            !strchr("tTwW", type))
            continue;
        if (n_syms == cap) {
            cap = cap ? cap * 2 : 1024;
            syms = realloc(syms, cap * sizeof(*syms));
            if (!syms)
                die("realloc");
        }
        syms[n_syms++] = (struct sym){ .addr = addr, .size = size, .name = strdup(name) };
    }
    if (pclose(p) != 0 || !n_syms) {
        fprintf(stderr, "hotorder: nm found no functions in %s\n", program);
        exit(1);
    }
}

static struct sym *lookup(unsigned long off)
{
    size_t lo = 0, hi = n_syms;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (syms[mid].addr <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo || off >= syms[lo - 1].addr + syms[lo - 1].size)
        return NULL;
    return &syms[lo - 1];
}

/* Names OUT lists already are not appended again. */
static void mark_listed(const char *out)
{
    char line[512];
    FILE *f = fopen(out, "r");

    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        for (size_t i = 0; i < n_syms; i++)
            if (strcmp(syms[i].name, line) == 0)
                syms[i].listed = true;
    }
    fclose(f);
}

/* The lowest mapping of the program is its load address: offsets below are
 * relative to it, as nm's addresses are in a PIE. */
static void mapping(pid_t pid, const char *program, unsigned long *lo, unsigned long *hi)
{
    char path[64], line[4096], *real = realpath(program, NULL);
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    f = fopen(path, "r");
    if (!f || !real)
        die("maps");
    *lo = ~0UL;
    *hi = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long a, b;
        size_t n = strlen(line);

        if (n && line[n - 1] == '\n')
            line[--n] = '\0';
        if (n >= strlen(real) && strcmp(line + n - strlen(real), real) == 0 &&
            sscanf(line, "%lx-%lx", &a, &b) == 2) {
            *lo = a < *lo ? a : *lo;
            *hi = b > *hi ? b : *hi;
        }
    }
    fclose(f);
    free(real);
    if (*lo >= *hi) {
        fprintf(stderr, "hotorder: %s is not mapped in its process\n", program);
        exit(1);
    }
}

static int by_first(const void *a, const void *b)
{
    const struct sym *x = *(struct sym *const *)a, *y = *(struct sym *const *)b;

    return (x->first > y->first) - (x->first < y->first);
}

/* The functions this run ran that OUT does not list yet: those a child ran,
 * then the others, each group in the order they first ran. */
static void append_run(FILE *out)
{
    struct sym **ran = calloc(n_syms, sizeof(*ran));
    size_t n = 0;

    if (!ran)
        die("calloc");
    for (size_t i = 0; i < n_syms; i++)
        if (syms[i].first && !syms[i].listed)
            ran[n++] = &syms[i];
    qsort(ran, n, sizeof(*ran), by_first);
    for (int child = 1; child >= 0; child--)
        for (size_t i = 0; i < n; i++)
            if (ran[i]->in_child == child)
                fprintf(out, "%s\n", ran[i]->name);
    free(ran);
}

int main(int argc, char **argv)
{
    unsigned long lo, hi, seen = 0;
    int live = 1, st;
    FILE *out;
    pid_t child;

    if (argc < 3) {
        fprintf(stderr, "usage: hotorder OUT PROGRAM ARGS...\n");
        return 2;
    }
    load_symbols(argv[2]);
    mark_listed(argv[1]);
    out = fopen(argv[1], "a");
    if (!out)
        die(argv[1]);
    child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
            die("PTRACE_TRACEME");
        raise(SIGSTOP);
        execv(argv[2], argv + 2);
        die(argv[2]);
    }
    if (waitpid(child, &st, 0) < 0 ||
        ptrace(PTRACE_SETOPTIONS, child, 0,
               PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC |
                   PTRACE_O_EXITKILL) < 0 ||
        ptrace(PTRACE_CONT, child, 0, 0) < 0 || waitpid(child, &st, 0) < 0)
        die("ptrace");
    mapping(child, argv[2], &lo, &hi);
    if (ptrace(PTRACE_SINGLESTEP, child, 0, 0) < 0)
        die("PTRACE_SINGLESTEP");
    while (live > 0) {
        struct user_regs_struct regs;
        pid_t t = waitpid(-1, &st, __WALL);
        int sig, event;

        if (t < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            live--;
            continue;
        }
        if (!WIFSTOPPED(st))
            continue;
        sig = WSTOPSIG(st);
        event = st >> 16;
        if (event == PTRACE_EVENT_EXEC) {
            /* The command: not the program any more. */
            (void)ptrace(PTRACE_DETACH, t, 0, 0);
            live--;
            continue;
        }
        if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
            event == PTRACE_EVENT_CLONE)
            live++;
        if (ptrace(PTRACE_GETREGS, t, 0, &regs) == 0 && regs.rip >= lo && regs.rip < hi) {
            struct sym *s = lookup(regs.rip - lo);

            if (s && !s->first)
                s->first = ++seen;
            if (s && t != child)
                s->in_child = true;
        }
        (void)ptrace(PTRACE_SINGLESTEP, t, 0,
                     event == 0 && sig != SIGTRAP && sig != SIGSTOP ? sig : 0);
    }
    append_run(out);
    if (fclose(out) != 0)
        die(argv[1]);
    return 0;
}
