#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Every path of the source tree that the docs, man pages, README, scripts
# and comments cite exists (scripts/check-paths): a file moved or renamed
# leaves no citation behind.  Then a stale citation is planted and found.
. "$(dirname "$0")/../lib/tap.sh"

check=$R2CC_REPO/scripts/check-paths
command -v python3 >/dev/null || skip_all "python3 not installed"
git -C "$R2CC_REPO" rev-parse --git-dir >/dev/null 2>&1 ||
	skip_all "not a git checkout"

plan 3
out=$("$check" --repo "$R2CC_REPO" 2>&1)
ok "$([ $? = 0 ] && echo 1)" "every cited path exists${out:+: $out}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# (the stale name is put together here, or this file would cite it)
old=coll_run.c
cat >"$tmp/stale.rst" <<TXT
The engine (\`\`lib/$old\`\`) and the rails (lib/xport/rail.c), built
as \$(BUILD)/lib/xport/rail.o, installed in /usr/lib/x86_64-linux-gnu.
TXT
out=$("$check" --repo "$R2CC_REPO" "$tmp/stale.rst" 2>&1)
ok "$([ $? = 1 ] && grep -q "stale.rst:1: lib/$old\$" <<<"$out" && echo 1)" \
	"a path that moved is found ($out)"
ok "$([ "$(wc -l <<<"$out")" = 1 ] && echo 1)" \
	"paths that exist, build outputs and system paths are not"
done_testing
