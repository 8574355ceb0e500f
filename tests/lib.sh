# TAP helpers for nsfence's integration tests (bash). Each test file sources
# this, calls the check functions, and ends with `done_testing`.
#
# Environment from tests/leg: NSFENCE (the binary under test), NF_LEG (root
# or user), NF_MODE (namespaces, or landlock: see the Landlock mode section
# below), NF_HELPERS (built C helpers), NF_FIXTURES, NF_TMP (for nf_tmpdir),
# NF_TESTS (a copy of the checkout's tests/ both legs can read: read
# fixtures there, never through NF_TOP, which may be under /root), HOME
# (fresh, private).

set -u
_nf_n=0
_nf_failed=0
_nf_tmpdirs=()

_nf_cleanup() {
    local d
    # A test that fails midway must not leave a sandbox running.
    jobs -p | xargs -r kill -9 2>/dev/null || true
    for d in "${_nf_tmpdirs[@]}"; do
        rm -rf "$d" 2>/dev/null || true
    done
}
trap _nf_cleanup EXIT

diag() { printf '# %s\n' "$*" | sed '2,$s/^/# /'; }

ok() { # ok CONDITION_STATUS DESCRIPTION
    local status=$1
    shift
    _nf_skipped "$*" && return 0
    _nf_n=$((_nf_n + 1))
    if [ "$status" -eq 0 ]; then
        echo "ok $_nf_n - $*"
    else
        echo "not ok $_nf_n - $*"
        _nf_failed=$((_nf_failed + 1))
        # The last run's own stderr usually says why.
        [ -n "${ERR:-}" ] && diag "last stderr: $(printf '%s' "$ERR" | tail -c 600)"
    fi
}

pass() { ok 0 "$@"; }

# skip_file WHY: what the whole file needs is missing. CI installs and
# provides everything (make deps first, a recent kernel): there it fails.
skip_file() {
    if [ -n "${CI:-}" ]; then
        fail "$1"
        done_testing
        exit
    fi
    echo "1..0 # SKIP $1"
    exit 0
}
fail() { ok 1 "$@"; }

skip() { # skip REASON DESCRIPTION
    _nf_skipped "$2" && return 0
    _nf_n=$((_nf_n + 1))
    echo "ok $_nf_n - $2 # SKIP $1"
}

is() { # is GOT EXPECTED DESCRIPTION
    _nf_skipped "$3" && return 0
    if [ "$1" == "$2" ]; then
        ok 0 "$3"
    else
        ok 1 "$3"
        diag "got:      '$1'"
        diag "expected: '$2'"
    fi
}

# matches GOT REGEX: a one-line REGEX matches any line of GOT (grep -E); one
# that spans lines is matched against GOT whole (^ and $ at its ends), since
# grep would take each of its lines as a pattern of its own.
matches() {
    if [[ $2 == *$'\n'* ]]; then
        [[ $1 =~ $2 ]]
    else
        printf '%s' "$1" | grep -Eq -- "$2"
    fi
}

like() { # like GOT REGEX DESCRIPTION
    _nf_skipped "$3" && return 0
    if matches "$1" "$2"; then
        ok 0 "$3"
    else
        ok 1 "$3"
        diag "got:           '$1'"
        diag "expected like: '$2'"
    fi
}

unlike() { # unlike GOT REGEX DESCRIPTION
    _nf_skipped "$3" && return 0
    if matches "$1" "$2"; then
        ok 1 "$3"
        diag "got:             '$1'"
        diag "expected unlike: '$2'"
    else
        ok 0 "$3"
    fi
}

done_testing() {
    if in_landlock; then
        diag "Landlock mode: $_nf_ll_absent checks skipped as absent, $_nf_ll_partial as partial," \
            "$_nf_ll_nsonly as namespace mode only, $_nf_ll_bug as Landlock-mode bugs"
        _nf_ll_unused
    fi
    echo "1..$_nf_n"
    [ "$_nf_failed" -eq 0 ]
}

