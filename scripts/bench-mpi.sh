#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench-mpi.sh [--nodes N] [--nics K] [--kernel V] [--min BYTES] [--max BYTES]
#              [--iters N] [--cut SECONDS] [--rdma] [--keep]
#
# r2cc's allreduce against OpenMPI's on the same testbed nodes, one run,
# side by side (Documentation/coll.rst):
#   1. OpenMPI 4.1 (Debian's openmpi-bin), ob1 over TCP on the rails
#      (btl tcp: eth0..ethK-1), MPI_Allreduce of int32
#      (tools/baseline/mpi_allreduce.c);
#   2. with --rdma, OpenMPI with UCX (pml ucx: rc_verbs, ud_verbs for
#      wire-up) and with its openib BTL (rdmacm) over the rails' rxe
#      devices (neither ran here: their errors are printed);
#   3. r2cc-perf --coll allreduce: the ring, then the mesh (recursive
#      doubling below the cost model's rd_max);
# every size from --min to --max (powers of two), --iters timed calls
# each, the slowest rank's median, every result checked; then 64 KiB
# allreduces back to back under OpenMPI (TCP) and under r2cc while
# node0's rail 0 is cut for --cut seconds (default 10): what each
# completes second by second, and whether it errs.  mpirun runs in
# node0 and starts its daemons in the other nodes through their agents
# (tools/testbed/guest/tb-rsh): the nodes have no sshd.
#
# Needs: apt-get install openmpi-bin libopenmpi-dev (not a build
# dependency of r2cc, so 'make deps' does not install it).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
build=${BUILD:-$here/build}
nodes=4 nics=3 kernel=6.1 min=4096 max=1048576 iters=5 keep= cut=10 rdma=

while [ $# -gt 0 ]; do
	case "$1" in
	--nodes) nodes=$2; shift ;;
	--nics) nics=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--min) min=$2; shift ;;
	--max) max=$2; shift ;;
	--iters) iters=$2; shift ;;
	--cut) cut=$2; shift ;;
	--keep) keep=1 ;;
	--rdma) rdma=1 ;;
	-h|--help) sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench-mpi.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

for t in mpicc mpirun; do
	command -v $t >/dev/null || {
		echo "bench-mpi.sh: no $t: apt-get install openmpi-bin libopenmpi-dev" >&2
		exit 2
	}
done
mkdir -p "$build/baseline"
mpicc -O2 -Wall -Wextra -Werror -o "$build/baseline/mpi_allreduce" \
	"$here/tools/baseline/mpi_allreduce.c" || exit 1
out=$(mktemp -d)

if ! "$tb" status >/dev/null 2>&1; then
	"$tb" up --nodes "$nodes" --nics "$nics" --kernel "$kernel" >/dev/null || exit 1
	[ -n "$keep" ] || trap '"$tb" down >/dev/null' EXIT
fi
hosts=$(seq -s, -f '198.19.1.%g' 1 "$nodes")
rails=$(seq -s, -f 'eth%g' 0 $((nics - 1)))
devs=$(seq -s, -f 'rxe%g:1' 0 $((nics - 1)))

# mpi NAME MCA...: mpirun in node0 over every node; results in $out/NAME
mpi() {
	local name=$1
	shift
	"$tb" exec --timeout 900 node0 -- mpirun --allow-run-as-root \
		-np "$nodes" --host "$hosts" \
		--mca plm_rsh_agent "$here/tools/testbed/guest/tb-rsh" \
		--mca oob_tcp_if_include ctl0 "$@" \
		"$build/baseline/mpi_allreduce" "$min" "$max" "$iters" \
		>"$out/$name" 2>&1
	echo "== $name (exit $?)"
	grep -v '^mpi-allreduce' "$out/$name" | head -n 20
}

# r2cc NAME ARGS...: r2cc-perf --coll allreduce on every node
r2cc() {
	local name=$1 port=$((20000 + RANDOM % 20000)) i pids=()
	shift
	for ((i = nodes - 1; i >= 0; i--)); do
		"$tb" exec --timeout 900 "node$i" -- env R2CC_SOCKET_IFNAME=ctl0 \
			R2CC_ROOT=198.19.1.1:$port WORLD_SIZE="$nodes" RANK=$i \
			"$build/tools/r2cc-perf" --coll allreduce --timeout 300 \
			--sweep "$min:$max" --iters "$iters" "$@" \
			>"$out/$name.$i" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	cp "$out/$name.0" "$out/$name"
	echo "== $name"
	grep -v '^r2cc-perf-coll\|^allreduce ' "$out/$name" | head -n 20
}

