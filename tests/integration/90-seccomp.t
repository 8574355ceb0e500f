#!/bin/bash
# Seccomp: the holes the mounts and the namespaces leave are closed (exact
# errnos), init cannot be touched, the terminal cannot be injected into, and
# the write observer reports what was refused.
# modes: landlock
. "$(dirname "$0")/lib.sh"

try="$NF_HELPERS/trysys"
nf_tmpdir d
cd "$d"

expect_all() { # expect_all "name errno" ...  (one run, every line checked)
    local names=() want=""
    for pair in "$@"; do
        names+=("${pair%% *}")
        want="$want$pair"$'\n'
    done
    nsf -- "$try" "${names[@]}"
    is "$OUT"$'\n' "$want" "$1 ... ${!#}: exact results"
}

expect_all "unix EPERM" "unix-highbits EPERM" "vsock EPERM" "io_uring_setup EPERM" \
    "io_uring_enter EPERM" "io_uring_register EPERM" "inet ok" "socketpair ok" \
    "socketpair-dgram EPERM" "socketpair-raw EPERM" "socketpair-dgram-highbits EPERM"

# A datagram socketpair is connected to nothing for good: sendto() names
# any unix socket on the host's file system, read-only mount or not. A
# host-side datagram listener, reached from outside (the control), not
# from inside.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[1] + ".up", "w").close()
while True:
    with open(sys.argv[2], "ab") as f:
        f.write(s.recv(64) + b"\n")
' "$d/host.sock" "$d/got" &
listener=$!
for _ in $(seq 100); do [ -e "$d/host.sock.up" ] && break; sleep 0.05; done
"$try" "dgram-send=$d/host.sock" >/dev/null
for _ in $(seq 100); do [ -s "$d/got" ] && break; sleep 0.05; done
is "$(cat "$d/got" 2>/dev/null)" "escaped" "outside, a datagram socketpair's sendto reaches a host unix socket (the control)"
nsf -- "$try" "dgram-send=$d/host.sock"
is "$OUT" "dgram-send EPERM" "inside, the command ran and could not make the datagram pair"
sleep 0.2
is "$(cat "$d/got" 2>/dev/null)" "escaped" "the host socket received nothing from inside"
kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null
rm -f "$d/host.sock" "$d/host.sock.up" "$d/got"
expect_all "unshare-user EPERM" "unshare-mount EPERM" "clone-newuser EPERM" "clone3 ENOSYS" \
    "mount EPERM" "umount-proc EPERM" "setns EPERM" "pivot_root EPERM" "open_tree EPERM" \
    "move_mount EPERM" "fsopen EPERM" "fsconfig EPERM" "fsmount EPERM" "fspick EPERM" \
    "mount_setattr EPERM" "open_tree_attr EPERM" "fork ok" "vfork ok" "thread ok"
expect_all "tiocsti EPERM" "tiocsti-highbits EPERM" "tioclinux EPERM"
# fscrypt's keys: added, one would show names the scan before the run could
# not read; removed, hide what the command made from the look after it.
# Outside, the file system answers (no such key, or no encryption here):
# the filter is what says EPERM. (Only the removal is tried outside: it
# changes nothing.)
like "$("$try" fscrypt-remove-key)" "^fscrypt-remove-key (ENOKEY|EOPNOTSUPP|ENOTTY)$" "outside, an fscrypt key ioctl reaches the file system (the control)"
expect_all "fscrypt-add-key EPERM" "fscrypt-remove-key EPERM" "fscrypt-set-policy EPERM"
if in_landlock; then
    # No PID namespace: PID 1 is the host's init, outside the sandbox.
    # Landlock refuses to trace it, its scoping (ABI 6) every signal to it,
    # signal 0 included; the supervisor refuses the write-open of its memory.
    expect_all "ptrace-init EPERM" "procmem-init EROFS"
    nsf -- "$try" kill-init stop-init
    like "$OUT" '^kill-init EPERM$' "SIGKILL from the command to the host's PID 1 fails with EPERM"
    like "$OUT" '^stop-init state [^Tt]$' "SIGSTOP from the command leaves the host's PID 1 running"