# nf_tmpdir VAR: a fresh directory, readable by the other leg too, in VAR;
# removed at exit, and with tests/leg's stage whatever happens. (Not
# `VAR=$(nf_tmpdir)`: a subshell could not record it.)
# ext_proxy_start DIR: helpers/extproxy.py on the host's 127.0.0.1, an
# external proxy that answers every request with a marker and connects
# nowhere; what reached it in $ext_log (under DIR), its pid in $ext_pid, its
# port in $ext_port (empty if it did not start).
ext_proxy_start() {
    ext_log="$1/ext.log"
    : > "$ext_log"
    mkfifo "$1/ext.ready"
    python3 "$NF_TESTS/helpers/extproxy.py" "$ext_log" > "$1/ext.ready" &
    ext_pid=$!
    ext_port=""
    read -r -t 20 ext_port < "$1/ext.ready" || true
}

nf_tmpdir() {
    local _nf_d # not a name a caller could pass: printf -v would set ours
    _nf_d=$(mktemp -d "${NF_TMP:-/var/tmp}/nsfence-t.XXXXXX") || exit 1
    chmod 755 "$_nf_d"
    _nf_tmpdirs+=("$_nf_d")
    printf -v "$1" '%s' "$_nf_d"
}

# Run nsfence; stdout in $OUT, stderr in $ERR, status in $RC. The command
# runs with a timeout so a hang fails the test instead of the suite. In the
# Landlock-mode legs the two lines that mode adds by design (the line every
# run prints on what is weaker, the mode line of a violations block) are
# taken out of $ERR, so checks of stderr see what a namespace-mode run says.
nsf() {
    local o e
    o=$(mktemp) e=$(mktemp)
    timeout -k 5 60 "$NSFENCE" "$@" >"$o" 2>"$e"
    RC=$?
    OUT=$(cat "$o")
    ERR=$(cat "$e")
    rm -f "$o" "$e"
    if in_landlock; then
        ERR=$(printf '%s\n' "$ERR" | sed -e '/^nsfence: Landlock mode (ABI [0-9]*), weaker than namespaces: /d' \
            -e '/^mode landlock (no namespaces; see /d')
    fi
}

is_root() { [ "$NF_LEG" = root ]; }

# meta_writes_refused DESCRIPTION PATH [OPTION...]: every write that changes
# a file without writing its bytes (tests/helpers/metawrite.py: chmod,
# chown, utimes, truncate, xattrs, by path and by descriptor), tried inside
# nsfence run with OPTIONs, fails with EROFS and leaves PATH as it was.
# Landlock covers none of them but truncate, so in Landlock mode this is the
# supervisor's refusal that is checked.
meta_writes_refused() {
    local desc=$1 path=$2 before want
    shift 2
    python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.keep", b"k")' "$path"
    before=$(_nf_meta_state "$path")
    nsf "$@" -- python3 "$NF_TESTS/helpers/metawrite.py" "$path"
    want=$(printf '%s EROFS\n' chmod chown utimes truncate setxattr removexattr fchmod fchown futimens \
        fsetxattr fremovexattr)
    is "$OUT" "$want" "$desc: chmod, chown, utimes, truncate and xattr calls fail with EROFS"
    is "$(_nf_meta_state "$path")" "$before" "$desc: its mode, owner, times, size and xattrs are unchanged"
}
_nf_meta_state() {
    stat -c '%a %u:%g %Y %s' "$1"
    python3 -c 'import os, sys; print(sorted(os.listxattr(sys.argv[1])))' "$1"
}

# Nothing of a run may be left in dir: only the expected names, listed.
listing() { (cd "$1" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort | tr '\n' ' '); }

