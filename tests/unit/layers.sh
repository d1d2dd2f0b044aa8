#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# libr2cc's layers call and include only downward, with no circle between
# its files, and the NCCL plugin, the PyTorch backend and r2ccctl take
# only what they may (scripts/check-layers).  Then the check is shown to
# fail on each kind of violation, planted in a copy of the tree.
. "$(dirname "$0")/../lib/tap.sh"

check=$R2CC_REPO/scripts/check-layers
objs=$R2CC_BUILD/lib
[ -e "$objs/xport/conn.o" ] || skip_all "libr2cc not built"
command -v nm >/dev/null || skip_all "nm not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

plan 8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$check" --repo "$R2CC_REPO" --objs "$objs" 2>&1)
ok "$([ $? = 0 ] && echo 1)" "the tree keeps its layers${out:+: $out}"

# A copy of the sources and objects to plant violations in.
fresh() {
	rm -rf "$tmp/repo" "$tmp/objs"
	mkdir -p "$tmp/repo/tools" "$tmp/objs"
	cp -a "$R2CC_REPO/lib" "$R2CC_REPO/plugins" "$R2CC_REPO/bindings" \
		"$tmp/repo/"
	cp -a "$R2CC_REPO/tools/r2ccctl" "$tmp/repo/tools/"
	(cd "$objs" && find . -name '*.o' -path './*/*' |
		cpio -pdm --quiet "$tmp/objs")
}

# planted WHAT PATTERN: the check fails, and says PATTERN.
planted() {
	local got
	got=$("$check" --repo "$tmp/repo" --objs "$tmp/objs" 2>&1)
	ok "$([ $? = 1 ] && grep -q -- "$2" <<<"$got" && echo 1)" \
		"fails on $1: $(head -n1 <<<"$got")"
}

# the base calls up into the collectives
fresh
printf '%s\n' 'struct r2cc_coll;' 'void coll_free(struct r2cc_coll *q);' \
	'void planted(struct r2cc_coll *q);' \
	'void planted(struct r2cc_coll *q) { coll_free(q); }' >"$tmp/planted.c"
cc -c -o "$tmp/objs/base/planted.o" "$tmp/planted.c"
planted "a call from base up to coll" "^calls: base/planted .*coll_free"

# the control channel includes the collectives' header
fresh
sed -i '0,/#include "xport/s//#include "coll\/coll.h"\n&/' \
	"$tmp/repo/lib/xport/ctrl.c"
planted "an include from xport up to coll" "^includes: lib/xport/ctrl.c (layer xport) includes coll/coll.h"

# the control channel includes the rails, which include it: a circle
fresh
sed -i '0,/#include "xport/s//#include "xport\/rail.h"\n&/' \
	"$tmp/repo/lib/xport/ctrl.c"
planted "a circle inside a layer" "^circles: .*xport/ctrl includes xport/rail.h"

# the collectives reach into the transport past its public header
fresh
sed -i '0,/#include "base/s//#include "xport\/rail.h"\n&/' \
	"$tmp/repo/lib/coll/run.c"
planted "an include past a layer's public header" "not layer xport's public header"

# an include by a bare name, not by its path under lib/
fresh
sed -i 's|#include "xport/ctrl.h"|#include "ctrl.h"|' \
	"$tmp/repo/lib/xport/ctrl.c"
planted "an include not by its path" 'includes "ctrl.h", not a path under lib/'

# the NCCL plugin reaches into the library
fresh
f=$(ls "$tmp"/repo/plugins/nccl/*.c | head -n1)
sed -i '0,/#include/s//#include "xport\/wire.h"\n&/' "$f"
planted "a plugin including a private header" "^outside: plugins/nccl/"

# two files of one name: one would replace the other in libr2cc.a
fresh
cp "$tmp/repo/lib/xport/msg.c" "$tmp/repo/lib/coll/msg.c"
planted "two library files of one name" "^names: .*msg.c"

done_testing
