#!/bin/bash
# The network namespace has only lo, up, with 127.0.0.1 and ::1; nothing else
# is reachable.
. "$(dirname "$0")/lib.sh"

nfnet="$NF_HELPERS/nfnet"
nf_tmpdir d
cd "$d"

nsf --no-network -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
is "$OUT" "lo" "only lo exists"
nsf --no-network -- cat /sys/class/net/lo/operstate /proc/net/if_inet6
like "$OUT" 'lo' "lo is configured"

nsf --no-network -- "$nfnet" loopback 127.0.0.1
is "$OUT" "ok" "127.0.0.1 answers inside"
if [ -e /proc/net/if_inet6 ]; then
    nsf --no-network -- "$nfnet" loopback ::1
    is "$OUT" "ok" "::1 answers inside"
fi

# The proxy's endpoints are bound once lo is up, on every run: bound before,
# ::1 does not exist yet and only the IPv4 listeners are made. (The host side
# brings lo up; before init waited for it, the order was a race, lost about
# two runs in three here.)
if [ -e /proc/net/if_inet6 ]; then
    missing=0
    for i in $(seq 20); do
        nsf -- cat /proc/net/tcp6 /proc/net/tcp
        grep -q ' 00000000000000000000000001000000:0C38 00000000000000000000000000000000:0000 0A ' <<<"$OUT" &&
            grep -q ' 0100007F:0C38 00000000:0000 0A ' <<<"$OUT" || missing=$((missing + 1))
    done
    is "$missing" 0 "in 20 runs the proxy listens on 127.0.0.1:3128 and [::1]:3128 every time"
fi

# Pick an address of this host that is not loopback, and a public one: with
# no route, the connect fails at once (no packet leaves).
hostaddr=$(ip -4 -o addr show scope global 2>/dev/null | awk '{split($4,a,"/"); print a[1]; exit}')
for target in ${hostaddr:-} 192.0.2.1 198.51.100.7; do
    nsf --no-network -- "$nfnet" connect "$target" 80
    like "$OUT" '^connect: (Network is unreachable|No route to host)' "a TCP connect to $target fails from inside"
done
nsf --no-network -- "$nfnet" connect 2001:db8::1 80
like "$OUT" '^connect: (Network is unreachable|No route to host|Cannot assign)' "a TCP connect to an IPv6 address fails"

# The host's loopback services are not the sandbox's loopback.
nsf --no-network -- "$nfnet" connect 127.0.0.1 22
like "$OUT" '^connect: Connection refused' "127.0.0.1 inside is the sandbox's own"

done_testing
