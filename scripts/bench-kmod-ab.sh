#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench-kmod-ab.sh BASE.ko [--kernel 6.1|6.12] [--rounds N] [--changes N]
#
# Two builds of r2cc.ko side by side on one testbed node, loaded in turn
# (A B A B ...): wake-up latency of read() and epoll against an eventfd
# ping-pong, delivery to 1, 8 and 64 subscribers, and --changes real
# carrier changes (default 0: none) against ibv_get_async_event.  A is
# BASE.ko (an older build), B the tree's build/kmod/KVER/r2cc.ko.  Prints
# each run's lines prefixed by the build, for medians and ratios across
# rounds.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
build=${BUILD:-$here/build}
[ $# -ge 1 ] || { echo "usage: $0 BASE.ko [--kernel K] [--rounds N] [--changes N]" >&2; exit 2; }
base=$(realpath "$1")
shift
kernel=6.1 rounds=3 changes=0
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--changes) changes=$2; shift ;;
	*) echo "usage: $0 BASE.ko [--kernel K] [--rounds N] [--changes N]" >&2; exit 2 ;;
	esac
	shift
done
"$tb" status >/dev/null 2>&1 && { echo "testbed already up" >&2; exit 1; }
trap '"$tb" down >/dev/null 2>&1' EXIT
"$tb" up --nodes 1 --nics 1 --kernel "$kernel" | head -n1 || exit 1
kver=$("$tb" exec node0 -- uname -r)
b=$build/tests/kmod/bench
# shellcheck source=scripts/bench-common.sh
. "$here/scripts/bench-common.sh"
for ((r = 1; r <= rounds; r++)); do
	for which in A B; do
		ko=$base
		[ "$which" = B ] && ko=$build/kmod/$kver/r2cc.ko
		"$tb" exec node0 -- sh -c "rmmod r2cc 2>/dev/null; insmod $ko" ||
			exit 1
		"$tb" exec node0 -- "$b" wake 1000 | sed "s/^/$which round $r wake: /"
		"$tb" exec node0 -- "$b" rate 2000 | sed "s/^/$which round $r rate: /"
		[ "$changes" -gt 0 ] &&
			carrier_changes "$b" "$changes" | sed "s/^/$which round $r link: /"
	done
done
