#!/bin/bash
# The network fence: the host-side proxy is the only way out and lets through
# only listed domains. Real upstream servers in a network namespace of the
# harness's own, real names (a private /etc/hosts), real clients.
# fixture: network
# modes: landlock
. "$(dirname "$0")/lib.sh"

raw="$NF_HELPERS/rawtcp"
nf_tmpdir d
cd "$d"
A="--allow-domain allowed.test"

# --- allowed traffic arrives intact ---------------------------------------------
nsf $A -- curl -sS http://allowed.test/index.html
is "$OUT" "hello from upstream" "plain HTTP through HTTP_PROXY reaches an allowed host"
is "$(printf '%s' "$ERR")" "" "an allowed run reports no violation"
nsf $A -- sh -c 'curl -sS http://allowed.test/big.bin | sha256sum | cut -d" " -f1'
is "$OUT" "$NF_BIG_SHA" "a 1 MiB body arrives intact over plain HTTP"
nsf $A -- sh -c 'curl -sSk https://allowed.test/big.bin | sha256sum | cut -d" " -f1'
is "$OUT" "$NF_BIG_SHA" "a 1 MiB body arrives intact over HTTPS (CONNECT tunnel)"
nsf $A -- sh -c 'curl -sS --socks5-hostname localhost:1080 http://allowed.test/big.bin | sha256sum | cut -d" " -f1'
is "$OUT" "$NF_BIG_SHA" "a 1 MiB body arrives intact through SOCKS5"
nsf $A -- sh -c 'head -c 300000 /dev/urandom > up.bin; curl -sS --data-binary @up.bin -H "Content-Type: application/octet-stream" http://allowed.test/echo | cmp - up.bin && echo same'
is "$OUT" "same" "a request body goes up and back intact"
nsf $A -- curl -sS http://allowed.test/host
is "$OUT" "allowed.test" "the upstream sees a canonical Host"
# Keep-alive through the proxy: curl reuses its one connection to the proxy
# (%{num_connects} 1, then 0), and the upstream's X-Conn-Id (a number per TCP
# connection it accepted) shows the proxy reusing its upstream connection too.
ids='%header{x-conn-id} %{num_connects}\n'
nsf $A -- sh -c "curl -sS -w '%{stderr}$ids' http://allowed.test/index.html http://allowed.test/index.html http://allowed.test/host"
is "$OUT" "hello from upstream
hello from upstream
allowed.test" "several requests on one kept-alive connection"
conns=$(printf '%s\n' "$ERR" | grep -E '^[0-9]+ [0-9]+$')
is "$(printf '%s\n' "$conns" | cut -d' ' -f2 | tr '\n' ' ')" "1 0 0 " \
    "the client sent all three on one connection to the proxy"
is "$(printf '%s\n' "$conns" | cut -d' ' -f1 | sort -u | wc -l)" 1 \
    "and they arrived upstream on one connection (one X-Conn-Id)"
nsf $A -- sh -c "for i in 1 2; do curl -sS -o /dev/null -w '$ids' http://allowed.test/index.html; done"
is "$(printf '%s\n' "$OUT" | cut -d' ' -f2 | tr '\n' ' ')" "1 1 " "control: two client connections..."
is "$(printf '%s\n' "$OUT" | cut -d' ' -f1 | sort -u | wc -l)" 2 \
    "control: ...arrive on two upstream connections (two X-Conn-Ids)"
nsf $A --allow-domain sub.allowed.test -- curl -sS -o /dev/null -o /dev/null -o /dev/null -w "$ids" \
    http://allowed.test/index.html http://sub.allowed.test/index.html http://allowed.test/index.html
is "$(printf '%s\n' "$OUT" | cut -d' ' -f2 | tr '\n' ' ')" "1 0 0 " \
    "requests for two hosts on one client connection..."
is "$(printf '%s\n' "$OUT" | cut -d' ' -f1 | sort -u | wc -l)" 3 \
    "...never share an upstream connection, though both names have one address"
