#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The whole test matrix, which make check samples to stay near half an
# hour on a 2-core machine:
#   - every testbed file on both kernels (make check runs on 6.1 only the
#     files marked "# ci: every kernel"), and the files marked
#     "# ci: full only" (packages.sh);
#   - ib_write_bw on every pair of nodes and every rail (make check: each
#     pair and each rail once);
#   - 100 hotplug rounds, 150 injection rounds under stress (make check:
#     40, 60), ten testbed up/down cycles (make check: two), all four
#     broken-testbed scenarios of run_all_rerun (make check: two).
# Takes about an hour and a quarter here.
#
#   scripts/check-full.sh [tests/run-all options]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
make -s -C "$here" deps all kmod-testbed || exit 1
R2CC_RAILS_ALL=1 R2CC_UPDOWN_CYCLES=10 R2CC_HOTPLUG_ROUNDS=100 \
	R2CC_STRESS_ROUNDS=150 R2CC_XSIM_SECONDS=120 R2CC_XSIM_ASAN_SECONDS=60 R2CC_XSIM_ASAN_CASE_SEEDS=40 FUZZ_SECS=30 TSAN_RUNS=3 COLL_FULL=1 R2CC_RERUN_CASES="crash twice poweroff rail blackhole" \
	exec "$here/tests/run-all" --every-kernel "$@"
