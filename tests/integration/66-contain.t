#!/bin/bash
# nsfence inside an emulated container: helpers/contain loads the engines'
# own seccomp profiles (as their Debian packages ship them) the way runc
# does and drops to the engine's default capabilities. Docker's profile
# refuses new namespaces: nsfence says so and runs nothing, and --mode
# landlock (or auto) runs the command confined without them; Podman's allows
# them, and nsfence works there in namespace mode.
# fixture: seccomp-profiles
# fixture: network
. "$(dirname "$0")/lib.sh"

# tests/leg copies them from .deps/profiles, where make deps extracts them
# from golang-github-docker-docker-dev and golang-github-containers-common.
docker_profile=${NF_PROFILES:-}/docker-default.json
podman_profile=${NF_PROFILES:-}/podman-seccomp.json
contain="$NF_HELPERS/contain"

for f in "$docker_profile" "$podman_profile"; do
    [ -r "$f" ] || skip_file "$(basename "$f") is missing: make deps puts it in .deps/profiles"
done

# Run a command; stdout in $OUT, stderr in $ERR, status in $RC, as nsf does.
run() {
    local o e
    o=$(mktemp) e=$(mktemp)
    timeout -k 5 60 "$@" >"$o" 2>"$e"
    RC=$?
    OUT=$(cat "$o")
    ERR=$(cat "$e")
    rm -f "$o" "$e"
}

filters() { awk '/^Seccomp_filters:/ { print $2 }' /proc/self/status; }

# --- the emulation itself ----------------------------------------------------------------
run "$contain" "$docker_profile" sh -c 'echo ran'
is "$RC:$OUT" "0:ran" "a plain command runs under Docker's profile"
run "$contain" "$docker_profile" cat /proc/self/status
state=$(printf '%s\n' "$OUT" | awk '/^(CapEff|CapBnd|NoNewPrivs|Seccomp_filters):/ { printf "%s%s ", $1, $2 }')
if is_root; then
    # a80425fb: Docker's 14 default capabilities, as `docker run` shows them
    is "$state" "CapEff:00000000a80425fb CapBnd:00000000a80425fb NoNewPrivs:0 Seccomp_filters:$(($(filters) + 1)) " \
        "as root: Docker's capabilities, one more filter, no_new_privs unset (as Docker leaves it)"
else
    like "$state" "^CapEff:0000000000000000 .*NoNewPrivs:1 Seccomp_filters:$(($(filters) + 1)) $" \
        "unprivileged: no capabilities, one more filter, no_new_privs set (needed to load it)"
fi
run "$contain" "$docker_profile" unshare -Ur true
is "$RC" 1 "unshare -Ur fails under Docker's profile"
like "$ERR" 'unshare failed: Operation not permitted' "with EPERM, as in a Docker container"

# --- Docker: refused, explained, nothing runs ---------------------------------------
run "$contain" "$docker_profile" "$NSFENCE" -- sh -c 'echo SHOULD-NOT-RUN'
is "$RC:$OUT" "125:" "nsfence under Docker's profile: exit 125, nothing ran"
like "$ERR" '^nsfence: cannot create the sandbox.s namespaces \(clone\): Operation not permitted \((this process runs in .* whose seccomp profile refuses clone\(CLONE_NEWUSER\)|a seccomp filter on this process refuses clone\(CLONE_NEWUSER\)) \([0-9]+ filter' \
    "the refusal names the seccomp profile that refuses clone(CLONE_NEWUSER)"

# --- Podman: its profile allows namespaces -------------------------------------------
run "$contain" --caps=podman "$podman_profile" unshare -Ur true
is "$RC" 0 "unshare -Ur works under Podman's profile"
run "$contain" --caps=podman "$podman_profile" "$NSFENCE" -- sh -c 'echo ran'
is "$RC:$OUT" "0:ran" "nsfence runs a command under Podman's profile"
is "$ERR" "" "and reports nothing"
run "$contain" --caps=podman "$podman_profile" "$NSFENCE" -- sh -c 'echo x > /etc/nsfence-contain 2>/dev/null || echo refused'
is "$OUT" "refused" "the sandbox confines there: the root is read-only inside"
ok $([ ! -e /etc/nsfence-contain ] && echo 0 || echo 1) "nothing reached the host's /etc"

