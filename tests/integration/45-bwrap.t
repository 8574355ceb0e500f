#!/bin/bash
# The bubblewrap 0.11.1 front end: nsfence invoked as `bwrap` (a symlink)
# or as `nsfence bwrap`. Every option of `bwrap --help` once with an effect
# the command can see, argv order, the front end's error messages (exact
# text, "bwrap: ", exit 1), exit statuses, and escapes through symlinks a
# caller's bound directory holds. Expectations are bubblewrap 0.11.1's own
# behaviour, in both legs (root keeps its namespaces and capabilities unless
# asked; any other uid always gets a user namespace).
. "$(dirname "$0")/lib.sh"

nf_tmpdir top
cd "$top"
mkdir bin
ln -s "$NSFENCE" bin/bwrap
BW=$top/bin/bwrap
TRY=$NF_HELPERS/trysys
PY=/usr/bin/python3
uid=$(id -u) gid=$(id -g)

# Run the bwrap symlink; stdout in $OUT, stderr in $ERR, status in $RC.
# Redirections on the call (3<file) reach the sandbox.
bw() {
    timeout -k 5 60 "$BW" "$@" >"$top/.o" 2>"$top/.e" </dev/null
    RC=$?
    OUT=$(cat "$top/.o")
    ERR=$(cat "$top/.e")
    rm -f "$top/.o" "$top/.e"
}
wait_for() { # wait_for FILE: up to 10 s
    local _
    for _ in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done
    return 1
}
# An error of the front end: nothing ran, one line, exit 1.
refused() { # refused MESSAGE DESCRIPTION -- ARGS...
    local msg=$1 desc=$2
    shift 3
    bw "$@"
    is "$RC:$ERR" "1:bwrap: $msg" "$desc"
}

# --- --version, --help, no arguments ------------------------------------------
bw --version
is "$RC:$OUT" "0:bubblewrap 0.11.1" "--version prints bubblewrap's version and exits 0"
o=$(timeout 60 "$NSFENCE" bwrap --version)
is "$?:$o" "0:bubblewrap 0.11.1" "'nsfence bwrap --version' is the same front end"
bw --help
is "$RC" 0 "--help exits 0"
is "$(printf '%s\n' "$OUT" | head -1)" "usage: $BW [OPTIONS...] [--] COMMAND [ARGS...]" \
    "--help prints usage naming argv0 on stdout"
missing=""
for opt in --help --version --args --argv0 --level-prefix --unshare-all --share-net \
    --unshare-user --unshare-user-try --unshare-ipc --unshare-pid --unshare-net --unshare-uts \
    --unshare-cgroup --unshare-cgroup-try --userns --userns2 --disable-userns \
    --assert-userns-disabled --pidns --uid --gid --hostname --chdir --clearenv --setenv \
    --unsetenv --lock-file --sync-fd --bind --bind-try --dev-bind --dev-bind-try --ro-bind \
    --ro-bind-try --bind-fd --ro-bind-fd --remount-ro --overlay-src --overlay --tmp-overlay \
    --ro-overlay --exec-label --file-label --proc --dev --tmpfs --mqueue --dir --file \
    --bind-data --ro-bind-data --symlink --seccomp --add-seccomp-fd --block-fd \
    --userns-block-fd --info-fd --json-status-fd --new-session --die-with-parent --as-pid-1 \
    --cap-add --cap-drop --perms --size --chmod; do
    printf '%s\n' "$OUT" | grep -q -- "^    $opt " || missing="$missing $opt"
done
is "$missing" "" "--help lists every option of bubblewrap 0.11.1"
bw
is "$RC:$OUT" "1:" "no arguments: exit 1, nothing on stdout"
like "$ERR" "^usage: $BW " "no arguments: usage on stderr"

# --- exit status ----------------------------------------------------------------
bw --ro-bind / / sh -c 'echo ran; exit 42'
is "$RC:$OUT" "42:ran" "the command's exit status is bwrap's"
bw --ro-bind / / sh -c 'echo ran; kill -TERM $$'
is "$RC:$OUT" "143:ran" "a command killed by SIGTERM gives 128+15"
bw --ro-bind / / --unshare-pid sh -c 'echo ran; kill -KILL $$'
is "$RC:$OUT" "137:ran" "with a PID namespace, SIGKILL of the command gives 128+9"
bw --ro-bind / / --unshare-pid sh -c 'exit 42'
is "$RC" 42 "with a PID namespace, the exit status passes through the reaper"
bw --ro-bind / / /nonexistent/prog
is "$RC:$ERR" "1:bwrap: execvp /nonexistent/prog: No such file or directory" \
    "a command that cannot be executed: bwrap's execvp message, exit 1"

# --- namespaces -------------------------------------------------------------------
kinds="cgroup ipc net pid user uts"
host_ns=$(for n in $kinds; do echo "$n=$(readlink /proc/self/ns/$n)"; done)
U=""
is_root || U=user
own_ns() { # own_ns ARGS...: the namespaces a run has of its own, sorted
    bw --ro-bind / / "$@" sh -c "for n in $kinds; do echo \"\$n=\$(readlink /proc/self/ns/\$n)\"; done"
    comm -13 <(printf '%s\n' "$host_ns" | sort) <(printf '%s\n' "$OUT" | sort) | cut -d= -f1 | tr '\n' ' '
}
expect_ns() { printf '%s\n' "$@" $U | grep . | sort -u | tr '\n' ' '; }
is "$(own_ns)" "$(expect_ns)" "no --unshare-*: only what bubblewrap implies (a userns unless root)"
for n in user ipc pid net uts cgroup; do
    is "$(own_ns --unshare-$n)" "$(expect_ns $n)" "--unshare-$n gives a $n namespace of its own, nothing else"
