# Shared by the benchmarks: build what they run, install the peers.
# Benchmarks are not tests: nothing here asserts a time.

bench_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench_build="$bench_top/tests/bench/build"

bench_prepare() {
    mkdir -p "$bench_build"
    make -s -C "$bench_top" nsfence >/dev/null
    gcc -O2 -o "$bench_build/timeit" "$bench_top/tests/bench/timeit.c"
    # The floor under a whole run, linked as nsfence is: a static PIE, its
    # functions (libc's) laid out in the order nsfence's run first calls them,
    # its relative relocations packed.
    gcc -O2 -Wall -D_GNU_SOURCE -static-pie -ffunction-sections -fuse-ld=lld \
        -Wl,--symbol-ordering-file="$bench_top/tools/hot-order.txt" -Wl,--no-warn-symbol-ordering \
        -Wl,--pack-dyn-relocs=relr \
        -o "$bench_build/bare" "$bench_top/tests/bench/bare.c"
    # nsfence's own policy and plan compile, cold and warm: its library,
    # linked as nsfence is.
    local pkgs="libseccomp libnl-3.0 inih libcares jansson"
    # shellcheck disable=SC2046 # pkg-config's words
    gcc -O2 -Wall -D_GNU_SOURCE -I"$bench_top" $(pkg-config --cflags $pkgs) -static-pie \
        -fuse-ld=lld -Wl,--symbol-ordering-file="$bench_top/tools/hot-order.txt" \
        -Wl,--no-warn-symbol-ordering -Wl,--pack-dyn-relocs=relr \
        -o "$bench_build/planwarm" "$bench_top/tests/bench/planwarm.c" \
        "$bench_top/build/dyn/libnsfence.a" $(pkg-config --static --libs $pkgs) \
        2>"$bench_build/planwarm.ld" || { cat "$bench_build/planwarm.ld" >&2; return 1; }
}

# tests/bench/floors.c, built as $bench_build/floors (the kernel's floors;
# the startup and observer benchmarks run parts of it).
bench_floors() {
    mkdir -p "$bench_build"
    gcc -O2 -Wall -D_GNU_SOURCE -o "$bench_build/floors" "$bench_top/tests/bench/floors.c" -lseccomp
}

# The peers: bubblewrap, and srt (npm, with the bubblewrap, socat and
# ripgrep it needs). Installs what is missing; prints nothing on success.
bench_peers() {
    local want=()
    command -v bwrap >/dev/null || want+=(bubblewrap)
    command -v socat >/dev/null || want+=(socat)
    command -v rg >/dev/null || want+=(ripgrep)
    if [ ${#want[@]} -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >/dev/null 2>&1 || true
    fi
    if [ ! -x "$bench_top/tests/bench/node_modules/.bin/srt" ] && command -v npm >/dev/null; then
        npm install --silent --prefix "$bench_top/tests/bench" @anthropic-ai/sandbox-runtime@0.0.83 \
            >/dev/null 2>&1 || true
    fi
}

bench_srt() { # the srt CLI, or nothing
    local s="$bench_top/tests/bench/node_modules/.bin/srt"
    [ -x "$s" ] && echo "$s"
}

# A private copy of nsfence, timeit and bare the unprivileged user can run.
bench_user_copy() {
    local d
    d=$(mktemp -d /var/tmp/nsfence-bench-bin.XXXXXX)
    chmod 755 "$d"
    cp "$bench_top/nsfence" "$bench_build/timeit" "$bench_build/bare" "$d/"
    chmod 755 "$d/nsfence" "$d/timeit" "$d/bare"
    echo "$d"
}

# The median of the numbers on stdin, one per line.
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# met VALUE LIMIT le|ge: "met" or "missed" for VALUE against LIMIT.
met() { awk -v v="$1" -v l="$2" -v op="$3" 'BEGIN { ok = op == "le" ? v <= l : v >= l; print (v == "-" ? "-" : ok ? "met" : "missed") }'; }

# Busy time of every CPU since boot, in ms (/proc/stat: all but idle and iowait).
busy_ms() { awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { print int(($2 + $3 + $4 + $7 + $8 + $9) * 1000 / hz) }' /proc/stat; }
