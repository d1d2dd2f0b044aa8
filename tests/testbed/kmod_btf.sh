#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# r2cc.ko carries BTF made against the running kernel's own: the kernel
# accepts it (/sys/kernel/btf/r2cc), its types are there, and a bpftrace
# kfunc (fentry) probe reads a record's fields by name.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later

ko=$R2CC_BUILD/kmod/$TB_KVER/r2cc.ko
btf=$R2CC_BUILD/cache/kernels/$TB_KVER/vmlinux.btf
if [ ! -s "$btf" ]; then
	tb_exec node0 cat /sys/kernel/btf/vmlinux >"$btf.tmp" && mv "$btf.tmp" "$btf"
fi
ok "$([ -s "$btf" ] && echo 1)" "the kernel's BTF is cached ($(stat -c %s "$btf" 2>/dev/null) bytes)"
if ! readelf -S "$ko" | grep -q '\.BTF'; then
	run_ok "scripts/kmod-btf adds BTF to r2cc.ko" \
		"$R2CC_REPO/scripts/kmod-btf" "$ko" "$btf"
fi
ok "$(readelf -S "$ko" | grep -q '\.BTF' && echo 1)" "r2cc.ko has a .BTF section"
run_ok "insmod r2cc.ko" kmod_load node0
ok "$(tb_exec node0 test -e /sys/kernel/btf/r2cc && echo 1)" \
	"the kernel loaded it: /sys/kernel/btf/r2cc"
if tb_exec node0 sh -c 'command -v bpftool' >/dev/null; then
	# Split BTF: bpftool takes the kernel's as the base by itself.
	types=$(tb_exec node0 bpftool btf dump file /sys/kernel/btf/r2cc 2>&1)
	for t in "STRUCT 'r2cc_port'" "STRUCT 'r2cc_dev'" "STRUCT 'r2cc_event'" \
		 "FUNC 'r2cc_emit'"; do
		ok "$(grep -q "$t" <<<"$types" && echo 1)" "BTF has $t"
	done
fi
if tb_exec node0 sh -c 'command -v bpftrace' >/dev/null; then
	out=$(mktemp)
	TB_TIMEOUT=200 tb_exec node0 timeout 150 bpftrace -e \
		'kfunc:r2cc:r2cc_emit { printf("emit kind=%u port=%u dev_index=%u\n", args->ev->kind, args->ev->port, args->ev->dev_index); }' \
		>"$out" 2>&1 &
	bpid=$!
	for ((t = 0; t < 1200; t++)); do
		grep -q Attaching "$out" && break
		kill -0 "$bpid" 2>/dev/null || break
		sleep 0.1
	done
	# bpftrace prints "Attaching" before its probe is live: a drill
	# injected at once can go unseen, so inject until one is seen.
	for ((n = 0; n < 10; n++)); do
		tb_exec node0 "$KTEST/inject" rxe0 1 down
		tb_exec node0 "$KTEST/inject" rxe0 1 up
		for ((t = 0; t < 20; t++)); do
			grep -q 'kind=1' "$out" && grep -q 'kind=2' "$out" && break 2
			sleep 0.1
		done
	done
	tb_exec node0 pkill -INT -x bpftrace
	wait "$bpid"
	idx=$(tb_exec node0 cat /sys/kernel/r2cc/devices/rxe0/index)
	ok "$(grep -q "emit kind=1 port=1 dev_index=$idx" "$out" && echo 1)" \
		"bpftrace kfunc probe reads the record by field name"
	diag "$(cat "$out")"
	rm -f "$out"
fi
run_ok "rmmod" kmod_unload node0
tb_finish