done
is "$(own_ns --unshare-user-try)" "$(expect_ns user)" "--unshare-user-try gives a user namespace where the host allows"
is "$(own_ns --unshare-cgroup-try)" "$(expect_ns cgroup)" "--unshare-cgroup-try gives a cgroup namespace"
is "$(own_ns --unshare-all)" "$(expect_ns $kinds)" "--unshare-all unshares every namespace"
is "$(own_ns --unshare-all --share-net)" "$(expect_ns cgroup ipc pid user uts)" "--share-net keeps the host's network namespace"

bw --ro-bind / / --unshare-net sh -c 'grep -c : /proc/self/net/dev; '"$PY"' -c "
import socket
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); print(\"lo up\")"'
is "$OUT" "1
lo up" "--unshare-net: only lo, up, with 127.0.0.1"

# --- uid, gid, hostname, chdir -------------------------------------------------
bw --ro-bind / / --unshare-user --uid 1234 --gid 5678 sh -c 'echo $(id -u):$(id -g)'
is "$OUT" "1234:5678" "--uid/--gid set the ids inside the user namespace"
refused "Specifying --hostname requires --unshare-uts" "--hostname without --unshare-uts is refused" \
    -- --ro-bind / / --hostname box true
bw --ro-bind / / --unshare-uts --hostname nf-box cat /proc/sys/kernel/hostname
is "$OUT" "nf-box" "--hostname sets the hostname in the UTS namespace"
if is_root; then
    refused "Specifying --uid requires --unshare-user or --userns" "--uid without a user namespace is refused (root)" \
        -- --ro-bind / / --uid 5 true
fi
bw --ro-bind / / --chdir /usr sh -c 'echo "$(pwd) $PWD"'
is "$OUT" "/usr /usr" "--chdir sets the working directory and PWD"
bw --ro-bind / / sh -c 'echo "$(pwd) $PWD"'
is "$OUT" "$top $top" "without --chdir the caller's directory is kept, and PWD set"
bw --tmpfs / --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin --symlink usr/lib /lib \
    --symlink usr/lib64 /lib64 --setenv HOME /usr/share sh -c 'echo "$(pwd) $PWD"'
is "$OUT" "/usr/share /usr/share" "a caller's directory missing inside falls back to \$HOME"

# --- environment, in argv order ----------------------------------------------
export NF_BW_A=host-a NF_BW_B=host-b
bw --ro-bind / / --setenv NF_BW_C c1 --unsetenv NF_BW_A --setenv NF_BW_C c2 --setenv NF_BW_A a2 \
    sh -c 'echo "$NF_BW_A $NF_BW_B $NF_BW_C"'
is "$OUT" "a2 host-b c2" "--setenv/--unsetenv apply in argv order, the environment passes through"
bw --ro-bind / / --setenv NF_BW_C c --clearenv --setenv NF_BW_D d /usr/bin/env
is "$(printf '%s\n' "$OUT" | sort | tr '\n' ' ')" "NF_BW_D=d PWD=$top " \
    "--clearenv drops what came before it, keeps what follows; PWD is set after"
bw --ro-bind / / --unsetenv NF_BW_B sh -c 'echo "${NF_BW_B-unset}"'
is "$OUT" "unset" "--unsetenv removes a host variable"
unset NF_BW_A NF_BW_B

# --- filesystem operations ------------------------------------------------------
mkdir -p src/sub
echo hello > src/sub/f
bw --ro-bind / / --bind "$top/src" /mnt sh -c 'cat /mnt/sub/f; echo w > /mnt/written'
is "$RC:$OUT:$(cat src/written 2>/dev/null)" "0:hello:w" "--bind is writable and its writes reach the host"
bw --ro-bind / / --bind "$top/src" /mnt sh -c 'grep " /mnt " /proc/self/mountinfo'
like "$OUT" ' /mnt rw,nosuid,nodev' "--bind adds nosuid,nodev"
rm -f src/written
bw --ro-bind / / --ro-bind "$top/src" /mnt sh -c 'cat /mnt/sub/f; echo ran; echo w > /mnt/w'
is "$OUT" "hello
ran" "--ro-bind shows the source (the command ran)"
like "$ERR" 'Read-only file system' "--ro-bind is read-only"
ok $([ ! -e src/w ] && echo 0 || echo 1) "nothing was written through --ro-bind"
bw --ro-bind / / --tmpfs /mnt --bind-try "$top/nonexistent" /mnt/a --ro-bind-try "$top/nonexistent" /mnt/b \
    --dev-bind-try "$top/nonexistent" /mnt/c --ro-bind-try "$top/src" /mnt/d sh -c 'echo ran; cat /mnt/d/sub/f'
is "$RC:$OUT" "0:ran
hello" "-try binds skip a missing source and bind an existing one"
refused "Can't find source path $top/nonexistent: No such file or directory" \
    "a missing --bind source is refused" -- --ro-bind / / --bind "$top/nonexistent" /mnt true
refused "Can't find source path $top/nonexistent: No such file or directory" \
    "a missing --dev-bind source is refused" -- --ro-bind / / --dev-bind "$top/nonexistent" /mnt true
bw --ro-bind / / --tmpfs /mnt --dev-bind /dev/null /mnt/null --bind /dev/null /mnt/nodev \
    sh -c 'echo x > /mnt/null && echo dev-ok; (echo x > /mnt/nodev) 2>&1 | grep -q "Permission denied" && echo nodev-refused'
is "$OUT" "dev-ok
nodev-refused" "--dev-bind keeps devices usable; --bind's nodev refuses them"

bw --ro-bind / / --tmpfs /mnt --bind-fd 3 /mnt/rw --ro-bind-fd 4 /mnt/ro \
    sh -c 'cat /mnt/rw/sub/f /mnt/ro/sub/f; echo a > /mnt/rw/via-fd; echo ran; echo b > /mnt/ro/via-ro-fd' \
    3<"$top/src" 4<"$top/src"
is "$OUT" "hello
hello
ran" "--bind-fd and --ro-bind-fd bind the directory an fd holds"
ok $([ "$(cat src/via-fd 2>/dev/null)" = a ] && [ ! -e src/via-ro-fd ] && echo 0 || echo 1) \
    "--bind-fd is writable, --ro-bind-fd read-only"
rm -f src/via-fd
refused "Invalid fd: abc" "a non-numeric fd is refused" -- --ro-bind / / --bind-fd abc /mnt true
refused "Invalid fd: -1" "a negative fd is refused" -- --ro-bind / / --info-fd -1 true
refused "Invalid fd: 3x" "an fd with trailing garbage is refused" -- --ro-bind / / --sync-fd 3x true

bw --ro-bind / / --bind "$top/src" /mnt --remount-ro /mnt sh -c 'echo ran; echo w > /mnt/w'
is "$OUT" "ran" "the command ran (--remount-ro)"
ok $([ ! -e src/w ] && echo 0 || echo 1) "--remount-ro makes an earlier --bind read-only"

bw --ro-bind / / --unshare-pid --proc /proc sh -c 'ls /proc | grep -cE "^[0-9]+$"; grep " /proc " /proc/self/mountinfo'
like "$OUT" '^[2-4]
(.*
)*[^
]* /proc [a-z,]*nosuid,nodev,noexec[^
]* - proc ' "--proc mounts a procfs of the new PID namespace (few processes: init and the pipeline)"

# Without a PID namespace of its own, --proc binds the host's /proc, with
# its processes (and never anything nsfence mounted to build the sandbox).
bw --ro-bind / / --proc /proc --proc /mnt sh -c 'cat /proc/$$/comm /mnt/$$/comm; ls -A /proc | grep -cvE "^[0-9]+$" | grep -qv "^[0-2]$" && echo many; test -e /proc/root || test -e /proc/empty || echo clean'
is "$OUT" "sh
sh
many
clean" "--proc without --unshare-pid: the host's /proc, twice over, with nothing of nsfence's"

bw --ro-bind / / --dev /dev sh -c 'ls -A /dev | sort | tr "\n" " "; readlink /dev/stdout /dev/fd /dev/ptmx | tr "\n" " "; echo x > /dev/null && head -c 3 /dev/zero | wc -c'
like "$OUT" '^core fd full null ptmx pts random shm stderr stdin stdout (tty )?urandom zero /proc/self/fd/1 /proc/self/fd pts/ptmx 3$' \
    "--dev: bubblewrap's device set, links, pts and shm; the devices work"

bw --ro-bind / / --tmpfs /mnt --perms 0751 --tmpfs /mnt/t --size 8192 --tmpfs /mnt/s --tmpfs /mnt/d \
    sh -c 'stat -c "%a %n" /mnt/t /mnt/s /mnt/d; grep " /mnt/s " /proc/self/mountinfo'
like "$OUT" '^751 /mnt/t
755 /mnt/s
755 /mnt/d
.* /mnt/s rw,nosuid,nodev.*[ ,]size=8k' "--tmpfs: --perms and --size apply, to the next --tmpfs only"
bw --ro-bind / / --size 4096 --tmpfs /mnt sh -c '(yes | head -c 16384 > /mnt/big) 2>&1; echo ran'
like "$OUT" 'No space left on device' "--size limits the tmpfs"
refused "--size takes a non-zero number of bytes" "--size 0 is refused" -- --size 0 --tmpfs /mnt true
refused "--size takes a non-zero number of bytes" "--size with a non-digit is refused" -- --size 12k --tmpfs /mnt true
refused "--size must be followed by --tmpfs" "--size before something else is refused" -- --size 4096 --dir /mnt true
refused "--size given twice for the same action" "--size twice is refused" -- --size 4096 --size 4096 --tmpfs /mnt true

bw --ro-bind / / --unshare-ipc --mqueue /mnt sh -c 'grep " /mnt " /proc/self/mountinfo'
like "$OUT" ' /mnt [a-z,]* - mqueue ' "--mqueue mounts an mqueue filesystem"

printf 'data\n' > data
printf '#!/bin/sh\necho script-ran\n' > script
bw --ro-bind / / --tmpfs /mnt --dir /mnt/d --perms 0700 --dir /mnt/d7 --file 3 /mnt/f \
    --perms 0640 --file 4 /mnt/f6 --bind-data 5 /mnt/bd --ro-bind-data 6 /mnt/sub/rbd --dir /mnt/after \
    sh -c 'stat -c "%a %n" /mnt/d /mnt/d7 /mnt/f /mnt/f6 /mnt/bd /mnt/sub /mnt/sub/rbd /mnt/after; cat /mnt/f /mnt/f6 /mnt/bd /mnt/sub/rbd; echo w > /mnt/bd && echo bd-writable; echo w > /mnt/sub/rbd || echo rbd-ro' \
    3<data 4<data 5<data 6<data
is "$OUT" "755 /mnt/d
700 /mnt/d7
666 /mnt/f
640 /mnt/f6
600 /mnt/bd
700 /mnt/sub
600 /mnt/sub/rbd
755 /mnt/after
data
data
data
data
bd-writable
rbd-ro" "--dir/--file/--bind-data/--ro-bind-data: contents and bubblewrap's modes; --perms for the next op only"
bw --ro-bind / / --tmpfs /mnt --perms 0755 --ro-bind-data 3 /mnt/s1 --perms 0755 --file 4 /mnt/s2 \
    sh -c '/mnt/s2; /mnt/s1' 3<script 4<script
is "$OUT" "script-ran
script-ran" "a --ro-bind-data file with --perms 0755 can be executed, as a --file can"
refused "--perms must be followed by an option that creates a file" "--perms before a bind is refused" \
    -- --perms 0644 --bind / / true
refused "--perms takes an octal argument <= 07777" "--perms 999 is refused" -- --perms 999 --dir /x true
refused "--perms given twice for the same action" "--perms twice is refused" -- --perms 0700 --perms 0700 --dir /x true

bw --ro-bind / / --tmpfs /mnt --symlink target /mnt/l --symlink target /mnt/l readlink /mnt/l
is "$RC:$OUT" "0:target" "--symlink makes a link, and the same link twice is fine"
refused "Can't make symlink at /mnt/l: existing destination is target" "a conflicting --symlink is refused" \
    -- --ro-bind / / --tmpfs /mnt --symlink target /mnt/l --symlink other /mnt/l true
bw --ro-bind / / --bind "$top/src" /mnt --symlink /dev/null /mnt/hostlink true
is "$RC:$(readlink src/hostlink)" "0:/dev/null" "--symlink in a bound directory lands on the host"
bw --ro-bind / / --bind "$top/src" /mnt --symlink /dev/null /mnt/hostlink true
is "$RC" 0 "--symlink is idempotent across runs"
refused "Can't make symlink at /mnt/hostlink: existing destination is /dev/null" \
    "a --symlink conflicting with a host link is refused" -- --ro-bind / / --bind "$top/src" /mnt --symlink /dev/full /mnt/hostlink true
rm -f src/hostlink

bw --ro-bind / / --tmpfs /mnt --dir /mnt/d --chmod 0701 /mnt/d --file 3 /mnt/f --chmod 4604 /mnt/f \
    stat -c "%a %n" /mnt/d /mnt/f 3<data
is "$OUT" "701 /mnt/d
4604 /mnt/f" "--chmod changes the mode of an existing path"
refused "Can't chmod 0700 /mnt/none: No such file or directory" "--chmod of a missing path is refused" \
    -- --ro-bind / / --tmpfs /mnt --chmod 0700 /mnt/none true
refused "--chmod takes an octal argument <= 07777" "--chmod with a bad mode is refused" \
    -- --ro-bind / / --chmod 8 /mnt true

# Overlays
mkdir -p ov/lower1 ov/lower2 ov/upper ov/work
echo l1 > ov/lower1/a
echo l2 > ov/lower2/a
echo only2 > ov/lower2/b
bw --ro-bind / / --overlay-src "$top/ov/lower2" --overlay-src "$top/ov/lower1" \
    --overlay "$top/ov/upper" "$top/ov/work" /mnt sh -c 'cat /mnt/a /mnt/b; echo new > /mnt/c'
is "$RC:$OUT" "0:l1
only2" "--overlay: the later --overlay-src is on top"
is "$(cat ov/upper/c 2>/dev/null):$(ls ov/lower1 ov/lower2 | tr '\n' ' ')" \
    "new:ov/lower1: a  ov/lower2: a b " "--overlay writes go to the upper directory, never a lower one"
bw --ro-bind / / --overlay-src "$top/ov/lower1" --tmp-overlay /mnt sh -c 'echo t > /mnt/t && cat /mnt/t /mnt/a'
is "$RC:$OUT:$(ls ov/lower1 | tr '\n' ' ')" "0:t
l1:a " "--tmp-overlay is writable, its writes vanish"
bw --ro-bind / / --overlay-src "$top/ov/lower1" --overlay-src "$top/ov/lower2" --ro-overlay /mnt \
    sh -c 'cat /mnt/a /mnt/b; echo ran; echo x > /mnt/x'
is "$OUT" "l2
only2
ran" "--ro-overlay merges its sources"
like "$ERR" 'Read-only file system' "--ro-overlay is read-only"
refused "--ro-overlay requires at least two --overlay-src" "--ro-overlay with one source is refused" \
    -- --ro-bind / / --overlay-src "$top/ov/lower1" --ro-overlay /mnt true
refused "--overlay-src must be followed by another --overlay-src or one of --overlay, --tmp-overlay, or --ro-overlay" \
    "a dangling --overlay-src is refused" -- --ro-bind / / --overlay-src "$top/ov/lower1" true

# --- argv order: a later operation over an earlier one ----------------------------
bw --ro-bind / / --bind "$top/src" /mnt --tmpfs /mnt sh -c 'ls -A /mnt | wc -l'
is "$OUT" "0" "a later --tmpfs hides an earlier --bind at the same place"
bw --ro-bind / / --tmpfs /mnt --bind "$top/src" /mnt cat /mnt/sub/f
is "$OUT" "hello" "a later --bind covers an earlier --tmpfs"
bw --ro-bind / / --tmpfs /mnt --dir /mnt/dir --symlink dir /mnt/link --bind /etc /mnt/link cat /mnt/dir/hostname
is "$OUT" "$(cat /etc/hostname)" "a relative symlink inside the new root is followed by a later bind"

# --- seccomp ----------------------------------------------------------------------
mkbpf() { # mkbpf ERRNO FILE: a filter that fails socket() with ERRNO
    "$PY" - "$1" "$2" <<'PY'
import platform, struct, sys
err, out = int(sys.argv[1]), sys.argv[2]
arch, nr = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}[platform.machine()]
ins = lambda code, jt, jf, k: struct.pack("HBBI", code, jt, jf, k)
prog = (ins(0x20, 0, 0, 4) + ins(0x15, 0, 3, arch) + ins(0x20, 0, 0, 0) + ins(0x15, 0, 1, nr)
        + ins(0x06, 0, 0, 0x00050000 | err) + ins(0x06, 0, 0, 0x7FFF0000))
open(out, "wb").write(prog)
PY
}
mkbpf 1 eperm.bpf && mkbpf 111 econnrefused.bpf
printf 'abc' > bad.bpf
bw --ro-bind / / "$TRY" unix
is "$OUT" "unix ok" "control: socket() works without a filter"
bw --ro-bind / / --seccomp 3 "$TRY" unix 3<econnrefused.bpf
is "$OUT" "unix errno111" "--seccomp loads the program: socket() fails with ECONNREFUSED"
bw --ro-bind / / --add-seccomp-fd 3 --add-seccomp-fd 4 "$TRY" unix 3<eperm.bpf 4<econnrefused.bpf
is "$OUT" "unix errno111" "--add-seccomp-fd stacks programs; the last one given decides a tie"
bw --ro-bind / / --add-seccomp-fd 3 --add-seccomp-fd 4 "$TRY" unix 3<econnrefused.bpf 4<eperm.bpf
is "$OUT" "unix EPERM" "--add-seccomp-fd in the other order, the other answer"
refused "--seccomp cannot be combined with --add-seccomp-fd" "--add-seccomp-fd then --seccomp is refused" \
    -- --ro-bind / / --add-seccomp-fd 3 --seccomp 4 true 3<eperm.bpf 4<eperm.bpf
