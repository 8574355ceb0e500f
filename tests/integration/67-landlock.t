#!/bin/bash
# Landlock mode (--mode landlock), attacked: no namespaces; Landlock bounds
# the command, the supervisor performs every write-intent call and every
# connect itself. The command is hostile and patient: it writes outside its
# write roots through every call and spelling, rewrites protected names,
# races the supervisor, reaches for the network, signals what is outside and
# tries to outlive nsfence. Each check proves the command ran and, where it
# is safe, shows the same attack working without nsfence (the control).
# Properties the mode does not have are skipped by name and counted.
# fixture: network
# builds: dyn asan
. "$(dirname "$0")/lib.sh"

att="$NF_HELPERS/llattack"
raw="$NF_HELPERS/rawtcp"
weak='^nsfence: Landlock mode \(ABI [0-9]+\), weaker than namespaces: '
absent=0
skip_absent() { # skip_absent PROPERTY DESCRIPTION: what the mode does not have
    absent=$((absent + 1))
    skip "absent in Landlock mode: $1" "$2"
}
ll() { nsf --mode landlock "$@"; }
# ERR without the line every Landlock run prints.
rest() { printf '%s\n' "$ERR" | grep -Ev "$weak" || true; }
me="$(id -u):$(id -g)"

# Landlock ABI 4 (TCP) is what the mode needs with the network on; 6 scopes
# signals. CI's kernels have both; elsewhere the test says what is missing.
abi=$("$NSFENCE" doctor 2>/dev/null | sed -n 's/.*landlock *ABI version \([0-9]*\).*/\1/p')
[ "${abi:-0}" -ge 6 ] || skip_file "Landlock ABI ${abi:-none} here; this test needs 6 (Linux 6.12)"

nf_tmpdir d
mkdir -p "$d/w" "$d/out" "$d/tmp"
cd "$d/w"
# Each run's private TMPDIR is made in nsfence's own TMPDIR: here one of the
# test's, so that what any run leaves behind shows at the end (and nothing
# of other runs on this host is mistaken for ours).
export TMPDIR="$d/tmp"

# ============================================================================
# The mode itself: chosen, said, refused when misspelt.
# ============================================================================
ll -- sh -c 'echo ran; readlink /proc/self/ns/pid /proc/self/ns/mnt'
is "$RC:$(printf '%s\n' "$OUT" | head -1)" "0:ran" "--mode landlock runs the command"
is "$(printf '%s\n' "$OUT" | tail -2 | tr '\n' ' ')" "$(readlink /proc/self/ns/pid /proc/self/ns/mnt | tr '\n' ' ')" \
    "in the caller's own PID and mount namespaces (there are none of its own)"
like "$ERR" "$weak" "every run says on stderr which properties are weaker"
is "$(printf '%s\n' "$ERR" | wc -l)" 1 "in one line, and a run with nothing to report adds nothing else"
nsf --mode bogus -- sh -c 'echo SHOULD-NOT-RUN'
is "$RC:$OUT" "125:" "a bad --mode value: exit 125, nothing ran"
like "$ERR" '^nsfence: --mode: "bogus": expected namespaces, landlock or auto$' "one line names the value and the choices"
is "$(printf '%s\n' "$ERR" | wc -l)" 1 "and nothing more"
nsf --mode auto -v -- sh -c 'echo ran; readlink /proc/self/ns/pid'
is "$(printf '%s\n' "$OUT" | head -1)" "ran" "--mode auto runs the command"
like "$ERR" 'mode auto: user namespaces work here: namespace mode' "--mode auto picks namespaces on this host, and says so under -v"
ok $([ "$(printf '%s\n' "$OUT" | tail -1)" != "$(readlink /proc/self/ns/pid)" ] && echo 0 || echo 1) \
    "the command has a PID namespace of its own (namespace mode)"
unlike "$ERR" "$weak" "and no Landlock line"
printf '[sandbox]\nmode = landlock\n' > "$d/mode.ini"
nsf --config "$d/mode.ini" -- sh -c 'echo ran; readlink /proc/self/ns/pid'
is "$OUT" "ran
$(readlink /proc/self/ns/pid)" "[sandbox] mode = landlock in the INI runs in Landlock mode"
like "$ERR" "$weak" "with the weaker-properties line"
printf '[sandbox]\nmode = sideways\n' > "$d/bad.ini"
nsf --config "$d/bad.ini" -- sh -c 'echo SHOULD-NOT-RUN'
is "$RC:$OUT" "125:" "a bad mode in the INI: exit 125, nothing ran"
like "$ERR" "^nsfence: $d/bad.ini:2: \[sandbox\] mode: \"sideways\"" "naming the file, line and key"
printf '{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"nsfence":{"mode":"landlock"}}\n' > "$d/mode.json"
nsf --settings "$d/mode.json" -- sh -c 'echo ran; readlink /proc/self/ns/pid'
is "$OUT" "ran
$(readlink /proc/self/ns/pid)" '{"nsfence": {"mode": "landlock"}} in --settings runs in Landlock mode'
like "$ERR" "$weak" "with the weaker-properties line"
rm -f "$d/mode.ini" "$d/bad.ini" "$d/mode.json"
# srt's filesystem.disabled: the host tree writable, and still a Landlock
# domain for the network, the scoping and ptrace.
printf '{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]},"nsfence":{"mode":"landlock"}}\n' > "$d/nofs.json"
sleep 60 &
bystander=$!
nsf --settings "$d/nofs.json" -- sh -c "echo ran; echo x > $d/out/nofs && echo wrote; kill -0 $bystander 2>/dev/null; echo kill=\$?"
is "$RC:$OUT" "0:ran
wrote
kill=1" "filesystem.disabled runs in Landlock mode: the host tree writable, signals outside still refused"
kill "$bystander"; wait "$bystander" 2>/dev/null
rm -f "$d/nofs.json" "$d/out/nofs"

