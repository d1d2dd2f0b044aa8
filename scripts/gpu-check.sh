#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# gpu-check.sh [--keep] [--budget SECONDS]
#
# The checks that need an NVIDIA GPU, in one run of a few minutes on a
# machine lent for it (root, no internet, the repository checked out and
# the CUDA toolkit and NCCL where this project's build machines have them):
#   1. the GPU, its driver and CUDA version (nvidia-smi, read only);
#   2. the toolchain, reporting what is missing;
#   3. `make lib` with <cuda.h> found, so that lib/xport/cuda.c has its GPU
#      path, and tests/gpu/{nccl_allreduce,mr_cuda}.c;
#   4. an RDMA device: one already there, else soft-RoCE (rdma_rxe) on
#      the first non-loopback interface that is up with an IPv4 address,
#      else on a dummy interface, else on a veth pair it creates (and
#      removes at the end, unless --keep);
#   5. (a) mr_cuda: cudaMalloc memory registered through R2CC_MR_CUDA;
#      (b) nccl_allreduce on one rank with NCCL_NET_PLUGIN=r2cc: does
#      NCCL load libnccl-net-r2cc.so, and which devices does it list;
#      (c) with an RDMA device, two ranks on the one GPU (NCCL_HOSTID
#      host-a / host-b, P2P and SHM off, NCCL_NET=r2cc) running the
#      checked allreduce, with host staging (R2CC_NCCL_GDR=0) and then
#      GPU memory (R2CC_NCCL_GDR=1, NCCL_NET_GDR_LEVEL=SYS so that NCCL
#      does not quietly fall back to host memory).
# Every step runs under timeout and within the budget (default 400 s for
# the whole run); the GPU is never reset nor its settings changed.  What
# it prints goes to stdout and, when $OUT is set, to $OUT/gpu-check.log;
# the full logs of each step are files beside it ($OUT, else
# build/gpu-check/).  It ends with a summary, one line per step (PASS,
# FAIL or SKIP and why), and exits 0 once it has run to the end: the
# summary says what passed.  Environment: CUDA_HOME (/usr/local/cuda),
# NCCL_HOME (where nccl.h and libnccl.so are, default: CUDA_HOME, /usr,
# pip's nvidia/nccl), BUILD (build/).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$here/build}
keep=0 budget=400
# What cleanup undoes: background ranks (their timeout's pid, which leads
# their process group), soft-RoCE links and interfaces made here.
bg=() made_links=() made_ifs=() tmp=''
while [ $# -gt 0 ]; do
	case "$1" in
	--keep) keep=1 ;;
	--budget) budget=$2; shift ;;
	*) echo "usage: $0 [--keep] [--budget SECONDS]" >&2; exit 2 ;;
	esac
	shift
done
case "$budget" in
''|*[!0-9]*) echo "gpu-check: --budget $budget: not a number of seconds" >&2; exit 2 ;;
esac

