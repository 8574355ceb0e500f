#!/bin/bash
# srt 0.0.83's command line on nsfence (`srt` a symlink to nsfence, and
# `nsfence srt`): its settings file rules and refusals, -c and argv, debug,
# its environment and exit statuses, and --control-fd changing the network
# allow list while a command runs, through both command lines. Servers are
# python3 http.server on 127.0.0.1 only: no traffic leaves the machine.
. "$(dirname "$0")/lib.sh"

nf_tmpdir d
mkdir -p "$d/bin" "$d/proj" "$d/secret" "$d/out" "$d/www" "$d/w"
chmod 777 "$d/out" "$d/w"
ln -s "$NSFENCE" "$d/bin/srt"
SRT="$d/bin/srt"
echo TOPSECRET > "$d/secret/key.txt"
echo "hello from 127.0.0.1" > "$d/www/h.txt"
cd "$d/proj"

# srt_run ARG...: stdout in $OUT, stderr in $ERR, status in $RC.
srt_run() {
    local o e
    o=$(mktemp) e=$(mktemp)
    timeout -k 5 60 "$SRT" "$@" >"$o" 2>"$e" </dev/null
    RC=$?
    OUT=$(cat "$o")
    ERR=$(cat "$e")
    rm -f "$o" "$e"
}
REFUSE_FILE="Refusing to run with the built-in defaults, which would drop this file's rules (its denyRead, allowRead and credential entries included)."
REFUSE_FILE_RE=$(printf '%s' "$REFUSE_FILE" | sed 's/[][\.*^$()+?{}|]/\\&/g')

# --- the command line itself -------------------------------------------------------
srt_run --version
is "$RC:$OUT" "0:0.0.83" "--version prints srt's package version, as srt does"
srt_run --help
like "$RC:$OUT" "^0:Usage: srt \[options\]" "--help prints srt's usage"
srt_run
is "$RC:$ERR" "1:Error: No command specified. Use -c <command> or provide command arguments." \
    "no command: srt's error and exit 1"
srt_run -c
is "$RC:$ERR" "1:error: option '-c <command>' argument missing" "-c without its value: commander's error"
srt_run --control-fd 2 true
is "$RC:$ERR" "1:error: option '--control-fd <fd>' argument '2' is invalid. must be an integer file descriptor >= 3 (0-2 are stdin, stdout and stderr)." \
    "--control-fd below 3 is refused with srt's message"
srt_run --control-fd 9 true
is "$RC:$ERR" "1:Error: --control-fd 9 is not usable: EBADF: bad file descriptor, fstat. Refusing to run the command without the control channel it asks for." \
    "--control-fd naming a closed descriptor is refused"

# --- settings files: srt's rules and messages -------------------------------------------
srt_run -c 'echo ran'
is "$RC:$OUT:$ERR" "0:ran:" "a missing default ~/.srt-settings.json means the built-in defaults, silently"
srt_run -d -c 'echo ran'
like "$ERR" "\[SandboxDebug\] No config found at $HOME/.srt-settings.json, using default config" \
    "-d says the default file is missing"
o=$(SRT_DEBUG=1 timeout 60 "$SRT" -c true 2>&1)
like "$o" "^\[SandboxDebug\] " "SRT_DEBUG alone enables the debug lines"
srt_run -s "$d/none.json" true
is "$RC:$ERR" "1:Error: $d/none.json does not exist.
Refusing to run with the built-in defaults, which would drop the rules --settings asked for." \
    "an explicit --settings that is missing is refused"