# ============================================================================
# Writes only in the write roots: every call, refused outside (the file
# outside is the test's own, so only the sandbox stands in the way).
# ============================================================================
out="$d/out"
reset_out() {
    rm -rf "$out" && mkdir -p "$out/dir" && echo original > "$out/f" && touch -d 2001-01-01 "$out/f"
}
state() { stat -c '%a %u:%g %Y %s' "$1"; }
reset_out
before=$(state "$out/f")
ll -- sh -c "echo ran
echo x > $out/new; echo x >> $out/f; : > $out/f; truncate -s 0 $out/f
chmod 777 $out/f; chown $me $out/f; touch $out/f
mkdir $out/newdir; rmdir $out/dir; mkfifo $out/fifo; ln -s /etc $out/sym; ln $out/f $out/hard
mv $out/f $out/moved; rm -f $out/f; cp /etc/hostname $out/copied"
is "$(printf '%s\n' "$OUT" | head -1)" "ran" "the command ran (writes outside)"
is "$(listing "$out")" "dir f " "nothing was created, removed or renamed outside the write roots"
is "$(state "$out/f"):$(cat "$out/f")" "$before:original" \
    "the file outside keeps its content, mode, owner and times (write, truncate, chmod, chown, touch)"
like "$(rest)" 'Read-only file system' "with EROFS, as in namespace mode"
like "$ERR" "<sandbox_violations>
mode landlock \\(no namespaces; [^
]*
deny openat $out/new
" "each refusal is reported in srt's format, after a line naming the mode"
ll -- sh -c "echo ran
echo x > new; echo x >> new; truncate -s 1 new; chmod 600 new; chown $me new; touch -d 2002-02-02 new
mkdir newdir; mkfifo fifo; ln -s new sym; ln new hard; mv hard moved; rmdir newdir; rm fifo"
is "$RC:$OUT" "0:ran" "every one of those calls works inside the write root"
is "$(stat -c '%a %s' new):$(listing .)" "600 1:moved new sym " "and reaches the host"
rm -f new moved sym

# Extended attributes: user.* where the file system has them (the test's own
# tmp; some tmpfs kernels refuse user.*).
if python3 -c "import os,sys; os.setxattr(sys.argv[1], 'user.probe', b'1')" "$out/f" 2>/dev/null; then
    python3 -c "import os,sys; os.removexattr(sys.argv[1], 'user.probe')" "$out/f"
    echo x > in.txt
    ll -- python3 -c "
import os
for p in ['$out/f', 'in.txt']:
    for name, f in [('set', lambda: os.setxattr(p, 'user.nsfence', b'x')), ('lset', lambda: os.setxattr(p, 'user.nsfence2', b'x', follow_symlinks=False))]:
        try: f(); print(p, name, 'ok')
        except OSError as e: print(p, name, e.errno)
print('ran')"
    is "$OUT" "$out/f set 30
$out/f lset 30
in.txt set ok
in.txt lset ok
ran" "setxattr and lsetxattr: EROFS outside the write roots, performed inside"
    is "$(python3 -c "import os,sys; print(os.listxattr(sys.argv[1]))" "$out/f")" "[]" "no attribute reached the file outside"
    ll -- python3 -c "
import os
try: os.removexattr('in.txt', 'user.nsfence'); print('removed')
except OSError as e: print(e.errno)"
    is "$OUT" "removed" "removexattr works inside"
    rm -f in.txt
else
    skip "the test's tmp file system has no user.* extended attributes" "xattrs: EROFS outside, performed inside"
    skip "the test's tmp file system has no user.* extended attributes" "no attribute reached the file outside"
    skip "the test's tmp file system has no user.* extended attributes" "removexattr works inside"
fi

# --- every spelling of a path outside --------------------------------------------
reset_out
ln -s "$out" dirlink
ln -s "$out/f" filelink
ln -s "$out/dangling" danglink
ll -- sh -c "echo ran
$att open ../out/f wr,append
$att open $d/w/../out/f wr,append
$att open /proc/self/cwd/../out/f wr,append
$att open /proc/self/root$out/f wr,append
$att open /proc/\$\$/cwd/../out/f wr,append
$att open filelink wr,append
$att open dirlink/f wr,append
$att open dirlink/new wr,creat
$att open danglink wr,creat
$att open //proc/./self/../self/cwd/../out/./f wr,trunc
$att reopen $out/f path proc
$att reopen $out/f rdonly proc
$att reopen $out/f rdonly devfd
$att fd $out/f dsync-reopen
$att tmpfile . $out/tmp empty
$att tmpfile . $out/tmp proc
$att tmpfile $out tmp2 proc
$att exchange $out/f in-root-file
$att mknod $out/node fifo
$att mknod $out/node reg
$att mknod chr chr
$att open $out/f rd,trunc"
is "$OUT" "ran
open EROFS
open EROFS
open EROFS
open EROFS
open EROFS
open EROFS
open EROFS
open EROFS
open EROFS
open EROFS
reopen EROFS
reopen EROFS
reopen EROFS
fd EROFS
tmpfile EROFS
tmpfile EROFS
tmpfile EROFS
exchange EROFS
mknod EROFS
mknod EROFS
mknod EPERM
open EROFS" "relative, .., /proc/self/cwd, /proc/self/root, symlinks in, O_PATH and read-only reopens, /dev/fd, O_TMPFILE+linkat, mknod: all refused"
echo x > in-root-file
ll -- "$att" exchange "$out/f" in-root-file
is "$OUT" "exchange EROFS" "RENAME_EXCHANGE of a file outside with one inside is refused"
is "$(listing "$out"):$(cat "$out/f")" "dir f :original" "nothing outside changed"
for op in fchmod fchown fsetxattr fremovexattr futimens emptychown emptyutime emptychmod2; do
    ll -- "$att" fd "$out/f" "$op"
    is "$OUT" "fd EROFS" "$op on a read-only descriptor of a file outside: EROFS"
done
is "$(state "$out/f")" "$before" "its mode, owner and times are unchanged"
# The control: the same calls on the test's own file, without nsfence.
cp -a "$out/f" "$d/scratch"
"$att" fd "$d/scratch" fchmod >/dev/null && "$att" fd "$d/scratch" futimens >/dev/null
ok $([ "$(state "$d/scratch")" != "$before" ] && echo 0 || echo 1) "control: without nsfence the same read-only descriptor changes them"
rm -f "$d/scratch" in-root-file dirlink filelink danglink
# A file outside whose path is longer than PATH_MAX: the kernel cannot name
# it, which must not make it pass for a pipe (Landlock covers none of
# chmod, chown, utimes, xattrs).
python3 -c '
import os, sys
os.chdir(sys.argv[1])
for i in range(24):
    os.mkdir("d" * 200); os.chdir("d" * 200)
open("victim", "w").write("v")
os.utime("victim", (1000000000, 1000000000))' "$out/dir"
deep_state() { python3 -c '
import os, sys
os.chdir(sys.argv[1])
for i in range(24): os.chdir("d" * 200)
st = os.stat("victim"); print(oct(st.st_mode), int(st.st_mtime))' "$out/dir"; }
before_deep=$(deep_state)
ll -- python3 -c "
import os
os.chdir('$out/dir')
for i in range(24): os.chdir('d' * 200)
fd = os.open('victim', os.O_RDONLY)
for name, f in [('fchmod', lambda: os.chmod(fd, 0o777)), ('futimens', lambda: os.utime(fd, (5, 5))), ('chmod', lambda: os.chmod('victim', 0o777))]:
    try: f(); print(name, 'ok')
    except OSError as e: print(name, e.strerror)
print('ran')"
is "$(printf '%s\n' "$OUT" | head -2)" "fchmod Read-only file system
futimens Read-only file system" "fchmod and futimens of a file outside, more than PATH_MAX deep: EROFS"
like "$OUT" 'ran$' "the command ran (deep path)"
is "$(deep_state)" "$before_deep" "its mode and times are unchanged"
rm -rf "$out/dir/d"*
# The host's /proc is never written through the helper, whatever the write
# roots: its own /proc/PID/mem would be a descriptor into a process no
# seccomp filter binds (as root it may open it; unprivileged, procfs owns a
# non-dumpable process's files by root).
ll --allow-write / -- sh -c "echo ran; $att helper-mem; $att open /proc/self/mem rdwr; $att open /proc/self/oom_score_adj wr"
like "$OUT" "^ran
helper-mem found pid [0-9]+
helper-mem EROFS
open EROFS
open EROFS$" "with / a write root, the helper's /proc/PID/mem and the command's own /proc files stay unwritable"

# ============================================================================
# Protected names: neither writable nor creatable, their directories not
# renamable or removable, by any call or spelling (tests/integration/30 and
# 35 hold these for namespace mode).
# ============================================================================
files=".bashrc .bash_profile .zshrc .zprofile .profile .gitconfig .gitmodules .ripgreprc .mcp.json"
dirs=".vscode .idea .claude/commands .claude/agents .git/hooks"
prefix_for() { case $1 in 0) echo "" ;; 1) echo "a/" ;; 2) echo "a/b/" ;; esac; }
for level in 0 1 2; do
    p=$(prefix_for $level)
    rm -rf a .[!.]* 2>/dev/null
    mkdir -p "./${p:-.}"
    script="echo ran"
    for f in $files; do
        echo original > "$p$f"
        script="$script; echo evil >> $p$f; chmod 777 $p$f; touch $p$f; truncate -s 0 $p$f; rm -f $p$f; mv $p$f $p$f.moved"
    done
    for dd in $dirs; do
        mkdir -p "$p$dd" && echo original > "$p$dd/existing"
        script="$script; echo evil >> $p$dd/existing; echo evil > $p$dd/new; mkdir $p$dd/newdir; ln -s x $p$dd/link; rm -rf $p$dd; mv $p$dd $p$dd.moved"
    done
    echo original > "${p}.git/config"
    script="$script; echo evil >> ${p}.git/config; mv ${p}.git ${p}moved.git"
    snapshot=$(cd "./${p:-.}" && find . -printf '%p %m %s %T@\n' | sort)
    ll -- sh -c "$script"
    is "$OUT" "ran" "the command ran (protected names, level $level)"
    is "$(cd "./${p:-.}" && find . -printf '%p %m %s %T@\n' | sort)" "$snapshot" \
        "level $level (${p:-top}): every protected name and its directory unchanged: content, mode, times, names"
    like "$(rest)" 'Read-only file system' "refused with EROFS (level $level)"
