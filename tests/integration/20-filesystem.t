#!/bin/bash
# The filesystem policy: host read-only, write roots writable, a private
# /tmp, nosuid/nodev, deny_write, deny_read/allow_read, symlinks resolved.
# modes: landlock
. "$(dirname "$0")/lib.sh"

nf_tmpdir top
mkdir -p "$top/work" "$top/outside"
echo original > "$top/outside/target"
cd "$top/work"

# --- the host is read-only, the working directory is not ---------------------
nsf -- sh -c 'echo ran; echo changed > ../outside/target'
is "$OUT" "ran" "the command ran (write outside)"
like "$ERR" 'Read-only file system' "a write outside the write roots fails with EROFS"
is "$(cat ../outside/target)" "original" "the host file outside is untouched"
ok $([ "$RC" -ne 0 ] && echo 0 || echo 1) "the failed write makes the command fail"

nsf -- sh -c 'echo hi > /etc/nsfence-test-x'
like "$ERR" 'Read-only file system' "writing into /etc fails with EROFS"
ok $([ ! -e /etc/nsfence-test-x ] && echo 0 || echo 1) "nothing appeared in /etc"

meta_writes_refused "a file outside the write roots" ../outside/target

nsf -- sh -c 'echo kept > ./x && mkdir sub && echo deep > sub/y'
is "$RC" 0 "writes inside the working directory succeed"
is "$(cat x):$(cat sub/y)" "kept:deep" "writes inside persist after exit"
rm -rf x sub

nsf -- sh -c 'mkfifo fifo && echo made'
is "$OUT" "made" "mkfifo works in a write root"
ok $([ -p fifo ] && echo 0 || echo 1) "the fifo is visible on the host"
rm -f fifo

nsf -- sh -c 'echo ran; ln ../outside/target hardlink'
is "$OUT" "ran" "the command ran (hard link)"
ok $([ ! -e hardlink ] && echo 0 || echo 1) "a hard link to a file outside cannot be made in a write root"

# --- /tmp is private ---------------------------------------------------------
# (In Landlock mode /tmp is the host's, not writable; TMPDIR is private.)
marker=/tmp/nsfence-host-marker-$$
echo host > "$marker"
partial_in_landlock "private /tmp" 2
nsf -- sh -c "ls $marker 2>&1; echo inside > /tmp/nsfence-inside-$$ && cat /tmp/nsfence-inside-$$"
like "$OUT" 'No such file' "the host's /tmp is not visible inside"
like "$OUT" 'inside' "the private /tmp is writable"
ok $([ ! -e /tmp/nsfence-inside-$$ ] && echo 0 || echo 1) "files in the private /tmp do not reach the host"
rm -f "$marker"
if in_landlock; then
    nsf -- sh -c 'echo inside > "$TMPDIR/f" && cat "$TMPDIR/f" && echo "$TMPDIR"'
    is "$(printf '%s\n' "$OUT" | head -1)" "inside" "TMPDIR is a writable directory of the run's own"
    tmpd=$(printf '%s\n' "$OUT" | sed -n 2p)
    ok $([ -n "$tmpd" ] && [ ! -e "$tmpd" ] && echo 0 || echo 1) "and it is gone after the run ($tmpd)"
fi

tmpwork=$(mktemp -d /tmp/nsfence-tmpwork.XXXXXX)
(cd "$tmpwork" && "$NSFENCE" -- sh -c 'echo there > ./f; echo hidden > /tmp/other') >/dev/null 2>&1
is "$(cat "$tmpwork/f" 2>/dev/null)" "there" "a working directory under /tmp stays the host's and writable"
ok $([ ! -e /tmp/other ] && echo 0 || echo 1) "beside it, /tmp is still private"
rm -rf "$tmpwork"

