#!/bin/bash
# srt 0.0.83 (Anthropic's sandbox runtime CLI) end to end on nsfence's
# bubblewrap front end: `bwrap -> nsfence` first on PATH, the host's own
# bubblewrap hidden by tests/leg (an empty file bound over it), srt's own
# settings files, its proxy bridges to real HTTP servers on 127.0.0.1, its
# seccomp helper, its process handling. Every command prints something first,
# so a check can tell a denial from a command that never ran.
# fixture: srt
. "$(dirname "$0")/lib.sh"

if [ -z "${NF_SRT:-}" ] || ! command -v node >/dev/null; then
    skip "srt is not installed: \`make deps\` puts srt 0.0.83 in .deps/srt (node, socat, ripgrep from Debian)" \
        "srt runs on nsfence as bwrap"
    done_testing
    exit
fi

nf_tmpdir d
mkdir -p "$d/bin" "$d/proj" "$d/secret" "$d/outside" "$d/www-ok" "$d/www-no" "$d/deny"
ln -s "$NSFENCE" "$d/bin/bwrap"
export PATH="$d/bin:$PATH"
proj="$d/proj"
echo TOPSECRET > "$d/secret/key.txt"
echo '# original rc' > "$proj/.bashrc"
echo "hello through srt's bridge" > "$d/www-ok/hello.txt"
echo "should never be served" > "$d/www-no/hello.txt"

# --- bwrap is ours ------------------------------------------------------------------
is "$(command -v bwrap)" "$d/bin/bwrap" "srt's \`which bwrap\` finds nsfence first on PATH"
others=""
IFS=: read -ra dirs <<<"$PATH"
for p in "${dirs[@]:1}"; do [ -x "$p/bwrap" ] && others="$others $p/bwrap"; done
is "$others" "" "no other bubblewrap on PATH can run (the host's is hidden)"

# HTTP servers on 127.0.0.1, ports from the kernel; each logs its requests.
serve() { # serve DIR LOG PORTFILE
    python3 -c '
import http.server, os, sys
os.chdir(sys.argv[1])
log = open(sys.argv[2], "a", buffering=1)
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *a): log.write((fmt % a) + "\n")
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[3] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
s.serve_forever()' "$@" &
    servers+=($!)
}
servers=()
serve "$d/www-ok" "$d/ok.log" "$d/ok.port"
serve "$d/www-no" "$d/no.log" "$d/no.port"
for _ in $(seq 100); do [ -s "$d/ok.port" ] && [ -s "$d/no.port" ] && break; sleep 0.1; done
P_OK=$(cat "$d/ok.port") P_NO=$(cat "$d/no.port")
: >> "$d/ok.log"
: >> "$d/no.log"

S="$d/settings.json"
cat > "$S" <<EOF
{
  "network": { "allowedDomains": ["127.0.0.1:$P_OK"], "deniedDomains": [] },
  "filesystem": { "denyRead": ["$d/secret"], "allowWrite": ["."], "denyWrite": [] }
}
EOF

# srt_run [SRT-OPTION...] COMMAND-STRING: srt -c in the project directory, on
# settings $S; stdout in $OUT, stderr in $ERR, status in $RC.
srt_run() {
    local o e
    o=$(mktemp) e=$(mktemp)
    (cd "$proj" && timeout -k 5 90 "$NF_SRT" --settings "$S" "${@:1:$#-1}" -c "${!#}" >"$o" 2>"$e" </dev/null)
    RC=$?
    OUT=$(cat "$o")
    ERR=$(cat "$e")
    rm -f "$o" "$e"
}

# --- commands run, status and signals pass through ----------------------------------
srt_run 'echo ran-$((6 * 7)); echo "$SANDBOX_RUNTIME"'
is "$RC:$OUT" "0:ran-42
1" "srt runs a command on nsfence as bwrap"
srt_run 'echo ran; exit 42'
is "$RC:$OUT" "42:ran" "the command's exit status passes through srt"
srt_run 'echo ran; kill -TERM $$; echo not reached'
is "$RC:$OUT" "143:ran" "a command killed by SIGTERM: srt exits 143"