refused "--add-seccomp-fd cannot be combined with --seccomp" "--seccomp then --add-seccomp-fd is refused" \
    -- --ro-bind / / --seccomp 3 --add-seccomp-fd 4 true 3<eperm.bpf 4<eperm.bpf
refused "Invalid seccomp data, must be multiple of 8" "a seccomp program of 3 bytes is refused" \
    -- --ro-bind / / --add-seccomp-fd 3 true 3<bad.bpf
refused "Can't read seccomp data: Bad file descriptor" "a closed seccomp fd is refused" \
    -- --ro-bind / / --seccomp 9 true

# --- process options ---------------------------------------------------------------
bw --ro-bind / / --new-session sh -c 'echo "$(cut -d" " -f6 /proc/$$/stat) $$"'
set -- $OUT
is "$1" "$2" "--new-session: the command leads its own session"
bw --ro-bind / / sh -c 'echo "$(cut -d" " -f6 /proc/$$/stat) $$"'
set -- $OUT
ok $([ "$1" != "$2" ] && echo 0 || echo 1) "control: without --new-session it does not"
set --

bw --ro-bind / / --unshare-pid --as-pid-1 sh -c 'echo $$'
is "$OUT" "1" "--as-pid-1: the command is PID 1"
bw --ro-bind / / --unshare-pid sh -c 'echo $$'
is "$OUT" "2" "without --as-pid-1 the command is PID 2 under a reaper"
refused "Specifying --as-pid-1 requires --unshare-pid" "--as-pid-1 without --unshare-pid is refused" \
    -- --ro-bind / / --as-pid-1 true