done
rm -rf a .[!.]* 2>/dev/null

before=$(listing .)
script="echo ran"
for f in $files; do script="$script; echo evil > $f; mkfifo $f; ln -s /etc/passwd $f"; done
for dd in .vscode .idea .claude/commands .claude/agents .git; do script="$script; mkdir -p $dd && echo evil > $dd/x"; done
ll -- sh -c "$script"
is "$OUT" "ran" "the command ran (absent protected names)"
is "$(listing .)" "$before" "absent protected names at the top cannot be created, by any call"
# The kernel writes a core file itself, past the supervisor, in the working
# directory: a crash inside a protected directory would create a file there.
mkdir -p .git/hooks .vscode
ll -- sh -c 'ulimit -c unlimited 2>/dev/null; echo ulimit=$?; cd .git/hooks && sh -c "kill -SEGV \$\$"; cd ../../.vscode && sh -c "kill -SEGV \$\$"; echo ran'
like "$OUT" '^ulimit=[1-9]' "the core size limit cannot be raised"
like "$OUT" 'ran$' "the command ran and crashed in .git/hooks and .vscode"
is "$(listing .git/hooks)$(listing .vscode)" "" "no core file appeared in the protected directories"
rm -rf .git .vscode

# Every call and spelling on one protected file and one protected directory.
mkdir -p .git/hooks proj/sub && echo original > .bashrc && echo cfg > .git/config && echo original > proj/sub/.bashrc
echo data > plain
ln -s .bashrc rc-link
ln -s .git/hooks hooks-link
snapshot=$(find . -printf '%p %m %s %T@ %n\n' | sort)
ll -- sh -c "echo ran
$att open ./proj/../.bashrc wr,append
$att open /proc/self/cwd/.bashrc rdwr
$att open rc-link wr,trunc
$att open hooks-link/pre-commit wr,creat
$att reopen .bashrc path proc
$att reopen .bashrc rdonly devfd
$att fd .bashrc dsync-reopen
$att tmpfile . .zshrc empty
$att tmpfile .git/hooks pre-commit proc
$att tmpfile . .git/hooks/pre-commit proc
$att exchange .bashrc plain
$att exchange .git proj
$att exchange proj/sub plain
$att mknod .git/hooks/pre-commit fifo
$att open .git/config rd,trunc
mv proj proj2; mv proj/sub proj/sub2; rmdir proj; ln .bashrc hard; ln .git/config cfg
for op in fchmod fchown fsetxattr futimens emptychown emptyutime emptychmod2; do $att fd .bashrc \$op; $att fd .git/hooks \$op; done"
is "$(printf '%s\n' "$OUT" | sort | uniq -c | sed 's/^ *//' | tr '\n' ' ')" \
    "3 exchange EROFS 15 fd EROFS 1 mknod EROFS 5 open EROFS 1 ran 2 reopen EROFS 3 tmpfile EROFS " \
    "every call on a protected name (.., /proc/self/cwd, symlinks to it, reopens, O_TMPFILE+linkat, exchange, fd calls) is refused"