nsf $A -- git clone -q http://allowed.test/repo.git cloned
is "$RC" 0 "git clone over HTTP through the proxy works"
is "$(cat cloned/README 2>/dev/null)" "cloned through the proxy" "the clone has the repository's content"
# In the clone, its hooks, config and commondir are protected; fetching
# still writes objects, refs and FETCH_HEAD.
like "$ERR" "created git-repository $d/cloned/.git " "the clone's new .git is reported: git there obeys what the command wrote"
cd cloned
nsf $A -- sh -c 'git fetch -q origin && git rev-parse --verify -q FETCH_HEAD >/dev/null && echo fetched'
is "$RC:$OUT" "0:fetched" "git fetch through the proxy works in a repository with its git files protected"
cd "$d" && rm -rf cloned

# --- denials ----------------------------------------------------------------------
nsf $A -- sh -c 'echo ran; curl -sS -i http://other.test/'
like "$OUT" '^ran' "the command ran (plain denial)"
like "$OUT" 'HTTP/1.1 403 Forbidden' "a host not on the list gets 403 Forbidden"
like "$OUT" 'X-Proxy-Error: blocked-by-allowlist' "with X-Proxy-Error: blocked-by-allowlist"
like "$OUT" 'Connection blocked by network allowlist$' "and the body says why"
like "$ERR" '<sandbox_violations>
deny network-outbound other.test:80 \(host is not on the allow list\)
</sandbox_violations>$' "the violations block names the host, port and reason"

nsf $A -- "$raw" 127.0.0.1 3128 's:CONNECT other.test:443 HTTP/1.1\r\nHost: other.test:443\r\n\r\n' all
is "$OUT" 'HTTP/1.1 403 host is not on the allow list\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\nConnection blocked by network allowlist' \
    "a denied CONNECT gets the exact 403 bytes, then the connection closes"

nsf $A --deny-domain allowed.test -- curl -sS -o /dev/null -w '%{http_code}' http://allowed.test/
is "$OUT" "403" "deny beats allow"
like "$ERR" 'allowed.test:80 \(host is on the deny list\)' "the deny list is named as the reason"
printf '[network]\nallow_domain = allowed.test\ndeny_domain = allowed.test\ndeny_reason = allowed.test: ask the owner first\n' > reason.ini
nsf --config "$d/reason.ini" -- "$raw" 127.0.0.1 3128 's:CONNECT allowed.test:443 HTTP/1.1\r\n\r\n' all
like "$OUT" '^HTTP/1.1 403 ask the owner first\\r\\n' "a deny_reason is the CONNECT 403 phrase"
like "$ERR" 'deny network-outbound allowed.test:443 \(ask the owner first\)' "and the violation's reason"
rm -f reason.ini

nsf --allow-domain '*.allowed.test' -- sh -c 'curl -sS http://sub.allowed.test/host; curl -sS http://deep.sub.allowed.test/host; curl -sS -o /dev/null -w "%{http_code}\n" http://allowed.test/'
is "$OUT" "sub.allowed.test
deep.sub.allowed.test
403" "a wildcard allows subdomains, never the apex"

nsf --allow-domain allowed.test:8080 -- sh -c 'curl -sS http://allowed.test:8080/index.html; curl -sS -o /dev/null -w "%{http_code}\n" http://allowed.test/index.html'
is "$OUT" "hello from upstream
403" "a :port rule allows only that port"

# Numeric spellings of an address are canonicalised before any check (sent
# raw: curl would normalise them itself, and skip the proxy for loopback).
dec=$(echo "$NF_UP4" | awk -F. '{printf "%d", ($1*16777216)+($2*65536)+($3*256)+$4}')
hex=$(printf '0x%02x.%s' "$(echo "$NF_UP4" | cut -d. -f1)" "$(echo "$NF_UP4" | cut -d. -f2-)")
codes=""
for h in "$NF_UP4" "$dec" "$hex"; do
    nsf --allow-domain "$NF_UP4" --deny-domain "$NF_UP4" -- "$raw" 127.0.0.1 3128 "s:GET http://$h/index.html HTTP/1.1\r\n\r\n" r:12
    codes="$codes$OUT "
