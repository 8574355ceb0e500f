#!/bin/bash
# Every srt settings key, one at a time, through both command lines that
# read srt's settings: nsfence's `--settings FILE` and srt's own CLI
# (`srt -s FILE -c CMD`, srt a symlink to nsfence). A key nsfence honours
# must change what the command sees the same way through both; a key it
# cannot honour refuses the run through both (125 and srt's exit 1); a key
# srt ignores on Linux is accepted and named as ignored under -v / -d.
# fixture: network
. "$(dirname "$0")/lib.sh"

nf_tmpdir d
mkdir -p "$d/bin" "$d/proj" "$d/secret/open" "$d/glob" "$d/out" "$d/tree/a" "$d/other" \
    "$d/deep/a/b"
chmod 777 "$d/out" "$d/tree" "$d/tree/a" "$d/deep" "$d/deep/a" "$d/deep/a/b"
ln -s "$NSFENCE" "$d/bin/srt"
SRT="$d/bin/srt"
echo TOPSECRET > "$d/secret/key"
echo visible > "$d/secret/open/file"
echo KEY > "$d/glob/a.key"
echo TXT > "$d/glob/a.txt"
echo public > "$d/other/file"
echo CREDENTIAL > "$d/other/cred"
cd "$d/proj"

EMPTY_FS='"denyRead":[],"allowWrite":[],"denyWrite":[]'
# write NETWORK-EXTRA FILESYSTEM [TOP-EXTRA,]: the settings file $S, with
# the network lists in ALLOW and DENY (allowed.test and nothing).
S="$d/s.json"
write() {
    printf '{"network":{"allowedDomains":[%s],"deniedDomains":[%s]%s},"filesystem":{%s},%s"x":0}\n' \
        "${ALLOW-\"allowed.test\"}" "${DENY-}" "$1" "$2" "${3:-}" | sed 's/,"x":0}$/}/' > "$S"
}

# both CMD: CMD under `nsfence --settings` (N_RC, N_OUT, N_ERR) and under
# `srt -s` (S_RC, S_OUT, S_ERR), both from $d/proj.
both() {
    nsf --settings "$S" -- sh -c "$1"
    N_RC=$RC N_OUT=$OUT N_ERR=$ERR
    local o e
    o=$(mktemp) e=$(mktemp)
    timeout -k 5 60 "$SRT" -s "$S" -c "$1" >"$o" 2>"$e" </dev/null
    S_RC=$? S_OUT=$(cat "$o") S_ERR=$(cat "$e")
    rm -f "$o" "$e"
}

# same DESCRIPTION EXPECTED: both outputs are EXPECTED (status ignored).
same() {
    is "$N_OUT" "$2" "$1 (--settings)"
    is "$S_OUT" "$2" "$1 (srt -s)"
}

# refused KEY-PATH: the file is refused through both, and nothing ran.
refused() {
    both 'echo RAN'
    like "$N_RC:$N_OUT:$N_ERR" "^125::nsfence: $S: $1: .*nsfence cannot honour it" \
        "$1 is refused (--settings: 125, nothing ran)"
    like "$S_RC:$S_OUT:$S_ERR" "^1::Error: .*$1: .*nsfence cannot honour it" \
        "$1 is refused (srt -s: srt's refusal, exit 1, nothing ran)"
}

# ignored KEY-PATH: accepted through both, the command runs, and -v / -d
# names the key as ignored.
ignored() {
    nsf -v --settings "$S" -- echo RAN
    like "$RC:$OUT" "^0:RAN" "$1 is accepted (--settings)"
    like "$ERR" "$S: $1: ignored: " "-v says $1 is ignored"
    o=$(timeout -k 5 60 "$SRT" -d -s "$S" -c 'echo RAN' 2>&1 </dev/null)
    like "$o" "\[SandboxDebug\] nsfence: $S: $1: ignored: " "srt -d says $1 is ignored"
    like "$o" "^RAN\$|
RAN\$|
RAN
" "$1 is accepted (srt -s)"
}

CODE='curl -sS -o /dev/null -w %{http_code} --max-time 20'

# --- network ------------------------------------------------------------------
write '' "$EMPTY_FS"
both "curl -sS --max-time 20 http://allowed.test/index.html; $CODE http://other.test/"
same "network.allowedDomains: a listed host is reached, another is refused" "hello from upstream
403"