printf ' \n\t\n' > "$d/empty.json"
srt_run --settings "$d/empty.json" true
is "$RC:$ERR" "1:Error: $d/empty.json is empty. Delete it, or put a config in it.
$REFUSE_FILE" "an empty settings file is refused"
mkdir "$d/dir.json"
srt_run --settings "$d/dir.json" true
is "$RC:$ERR" "1:Error: $d/dir.json could not be read (EISDIR).
$REFUSE_FILE" "an unreadable settings file is refused"
echo '{"network": {' > "$d/bad.json"
srt_run -s "$d/bad.json" true
like "$RC:$ERR" "^1:Error: $d/bad.json is not valid JSON: .*
$REFUSE_FILE_RE\$" "invalid JSON is refused"
echo '{"network": {"deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}' > "$d/schema.json"
srt_run -s "$d/schema.json" true
like "$RC:$ERR" "^1:Error: $d/schema.json does not hold a valid config — network.allowedDomains: .*
$REFUSE_FILE_RE\$" "a file that is not a valid config is refused, naming the key"
echo '{"network": {"allowedDomains": [], "deniedDomains": [], "refuseOpaqueTunnels": true}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}' > "$d/refused.json"
srt_run -s "$d/refused.json" -c 'echo ran'
like "$RC:$ERR" "^1:Error: .*network.refuseOpaqueTunnels: .*nsfence cannot honour it.*
$REFUSE_FILE_RE\$" "a key nsfence cannot honour: srt's refusal form, exit 1"
is "$OUT" "" "and the command did not run"
nsf --settings "$d/refused.json" -- echo ran
like "$RC:$ERR" "^125:nsfence: .*network.refuseOpaqueTunnels" "the same file under nsfence's --settings: 125"

# --- the command: -c verbatim, argv with its boundaries --------------------------------
srt_run -c 'printf "[%s]" "a  b" $((6 * 7)); echo'
is "$RC:$OUT" "0:[a  b][42]" "-c runs the string with a shell"
srt_run printf '[%s]' 'a  b' "it's" '' '$HOME' '"q"' 'x;y'
is "$RC:$OUT" "0:[a  b][it's][][\$HOME][\"q\"][x;y]" "positional argv keeps every argument's boundary, unexpanded"
timeout 60 "$NSFENCE" srt printf '[%s]' 'a b' "c'd" > "$d/o.txt" 2>&1
is "$(cat "$d/o.txt")" "[a b][c'd]" "nsfence srt ARGS... is the same command line"
srt_run ls --no-such-ls-option
like "$RC:$ERR" "^2:.*no-such-ls-option" "an unknown option flows into the command"
srt_run -c 'exit 42'
is "$RC" 42 "the command's exit status is srt's"
srt_run cd /
is "$RC" 0 "a shell builtin runs, as under srt's bash -c"