refused "Specifying --as-pid-1 and --lock-file is not permitted" "--as-pid-1 with --lock-file is refused" \
    -- --ro-bind / / --unshare-pid --as-pid-1 --lock-file /x true

bw --ro-bind / / --argv0 nf-name sh -c 'tr "\0" " " < /proc/$$/cmdline'
is "$OUT" "nf-name -c tr \"\\0\" \" \" < /proc/\$\$/cmdline " "--argv0 sets the command's argv[0]"
refused "--argv0 used multiple times" "--argv0 twice is refused" -- --argv0 a --argv0 b true

capeff() { grep CapEff /proc/self/status | cut -f2; }
host_caps=$(capeff)
bw --ro-bind / / grep CapEff /proc/self/status
if is_root; then
    is "$(printf '%s' "$OUT" | cut -f2)" "$host_caps" "as root, bubblewrap keeps root's capabilities"
    bw --ro-bind / / --cap-drop CAP_NET_RAW grep CapEff /proc/self/status
    is "$(printf '%s' "$OUT" | cut -f2)" "$(printf '%016x' $((0x$host_caps & ~(1 << 13))))" "--cap-drop CAP_NET_RAW clears that one bit"
    bw --ro-bind / / --cap-drop ALL --cap-add cap_chown grep CapEff /proc/self/status
    is "$(printf '%s' "$OUT" | cut -f2)" "0000000000000001" "--cap-drop ALL then --cap-add cap_chown, in order"