main() {
	local start=$SECONDS
	local logdir=${OUT:-$build/gpu-check}
	local gb=$build/tests/gpu
	local cuda=${CUDA_HOME:-/usr/local/cuda}
	local nccl_inc='' nccl_lib='' gpu=0 rdma=0 built_ar=0 built_mr=0 lib_ok=0
	local -a summary=()
	tmp=$(mktemp -d /tmp/gpu-check.XXXXXX) || return 1
	mkdir -p "$logdir" "$gb" || return 1

	say() { printf '\n== %s\n' "$*"; }
	result() { summary+=("$(printf '%-16s %-4s %s' "$1" "$2" "$3")"); printf -- '-> %s: %s %s\n' "$1" "$2" "$3"; }
	have() { command -v "$1" >/dev/null 2>&1; }
	left() { echo $((budget - (SECONDS - start))); }
	# tmo SECONDS CMD...: CMD under timeout, cut to what the budget has left.
	tmo() {
		local s=$1 l
		shift
		l=$(left)
		[ "$l" -lt "$s" ] && s=$l
		[ "$s" -lt 1 ] && s=1
		timeout -k 5 "$s" "$@"
	}
	# enough SECONDS: whether the budget still has that much.
	enough() { [ "$(left)" -ge "$1" ]; }
	indent() { sed 's/^/  | /'; }

	cleanup() {
		local p l i
		for p in "${bg[@]}"; do
			kill -TERM "$p" 2>/dev/null
		done
		for p in "${bg[@]}"; do
			for _ in 1 2 3 4 5 6 7 8 9 10; do
				kill -0 "$p" 2>/dev/null || break
				sleep 0.2
			done
			# timeout leads a process group of its own: the rank is in it.
			kill -KILL -- "-$p" 2>/dev/null
		done
		if [ "$keep" = 0 ]; then
			for l in "${made_links[@]}"; do
				timeout 10 rdma link delete "$l" 2>/dev/null &&
					echo "gpu-check: removed soft-RoCE device $l"
			done
			for i in "${made_ifs[@]}"; do
				timeout 10 ip link del "$i" 2>/dev/null &&
					echo "gpu-check: removed interface $i"
			done
		fi
		[ -n "$tmp" ] && rm -rf "$tmp"
		if [ -n "$teepid" ]; then
			exec >&- 2>&-
			wait "$teepid"
		fi
	}
	trap cleanup EXIT
	trap 'echo "gpu-check: interrupted"; exit 130' INT TERM

	echo "gpu-check: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -n), kernel $(uname -r), budget ${budget}s"
	echo "gpu-check: repository $here ($(git -C "$here" log -1 --format='%h %s' 2>/dev/null | cut -c1-72)), logs in $logdir"

	# ------------------------------------------------------------ 1. GPU
	say "GPU"
	local smi_cuda='' drv='' smi_rc=''
	if have nvidia-smi; then
		tmo 20 nvidia-smi -L >"$tmp/smi-L" 2>&1
		smi_rc=$?
		indent <"$tmp/smi-L"
	fi
	if [ "$smi_rc" = 124 ] || [ "$smi_rc" = 137 ]; then
		echo "  nvidia-smi -L timed out: not asking it again"
	elif [ -n "$smi_rc" ]; then
		tmo 20 nvidia-smi --query-gpu=index,name,driver_version,memory.total,compute_mode,pci.bus_id \
			--format=csv,noheader 2>&1 | indent
		smi_cuda=$(tmo 20 nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n1)
		drv=$(tmo 20 nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)
		grep -q '^GPU ' "$tmp/smi-L" && gpu=1
	fi
	[ -r /proc/driver/nvidia/version ] && indent </proc/driver/nvidia/version
	ls /dev/nvidia* >/dev/null 2>&1 && echo "  device nodes: $(echo /dev/nvidia*)"
	if [ "$gpu" = 1 ]; then
		result gpu PASS "$(grep -c '^GPU ' "$tmp/smi-L") GPU(s): $(sed -n '1s/ (UUID.*//p' "$tmp/smi-L"); driver $drv, driver CUDA ${smi_cuda:-?}"
		if tmo 20 nvidia-smi --query-gpu=compute_mode --format=csv,noheader 2>/dev/null |
			head -n1 | grep -qi exclusive; then
			echo "  note: GPU 0 is in an exclusive compute mode: two processes cannot share it (left as it is)"
		fi
	elif have nvidia-smi; then
		result gpu FAIL "nvidia-smi lists no GPU (rc $smi_rc): $(head -n1 "$tmp/smi-L")"
	elif [ -e /dev/nvidia0 ]; then
		gpu=1
		result gpu PASS "no nvidia-smi, but /dev/nvidia0 exists: the CUDA programs will tell"
	else
		result gpu FAIL "no NVIDIA GPU here: no nvidia-smi, no /dev/nvidia0"
	fi

	# ------------------------------------------------------------ 2. toolchain
	say "Toolchain"
	local -a missing=()
	local c
	for c in gcc make timeout ip; do
		have "$c" || missing+=("$c")
	done
	for c in cuda.h cuda_runtime.h; do
		[ -r "$cuda/include/$c" ] || missing+=("$cuda/include/$c")
	done
	local cuda_lib=$cuda/lib64
	[ -e "$cuda_lib/libcudart.so" ] || { [ -e "$cuda/lib/libcudart.so" ] && cuda_lib=$cuda/lib; }
	[ -e "$cuda_lib/libcudart.so" ] || missing+=("libcudart.so under $cuda")
	local d
	for d in ${NCCL_HOME:+"$NCCL_HOME"} "$cuda" /usr /usr/local \
		/usr/local/lib/python3*/dist-packages/nvidia/nccl \
		/usr/lib/python3/dist-packages/nvidia/nccl; do
		[ -z "$nccl_inc" ] && [ -r "$d/include/nccl.h" ] && nccl_inc=$d/include
		if [ -z "$nccl_lib" ]; then
			for c in "$d/lib64" "$d/lib" "$d/lib/x86_64-linux-gnu"; do
				if [ -e "$c/libnccl.so" ] || [ -e "$c/libnccl.so.2" ]; then
					nccl_lib=$c
					break
				fi
			done
		fi
	done
	[ -n "$nccl_inc" ] || missing+=("nccl.h")
	[ -n "$nccl_lib" ] || missing+=("libnccl.so")
	[ -r /usr/include/infiniband/verbs.h ] || missing+=("infiniband/verbs.h (libibverbs-dev)")
	if have gcc && ! echo 'int main(void){return 0;}' |
		gcc -x c -o "$tmp/t" - -libverbs >/dev/null 2>&1; then
		missing+=("libibverbs.so to link (libibverbs-dev)")
	fi
	ls /usr/lib/*/libibverbs/librxe-rdmav*.so >/dev/null 2>&1 ||
		ls /usr/lib64/libibverbs/librxe-rdmav*.so >/dev/null 2>&1 ||
		missing+=("librxe-rdmav*.so (ibverbs-providers: soft-RoCE in userspace)")
	for c in ibv_devices ibv_devinfo rdma modprobe; do
		have "$c" || missing+=("$c")
	done
	echo "  gcc: $(gcc --version 2>/dev/null | head -n1)"
	echo "  nvcc: $("$cuda/bin/nvcc" --version 2>/dev/null | tail -n1)"
	local rt_ver
	rt_ver=$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$cuda/include/cuda_runtime_api.h" 2>/dev/null)
	[ -n "$rt_ver" ] && echo "  CUDA runtime of the toolkit: $((rt_ver / 1000)).$((rt_ver % 1000 / 10)) ($cuda)"
	echo "  NCCL: ${nccl_inc:-none} $(sed -n 's/^#define NCCL_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' "$nccl_inc/nccl.h" 2>/dev/null | paste -sd.), ${nccl_lib:-no library}"
	for d in /usr/local/cuda-*; do
		[ -d "$d" ] && echo "  other toolkit: $d"
	done
	# A runtime runs on a driver of its major version or newer (minor
	# version compatibility), not on an older major.
	if [ -n "$rt_ver" ] && [ -n "$smi_cuda" ] &&
		[ "${smi_cuda%%.*}" -lt $((rt_ver / 1000)) ] 2>/dev/null; then
		echo "  WARNING: the toolkit's CUDA $((rt_ver / 1000)) runtime needs a newer driver than this one (CUDA $smi_cuda): cudart will call the driver insufficient; CUDA_HOME=another toolkit"
		missing+=("a driver for CUDA $((rt_ver / 1000)) (the driver has $smi_cuda)")
	fi
	if [ ${#missing[@]} = 0 ]; then
		result toolchain PASS "gcc, make, CUDA headers and cudart, NCCL, libibverbs, rdma tools"
	else
		result toolchain FAIL "missing: $(printf '%s; ' "${missing[@]}" | sed 's/; $//')"
	fi

	# ------------------------------------------------------------ 3. build
	say "Build: make -s lib, tests/gpu"
	if ! have make || ! have gcc; then
		result build-lib FAIL "no make or gcc"
	elif tmo 240 make -C "$here" -s -j"$(nproc)" lib BUILD="$build" CUDA_HOME="$cuda" \
		>"$logdir/build.log" 2>&1; then
		lib_ok=1
		if [ -r "$cuda/include/cuda.h" ] &&
			! grep -q cuMemGetHandleForAddressRange "$build/lib/xport/cuda.o" 2>/dev/null; then
			echo "  lib/xport/cuda.o was built without <cuda.h>: rebuilding it"
			rm -f "$build/lib/xport/cuda.o"
			tmo 120 make -C "$here" -s lib BUILD="$build" CUDA_HOME="$cuda" \
				>>"$logdir/build.log" 2>&1 || lib_ok=0
		fi
		if [ "$lib_ok" = 0 ]; then
			tail -n 20 "$logdir/build.log" | indent
			result build-lib FAIL "rebuilding lib/xport/cuda.o failed (build.log)"
		elif grep -q cuMemGetHandleForAddressRange "$build/lib/xport/cuda.o" 2>/dev/null; then
			result build-lib PASS "libr2cc and the plugin, GPU memory path compiled in"
		else
			result build-lib FAIL "built, but without <cuda.h>: R2CC_MR_CUDA is refused (no $cuda/include/cuda.h)"
		fi
	else
		tail -n 20 "$logdir/build.log" | indent
		result build-lib FAIL "make lib failed or timed out (build.log)"
	fi
	for c in "$build/lib/libr2cc.so.0" "$build/lib/libnccl-net-r2cc.so"; do
		if [ -e "$c" ]; then echo "  built: $c ($(stat -L -c %s "$c") bytes)"; else echo "  missing: $c"; fi
	done
	# The project's warnings (Makefile); CUDA's and NCCL's headers as
	# system headers, which -Wundef and -Wstrict-prototypes would fail.
	local -a warn=(-Wall -Wextra -Werror -Wshadow -Wformat=2
		-Wstrict-prototypes -Wmissing-prototypes -Wundef -Wpointer-arith
		-Wcast-align -Wwrite-strings -Wvla -std=gnu11 -O2 -D_GNU_SOURCE)
	local why=''
	if ! have gcc; then
		why="no gcc"
	elif [ -z "$nccl_inc" ] || [ -z "$nccl_lib" ] || [ ! -r "$cuda/include/cuda_runtime.h" ]; then
		why="no NCCL or CUDA runtime headers/library"
	else
		if tmo 60 gcc "${warn[@]}" -isystem "$cuda/include" -isystem "$nccl_inc" \
			-o "$gb/nccl_allreduce" "$here/tests/gpu/nccl_allreduce.c" \
			-L"$nccl_lib" -L"$cuda_lib" -Wl,-rpath,"$nccl_lib:$cuda_lib" \
			"$([ -e "$nccl_lib/libnccl.so" ] && echo -lnccl || echo -l:libnccl.so.2)" -lcudart >"$logdir/build-tests.log" 2>&1; then
			built_ar=1
		else
			why="nccl_allreduce.c did not compile"
		fi
		if [ "$lib_ok" = 0 ]; then
			why="${why:+$why; }mr_cuda needs libr2cc"
		elif tmo 60 gcc "${warn[@]}" -isystem "$cuda/include" -I"$here/include" \
			-o "$gb/mr_cuda" "$here/tests/gpu/mr_cuda.c" \
			-L"$build/lib" -lr2cc -Wl,-rpath,"$build/lib:$cuda_lib" \
			-L"$cuda_lib" -lcudart -ldl >>"$logdir/build-tests.log" 2>&1; then
			built_mr=1
		else
			why="${why:+$why; }mr_cuda.c did not compile"
		fi
		indent <"$logdir/build-tests.log"
	fi
	if [ "$built_ar" = 1 ] && [ "$built_mr" = 1 ]; then
		result build-tests PASS "$gb/nccl_allreduce, $gb/mr_cuda"
	else
		result build-tests FAIL "$why"
	fi

	# ------------------------------------------------------------ 4. RDMA
	say "RDMA device"
	rdma_devs() {
		local f l=''
		for f in /sys/class/infiniband/*; do
			[ -e "$f" ] && l="$l${l:+ }${f##*/}"
		done
		echo "$l"
	}
	have ibv_devices && tmo 10 ibv_devices 2>&1 | indent
	local devs how='' rstat=SKIP
	devs=$(rdma_devs)
	# try_rxe NETDEV: soft-RoCE device rxe0 on NETDEV; 0 once it is ACTIVE.
	try_rxe() {
		local out st
		if ! out=$(tmo 15 rdma link add rxe0 type rxe netdev "$1" 2>&1); then
			echo "  rdma link add rxe0 type rxe netdev $1: failed: ${out:-timeout}"
			return 1
		fi
		made_links+=(rxe0)
		for _ in $(seq 25); do
			st=$(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)
			case "$st" in *ACTIVE*) break ;; esac
			sleep 0.2
		done
		echo "  rdma link add rxe0 type rxe netdev $1: ok, port state ${st:-unknown}"
		case "$st" in *ACTIVE*) return 0 ;; esac
		tmo 10 rdma link delete rxe0 2>/dev/null
		made_links=()
		return 1
	}
	# Ports ACTIVE now, over every device.
	active_ports() {
		local f n=0
		for f in /sys/class/infiniband/*/ports/*/state; do
			grep -q ACTIVE "$f" 2>/dev/null && n=$((n + 1))
		done
		echo "$n"
	}
	local active none
	active=$(active_ports)
	none="none"
	if [ -n "$devs" ]; then
		echo "  devices: $devs, $active port(s) ACTIVE"
		none="$devs present but no port ACTIVE"
	fi
	if [ -n "$devs" ] && [ "$active" -gt 0 ]; then
		rdma=1
		how="present: $devs ($active port(s) ACTIVE)"
	elif [ "$gpu" = 0 ]; then
		how="$none, and with no GPU soft-RoCE is not tried"
	elif [ "$(id -u)" != 0 ]; then
		how="$none, and not root: soft-RoCE not tried"
	elif ! have rdma || ! have ip; then
		how="$none, and no rdma/ip tool (iproute2) to make a soft-RoCE one"
	else
		local out iface
		out=$(tmo 20 modprobe rdma_rxe 2>&1)
		echo "  modprobe rdma_rxe: rc $? ${out}"
		[ -d /sys/module/rdma_rxe ] || echo "  rdma_rxe is not loaded (a container, or a kernel without it?); trying anyway"
		iface=$(ip -o -4 addr show up scope global 2>/dev/null |
			awk '$2 != "lo" && $2 !~ /^r2cc/ {print $2; exit}')
		if [ -n "$iface" ] && try_rxe "$iface"; then
			how="soft-RoCE rxe0 on $iface"
		else
			[ -z "$iface" ] && echo "  no interface up with an IPv4 address"
			if tmo 10 ip link add r2cc0 type dummy 2>"$tmp/ip.err"; then
				made_ifs+=(r2cc0)
				tmo 10 ip addr add 198.18.0.1/24 dev r2cc0
				tmo 10 ip link set r2cc0 up
				echo "  ip link add r2cc0 type dummy: ok, 198.18.0.1/24"
				if try_rxe r2cc0; then
					how="soft-RoCE rxe0 on dummy r2cc0 (198.18.0.1)"
				else
					tmo 10 ip link del r2cc0 && made_ifs=()
				fi
			else
				echo "  ip link add r2cc0 type dummy: $(cat "$tmp/ip.err")"
			fi
			if [ -z "$how" ]; then
				if tmo 10 ip link add r2cc0 type veth peer name r2cc1 2>"$tmp/ip.err"; then
					made_ifs+=(r2cc0)
					tmo 10 ip addr add 198.18.0.1/24 dev r2cc0
					tmo 10 ip addr add 198.18.1.1/24 dev r2cc1
					tmo 10 ip link set r2cc0 up
					tmo 10 ip link set r2cc1 up
					echo "  ip link add r2cc0 type veth peer name r2cc1: ok, 198.18.0.1/24, 198.18.1.1/24"
					if try_rxe r2cc0; then
						how="soft-RoCE rxe0 on veth r2cc0 (198.18.0.1, peer r2cc1)"
					fi
				else
					echo "  ip link add r2cc0 type veth peer name r2cc1: $(cat "$tmp/ip.err")"
				fi
			fi
		fi
		devs=$(rdma_devs)
		if [ -n "$how" ]; then
			rdma=1
			# Devices already there have no port up: use rxe0 alone.
			if [ "$devs" != rxe0 ]; then
				export R2CC_NICS=rxe0
				how="$how; R2CC_NICS=rxe0 (the others have no port ACTIVE)"
			fi
		else
			how="$none, and no soft-RoCE device could be made" rstat=FAIL
		fi
	fi
	if [ "$rdma" = 1 ]; then
		for d in $devs; do
			tmo 10 ibv_devinfo -d "$d" 2>&1 | grep -E 'hca_id|transport|state|link_layer|active_mtu' | indent
			cat /sys/class/infiniband/"$d"/ports/*/gids/* 2>/dev/null |
				grep -v '^0000:0000:0000:0000:0000:0000:0000:0000$' |
				head -n4 | sed "s/^/  $d gid /"
		done
		ls /dev/infiniband/uverbs* >/dev/null 2>&1 ||
			echo "  WARNING: no /dev/infiniband/uverbs*: userspace cannot open the devices"
		have rdma && tmo 10 rdma link show 2>&1 | indent
		result rdma PASS "$how"
	else
		result rdma "$rstat" "$how"
	fi

	# ------------------------------------------------------------ 5a. MR
	say "(a) cudaMalloc memory through r2cc_mr_reg(R2CC_MR_CUDA)"
	if [ "$gpu" = 0 ]; then
		result mr-cuda SKIP "no GPU"
	elif [ "$built_mr" = 0 ]; then
		result mr-cuda SKIP "mr_cuda not built"
	elif ! enough 10; then
		result mr-cuda SKIP "time budget spent"
	else
		LD_LIBRARY_PATH=$build/lib:$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
			tmo 60 "$gb/mr_cuda" -v >"$logdir/mr-cuda.log" 2>&1
		local rc=$?
		indent <"$logdir/mr-cuda.log"
		local regs
		regs=$(sed -n 's/^mr_reg \([^ ]*\) [0-9]*: /\1 /p' "$logdir/mr-cuda.log" | paste -sd, | sed 's/,/, /g')
		case $rc in
		0) result mr-cuda PASS "$regs" ;;
		1) result mr-cuda FAIL "$regs" ;;
		3) result mr-cuda SKIP "no libr2cc context: $(sed -n 's/^r2cc_ctx_create: //p' "$logdir/mr-cuda.log") (no RDMA device)" ;;
		124|137) result mr-cuda FAIL "timed out" ;;
		*) result mr-cuda FAIL "rc $rc: $(grep -m1 -E '^CUDA|error' "$logdir/mr-cuda.log")" ;;
		esac
	fi

	# ------------------------------------------------------------ 5b, 5c. NCCL
	local ld=$build/lib:$nccl_lib:$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	# show LOG: the lines of an NCCL log worth reading here.
	show() {
		grep -E 'NET/Plugin|network plugin|NET plugin|Using network|NET/r2cc|via NET|GDR|WARN|error|Error|nccl_allreduce|^allreduce |\[rank' "$1" |
			head -n 80 | indent
	}
	# plugin_verdict LOG: the plugin's load and devices steps from LOG.
	plugin_verdict() {
		local n names
		if grep -q 'Successfully loaded external network plugin' "$1"; then
			result plugin-load PASS "$(grep -m1 -o 'Loaded net plugin.*' "$1"); $(grep -m1 -o 'Successfully loaded external network plugin.*' "$1")$(grep -q 'Failed to initialize NET plugin r2cc' "$1" && echo '; its init failed')"
		elif grep -q 'NET/Plugin' "$1"; then
			result plugin-load FAIL "$(grep -m1 -o 'NET/Plugin.*' "$1" | cut -c1-160)"
		else
			result plugin-load FAIL "no sign of NCCL loading a net plugin in the log"
		fi
		n=$(grep -c 'NET/r2cc : device [0-9]*:' "$1")
		names=$(sed -n 's/.*NET\/r2cc : device [0-9]*: \([^,]*\),.*/\1/p' "$1" | sort -u | paste -sd' ')
		if [ "$n" -gt 0 ]; then
			result plugin-devs PASS "$(grep -m1 -o 'NET/r2cc : [0-9]* devices.*' "$1" | sed 's/NET\/r2cc : //'): $names"
		elif [ "$rdma" = 0 ]; then
			result plugin-devs SKIP "no RDMA device, so the plugin has none to list$(grep -q 'Failed to initialize NET plugin r2cc' "$1" && echo ' (its init failed, as it should)')"
		else
			result plugin-devs FAIL "no 'NET/r2cc : device' line$(grep -m1 -o 'NET/r2cc : .*' "$1" | sed 's/^/: /' | cut -c1-140)"
		fi
	}

	say "(b) nccl_allreduce, one rank, NCCL_NET_PLUGIN=r2cc"
	if [ "$gpu" = 0 ]; then
		result nccl-1rank SKIP "no GPU"
		result plugin-load SKIP "no GPU"
		result plugin-devs SKIP "no GPU"
	elif [ "$built_ar" = 0 ]; then
		result nccl-1rank SKIP "nccl_allreduce not built"
		result plugin-load SKIP "nccl_allreduce not built"
		result plugin-devs SKIP "nccl_allreduce not built"
	elif ! enough 20; then
		result nccl-1rank SKIP "time budget spent"
		result plugin-load SKIP "time budget spent"
		result plugin-devs SKIP "time budget spent"
	else
		local log=$logdir/nccl-1rank.log
		tmo 90 env NCCL_NET_PLUGIN=r2cc NCCL_DEBUG=INFO \
			NCCL_DEBUG_SUBSYS=INIT,NET LD_LIBRARY_PATH="$ld" \
			RANK=0 WORLD_SIZE=1 TIMEOUT_S=$(($(left) < 90 ? $(left) - 5 : 85)) \
			"$gb/nccl_allreduce" >"$log" 2>&1
		local rc=$?
		show "$log"
		if grep -q '^nccl_allreduce: PASS' "$log"; then
			result nccl-1rank PASS "$(grep -c '^allreduce .* ok' "$log") sizes checked, $(grep -m1 -o 'Using network [^ ]*' "$log" || echo 'no network used')"
		elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			result nccl-1rank FAIL "timed out"
		else
			result nccl-1rank FAIL "rc $rc: $(grep -m1 -E 'FAIL|rror' "$log" | cut -c1-160)"
		fi
		plugin_verdict "$log"
	fi

	# two NAME GDR: two ranks on GPU 0, NCCL's traffic over the plugin.
	two() {
		local name=$1 gdr=$2 t r rc0 rc1 p0 p1 extra=''
		t=$(left)
		[ "$t" -gt 120 ] && t=120
		[ "$gdr" = 1 ] && extra="NCCL_NET_GDR_LEVEL=SYS"
		rm -f "$tmp/id.$name"
		for r in 0 1; do
			# shellcheck disable=SC2086 # $extra is one assignment or none
			timeout -k 5 "$t" env NCCL_NET_PLUGIN=r2cc NCCL_NET=r2cc NCCL_P2P_DISABLE=1 \
				NCCL_SHM_DISABLE=1 R2CC_NCCL_GDR="$gdr" $extra \
				NCCL_HOSTID="host-$([ $r = 0 ] && echo a || echo b)" \
				NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET \
				LD_LIBRARY_PATH="$ld" RANK=$r WORLD_SIZE=2 \
				NCCL_ID_FILE="$tmp/id.$name" NCCL_ID_WAIT_S=30 \
				TIMEOUT_S=$((t - 5)) "$gb/nccl_allreduce" \
				>"$logdir/$name.rank$r.log" 2>&1 &
			bg+=($!)
			if [ $r = 0 ]; then p0=$!; else p1=$!; fi
		done
		wait "$p0"; rc0=$?
		wait "$p1"; rc1=$?
		bg=()
		for r in 0 1; do
			echo "  rank $r (rc $([ $r = 0 ] && echo $rc0 || echo $rc1)):"
			show "$logdir/$name.rank$r.log"
		done
		local gdr_used=no
		grep -q 'GDRDMA' "$logdir/$name.rank0.log" "$logdir/$name.rank1.log" && gdr_used=yes
		if grep -q '^nccl_allreduce: PASS' "$logdir/$name.rank0.log" &&
			grep -q '^nccl_allreduce: PASS' "$logdir/$name.rank1.log"; then
			if grep -qE 'Using network r2cc|via NET/r2cc' "$logdir/$name.rank0.log"; then
				result "$name" PASS "$(grep -c '^allreduce .* ok' "$logdir/$name.rank0.log") sizes checked over NET/r2cc, GDRDMA $gdr_used, 64 MiB in $(sed -n 's/^allreduce 67108864 ok //p' "$logdir/$name.rank0.log") us"
			else
				result "$name" FAIL "the allreduce passed but the log never shows r2cc in use"
			fi
		elif [ "$rc0" = 124 ] || [ "$rc1" = 124 ] || [ "$rc0" = 137 ] || [ "$rc1" = 137 ]; then
			result "$name" FAIL "timed out after ${t}s (rc $rc0/$rc1)"
		else
			result "$name" FAIL "rc $rc0/$rc1: $(cat "$logdir/$name.rank0.log" "$logdir/$name.rank1.log" | grep -m1 -E 'FAIL|rror|WARN' | cut -c1-160)"
		fi
	}

	say "(c) nccl_allreduce, two ranks on GPU 0 over NET/r2cc"
	if [ "$gpu" = 0 ]; then
		result nccl-2rank-host SKIP "no GPU"
		result nccl-2rank-gdr SKIP "no GPU"
	elif [ "$rdma" = 0 ]; then
		result nccl-2rank-host SKIP "no RDMA device"
		result nccl-2rank-gdr SKIP "no RDMA device"
	elif [ "$built_ar" = 0 ] || [ "$lib_ok" = 0 ]; then
		result nccl-2rank-host SKIP "nccl_allreduce or the plugin not built"
		result nccl-2rank-gdr SKIP "nccl_allreduce or the plugin not built"
	else
		echo "-- R2CC_NCCL_GDR=0: host staging"
		if enough 30; then two nccl-2rank-host 0; else result nccl-2rank-host SKIP "time budget spent"; fi
		echo "-- R2CC_NCCL_GDR=1 NCCL_NET_GDR_LEVEL=SYS: GPU memory registered through the plugin"
		if enough 30; then two nccl-2rank-gdr 1; else result nccl-2rank-gdr SKIP "time budget spent"; fi
	fi

	# ------------------------------------------------------------ summary
	say "Summary ($((SECONDS - start)) s)"
	printf '  %s\n' "${summary[@]}"
	local np nf ns
	np=$(printf '%s\n' "${summary[@]}" | awk '$2 == "PASS"' | wc -l)
	nf=$(printf '%s\n' "${summary[@]}" | awk '$2 == "FAIL"' | wc -l)
	ns=$(printf '%s\n' "${summary[@]}" | awk '$2 == "SKIP"' | wc -l)
	echo "gpu-check: $np passed, $nf failed, $ns skipped; logs in $logdir"
	[ "$gpu" = 0 ] && echo "gpu-check: no GPU on this machine: only the build was checked"
	return 0
}

# main runs in this shell, so that its traps clean up on TERM and INT;
# tee ignores them, to log the cleanup too, and is waited for at exit.
teepid=''
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT" || exit 1
	exec > >(trap '' TERM INT; exec tee "$OUT/gpu-check.log") 2>&1
	teepid=$!
fi
main
