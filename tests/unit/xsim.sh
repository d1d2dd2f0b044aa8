#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The transport's deterministic protocol simulator (tests/xsim): seeds
# from 1 for R2CC_XSIM_SECONDS (default 30; scripts/check-full.sh: 120)
# seconds, then the scripted cases, R2CC_XSIM_CASE_SEEDS seeds each (default
# 40; make check's ASan run: 10).  A failing seed prints the command that
# replays it.
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$here/build}
exec "$build/tests/xsim/xsim" -n 1000000 -t "${R2CC_XSIM_SECONDS:-30}"
