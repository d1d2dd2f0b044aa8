#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# udev/70-r2cc.rules under a real systemd-udevd in a node: with r2cc.ko
# installed in the node's module tree (updates/ and depmod's indexes, as a
# package or DKMS puts it), a new RDMA device makes udev load it; /dev/r2cc gets
# group rdma and mode 0640: a member of rdma may open it, another user
# may not; removing the device leaves the module's view clean.
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
udevd=/lib/systemd/systemd-udevd
[ -x "$udevd" ] || skip_all "no systemd-udevd on this host"
getent group rdma >/dev/null || skip_all "no group rdma (rdma-core)"
plan_later
rdma_gid=$(getent group rdma | cut -d: -f3)

tb_exec node0 sh -c 'rmmod r2cc 2>/dev/null; true'
# depmod over the node's whole module tree takes over a minute under
# TCG; the same depmod on the host, over a tree of links to the same
# files, takes seconds and writes the same indexes.
k=$(tb_exec node0 uname -r)
tree=$R2CC_BUILD/tests/udev-modules
rm -rf "$tree"
mkdir -p "$tree/lib/modules"
cp -rs "$R2CC_BUILD/cache/kernels/$k/root/lib/modules/$k" "$tree/lib/modules/"
mkdir -p "$tree/lib/modules/$k/updates"
cp "$R2CC_BUILD/kmod/$k/r2cc.ko" "$tree/lib/modules/$k/updates/"
run_ok "depmod with r2cc.ko in updates/" depmod -b "$tree" "$k"
run_ok "r2cc.ko installed into an overlay of the node's module tree" \
	tb_exec node0 sh -c "set -e; d=/tmp/r2cc-udev
	mkdir -p \$d/u \$d/w /etc/udev/rules.d
	mount -t overlay overlay -o lowerdir=/lib/modules/$k,upperdir=\$d/u,workdir=\$d/w /lib/modules/$k
	mkdir -p /lib/modules/$k/updates
	cp $tree/lib/modules/$k/updates/r2cc.ko /lib/modules/$k/updates/
	cp $tree/lib/modules/$k/modules.* /lib/modules/$k/
	cp $R2CC_REPO/udev/70-r2cc.rules /etc/udev/rules.d/"
run_ok "systemd-udevd starts" tb_exec node0 sh -c \
	"$udevd --daemon && udevadm settle -t 20"
ok "$(tb_exec node0 sh -c '[ ! -e /sys/module/r2cc ]' && echo 1)" \
	"r2cc.ko is not loaded before a device appears"

run_ok "a new RDMA device: rdma link add rxe9 on ctl0" \
	tb_exec node0 rdma link add rxe9 type rxe netdev ctl0
tb_exec node0 sh -c 'udevadm settle -t 20
	for i in $(seq 100); do [ -c /dev/r2cc ] && exit 0; sleep 0.1; done
	exit 1'
ok "$([ $? = 0 ] && echo 1)" "udev loaded r2cc.ko: /dev/r2cc is there"
is "$(tb_exec node0 stat -c '%G %a' /dev/r2cc)" "rdma 640" \
	"/dev/r2cc: group rdma, mode 0640"
ok "$(tb_exec node0 sh -c '[ -d /sys/kernel/r2cc/devices/rxe9 ]' && echo 1)" \
	"r2cc.ko watches rxe9"
tb_exec node0 setpriv --reuid=65534 --regid=65534 --groups="$rdma_gid" \
	sh -c 'exec 3</dev/r2cc'
ok "$([ $? = 0 ] && echo 1)" "a member of rdma opens /dev/r2cc"
tb_exec node0 setpriv --reuid=65534 --regid=65534 --clear-groups \
	sh -c 'exec 3</dev/r2cc' 2>/dev/null
ok "$([ $? != 0 ] && echo 1)" "a user outside rdma may not"

run_ok "rdma link delete rxe9" tb_exec node0 rdma link delete rxe9
tb_exec node0 sh -c 'udevadm settle -t 20
	for i in $(seq 50); do [ -d /sys/kernel/r2cc/devices/rxe9 ] || exit 0
	sleep 0.1; done; exit 1'
ok "$([ $? = 0 ] && echo 1)" "r2cc.ko forgets rxe9"
# Every step even if one fails, so that a failed run leaves no trace.
run_ok "stop udevd, rmmod r2cc, remove the module tree overlay" \
	tb_exec node0 sh -c 'rc=0; udevadm control --exit || rc=1
	rmmod r2cc || rc=1; umount /lib/modules/$(uname -r) || rc=1
	rm -rf /tmp/r2cc-udev /etc/udev/rules.d/70-r2cc.rules; exit $rc'
rm -rf "$tree"
tb_finish