# --- filesystem ------------------------------------------------------------------------
srt_run 'echo data > ./out.txt && cat ./out.txt'
is "$RC:$OUT:$(cat "$proj/out.txt" 2>/dev/null)" "0:data:data" "a write in the allowed directory persists on the host"
srt_run "echo ran; echo x > '$d/outside/x.txt'; echo rc=\$?"
is "$OUT" "ran
rc=1" "a write outside the allowed paths fails"
like "$ERR" "outside/x.txt: Read-only file system" "with EROFS"
[ -e "$d/outside/x.txt" ]
ok $((!$?)) "and nothing reaches the host"
srt_run "echo ran; ls -A '$d/secret' | wc -l; cat '$d/secret/key.txt'; echo rc=\$?"
is "$OUT" "ran
0
rc=1" "a denyRead directory reads as empty"
unlike "$OUT$ERR" TOPSECRET "its file's content never shows"
srt_run 'echo ran; echo evil >> .bashrc; echo rc=$?; cat .bashrc'
is "$OUT" "ran
rc=1
# original rc" "mandatory deny: .bashrc in the working directory is not writable"
is "$(cat "$proj/.bashrc")" "# original rc" "and the host's .bashrc is unchanged"

# --- /dev -------------------------------------------------------------------------------
srt_run 'echo ran; ls /dev | tr "\n" " "'
is "$OUT" "ran
core fd full null ptmx pts random shm stderr stdin stdout tty urandom zero " "/dev is bubblewrap's minimal one"

# --- network: srt's bridges --------------------------------------------------------------
srt_run "echo ran; curl -sS --noproxy '' --max-time 20 http://127.0.0.1:$P_OK/hello.txt"
is "$OUT" "ran
hello through srt's bridge" "allowed traffic goes through srt's socat bridges and proxy"
like "$(cat "$d/ok.log")" 'GET /hello.txt' "the allowed server saw the request"
srt_run "echo ran; curl -sS --noproxy '' --max-time 20 -i http://127.0.0.1:$P_NO/hello.txt"
like "$OUT" '^ran
HTTP/1.1 403 Forbidden' "a host:port not allowed gets 403 from srt's proxy"
like "$OUT" 'X-Proxy-Error: blocked-by-allowlist' "blocked by the allowlist"
is "$(cat "$d/no.log")" "" "the denied server never saw a request"
srt_run "echo ran; curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:$P_OK/hello.txt; echo rc=\$?"
like "$OUT" '^ran
rc=7$' "a direct connection bypassing the proxy fails (the sandbox has only its own lo)"

# --- srt's seccomp -------------------------------------------------------------------------
srt_run "echo ran; python3 -c 'import socket; socket.socket(socket.AF_INET).close(); print(\"inet ok\"); socket.socket(socket.AF_UNIX)'; echo rc=\$?"
is "$OUT" "ran
inet ok
rc=1" "socket(AF_UNIX) fails under srt's apply-seccomp, AF_INET works"
like "$ERR" 'PermissionError|Operation not permitted' "refused with EPERM"

# --- process lifetime -------------------------------------------------------------------------
descendants() { # the process tree under PID, PID excluded
    local c
    for c in $(ps -o pid= --ppid "$1"); do
        echo "$c"
        descendants "$c"
    done
}
alive() { # the PIDs given that still run (zombies excluded)
    local p s
    for p in "$@"; do
        s=$(ps -o stat= -p "$p" 2>/dev/null) || continue
        case "$s" in Z*) ;; *) echo "$p" ;; esac
    done
}
# start_sleeper TOKEN: srt in the background running `sleep TOKEN`; $SRT_PID.
start_sleeper() {
    rm -f "$proj/started"
    (cd "$proj" && exec "$NF_SRT" --settings "$S" -c "echo started > started; sleep $1" \
        >/dev/null 2>"$d/sleeper.err" </dev/null) &
    SRT_PID=$!
    for _ in $(seq 300); do [ -s "$proj/started" ] && break; sleep 0.1; done
}
settle() { # wait up to 10 s for the PIDs to be gone; print those left
    local left
    for _ in $(seq 100); do
        left=$(alive "$@")
        [ -z "$left" ] && return
        sleep 0.1
    done
    echo "$left" | tr '\n' ' '
}

