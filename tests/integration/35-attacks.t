#!/bin/bash
# Adversarial tests: the sandboxed command is hostile and patient. It plants
# repositories, config, symlinks and hard links for the user's own git and
# for the next run; it races the host side from a concurrent run. Every
# attack here must fail; each test proves the command really ran and, where
# it is safe outside a sandbox, that the same attack works without nsfence
# (the control).
# modes: landlock
. "$(dirname "$0")/lib.sh"

nf_tmpdir top
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
    GIT_COMMITTER_EMAIL=t@t
git config --global init.defaultBranch main
git config --global safe.directory '*'

# A program git will run if told to: it leaves a marker, and that is all.
mark="$top/mark.sh"
printf '#!/bin/sh\necho fired >> "%s/marker"\n' "$top" > "$mark"
chmod 755 "$mark"
fired() { [ -e "$top/marker" ]; }
unfire() { rm -f "$top/marker"; }

new_repo() { # new_repo DIR: a repository with one commit
    rm -rf "$1"
    git init -q "$1" && git -C "$1" commit -q --allow-empty -m base
}

# ============================================================================
# Class 1: the host's git never runs code the command wrote.
# ============================================================================

# --- commondir sends git's config and hooks to a directory the command made
attack_commondir='
    git init -q --bare evil && git -C evil config core.bare false &&
    git -C evil config core.fsmonitor "'"$mark"'" &&
    echo "$PWD/evil" > .git/commondir; echo ran'
new_repo "$top/control" && (cd "$top/control" && sh -c "$attack_commondir" >/dev/null 2>&1)
unfire; (cd "$top/control" && git status >/dev/null 2>&1)
ok $(fired && echo 0 || echo 1) "control: a planted .git/commondir makes the host's git run the command's program"
new_repo "$top/r" && cd "$top/r"
nsf -- sh -c "$attack_commondir"
is "$OUT" "ran" "the command ran (commondir)"
ok $([ ! -s .git/commondir ] || [ "$(cat .git/commondir)" = . ] && echo 0 || echo 1) ".git/commondir was not written"
unfire; git status >/dev/null 2>&1
ok $(fired && echo 1 || echo 0) "the host's git status afterwards runs nothing of the command's"
is "$(ls -A | tr '\n' ' ')" ".git evil " "nothing is left beside .git and what the command made"
ok $([ ! -e .git/commondir ] && echo 0 || echo 1) "the commondir placeholder is gone after the run"

# --- a linked worktree's commondir, and config.worktree
new_repo "$top/r"
git -C "$top/r" worktree add -q "$top/r/wt" -b side 2>/dev/null
cd "$top/r/wt"
nsf --allow-write "$top/r" -- sh -c 'echo /tmp > "$(git rev-parse --git-dir)/commondir"; echo "[core]" > "$(git rev-parse --git-common-dir)/config.worktree"; echo ran'
is "$OUT" "ran" "the command ran (worktree)"
is "$(cat "$top/r/.git/worktrees/wt/commondir")" "../.." "a linked worktree's commondir cannot be rewritten"
cd "$top" && rm -rf "$top/r"

# --- a .git file's target: a repository whose git directory lives elsewhere
# in a write root
attack_sep='echo x > ../store/hooks/post-checkout; echo ../evil > ../store/commondir; echo "[core]" >> ../store/config; echo ran'
rm -rf "$top/s" && mkdir "$top/s" && git init -q --separate-git-dir="$top/s/store" "$top/s/work"
cp -a "$top/s" "$top/s-control" && (cd "$top/s-control/work" && sh -c "$attack_sep" >/dev/null 2>&1)
ok $([ -e "$top/s-control/store/commondir" ] && echo 0 || echo 1) "control: without a sandbox the gitfile's target is writable"
cd "$top/s/work"
config=$(cat ../store/config)
nsf --allow-write "$top/s/store" -- sh -c "$attack_sep"
is "$OUT" "ran" "the command ran (gitfile target)"
ok $([ ! -e ../store/hooks/post-checkout ] && [ ! -e ../store/commondir ] && [ "$(cat ../store/config)" = "$config" ] && echo 0 || echo 1) \
    "the hooks, commondir and config of the git directory a .git file names are protected"
cd "$top" && rm -rf "$top/s" "$top/s-control"

# --- a submodule's config and hooks under .git/modules
new_repo "$top/r" && cd "$top/r"
git init -q --bare .git/modules/lib
config=$(cat .git/modules/lib/config)
nsf -- sh -c 'echo "[core]" >> .git/modules/lib/config; echo x > .git/modules/lib/hooks/post-checkout; echo ../.. > .git/modules/lib/commondir; echo ran'
is "$OUT" "ran" "the command ran (submodule)"
ok $([ "$(cat .git/modules/lib/config)" = "$config" ] && [ ! -e .git/modules/lib/hooks/post-checkout ] && [ ! -e .git/modules/lib/commondir ] && echo 0 || echo 1) \
    "a submodule's config, hooks and commondir are protected"

