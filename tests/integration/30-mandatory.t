#!/bin/bash
# Mandatory denies: files that run code later, outside the sandbox, are
# read-only wherever they exist within mandatory_deny_depth levels of a write
# root, and at the top of a write root cannot be created either.
# modes: landlock
. "$(dirname "$0")/lib.sh"

files=".bashrc .bash_profile .zshrc .zprofile .profile .gitconfig .gitmodules .ripgreprc .mcp.json"
dirs=".vscode .idea .claude/commands .claude/agents .git/hooks"

nf_tmpdir w
cd "$w"

prefix_for() { case $1 in 0) echo "" ;; 1) echo "a/" ;; 2) echo "a/b/" ;; 3) echo "a/b/c/" ;; esac; }

for level in 0 1 2 3; do
    p=$(prefix_for $level)
    rm -rf a .[!.]* 2>/dev/null
    mkdir -p "./${p:-.}"
    script="echo ran"
    for f in $files; do
        echo original > "$p$f"
        script="$script; echo evil >> $p$f"
    done
    for dd in $dirs; do
        mkdir -p "$p$dd" && echo original > "$p$dd/existing"
        script="$script; echo evil >> $p$dd/existing; echo evil > $p$dd/new"
    done
    echo original > "${p}.git/config"
    script="$script; echo evil >> ${p}.git/config"
    nsf -- sh -c "$script"
    is "$OUT" "ran" "the command ran (level $level)"
    changed=""
    for f in $files $(for dd in $dirs; do echo "$dd/existing"; done) .git/config; do
        [ "$(cat "$p$f")" = original ] || changed="$changed $f"
    done
    created=""
    for dd in $dirs; do [ -e "$p$dd/new" ] && created="$created $dd/new"; done
    if [ $level -lt 3 ]; then
        is "$changed" "" "every mandatory name at level $level (${p:-top}) stays unchanged"
        is "$created" "" "no file can be created in a protected directory at level $level"
        like "$ERR" 'Read-only file system' "writes to protected names fail with EROFS (level $level)"
    else
        ok $([ -n "$changed" ] && [ -n "$created" ] && echo 0 || echo 1) \
            "below the depth (level 3) the names are not enforced"
    fi
done
rm -rf a .[!.]* 2>/dev/null

# Nor their metadata: Landlock covers none of chmod, chown, utimes or xattrs.
echo original > .bashrc && mkdir -p .git/hooks && echo original > .git/hooks/pre-commit
meta_writes_refused ".bashrc at the top of a write root" .bashrc
meta_writes_refused "a git hook" .git/hooks/pre-commit
rm -rf .bashrc .git

# --- names that do not exist yet ------------------------------------------------
before=$(listing "$w")
script="echo ran"
for f in $files; do script="$script; echo evil > $f"; done
for dd in .vscode .idea .claude/commands .claude/agents; do script="$script; mkdir -p $dd && echo evil > $dd/x"; done
nsf -- sh -c "$script"
is "$OUT" "ran" "the command ran (absent names)"
is "$(listing "$w")" "$before" "absent protected names cannot be created and nothing is left on the host"

# Deeper, only existing names are protected (as in srt).
mkdir -p sub
nsf -- sh -c 'echo ok > sub/.bashrc'
is "$(cat sub/.bashrc 2>/dev/null)" "ok" "an absent name below the top may be created"
rm -rf sub

# Where .git does not exist, it cannot be created (a planted repository runs
# its config's programs on the host's next git command), unless allowed.
if command -v git >/dev/null; then
    nsf -- git init -q .
    ok $([ "$RC" -ne 0 ] && [ ! -e .git ] && echo 0 || echo 1) "git init is refused at the top of a write root"
    nsf --allow-git-init -- git init -q .
    is "$RC" 0 "git init works with --allow-git-init"
    ok $([ -d .git/objects ] && echo 0 || echo 1) "git init's repository reaches the host"
    nsf -- sh -c 'echo ran; echo "#!/bin/sh" > .git/hooks/pre-commit; echo "[core]" >> .git/config'
    is "$OUT" "ran" "the command ran (.git protections)"
    ok $([ ! -e .git/hooks/pre-commit ] && echo 0 || echo 1) "once .git exists, a new hook cannot be written"
    unlike "$(cat .git/config)" '^\[core\]$.*^\[core\]$' ".git/config cannot be appended to"
    git -c user.email=t@t -c user.name=t commit -q --allow-empty -m base 2>/dev/null
    nsf -- sh -c 'git -c user.email=t@t -c user.name=t commit -q --allow-empty -m inside && git log --oneline | wc -l'
    is "$OUT" "2" "git commit works inside with hooks and config protected"
    nsf -- sh -c 'echo ran; mv .git moved'
    is "$OUT" "ran" "the command ran (mv .git)"
    ok $([ -d .git ] && [ ! -e moved ] && echo 0 || echo 1) "mv .git x fails, so the protected paths cannot be moved aside"
    if in_landlock; then
        # no mount to be busy: the supervisor refuses the rename
        like "$ERR" 'Read-only file system' "mv .git fails with EROFS"
    else
        like "$ERR" 'busy' "mv .git fails with EBUSY"
    fi
    rm -rf .git
fi