else
    expect_all "ptrace-init EPERM" "procmem-init EACCES"
    nsf -- "$try" kill-init stop-init
    is "$OUT" "kill-init ok
stop-init state S" "SIGKILL and SIGSTOP from the command leave init running"
fi

nsf -- "$try" inet x32
is "$RC" 159 "an x32 syscall kills the process (SIGSYS, 128+31)"
is "$OUT" "inet ok" "the command ran before its x32 call"

nsf --allow-all-unix-sockets -- "$try" unix unshare-user
is "$OUT" "unix ok
unshare-user EPERM" "--allow-all-unix-sockets drops only the unix-socket filter"
nsf -v --allow-all-unix-sockets -- true
like "$ERR" 'allow-all-unix-sockets: no unix-socket' "and says so under -v"

outer=$(sed -n 's/^Seccomp_filters:\t//p' /proc/self/status)
nsf -- sed -n 's/^Seccomp_filters:\t//p' /proc/self/status
is "$OUT" "$((outer + 1))" "the command runs under one program of nsfence's, the observer included"
nsf --no-monitor -- sed -n 's/^Seccomp_filters:\t//p' /proc/self/status
is "$OUT" "$((outer + 1))" "and one without the observer"

nsf explain -- true
if in_landlock; then
    like "$OUT" 'seccomp filter 1: nsfence.s rules and the Landlock mode.s supervisor' \
        "explain prints the rules with the supervisor, one filter"
    unlike "$OUT" 'seccomp filter 2' "and no program without the supervisor: Landlock mode never runs without it"
else
    like "$OUT" 'seccomp filter 1: nsfence.s rules and the write observer' "explain prints the rules with the observer, one filter"
    like "$OUT" 'seccomp filter 2: nsfence.s rules \(loaded only where filter 1 cannot be\)' "and the rules alone, for where the observer cannot load"
fi
like "$OUT" 'if \(\$syscall == 467\)' "open_tree_attr (467) is in the program though libseccomp 2.5.4 does not name it"
like "$OUT" 'action KILL_PROCESS' "a foreign architecture kills the process"
pfc=$(printf '%s\n' "$OUT" | sed -n '/^seccomp filters/,/^seccomp programs as loaded/p' | sed '1d;$d')
golden="$NF_TESTS/golden/filters-$(uname -m).pfc"
if [ -f "$golden" ]; then
    namespace_only "the golden PFC is namespace mode's program"
    is "$pfc" "$(cat "$golden")" "the filters are exactly the golden PFC ($(basename "$golden"))"
else
    fail "no golden PFC for $(uname -m)"
fi

# --- TIOCSTI on a real terminal --------------------------------------------------
# A command on the caller's pty pushes "echo INJECTED" at the terminal's input;
# whatever reads the terminal next (here head, after nsfence exits) must see
# nothing. The same push from outside the sandbox shows the check can fail.
if command -v script >/dev/null && [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)" = 1 ]; then
    reader='timeout 1 head -c 13 < /dev/tty | od -An -c | tr -d " \n"'
    outside=$(script -qec "$try tiocsti-inject >/dev/null 2>&1; $reader" /dev/null 2>/dev/null)
    like "$outside" 'INJECTED' "control: outside the sandbox, TIOCSTI reaches the terminal's reader"
    inside=$(script -qec "$NSFENCE -- $try tiocsti-inject; $reader" /dev/null 2>/dev/null)
    like "$inside" 'tiocsti-inject EPERM' "inside, TIOCSTI fails with EPERM"
    unlike "$inside" 'INJECTED' "and nothing reaches the terminal's reader"
    inside=$(script -qec "$NSFENCE -- sh -c '[ -t 0 ] && : >/dev/tty && echo has-tty'" /dev/null 2>/dev/null)
    like "$inside" 'has-tty' "the command keeps its terminal"
else
    fail "TIOCSTI test needs script(1) and dev.tty.legacy_tiocsti=1"
fi
nsf --new-session -- sh -c 'ps -o sid= -p $$ | tr -d " "; echo $$'
is "$(printf '%s' "$OUT" | sort -u | wc -l)" 1 "--new-session makes the command its own session leader"