else
    is "$(printf '%s' "$OUT" | cut -f2)" "0000000000000000" "as a user, the command has no capabilities"
fi
bw --ro-bind / / --unshare-user --cap-add CAP_NET_ADMIN grep CapEff /proc/self/status
is "$(printf '%s' "$OUT" | cut -f2)" "$(is_root && echo "$host_caps" || echo 0000000000001000)" \
    "--cap-add CAP_NET_ADMIN in a user namespace"
refused "unknown cap: CAP_FOO" "an unknown capability is refused" -- --cap-add CAP_FOO true

# A root whose bounding set lacks CAP_SYS_ADMIN (a container's, a unit's
# CapabilityBoundingSet): a user namespace gives every capability of its
# own, trimmed to the caller's as bubblewrap trims them, so a read-only
# bind stays read-only.
if is_root; then
    mkdir -p capdir && echo original > capdir/f
    limited=$(setpriv --bounding-set -sys_admin sh -c 'grep CapBnd /proc/self/status | cut -f2')
    timeout -k 5 60 setpriv --bounding-set -sys_admin "$BW" --ro-bind / / --unshare-user \
        --ro-bind "$top/capdir" /mnt sh -c 'grep -E "CapEff|CapBnd" /proc/self/status | cut -f2 | tr "\n" " ";
        mount -o remount,bind,rw /mnt 2>/dev/null && echo remounted; echo hacked > /mnt/f 2>/dev/null && echo wrote' \
        >"$top/.o" 2>/dev/null </dev/null
    is "$(cat "$top/.o")" "$limited $limited " \
        "--unshare-user as a root without CAP_SYS_ADMIN: the command's capabilities are the caller's, no remount, no write"
    is "$(cat capdir/f)" "original" "the file under the read-only bind is unchanged"
    rm -rf capdir "$top/.o"
else
    pass "(a root's own capabilities: nothing to check as a user)"
    pass "(a root's own capabilities: nothing to check as a user)"
fi

bw --level-prefix --ro-bind /nonexistent /x true
is "$RC:$ERR" "1:<3>bwrap: Can't find source path /nonexistent: No such file or directory" "--level-prefix: <3> before bwrap:"

printf -- '--ro-bind\0/\0/\0--setenv\0NF_BW_X\0from args, with spaces\0--setenv\0NF_BW_Y\0\0' > args
bw --args 3 sh -c 'echo "[$NF_BW_X][${NF_BW_Y-unset}]"' 3<args
is "$RC:$OUT" "0:[from args, with spaces][]" "--args reads NUL-separated arguments, an empty one included"
printf -- '--args\0004\0' > nested
refused "--args not supported in arguments file" "--args inside an arguments file is refused" \
    -- --args 3 true 3<nested

