#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The transport's deterministic protocol simulator (tests/xsim): seeds 1 to
# R2CC_XSIM_SEEDS (default 10000), or from 1 for R2CC_XSIM_SECONDS seconds
# when that is set (scripts/check-full.sh: 120), then the scripted cases,
# R2CC_XSIM_CASE_SEEDS seeds each (default 40; make check's ASan run: 10).
# A failing seed prints the command that replays it.
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$here/build}
if [ -n "${R2CC_XSIM_SECONDS:-}" ]; then
	exec "$build/tests/xsim/xsim" -n 1000000 -t "$R2CC_XSIM_SECONDS"
fi
exec "$build/tests/xsim/xsim" -n "${R2CC_XSIM_SEEDS:-10000}"