is "$(find . -printf '%p %m %s %T@ %n\n' | sort)" "$snapshot" "nothing changed: no name, mode, time, link count"
rm -rf .git proj plain rc-link hooks-link .bashrc

# A second name of a protected file (a hard link made before the run).
echo original > .bashrc && ln .bashrc notes.txt
ll -- sh -c 'echo ran; echo evil >> notes.txt; chmod 777 notes.txt'
is "$OUT:$(cat .bashrc):$(stat -c %a .bashrc)" "ran:original:644" "another name of a protected file is protected too"
rm -f .bashrc notes.txt

# A symlinked .bashrc: the link cannot be replaced, its target not written.
mkdir -p dotfiles && echo original > dotfiles/bashrc && ln -s dotfiles/bashrc .bashrc
ll -- sh -c 'echo ran; echo evil >> .bashrc; rm -f .bashrc; echo evil > .bashrc'
is "$OUT:$(cat dotfiles/bashrc)" "ran:original" "the target of a symlinked .bashrc is protected"
ok $([ -L .bashrc ] && echo 0 || echo 1) "and the link itself cannot be removed or replaced"
# (the plan binds such a link onto itself; it is in no list of paths)
mkdir -p sub shared/commands && ln -s ../dotfiles/bashrc sub/.bashrc && ln -s shared .claude
ll -- sh -c 'echo ran; mv sub sub2; mkdir -p sub; echo evil > sub/.bashrc; rm .claude; mkdir -p .claude/commands; echo evil > .claude/commands/x.md'
is "$OUT:$(readlink sub/.bashrc):$(readlink .claude):$(listing shared)" "ran:../dotfiles/bashrc:shared:commands " \
    "a directory holding a symlinked protected name is not renamable, a symlinked .claude not removable"
rm -rf sub shared .claude
rm -rf dotfiles .bashrc

# --- races ----------------------------------------------------------------------
# The supervisor reads the path once and the call it performs is its own: a
# thread flipping the path in memory after the call cannot redirect it.
echo original > .bashrc && echo original > "$out/f"
ll -- sh -c "$att race-open good1 .bashrc 1500; $att race-open good2 $out/f 1500"
like "$OUT" "^race-open opened [1-9][0-9]*
race-open opened [1-9][0-9]*$" "the command ran its two races (writes reached the good name)"
is "$(cat .bashrc):$(cat "$out/f")" "original:original" \
    "a path flipped to .bashrc or outside after the call never got written"
ok $([ "$(wc -l < good1)" -gt 0 ] && echo 0 || echo 1) "while the good name did ($(wc -l < good1) lines)"
rm -f good1 good2 .bashrc

