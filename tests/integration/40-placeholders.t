#!/bin/bash
# Placeholders: protected names that do not exist need a mount point on the
# host while a run lasts. A normal exit removes them; what a run killed with
# SIGKILL left behind is removed by the next run; two runs sharing a
# directory never unmask each other.
# modes: landlock
. "$(dirname "$0")/lib.sh"

nf_tmpdir w
cd "$w"

wait_for() { for _ in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.025; done; return 1; }

# Landlock mode mounts nothing, so it makes no placeholders: its supervisor
# refuses to create the names. The checks of the outcome (the names stay
# uncreatable, nothing is left) hold in both modes.
placeholders="placeholders (mount points for absent protected names)"
namespace_only "$placeholders"
nsf -- sh -c 'ls -A | tr "\n" " "'
like "$OUT" '\.bashrc .*\.vscode' "inside, absent protected names exist (as read-only placeholders)"
is "$(listing "$w")" "" "after a normal run nothing is left"

echo user-content-empty-file > /dev/null
: > .profile
nsf -- true
ok $([ -f .profile ] && echo 0 || echo 1) "a user's own empty .profile is kept"
rm -f .profile

# kill -9 in the middle of a run leaves placeholders; the next run removes them.
env --default-signal=INT "$NSFENCE" -- sh -c 'echo up > up; exec sleep 30' &
pid=$!
wait_for up
namespace_only "$placeholders" 2
ok $([ -e .bashrc ] && echo 0 || echo 1) "while a run lasts, its placeholders exist on the host"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
rm -f up
ok $([ -e .bashrc ] && [ -f .vscode ] && [ -d .claude ] && echo 0 || echo 1) "a run killed with SIGKILL leaves its placeholders (files; a directory where a name lies beneath)"
nsf -- true
is "$RC" 0 "the next run starts over them"
is "$(listing "$w")" "" "and removes what the killed run left behind"

# A placeholder the user writes to on the host while a run lasts is theirs
# from then on: the run's end leaves it, with what they wrote (its mark is
# looked at once the run holds it alone, just before its removal).
env --default-signal=INT "$NSFENCE" -- sh -c 'echo up > up; while [ ! -e go ]; do sleep 0.02; done; echo ran > ran' 2>/dev/null &
pid=$!
wait_for up
echo mine >> .bashrc
touch go
wait "$pid"
is "$(cat ran 2>/dev/null)" "ran" "a run during which the user wrote to its .bashrc ran to its end"
is "$(cat .bashrc 2>/dev/null)" "mine" "and left the .bashrc, with what the user wrote"
rm -f up go ran .bashrc

# Two concurrent runs in one directory.
env --default-signal=INT "$NSFENCE" -- sh -c 'echo up > a-up; while [ ! -e b-done ]; do sleep 0.02; done; echo evil > .bashrc; mkdir -p .vscode/x; echo $? > a-result' 2>/dev/null &
apid=$!
wait_for a-up
nsf -- sh -c 'echo evil > .zshrc; echo b > b-done'
is "$(cat b-done 2>/dev/null)" "b" "a second run in the same directory ran"
wait "$apid"
ok $([ ! -s .bashrc ] && [ ! -e .vscode/x ] && echo 0 || echo 1) \
    "the first run stays protected after the second one ended"
rm -f a-up b-done a-result
is "$(listing "$w")" "" "when both are done nothing is left"

# Many runs at once, all ending at different times. Each marks that it has
# started and holds until all six have (30 s at most), so that they certainly
# overlap; then each, at its own time, tries the protected name and ends, the
# later ones after the earlier ones have ended and cleaned up. Each run's
# stderr and exit status are kept outside the directory and shown when a
# check fails: a run that could not start is why the others saw five.
nf_tmpdir runs
mkdir barrier
pids=()
for i in 1 2 3 4 5 6; do
    "$NSFENCE" -- sh -c '
        : > barrier/started-$1
        n=0
        for _ in $(seq 600); do
            n=$(ls barrier | grep -c "^started-")
            [ "$n" -ge 6 ] && break
            sleep 0.05
        done
        echo "$n" > barrier/saw-$1
        sleep 0.$1
        if echo evil > .mcp.json; then echo written; else echo refused; fi > barrier/wrote-$1
    ' sh "$i" 2>"$runs/stderr-$i" &
    pids+=($!)
done
for i in 1 2 3 4 5 6; do
    rc=0
    wait "${pids[$((i - 1))]}" || rc=$?
    echo "$rc" > "$runs/rc-$i"
done
runs_diag() {
    local i
    for i in 1 2 3 4 5 6; do
        diag "run $i: exit $(cat "$runs/rc-$i" 2>/dev/null), saw $(cat "barrier/saw-$i" 2>/dev/null || echo -), wrote $(cat "barrier/wrote-$i" 2>/dev/null || echo -)"
        if [ "$(cat "$runs/rc-$i" 2>/dev/null)" != 0 ] || [ ! -e "barrier/wrote-$i" ]; then
            diag "run $i stderr: $(tail -c 600 "$runs/stderr-$i" 2>/dev/null)"
        fi
    done
    return 0
}
ERR="" # not an earlier run's: each run's own is said below
got_saw=$(cat barrier/saw-* 2>/dev/null | tr '\n' ' ')
got_wrote=$(cat barrier/wrote-* 2>/dev/null | tr '\n' ' ')
want_wrote="refused refused refused refused refused refused "
is "$got_saw" "6 6 6 6 6 6 " "six runs were all running at once (each saw all six started)"
is "$got_wrote" "$want_wrote" "each run, ending at its own time, was refused the protected name"
[ "$got_saw" = "6 6 6 6 6 6 " ] && [ "$got_wrote" = "$want_wrote" ] || runs_diag
ok $([ ! -s .mcp.json ] && echo 0 || echo 1) "six overlapping runs never unmask each other"
rm -r barrier
is "$(listing "$w")" "" "and leave nothing behind"

done_testing