# --- paths the repository's config names: hooksPath, includes, programs
# Each attack is tried without a sandbox first (the control: the host's
# git then runs the command's code), then inside, where it must fail.
git_attack() { # git_attack DESCRIPTION SETUP ATTACK TRIGGER
    local desc=$1 setup=$2 attack=$3 trigger=$4
    new_repo "$top/control" && (cd "$top/control" && sh -c "$setup" && sh -c "$attack") >/dev/null 2>&1
    unfire; (cd "$top/control" && sh -c "$trigger") >/dev/null 2>&1
    ok $(fired && echo 0 || echo 1) "control: $desc runs the command's code on the host"
    new_repo "$top/r" && cd "$top/r" && sh -c "$setup" >/dev/null 2>&1
    nsf -- sh -c "$attack; echo ran"
    is "$OUT" "ran" "the command ran ($desc)"
    unfire; sh -c "$trigger" >/dev/null 2>&1
    ok $(fired && echo 1 || echo 0) "$desc: the host's git afterwards runs nothing of the command's"
    cd "$top"
}
hook="printf '#!/bin/sh\\n$mark\\n'"
git_attack "a hook under core.hooksPath (husky's .husky/_)" \
    "git config core.hooksPath .husky/_ && mkdir -p .husky/_" \
    "$hook > .husky/_/pre-commit; chmod +x .husky/_/pre-commit" \
    "git commit -q --allow-empty -m x"
git_attack "husky's .husky/<hook>, which its _ stubs run" \
    "git config core.hooksPath .husky/_ && mkdir -p .husky/_ && printf '#!/bin/sh\\nsh .husky/pre-commit\\n' > .husky/_/pre-commit && chmod +x .husky/_/pre-commit" \
    "echo '$mark' > .husky/pre-commit" \
    "git commit -q --allow-empty -m x"
git_attack "an [include] path in the worktree" \
    "git config include.path ../local.gitconfig" \
    "printf '[core]\\n\\tfsmonitor = $mark\\n' > local.gitconfig" \
    "git status"
git_attack "an [includeIf onbranch:] path, whatever the branch now" \
    "git config includeIf.onbranch:evil.path ../evil.gitconfig" \
    "printf '[core]\\n\\tfsmonitor = $mark\\n' > evil.gitconfig; git checkout -q -b evil" \
    "git checkout -q -b evil 2>/dev/null; git status"
git_attack "the program core.fsmonitor names" \
    "printf '#!/bin/sh\\nexit 1\\n' > fsmon.sh && chmod +x fsmon.sh && git config core.fsmonitor ./fsmon.sh" \
    "$hook > fsmon.sh" \
    "git status"
git_attack "a hook that is a symlink into the worktree" \
    "mkdir -p scripts && printf '#!/bin/sh\\n' > scripts/pre-commit && chmod +x scripts/pre-commit && ln -s ../../scripts/pre-commit .git/hooks/pre-commit" \
    "$hook > scripts/pre-commit" \
    "git commit -q --allow-empty -m x"

# --- submodules: a name with slashes nests under .git/modules; one listed
# but not yet made would be adopted by `git submodule update`
git config --global protocol.file.allow always
new_repo "$top/subsrc"
sub_attack() { # sub_attack DESCRIPTION SETUP ATTACK TRIGGER, in a superproject
    local desc=$1 setup=$2 attack=$3 trigger=$4 d
    for d in control r; do
        new_repo "$top/$d" && (cd "$top/$d" && sh -c "$setup") >/dev/null 2>&1
    done
    (cd "$top/control" && sh -c "$attack") >/dev/null 2>&1
    unfire; (cd "$top/control" && sh -c "$trigger") >/dev/null 2>&1
    ok $(fired && echo 0 || echo 1) "control: $desc runs the command's code on the host"
    cd "$top/r"
    nsf -- sh -c "$attack; echo ran"
    is "$OUT" "ran" "the command ran ($desc)"
    unfire; sh -c "$trigger" >/dev/null 2>&1
    ok $(fired && echo 1 || echo 0) "$desc: the host's git afterwards runs nothing of the command's"
    cd "$top"
}
sub_attack "a submodule whose name holds slashes" \
    "git submodule -q add ../subsrc vendor/libs/foo && git commit -qm sub" \
    "printf '[core]\\n\\tfsmonitor = $mark\\n' >> .git/modules/vendor/libs/foo/config" \
    "git status"
sub_attack "a submodule git directory planted before 'git submodule update'" \
    "printf '[submodule \"foo\"]\\n\\tpath = foo\\n\\turl = ../subsrc\\n' > .gitmodules && git add .gitmodules && git update-index --add --cacheinfo 160000,\$(git -C ../subsrc rev-parse HEAD),foo && git commit -qm g" \
    "git clone -q --bare ../subsrc .git/modules/foo && git -C .git/modules/foo config core.bare false && $hook > .git/modules/foo/hooks/post-checkout && chmod +x .git/modules/foo/hooks/post-checkout" \
    "git submodule -q update --init"

# --- worktrees: config.worktree under extensions.worktreeConfig, and the
# common directory a linked worktree's .git file leads to
wt_attack='printf "[core]\n\tfsmonitor = '"$mark"'\n" > .git/worktrees/wtB/config.worktree'
for d in control r; do
    rm -rf "$top/$d" "$top/$d-wtB" && new_repo "$top/$d"
    git -C "$top/$d" config extensions.worktreeConfig true
    git -C "$top/$d" worktree add -q "$top/$d-wtB" 2>/dev/null
    mv "$top/$d/.git/worktrees/$d-wtB" "$top/$d/.git/worktrees/wtB" 2>/dev/null
    git -C "$top/$d" worktree repair "$top/$d-wtB" >/dev/null 2>&1