# A directory on the way swapped for a symlink to a protected directory by
# a concurrent run, as fast as it can, while this run writes through it.
mkdir -p sub .git/hooks && ln -s .git/hooks evil
"$NSFENCE" --mode landlock -- "$NF_HELPERS/swapper" sub evil stop > "$d/swaps" 2>/dev/null &
swapper=$!
ll -- sh -c "$att race-open sub/pre-commit sub/pre-commit 2000; for i in \$(seq 200); do echo x > sub/pre-commit; done 2>/dev/null; echo ran"
touch stop
wait "$swapper"
like "$OUT" 'ran$' "the writer ran beside the swapper"
ok $([ "$(cat "$d/swaps")" -gt 500 ] 2>/dev/null && echo 0 || echo 1) "the swapper really swapped ($(head -c 20 "$d/swaps"))"
is "$(listing .git/hooks)" "" "nothing reached .git/hooks through the swapped name"
rm -rf sub evil .git stop

# ============================================================================
# Read denies: a directory and a file, with an allow_read carve-out.
# ============================================================================
mkdir -p "$d/sec/sub" "$d/sec/pub"
echo s1 > "$d/sec/a.txt" && echo s2 > "$d/sec/sub/b.txt" && echo public > "$d/sec/pub/c.txt" && echo s3 > "$d/file.secret"
is "$(cat "$d/sec/a.txt" "$d/file.secret")" "s1
s3" "control: the secrets are readable outside"
ll --deny-read "$d/sec" --allow-read "$d/sec/pub" --deny-read "$d/file.secret" -- sh -c "echo ran
cat $d/sec/a.txt $d/sec/sub/b.txt $d/file.secret 2>/dev/null
cat $d/sec/pub/c.txt
cat /proc/self/cwd/../sec/a.txt /proc/self/root$d/file.secret 2>/dev/null
cp -r $d/sec copied 2>/dev/null; cat copied/a.txt 2>/dev/null
ln $d/file.secret hl 2>/dev/null; cat hl 2>/dev/null
$att open $d/sec/a.txt rdwr
$att open $d/file.secret rdwr"
is "$OUT" "ran
public
open EROFS
open EROFS" "denied file and directory unreadable by any path; the carve-out readable; no read-write open"
unlike "$OUT" 's[123]' "no denied content reached the command"
rm -rf copied hl
skip_absent "names beneath a denied directory stay listable (Landlock rules grant read_dir along the path)" \
    "a denied directory lists as empty"
# Inside a write root, a denied file keeps its content too.
echo secret > s.txt && mkdir dd && echo secret > dd/s.txt
ll --deny-read "$d/w/s.txt" --deny-read "$d/w/dd" -- sh -c 'echo ran; echo x > s.txt; rm -f s.txt; mv s.txt t.txt; rm -rf dd; echo x > dd/s.txt; cat s.txt dd/s.txt'
is "$OUT:$(cat s.txt dd/s.txt | tr '\n' ' ')" "ran:secret secret " \
    "a denied file or directory inside a write root is neither read, written, moved nor removed"
rm -rf s.txt dd
# A denied file is judged by its name: renaming a directory above it would
# leave it under a name no list holds (namespace mode's mount moves with it).
mkdir -p dd && echo secret > dd/s.txt
ll --deny-read "$d/w/dd/s.txt" -- sh -c 'echo ran; mv dd dd2; echo evil > dd2/s.txt; rm -f dd2/s.txt; echo evil > dd/s.txt'
is "$OUT:$(cat dd/s.txt 2>&1)" "ran:secret" "the directory above a denied file cannot be renamed, so the file cannot be overwritten"
rm -rf dd dd2
# The host's /dev, as namespace mode's minimal one: as root a disk or loop
# device would give a denied file's content back.
# (A loop device has whole 512-byte sectors: the file is one.)
printf 'disk-secret%501s' '' > "$d/disk.secret"
if is_root && loopdev=$(losetup -f --show "$d/disk.secret" 2>/dev/null); then
    is "$(head -c 11 "$loopdev")" "disk-secret" "control: as root, the loop device over the denied file reads its content"
    ll --deny-read "$d/disk.secret" -- sh -c "echo ran; head -c 11 $loopdev 2>/dev/null; head -c 11 $d/disk.secret 2>/dev/null"
    is "$OUT" "ran" "inside, neither the denied file nor the loop device over it reads"
    losetup -d "$loopdev"
elif is_root; then
    fail "losetup could not attach a loop device over the denied file"
