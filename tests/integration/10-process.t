#!/bin/bash
# The process model: exit statuses, PID 1, the command as PID 2, signals,
# teardown of everything in the sandbox, capabilities, no_new_privs.
# modes: landlock
. "$(dirname "$0")/lib.sh"

nf_tmpdir d
cd "$d"

nsf --version
is "$RC" 0 "--version exits 0"
like "$OUT" '^nsfence [0-9]+\.[0-9]+' "--version prints the version"

nsf --help
is "$RC" 0 "--help exits 0"
like "$OUT" 'usage: nsfence' "--help prints usage on stdout"

nsf -- true
is "$RC" 0 "true exits 0"
is "$ERR" "" "a run with nothing to report writes nothing to stderr"

for code in 1 42; do
    nsf -- sh -c "echo ran; exit $code"
    is "$RC" "$code" "exit status $code is the command's"
    is "$OUT" "ran" "the command ran (exit $code)"
done

nsf -- sh -c 'echo ran; kill -TERM $$'
is "$RC" 143 "a command killed by SIGTERM gives 128+15"
is "$OUT" "ran" "the command ran before its SIGTERM"

nsf -- /nonexistent/program
is "$RC" 127 "a missing program gives 127"
like "$ERR" 'nonexistent/program' "the message names the missing program"

nsf -- no-such-command-anywhere
is "$RC" 127 "a command not on PATH gives 127"