# A uid other than 0 inside keeps no capability unasked, as in bubblewrap
# (root's set would otherwise ride the ambient set across execve); and with
# --dev, the command's own capabilities live in a user namespace nested in
# the sandbox's, so even CAP_SYS_ADMIN cannot remount a --ro-bind.
bw --ro-bind / / --unshare-user --uid 1000 --gid 1000 sh -c 'id -u; grep CapEff /proc/self/status | cut -f2'
is "$OUT" "1000
0000000000000000" "--uid 1000 without --cap-add: uid 1000 and no capabilities, as root too"
mkdir -p nbdir && echo original > nbdir/f
bw --ro-bind / / --unshare-user --dev /dev --cap-add CAP_SYS_ADMIN --ro-bind "$top/nbdir" /mnt \
    sh -c 'echo ran; mount -o remount,bind,rw /mnt 2>/dev/null && echo remounted; echo written > /mnt/f 2>/dev/null && echo wrote'
if is_root; then
    is "$OUT" "ran
remounted
wrote" "as root at uid 0 with --dev, bubblewrap's command may remount (no nested namespace): the control"
    echo original > nbdir/f
    bw --ro-bind / / --unshare-user --dev /dev --uid 1000 --cap-add CAP_SYS_ADMIN --ro-bind "$top/nbdir" /mnt \
        sh -c 'echo ran; mount -o remount,bind,rw /mnt 2>/dev/null && echo remounted; echo written > /mnt/f 2>/dev/null && echo wrote'
fi
is "$OUT" "ran" "--dev, a uid other than 0, --cap-add CAP_SYS_ADMIN: the command ran and could not remount the --ro-bind"
is "$(cat nbdir/f)" "original" "the file under it is unchanged"
rm -rf nbdir

# --- user namespaces: disable, assert, join ---------------------------------------
bw --ro-bind / / --unshare-user --disable-userns --assert-userns-disabled "$TRY" unshare-user
is "$RC:$OUT" "0:unshare-user errno28" "--disable-userns: no user namespace can be made inside (ENOSPC)"
bw --ro-bind / / --unshare-user "$TRY" unshare-user
is "$OUT" "unshare-user ok" "control: without it a nested user namespace can be made"
# Under an init of our own (--unshare-pid), whose memory the command shares
# until it execs and which is kept undumpable: as any user, and init still
# cannot be traced afterwards.
bw --ro-bind / / --unshare-user --unshare-pid --disable-userns "$TRY" unshare-user ptrace-init
is "$RC:$OUT" "0:unshare-user errno28
ptrace-init EPERM" "--disable-userns with --unshare-pid: no nested user namespace, init untraceable"
refused "creation of new user namespaces was not disabled as requested" \
    "--assert-userns-disabled fails where user namespaces work" -- --ro-bind / / --assert-userns-disabled true
refused "--disable-userns requires --unshare-user" "--disable-userns without --unshare-user is refused" \
    -- --ro-bind / / --disable-userns true

rm -f info1 go1
"$BW" --ro-bind / / --bind "$top" "$top" --unshare-user --unshare-pid --info-fd 3 \
    sh -c "while [ ! -e $top/go1 ]; do sleep 0.05; done" 3>info1 </dev/null &
first=$!
wait_for info1
sleep 0.2
cpid=$(sed -n 's/.*"child-pid": \([0-9]*\).*/\1/p' info1)
bw --ro-bind / / --userns 11 --pidns 12 sh -c 'readlink /proc/self/ns/user /proc/self/ns/pid' \
    11<"/proc/$cpid/ns/user" 12<"/proc/$cpid/ns/pid"
is "$OUT" "$(readlink /proc/$cpid/ns/user /proc/$cpid/ns/pid)" "--userns/--pidns join another sandbox's namespaces (its --info-fd pid)"
refused "--userns not compatible --unshare-user" "--userns with --unshare-user is refused" \
    -- --ro-bind / / --userns 11 --unshare-user true 11<"/proc/$cpid/ns/user"
touch go1
wait "$first"
is "$?" 0 "the first sandbox exits cleanly"

# --userns2: after the setup, the command moves into a user namespace made
# below the one it joined (here one a process in the first sandbox made).
secs="9$$.5"
"$BW" --ro-bind / / --unshare-user --unshare-pid --info-fd 3 unshare -U sleep "$secs" \
    3>info2 </dev/null &
second=$!
wait_for info2
for _ in $(seq 100); do npid=$(pgrep -f "^sleep $secs\$" | head -1); [ -n "$npid" ] && break; sleep 0.05; done
cpid=$(sed -n 's/.*"child-pid": \([0-9]*\).*/\1/p' info2)
if [ -n "$npid" ] && [ -n "$cpid" ]; then
    bw --ro-bind / / --userns 11 --userns2 13 readlink /proc/self/ns/user \
        11<"/proc/$cpid/ns/user" 13<"/proc/$npid/ns/user"
    is "$RC:$OUT" "0:$(readlink /proc/$npid/ns/user)" "--userns2: the command ends in the namespace given"
    unlike "$(readlink /proc/$cpid/ns/user)" "^$(readlink /proc/$npid/ns/user)\$" \
        "control: that namespace is not the one joined first"
else
    fail "--userns2: the nested user namespace was not found (npid='$npid' cpid='$cpid')"
fi
kill "$second" 2>/dev/null
pkill -f "^sleep $secs\$" 2>/dev/null
wait "$second" 2>/dev/null

refused "labeling not supported on this system" "--exec-label is refused without SELinux" -- --ro-bind / / --exec-label x true
refused "labeling not supported on this system" "--file-label is refused without SELinux" -- --ro-bind / / --file-label x true