ALLOW='"*.allowed.test","allowed.test"' DENY='"sub.allowed.test"' write '' "$EMPTY_FS"
both "$CODE http://allowed.test/; echo; $CODE http://sub.allowed.test/; echo; $CODE http://deep.sub.allowed.test/"
same "network.deniedDomains wins over a wildcard allow" "200
403
200"

DENY='"other.test"' write ',"deniedDomainReasons":{"other.test":"closed for testing"}' "$EMPTY_FS"
both "curl -sv -p --max-time 20 http://other.test/ 2>&1 | grep -o 'HTTP/1.1 403 .*' | tr -d '\r'"
same "network.deniedDomainReasons: the refusal carries the reason" "HTTP/1.1 403 closed for testing"

write ",\"deniedResolvedAddresses\":[\"$NF_UP4/32\"]" "$EMPTY_FS"
both "$CODE http://allowed.test/"
same "network.deniedResolvedAddresses: an allowed name that resolves there is refused" "403"

for v in true false; do
    write ",\"strictAllowlist\":$v" "$EMPTY_FS"
    both "$CODE http://allowed.test/; echo; $CODE http://other.test/"
    same "network.strictAllowlist $v: the allow list holds (no ask-callback)" "200
403"
done

for v in true false; do
    write ",\"requireHostMatch\":$v" "$EMPTY_FS"
    both "$CODE -H 'Host: other.test' http://allowed.test/"
    same "network.requireHostMatch $v: a Host header naming another host is refused" "400"
done

write ',"ambiguousRequestTarget":"refuse"' "$EMPTY_FS"
both "$CODE http://allowed.test/"
same "network.ambiguousRequestTarget \"refuse\" is what nsfence does: accepted" "200"

UNIX='python3 -c "import socket; socket.socket(socket.AF_UNIX); print(\"unix\")" 2>/dev/null || echo refused'
write '' "$EMPTY_FS"
both "$UNIX"
same "without network.allowAllUnixSockets a unix socket is refused" "refused"
write ',"allowAllUnixSockets":true' "$EMPTY_FS"
both "$UNIX"
same "network.allowAllUnixSockets: a unix socket can be made" "unix"

before=$(wc -l < "$NF_PARENT_LOG")
write ",\"parentProxy\":{\"http\":\"$NF_PARENT\"}" "$EMPTY_FS"
both "curl -sS --max-time 20 http://allowed.test/index.html"
same "network.parentProxy: the request is answered" "hello from upstream"
is "$(($(wc -l < "$NF_PARENT_LOG") - before))" 2 "network.parentProxy: through the parent, once per command line"
write ",\"parentProxy\":{\"http\":\"$NF_PARENT\",\"noProxy\":\"allowed.test\"}" "$EMPTY_FS"
before=$(wc -l < "$NF_PARENT_LOG")
both "curl -sS --max-time 20 http://allowed.test/index.html"
same "network.parentProxy.noProxy: a listed host is answered" "hello from upstream"
is "$(wc -l < "$NF_PARENT_LOG")" "$before" "network.parentProxy.noProxy: and goes direct"

# httpProxyPort / socksProxyPort: an external proxy on the host's loopback
# that answers every request with a marker and connects nowhere.
ext_proxy_start "$d"
like "$ext_port" '^[0-9]+$' "the external proxy fixture listens on 127.0.0.1"
write ",\"httpProxyPort\":$ext_port,\"socksProxyPort\":$ext_port" "$EMPTY_FS"
both "curl -sS --max-time 20 -x http://localhost:3128 http://example.invalid/; echo; curl -sS --max-time 20 --socks5-hostname localhost:1080 http://example.invalid/"
same "network.httpProxyPort / socksProxyPort: both endpoints reach the external proxy" \
    "EXTERNAL-PROXY GET http://example.invalid/ HTTP/1.1"
is "$(grep -c 'socks5 greeting' "$ext_log")" 2 "the SOCKS endpoint reached it through both command lines"
kill "$ext_pid" 2>/dev/null
wait "$ext_pid" 2>/dev/null

# --- filesystem -----------------------------------------------------------------
write '' "\"denyRead\":[\"$d/secret\"],\"allowRead\":[\"$d/secret/open\"],\"allowWrite\":[],\"denyWrite\":[]"
both "cat $d/secret/key 2>/dev/null; cat $d/secret/open/file; cat $d/other/file"
same "filesystem.denyRead hides a directory; allowRead re-opens a part of it" "visible
public"

write '' "\"denyRead\":[\"$d/glob/*.key\"],\"allowWrite\":[],\"denyWrite\":[]"
both "cat $d/glob/a.key 2>/dev/null; cat $d/glob/a.txt"
same "filesystem.denyRead with a glob: what matches is hidden, the rest is not" "TXT"