# --- Landlock mode ------------------------------------------------------------
# The Landlock-mode legs (tests/leg with NF_MODE=landlock) run a test file
# unchanged, with --mode landlock on every run. What Landlock mode's property
# table (`nsfence explain --mode landlock`) calls partial or absent cannot
# hold there: the checks of it are skipped by name and counted, never
# silently passed. The must-hold properties (writes only in the write roots,
# chmod/chown/utimes/xattrs/truncate, protected names, network only through
# the proxy, unix sockets, signals to outside processes) are rows the table
# calls enforced, so no check of them can be skipped this way.
#
#   absent_in_landlock ROW [N]   the next N checks (default 1) test ROW, a row
#   partial_in_landlock ROW [N]  the live table calls absent (partial); a ROW
#                                the table does not call so fails instead
#   namespace_only WHY [N]       the next N checks test how namespace mode
#                                does something (its mount table, its error
#                                text), not a property; Landlock mode's own
#                                check of the property sits beside them
#   landlock_bug WHAT [N]        temporary: the next N checks fail in
#                                Landlock mode through a bug of the engine,
#                                or of its table ("table gap": a weaker
#                                property no row names); skipped so the rest
#                                runs, each one to be fixed
#
# Each is a no-op in namespace mode.
_nf_ll_kind="" _nf_ll_why="" _nf_ll_left=0
_nf_ll_absent=0 _nf_ll_partial=0 _nf_ll_nsonly=0 _nf_ll_bug=0
_nf_ll_table=""

in_landlock() { [ "${NF_MODE:-}" = landlock ]; }

# _nf_skipped DESCRIPTION: when a Landlock-mode skip is pending, report the
# check as skipped and succeed (the caller then checks nothing).
_nf_skipped() {
    [ "$_nf_ll_left" -gt 0 ] || return 1
    _nf_ll_left=$((_nf_ll_left - 1))
    _nf_n=$((_nf_n + 1))
    case $_nf_ll_kind in
    absent) _nf_ll_absent=$((_nf_ll_absent + 1)) ;;
    partial) _nf_ll_partial=$((_nf_ll_partial + 1)) ;;
    nsonly) _nf_ll_nsonly=$((_nf_ll_nsonly + 1)) ;;
    bug) _nf_ll_bug=$((_nf_ll_bug + 1)) ;;
    esac
    echo "ok $_nf_n - $1 # SKIP $_nf_ll_why"
}

# A skip must cover exactly the checks it was written for.
_nf_ll_unused() {
    local left=$_nf_ll_left
    _nf_ll_left=0
    [ "$left" -eq 0 ] || fail "a Landlock-mode skip ($_nf_ll_why) was left with $left checks unused"
}

_nf_ll_pend() { # _nf_ll_pend KIND WHY N
    _nf_ll_unused
    _nf_ll_kind=$1 _nf_ll_why=$2 _nf_ll_left=$3
}

_nf_ll_row() { # _nf_ll_row STATUS ROW N
    in_landlock || return 0
    _nf_ll_unused
    if [ -z "$_nf_ll_table" ]; then
        _nf_ll_table=$("$NSFENCE" explain -- true 2>/dev/null | sed -n '/^Landlock mode, Landlock ABI/,/^$/p')
    fi
    if printf '%s\n' "$_nf_ll_table" | grep -qF -- "  $(printf '%-8s' "$1")  $2: "; then
        _nf_ll_pend "$1" "$1 in Landlock mode: $2" "${3:-1}"
    else
        fail "the Landlock mode table does not call '$2' $1 (only then may its checks be skipped)"
        diag "the table: $_nf_ll_table"
    fi
}

absent_in_landlock() { _nf_ll_row absent "$1" "${2:-1}"; }
partial_in_landlock() { _nf_ll_row partial "$1" "${2:-1}"; }

namespace_only() {
    in_landlock || return 0
    _nf_ll_pend nsonly "namespace mode only: $1" "${2:-1}"
}

landlock_bug() {
    in_landlock || return 0
    _nf_ll_pend bug "landlock bug: $1" "${2:-1}"
}

# not_run DESCRIPTION: a check a pending Landlock-mode skip covers, whose
# commands are not run at all (they would hang, or wait out a timeout).
not_run() {
    if [ "$_nf_ll_left" -gt 0 ]; then
        _nf_skipped "$1"
    else
        fail "$1 (not_run without a Landlock-mode skip pending)"
    fi
}