# The run is held on one CPU while it is set up (src/spawn.c). The command
# gets every CPU nsfence was given, as given; the host side gets them back
# once the command has run a while.
if [ "$(nproc)" -ge 2 ]; then
    all=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
    nsf -- awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status
    is "$OUT" "$all" "the command runs on every CPU nsfence was given ($all)"
    last=$(taskset -c -p $$ | sed 's/.*[-,]//; s/.*: //')
    o=$(taskset -c "$last" "$NSFENCE" -- awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
    is "$o" "$last" "and only those: given CPU $last alone, it runs there"
    "$NSFENCE" -- sleep 3 &
    host=$!
    sleep 1
    o=$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$host/status")
    wait "$host"
    is "$o" "$all" "the host side has every CPU back while the command runs on"
fi

printf 'not a program' > notexec
chmod 644 notexec
nsf -- ./notexec
is "$RC" 126 "a file without execute permission gives 126"

# Landlock mode has no PID namespace: the command has the host's pids and
# sees every process; its init is its parent, not PID 1.
absent_in_landlock "process visibility" 4
nsf -- sh -c 'echo $$'
is "$OUT" 2 "the command is PID 2"

nsf -- cat /proc/1/comm
is "$OUT" "nsfence" "PID 1 is nsfence's own init"

nsf -- sh -c 'ls /proc | grep -E "^[0-9]+$" | sort -n | tr "\n" " "'
like "$OUT" '^1 2 [0-9 ]*$' "/proc shows only the sandbox's processes"
nsf -- sh -c 'ls /proc | grep -cE "^[0-9]+$"'
ok $([ "$OUT" -le 4 ] && echo 0 || echo 1) "/proc lists at most the init, the shell and its ls (got $OUT)"
nsf -- sh -c 'cat /proc/$PPID/comm'
is "$OUT" "nsfence" "the command's parent is nsfence's own init"

# Unprivileged, Landlock mode has no user namespace in which to hold the
# CAP_SETPCAP that emptying the bounding set takes.
is_root || partial_in_landlock "capability bounding set"
nsf -- sh -c 'grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)" /proc/self/status | tr -s "\t" " " | tr "\n" ";"'
is "$OUT" "CapInh: 0000000000000000;CapPrm: 0000000000000000;CapEff: 0000000000000000;CapBnd: 0000000000000000;CapAmb: 0000000000000000;NoNewPrivs: 1;" \
    "every capability set is empty and no_new_privs is set"

nsf -- sh -c 'ls /proc/self/fd | sort -n | tr "\n" " "'
is "$OUT" "0 1 2 3 " "only fds 0-2 are open (3 is ls's own directory)"

nsf -- id -u
is "$OUT" "$(id -u)" "the uid maps to itself"
nsf -- id -g
is "$OUT" "$(id -g)" "the gid maps to itself"
if is_root; then
    nsf -- stat -c %U:%G /etc/passwd
    is "$OUT" "root:root" "as root, files keep their real owners inside"
fi

export NF_PROBE="value with spaces"
nsf -- sh -c 'printf %s "$NF_PROBE"'
is "$OUT" "value with spaces" "the environment passes through"
unset NF_PROBE

nsf -- pwd
is "$OUT" "$d" "the command starts in the caller's working directory"

# Background children die with the command. (A duration of its own, so a
# run of this file in parallel is not mistaken for this one.)
nap=30.$$
nsf -- sh -c "sleep $nap & echo started"
is "$RC" 0 "a command leaving a background child exits"
is "$OUT" "started" "the command with a background child ran"
ok $(pgrep -f "^sleep $nap\$" >/dev/null && echo 1 || echo 0) "the background sleep is gone after the command exits"

# SIGINT to nsfence: the command stops, nsfence exits 130 and leaves nothing.
# A script's background jobs start with SIGINT ignored (and nsfence, like
# any wrapper, honours an ignored signal); env --default-signal gives it the
# dispositions an interactive caller would.
env --default-signal=INT,QUIT "$NSFENCE" -- sh -c 'echo up > ready; exec sleep 30' &
pid=$!
for _ in $(seq 100); do [ -s ready ] && break; sleep 0.05; done
is "$(cat ready 2>/dev/null)" "up" "the command started (SIGINT test)"
kill -INT "$pid"
wait "$pid"
is "$?" 130 "SIGINT to nsfence stops the command and exits 130"
rm -f ready
is "$(listing "$d")" "notexec " "nothing is left in the working directory after SIGINT"

# SIGTERM likewise.
env --default-signal=INT,QUIT "$NSFENCE" -- sh -c 'echo up > ready; exec sleep 30' &
pid=$!
for _ in $(seq 100); do [ -s ready ] && break; sleep 0.05; done
kill -TERM "$pid"
wait "$pid"
is "$?" 143 "SIGTERM to nsfence is forwarded and exits 143"
rm -f ready

# A command that handles the signal keeps running and decides its status.
env --default-signal=INT,QUIT "$NSFENCE" -- sh -c 'trap "echo caught > caught; exit 7" INT; echo up > ready; while :; do sleep 0.05; done' &
pid=$!
for _ in $(seq 100); do [ -s ready ] && break; sleep 0.05; done
kill -INT "$pid"
wait "$pid"
is "$?" 7 "a command that catches SIGINT decides the exit status"
is "$(cat caught 2>/dev/null)" "caught" "the forwarded SIGINT reached the command's handler"
rm -f ready caught

# kill -9 of nsfence: the whole sandbox dies at once.
tag="nsfence-k9-$$-$RANDOM"
env --default-signal=INT,QUIT "$NSFENCE" -- bash -c "echo up > ready; exec -a $tag sleep 60" &
pid=$!
for _ in $(seq 100); do [ -s ready ] && pgrep -f "^$tag" >/dev/null && break; sleep 0.05; done
ok $(pgrep -f "^$tag" >/dev/null && echo 0 || echo 1) "the command is running (kill -9 test)"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
gone=1
for _ in $(seq 100); do pgrep -f "^$tag" >/dev/null || { gone=0; break; }; sleep 0.02; done
ok $gone "kill -9 of nsfence kills the sandbox"
rm -f ready

# Init (PID 1, or in Landlock mode the command's parent): the command cannot
# signal or trace it.
nsf -- sh -c 'kill -KILL $PPID; sleep 0.1; echo alive'
is "$OUT" "alive" "the command's SIGKILL to its init is ignored (the command ran on)"
nsf -- sh -c 'cat /proc/$PPID/mem 2>&1 | head -c 200; echo; cat /proc/$PPID/environ >/dev/null 2>&1 && echo readable || echo denied'
like "$OUT" 'denied' "init's /proc/PID/environ is not readable (init is not dumpable)"

# Without a PID namespace the host's processes are there to be signalled:
# Landlock's scoping (ABI 6) must refuse every signal to them, kill(-1)
# included (as root it would reach every process of the host).
if in_landlock; then
    sleep 60 &
    victim=$!
    nsf -- sh -c "kill -KILL $victim 2>&1; echo rc=\$?; kill -KILL -1; kill -TERM -1; echo ran"
    like "$OUT" 'Operation not permitted' "a signal to a process outside the sandbox fails with EPERM"
    like "$OUT" 'ran$' "the command ran on after kill(-1)"
    ok $(kill -0 "$victim" 2>/dev/null && echo 0 || echo 1) "the process outside survives both, and kill(-1)"
    kill "$victim" 2>/dev/null
    wait "$victim" 2>/dev/null
fi

done_testing
