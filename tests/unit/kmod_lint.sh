#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The module's sources pass checkpatch.pl --strict (from Debian's
# linux-source-6.1), and build with W=1 and sparse (C=1) without a single
# warning against every testbed kernel's headers.
. "$(dirname "$0")/../lib/tap.sh"
cd "$R2CC_REPO" || exit 1

src=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1)
kvers=$(ls "$R2CC_BUILD/kmod" 2>/dev/null)
[ -n "$src" ] || [ -n "$kvers" ] ||
	skip_all "no linux-source-6.1 and no module built (make deps kmod-testbed)"
plan_later

files=(kmod/*.c include/uapi/linux/r2cc.h)
[ -n "$(ls kmod/*.h 2>/dev/null)" ] && files+=(kmod/*.h)

if [ -n "$src" ]; then
	cp=$R2CC_BUILD/cache/checkpatch
	if [ ! -x "$cp/checkpatch.pl" ]; then
		mkdir -p "$cp"
		tar -xf "$src" -C "$cp" --strip-components=2 \
			linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch
	fi
	# every file at once (each is a perl run of a second or more)
	out=$(mktemp -d)
	for f in "${files[@]}"; do
		"$cp/checkpatch.pl" --strict --no-tree --show-types -f "$f" \
			>"$out/${f//\//_}" 2>&1 &
	done
	wait
	for f in "${files[@]}"; do
		ok "$(grep -q 'total: 0 errors, 0 warnings, 0 checks' \
			"$out/${f//\//_}" && echo 1)" "checkpatch --strict: $f"
		grep -q 'total: 0 errors, 0 warnings, 0 checks' \
			"$out/${f//\//_}" || diag "$(cat "$out/${f//\//_}")"
	done
	rm -rf "$out"
fi

sparse=
command -v sparse >/dev/null && sparse=C=1
for kver in $kvers; do
	hdr=/usr/src/linux-headers-$kver
	[ -d "$hdr" ] || continue
	tmp=$(mktemp -d)
	cp -a Kbuild VERSION kmod include "$tmp/"
	out=$(make -j"$(nproc)" -C "$hdr" M="$tmp" W=1 $sparse modules 2>&1)
	rc=$?
	warn=$(grep -E 'warning:|error:' <<<"$out")
	ok "$([ $rc = 0 ] && [ -z "$warn" ] && echo 1)" \
		"$kver: builds with W=1 ${sparse:+and sparse }without warnings"
	[ $rc = 0 ] && [ -z "$warn" ] || diag "$out"
	rm -rf "$tmp"
done
done_testing
