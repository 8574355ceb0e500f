#!/bin/bash
# explain prints the policy and the exact plan a run executes, and runs
# nothing; -v prints the same plan lines as a run executes them.
. "$(dirname "$0")/lib.sh"

nf_tmpdir d
cd "$d"
mkdir -p sub/.git/hooks secret
echo x > sub/.git/config

nsf explain --deny-read secret --deny-write sub/keep -- touch ran-marker
is "$RC" 0 "explain exits 0"
ok $([ ! -e ran-marker ] && echo 0 || echo 1) "explain runs nothing"
is "$(listing "$d")" "secret sub sub/.git sub/.git/config sub/.git/hooks " "explain creates no placeholder"
like "$OUT" "mount plan" "explain prints the mount plan"
like "$OUT" "root-ro +/ " "the plan starts with the read-only host root"
like "$OUT" "bind-rw +$d " "the working directory is a write root"
like "$OUT" "mask-dir +$d/secret " "deny_read appears as a masked directory"
like "$OUT" "bind-ro +$d/sub/keep \\[placeholder file\\]" "an absent deny_write path is a placeholder"
like "$OUT" "bind-ro +$d/sub/.git/hooks" "a nested .git/hooks is protected"
like "$OUT" "bind-ro +$d/.bashrc \\[placeholder file\\]" "an absent top-level .bashrc is a placeholder"
like "$OUT" "pin +$d/sub " "ancestors of protected paths are pinned"
like "$OUT" "command: touch ran-marker" "explain names the command"

plan=$(printf '%s\n' "$OUT" | sed -n 's/^ *[0-9]\+  //p')
nsf -v --deny-read secret --deny-write sub/keep -- true
ran=$(printf '%s\n' "$ERR" | sed -n 's/^nsfence: mount: //p')
is "$ran" "$plan" "a run with -v executes exactly the plan explain prints"

done_testing