done
(cd "$top/control" && sh -c "$wt_attack") 2>/dev/null
unfire; (cd "$top/control-wtB" && git status >/dev/null 2>&1)
ok $(fired && echo 0 || echo 1) "control: a linked worktree's config.worktree the command wrote runs on the host"
cd "$top/r" && nsf -- sh -c "$wt_attack; echo ran"
is "$OUT" "ran" "the command ran (config.worktree)"
unfire; (cd "$top/r-wtB" && git status >/dev/null 2>&1)
ok $(fired && echo 1 || echo 0) "config.worktree of a linked worktree cannot be written"
rm -rf "$top/W" && mkdir -p "$top/W" && new_repo "$top/W/a/b/c/main"
git -C "$top/W/a/b/c/main" worktree add -q "$top/W/wt" 2>/dev/null
cd "$top/W" && nsf -- sh -c "printf '[core]\\n\\tfsmonitor = $mark\\n' >> a/b/c/main/.git/config; echo ran"
is "$OUT" "ran" "the command ran (a worktree's common directory)"
unfire; (cd "$top/W/wt" && git status >/dev/null 2>&1)
ok $(fired && echo 1 || echo 0) "the common directory a worktree's .git leads to is protected, beyond the scan's depth"
cd "$top" && rm -rf "$top/W" "$top"/control* "$top"/r-wtB "$top/r"

# --- a write root inside a bigger repository (a monorepo's package): what
# that repository's config names inside the write root is protected
new_repo "$top/mono" && mkdir -p "$top/mono/frontend/.husky/_"
printf '#!/bin/sh\nsh frontend/.husky/pre-commit\n' > "$top/mono/frontend/.husky/_/pre-commit"
chmod +x "$top/mono/frontend/.husky/_/pre-commit"
git -C "$top/mono" config core.hooksPath frontend/.husky/_
cd "$top/mono/frontend"
nsf -- sh -c "echo '$mark' > .husky/pre-commit; echo ran"
is "$OUT" "ran" "the command ran (monorepo package)"
unfire; git commit -q --allow-empty -m x >/dev/null 2>&1
ok $(fired && echo 1 || echo 0) "the enclosing repository's hooksPath inside the write root is protected"
# ... and the package cannot be made a bare repository git would find first
# (made in a temporary directory: Landlock mode's /tmp is not writable, its
# TMPDIR is)
tmpd=/tmp
in_landlock && tmpd='$TMPDIR'
bare='git clone -q --bare '"$top/subsrc $tmpd/b && cp -r $tmpd/b/HEAD $tmpd/b/objects $tmpd/b/refs"' . ; printf "[core]\n\tbare = true\n\tfsmonitor = '"$mark"'\n" > config; echo ran'
nsf -- sh -c "$bare"
is "$OUT" "ran" "the command ran (bare layout at the top)"
is "$(git rev-parse --absolute-git-dir 2>/dev/null)" "$top/mono/.git" "the top of a write root cannot become a bare repository"
nsf -- sh -c "mkdir -p sub && cd sub && $bare"
like "$ERR" "created git-repository $top/mono/frontend/sub " "a bare repository made below the top is reported"
# ... nor any layout git's discovery takes for one (is_git_directory): HEAD
# with objects and refs that are executable files (git only access()es
# them), or HEAD beside a commondir naming the directory whose objects, refs
# and config git then uses
bare_files='mkdir -p bf && cd bf && echo "ref: refs/heads/main" > HEAD && : > objects && : > refs && chmod +x objects refs &&
    printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = %s\n\tfsmonitor = '"$mark"'\n" "$PWD" > config; echo ran'
bare_common='mkdir -p bx/objects bx/refs bc &&
    printf "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = '"$mark"'\n" > bx/config &&
    echo "ref: refs/heads/main" > bc/HEAD && echo ../bx > bc/commondir; echo ran'
rm -rf "$top/control" && mkdir -p "$top/control" && (cd "$top/control" && sh -c "$bare_files; cd ..; $bare_common") >/dev/null 2>&1
unfire; (cd "$top/control/bf" && git status >/dev/null 2>&1)
ok $(fired && echo 0 || echo 1) "control: HEAD with executable files for objects and refs is a repository whose fsmonitor git runs"
is "$(cd "$top/control/bc" && git config --get core.fsmonitor)" "$mark" \
    "control: HEAD with a commondir is a repository whose config git takes from there"
nsf -- sh -c "mkdir -p sub && cd sub && $bare_files"
is "$OUT" "ran" "the command ran (bare layout of files)"
like "$ERR" "created git-repository $top/mono/frontend/sub/bf " "a bare layout whose objects and refs are files is reported"
nsf -- sh -c "mkdir -p sub && cd sub && $bare_common"
is "$OUT" "ran" "the command ran (HEAD and commondir)"
like "$ERR" "created git-repository $top/mono/frontend/sub/bc " "HEAD beside a commondir is reported"
# ... past a .git git does not take between the package and the repository
# (an empty directory: a command's, or another run's placeholder)
rm -rf "$top/mono/frontend/sub" && mkdir -p "$top/mono/frontend/pkg/.husky/_" "$top/mono/frontend/.git"
git -C "$top/mono" config core.hooksPath frontend/pkg/.husky/_
cd "$top/mono/frontend/pkg"
nsf -- sh -c "$hook > .husky/_/pre-commit; chmod +x .husky/_/pre-commit; echo ran"
is "$OUT" "ran" "the command ran (a package below an empty .git)"
unfire; git commit -q --allow-empty -m x >/dev/null 2>&1
ok $(fired && echo 1 || echo 0) "an empty .git between a write root and its repository hides nothing"
cd "$top" && rm -rf "$top/mono"

