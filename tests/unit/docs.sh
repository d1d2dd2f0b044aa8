#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Documentation/ builds with Sphinx (Debian's python3-sphinx, from make
# deps) with every warning an error, as the kernel builds its own; and it
# cites nothing outside the repository a reader would not have.
. "$(dirname "$0")/../lib/tap.sh"
command -v sphinx-build >/dev/null || skip_all "no sphinx-build (python3-sphinx)"
plan 2
out=$(mktemp -d)
log=$(sphinx-build -q -W --keep-going -b html "$R2CC_REPO/Documentation" \
	"$out" 2>&1)
ok "$([ $? = 0 ] && [ -z "$log" ] && echo 1)" \
	"sphinx-build -W: no warning${log:+: $log}"
rm -rf "$out"
hits=$(grep -rln 'design\.md\|\.\./shared' "$R2CC_REPO/Documentation" \
	"$R2CC_REPO/README.md" "$R2CC_REPO/man")
ok "$([ -z "$hits" ] && echo 1)" "no citation of files outside the tree${hits:+: $hits}"