# --- info-fd, json-status-fd ------------------------------------------------------
bw --ro-bind / / --unshare-pid --unshare-net --info-fd 3 --json-status-fd 4 \
    sh -c 'readlink /proc/self/ns/mnt /proc/self/ns/net /proc/self/ns/pid | tr -dc "0-9\n"; exit 3' 3>info 4>json
is "$RC" 3 "--info-fd/--json-status-fd: the exit status is the command's"
set -- $OUT
like "$(cat info)" "^\{
    \"child-pid\": [0-9]+,
    \"mnt-namespace\": $1,
    \"net-namespace\": $2,
    \"pid-namespace\": $3
\}\$" "--info-fd: bubblewrap's exact format, the namespaces the command is in"
like "$(cat json)" "^\{ \"child-pid\": [0-9]+, \"mnt-namespace\": $1, \"net-namespace\": $2, \"pid-namespace\": $3 \}
\{ \"exit-code\": 3 \}\$" "--json-status-fd: one line of namespaces, then the exit code"
set --
bw --ro-bind / / --json-status-fd 4 /nonexistent/prog 4>json
like "$RC:$(cat json)" '^1:\{ "child-pid": [0-9]+, "mnt-namespace": [0-9]+ \}$' \
    "--json-status-fd: no exit-code when the exec failed"
bw --ro-bind / / --json-status-fd 4 sh -c 'kill -KILL $$' 4>json
like "$RC:$(cat json)" '^137:.*
\{ "exit-code": 137 \}$' "--json-status-fd: a killed command's exit-code is 128+N"

# --- lock-file, sync-fd, block-fd, userns-block-fd ----------------------------------
lock_state() {
    "$PY" - "$1" <<'PY'
import fcntl, sys
f = open(sys.argv[1], "r+")
try:
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("free")
except OSError:
    print("held")
PY
}
: > lockf
rm -f go2 up2
"$BW" --ro-bind / / --bind "$top" "$top" --unshare-pid --lock-file "$top/lockf" \
    sh -c "touch $top/up2; while [ ! -e $top/go2 ]; do sleep 0.05; done" </dev/null &
bpid=$!
wait_for up2
is "$(lock_state lockf)" "held" "--lock-file: the sandbox holds a lock on the file while it runs"
touch go2
wait "$bpid"
is "$(lock_state lockf)" "free" "--lock-file: the lock goes with the sandbox"
# Without a PID namespace, --lock-file and --sync-fd still give the sandbox
# a reaper (bubblewrap's do_init), which must not treat the host's PID
# namespace as its own. Run in a PID namespace of the test's own, with a
# bystander beside it: a reaper that signals every process it can reach
# would take the test (as root: the whole host) with it. No leak check there:
# /proc stays the caller's, where LeakSanitizer (the asan build) looks up its
# own threads by a pid of the new namespace, and fails the run when no such
# pid is there (in a container).
o=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    timeout -k 5 60 unshare -rpf --kill-child sh -c 'sleep 30 & s=$!
    "$0" --ro-bind / / --lock-file "$1" --sync-fd 5 sh -c "echo ran" 5>/dev/null; echo "rc=$?"
    kill -0 $s 2>/dev/null && echo bystander-alive; kill $s 2>/dev/null' "$BW" "$top/lockf" 2>&1)
is "$o" "ran
rc=0
bystander-alive" "--lock-file/--sync-fd without --unshare-pid: the command runs, exits 0, no other process is killed"

mkfifo sfifo
rm -f eof
(cat sfifo >/dev/null; touch eof) &
reader=$!
bw --ro-bind / / --bind "$top" "$top" --unshare-pid --sync-fd 5 \
    sh -c 'sleep 0.5; [ -e eof ] && echo early || echo held; ls /proc/self/fd | grep -qx 5 && echo fd5-open || echo fd5-closed' 5>sfifo
wait "$reader"
is "$OUT:$(ls eof 2>/dev/null)" "held
fd5-closed:eof" "--sync-fd is held open while the sandbox runs, closed in the command, closed at the end"

mkfifo bfifo
rm -f blocked-ran
"$BW" --ro-bind / / --bind "$top" "$top" --block-fd 5 sh -c 'echo ran > blocked-ran' 5<>bfifo </dev/null &
bpid=$!
sleep 0.5
ok $([ ! -e blocked-ran ] && echo 0 || echo 1) "--block-fd: the command waits for a byte"
echo x > bfifo
wait "$bpid"
is "$?:$(cat blocked-ran 2>/dev/null)" "0:ran" "--block-fd: a byte lets the command run"

mkfifo ufifo
rm -f uinfo
"$BW" --ro-bind / / --bind "$top" "$top" --unshare-user --uid 0 --gid 0 --info-fd 6 --userns-block-fd 7 \
    sh -c 'cat /proc/self/uid_map /proc/self/gid_map | tr -s " " | tr "\n" ";"; echo "$(id -u):$(id -g)" > uran' \
    6>uinfo 7<>ufifo >uout </dev/null &
bpid=$!
wait_for uinfo
sleep 0.2
cpid=$(sed -n 's/.*"child-pid": \([0-9]*\).*/\1/p' uinfo)
is "$(cat /proc/$cpid/uid_map 2>/dev/null)" "" "--userns-block-fd: the sandbox waits, its uid map unwritten"
ok $([ ! -e uran ] && echo 0 || echo 1) "--userns-block-fd: the command has not run yet"
echo "0 $uid 1" > /proc/$cpid/uid_map
echo deny > /proc/$cpid/setgroups
echo "0 $gid 1" > /proc/$cpid/gid_map
echo x > ufifo
wait "$bpid"
is "$?:$(cat uout):$(cat uran 2>/dev/null)" "0: 0 $uid 1; 0 $gid 1;:0:0" \
    "--userns-block-fd: the maps the caller wrote from outside are the sandbox's"
refused "--userns-block-fd requires --unshare-user" "--userns-block-fd without --unshare-user is refused" \
    -- --ro-bind / / --userns-block-fd 3 true
refused "--userns-block-fd requires --info-fd" "--userns-block-fd without --info-fd is refused" \
    -- --ro-bind / / --unshare-user --userns-block-fd 3 true

# --- die-with-parent ------------------------------------------------------------------
for dwp in with without; do
    tag=nf-bw-dwp-$$-$RANDOM
    flag=--die-with-parent
    [ $dwp = without ] && flag=--new-session
    sh -c '"$0" --ro-bind / / '"$flag"' bash -c "exec -a '"$tag"' sleep 60" </dev/null & wait' "$BW" &
    parent=$!
    for _ in $(seq 200); do pgrep -f "^$tag" >/dev/null && break; sleep 0.05; done
    ok $(pgrep -f "^$tag" >/dev/null && echo 0 || echo 1) "the sandbox is running ($dwp --die-with-parent)"
    kill -KILL "$parent"
    wait "$parent" 2>/dev/null
    gone=1
    for _ in $(seq 60); do pgrep -f "^$tag" >/dev/null || { gone=0; break; }; sleep 0.05; done
    if [ $dwp = with ]; then
        ok $gone "--die-with-parent: killing bwrap's parent kills the sandbox"
    else
        ok $((1 - gone)) "control: without --die-with-parent the sandbox outlives its parent"
        for p in $(pgrep -f "^$tag"); do kill -KILL "$p"; done
    fi
done

# --- errors a user can hit --------------------------------------------------------
refused "Unknown option --bogus" "an unknown option is refused" -- --bogus true
refused "Unknown option -x" "an unknown short option is refused" -- -x true
refused "--bind takes two arguments" "an option missing its arguments is refused" -- --bind /usr
refused "--tmpfs takes an argument" "--tmpfs without its argument is refused" -- --tmpfs

# --- escapes through planted symlinks ---------------------------------------------
# A caller binds a directory the sandboxed world could write, and a symlink
# in it points at a host path outside the new root. bubblewrap resolves an
# absolute link target during setup against its own scratch root, never the
# host's: none of these may create or change anything on the host.
mkdir -p esc/work esc/outside
echo orig > esc/outside/f
chmod 644 esc/outside/f
ln -s "$top/esc/outside" esc/work/abs
ln -s "$top/esc/outside/f" esc/work/absfile
ln -s ../outside esc/work/rel
outside_state() { (cd esc/outside && find . -printf '%p %m %y\n' | sort | tr '\n' ' '; cat f); }
before=$(outside_state)
mkdir esc/work/abs/ctl && echo changed > esc/work/absfile && chmod 600 esc/work/absfile
ok $([ -d esc/outside/ctl ] && [ "$(cat esc/outside/f)" = changed ] && echo 0 || echo 1) \
    "control: without a sandbox, writes through the planted links reach the outside directory"
rmdir esc/outside/ctl && echo orig > esc/outside/f && chmod 644 esc/outside/f
NR=(--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64
    --bind "$top/esc/work" /w)
bw "${NR[@]}" --dir /w/made sh -c 'echo ran; ls /w'
like "$RC:$OUT" '^0:ran' "control: the new root works and the command runs"
rmdir esc/work/made
for ops in "--dir /w/abs/newdir" "--file 3 /w/abs/newfile" "--file 3 /w/absfile" \
    "--symlink x /w/abs/newlink" "--chmod 0777 /w/absfile" "--bind /usr /w/abs/bm" \
    "--ro-bind /etc/hostname /w/absfile" "--ro-bind-data 3 /w/absfile" "--bind-data 3 /w/abs/bd" \
    "--tmpfs /w/abs/t" "--dir /w/rel/newdir" "--chmod 0600 /w/rel/f" "--bind /usr /w/abs" \
    "--mqueue /w/abs/mq" "--dev /w/abs/dev"; do
    # shellcheck disable=SC2086
    bw "${NR[@]}" $ops sh -c 'echo ran' 3<data
    ok $([ "$RC" = 1 ] && [ -z "$OUT" ] && echo 0 || echo 1) "$ops through a planted link: refused, nothing ran"
    like "$ERR" "^bwrap: Can't" "$ops: bubblewrap's kind of message"
    is "$(outside_state)" "$before" "$ops: the outside directory is untouched"
done
ok $([ -z "$(find esc/work -newer esc/work/rel ! -path esc/work)" ] && echo 0 || echo 1) \
    "nothing was left in the bound directory by the refused runs"
# A relative link that stays inside the bound directory is followed.
mkdir esc/work/sub
ln -s sub esc/work/inlink
bw "${NR[@]}" --dir /w/inlink/made sh -c 'echo ran'
is "$RC:$OUT" "0:ran" "a relative link inside the new root is followed"
ok $([ -d esc/work/sub/made ] && echo 0 || echo 1) "... and the directory is made where it leads, inside the bound directory"

# --- what bubblewrap leaves on the host: mount points in a bound directory ------------
mkdir -p left
bw --ro-bind / / --bind "$top/left" /mnt --ro-bind /etc/hostname /mnt/mp-file --ro-bind /usr /mnt/mp-dir \
    --ro-bind /etc/hostname /mnt/deep/er/f true
is "$RC" 0 "binds onto missing destinations in a bound directory succeed"
is "$(cd left && find . -mindepth 1 -printf '%p %m %y %s\n' | LC_ALL=C sort | tr '\n' ';')" \
    "./deep 700 d 4096;./deep/er 700 d 4096;./deep/er/f 444 f 0;./mp-dir 755 d 4096;./mp-file 444 f 0;" \
    "mount points stay on the host as bubblewrap leaves them: dirs 0755 (their parents 0700), files 0444, empty"

# --- nothing left running --------------------------------------------------------------
sleep 0.2
is "$(pgrep -f "^$BW" | tr '\n' ' ')" "" "no bwrap process of this test is left running"
is "$(pgrep -f "nf-bw-dwp-$$-" | tr '\n' ' ')" "" "no sandboxed command of this test is left running"

done_testing
