#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The NCCL plugin's API test (tests/nccl/api.c) on the host, where there
# is no RDMA device: it loads libnccl-net-r2cc.so by name, as NCCL does,
# from build/lib; every table v8..v12 refuses misuse, init fails cleanly,
# and what needs a device is skipped (tests/testbed/nccl_api.sh runs it).
. "$(dirname "$0")/../lib/tap.sh"
bin=$R2CC_BUILD/tests/nccl/api
[ -x "$bin" ] || skip_all "tests/nccl/api not built (make libtests)"
[ -e "$R2CC_BUILD/lib/libnccl-net-r2cc.so" ] ||
	skip_all "the plugin is not built (make lib)"
unset R2CC_NCCL_PLUGIN
plan 3
out=$(LD_LIBRARY_PATH=$R2CC_BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	"$bin" 2>&1)
rc=$?
ok "$([ $rc = 0 ] && echo 1)" \
	"NCCL plugin API: $(grep -c '^ok' <<<"$out") checks pass, $(grep -c '^ok .* # SKIP' <<<"$out") of them skipped"
[ $rc = 0 ] || diag "$out"
n=$(grep -Ec '^ok [0-9]+ - v(8|9|10|11|12) ncclNetPlugin_v(8|9|10|11|12) exported$' <<<"$out")
is "$n" 5 "every table, ncclNetPlugin_v8 .. _v12, found and checked"
# A plugin that cannot be loaded is a skip (exit 4), with the reason.
out=$(R2CC_NCCL_PLUGIN=/nonexistent/libnccl-net-r2cc.so "$bin" 2>&1)
rc=$?
ok "$([ $rc = 4 ] && grep -q '^1\.\.0 # SKIP cannot load' <<<"$out" && echo 1)" \
	"no plugin to load: exit 4 (skip), saying why"
[ $rc = 4 ] || diag "exit $rc: $out"
done_testing