mpi ompi-tcp --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$rails"
# RDMA under OpenMPI, with --rdma: neither ran on rxe here (2026-12-02).
# UCX's rc_verbs needs an auxiliary wire-up transport: tcp is refused as
# one, ud_verbs times out on GID index 1 (RoCE v2, IPv4) and cannot reach
# index 0 (IPv6 link-local).  Debian's openib BTL offers only the udcm
# connection manager, not the rdmacm RoCE needs.
if [ -n "$rdma" ]; then
	mpi ompi-ucx --mca pml ucx --mca btl ^tcp,openib \
		-x UCX_NET_DEVICES="$devs" -x UCX_TLS=rc_verbs,ud_verbs,self \
		-x UCX_IB_GID_INDEX=1
	mpi ompi-openib --mca pml ob1 --mca btl openib,self \
		--mca btl_openib_cpc_include rdmacm \
		--mca btl_openib_if_include "${devs//:1/}"
fi
r2cc r2cc-ring --stall-ms 1000
r2cc r2cc-mesh --stall-ms 1000 --mesh

# The table: us per call, each column one run of this script.
cols="ompi-tcp${rdma:+ ompi-ucx ompi-openib} r2cc-ring r2cc-mesh"
echo
printf '%-10s' size
for c in $cols; do printf ' %12s' "$c"; done
echo "   (median us per allreduce, slowest rank; bad results in brackets)"
for ((b = min; b <= max; b *= 2)); do
	printf '%-10s' "$b"
	for c in $cols; do
		v=$(sed -n "s/^\(mpi-allreduce\|r2cc-perf-coll\): .*size=$b .*us_med=\([0-9.]*\).* bad=\([0-9]*\).*/\2 \3/p" \
			"$out/$c" 2>/dev/null | head -n 1)
		if [ -z "$v" ]; then
			printf ' %12s' -
		elif [ "${v#* }" != 0 ]; then
			printf ' %12s' "${v% *}[${v#* }]"
		else
			printf ' %12s' "${v% *}"
		fi
	done
	echo
done

# A rail cut under each: 64 KiB allreduces back to back for 40 s, node0's
# rail 0 carrier down from 5 s to 5 + --cut s; what completes each second.
# cut_rail FILE: once FILE says the loop runs, 3 s more, then the cut.
cut_rail() {
	for _ in $(seq 600); do
		grep -q '^tick\|^streaming' "$1" 2>/dev/null && break
		sleep 0.2
	done
	sleep 3
	"$tb" link node0 0 down
	sleep "$cut"
	"$tb" link node0 0 up
}
echo
echo "== rail 0 of node0 cut for $cut s under OpenMPI (ob1, TCP on every rail)"
cut_rail "$out/cut-mpi" &
"$tb" exec --timeout 300 node0 -- mpirun --allow-run-as-root \
	-np "$nodes" --host "$hosts" \
	--mca plm_rsh_agent "$here/tools/testbed/guest/tb-rsh" \
	--mca oob_tcp_if_include ctl0 --mca pml ob1 --mca btl tcp,self \
	--mca btl_tcp_if_include "$rails" \
	"$build/baseline/mpi_allreduce" loop 65536 40 >"$out/cut-mpi" 2>&1
echo "(mpirun exit $?)"
tail -n 60 "$out/cut-mpi"
wait
echo "== the same under r2cc (the ring)"
cut_rail "$out/cut.0" &
port=$((20000 + RANDOM % 20000)) pids=()
for ((i = nodes - 1; i >= 0; i--)); do
	"$tb" exec --timeout 300 "node$i" -- env R2CC_SOCKET_IFNAME=ctl0 \
		R2CC_ROOT=198.19.1.1:$port WORLD_SIZE="$nodes" RANK=$i \
		R2CC_STALL_MS=1000 "$build/tests/libr2cc/coll" -l 400 -s 65536 \
		>"$out/cut.$i" 2>&1 &
	pids+=($!)
done
wait "${pids[@]}"
grep -v '^view' "$out/cut.0" | tail -n 60
wait
rm -rf "$out"