# --- the write observer ------------------------------------------------------------
mkdir -p outside-root
nsf -- sh -c 'echo ran; echo x > /etc/nsfence-observer-test'
is "$OUT" "ran" "the command ran (observer)"
like "$ERR" '^sh: 1: cannot create /etc/nsfence-observer-test: Read-only file system

<sandbox_violations>
deny openat /etc/nsfence-observer-test
</sandbox_violations>$' "a write outside the write roots gives exactly one deny openat line"
nsf -- sh -c 'echo x > .bashrc'
is "$(printf '%s\n' "$ERR" | grep -c '^deny ')" 1 "a write to .bashrc gives one line"
like "$ERR" "deny openat $d/.bashrc" "naming the protected file"
tmpd=/tmp
in_landlock && tmpd='$TMPDIR' # Landlock mode's /tmp is the host's, not writable
nsf -- sh -c 'echo ok > allowed.txt; mkdir adir; mv allowed.txt adir/; rm -r adir; echo y > /dev/null; echo z > '"$tmpd"'/t; cat /etc/passwd > /dev/null; ls / >/dev/null'
is "$ERR" "" "allowed writes and reads produce no report"
nsf -- sh -c 'mv /etc/hostname /etc/hostname.x 2>/dev/null; true'
like "$ERR" 'deny (rename|renameat|renameat2) /etc/hostname
deny (rename|renameat|renameat2) /etc/hostname.x' "a rename reports both paths"
nsf --no-monitor -- sh -c 'echo x > /etc/nsfence-observer-test'
namespace_only "--no-monitor drops the write observer (Landlock mode's supervisor performs and reports every write)"
unlike "$ERR" 'sandbox_violations' "--no-monitor reports nothing"
nsf --violations "$d/v.jsonl" --allow-domain allowed.invalid -- sh -c 'echo x > /etc/a; touch /etc/b; curl -s -o /dev/null http://denied.invalid/ || true'
ok $(python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
kinds = sorted((r["kind"], r.get("syscall") or r.get("host"), r.get("path")) for r in rows)
assert all("time" in r and "reason" in r and "pid" in r for r in rows), rows
assert ("file", "openat", "/etc/a") in kinds and ("network", "denied.invalid", None) in kinds, kinds
' "$d/v.jsonl" && echo 0 || echo 1) "--violations writes JSON lines with time, kind, syscall or host, path, reason, pid"
printf '[monitor]\nignore = /etc/ignored\n' > "$d/ign.ini"
nsf --config "$d/ign.ini" -- sh -c 'echo x > /etc/ignored-file; echo x > /etc/reported-file'
unlike "$ERR" 'deny openat /etc/ignored-file' "[monitor] ignore suppresses matching lines"
like "$ERR" 'deny openat /etc/reported-file' "and keeps the others"
nsf -- sh -c 'for i in $(seq 1100); do echo > /etc/v$i; done 2>/dev/null; true'
is "$(printf '%s\n' "$ERR" | grep -c '^deny ')" 1000 "at most 1,000 violations are listed"
like "$ERR" '\.\.\. 100 more not shown' "and the rest are counted"
"$NF_HELPERS/withlistener" "$NSFENCE" -- sh -c 'echo ran; "$0" unix' "$try" >"$d/out" 2>"$d/err"
rc=$?
if in_landlock; then
    # The supervisor is what refuses writes and connects: without it there
    # is no Landlock mode, never one that runs weaker.
    is "$rc:$(cat "$d/out")" "125:" "under another listener Landlock mode refuses to run (125), the command never starts"
    like "$(cat "$d/err")" "^nsfence: seccomp: load .*supervisor.*: Device or resource busy$" "saying the supervisor cannot load and why"
else
    is "$(cat "$d/out")" "ran
unix EPERM" "under another listener the run goes on, the enforcing filters in force"
    is "$(grep -c . "$d/err")" 1 "with one line of warning"
    like "$(cat "$d/err")" '^nsfence: warning: write observer unavailable \(Device or resource busy\); running without it$' \
        "saying the observer is unavailable and why"
fi
nsf -- sh -c 'for i in 1 2 3; do echo > /etc/same; done 2>/dev/null; true'
is "$(printf '%s\n' "$ERR" | grep -c '^deny ')" 1 "repeated violations are listed once"

done_testing