mkdir -p "$d/lit[1]" "$d/lit1"
echo A > "$d/lit[1]/f"
echo B > "$d/lit1/f"
write '' "\"denyRead\":[{\"path\":\"$d/lit[1]\",\"literal\":true}],\"allowWrite\":[],\"denyWrite\":[]"
both "cat '$d/lit[1]/f' 2>/dev/null; cat $d/lit1/f"
same "filesystem.denyRead {path, literal}: the path as spelled, not a glob" "B"

write '' "\"denyRead\":[],\"allowWrite\":[\"$d/out\",\"$d/tree/**\"],\"denyWrite\":[\"$d/out/locked\"]"
: > "$d/out/locked"
chmod 666 "$d/out/locked"
both "echo w > $d/out/f && cat $d/out/f; echo t > $d/tree/a/g && cat $d/tree/a/g; echo x > $d/out/locked 2>/dev/null || echo locked; echo x > $d/other/file 2>/dev/null || echo other"
same "filesystem.allowWrite (a path and a /** glob) opens writes; denyWrite closes one; elsewhere is read-only" "w
t
locked
other"
is "$(cat "$d/out/locked"):$(cat "$d/other/file")" ":public" "the host files behind the refusals are unchanged"
rm -f "$d/out/f" "$d/tree/a/g"

write '' "\"denyRead\":[],\"allowWrite\":[],\"denyWrite\":[],\"disabled\":true"
both "echo w > $d/other/new && cat $d/other/new"
same "filesystem.disabled: a write outside any write root works" "w"
rm -f "$d/other/new"

# allowGitConfig: a repository's .git/config in a write root.
git init -q "$d/tree/repo"
chmod -R a+rwX "$d/tree/repo"
GITCFG="git -C $d/tree/repo config nf.key v 2>/dev/null && echo written || echo refused"
write '' "\"denyRead\":[],\"allowWrite\":[\"$d/tree\"],\"denyWrite\":[]"
both "$GITCFG"
same "without filesystem.allowGitConfig .git/config is read-only" "refused"
write '' "\"denyRead\":[],\"allowWrite\":[\"$d/tree\"],\"denyWrite\":[],\"allowGitConfig\":true"
both "$GITCFG"
same "filesystem.allowGitConfig: .git/config is writable" "written"

# mandatoryDenySearchDepth: how deep the scan looks for the files that run
# code later. A .bashrc three levels down is found at the default depth.
: > "$d/deep/a/b/.bashrc"
chmod 666 "$d/deep/a/b/.bashrc"
RC_W="echo x >> $d/deep/a/b/.bashrc 2>/dev/null && echo written || echo protected"
write '' "\"denyRead\":[],\"allowWrite\":[\"$d/deep\"],\"denyWrite\":[]"
both "$RC_W"
same "by default a .bashrc deep in a write root is protected" "protected"
write '' "\"denyRead\":[],\"allowWrite\":[\"$d/deep\"],\"denyWrite\":[]" '"mandatoryDenySearchDepth":1,'
both "$RC_W"
same "mandatoryDenySearchDepth 1: the scan stops above it" "written"

# --- credentials, git, namespaces, /proc ---------------------------------------------
write '' "\"denyRead\":[],\"allowWrite\":[],\"denyWrite\":[]" "\"credentials\":{\"envVars\":[{\"name\":\"NF_SECRET\",\"mode\":\"deny\"}],\"files\":[{\"path\":\"$d/other/cred\",\"mode\":\"deny\"}]},"
export NF_SECRET=hunter2
both "echo \"env=\${NF_SECRET-unset}\"; cat $d/other/cred 2>/dev/null; echo end"
unset NF_SECRET
same "credentials.envVars / files with mode deny: the variable is absent, the file unreadable" "env=unset
end"
# A glob there is expanded, as srt expands it (and denyRead's).
write '' "\"denyRead\":[],\"allowWrite\":[],\"denyWrite\":[]" "\"credentials\":{\"files\":[{\"path\":\"$d/other/c*d\",\"mode\":\"deny\"}]},"
both "echo ran; cat $d/other/cred 2>/dev/null; echo end"
same "credentials.files with a glob: the files it matches are unreadable" "ran
end"

