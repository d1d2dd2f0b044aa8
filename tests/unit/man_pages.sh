#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The manual pages under man/: each renders with groff and man(1) without a
# warning, has a NAME line whatis(1) can index, and every page named in a
# SEE ALSO or a .so link exists; every function libr2cc exports has a
# page, and every option r2cc-perf --help and r2cc-sim --help list is in
# their page.
. "$(dirname "$0")/../lib/tap.sh"
cd "$R2CC_REPO/man" || exit 1
command -v groff >/dev/null && command -v man >/dev/null ||
	skip_all "groff and man(1) are not installed"
plan_later

pages=(man[0-9]/*.[0-9])
ok "$([ ${#pages[@]} -ge 30 ] && echo 1)" "${#pages[@]} pages"
bad=
for f in "${pages[@]}"; do
	w=$( { groff -man -ww -z -K utf8 "$f"
	       MANWIDTH=80 man --warnings -l "$f" >/dev/null; } 2>&1)
	[ -z "$w" ] || { bad+=" $f"; diag "$f: $w"; }
done
ok "$([ -z "$bad" ] && echo 1)" "every page renders without a warning${bad:+:$bad}"

bad=
for f in "${pages[@]}"; do
	head -n 1 "$f" | grep -q '^\.so ' && continue
	lexgrog "$f" >/dev/null 2>&1 || bad+=" $f"
done
ok "$([ -z "$bad" ] && echo 1)" "whatis indexes every page${bad:+ but:$bad}"

# A .so link names a page that exists; so does every NAME(N) in SEE ALSO
# that is one of this project's (r2cc*, libr2cc).
bad= nrefs=0
for f in "${pages[@]}"; do
	t=$(sed -n '1s/^\.so //p' "$f")
	[ -z "$t" ] || [ -e "$t" ] || bad+=" $f->$t"
	for ref in $(sed -n '/^\.SH "\{0,1\}SEE ALSO/,/^\.SH/p' "$f" |
		sed 's/\\-/-/g; s/\\%//g' |
		grep -oE '(lib)?r2cc[a-z0-9_.-]* ?\(?[0-9]' |
		sed -E 's/ ?\(?([0-9])$/.\1/'); do
		[ -e "man${ref##*.}/$ref" ] || bad+=" $f:$ref"
		nrefs=$((nrefs + 1))
	done
done
ok "$([ -z "$bad" ] && [ $nrefs -gt 30 ] && echo 1)" \
	"links and $nrefs SEE ALSO references name pages that exist${bad:+:$bad}"

missing=
for fn in $(sed -n 's/^[[:space:]]*\(r2cc_[a-z_]*\);$/\1/p' \
	"$R2CC_REPO/lib/libr2cc.map" | sort -u); do
	[ -e "man3/$fn.3" ] || missing+=" $fn"
done
ok "$([ -z "$missing" ] && echo 1)" "every exported function has a page${missing:+ (missing:$missing)}"

# --help's long options, each in the tool's page (as \-\-name or --name).
for tool in r2cc-perf r2cc-sim r2ccctl; do
	bin=$R2CC_BUILD/tools/$tool
	if [ ! -x "$bin" ]; then
		skip "$tool is not built"
		continue
	fi
	missing=
	page=$(ls man[18]/"$tool".[18])
	text=$(MANWIDTH=200 man -l "$page" 2>/dev/null | col -b)
	for o in $("$bin" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' |
		sort -u); do
		grep -qE -- "$o\b" <<<"$text" || missing+=" $o"
	done
	ok "$([ -z "$missing" ] && echo 1)" "$page documents every option of --help${missing:+ (missing:$missing)}"
done
done_testing