# --- .claude or .git something that is no directory: a command that could
# replace it (or what a link to it leads to) with a directory would make
# what is protected below it
for kind in file fifo link-to-file link-through-file; do
    rm -rf "$top/r" && mkdir -p "$top/r" && cd "$top/r"
    case $kind in
    file) echo x > .claude ;;
    fifo) mkfifo .claude ;;
    link-to-file) echo x > f && ln -s f .claude ;;
    link-through-file) echo x > f && ln -s f/x .claude ;;
    esac
    nsf -- sh -c 'rm -f .claude f 2>/dev/null; mkdir -p f/x/commands .claude/commands 2>/dev/null; echo "#evil" > .claude/commands/x.md 2>/dev/null; echo ran'
    is "$OUT" "ran" "the command ran (.claude a $kind)"
    ok $([ ! -e .claude/commands ] && echo 0 || echo 1) "with .claude a $kind, .claude/commands cannot be made"
done
repo_at() { # repo_at DIR: a git directory at DIR whose fsmonitor is the marker
    echo "git init -q --bare $1 && git -C $1 config core.bare false &&
        git -C $1 config core.worktree \"\$PWD\" && git -C $1 config core.fsmonitor '$mark'"
}
gitfile() { echo "rm -rf .git && echo 'gitdir: $1' > .git"; }
git_attack "a repository made where a .git link to a file leads" \
    "rm -rf .git && echo x > f && ln -s f .git" "rm f; $(repo_at f)" "git status"

# --- the top's own .git made invalid (its HEAD is the command's to write)
# and a bare layout of symlinks beside it: git, finding .git no repository,
# would take the top itself for a bare one. The top's HEAD is held in a
# repository too, so the layout is none.
toplink='echo garbage > .git/HEAD; mkdir -p .x/objects .x/refs; ln -s .x/objects objects;
    ln -s .x/refs refs; echo "ref: refs/heads/main" > HEAD;
    printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = %s\n\tfsmonitor = '"$mark"'\n" "$PWD" > config; echo ran'
new_repo "$top/control" && (cd "$top/control" && sh -c "$toplink" >/dev/null 2>&1)
unfire; (cd "$top/control" && git status >/dev/null 2>&1)
ok $(fired && echo 0 || echo 1) "control: that layout makes the host's git run the command's program"
new_repo "$top/r" && cd "$top/r"
nsf -- sh -c "$toplink"
is "$OUT" "ran" "the command ran (a bare layout of symlinks beside an invalid .git)"
unfire; git status >/dev/null 2>&1
ok $(fired && echo 1 || echo 0) "the top of a repository cannot become a bare one: the host's git runs nothing"
ok $([ ! -e HEAD ] && echo 0 || echo 1) "and the HEAD held meanwhile is gone"
cd "$top" && rm -rf "$top/r" "$top/control"

# --- .git something git does not take (a FIFO, a dangling link): git would
# take the top for a bare repository (whose config and hooks it obeys), and
# is held the same way
for kind in fifo dangling; do
    for d in control r; do
        rm -rf "$top/$d" && mkdir -p "$top/$d"
        if [ $kind = fifo ]; then mkfifo "$top/$d/.git"; else ln -s nowhere "$top/$d/.git"; fi
    done
    (cd "$top/control" && git init -q --bare . 2>/dev/null)
    is "$(cd "$top/control" && git rev-parse --git-dir 2>/dev/null)" "." \
        "control: with .git a $kind, git init --bare . makes the top a repository to git"
    cd "$top/r"
    nsf -- sh -c "git init -q --bare . 2>/dev/null; echo ran"
    is "$OUT" "ran" "the command ran (bare repository at the top, .git a $kind)"
    ok $([ "$(git rev-parse --git-dir 2>/dev/null)" != . ] && echo 0 || echo 1) \
        "with .git a $kind, the top cannot become a bare repository"
done
cd "$top" && rm -rf "$top/r" "$top/control"

# --- a .git file naming what is no git directory yet, however it is spelled:
# nothing (git refuses it until a command makes one), a file, a path
# through a link loop, a link in the write root that leads elsewhere, ".."
# after a link (git takes it as the kernel does). Whatever the command made
# there would become the repository git obeys.
git_attack "a repository made where a .git file names a missing directory" \
    "$(gitfile gd)" "$(repo_at gd)" "git status"
is "$(ls -A "$top/r" | tr '\n' ' ')" ".git " "and nothing is left where it would go"
git_attack "a repository made where a .git file names a file" \
    "echo notes > notes && $(gitfile notes)" "rm notes; $(repo_at notes)" "git status"
git_attack "a repository made where a .git file leads through a link loop" \
    "ln -s loop loop && $(gitfile loop/gd)" "rm loop; mkdir loop; $(repo_at loop/gd)" "git status"
