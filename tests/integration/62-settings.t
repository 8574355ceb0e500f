#!/bin/bash
# --settings FILE.json: srt's settings schema read into nsfence's policy.
# A denyRead holds, allowWrite opens a write root, the network allow list
# lets through what it lists and nothing else, a key nsfence cannot honour
# refuses the run with exit 125, and broken files are one-line errors.
# fixture: network
. "$(dirname "$0")/lib.sh"

nf_tmpdir d
cd "$d"
mkdir -p secret out other
echo classified > secret/key
echo public > other/file

settings() { # settings NETWORK-EXTRA FILESYSTEM-JSON [TOP-EXTRA]
    printf '{"network":{"allowedDomains":[%s],"deniedDomains":[]},"filesystem":%s%s}\n' \
        "$1" "$2" "${3:-}" > "$d/s.json"
}

refuse() { # refuse DESCRIPTION REGEX
    local desc=$1 re=$2
    nsf --settings "$d/s.json" -- sh -c 'echo RAN'
    is "$RC" 125 "$desc: exit 125"
    is "$OUT" "" "$desc: the command did not run"
    like "$ERR" "^nsfence: $re" "$desc: the message names the problem"
    is "$(printf '%s\n' "$ERR" | wc -l)" 1 "$desc: one line"
}

# --- filesystem ---------------------------------------------------------------
settings '' "{\"denyRead\":[\"$d/secret\"],\"allowWrite\":[\"$d/out\"],\"denyWrite\":[]}"
nsf --settings "$d/s.json" -- sh -c "cat $d/secret/key; ls -A $d/secret | wc -l; cat $d/other/file"
is "$OUT" "0
public" "a denyRead directory reads as empty; the rest stays readable"
unlike "$OUT" classified "the denied file's content is not visible"
nsf --settings "$d/s.json" -- sh -c "echo made > $d/out/new && cat $d/out/new"
is "$RC:$OUT" "0:made" "allowWrite opens a write root"
is "$(cat "$d/out/new" 2>/dev/null)" made "the write reached the host"
cd "$d/out"
nsf --settings "$d/s.json" -- sh -c "echo x > $d/other/file"
isnt_ok=$([ "$RC" -ne 0 ] && echo refused)
is "$isnt_ok" refused "outside allowWrite and the working directory a write fails"
is "$(cat "$d/other/file")" public "the host file is unchanged"
cd "$d"

# A literal entry is the path as spelled, never a glob.
mkdir -p 'lit[1]' lit1
echo a > 'lit[1]/f'; echo b > lit1/f
settings '' "{\"denyRead\":[{\"path\":\"$d/lit[1]\",\"literal\":true}],\"allowWrite\":[],\"denyWrite\":[]}"
nsf --settings "$d/s.json" -- sh -c "cat '$d/lit[1]/f' 2>&1; cat $d/lit1/f"
unlike "$OUT" '^a$' "a literal denyRead hides the path of that name"
like "$OUT" 'b$' "and not what it would match as a glob"

# Settings sit between the INI config and the flags: a flag still appends.
settings '' "{\"denyRead\":[],\"allowWrite\":[],\"denyWrite\":[]}"
nsf explain --settings "$d/s.json" --deny-read "$d/secret" -- true
like "$OUT" "$d/secret" "a --deny-read flag adds to the settings' rules"

# --- network ------------------------------------------------------------------
settings '"allowed.test"' '{"denyRead":[],"allowWrite":[],"denyWrite":[]}'
nsf --settings "$d/s.json" -- curl -sS http://allowed.test/index.html
is "$OUT" "hello from upstream" "a host on allowedDomains is reachable"
nsf --settings "$d/s.json" -- sh -c 'curl -sS -i http://other.test/ | head -1'
like "$OUT" '403' "a host not on allowedDomains is refused"
like "$ERR" 'deny network-outbound other.test:80' "and reported"
printf '{"network":{"allowedDomains":["allowed.test"],"deniedDomains":["allowed.test"],"deniedDomainReasons":{"allowed.test":"closed for testing"}},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}\n' > "$d/s.json"
nsf --settings "$d/s.json" -- curl -sS http://allowed.test/index.html
like "$ERR" 'deny network-outbound allowed.test:80 \(closed for testing\)' "deniedDomains wins, with its deniedDomainReasons text"

