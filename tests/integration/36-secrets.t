#!/bin/bash
# What the caller holds outside its files stays out of the sandbox: the keys
# in its session keyring (Kerberos ccaches live there) can be neither read
# nor changed from inside, and a second procfs mounted elsewhere in the host
# tree (a chroot's /proc) does not show the host's processes.
# modes: landlock

# The whole file runs in a private session keyring of its own, so the keys it
# adds die with it. keyctl announces the join on stderr: dropped.
if [ -z "${NF_KEY_SESSION:-}" ]; then
    if ! command -v keyctl >/dev/null; then
        printf '1..1\nnot ok 1 - keyctl is missing (Debian package keyutils)\n'
        exit 1
    fi
    if ! keyctl session - true 2>/dev/null; then
        printf '1..1\nnot ok 1 - cannot join a private session keyring (keyctl session -)\n'
        exit 1
    fi
    NF_KEY_SESSION=1 keyctl session - bash -c 'exec 2>&3 3>&-; exec bash "$0"' "$0" 3>&2 2>/dev/null
    exit
fi
. "$(dirname "$0")/lib.sh"

nf_tmpdir d
cd "$d"

# --- the caller's keyrings ---------------------------------------------------------
secret="nsfence-secret-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
key=$(keyctl add user nsfence-test "$secret" @s)
like "$key" '^[0-9]+$' "a user key holding a secret is in the test's session keyring"
# Possessor-only: only a process that holds this session keyring sees it,
# even in /proc/keys.
pkey=$(keyctl add user nsfence-possessed x @s) && keyctl setperm "$pkey" 0x3f000000

# What a command might try to learn or change the secret with; each attempt
# ends with a line "rc=STATUS".
try='eval keyctl $a 2>&1; r=$?; echo; echo "rc=$r"'
reads="for a in 'print $key' 'read $key' 'pipe $key' 'show @s' 'request user nsfence-test' \
'search @s user nsfence-test'; do $try; done; echo possessed=\$(grep -c nsfence-possessed /proc/keys)"
writes="for a in 'update $key stolen' 'add user nsfence-test stolen @s' 'setperm $key 0x3f3f3f3f' \
'unlink $key @s' 'revoke $key' 'invalidate $key'; do $try; done"

out=$(sh -c "$reads")
like "$out" "$secret" "control: without nsfence, the same reads show the secret"
is "$(printf '%s\n' "$out" | grep -c '^rc=0$')" 6 "control: and every read succeeds"
like "$out" 'possessed=1' "control: the possessor-only key is listed in /proc/keys"

nsf -- sh -c "$reads; $writes; echo ran"
like "$OUT" 'ran$' "the command ran (keyrings)"
unlike "$OUT$ERR" "$secret" "inside, no read shows the secret"
is "$(printf '%s\n' "$OUT" | grep -c '^rc=0$')" 0 "inside, every read and write of the key fails"
is "$(printf '%s\n' "$OUT" | grep -c 'Operation not permitted')" 12 "each with EPERM"
like "$OUT" 'possessed=0' "the sandbox does not hold the caller's session keyring (/proc/keys)"
is "$(grep -c nsfence-test /proc/keys)" 1 "control: /proc/keys lists the caller's key by name"
nsf -- sh -c 'echo ran; cat /proc/keys /proc/key-users | wc -c'
absent_in_landlock "process visibility"
is "$(echo $OUT)" "ran 0" "inside, /proc/keys and /proc/key-users list nothing (no names, no sizes)"
is "$(keyctl print "$key" 2>&1)" "$secret" "the key on the host still holds the secret"
is "$(keyctl search @s user nsfence-test 2>&1)" "$key" "and is still in the caller's session keyring"
is "$(keyctl rdescribe "$key" 2>&1 | cut -d';' -f4)" "3f010000" "with its permissions unchanged"
is "$(keyctl print "$pkey" 2>&1)" "x" "the possessor-only key is unchanged too"

nsf -- sh -c 'keyctl add user own value @s; echo "rc=$?"'
like "$OUT" 'rc=1' "the command cannot make keys of its own either"