git_attack "a repository made where a .git file leads through a link elsewhere" \
    "mkdir -p \"\$PWD.else\" && ln -s \"\$PWD.else\" l && $(gitfile l/gd)" \
    "rm l; mkdir l; $(repo_at l/gd)" "git status"
git_attack "a repository made where a .git file's '..' after a link leads" \
    "mkdir -p deep/x && ln -s deep/x l && $(gitfile l/../gd)" "$(repo_at deep/gd)" "git status"
rm -rf "$top/r" "$top/control" "$top"/*.else

# --- a HEAD of the user's own at the top of a repository: with .git/HEAD
# overwritten, objects/ and refs/ beside it would make the top a bare one
git_attack "a bare layout beside the user's own HEAD" "echo mine > HEAD" \
    'echo junk > .git/HEAD; echo "ref: refs/heads/main" > HEAD; mkdir -p objects refs;
    printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = %s\n\tfsmonitor = '"$mark"'\n" "$PWD" > config' \
    "git status"
ok $([ ! -e "$top/r/objects" ] && echo 0 || echo 1) "and the objects held meanwhile is gone"
rm -rf "$top/r" "$top/control"

# --- a bare repository in a write root: its hooks run on a push to it
git init -q --bare "$top/b1/mirror.git" 2>/dev/null
cd "$top/b1"
nsf -- sh -c "$hook > mirror.git/hooks/post-receive; chmod +x mirror.git/hooks/post-receive; echo ran"
is "$OUT" "ran" "the command ran (bare repository)"
unfire; git -C "$top/subsrc" push -q "$top/b1/mirror.git" main >/dev/null 2>&1
ok $(fired && echo 1 || echo 0) "a bare repository's hooks are protected"
cd "$top" && rm -rf "$top/b1"

# --- a planted config git refuses does not stop later runs
mkdir -p "$top/dos" && cd "$top/dos"
nsf -- sh -c 'git init -q sub && printf "[core\nbad\n" > sub/.git/config; mkdir -p ".nsfence-ph~.bashrc" && touch ".nsfence-ph~.bashrc/x" && mkfifo ".nsfence-ph~.zshrc"; echo ran'
is "$OUT" "ran" "the command planted a broken config and junk under our temporary names"
nsf -- sh -c 'echo ran'
is "$RC:$OUT" "0:ran" "the next run still runs"
like "$ERR" "bad config line 1; the paths it names are not protected" "and says why that config is not read"
cd "$top" && rm -rf "$top/dos"

# The global config, when the home directory is a write root.
mkdir -p "$top/home2"
HOME="$top/home2" sh -c "cd; mkdir -p .config/git; printf '[core]\\n\\tfsmonitor = $mark\\n' > .config/git/config" 2>/dev/null
new_repo "$top/r"
unfire; (cd "$top/r" && HOME="$top/home2" git status >/dev/null 2>&1)
ok $(fired && echo 0 || echo 1) "control: a global ~/.config/git/config the command wrote runs on the host"
rm -rf "$top/home2" && mkdir -p "$top/home2" && cd "$top/home2"
HOME="$top/home2" nsf -- sh -c "mkdir -p .config/git; printf '[core]\\n\\tfsmonitor = $mark\\n' > .config/git/config; echo ran"
is "$OUT" "ran" "the command ran (global config)"
ok $([ ! -e "$top/home2/.config/git/config" ] && echo 0 || echo 1) "with the home directory a write root, the global git config cannot be created"
cd "$top" && rm -rf "$top/home2" "$top/r" "$top/control"

# --- git keeps working, inside and on the host while a run lasts
new_repo "$top/r" && cd "$top/r"
echo one > f && git add f && git commit -qm one
nsf -- sh -c 'git checkout -q -b topic && echo two > f && git commit -qam two && echo three > f && git stash -q && git stash list | wc -l && git log --oneline | wc -l'
is "$RC:$(echo $OUT)" "0:1 3" "git checkout -b, commit and stash work inside"
fifo="$top/hold.fifo" && rm -f "$fifo" && mkfifo "$fifo"
"$NSFENCE" -- sh -c "read x < '$fifo'" 2>/dev/null &
hold=$!
for _ in $(seq 100); do [ -e .git/commondir ] && break; sleep 0.02; done
git stash pop -q 2>/dev/null && git commit -qam host-while-running
is "$?:$(git log --oneline | wc -l)" "0:4" "the host's git commits while a run holds its placeholders"
echo go > "$fifo"; wait "$hold"
ok $([ ! -e .git/commondir ] && echo 0 || echo 1) "and the placeholders go with the run"

# --- a repository planted where none existed
plant='git init -q . && git config core.fsmonitor "'"$mark"'"; echo ran'
rm -rf "$top/control" && mkdir "$top/control" && (cd "$top/control" && sh -c "$plant" >/dev/null 2>&1)
unfire; (cd "$top/control" && git status >/dev/null 2>&1)
ok $(fired && echo 0 || echo 1) "control: a planted repository's core.fsmonitor runs on the host's next git status"
rm -rf "$top/p" && mkdir "$top/p" && cd "$top/p"
nsf -- sh -c "$plant"
is "$OUT" "ran" "the command ran (planted .git)"
ok $([ ! -e .git ] && echo 0 || echo 1) "no .git was planted at the top of the write root"
unfire; git status >/dev/null 2>&1
ok $(fired && echo 1 || echo 0) "the host's git status there runs nothing"
nsf --allow-git-init -- sh -c 'git init -q . && echo ran'
ok $([ "$OUT" = ran ] && [ -d .git/objects ] && echo 0 || echo 1) "--allow-git-init lets git init make the repository"
rm -rf .git
printf '[filesystem]\nallow_git_init = true\n' > "$top/gi.ini"
nsf --config "$top/gi.ini" -- sh -c 'git init -q . && echo ran'
ok $([ "$OUT" = ran ] && [ -d .git/objects ] && echo 0 || echo 1) "allow_git_init = true does the same from the config"
rm -rf .git

# --- a dangling .git symlink: what the command makes where it leads would
# be the repository the host's git uses there
dangle='git init -q --bare elsewhere && git --git-dir=elsewhere config core.bare false && git --git-dir=elsewhere config core.fsmonitor "'"$mark"'"; echo ran'
rm -rf "$top/control" && mkdir "$top/control" && cd "$top/control" && ln -s elsewhere .git
sh -c "$dangle" >/dev/null 2>&1; unfire; git status >/dev/null 2>&1
ok $(fired && echo 0 || echo 1) "control: a repository made where a dangling .git leads runs on the host"
rm -rf "$top/p2" && mkdir "$top/p2" && cd "$top/p2" && ln -s elsewhere .git
nsf -- sh -c "$dangle"
is "$OUT" "ran" "the command ran (dangling .git)"
ok $([ ! -e elsewhere ] && [ -L .git ] && echo 0 || echo 1) "nothing can be made where a dangling .git leads"
cd "$top/p" && rm -rf "$top/p2" "$top/control"

# --- a .git made below the top is reported after the run
nsf -- sh -c 'mkdir -p a/b/c/d && git init -q a/b && echo "gitdir: /x" > a/.git && git init -q a/b/c/d && echo ran'
is "$OUT" "ran" "the command ran (nested .git)"
like "$ERR" "created git-repository $top/p/a/b/.git \(git run there will obey" "a .git made below the top is reported, with what it means"
like "$ERR" "created git-repository $top/p/a/.git " "a .git file too"
like "$ERR" "created git-repository $top/p/a/b/c/d/.git " "and one deeper than the scan"
nsf --no-monitor -- sh -c 'git init -q x; echo ran'
like "$ERR" "created git-repository $top/p/x/.git " "without the observer, the scan after the run still sees it"
nsf -- sh -c 'true'
unlike "$ERR" "created git-repository" "a repository that was there before the run is not reported again"
# ... and in directories older than the run by the two seconds after which
# the look after it takes them from the scan before it unless they changed:
# their times set back, a bare layout completed, a directory renamed
# (without the observer, the look alone sees them)
mkdir -p old/a old/x/objects old/x/refs old2/y
sleep 2.2
nsf --no-monitor -- sh -c 'git init -q old/a && touch -d @1 old/a && echo "ref: refs/heads/main" > old/x/HEAD && mv old2/y old2/w && mkdir old2/w/.git && echo ran'
is "$OUT" "ran" "the command ran (repositories in old directories)"
like "$ERR" "created git-repository $top/p/old/a/.git " "one made in a directory whose times are then set back is reported"
like "$ERR" "created git-repository $top/p/old/x " "a bare layout completed in an old directory is reported"
like "$ERR" "created git-repository $top/p/old2/w/.git " "one made in a renamed directory is reported"
cd "$top" && rm -rf "$top/p"

# --- two concurrent hostile runs launder a repository: the first makes a
# .git after the second's scan would see it, the second starts and takes it
# for one there before it (protecting its config with a placeholder bound
# read-only), the first removes it (and the second's placeholder, and the
# bind on it, with it) and so has none to report; the second then makes a
# real repository at the same path. Its look must not take that for the one
# it saw: the repository changed during its run, and is reported.
rm -rf "$top/cc" && mkdir -p "$top/cc/old/a" && cd "$top/cc"
"$NSFENCE" --no-monitor -- sh -c 'mkdir old/a/.git && touch made
    for _ in $(seq 200); do [ -e go ] && break; sleep 0.1; done; rm -rf old/a/.git; touch gone; echo ran' \
    > "$top/cc1.out" 2> "$top/cc1.err" &
first=$!
for _ in $(seq 200); do [ -e made ] && break; sleep 0.1; done
nsf --no-monitor -- sh -c 'touch go; for _ in $(seq 200); do [ -e gone ] && break; sleep 0.1; done
    git init -q old/a && git -C old/a config core.fsmonitor "'"$mark"'"; echo ran'
wait "$first"
is "$(cat "$top/cc1.out"):$OUT" "ran:ran" "the two concurrent commands ran"
unlike "$(cat "$top/cc1.err")" "git-repository" "the first run has no repository to report (it removed its own)"
unfire; (cd old/a && git status >/dev/null 2>&1)
namespace_only "Landlock mode refuses .git/hooks by name, and git init with it: the second run's repository is not whole"
ok $(fired && echo 0 || echo 1) "control: the repository the second run made is one the user's git obeys"
like "$ERR" "changed git-repository $top/cc/old/a/.git " "the second run reports the repository it saw before as changed"
cd "$top" && rm -rf "$top/cc"
# ... and with many repositories there, holding each one's inodes through
# the run leaves the caller's descriptors to the run (1024 here)
rm -rf "$top/many" && mkdir -p "$top/many" && cd "$top/many"
for i in $(seq 150); do
    mkdir -p "r$i/.git/objects" "r$i/.git/refs" "r$i/.git/hooks"
    echo 'ref: refs/heads/main' > "r$i/.git/HEAD"
    : > "r$i/.git/config"
done
out=$(ulimit -n 1024; "$NSFENCE" -- sh -c 'echo ran' 2>"$top/many.err")
is "$out" "ran" "a run among 150 repositories with 1024 descriptors runs$(head -c 300 "$top/many.err")"
cd "$top" && rm -rf "$top/many"

# ============================================================================
# Class 2: host-side file operations cannot be redirected.
# ============================================================================
# A concurrent run whose command swaps a directory (holding a repository that
# needs a placeholder) with a symlink to somewhere else, as fast as it can,
# while this side starts 200 runs there: nothing may ever appear outside.
rm -rf "$top/race" "$top/outside" && mkdir -p "$top/race/sub/.git/hooks" "$top/outside/.git/hooks"
touch "$top/race/sub/.git/config" "$top/outside/.git/config"
ln -s "$top/outside" "$top/race/evil"
cd "$top/race"
printf '[filesystem]\nmandatory_deny_depth = 1\n' > "$top/shallow.ini"
"$NSFENCE" --no-monitor --config "$top/shallow.ini" -- "$NF_HELPERS/swapper" sub evil stop > "$top/swaps" 2>"$top/swaps.err" &
swapper=$!
ran=0
for _ in $(seq 200); do
    out=$("$NSFENCE" -- sh -c 'echo ran' 2>/dev/null) && [ "$out" = ran ] && ran=$((ran + 1))
done
touch stop; wait "$swapper"
ok $([ "$ran" -gt 0 ] && echo 0 || echo 1) "the runs beside the swapper ran ($ran of 200)"
ok $([ "$(cat "$top/swaps")" -gt 1000 ] 2>/dev/null && echo 0 || echo 1) "the swapper really swapped ($(head -c 40 "$top/swaps"))"
[ "$(cat "$top/swaps")" -gt 1000 ] 2>/dev/null || diag "its run's stderr: $(tail -c 600 "$top/swaps.err")"
is "$(listing "$top/outside")" ".git .git/config .git/hooks " "nothing appeared outside the write root in 200 tries"
rm -f stop
is "$(listing "$top/race")" "evil sub sub/.git sub/.git/config sub/.git/hooks " "and nothing is left inside it"
cd "$top" && rm -rf "$top/race" "$top/outside"

# kill -9 at any instant leaves nothing a later run cannot clean up: a
# half-made placeholder (its temporary name at the top) is removed by the
# next run, a user's look-alike non-empty one is not.
rm -rf "$top/k" && mkdir -p "$top/k" && cd "$top/k"
touch ".nsfence-ph~.bashrc" && mkdir ".nsfence-ph~.vscode" && mkdir -p ".nsfence-ph~keep" && echo data > ".nsfence-ph~keep/x"
nsf -- sh -c 'echo ran'
is "$OUT" "ran" "the command ran (stale temporaries)"
namespace_only "placeholders (Landlock mode makes none, so it cleans up none a killed namespace-mode run left)"
is "$(listing "$top/k")" ".nsfence-ph~keep .nsfence-ph~keep/x " "what a killed run half made is removed; anything with content is kept"
cd "$top" && rm -rf "$top/k"

# ============================================================================
# Class 3: write roots cannot be planted.
# ============================================================================
mkdir -p "$top/w3" "$top/secret" && cd "$top/w3"
nsf -- sh -c "ln -s '$top/secret' out && echo ran"
is "$OUT" "ran" "the first run planted a symlink where an allow_write path will be"
nsf --allow-write out -- sh -c 'echo key >> out/authorized_keys; echo ran'
is "$OUT" "ran" "the second run ran"
ok $([ ! -e "$top/secret/authorized_keys" ] && echo 0 || echo 1) "the planted symlink's target was not written"
like "$ERR" "allow_write $top/w3/out skipped: it resolves through a symlink to $top/secret" \
    "the skipped allow_write is said on stderr, without -v"
rm out && mkdir out
nsf --allow-write out -- sh -c 'echo ok > out/f'
is "$(cat out/f 2>/dev/null):$(printf '%s' "$ERR" | grep -c skipped)" "ok:0" "an allow_write path that is a plain directory keeps working"
cd "$top" && rm -rf "$top/w3" "$top/secret"

# ============================================================================
# Class 4: denies never fail open.
# ============================================================================
mkdir -p "$top/c4" && cd "$top/c4"
cycle='rm -f loopa; mkdir -p loopa/commands; echo evil > loopa/commands/x.md; echo evil > .claude/commands/y.md; echo ran'
mkdir -p "$top/control4" && (cd "$top/control4" && ln -s loopa .claude && ln -s .claude loopa && sh -c "$cycle" >/dev/null 2>&1)
ok $([ -e "$top/control4/.claude/commands/x.md" ] && echo 0 || echo 1) "control: without a sandbox, a .claude cycle is turned into a commands directory"
ln -s loopa .claude && ln -s .claude loopa
nsf -- sh -c "$cycle"
is "$OUT" "ran" "the command ran (.claude cycle)"
ok $([ -L loopa ] && [ -L .claude ] && [ ! -e .claude/commands ] && echo 0 || echo 1) \
    "the links of the cycle stay as they were: nothing is reachable through .claude"
nsf -- sh -c 'cat .claude 2>&1 | wc -c; ls -la .claude'
namespace_only "a .claude symlink cycle is masked with an empty file"
like "$OUT" '^0' "inside, .claude is an empty file"
rm -f .claude loopa

# Explicit denies through a loop refuse the run.
ln -s la lb && ln -s lb la
nsf --deny-read "$top/c4/la/x" -- true
is "$RC" 125 "a deny_read through a symlink loop refuses the run"
like "$ERR" "la" "and names the path"
nsf --deny-write "$top/c4/la" -- true
is "$RC" 125 "a deny_write through a symlink loop refuses the run"
rm -f la lb

# Globs in deny_read are expanded at start, never taken as a literal name
# that protects nothing; relative ones from the working directory.
mkdir -p "$top/secret/sub" "$top/c4/w" && echo s1 > "$top/secret/a.txt" && echo s2 > "$top/secret/sub/b.txt" \
    && echo public > "$top/secret/c.md"
cd "$top/c4/w"
is "$(cat ../../secret/a.txt)" "s1" "control: the secret is readable outside"
nsf --deny-read '../../secret/*.txt' -- sh -c 'echo ran; cat ../../secret/a.txt ../../secret/sub/b.txt ../../secret/c.md'
is "$(echo $OUT)" "ran s2 public" "--deny-read '../secret/*.txt' hides a.txt, not sub/b.txt nor c.md"
nsf --deny-read "$top/secret/**/*.txt" -- sh -c 'echo ran; cat ../../secret/a.txt ../../secret/sub/b.txt ../../secret/c.md'
is "$(echo $OUT)" "ran public" "'**/*.txt' hides them at every depth"
printf '[filesystem]\ndeny_read = %s/secret/*\nallow_read = %s/secret/*.md\n' "$top" "$top" > "$top/glob.ini"
nsf --config "$top/glob.ini" -- sh -c 'echo ran; cat ../../secret/a.txt ../../secret/c.md; ls ../../secret/sub | wc -l'
partial_in_landlock "read denies (deny_read)"
is "$(echo $OUT)" "ran public 0" "globs in the config, and an allow_read glob re-opens what it matches"
nsf --deny-read '/*' -- true
is "$RC" 125 "a pattern whose literal prefix is / alone is refused"
like "$ERR" "literal prefix is / alone" "saying why"
nsf --allow-write 'out/*.log' -- true
is "$RC" 125 "a glob in a write list other than a trailing /** is refused"
mkdir -p out && nsf --allow-write 'out/**' -- sh -c 'echo ok > out/f'
is "$RC:$(cat out/f 2>/dev/null)" "0:ok" "a trailing /** in a write list is the directory itself"
cd "$top/c4" && rm -rf "$top/secret" "$top/c4/w"