# httpProxyPort / socksProxyPort: an external proxy on the host's 127.0.0.1
# serves that endpoint; nsfence relays each connection to it untouched and
# judges none of them. The proxy here answers every request with a marker
# and never connects anywhere.
proxy_settings() { # proxy_settings NETWORK-EXTRA
    printf '{"network":{"allowedDomains":[],"deniedDomains":[]%s},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}\n' \
        "$1" > "$d/s.json"
}
ext_proxy_start "$d"
like "$ext_port" '^[0-9]+$' "the external proxy fixture listens on 127.0.0.1"

proxy_settings ",\"httpProxyPort\":$ext_port"
nsf -v --settings "$d/s.json" -- curl -sS -x http://localhost:3128 http://example.invalid/
is "$RC:$OUT" "0:EXTERNAL-PROXY GET http://example.invalid/ HTTP/1.1" \
    "httpProxyPort: the HTTP endpoint reaches the external proxy, which answers"
unlike "$ERR" 'deny network-outbound' "nsfence's rules did not judge the relayed request"
like "$ERR" "HTTP endpoint relays every connection to 127.0.0.1:$ext_port.*do not judge" \
    "-v says the HTTP endpoint is relayed and not judged"
nsf --settings "$d/s.json" -- curl -sS -o /dev/null -w '%{http_code}' --socks5-hostname localhost:1080 http://example.invalid/
is "$OUT" "000" "httpProxyPort alone: the SOCKS endpoint is still nsfence's own"
like "$ERR" 'deny network-outbound example.invalid:80 \(host is not on the allow list\)' \
    "and nsfence judges what reaches it"
nsf explain --settings "$d/s.json" -- true
like "$OUT" "http endpoint +relayed to 127.0.0.1:$ext_port" "explain shows the relayed endpoint"

: > "$ext_log"
proxy_settings ",\"socksProxyPort\":$ext_port"
nsf --settings "$d/s.json" -- sh -c 'curl -sS -i -x http://localhost:3128 http://example.invalid/ | head -1'
like "$OUT" '^HTTP/1.1 403' "socksProxyPort alone: the HTTP endpoint stays on nsfence's proxy"
like "$ERR" 'deny network-outbound example.invalid:80' "which judges and reports the request"
nsf --settings "$d/s.json" -- curl -sS --socks5-hostname localhost:1080 http://example.invalid/
is "$(cat "$ext_log")" "socks5 greeting" "the SOCKS endpoint reaches the external proxy, and only it"
unlike "$ERR" 'deny network-outbound' "nsfence's rules did not judge the relayed SOCKS connection"

: > "$ext_log"
proxy_settings ",\"httpProxyPort\":$ext_port,\"socksProxyPort\":$ext_port"
nsf --settings "$d/s.json" -- sh -c 'curl -sS -x http://localhost:3128 http://example.invalid/; curl -sS --socks5-hostname localhost:1080 http://example.invalid/'
is "$(cat "$ext_log")" "GET http://example.invalid/ HTTP/1.1
socks5 greeting" "both ports set: both endpoints reach the external proxy"
unlike "$ERR" 'deny network-outbound' "and nsfence judges nothing"
kill "$ext_pid" 2>/dev/null
wait "$ext_pid" 2>/dev/null

# An external proxy that is not listening: the connection closes, with no
# answer of nsfence's own.
proxy_settings ",\"httpProxyPort\":$ext_port"
nsf --settings "$d/s.json" -- curl -sS -i -x http://localhost:3128 http://example.invalid/
isnt_ok=$([ "$RC" -ne 0 ] && echo failed)
is "$isnt_ok" failed "with the external proxy gone the request fails"
unlike "$OUT" 'HTTP/1.1' "and nsfence answers nothing of its own"

