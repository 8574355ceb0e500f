#include "src/lmode.h"

#include "src/log.h"
#include "src/util.h"

const char *lmode_status_name(enum lmode_status s)
{
    switch (s) {
    case LMODE_ENFORCED:
        return "enforced";
    case LMODE_PARTIAL:
        return "partial";
    case LMODE_ABSENT:
        return "absent";
    }
    return "?";
}

size_t lmode_table(int abi, struct lmode_row *out, size_t max)
{
    const struct lmode_row rows[] = {
        { "writes only in the write roots", abi >= 1 ? LMODE_ENFORCED : LMODE_ABSENT,
          "Landlock, and the supervisor performs every write-intent call" },
        { "chmod, chown, utimes, xattrs, truncate", abi >= 1 ? LMODE_ENFORCED : LMODE_ABSENT,
          "performed by the supervisor's helper, judged by path (Landlock covers none of them"
          "; truncate from ABI 3)" },
        { "protected names (rc files, git hooks and config, agent config)",
          abi >= 1 ? LMODE_ENFORCED : LMODE_ABSENT,
          "not writable, not creatable, their directories not renamable or removable: the "
          "supervisor refuses them" },
        { "read denies (deny_read)", abi >= 1 ? LMODE_PARTIAL : LMODE_ABSENT,
          "contents unreadable; names beneath a denied directory stay listable, and what is "
          "created later beside a denied entry is unreadable" },
        { "network only through the proxy", abi >= 4 ? LMODE_ENFORCED : LMODE_ABSENT,
          abi >= 4 ? "connect to an endpoint gets a socket connected to the proxy; Landlock "
                     "refuses every other TCP connect and bind"
                   : "Landlock below ABI 4 cannot refuse TCP: Landlock mode runs only with "
                     "--no-network" },
        { "socket options set before connect", LMODE_PARTIAL,
          "the proxied socket keeps O_NONBLOCK and close-on-exec, not other options" },
        { "listening, UDP, raw, netlink and packet sockets", LMODE_ENFORCED,
          "refused by seccomp: nothing listens on the host's loopback" },
        { "unix sockets", LMODE_ENFORCED,
          abi >= 6 ? "socket(AF_UNIX) refused by seccomp; abstract sockets scoped by Landlock"
                   : "socket(AF_UNIX) refused by seccomp" },
        { "signals to processes outside the sandbox", abi >= 6 ? LMODE_ENFORCED : LMODE_ABSENT,
          abi >= 6 ? "Landlock scoping (ABI 6)" : "needs Landlock ABI 6 (Linux 6.12)" },
        { "ptrace of processes outside the sandbox", abi >= 1 ? LMODE_ENFORCED : LMODE_ABSENT,
          "Landlock" },
        { "device ioctls", abi >= 5 ? LMODE_ENFORCED : LMODE_ABSENT,
          abi >= 5 ? "Landlock (ABI 5): only the terminal and /dev/null-like devices"
                   : "needs Landlock ABI 5 (Linux 6.10)" },
        { "new namespaces, mounts, keyrings, io_uring, TIOCSTI", LMODE_ENFORCED, "seccomp" },
        { "nothing outlives the command", abi >= 6 ? LMODE_ENFORCED : LMODE_PARTIAL,
          abi >= 6 ? "init is a subreaper and kills what is left, also when nsfence is killed"
                   : "init is a subreaper and kills what is left, but below ABI 6 the command "
                     "may kill init first" },
        { "other terminals of the user", abi >= 1 ? LMODE_ENFORCED : LMODE_ABSENT,
          "only the command's own terminal and the pseudo-terminals whose master it holds" },
        { "private /tmp", LMODE_PARTIAL,
          "TMPDIR is a private directory removed after the run; /tmp itself is the host's, "
          "not writable" },
        { "a minimal /dev", abi >= 1 ? LMODE_PARTIAL : LMODE_ABSENT,
          "only null, zero, full, random, urandom, tty, ptmx, shm and the command's own terminal "
          "open; the names of the host's other devices stay listable" },
        { "process visibility", LMODE_ABSENT,
          "other processes are visible in /proc, and /proc/keys names the caller's keys (the "
          "keyring calls themselves are refused)" },
        { "capability bounding set", LMODE_PARTIAL,
          "emptied where nsfence may (CAP_SETPCAP); otherwise kept, and no_new_privs keeps the "
          "command from gaining any" },
        { "private /dev/shm, hostname, System V IPC and POSIX message queues", LMODE_ABSENT,
          "the host's" },
        { "unix sockets bound in the write roots", LMODE_ABSENT,
          "refused (with --allow-all-unix-sockets): bind them in TMPDIR" },
    };
    size_t n = 0;

    for (size_t i = 0; i < NF_ARRAY_SIZE(rows) && n < max; i++)
        out[n++] = rows[i];
    return n;
}

void lmode_print(int abi, FILE *out)
{
    struct lmode_row rows[32];
    size_t n = lmode_table(abi, rows, NF_ARRAY_SIZE(rows));

    fprintf(out, "Landlock mode, Landlock ABI %d (what namespace mode gives, here):\n", abi);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-8s  %s: %s\n", lmode_status_name(rows[i].status), rows[i].property,
                rows[i].how);
}

void lmode_warn(int abi)
{
    log_error("Landlock mode (ABI %d), weaker than namespaces: other processes visible, no "
              "private /tmp (TMPDIR is), the host's hostname, IPC and /dev/shm, names beneath "
              "denied directories listable, nothing may listen%s; see `nsfence explain --mode "
              "landlock`",
              abi, abi >= 6 ? "" : ", signals to outside processes not refused");
}
