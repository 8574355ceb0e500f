#!/bin/bash
# Bad input is refused with one line naming the file, the line and the key,
# and exit 125; the command never runs. Config precedence and lookup.
. "$(dirname "$0")/lib.sh"

nf_tmpdir d
cd "$d"

refuse() { # refuse DESCRIPTION REGEX nsfence-args...
    local desc=$1 re=$2
    shift 2
    nsf "$@" -- sh -c 'echo RAN'
    is "$RC" 125 "$desc: exit 125"
    is "$OUT" "" "$desc: the command did not run"
    like "$ERR" "^nsfence: $re" "$desc: the message names the problem"
    is "$(printf '%s\n' "$ERR" | wc -l)" 1 "$desc: one line"
}

cfg() { printf "$1" > "$d/c.ini"; }

cfg '[filesystem]\nallow_wrte = /tmp\n'
refuse "unknown key" "$d/c.ini:2: \\[filesystem\\] allow_wrte: unknown key" --config "$d/c.ini"
cfg '[network]\nallow_domain = ok.example\n[filesystm]\ndeny_read = /x\n'
refuse "unknown section" "$d/c.ini:3: .*filesystm.*unknown section" --config "$d/c.ini"
cfg '[empty-and-unknown]\n'
refuse "an empty unknown section" "$d/c.ini:1: .*unknown section" --config "$d/c.ini"
cfg 'allow_write = /tmp\n'
refuse "a key outside a section" "$d/c.ini:1: allow_write: key outside a section" --config "$d/c.ini"
cfg '[network]\nenabled = maybe\n'
refuse "a bad boolean" "$d/c.ini:2: \\[network\\] enabled: 'maybe' is not a boolean" --config "$d/c.ini"
cfg '[filesystem]\nmandatory_deny_depth = 11\n'
refuse "a depth out of range" "$d/c.ini:2: \\[filesystem\\] mandatory_deny_depth: '11' is not a number" --config "$d/c.ini"
cfg '[network]\nhttp_port = 70000\n'
refuse "a port out of range" "$d/c.ini:2: \\[network\\] http_port" --config "$d/c.ini"
cfg '[network]\nallow_domain = *.com\n'
refuse "a wildcard over a TLD" "$d/c.ini:2: \\[network\\] allow_domain" --config "$d/c.ini"
cfg '[network]\nallow_domain = http://example.com\n'
refuse "a URL as a domain" "$d/c.ini:2: \\[network\\] allow_domain" --config "$d/c.ini"
cfg '[network]\ndeny_address = 10.0.0.0/33\n'
refuse "a bad CIDR" "$d/c.ini:2: \\[network\\] deny_address" --config "$d/c.ini"
cfg '[network]\nparent_proxy = https://proxy:3128\n'
refuse "an https parent proxy" "$d/c.ini:2: \\[network\\] parent_proxy" --config "$d/c.ini"
cfg '[filesystem]\nthis line has no equals sign\n'
refuse "a syntax error" "$d/c.ini:2: syntax error" --config "$d/c.ini"
long=$(printf 'x%.0s' $(seq 300))
cfg "[filesystem]\nallow_write = /$long\n"
refuse "a line too long for inih" "$d/c.ini:2: line too long" --config "$d/c.ini"
printf '[filesystem]\nallow_write = /a\0b\n' > "$d/c.ini"
refuse "a NUL byte" "$d/c.ini:2: contains a NUL byte" --config "$d/c.ini"
cfg '[filesystem]\nallow_write = ~nobody/x\n'
refuse "a ~user path" "$d/c.ini:2: \\[filesystem\\] allow_write: .*~user" --config "$d/c.ini"
refuse "a missing --config" "config $d/missing.ini: No such file or directory" --config "$d/missing.ini"
mkdir -p "$d/dir.ini"
refuse "a directory as --config" "config $d/dir.ini: is a directory" --config "$d/dir.ini"
if ! is_root; then
    cfg '[filesystem]\n'
    chmod 000 "$d/c.ini"
    refuse "an unreadable --config" "config $d/c.ini: Permission denied" --config "$d/c.ini"
    chmod 644 "$d/c.ini"
fi

refuse "an unknown option" "unknown option --frobnicate" --frobnicate
nsf
is "$RC" 125 "no command at all: exit 125"
like "$ERR" "^nsfence: no command given" "no command: the message says so"
refuse "an invalid --allow-domain" "--allow-domain \\*: " --allow-domain '*'
refuse "an empty --deny-write" "--deny-write: empty value" --deny-write=

# The default config is read when it exists, and its lists accumulate with
# the flags'.
mkdir -p "$HOME/.config/nsfence" "$d/extra1" "$d/extra2"
printf '[filesystem]\nallow_write = %s\nallow_write = %s/extra2\n' "$d/extra1" "$d" > "$HOME/.config/nsfence/config.ini"
nsf explain --allow-write "$d" -- true
like "$OUT" "config +$HOME/.config/nsfence/config.ini" "the default config is used when it exists"
like "$OUT" "allow_write +$d
 +$d/extra1
 +$d/extra2" "the built-in default, the config and the flags accumulate in order"
printf '[bogus]\n' > "$HOME/.config/nsfence/config.ini"
refuse "a broken default config" "$HOME/.config/nsfence/config.ini:1:" 
if ! is_root; then
    chmod 000 "$HOME/.config/nsfence"
    nsf -- sh -c 'echo RAN'
    is "$RC:$OUT" "0:RAN" "an inaccessible default config counts as absent"
    chmod 755 "$HOME/.config/nsfence"
fi
rm -rf "$HOME/.config"
XDG_CONFIG_HOME="$d/xdg" 
mkdir -p "$d/xdg/nsfence"
printf '[sandbox]\nnew_session = true\n' > "$d/xdg/nsfence/config.ini"
XDG_CONFIG_HOME="$d/xdg" nsf explain -- true
like "$OUT" "config +$d/xdg/nsfence/config.ini" "XDG_CONFIG_HOME is honoured"
like "$OUT" "new session +yes" "its settings apply"

done_testing
