#!/bin/bash
# Everyday frictions a new user meets: violations reported only for what the
# sandbox refused, a TMPDIR that works inside, rsync through the HTTP port, a
# denied directory that takes writes, messages that name the real cause.
. "$(dirname "$0")/lib.sh"

nf_tmpdir top
mkdir -p "$top/work"
cd "$top/work"

# --- only refused attempts are violations --------------------------------------
nsf -- mkdir -p "$PWD/sub/x"
is "$RC" 0 "mkdir -p of a path in the working directory succeeds"
unlike "$ERR" 'sandbox_violations|deny ' "mkdir -p through existing directories (EEXIST) reports nothing"
ok $([ -d sub/x ] && echo 0 || echo 1) "the directories were made"
rm -rf sub

nsf -- sh -c 'mkdir /etc 2>&1; mkdir /usr/bin 2>&1; ln -s x /etc/passwd 2>&1; echo done'
like "$OUT" 'File exists' "mkdir of an existing directory outside answers EEXIST"
like "$OUT" 'done' "the command ran (EEXIST)"
unlike "$ERR" 'deny ' "calls answered with EEXIST are not violations"

nsf -- sh -c 'mkdir /nsfence-no-such-dir/a 2>&1; touch /nsfence-no-such-dir/b 2>&1; echo done'
like "$OUT" 'No such file' "creating in a missing directory answers ENOENT"
unlike "$ERR" 'deny ' "calls answered with ENOENT are not violations"

nsf -- python3 -c 'import os; os.close(os.open("/etc/passwd", os.O_RDONLY | os.O_CREAT)); print("opened")'
is "$OUT" "opened" "open(O_CREAT) of an existing file for reading succeeds"
unlike "$ERR" 'deny ' "and is not a violation"

nsf -- sh -c "mkdir /etc/nsfence-new-$$ 2>/dev/null; echo x > /etc/passwd 2>/dev/null; echo done"
is "$OUT" "done" "the command ran (refused writes)"
like "$ERR" "deny mkdir /etc/nsfence-new-$$" "a mkdir the read-only host refused is reported"
like "$ERR" "deny openat /etc/passwd" "a write the read-only host refused is reported"
ok $([ ! -e /etc/nsfence-new-$$ ] && echo 0 || echo 1) "nothing appeared in /etc"

nsf -- sh -c 'echo a > f && mkdir d && ln -s f l && mv f g && rm -r d l g && echo done'
is "$RC:$OUT" "0:done" "writes inside the working directory succeed"
is "$ERR" "" "writes inside a write root report nothing"

# --- a read-denied directory is an empty, writable scratch -----------------------
mkdir -p secret/open
echo s1 > secret/s.txt
echo pub > secret/open/pub.txt
nsf --deny-read secret -- sh -c 'ls -A secret | wc -l; echo cached > secret/cache && mkdir secret/d && cat secret/cache'
is "$RC" 0 "a tool caching into a denied directory succeeds"
is "$(echo $OUT)" "0 cached" "the denied directory is empty, takes writes, and reads them back"
is "$ERR" "" "writes into a denied directory are not violations"
ok $([ ! -e secret/cache ] && [ ! -e secret/d ] && [ "$(cat secret/s.txt)" = s1 ] && echo 0 || echo 1) \
    "nothing written there reaches the host"
nsf --deny-read secret --allow-read secret/open -- sh -c 'echo x > secret/new && cat secret/open/pub.txt; echo y > secret/open/pub.txt 2>/dev/null || echo refused'
is "$(echo $OUT)" "pub refused" "a carve-out inside a writable mask stays readable and read-only"
like "$ERR" "deny openat $PWD/secret/open/pub.txt" "a write refused in a carve-out is reported"
unlike "$ERR" "deny openat $PWD/secret/new" "a write into the mask around it is not"
is "$(cat secret/open/pub.txt)" "pub" "the carve-out's file is untouched on the host"
ok $([ ! -e secret/new ] && echo 0 || echo 1) "the mask's new file is not on the host"
nsf --deny-read /etc -- sh -c 'echo x > /etc/nsfence-scratch && cat /etc/nsfence-scratch'
is "$RC:$OUT" "0:x" "a denied host directory outside the write roots is writable scratch too"
ok $([ ! -e /etc/nsfence-scratch ] && echo 0 || echo 1) "and nothing reaches the host's /etc"