# --- Docker: Landlock mode works where namespaces are refused --------------------------
nf_tmpdir w
cd "$w" || exit 1
printf 'rc\n' > .bashrc
run "$contain" "$docker_profile" "$NSFENCE" --mode landlock -- sh -c '
    echo ran; echo made > inside && cat inside
    echo x > /etc/nsfence-contain || echo refused-etc
    echo x >> .bashrc || echo refused-rc
    touch .profile || echo refused-new-rc
    chmod 666 /etc/hostname || echo refused-chmod
    echo t > "$TMPDIR/t" && cat "$TMPDIR/t"
    python3 -c "import socket; socket.socket(socket.AF_UNIX)" 2>/dev/null || echo refused-unix
    curl -s -o /dev/null -w "%{http_connect}\n" https://example.org; true'
is "$RC" 0 "under Docker's profile, --mode landlock runs the command"
matches "$OUT" '^ran
made
refused-etc
refused-rc
refused-new-rc
refused-chmod
t
refused-unix
403$' "writes only in the write roots and TMPDIR, protected names held, no unix socket, the proxy's 403"
is "$(cat .bashrc)" "rc" "the protected .bashrc is unchanged"
ok $([ ! -e .profile ] && [ ! -e /etc/nsfence-contain ] && echo 0 || echo 1) \
    "nothing was created at a protected name or outside the write roots"
like "$ERR" '^nsfence: Landlock mode \(ABI [0-9]+\), weaker than namespaces: ' "one line says Landlock mode is weaker"
like "$ERR" '^deny network-outbound example.org:443 \(host is not on the allow list\)$' \
    "the violation block names the refused host"
like "$ERR" '^mode landlock ' "and the mode"
mkdir secret && echo s3cret > secret/key && echo public > pub
run "$contain" "$docker_profile" "$NSFENCE" --mode landlock --deny-read "$w/secret" --allow-domain allowed.test -- sh -c '
    echo ran; cat pub; cat secret/key || echo refused-read
    curl -sS http://allowed.test/index.html
    curl -sSk https://allowed.test/index.html
    curl -sS --noproxy "*" -m 5 http://allowed.test/index.html || echo refused-direct'
matches "$OUT" '^ran
public
refused-read
hello from upstream
hello from upstream
refused-direct$' "under Docker's profile: a denied read refused, an allowed domain reached through the proxy (HTTP and HTTPS), never directly"
run "$contain" "$docker_profile" "$NSFENCE" --mode auto -v -- sh -c 'echo ran'
is "$RC:$OUT" "0:ran" "under Docker's profile, --mode auto runs the command"
like "$ERR" '^nsfence: --mode auto: user namespaces are refused here: Landlock mode$' "in Landlock mode"
run "$contain" "$docker_profile" "$NSFENCE" -- true
like "$ERR" 'or run with --mode landlock, which needs no namespace but is weaker' \
    "the namespace refusal points at --mode landlock"
run "$contain" "$docker_profile" "$NSFENCE" doctor
like "$OUT" '^warn  mode_auto +--mode auto picks landlock here' "doctor says auto would pick Landlock"
like "$OUT" '^  enforced  writes only in the write roots' "and prints the property table"
run "$contain" --caps=podman "$podman_profile" "$NSFENCE" --mode auto -v -- sh -c 'echo ran'
is "$RC:$OUT" "0:ran" "under Podman's profile, --mode auto runs the command"
like "$ERR" '^nsfence: --mode auto: user namespaces work here: namespace mode$' "in namespace mode"
cd / || exit 1

# --- the helper's own errors ---------------------------------------------------------------
nf_tmpdir d
run "$contain" "$d/missing.json" sh -c 'echo SHOULD-NOT-RUN'
is "$RC:$OUT" "2:" "a missing profile: exit 2, nothing ran"
like "$ERR" '^contain: .*missing.json: No such file or directory' "and contain says which file"
printf '{"defaultAction": "SCMP_ACT_ERRNO",\n' > "$d/bad.json"
run "$contain" "$d/bad.json" sh -c 'echo SHOULD-NOT-RUN'
is "$RC:$OUT" "2:" "a profile that is not JSON: exit 2, nothing ran"
like "$ERR" "^contain: $d/bad.json: line [0-9]+: " "and contain says where"
run "$contain" "$docker_profile" "$d/no-such-program"
is "$RC" 127 "a program that cannot be run: exit 127"

done_testing