# A nested mandatory name in another case.
mkdir -p sub && echo original > sub/.BashRC
nsf -- sh -c 'echo evil > sub/.BashRC; echo ran'
is "$OUT:$(cat sub/.BashRC)" "ran:original" "the nested scan matches names in any case (.BashRC)"
cd "$top" && rm -rf "$top/c4" "$top/control4"

# ============================================================================
# Class 5: the caller's secrets outside the filesystem stay out.
# ============================================================================
mkdir -p "$top/c5/deep/er/still/further" && cd "$top/c5"
echo original > .bashrc && ln .bashrc notes.txt
(cp -a "$top/c5" "$top/control5" && cd "$top/control5" && echo evil >> notes.txt)
is "$(tail -1 "$top/control5/.bashrc")" "evil" "control: a write through another hard link changes .bashrc"
nsf -- sh -c 'echo evil >> notes.txt; echo ran'
is "$OUT:$(cat .bashrc)" "ran:original" "another name of a protected file is protected too"
ln .bashrc deep/er/still/further/far
nsf -- true
like "$ERR" "$top/c5/.bashrc has 3 names and only 2" "a name the scan cannot reach is said on stderr, naming the file"
cd "$top" && rm -rf "$top/c5" "$top/control5"

# ============================================================================
# Class 6: concurrent change is not an attack, and does not kill runs.
# ============================================================================
mkdir -p "$top/churn" && cd "$top/churn"
(
    while [ ! -e stop ]; do
        for i in 1 2 3 4 5 6 7 8; do mkdir -p "sub$i/.vscode"; done
        for i in 1 2 3 4 5 6 7 8; do rm -rf "sub$i"; done
    done
) &
churn=$!
failed=0 errs=""
for _ in $(seq 100); do
    out=$("$NSFENCE" -- sh -c 'echo ran' 2>"$top/churn.err")
    if [ "$out" != ran ]; then
        failed=$((failed + 1))
        errs="$errs$(head -c 200 "$top/churn.err") | "
    fi
done
touch stop; wait "$churn"
is "$failed" 0 "100 runs beside a loop creating and removing sub*/.vscode: none fails${errs:+ ($errs)}"
cd "$top" && rm -rf "$top/churn"

done_testing