fi
# Only devices whose reading changes nothing (never /dev/watchdog and the
# like): the console's screens, the kernel log, block devices.
readable=""
for dev in /dev/*; do
    case $dev in
    /dev/vcs* | /dev/kmsg) [ -c "$dev" ] || continue ;;
    *) [ -b "$dev" ] || continue ;;
    esac
    timeout 2 dd if="$dev" of=/dev/null bs=8192 count=1 2>/dev/null && readable="$readable $dev"
done
ll -- sh -c "for dev in $readable; do timeout 2 dd if=\$dev of=/dev/null bs=8192 count=1 2>/dev/null && echo \$dev; done; head -c 4 /dev/urandom | wc -c; echo x > /dev/null && echo null"
is "$OUT" "4
null" "no device outside the minimal /dev reads inside (readable outside by this leg:${readable:- none}); /dev/urandom and /dev/null work"
ll -- python3 -c 'import os, pty; m, s = pty.openpty(); os.write(m, b"hi\n"); print(os.read(s, 3))'
is "$OUT" "b'hi\n'" "a new pty still opens"

# ============================================================================
# Network: only through the proxy, with namespace mode's rules and 403s.
# ============================================================================
nf_listen() { # a TCP listener of the test's own on 127.0.0.1 and ::1, logging accepts
    : > "$d/accepts"
    python3 -c '
import socket, sys, select
s4 = socket.socket(); s4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s4.bind(("127.0.0.1", 0)); s4.listen(16)
port = s4.getsockname()[1]
s6 = socket.socket(socket.AF_INET6); s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s6.bind(("::1", port)); s6.listen(16)
print(port, flush=True)
log = open(sys.argv[1], "a")
while True:
    r, _, _ = select.select([s4, s6], [], [], 60)
    if not r: break
    for s in r:
        c, a = s.accept(); log.write("accepted %s\n" % (a,)); log.flush(); c.close()
' "$d/accepts" > "$d/listen.port" &
    listener=$!
    for _ in $(seq 50); do [ -s "$d/listen.port" ] && break; sleep 0.1; done
    lport=$(cat "$d/listen.port")
}
nf_listen
"$att" connect 127.0.0.1 "$lport" tcp >/dev/null
for _ in $(seq 20); do [ -s "$d/accepts" ] && break; sleep 0.1; done
is "$(wc -l < "$d/accepts")" 1 "control: the test's own listener on 127.0.0.1 takes a direct connection"
: > "$d/accepts"
ll -- sh -c "echo ran
$att connect 127.0.0.1 $lport tcp
$att connect ::1 $lport tcp
$att connect ::ffff:127.0.0.1 $lport tcp
$att connect $NF_UP4 80 tcp
$att connect $NF_UP6 80 tcp
$att udp 127.0.0.1 $lport
$att udp $NF_UP4 53
$att fastopen 127.0.0.1 $lport
$att fastopen $NF_UP4 80
python3 -c 'import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen()' 2>&1 | tail -1
python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)' 2>&1 | tail -1
python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)' 2>&1 | tail -1
python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)' 2>&1 | tail -1"
is "$OUT" "ran
connect ECONNREFUSED
connect ECONNREFUSED
connect ECONNREFUSED
connect ENETUNREACH
connect ENETUNREACH
udp EPERM
udp EPERM
fastopen EOPNOTSUPP
fastopen EOPNOTSUPP
PermissionError: [Errno 13] Permission denied
PermissionError: [Errno 1] Operation not permitted
PermissionError: [Errno 1] Operation not permitted
PermissionError: [Errno 1] Operation not permitted" \
    "TCP to loopback (v4, v6, v4-mapped), to the upstream (v4, v6), UDP, fast open, listen, raw, netlink, packet: all refused"
sleep 0.3
is "$(cat "$d/accepts")" "" "nothing reached the test's listener"
like "$ERR" "deny network-outbound 127.0.0.1:$lport \\(a direct connection; only the proxy is reachable\\)
deny network-outbound \\[::1\\]:$lport " "direct connections are reported"

# Landlock's TCP rules know TCP alone: an MPTCP or SCTP stream would connect
# past them, and with unix sockets allowed the supervisor lets an AF_UNIX
# connect run as asked, so a thread switching the address to an internet
# one after the check would connect directly.
ll -- sh -c "$att connect 127.0.0.1 $lport mptcp; $att connect 127.0.0.1 $lport sctp"
is "$OUT" "socket EPERM
socket EPERM" "MPTCP and SCTP stream sockets cannot be made"
ll --allow-all-unix-sockets -- sh -c "$att race-connect 127.0.0.1 $lport 1500 mptcp; $att race-connect 127.0.0.1 $lport 1500 tcp"
like "$OUT" "^socket EPERM
race-connect never-connected after [0-9]+ tries$" \
    "with unix sockets allowed, a connect flipped from unix to TCP after the check connects nothing"
sleep 0.3
is "$(cat "$d/accepts")" "" "and nothing reached the test's listener"
# The proxy, the same as in namespace mode.
ll --allow-domain allowed.test -- curl -sS http://allowed.test/index.html
is "$OUT" "hello from upstream" "an allowed domain is reached through the proxy (HTTP_PROXY)"
is "$(rest)" "" "and nothing is reported"
ll --allow-domain allowed.test -- sh -c 'curl -sSk https://allowed.test/big.bin | sha256sum | cut -d" " -f1'
is "$OUT" "$NF_BIG_SHA" "1 MiB over HTTPS (CONNECT) arrives intact"
ll --allow-domain allowed.test -- sh -c 'curl -sS --socks5-hostname localhost:1080 http://allowed.test/big.bin | sha256sum | cut -d" " -f1'
is "$OUT" "$NF_BIG_SHA" "and through SOCKS5"
ll --allow-domain v6.test -- curl -sS -x 'http://[::1]:3128' http://v6.test/index.html
is "$OUT" "hello from upstream" "an IPv6 upstream, through the proxy's ::1 endpoint"
ll --allow-domain allowed.test -- curl -sS --noproxy '*' -m 5 http://allowed.test/index.html
ok $([ "$RC" -ne 0 ] && [ "$OUT" = "" ] && echo 0 || echo 1) "curl told to skip the proxy reaches nothing, allowed domain or not"
for mode in namespaces landlock; do
    nsf --mode "$mode" --allow-domain allowed.test -- sh -c "curl -sS -i http://other.test/; $raw 127.0.0.1 3128 's:CONNECT other.test:443 HTTP/1.1\r\nHost: other.test:443\r\n\r\n' all; $raw 127.0.0.1 1080 x:050100 r:2 x:050100030a6f746865722e74657374 x:0050 r:10; curl -sS -o /dev/null -w '%{http_code}\n' http://loop.test/"
    eval "out_$mode=\$OUT"
    eval "vio_$mode=\$(printf '%s\n' \"\$ERR\" | sed -n '/<sandbox_violations>/,\$p')"
done
like "$out_landlock" 'HTTP/1.1 403 Forbidden' "a denied host gets 403 Forbidden"
like "$out_landlock" 'X-Proxy-Error: blocked-by-allowlist' "with X-Proxy-Error: blocked-by-allowlist"
like "$out_landlock" 'Connection blocked by network allowlist' "and the body says why"
is "$out_landlock" "$out_namespaces" "HTTP, CONNECT, SOCKS5 and the address guard answer byte for byte as in namespace mode"
is "$(printf '%s\n' "$vio_landlock" | grep -v '^mode landlock ')" "$vio_namespaces" \
    "and report the same violations (after the line naming the mode)"
kill "$listener" 2>/dev/null; wait "$listener" 2>/dev/null

# ============================================================================
# No unix sockets; the abstract namespace is scoped even when they are
# allowed.
# ============================================================================
ll -- python3 -c '
import socket
try: socket.socket(socket.AF_UNIX); print("made")
except OSError as e: print(e.errno)
a, b = socket.socketpair(); a.send(b"x"); print(b.recv(1).decode())'
is "$OUT" "1
x" "socket(AF_UNIX) is EPERM; socketpair, which reaches nothing, works"
python3 -c '
import socket, time
s = socket.socket(socket.AF_UNIX); s.bind("\0nsfence-67-'$$'"); s.listen(1); time.sleep(20)' &
abstract=$!
sleep 0.3
connect_abstract='import socket
s = socket.socket(socket.AF_UNIX)
try: s.connect("\0nsfence-67-'$$'"); print("connected")
except OSError as e: print(e.errno)'
python3 -c "$connect_abstract" > "$d/abs.out"
is "$(cat "$d/abs.out")" "connected" "control: the test's abstract socket takes a connection"
ll --allow-all-unix-sockets -- python3 -c "$connect_abstract"
is "$OUT" "1" "with unix sockets allowed, the host's abstract sockets stay out of reach (Landlock scope)"
kill "$abstract" 2>/dev/null; wait "$abstract" 2>/dev/null
# io_uring opens, renames, links and sets xattrs where no seccomp filter
# sees it: refused in Landlock mode whatever the unix-socket setting.
echo original > .bashrc
ll --allow-all-unix-sockets -- sh -c "echo ran; $att uring-open .bashrc; $att uring-open plain-new"
is "$OUT:$(cat .bashrc)" "ran
uring-open EPERM
uring-open EPERM:original" "with unix sockets allowed, io_uring stays refused: .bashrc is not written through it"
rm -f .bashrc

# ============================================================================
# No signals or ptrace to anything outside: the test's shell, nsfence, init.
# ============================================================================
sleep 120 &
victim=$!
ll -- sh -c "echo ran
kill -0 $$ 2>/dev/null; echo shell=\$?
kill -0 \$PPID 2>/dev/null; echo init=\$?
kill -0 \$(cut -d' ' -f4 /proc/\$PPID/stat) 2>/dev/null; echo nsfence=\$?
kill -9 $victim 2>/dev/null; echo victim=\$?
$att sigio $victim
$att ptrace $victim
$att ptrace \$PPID
cat /proc/$victim/environ 2>/dev/null | wc -c"
is "$OUT" "ran
shell=1
init=1
nsfence=1
victim=1
sigio EPERM
ptrace EPERM
ptrace EPERM
0" "kill, SIGIO through F_SETOWN, ptrace and /proc/PID/environ of processes outside are all refused"
ok $(kill -0 "$victim" 2>/dev/null && echo 0 || echo 1) "the process outside is still alive"
kill "$victim"; wait "$victim" 2>/dev/null
skip_absent "other processes are visible in /proc (no PID namespace)" "the command sees only its own processes"
skip_absent "the host's hostname (no UTS namespace)" "the command has a hostname of its own"
skip_absent "the host's System V IPC and POSIX message queues (no IPC namespace)" "the command has IPC objects of its own"
skip_absent "no private /dev/shm" "/dev/shm is the command's own"
skip_absent "no private /tmp (TMPDIR is one)" "/tmp is the command's own"
skip_absent "nothing may listen (no network namespace to listen in)" "a server inside listens on its own loopback"

# ============================================================================
# Failing closed: the helper gone, a FIFO that blocks.
# ============================================================================
# The helper is in the command's domain, one layer above it: the command
# cannot signal it (Landlock scoping), so it cannot stop or kill what
# performs its writes.
ll -- sh -c "h=\$($att helper-mem 2>/dev/null | sed -n 's/^helper-mem found pid //p'); kill -9 \$h 2>/dev/null; echo kill=\$?; kill -STOP \$h 2>/dev/null; echo stop=\$?; echo x > after; echo write=\$?"
is "$OUT" "kill=1
stop=1
write=0" "the command can neither kill nor stop its helper, and writes go on"
rm -f after
# Started from outside, then: the helper killed, the command runs on and
# every write is refused; the helper stopped, the writes wait and the
# host side's event loop (the proxy) does not.
helper_of() { # helper_of CMD_PID: the other child of the command's init
    local init
    init=$(ps -o ppid= -p "$1" | tr -d ' ')
    pgrep -P "$init" | grep -vx "$1" | head -1
}
wait_for() { for _ in $(seq 200); do [ -s "$1" ] && grep -q "$2" "$1" && return 0; sleep 0.05; done; return 1; }
"$NSFENCE" --mode landlock -- sh -c 'echo $$ > cmd.pid; while [ ! -e go ]; do sleep 0.05; done; echo x > after 2>/dev/null; echo write=$?; echo ran' >out.txt 2>/dev/null &
bg=$!
wait_for cmd.pid .
kill -9 "$(helper_of "$(cat cmd.pid)")"
touch go
wait "$bg"
is "$(cat out.txt)" "write=2
ran" "with its helper killed from outside, the command runs on and every write is refused (fails closed)"
ok $([ ! -e after ] && echo 0 || echo 1) "nothing was written"
rm -f cmd.pid go out.txt
"$NSFENCE" --mode landlock -- sh -c 'echo $$ > cmd.pid; while [ ! -e go ]; do sleep 0.05; done
for i in $(seq 60); do (echo x > f$i) 2>/dev/null & done
sleep 1; timeout 10 curl -sS -i http://other.test/ | head -1; wait; ls f* | wc -l' >out.txt 2>/dev/null &
bg=$!
wait_for cmd.pid .
h=$(helper_of "$(cat cmd.pid)")
kill -STOP "$h"
touch go
wait_for out.txt HTTP
kill -CONT "$h"
wait "$bg"
is "$(tr -d '\r' < out.txt)" "HTTP/1.1 403 Forbidden
60" "with the helper stopped from outside and 60 writes waiting on it, the proxy still answers; the writes finish when it resumes"
rm -f cmd.pid go out.txt
rm -f f*
ll -- sh -c 'mkfifo p || exit; (echo x > p; echo fifo=$? >> log) & sleep 0.5; echo y > other && echo other >> log; cat p >> log; wait; cat log'
is "$(printf '%s\n' "$OUT" | head -1):$(printf '%s\n' "$OUT" | sort | tr '\n' ' ')" "other:fifo=0 other x " \
    "a FIFO opened for writing waits for its reader, and other writes go on meanwhile"
rm -f p other log

# ============================================================================
# Nothing outlives nsfence; TMPDIR is private and goes with the run.
# ============================================================================
ll -- sh -c 'echo "$TMPDIR"; stat -c "%a %U" "$TMPDIR"; echo x > "$TMPDIR/f" && cat "$TMPDIR/f"; (setsid sh -c "sleep 300 & echo \$! > daemon1" &); for i in $(seq 200); do [ -s daemon1 ] && break; sleep 0.05; done'
tmp=$(printf '%s\n' "$OUT" | head -1)
like "$tmp" "^$d/tmp/nsfence-" "TMPDIR is a directory of the run's own, in nsfence's TMPDIR"
is "$(printf '%s\n' "$OUT" | sed -n 2,3p | tr '\n' ' ')" "700 $(id -un) x " "private (0700, the caller's) and writable"
ok $([ ! -e "$tmp" ] && echo 0 || echo 1) "and removed after the run"
sleep 0.2
ok $([ -s daemon1 ] && ! kill -0 "$(cat daemon1)" 2>/dev/null && echo 0 || echo 1) \
    "a daemonised child (setsid, double fork) does not outlive the command"
ll -- sh -c 'echo x > /tmp/nsfence-67-direct; echo tmp=$?'
is "$OUT" "tmp=2" "/tmp itself is not writable (only TMPDIR is)"
ll -- sh -c 'echo "$TMPDIR"; cd "$TMPDIR" && mkdir -p locked/inner && touch locked/inner/f && chmod 000 locked/inner locked && mkfifo fifo && ln -s / rootlink && touch ro && chmod 000 ro'
tmp=$(printf '%s\n' "$OUT" | head -1)
ok $([ -n "$tmp" ] && [ ! -e "$tmp" ] && echo 0 || echo 1) "a TMPDIR with a chmod 000 tree, a FIFO and a link to / is removed"
ok $([ -d /etc ] && [ -d /usr ] && echo 0 || echo 1) "and the link was not followed"
ll -- sh -c 'echo "$TMPDIR"; cd "$TMPDIR" && for i in $(seq 100); do mkdir d && cd d || exit; done; echo deep'
tmp=$(printf '%s\n' "$OUT" | head -1)
is "$(printf '%s\n' "$OUT" | tail -1)" "deep" "the command made a tree 100 deep in TMPDIR"
ok $([ -n "$tmp" ] && [ ! -e "$tmp" ] && echo 0 || echo 1) "and the TMPDIR is removed all the same"

"$NSFENCE" --mode landlock -- sh -c 'echo "$TMPDIR" > tmp2; (setsid sh -c "sleep 300 & echo \$! > daemon2" &); sleep 300' 2>/dev/null &
nsf_pid=$!
for _ in $(seq 50); do [ -s daemon2 ] && break; sleep 0.1; done
{ kill -9 "$nsf_pid" && wait "$nsf_pid"; } 2>/dev/null # bash's "Killed" notice too
for _ in $(seq 50); do kill -0 "$(cat daemon2)" 2>/dev/null || break; sleep 0.1; done
ok $([ -s daemon2 ] && ! kill -0 "$(cat daemon2)" 2>/dev/null && echo 0 || echo 1) \
    "kill -9 of nsfence: the daemonised child dies too"
for _ in $(seq 50); do [ -e "$(cat tmp2)" ] || break; sleep 0.1; done
ok $([ -s tmp2 ] && [ ! -e "$(cat tmp2)" ] && echo 0 || echo 1) "and the run's TMPDIR is removed (by init, the host side being gone)"
rm -f daemon1 daemon2 tmp2

is "$(listing "$d/tmp")" "" "no run left anything where the private TMPDIRs are made"

summary="$absent properties skipped as absent in Landlock mode"
diag "$summary"
done_testing