done
is "$codes" "485454502f312e3120343033 485454502f312e3120343033 485454502f312e3120343033 " \
    "numeric spellings of a denied address are refused (HTTP/1.1 403)"
codes=""
for h in 127.0.0.1 2130706433 0x7f.1 127.1 "[::ffff:127.0.0.1]" "[::1]"; do
    nsf -- "$raw" 127.0.0.1 3128 "s:GET http://$h/ HTTP/1.1\r\n\r\n" r:12
    codes="$codes$OUT "
done
is "$codes" "$(printf '485454502f312e3120343033 %.0s' 1 2 3 4 5 6)" "numeric spellings of loopback are refused"
nsf -- "$raw" 127.0.0.1 3128 "s:GET http://0x7f.1/ HTTP/1.1\r\n\r\n" r:12
like "$ERR" 'deny network-outbound 127.0.0.1:80' "a numeric spelling is reported canonicalised"

# The resolved-address guard.
nsf --allow-domain loop.test -- curl -sS -i http://loop.test/
like "$OUT" 'X-Proxy-Error: blocked-by-sandbox-runtime' "an allowed name resolving to 127.0.0.1 is refused"
like "$OUT" 'Connection to loop.test blocked: resolved to a loopback address' "the refusal names the address class"
like "$ERR" 'deny network-outbound loop.test:80 \(resolved to a loopback address\)' "and the violation says so"
nsf --allow-domain loop.test -- "$raw" 127.0.0.1 3128 's:CONNECT loop.test:22 HTTP/1.1\r\n\r\n' all
is "$OUT" "HTTP/1.1 403 resolved to a loopback address\\r\\nContent-Type: text/plain\\r\\nX-Proxy-Error: blocked-by-sandbox-runtime\\r\\n\\r\\nConnection to loop.test blocked: resolved to a loopback address" \
    "a guarded CONNECT gets srt's exact 403"
nsf --allow-domain self.test -- curl -sS -o /dev/null -w '%{http_code}' http://self.test/
is "$OUT" "403" "an allowed name resolving to this host's own veth address is refused"
like "$ERR" "self.test:80 \\(resolved to one of this host's addresses\\)" "named as one of this host's addresses"