# --- a TMPDIR the command cannot write is /tmp inside ------------------------------
mkdir -p "$top/outside-tmp"
TMPDIR="$top/outside-tmp" nsf -v -- sh -c 'echo "$TMPDIR"; f=$(mktemp) && echo made'
is "$RC" 0 "mktemp works with a caller's TMPDIR that is read-only inside"
is "$OUT" "/tmp
made" "that TMPDIR is /tmp inside"
like "$ERR" "TMPDIR $top/outside-tmp is not writable inside; TMPDIR=/tmp" "-v says TMPDIR was replaced"
TMPDIR="$top/outside-tmp" nsf -- true
is "$ERR" "" "without -v the replacement is silent"
mkdir -p mine
TMPDIR="$PWD/mine" nsf -- sh -c 'echo "$TMPDIR"; mktemp >/dev/null && echo made'
is "$OUT" "$PWD/mine
made" "a TMPDIR inside a write root is kept"
TMPDIR=/tmp nsf -- sh -c 'echo "$TMPDIR"'
is "$OUT" "/tmp" "TMPDIR=/tmp is kept"
rm -rf mine

# --- rsync goes through the HTTP proxy (it speaks CONNECT to RSYNC_PROXY) -------
nsf -- printenv RSYNC_PROXY
is "$OUT" "localhost:3128" "RSYNC_PROXY points at the HTTP port"
printf '[network]\nhttp_port = 8888\nsocks_port = 1999\n' > "$top/ports.ini"
nsf --config "$top/ports.ini" -- printenv RSYNC_PROXY
is "$OUT" "localhost:8888" "RSYNC_PROXY follows the configured HTTP port"

# --- messages that name the real cause ------------------------------------------------
nsf -- "$NSFENCE" -- sh -c 'echo SHOULD-NOT-RUN'
is "$RC" 125 "nsfence nested inside nsfence refuses with 125"
is "$OUT" "" "and nothing ran"
like "$ERR" 'already runs inside a sandbox \(SANDBOX_RUNTIME=1' "the refusal names the outer sandbox"
unlike "$ERR" 'Docker' "and does not blame Docker"
nsf -- "$NSFENCE" doctor
like "$OUT" 'fail +userns_probe +clone\(CLONE_NEWUSER\) fails with Operation not permitted: this process already runs inside a sandbox' \
    "doctor nested inside nsfence names the same cause"
nsf -c 'echo hi'
is "$RC" 125 "-c is refused"
like "$ERR" "^nsfence: unknown option -c: to run a shell command, use -- sh -c '...'$" "-c says to use -- sh -c"
env -u SANDBOX_RUNTIME "$NSFENCE" connect example.org 22 </dev/null >/dev/null 2>"$top/connect.err"
ok $([ $? -ne 0 ] && echo 0 || echo 1) "connect outside a sandbox fails"
like "$(cat "$top/connect.err")" 'connect only works inside an nsfence sandbox' "and says it only works inside one"
nsf --help
for k in deny_reason deny_address http_port socks_port parent_proxy max_connections ignore mandatory_deny_depth; do
    like "$OUT" "\] .*$k" "--help lists the INI-only key $k"
done

# --- doctor probes past unshare ----------------------------------------------------------
nsf doctor
like "$OUT" '^ok +userns_probe +a user namespace, its id maps and a tmpfs mounted in it work' \
    "doctor says ok only after writing the id maps and mounting a tmpfs in a new namespace"
# Ubuntu's AppArmor restriction lets the user namespace be made and fails
# what follows. The two ways it shows, made here without AppArmor: the maps
# (root without CAP_SETFCAP cannot map uid 0) and the mounts (a seccomp
# filter refusing every mount call, the namespace let through).
"$NF_HELPERS/noclone" --mounts "$NSFENCE" -- sh -c 'echo SHOULD-NOT-RUN' >"$top/m.out" 2>"$top/m.err"
is "$?:$(cat "$top/m.out")" "125:" "mounts refused after the namespace is made: 125, nothing ran"
like "$(cat "$top/m.err")" '^nsfence: make / private: Operation not permitted \(.*seccomp .* refuses mounting' \
    "the refusal names the seccomp filter that refuses mounting"
"$NF_HELPERS/noclone" --mounts "$NSFENCE" doctor >"$top/m.out" 2>&1
like "$(cat "$top/m.out")" 'fail +userns_probe +a new user namespace works but mounting in it fails with Operation not permitted: .*seccomp .* refuses mounting' \
    "doctor probes past unshare: the mount fails, and it says why"
if is_root; then
    setpriv --bounding-set -setfcap "$NSFENCE" -- sh -c 'echo SHOULD-NOT-RUN' >"$top/m.out" 2>"$top/m.err"
    is "$?:$(cat "$top/m.out")" "125:" "root without CAP_SETFCAP: the maps cannot be written: 125, nothing ran"
    like "$(cat "$top/m.err")" 'uid_map.*Operation not permitted.*needs CAP_SETFCAP' \
        "the refusal says the map needs CAP_SETFCAP"
    setpriv --bounding-set -setfcap "$NSFENCE" doctor >"$top/m.out" 2>&1
    like "$(cat "$top/m.out")" 'fail +userns_probe +a user namespace is created, but writing its id maps fails with Operation not permitted' \
        "doctor probes past unshare: the map write fails, and it says so"
fi

done_testing
