#!/bin/bash
# Shipping: doctor, refusals that explain themselves, stage timings, the
# static binary alone in an empty root, install and uninstall.
# fixture: network
. "$(dirname "$0")/lib.sh"

nf_tmpdir d
cd "$d"

# --- doctor ------------------------------------------------------------------------
nsf doctor
like "$OUT" '^ok +kernel ' "doctor reports the kernel first"
unlike "$OUT" '^fail' "on this machine no check fails"
nonok=$(printf '%s\n' "$OUT" | grep -cE '^(warn|fail) ')
fixes=$(printf '%s\n' "$OUT" | grep -cE '^ +fix: ')
is "$fixes" "$nonok" "every warn or fail comes with its fix"
nsf doctor --json
keys=$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
want = ["kernel", "userns_max", "userns_clone", "apparmor_userns", "userns_probe", "seccomp_actions",
        "user_notif", "nested", "mount_api", "pidfd", "landlock", "io_uring", "tiocsti", "cgroup_v2",
        "container"]
missing = [k for k in want if k not in d]
bad = [k for k, v in d.items() if v["status"] not in ("ok", "warn", "fail") or
       (v["status"] != "ok" and not v["fix"])]
print("missing=%s bad=%s" % (missing, bad))')
is "$keys" "missing=[] bad=[]" "doctor --json parses and has every key, each explained"

# --- refusals ------------------------------------------------------------------------
nsf -- true
base=$RC
"$NF_HELPERS/noclone" "$NSFENCE" -- sh -c 'echo SHOULD-NOT-RUN' >"$d/out" 2>"$d/err"
is "$?" 125 "under a seccomp profile refusing new user namespaces (like Docker's): exit 125"
is "$(cat "$d/out")" "" "and nothing ran"
like "$(cat "$d/err")" '^nsfence: cannot create the sandbox.s namespaces \(clone\): Operation not permitted \((this process runs in .* whose seccomp profile refuses clone\(CLONE_NEWUSER\)|a seccomp filter on this process refuses clone\(CLONE_NEWUSER\)) \([0-9]+ filter.*: .*\)$' \
    "the refusal names the seccomp filter and the fix, in one line"
unshare -Ur sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -- sh -c "echo SHOULD-NOT-RUN"' "$NSFENCE" >"$d/out" 2>"$d/err"
is "$?" 125 "inside a user namespace whose max_user_namespaces is 0: exit 125"
is "$(cat "$d/out")" "" "and nothing ran"
like "$(cat "$d/err")" 'No space left on device \(user namespaces are disabled \(user.max_user_namespaces = 0\)' \
    "the refusal says user namespaces are disabled, and how to enable them"
is "$base" 0 "(the same binary runs normally outside those)"

# --- timings -------------------------------------------------------------------------
nsf --timings -- true
for stage in "policy and plan" "clone and id maps" "mounts" "lo" "endpoints" "filters" "exec" "teardown"; do
    like "$ERR" "timing $stage.* [0-9]+ us" "--timings reports '$stage' in microseconds"
done
nsf -- true
is "$ERR" "" "without --timings nothing is printed"

# --- the static binary, alone in an empty root ------------------------------------------
# Only that file and a static busybox; /proc and /dev mounted; the root a mount
# point; the proxy resolves allowed.test from that root's own /etc/hosts.
st="$(dirname "$NSFENCE")/nsfence-static"
bb="$(dirname "$NSFENCE")/busybox"
if [ -x "$st" ] && [ -x "$bb" ]; then
    r="$d/root"
    mkdir -p "$r/bin" "$r/proc" "$r/dev" "$r/tmp" "$r/etc" "$r/work"
    cp "$st" "$r/bin/nsfence"
    cp "$bb" "$r/bin/busybox"
    for a in sh echo cat wget ls; do ln -s busybox "$r/bin/$a"; done
    printf '127.0.0.1 localhost\n%s allowed.test\n' "$NF_UP4" > "$r/etc/hosts"
    echo "nameserver 127.0.0.1" > "$r/etc/resolv.conf"
    # pivot_root, not chroot: the kernel refuses new user namespaces to a
    # chrooted process.
    out=$(unshare -Urmpf --propagation private sh -c '
        mount --bind "$0" "$0" && mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" &&
        mkdir -p "$0/old" && cd "$0" && pivot_root . old &&
        exec /bin/busybox sh -c "busybox umount -l /old && busybox rmdir /old && cd /work &&
            /bin/nsfence --allow-domain allowed.test -- /bin/sh -c \"echo inside > /work/made;
                wget -q -O - http://allowed.test/index.html; echo x > /bin/evil\""' "$r" 2>&1)
    like "$out" 'hello from upstream' "nsfence-static runs alone in an empty root, and its proxy resolves from that root's /etc/hosts"
    like "$out" 'Read-only file system' "there too, the root is read-only inside"
    is "$(cat "$r/work/made" 2>/dev/null)" "inside" "and the working directory writable"
    ok $([ ! -e "$r/bin/evil" ] && echo 0 || echo 1) "nothing reached the root's /bin"
    if is_root; then
        like "$(file -b "$st")" 'pie executable, .*static-pie linked' \
            "file says the binary is a static PIE (no loader, addresses randomised)"
        like "$(ldd "$st" 2>&1)" 'statically linked' "ldd says it is statically linked"
        like "$(file -b "$NF_TOP/nsfence" 2>/dev/null)" 'static-pie linked' "so is the normal build"
    fi
else
    fail "nsfence-static and busybox are needed (make static; apt-get install busybox-static)"
fi

# --- install ---------------------------------------------------------------------------
if is_root && [ -f "$NF_TOP/Makefile" ]; then
    dest="$d/dest"
    mkdir -p "$dest/etc/apparmor.d"
    make -s -C "$NF_TOP" install DESTDIR="$dest" PREFIX=/usr/local >/dev/null 2>&1
    ok $([ -x "$dest/usr/local/bin/nsfence" ] && [ -f "$dest/usr/local/share/man/man1/nsfence.1" ] && echo 0 || echo 1) \
        "make install puts the binary and the man page under PREFIX"
    like "$(cat "$dest/etc/apparmor.d/nsfence" 2>/dev/null)" '^profile nsfence /usr/local/bin/nsfence ' \
        "and an AppArmor profile for the installed binary"
    like "$(cat "$dest/etc/apparmor.d/nsfence" 2>/dev/null)" '^  userns,$' "granting it userns"
    make -s -C "$NF_TOP" uninstall DESTDIR="$dest" PREFIX=/usr/local >/dev/null 2>&1
    is "$(find "$dest" -type f | wc -l)" 0 "make uninstall removes them"
fi

done_testing