# --- extra write roots -------------------------------------------------------
mkdir -p "$top/extra"
nsf --allow-write "$top/extra" -- sh -c "echo e > $top/extra/f"
is "$(cat "$top/extra/f" 2>/dev/null)" "e" "--allow-write adds a write root"
nsf -v --allow-write "$top/missing" -- true
is "$RC" 0 "a missing allow_write path does not fail the run"
like "$ERR" "allow_write $top/missing skipped" "a missing allow_write path is skipped, said under -v"

# --- nosuid, nodev, mknod ----------------------------------------------------
# Landlock mode mounts nothing: no_new_privs alone keeps a setuid binary from
# elevating (the unprivileged leg's check below).
namespace_only "nosuid mounts"
nsf -- sh -c 'grep -E " / | '"$top/work"' " /proc/self/mountinfo'
ok $(printf '%s\n' "$OUT" | grep -v nosuid | grep -q . && echo 1 || echo 0) "the root and the write root are mounted nosuid"
nsf -- sh -c 'echo ran; mknod ./nod c 1 3'
is "$OUT" "ran" "the command ran (mknod)"
ok $([ "$RC" -ne 0 ] && [ ! -e nod ] && echo 0 || echo 1) "mknod of a device fails and leaves nothing"
if [ "$NF_LEG" = user ]; then
    is "$("$NF_FIXTURES/suid-id" -u)" 0 "outside, the setuid-root fixture does elevate (control)"
    nsf -- "$NF_FIXTURES/suid-id" -u
    is "$OUT" "$(id -u)" "inside, a setuid-root binary does not elevate"
else
    cp /usr/bin/id ./suid-copy && chmod 4755 ./suid-copy
    namespace_only "nosuid mounts"
    nsf -- sh -c 'grep " '"$top/work"' " /proc/self/mountinfo; ./suid-copy -u'
    like "$OUT" 'nosuid' "a setuid copy in the write root sits on a nosuid mount"
    rm -f suid-copy
fi

# --- symlinks ------------------------------------------------------------------
ln -s ../outside/target out-link
ln -s /etc etc-link
nsf -- sh -c 'echo ran; echo evil > out-link; echo evil > etc-link/nsfence-x'
is "$OUT" "ran" "the command ran (symlink escapes)"
is "$(cat ../outside/target)" "original" "writing through a symlink that points outside fails"
ok $([ ! -e /etc/nsfence-x ] && echo 0 || echo 1) "writing through a symlink to /etc fails"
rm -f out-link etc-link

# --- /dev ----------------------------------------------------------------------
nsf -- sh -c 'echo x > /dev/null && head -c 4 /dev/zero | wc -c && ls /dev | tr "\n" " "'
like "$OUT" '^4' "/dev/null and /dev/zero work"
partial_in_landlock "a minimal /dev"
unlike "$OUT" '(sda|vda|mem|kmsg|loop)' "no disks, memory or kernel log devices in /dev"
like "$OUT" 'pts .*shm' "/dev has pts and shm"

# --- deny_write ----------------------------------------------------------------
echo keep > protected.txt
nsf --deny-write protected.txt -- sh -c 'echo ran; echo evil > protected.txt'
is "$OUT" "ran" "the command ran (deny_write)"
like "$ERR" 'Read-only file system' "a deny_write file inside a write root is read-only"
is "$(cat protected.txt)" "keep" "the denied file is unchanged"
meta_writes_refused "a deny_write file in a write root" protected.txt --deny-write protected.txt

nsf --deny-write not-yet.txt -- sh -c 'echo ran; echo evil > not-yet.txt'
is "$OUT" "ran" "the command ran (deny_write of a missing path)"
ok $([ ! -e not-yet.txt ] && echo 0 || echo 1) "a deny_write path that does not exist cannot be created, nothing left"

mkdir -p real/dir && ln -s real linkdir
nsf --deny-write linkdir/dir -- sh -c 'echo ran; echo evil > real/dir/f'
is "$OUT" "ran" "the command ran (deny through a symlinked parent)"
ok $([ ! -e real/dir/f ] && echo 0 || echo 1) "a deny through a symlinked parent lands on the real target"
rm -rf real linkdir