# parentProxy.noProxy: the settings' exemptions, in place of nsfence's own
# NO_PROXY.
parent_settings() { # parent_settings NO-PROXY
    printf '{"network":{"allowedDomains":["allowed.test"],"deniedDomains":[],"parentProxy":{"http":"%s","noProxy":"%s"}},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}\n' \
        "$NF_PARENT" "$1" > "$d/s.json"
}
parent_settings allowed.test
before=$(wc -l < "$NF_PARENT_LOG")
nsf --settings "$d/s.json" -- curl -sS http://allowed.test/index.html
is "$OUT:$(wc -l < "$NF_PARENT_LOG")" "hello from upstream:$before" \
    "parentProxy.noProxy sends a listed host direct"
parent_settings other.test
NO_PROXY=allowed.test nsf --settings "$d/s.json" -- curl -sS http://allowed.test/index.html
is "$OUT" "hello from upstream" "a host off noProxy is reached"
like "$(tail -1 "$NF_PARENT_LOG")" 'CONNECT allowed.test:80' \
    "through the parent: the settings' noProxy replaces nsfence's NO_PROXY"

# --- environment ----------------------------------------------------------------
settings '' '{"denyRead":[],"allowWrite":[],"denyWrite":[]}' ',"credentials":{"envVars":[{"name":"NF_SECRET","mode":"deny"}]},"git":{"safeDirectories":["/srv/repo"]}'
NF_SECRET=hunter2 nsf --settings "$d/s.json" -- sh -c 'echo "secret=${NF_SECRET-unset}"; git config --get-all safe.directory'
is "$OUT" "secret=unset
/srv/repo
/srv/repo/*" "a denied credential variable is absent; git.safeDirectories reaches git"

# --- allowNestedUserNamespaces ---------------------------------------------------
settings '' '{"denyRead":[],"allowWrite":[],"denyWrite":[]}'
nsf --settings "$d/s.json" -- unshare -U true
ok $([ "$RC" -ne 0 ]; echo $?) "by default a nested user namespace is refused"
settings '' '{"denyRead":[],"allowWrite":[],"denyWrite":[]}' ',"allowNestedUserNamespaces":true'
nsf --settings "$d/s.json" -- unshare -U sh -c 'echo nested'
is "$RC:$OUT" "0:nested" "allowNestedUserNamespaces: a nested user namespace works"
nsf --settings "$d/s.json" -- sh -c 'keyctl show @s >/dev/null 2>&1 || echo refused'
is "$OUT" "refused" "allowNestedUserNamespaces: the keyrings stay refused"
nsf -v --settings "$d/s.json" -- true
like "$ERR" "allowNestedUserNamespaces: the command may make user namespaces" "-v says so"

# --- filesystem.disabled ------------------------------------------------------------
nf_tmpdir outside
# A deny asked for beside it would be dropped: refused, never ignored.
settings '' "{\"denyRead\":[\"$d/secret\"],\"allowWrite\":[],\"denyWrite\":[],\"disabled\":true}"
refuse "filesystem.disabled with a denyRead" "filesystem.disabled turns every filesystem rule off, but deny_read $d/secret was asked for too"
settings '' "{\"denyRead\":[],\"allowWrite\":[],\"denyWrite\":[],\"disabled\":true}"
nsf --settings "$d/s.json" --deny-write "$outside" -- true
is "$RC" 125 "filesystem.disabled with a --deny-write flag is refused too"
cd "$d/out"
nsf --settings "$d/s.json" -- sh -c "echo kept > $outside/written && cat $outside/written"
is "$RC:$OUT" "0:kept" "filesystem.disabled: a write outside the working directory works"
is "$ERR" "" "and nothing is reported"
is "$(cat "$outside/written" 2>/dev/null)" kept "the write persists on the host"
nsf --settings "$d/s.json" -- sh -c 'cat /proc/1/comm; test -c /dev/null && echo dev'
is "$OUT" "nsfence
dev" "filesystem.disabled: /proc and /dev are still the sandbox's"
nsf -v --settings "$d/s.json" -- true
like "$ERR" "filesystem.disabled: no filesystem rules" "-v says so"
cd "$d"

# --- ignoreViolations ----------------------------------------------------------------
# A key is matched against the command's text (argv quoted as srt quotes
# it), a pattern against the violation's path.
settings '' '{"denyRead":[],"allowWrite":[],"denyWrite":[]}' ",\"ignoreViolations\":{\"quiet-run\":[\"$d/other\"]}"
cd "$d/out"
nsf --settings "$d/s.json" -- sh -c ": quiet-run; echo x > $d/other/file"
like "$ERR" "Read-only file system" "ignoreViolations: the write is still refused"
unlike "$ERR" "deny [a-z0-9]* $d/other/file" "ignoreViolations: no violation line for a matching command"
nsf --settings "$d/s.json" -- sh -c ": loud-run; echo x > $d/other/file"
like "$ERR" "deny [a-z0-9]* $d/other/file" "ignoreViolations: the line stays for another command"
nsf --settings "$d/s.json" -- sh -c ": quiet-run; echo x > $d/secret/key"
like "$ERR" "deny [a-z0-9]* $d/secret/key" "ignoreViolations: and for a path no pattern matches"
cd "$d"
is "$(cat "$d/other/file")" public "the host file is unchanged"

# --- refusals and errors ----------------------------------------------------------
settings '' '{"denyRead":[],"allowWrite":[],"denyWrite":[]}' ',"network2":1'
refuse "an unknown top-level key" "$d/s.json: network2: unknown key"
printf '{"network":{"allowedDomains":[],"deniedDomains":[],"tlsTerminate":{}},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}' > "$d/s.json"
refuse "tlsTerminate" "$d/s.json: network.tlsTerminate: TLS termination; nsfence cannot honour it"
settings '' '{"denyRead":[],"allowWrite":[],"denyWrite":[]}' ',"credentials":{"files":[{"path":"/etc/x","mode":"mask"}]}'
refuse "a masked credential" "$d/s.json: credentials.files\\[0\\]: .*refuses"
settings '"a.test", 3' '{"denyRead":[],"allowWrite":[],"denyWrite":[]}'
refuse "a wrong type" "$d/s.json: network.allowedDomains\\[1\\]: expected a string"
settings '' '{"denyRead":[],"allowWrite":[],"denyWrite":[],"denyread":[]}'
refuse "an unknown nested key" "$d/s.json: filesystem.denyread: unknown key"
printf '{"network":{"allowedDomains":[],"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}' > "$d/s.json"
refuse "a duplicate key" "$d/s.json:1:[0-9]*: not valid JSON: duplicate object key"
printf '{"network":' > "$d/s.json"
refuse "invalid JSON" "$d/s.json:1:[0-9]*: not valid JSON"
printf '  \n' > "$d/s.json"
refuse "an empty file" "$d/s.json: is empty"
rm -f "$d/s.json"
refuse "a missing file" "settings $d/s.json: No such file or directory"
mkdir -p "$d/s.json"
refuse "a directory" "settings $d/s.json: is a directory"
rmdir "$d/s.json"
if ! is_root; then
    settings '' '{"denyRead":[],"allowWrite":[],"denyWrite":[]}'
    chmod 000 "$d/s.json"
    refuse "an unreadable file" "settings $d/s.json: Permission denied"
    chmod 644 "$d/s.json"
fi

# -v says what is ignored.
settings '' '{"denyRead":[],"allowWrite":[],"denyWrite":[]}' ',"allowPty":true,"bwrapPath":"/usr/bin/bwrap"'
nsf -v --settings "$d/s.json" -- true
is "$RC" 0 "macOS-only and tool keys are accepted"
like "$ERR" "$d/s.json: allowPty: ignored: macOS only" "-v says a macOS key is ignored"
like "$ERR" "$d/s.json: bwrapPath: ignored: " "-v says bwrapPath is ignored"
nsf --settings "$d/s.json" -- true
is "$ERR" "" "without -v nothing is said"

done_testing