# An ancestor between a protected path and its write root cannot be renamed.
mkdir -p proj/sub && echo original > proj/sub/.bashrc
nsf -- sh -c 'echo ran; mv proj proj2; mv proj/sub proj/sub2; echo evil > proj/sub/.bashrc'
is "$OUT" "ran" "the command ran (ancestor rename)"
ok $([ -d proj/sub ] && [ ! -e proj2 ] && [ ! -e proj/sub2 ] && echo 0 || echo 1) \
    "directories above a protected file cannot be renamed"
is "$(cat proj/sub/.bashrc)" "original" "so the protected file cannot be moved aside and replaced"
rm -rf proj

# A .git file (worktree, submodule) is protected itself.
echo "gitdir: /elsewhere" > .git
nsf -- sh -c 'echo ran; echo "gitdir: /evil" > .git'
is "$(cat .git)" "gitdir: /elsewhere" "a .git file is protected"
rm -f .git

# A protected name that is a symlink: the link cannot be replaced and its
# target cannot be written through it.
mkdir -p dotfiles && echo original > dotfiles/bashrc
ln -s dotfiles/bashrc .bashrc
nsf -- sh -c 'echo ran; echo evil >> .bashrc; rm -f .bashrc; echo evil > .bashrc'
is "$OUT" "ran" "the command ran (symlinked .bashrc)"
is "$(cat dotfiles/bashrc)" "original" "the target of a symlinked .bashrc is protected"
ok $([ -L .bashrc ] && echo 0 || echo 1) "the .bashrc symlink itself cannot be removed or replaced"
rm -rf dotfiles .bashrc

# A symlinked .claude or .git: the link is protected, and what it leads to.
mkdir -p shared/commands a
ln -s shared .claude
ln -s ../shared a/.claude
nsf -- sh -c 'echo ran; echo evil > .claude/commands/x.md; echo evil > a/.claude/commands/y.md; rm .claude; mkdir -p .claude/commands; echo evil > .claude/commands/z.md'
is "$OUT" "ran" "a symlinked .claude does not break the run"
is "$(ls -A shared/commands | tr '\n' ' ')" "" "nothing can be written under a symlinked .claude/commands"
ok $([ -L .claude ] && echo 0 || echo 1) "the .claude symlink cannot be replaced"
rm -rf shared .claude a
mkdir -p realgit/hooks proj
ln -s ../realgit proj/.git
nsf -- sh -c 'echo ran; echo evil > proj/.git/hooks/pre-commit; echo x > proj/.git/objects-ok'
ok $([ ! -e realgit/hooks/pre-commit ] && [ -e realgit/objects-ok ] && echo 0 || echo 1) \
    "a symlinked .git: hooks protected, the rest of the git directory writable"
rm -rf realgit proj

# Submodules keep hooks under .git/modules/NAME.
mkdir -p .git/modules/lib/hooks
nsf -- sh -c 'echo ran; echo evil > .git/modules/lib/hooks/post-checkout'
ok $([ ! -e .git/modules/lib/hooks/post-checkout ] && echo 0 || echo 1) "a submodule's hooks are protected"
rm -rf .git

# A symlink loop anywhere in the project must not break a run.
mkdir -p loops/inner
ln -s . loops/self
ln -s loop2 loops/loop1 && ln -s loop1 loops/loop2
ln -s .bashrc .bashrc
nsf -- sh -c 'echo ran'
is "$RC:$OUT" "0:ran" "symlink loops in the project do not break a run"
rm -rf loops .bashrc

# node_modules is not scanned.
mkdir -p node_modules/pkg && echo original > node_modules/pkg/.bashrc
nsf -- sh -c 'echo changed > node_modules/pkg/.bashrc'
is "$(cat node_modules/pkg/.bashrc)" "changed" "node_modules is skipped by the scan"
rm -rf node_modules

# mandatory_deny_depth from the config.
mkdir -p a && echo original > a/.bashrc
printf '[filesystem]\nmandatory_deny_depth = 1\n' > "$w/depth.ini"
nsf --config "$w/depth.ini" -- sh -c 'echo changed > a/.bashrc'
is "$(cat a/.bashrc)" "changed" "mandatory_deny_depth = 1 protects only the top level"
nsf -- sh -c 'echo again > a/.bashrc'
is "$(cat a/.bashrc)" "changed" "the default depth protects a/.bashrc"
rm -rf a depth.ini

# nsfence's own config is protected.
mkdir -p "$HOME/.config/nsfence"
printf '[network]\nallow_domain = example.com\n' > "$HOME/.config/nsfence/config.ini"
(cd "$HOME" && "$NSFENCE" -- sh -c 'echo "allow_domain = evil.example" >> .config/nsfence/config.ini') 2>/dev/null
is "$(grep -c evil "$HOME/.config/nsfence/config.ini")" "0" "nsfence's own config file is protected"
rm -rf "$HOME/.config"
(cd "$HOME" && "$NSFENCE" -- sh -c 'mkdir -p .config/nsfence && echo "[network]" > .config/nsfence/config.ini') 2>/dev/null
ok $([ ! -e "$HOME/.config/nsfence/config.ini" ] && echo 0 || echo 1) "an absent nsfence config cannot be created from inside"
ok $([ ! -e "$HOME/.config" ] && echo 0 || echo 1) "and nothing is left in HOME"

done_testing