write '' "$EMPTY_FS" '"git":{"safeDirectories":["/srv/repo"]},'
both "git config --get-all safe.directory"
same "git.safeDirectories reaches git" "/srv/repo
/srv/repo/*"

write '' "$EMPTY_FS"
both "unshare -U true 2>/dev/null && echo nested || echo refused"
same "by default a nested user namespace is refused" "refused"
write '' "$EMPTY_FS" '"allowNestedUserNamespaces":true,'
both "unshare -U true 2>/dev/null && echo nested || echo refused"
same "allowNestedUserNamespaces: a nested user namespace works" "nested"

# The test's own process, by its host PID: visible only in the host's /proc.
PROC="[ -e /proc/$$/status ] && echo host || echo own"
write '' "$EMPTY_FS"
both "$PROC"
same "by default /proc is the sandbox's own" "own"
write '' "$EMPTY_FS" '"enableWeakerNestedSandbox":true,'
both "$PROC"
same "enableWeakerNestedSandbox: the host's /proc, with the host's processes" "host"

# ignoreViolations: nsfence's violation block drops a matching line; srt's
# CLI runs no violation monitor (as srt), so there it only has to be read.
write '' "$EMPTY_FS" "\"ignoreViolations\":{\"quiet-run\":[\"$d/other\"]},"
both ": quiet-run; echo x > $d/other/file 2>/dev/null; echo ran"
same "ignoreViolations is read" "ran"
unlike "$N_ERR" "deny [a-z0-9]* $d/other/file" "ignoreViolations: --settings reports no line for a matching command"

# --- refused: what nsfence cannot honour on Linux ------------------------------------
write ',"tlsTerminate":{}' "$EMPTY_FS"
refused network.tlsTerminate
write ',"mitmProxy":{"socketPath":"/tmp/m.sock","domains":["a.test"]}' "$EMPTY_FS"
refused network.mitmProxy
write ',"refuseOpaqueTunnels":true' "$EMPTY_FS"
refused network.refuseOpaqueTunnels
write ',"allowPlaintextHeaderSet":true' "$EMPTY_FS"
refused network.allowPlaintextHeaderSet
write ',"stripResponseHeaders":["set-cookie"]' "$EMPTY_FS"
refused network.stripResponseHeaders
write ',"ambiguousRequestTarget":"normalize"' "$EMPTY_FS"
refused network.ambiguousRequestTarget
write '' "$EMPTY_FS" '"credentials":{"awsPairs":[]},'
refused credentials.awsPairs
write '' "$EMPTY_FS" '"credentials":{"envVars":[{"name":"TOKEN","mode":"mask"}]},'
refused 'credentials.envVars\[0\]'
write ',"filterRequest":"x"' "$EMPTY_FS"
refused network.filterRequest
write '' "$EMPTY_FS" '"credentials":{"sigv4":{}},'
refused credentials.sigv4
write '' "$EMPTY_FS" '"credentials":{"files":[{"path":"/etc/x","mode":"mask"}]},'
refused 'credentials.files\[0\]'
write ",\"parentProxy\":{\"http\":\"$NF_PARENT\",\"https\":\"http://127.0.0.1:9\"}" "$EMPTY_FS"
refused network.parentProxy

# --- ignored: keys srt itself ignores on Linux, and other platforms' ----------------
write ',"allowUnixSockets":["/run/x.sock"]' "$EMPTY_FS"
ignored network.allowUnixSockets
write ',"allowLocalBinding":true' "$EMPTY_FS"
ignored network.allowLocalBinding
write ',"allowMachLookup":["com.apple.x"]' "$EMPTY_FS"
ignored network.allowMachLookup
for k in enableWeakerNetworkIsolation allowAppleEvents allowPty; do
    write '' "$EMPTY_FS" "\"$k\":true,"
    ignored "$k"
done
write '' "$EMPTY_FS" '"windows":{},'
ignored windows
write '' "$EMPTY_FS" '"bwrapPath":"/usr/bin/bwrap",'
ignored bwrapPath
write '' "$EMPTY_FS" '"credentials":{"allowPlaintextInject":true},'
ignored credentials.allowPlaintextInject
write '' "$EMPTY_FS" '"socatPath":"/usr/bin/socat",'
ignored socatPath
write '' "$EMPTY_FS" '"javaAgentJarPath":"/opt/agent.jar",'
ignored javaAgentJarPath
write '' "$EMPTY_FS" '"ripgrep":{"command":"rg"},'
ignored ripgrep
write '' "$EMPTY_FS" '"seccomp":{"applyPath":"/usr/bin/apply-seccomp"},'
ignored seccomp

done_testing