# --- the environment ------------------------------------------------------------------
srt_run -c 'echo "$SANDBOX_RUNTIME $HTTP_PROXY $HTTPS_PROXY $ALL_PROXY $FTP_PROXY"; echo "$TMPDIR"; f=$(mktemp) && echo "made $f"'
is "$RC:$OUT" "0:1 http://localhost:3128 http://localhost:3128 http://localhost:3128 socks5h://localhost:1080
/tmp/claude
made /tmp/claude/${OUT##*made /tmp/claude/}" "srt's environment with nsfence's endpoints; TMPDIR /tmp/claude works"
[ ! -e /tmp/claude ] || [ -d /tmp/claude ]
is "$?" 0 "nothing is made on the host for TMPDIR"
o=$(CLAUDE_CODE_TMPDIR=/tmp/mine timeout 60 "$SRT" -c 'echo "$TMPDIR"' 2>&1)
is "$o" "/tmp/mine" "CLAUDE_CODE_TMPDIR sets TMPDIR, as srt does"

# --- honoured settings ------------------------------------------------------------------
serve() { # serve DIR PORTFILE
    python3 -c '
import http.server, os, sys
os.chdir(sys.argv[1])
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()' "$@" &
    servers+=($!)
}
servers=()
serve "$d/www" "$d/a.port"
serve "$d/www" "$d/b.port"
for _ in $(seq 100); do [ -s "$d/a.port" ] && [ -s "$d/b.port" ] && break; sleep 0.1; done
PA=$(cat "$d/a.port") PB=$(cat "$d/b.port")
S="$d/s.json"
cat > "$S" <<EOF
{
  "network": { "allowedDomains": ["127.0.0.1:$PA"], "deniedDomains": [] },
  "filesystem": { "denyRead": ["$d/secret"], "allowWrite": ["$d/out"], "denyWrite": [] }
}
EOF
CURL="curl -sS --noproxy '' --max-time 20 -o /dev/null -w %{http_code}"
srt_run -s "$S" -c "echo ran; cat $d/secret/key.txt; ls -A $d/secret"
is "$OUT" "ran" "denyRead: the directory is empty inside"
srt_run -s "$S" -c "echo w > $d/out/f && cat $d/out/f"
is "$RC:$OUT" "0:w" "allowWrite: the directory is writable"
srt_run -s "$S" -c "echo ran; echo w > $d/proj/f"
like "$RC:$OUT:$ERR" "^1:ran:.*Read-only file system" "the working directory is not writable unless listed (srt's defaults)"
srt_run -s "$S" -c "$CURL http://127.0.0.1:$PA/h.txt; echo; $CURL http://127.0.0.1:$PB/h.txt"
is "$OUT" "200
403" "the network allow list: the listed server is reached, another refused"
unlike "$ERR" "sandbox_violations" "srt's CLI prints no <sandbox_violations> block"

# --- signals ------------------------------------------------------------------------------
rm -f "$d/out/started"
"$SRT" -s "$S" -c "touch $d/out/started; sleep 30" </dev/null >/dev/null 2>"$d/sig.err" &
pid=$!
for _ in $(seq 100); do [ -e "$d/out/started" ] && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
is "$?" 0 "srt sent SIGTERM: exit 0, as srt does"
rm -f "$d/out/started"
"$SRT" -s "$S" -c "touch $d/out/started; sleep 30" </dev/null >/dev/null 2>"$d/sig.err" &
pid=$!
for _ in $(seq 100); do [ -e "$d/out/started" ] && break; sleep 0.1; done
kill -HUP "$pid"
wait "$pid"
is "$?:$(cat "$d/sig.err")" "1:Process killed by signal: SIGHUP" "another signal: srt's message and exit 1"
srt_run -c 'kill -KILL $$'
is "$RC" 137 "a command killed inside: 128+N, as srt reports bwrap's status"

# --- --control-fd: the allow list changes while the command runs --------------------------
# The command fetches once per step, when told (a file in $d/w); each
# step's HTTP status lands in $d/w/resN.
LINE_NONE='{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}'
LINE_A='{"network":{"allowedDomains":["127.0.0.1:'$PA'"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}'
cat > "$d/c.json" <<EOF
{ "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$d/w"], "denyWrite": [] } }
EOF
STEPS='for i in 1 2 3 4; do while [ ! -e '$d'/w/go$i ]; do sleep 0.05; done; '"$CURL"' http://127.0.0.1:'$PA'/h.txt > '$d'/w/res$i.tmp; mv '$d'/w/res$i.tmp '$d'/w/res$i; done; echo $(ls -l /proc/self/fd/ | grep -c ctl)'
step() { # step N: let the command make its Nth request; its status
    touch "$d/w/go$1"
    for _ in $(seq 200); do [ -e "$d/w/res$1" ] && break; sleep 0.05; done
    cat "$d/w/res$1" 2>/dev/null
}
live() { # live LABEL COMMAND...: the scenario, COMMAND reading fd 7
    local label=$1
    shift
    trap '' PIPE # a command that died early must fail the checks, not kill the test
    rm -f "$d"/w/* "$d/ctl"
    mkfifo "$d/ctl"
    timeout -k 5 60 "$@" 7<"$d/ctl" >"$d/live.out" 2>"$d/live.err" &
    local pid=$!
    exec 8>"$d/ctl"
    is "$(step 1)" 403 "$label: before any update, the server is refused"
    echo "$LINE_A" >&8
    sleep 0.5
    is "$(step 2)" 200 "$label: a line allowing it: the next connection is allowed"
    echo '{"network": {"allowedDomains": [' >&8
    sleep 0.5
    is "$(step 3)" 200 "$label: an invalid line keeps the previous policy"
    echo "$LINE_NONE" >&8
    sleep 0.5
    is "$(step 4)" 403 "$label: a line without it: refused again"
    exec 8>&-
    wait "$pid"
    is "$?:$(cat "$d/live.out")" "0:0" "$label: EOF is not an error; the control fd is not visible inside"
    is "$(grep -c 'Invalid config on control fd 7: ignored, previous config still in force' "$d/live.err")" 1 \
        "$label: the invalid line is reported with srt's message"
}
live "srt" "$SRT" -s "$d/c.json" --control-fd 7 -c "$STEPS"
live "nsfence" "$NSFENCE" --settings "$d/c.json" --control-fd 7 -- bash -c "$STEPS"

kill "${servers[@]}" 2>/dev/null
wait "${servers[@]}" 2>/dev/null
done_testing