mkdir -p real/sub && echo orig > real/sub/file && ln -s real link
nsf --deny-write link/sub/file -- sh -c 'echo ran; rm link; mkdir -p link/sub && echo evil > link/sub/file'
is "$OUT" "ran" "the command ran (replace a symlinked parent)"
ok $([ -L link ] && [ "$(cat real/sub/file)" = orig ] && echo 0 || echo 1) \
    "a symlink a deny is spelled through cannot be replaced by a real path"
rm -rf real link

# Two rules at one path: the later one is on top (deny over a write root,
# a read mask over a write root).
marker=/tmp/nsfence-x-$$
echo orig > "$marker"
nsf --allow-write /tmp --deny-write "$marker" -- sh -c "echo ran; echo evil > $marker"
is "$OUT:$(cat "$marker")" "ran:orig" "deny_write holds inside a write root that is /tmp itself"
rm -f "$marker"
mkdir -p both && echo s > both/s
partial_in_landlock "read denies (deny_read)"
nsf --allow-write both --deny-read both -- sh -c 'ls -A both | wc -l'
is "$RC:$OUT" "0:0" "a path both allow_write and deny_read runs, and is masked"
rm -rf both

ln -s loop-b loop-a && ln -s loop-a loop-b
nsf --deny-write loop-a/x -- sh -c 'echo should-not-run'
is "$RC" 125 "a deny_write through a symlink cycle fails closed with 125"
is "$OUT" "" "the command did not run (symlink cycle)"
like "$ERR" '^nsfence: .*(symbolic links|loop)' "the cycle is named in one line"
nsf --deny-read loop-a -- true
is "$RC" 125 "a deny_read through a symlink cycle fails closed with 125"
rm -f loop-a loop-b

# --- deny_read / allow_read ----------------------------------------------------
mkdir -p secret/inner secret/open secret/out
echo s1 > secret/s.txt
echo pub > secret/open/pub.txt
echo fileSecret > lone-secret.txt
nsf --deny-read secret -- sh -c 'ls -A secret | wc -l; cat secret/s.txt 2>&1'
partial_in_landlock "read denies (deny_read)"
like "$OUT" '^0' "a denied directory is empty inside"
if in_landlock; then
    like "$OUT" 'secret/s.txt: Permission denied' "its files are not readable"
else
    like "$OUT" 'No such file' "its files are not readable"
fi
nsf --deny-read lone-secret.txt -- sh -c 'echo "[$(cat lone-secret.txt)]"'
is "$OUT" "[]" "a denied file reads as empty"
nsf --deny-read secret --allow-read secret/open -- sh -c 'cat secret/open/pub.txt; cat secret/s.txt 2>/dev/null || echo hidden'
is "$OUT" "pub
hidden" "allow_read re-opens a path inside a denied directory, the rest stays hidden"
nsf --deny-read secret --allow-read secret/open -- sh -c 'echo x > secret/open/new 2>/dev/null || echo refused'
is "$OUT" "refused" "an allow_read carve-out is read-only"
nsf --deny-read secret --allow-write secret/out -- sh -c 'echo written > secret/out/w && cat secret/out/w'
is "$OUT" "written" "a write root inside a denied directory stays writable"
is "$(cat secret/out/w 2>/dev/null)" "written" "and its writes reach the host"
nsf --deny-read "$top/nothing-here" -- true
is "$RC" 0 "a deny_read path that does not exist denies nothing and runs"

# deny_read of a host directory outside the write roots
nsf --deny-read /etc -- sh -c 'ls -A /etc | wc -l'
partial_in_landlock "read denies (deny_read)"
is "$OUT" "0" "deny_read of /etc empties it"

is "$(listing "$top/work")" "lone-secret.txt protected.txt secret secret/inner secret/open secret/open/pub.txt secret/out secret/out/w secret/s.txt " \
    "nothing but the test's own files is left in the working directory"

done_testing