# The name the rules checked is the only name looked up: resolv.conf's search
# list never completes it. With `search corp.test` and a Kubernetes pod's
# ndots:5, a resolver tries api.allowed.test.corp.test first, a name no rule
# allows; and a name that does not exist falls through to the search domain.
# A DNS server of the test's own on its host-side veth address answers both
# (the .corp.test names with 127.0.0.1, which the guard would report); the
# resolv.conf naming it is bound in a mount namespace around nsfence alone.
if is_root; then
    printf 'nameserver %s\nsearch corp.test\noptions ndots:5\n' "$NF_HOST4" > "$d/search.conf"
    : > "$d/dns.log"
    mkfifo "$d/dns.ready"
    timeout 300 python3 "$NF_TESTS/helpers/dnsd.py" "$NF_HOST4" "$d/dns.log" "api.allowed.test=$NF_UP4" \
        "api.allowed.test.corp.test=127.0.0.1" "nx.allowed.test.corp.test=127.0.0.1" > "$d/dns.ready" &
    dns_pid=$!
    read -r -t 20 _ < "$d/dns.ready" || true
    in_search() { unshare -m --propagation private sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$d/search.conf" "$@"; }
    cat > "$d/in-search" <<EOF
#!/bin/sh
exec unshare -m --propagation private sh -c 'mount --bind "\$0" /etc/resolv.conf && exec "\$@"' "$d/search.conf" "$NSFENCE" "\$@"
EOF
    chmod +x "$d/in-search"
    is "$(in_search getent ahostsv4 api.allowed.test | head -1 | cut -d' ' -f1)" "127.0.0.1" \
        "control: under this resolv.conf, the system resolver takes api.allowed.test for api.allowed.test.corp.test"
    : > "$d/dns.log"
    NSFENCE="$d/in-search" nsf --allow-domain api.allowed.test -- curl -sS http://api.allowed.test/index.html
    is "$OUT" "hello from upstream" "an allowed name is reached at its own address, not its search-list completion's"
    NSFENCE="$d/in-search" nsf --allow-domain '*.allowed.test' -- curl -sS -o /dev/null -w '%{http_code}' http://nx.allowed.test/
    is "$OUT" "502" "a name that does not exist is not completed from the search list"
    unlike "$ERR" 'loopback' "(nothing reached the completion's address)"
    unlike "$(cat "$d/dns.log")" 'corp\.test' "the search domain was never asked"
    like "$(cat "$d/dns.log")" 'api\.allowed\.test' "(the server was asked, for the names themselves)"
    kill "$dns_pid" 2>/dev/null
    wait "$dns_pid" 2>/dev/null
fi

# IPv6 upstream, and the proxy on ::1 inside.
nsf --allow-domain v6.test -- curl -sS -x 'http://[::1]:3128' http://v6.test/index.html
is "$OUT" "hello from upstream" "an IPv6 upstream is reachable, through the proxy's ::1 endpoint"

# --- SOCKS5, byte-exact ----------------------------------------------------------
nsf $A -- "$raw" 127.0.0.1 1080 x:050100 r:2
is "$OUT" "0500" "SOCKS greeting: no-auth accepted"
nsf $A -- "$raw" 127.0.0.1 1080 x:050100 r:2 x:050100030a6f746865722e74657374 x:0050 r:10
is "$OUT" "0500
05020001000000000000" "SOCKS CONNECT to a host not on the list: 05 02 00 01 00..."
# A name with a NUL in it is refused, and reported as sent, never as the
# allowed name before the NUL; port 0 is refused as what it is.
nsf $A -- "$raw" 127.0.0.1 1080 x:050100 r:2 x:0501000318616c6c6f7765642e74657374002e6f746865722e74657374 x:0050 r:10
like "$OUT" "^0500
0502" "SOCKS CONNECT to a name with a NUL in it is refused"
like "$ERR" 'deny network-outbound allowed\.test\\x00\.other\.test:80 ' "and reported as sent, the NUL spelled out"
nsf $A -- "$raw" 127.0.0.1 1080 x:050100 r:2 x:050100030c616c6c6f7765642e74657374 x:0000 r:10
like "$ERR" 'deny network-outbound allowed\.test:0 \(port 0 is no destination\)' "SOCKS CONNECT to port 0 is refused as such"
nsf $A -- "$raw" 127.0.0.1 1080 x:050100 r:2 x:050100030c616c6c6f7765642e74657374 x:0007 r:10 s:ping r:4
is "$OUT" "0500
05000001000000000000
70696e67" "SOCKS CONNECT allowed: 05 00 00 01 00... then the tunnel echoes"
nsf $A -- "$raw" 127.0.0.1 1080 x:050100 r:2 x:050200030c616c6c6f7765642e74657374 x:0050 r:10
is "$OUT" "0500
05070001000000000000" "SOCKS BIND gets 07"
nsf $A -- "$raw" 127.0.0.1 1080 x:050100 r:2 x:050300030c616c6c6f7765642e74657374 x:0050 r:10
is "$OUT" "0500
05070001000000000000" "SOCKS UDP ASSOCIATE gets 07"
nsf --allow-domain "$NF_UP4" -- "$raw" 127.0.0.1 1080 x:050100 r:2 x:05010001$(printf '%02x' $(echo "$NF_UP4" | tr . ' '))0009 r:10
is "$OUT" "0500
05040001000000000000" "SOCKS to an allowed address with nothing listening: 05 04"
nsf $A -- "$raw" 127.0.0.1 1080 x:040100 r:2
like "$OUT" '^EOF after 0 bytes' "a wrong SOCKS version is closed without a reply"

# --- robustness -----------------------------------------------------------------
nsf $A -- bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128; printf "GET http://allowed.test/ HTTP/1.1\r\nHo" >&3; curl -sS -m 5 http://allowed.test/index.html; exec 3>&-'
is "$OUT" "hello from upstream" "a client stalled in the middle of its head does not block another"
nsf $A -- "$NF_HELPERS/tunnels" 3128 allowed.test:7 1000
is "$OUT" "ok 1000" "1,000 concurrent tunnels work"
nsf $A -- "$raw" 127.0.0.1 3128 "s:GET http://allowed.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n" all
like "$OUT" '^HTTP/1.1 400' "a Host header disagreeing with the URL is refused"
nsf $A -- "$raw" 127.0.0.1 3128 "s:GET /index.html HTTP/1.1\r\nHost: allowed.test\r\n\r\n" all
like "$OUT" '^HTTP/1.1 400' "an origin-form request (not a proxy request) is refused"
nsf $A -- sh -c "head -c 70000 /dev/zero | tr '\\0' a > big-head; printf 'GET http://allowed.test/ HTTP/1.1\r\nX: ' > req; cat big-head >> req; \"$raw\" 127.0.0.1 3128 \"s:\$(cat req)\" all"
like "$OUT" '^HTTP/1.1 431' "a head over 64 KiB gets 431"
rm -f big-head req

# --- nothing bypasses the proxy -------------------------------------------------
nsf $A -- "$NF_HELPERS/nfnet" connect "$NF_UP4" 80
like "$OUT" '^connect: (Network is unreachable|No route to host)' "a direct connect that bypasses the proxy fails"
nsf $A -- sh -c 'env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS -m 5 http://allowed.test/ 2>&1; echo rc=$?'
like "$OUT" 'rc=[1-9]' "a client ignoring the proxy variables gets nowhere"
nsf --no-network -- sh -c 'echo "proxy=${HTTP_PROXY:-none}"; curl -sS -m 3 http://127.0.0.1:3128/ 2>&1 | head -1'
like "$OUT" 'proxy=none' "--no-network sets no proxy variables"
like "$OUT" 'Connection refused|Failed to connect' "--no-network has no endpoints"

# --- nor do the host's own services -----------------------------------------------
# In Landlock mode the command shares the host's network namespace: a
# service on the host's loopback is one connect() away unless the
# supervisor redirects or refuses it. Whatever the command tries, nothing
# reaches a listener on the host's 127.0.0.1.
ext_proxy_start "$d"
mkfifo "$d/udp.ready"
python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
s.recv(100)
open(sys.argv[1], "a").write("datagram\n")' "$d/udp.log" > "$d/udp.ready" &
udp_pid=$!
udp_port=""
read -r -t 20 udp_port < "$d/udp.ready" || true
ok $([ -n "$ext_port" ] && [ -n "$udp_port" ] && echo 0 || echo 1) "control: TCP and UDP listeners on the host's 127.0.0.1"
probe='"$0" connect 127.0.0.1 "$1"
curl -sS -m 5 -x "http://127.0.0.1:$1" http://allowed.test/ 2>&1 | head -1
python3 -c "import socket, sys
socket.socket().sendto(b\"GET / HTTP/1.0\r\n\r\n\", socket.MSG_FASTOPEN, (\"127.0.0.1\", int(sys.argv[1])))" "$1" 2>&1 | tail -1
python3 -c "import socket, sys
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"127.0.0.1\", int(sys.argv[1])))" "$2" 2>&1 | tail -1
echo ran'
nsf $A -- sh -c "$probe" "$NF_HELPERS/nfnet" "$ext_port" "$udp_port"
like "$OUT" 'ran$' "the command ran (the host's loopback)"
unlike "$OUT" '^connected' "a connect to a service on the host's 127.0.0.1 fails"
is "$(cat "$ext_log")" "" "nothing reached the host's TCP listener (connect, a proxy of the command's, TCP Fast Open)"
is "$(cat "$d/udp.log" 2>/dev/null)" "" "no datagram reached the host's UDP listener"
sh -c "$probe" "$NF_HELPERS/nfnet" "$ext_port" "$udp_port" >/dev/null 2>&1
for _ in $(seq 50); do [ -s "$d/udp.log" ] && break; sleep 0.1; done
is "$(grep -c . "$ext_log"):$(cat "$d/udp.log" 2>/dev/null)" "2:datagram" \
    "control: outside nsfence the same tries reach both listeners"
kill "$ext_pid" "$udp_pid" 2>/dev/null
wait "$ext_pid" "$udp_pid" 2>/dev/null
rm -f "$d"/ext.* "$d"/udp.*

# --- environment -------------------------------------------------------------------
nsf -- sh -c 'for v in HTTP_PROXY HTTPS_PROXY http_proxy https_proxy ALL_PROXY all_proxy GRPC_PROXY NO_PROXY no_proxy FTP_PROXY RSYNC_PROXY DOCKER_HTTP_PROXY DOCKER_HTTPS_PROXY CLOUDSDK_PROXY_TYPE CLOUDSDK_PROXY_ADDRESS CLOUDSDK_PROXY_PORT NODE_USE_ENV_PROXY SANDBOX_RUNTIME; do printenv $v; done'
is "$OUT" "http://localhost:3128
http://localhost:3128
http://localhost:3128
http://localhost:3128
http://localhost:3128
http://localhost:3128
http://localhost:3128
localhost,127.0.0.1,::1
localhost,127.0.0.1,::1
socks5h://localhost:1080
localhost:3128
http://localhost:3128
http://localhost:3128
http
localhost
3128
1
1" "the proxy variables inside the sandbox"
nsf -- printenv JAVA_TOOL_OPTIONS GIT_SSH_COMMAND
like "$OUT" '-Dhttps.proxyHost=localhost -Dhttps.proxyPort=3128' "JAVA_TOOL_OPTIONS carries the proxy"
like "$OUT" "ProxyCommand=.*nsfence.* connect %h %p" "GIT_SSH_COMMAND goes through nsfence connect"
printf '[network]\nhttp_port = 8888\nsocks_port = 1999\nallow_domain = allowed.test\n' > ports.ini
nsf --config "$d/ports.ini" -- sh -c 'printenv HTTP_PROXY; curl -sS http://allowed.test/index.html; curl -sS --socks5-hostname localhost:1999 http://allowed.test/index.html'
is "$OUT" "http://localhost:8888
hello from upstream
hello from upstream" "configured ports are used for the endpoints and the variables"
rm -f ports.ini

# nsfence connect: ssh's ProxyCommand, here with a raw echo.
nsf $A -- sh -c 'printf "via connect\n" | "$0" connect allowed.test 7 | head -1' "$NSFENCE"
is "$OUT" "via connect" "nsfence connect tunnels stdio through the proxy"
nsf $A -- sh -c 'echo x | "$0" connect other.test 22; echo rc=$?' "$NSFENCE"
like "$ERR" 'connect other.test:22: HTTP/1.1 403' "nsfence connect reports a denial"

# --- behind a parent proxy -----------------------------------------------------------
: > "$NF_PARENT_LOG" 2>/dev/null || true
HTTPS_PROXY="$NF_PARENT" nsf $A -- curl -sS http://allowed.test/index.html
is "$OUT" "hello from upstream" "with HTTPS_PROXY set, allowed traffic goes through the parent proxy"
like "$(cat "$NF_PARENT_LOG")" 'CONNECT allowed.test:80' "the parent proxy saw the CONNECT"
HTTPS_PROXY="$NF_PARENT" nsf $A -- curl -sS -o /dev/null -w '%{http_code}' http://other.test/
is "$OUT" "403" "the rules still apply first behind a parent proxy"
unlike "$(cat "$NF_PARENT_LOG")" 'other.test' "a denied host never reaches the parent proxy"
before=$(wc -l < "$NF_PARENT_LOG")
HTTPS_PROXY="$NF_PARENT" NO_PROXY=allowed.test nsf $A -- curl -sS http://allowed.test/index.html
is "$OUT:$(wc -l < "$NF_PARENT_LOG")" "hello from upstream:$before" "NO_PROXY sends a host direct"
# The parent resolves and connects, but the name is checked where it
# resolves here too: a parent on this host would reach its loopback.
before=$(wc -l < "$NF_PARENT_LOG")
HTTPS_PROXY="$NF_PARENT" nsf --allow-domain loop.test -- curl -sS -i http://loop.test/
like "$OUT" 'Connection to loop.test blocked: resolved to a loopback address' \
    "behind a parent proxy, an allowed name resolving to loopback is refused too"
is "$(wc -l < "$NF_PARENT_LOG")" "$before" "and never reaches the parent proxy"
# A parent on this host's loopback is asked for the address the guard
# checked, not the name: its own lookup could answer 127.0.0.1 (DNS
# rebinding) and reach this host's services. Here the parent's hosts file
# says allowed.test is 127.0.0.1, where a secret is served.
echo "127.0.0.1 allowed.test" > "$d/rebind.hosts"
python3 -c '
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"HOST-LOOPBACK-SECRET\n")
    def log_message(self, *a): pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()' > "$d/secret.port" &
secret_pid=$!
python3 "$NF_TESTS/helpers/parentproxy.py" 127.0.0.1 0 "$d/lparent.log" "$d/rebind.hosts" > "$d/lparent.out" 2>&1 &
lparent_pid=$!
for _ in $(seq 100); do [ -s "$d/secret.port" ] && grep -q ready "$d/lparent.out" && break; sleep 0.05; done
sp=$(head -1 "$d/secret.port")
lp=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$d/lparent.out" | head -1)
curl -sS -x "http://127.0.0.1:$lp" -p "http://allowed.test:$sp/" > "$d/ctl.out" 2>/dev/null
is "$(cat "$d/ctl.out")" "HOST-LOOPBACK-SECRET" "control: that parent, asked for the name, reaches the host's loopback secret"
HTTPS_PROXY="http://127.0.0.1:$lp" nsf $A -- sh -c "echo ran; curl -sS -p http://allowed.test:$sp/ 2>/dev/null"
is "$OUT" "ran" "through nsfence the command ran and did not reach it"
like "$(cat "$d/lparent.log")" "CONNECT $NF_UP4:$sp" "the parent was asked for the checked address"
kill "$secret_pid" "$lparent_pid" 2>/dev/null
wait "$secret_pid" "$lparent_pid" 2>/dev/null
printf '[network]\nallow_domain = allowed.test\nparent_proxy = %s\n' "$NF_PARENT" > parent.ini
nsf --config "$d/parent.ini" -- curl -sSk https://allowed.test/index.html
is "$OUT" "hello from upstream" "[network] parent_proxy is used too"
like "$(tail -1 "$NF_PARENT_LOG")" 'CONNECT allowed.test:443' "the parent proxy saw that CONNECT"
rm -f parent.ini

# --- explain -----------------------------------------------------------------------
nsf explain --allow-domain '*.allowed.test' --deny-domain bad.allowed.test -- true
like "$OUT" 'bad.allowed.test +deny \(host is on the deny list\)
 +\*\.allowed\.test +allow' "explain prints the network rules in order"

done_testing
