#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench-kmod.sh [--kernel 6.1|6.12] [--changes N]
#
# The r2cc.ko figures of Documentation/kmod.rst, all in one testbed run:
# inject -> wake-up latency (read, epoll) against an eventfd ping-pong,
# delivery rate to 1/8/64 subscribers, state-page read cost, and real
# carrier changes seen through /dev/r2cc against ibv_get_async_event.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
build=${BUILD:-$here/build}
kernel=6.1 changes=20
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift ;;
	--changes) changes=$2; shift ;;
	*) echo "usage: $0 [--kernel 6.1|6.12] [--changes N]" >&2; exit 2 ;;
	esac
	shift
done
"$tb" status >/dev/null 2>&1 && { echo "testbed already up" >&2; exit 1; }
trap '"$tb" down >/dev/null 2>&1' EXIT
"$tb" up --nodes 1 --nics 1 --kernel "$kernel" | head -n1 || exit 1
kver=$("$tb" exec node0 -- uname -r)
"$tb" exec node0 -- insmod "$build/kmod/$kver/r2cc.ko" || exit 1
b=$build/tests/kmod/bench
# shellcheck source=scripts/bench-common.sh
. "$here/scripts/bench-common.sh"

echo "== wake-up latency (1000 injects each)"
"$tb" exec node0 -- "$b" wake 1000
echo "== delivery rate (2000 records)"
"$tb" exec node0 -- "$b" rate 2000
echo "== state page read cost"
"$tb" exec node0 -- "$b" page 10000000

echo "== real carrier changes: /dev/r2cc vs ibv_get_async_event ($changes)"
carrier_changes "$b" "$changes"