# When the user's key quota is full, init cannot join a fresh session keyring:
# the run goes on, says so under -v, and seccomp alone keeps the keys out.
if is_root; then
    skip "root's key quota (kernel.keys.root_maxkeys) is too large to fill" \
        "a full key quota: the run goes on, the keys stay out"
else
    # A session of its own, so that the keys filling the quota die with it.
    keyctl session - bash -c '
        k=$(keyctl add user nsfence-test "$1" @s) || exit 1
        i=0
        while keyctl add user "fill$i" x @s >/dev/null 2>"$0.fill"; do
            i=$((i + 1))
            [ "$i" -lt 100000 ] || break
        done
        grep -q "quota" "$0.fill" && echo quota-full
        timeout -k 5 60 "$NSFENCE" -v -- sh -c "keyctl print $k 2>&1; echo ran" >"$0.out" 2>"$0.err"
        echo "rc=$?"' "$d/quota" "$secret" >"$d/quota.log" 2>/dev/null
    like "$(cat "$d/quota.log")" 'quota-full' "the user's key quota is full (control: add_key says so)"
    like "$(cat "$d/quota.log")" '^rc=0$' "with a full key quota, nsfence runs the command"
    like "$(cat "$d/quota.out")" '^ran$' "and the command runs to its end"
    unlike "$(cat "$d/quota.out" "$d/quota.err")" "$secret" "and the secret stays out"
    like "$(cat "$d/quota.out")" 'Operation not permitted' "refused by seccomp"
    like "$(cat "$d/quota.err")" '^nsfence: no fresh session keyring \(Disk quota exceeded\)' \
        "-v says there is no fresh session keyring, and why"
    rm -f "$d"/quota*
fi

# --- a second procfs in the host tree -----------------------------------------------
# A chroot's or a container's /proc mounted on the host shows every host
# process, command line included, to whoever can read the host tree. The
# root leg mounts one in a private mount namespace (the host's processes);
# the unprivileged leg needs a user and PID namespace of its own to mount a
# procfs at all (then it shows that namespace's processes).
p="$d/chroot/proc"
mkdir -p "$p"
canary="nsfence-canary-$RANDOM$RANDOM"
if is_root; then
    ns=(unshare -m --propagation private)
else
    ns=(unshare -Urmpf --mount-proc)
fi
# in_procns CMD...: CMD where a procfs is mounted on $p and a process whose
# command line is "$canary 60" runs; stdout in $OUT, stderr in $ERR, status
# in $RC.
in_procns() {
    local o e
    o=$(mktemp) e=$(mktemp)
    timeout -k 5 60 "${ns[@]}" bash -c '
        mount -t proc proc "$0" || exit 99
        (exec -a "$1" sleep 60) &
        c=$!
        for _ in $(seq 200); do
            case "$(tr "\0" " " < "$0/$c/cmdline" 2>/dev/null)" in "$1 60 ") break ;; esac
            sleep 0.02
        done
        shift
        "$@"
        rc=$?
        kill "$c"
        exit "$rc"' "$p" "$canary" "$@" >"$o" 2>"$e"
    RC=$?
    OUT=$(cat "$o")
    ERR=$(cat "$e")
    rm -f "$o" "$e"
}
# How many processes $p lists, and how many of their command lines are the
# canary's. The canary comes in the environment, so that no command line but
# its own holds it.
look='echo ran; n=0; c=0
for f in "$P"/[0-9]*; do
    [ -d "$f" ] || continue
    n=$((n + 1))
    [ "$(tr "\0" " " < "$f/cmdline" 2>/dev/null)" = "$CANARY 60 " ] && c=$((c + 1))
done
echo "processes=$n canary=$c"'
export P="$p" CANARY="$canary"

in_procns sh -c "$look"
is "$RC" 0 "control: a procfs can be mounted on $p"
like "$OUT" '^processes=[1-9][0-9]* canary=1$' \
    "control: without nsfence, it lists processes and shows their command lines"

in_procns "$NSFENCE" -- sh -c "$look"
like "$OUT" '^ran$' "the command ran (second procfs)"

absent_in_landlock "process visibility"
like "$OUT" '^processes=0 ' "inside, $p lists no process"
like "$OUT" ' canary=0$' "inside, no command line shows through $p"
unset P CANARY

done_testing