tok=$((900000 + RANDOM))
start_sleeper "$tok"
is "$(cat "$proj/started" 2>/dev/null)" started "a long-running command started under srt"
tree=$(descendants "$SRT_PID")
shell=$(ps -o pid=,comm= --ppid "$SRT_PID" | awk '$2 == "sh" { print $1 }')
bw=$(ps -o pid= --ppid "${shell:-0}" | head -1 | tr -d ' ')
is "$(tr '\0\n' '  ' <"/proc/$bw/cmdline" 2>/dev/null | cut -d' ' -f1-3)" "bwrap --new-session --die-with-parent" \
    "srt's shell started bwrap with srt's argv"
is "$(readlink "/proc/$bw/exe")" "$(readlink -f "$NSFENCE")" "and that bwrap is nsfence"
like "$(ps -o args= -p $tree 2>/dev/null)" "socat TCP6-LISTEN:3128.*
.*sleep $tok" "the bridges and the command run inside"
kill -TERM "$SRT_PID"
wait "$SRT_PID"
is "$?" 0 "srt exits 0 on SIGTERM (as srt reports a SIGTERM)"
is "$(settle $tree)" "" "after SIGTERM to srt no process of the sandbox is left (bwrap, socat, the command)"
is "$(pgrep -f "sleep $tok")" "" "the command is gone"

tok=$((900000 + RANDOM))
start_sleeper "$tok"
tree=$(descendants "$SRT_PID")
shell=$(ps -o pid=,comm= --ppid "$SRT_PID" | awk '$2 == "sh" { print $1 }')
like "$(ps -o args= -p $tree 2>/dev/null)" "sleep $tok" "a second long-running command started"
is "$(ps -o comm= -p "${shell:-0}")" sh "srt started bwrap from a shell"
[ -n "$shell" ] && kill -KILL "$shell"
wait "$SRT_PID"
is "$?" 1 "srt exits 1 when the shell it started bwrap from is killed"
is "$(settle $tree)" "" "--die-with-parent: killing that shell takes the whole sandbox down"
is "$(pgrep -f "sleep $tok")" "" "the command is gone"

# --- a profile too long for the command line: mounts through --args ---------------------------
long=credential-file-with-a-rather-long-name-to-fill-the-command-line-quickly-number
{
    printf '{ "network": { "allowedDomains": [], "deniedDomains": [] },\n'
    printf '  "filesystem": { "allowWrite": ["."], "denyWrite": [], "denyRead": [\n'
    for i in $(seq -w 1 1400); do
        echo "SECRET-$i" > "$d/deny/$long-$i.txt"
        printf '    "%s"%s\n' "$d/deny/$long-$i.txt" "$([ "$i" = 1400 ] || echo ,)"
    done
    printf '  ] } }\n'
} > "$d/big.json"
echo visible > "$d/deny/control.txt"
S="$d/big.json"
srt_run --debug "echo big-ran; cat '$d/deny/$long-0001.txt' '$d/deny/$long-0777.txt' '$d/deny/$long-1400.txt'; cat '$d/deny/control.txt'"
like "$ERR" 'bwrap mounts moved to an unnamed file' "srt passes the 1,400 denyRead mounts through --args"
like "$OUT" '^big-ran
visible$' "the command runs, and a file not listed reads"
unlike "$OUT" 'SECRET-' "all 1,400 denyRead files stay unreadable"

kill "${servers[@]}" 2>/dev/null
wait "${servers[@]}" 2>/dev/null

done_testing
