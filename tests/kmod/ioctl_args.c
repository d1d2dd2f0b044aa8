// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every /dev/r2cc ioctl with good, wrong, short, oversized, out-of-range
 * and hostile arguments, and the size rules that let structures grow
 * (an older, shorter caller and a newer, longer one); short, non-blocking
 * and faulting reads; mmap permissions; inject without CAP_NET_ADMIN.
 * Needs root and an RDMA device with an ACTIVE port (r2cc_test_dev()).
 */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "r2cc_test.h"

#define BADPTR ((void *)(uintptr_t)0x10)

/* A pointer the compiler cannot see through, for reads that must fault. */
static void *volatile badptr = BADPTR;

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

int main(void)
{
	struct r2cc_port_info info[64];
	struct r2cc_snapshot snap;
	struct r2cc_version ver;
	struct r2cc_filter filt;
	struct r2cc_inject inj;
	struct r2cc_event ev;
	struct {
		struct r2cc_snapshot s;
		__u64 tail;		/* a newer caller's field */
	} big;
	unsigned char vbuf[64];
	__u64 seq;
	int fd, dev, st, i, ok;
	unsigned int port;
	char name[64];
	char small[8];
	void *map;
	pid_t pid;

	if (geteuid())
		tap_skip_all("needs root");
	fd = r2cc_open_dev(O_NONBLOCK);
	dev = r2cc_test_dev(name, sizeof(name), &port);
	tap_plan(49);

	/* VERSION */
	memset(&ver, 0xff, sizeof(ver));
	st = ioc(fd, R2CC_IOC_VERSION, &ver);
	tap_ok(st == 0 &&
	       ver.abi == R2CC_ABI_VERSION &&
	       ver.event_size == sizeof(struct r2cc_event) &&
	       ver.port_info_size == sizeof(struct r2cc_port_info) &&
	       ver.state_size >= 4096 && ver.queue_len >= 2 &&
	       ver.size == sizeof(ver) &&
	       !ver.reserved[0] && !ver.reserved[1],
	       "VERSION: abi %u, record %u bytes, queue %u", ver.abi,
	       ver.event_size, ver.queue_len);
	tap_ok(ioc(fd, R2CC_IOC_VERSION, NULL) == -EFAULT, "VERSION NULL: EFAULT");
	tap_ok(ioc(fd, R2CC_IOC_VERSION, BADPTR) == -EFAULT,
	       "VERSION bad pointer: EFAULT");
	tap_ok(ioc(fd, _IO(R2CC_IOC_MAGIC, 99), NULL) == -ENOTTY,
	       "unknown command: ENOTTY");
	tap_ok(ioc(fd, _IOR(R2CC_IOC_MAGIC, 0, __u32), &st) == -EINVAL,
	       "VERSION encoded smaller than its first version: EINVAL");
	memset(vbuf, 0xa5, sizeof(vbuf));
	st = ioc(fd, _IOR(R2CC_IOC_MAGIC, 0, unsigned char[64]), vbuf);
	for (i = (int)sizeof(ver), ok = 1; i < (int)sizeof(vbuf); i++)
		ok &= vbuf[i] == 0xa5;
	tap_ok(st == 0 && !memcmp(vbuf, &ver, sizeof(ver)) && ok,
	       "VERSION encoded larger (a newer header): what the module knows, nothing past it");
	memset(vbuf, 0xa5, sizeof(vbuf));
	st = ioc(fd, _IOR(R2CC_IOC_MAGIC, 0, unsigned char[R2CC_VERSION_SIZE_VER0]),
		 vbuf);
	tap_ok(st == 0 && !memcmp(vbuf, &ver, R2CC_VERSION_SIZE_VER0) &&
	       vbuf[R2CC_VERSION_SIZE_VER0] == 0xa5,
	       "VERSION encoded at its first size (an older header): its %d bytes",
	       R2CC_VERSION_SIZE_VER0);
	tap_ok(ioc(fd, _IOW(R2CC_IOC_MAGIC, 0, struct r2cc_version), &ver) ==
	       -ENOTTY, "VERSION number, wrong direction: ENOTTY");
	tap_ok(ioc(fd, TCGETS, &st) == -ENOTTY, "TCGETS: ENOTTY");

	/* SNAPSHOT */
	memset(&snap, 0, sizeof(snap));
	snap.size = sizeof(snap);
	snap.count = 64;
	snap.ports = (uintptr_t)info;
	st = ioc(fd, R2CC_IOC_SNAPSHOT, &snap);
	tap_ok(st == 0 && snap.count >= 1,
	       "SNAPSHOT: %u ports, seq %llu", snap.count,
	       (unsigned long long)snap.seq);
	snap.count = 0;
	snap.ports = 0;
	tap_ok(ioc(fd, R2CC_IOC_SNAPSHOT, &snap) == 0 && snap.count >= 1,
	       "SNAPSHOT with no array reports the count");
	snap.size = R2CC_SNAPSHOT_SIZE_VER0 - 8;
	tap_ok(ioc(fd, R2CC_IOC_SNAPSHOT, &snap) == -EINVAL,
	       "SNAPSHOT smaller than its first version: EINVAL");
	memset(&big, 0, sizeof(big));
	big.s.size = sizeof(big);
	tap_ok(ioc(fd, _IOWR(R2CC_IOC_MAGIC, 1, typeof(big)), &big) == 0 &&
	       big.s.count >= 1 && big.tail == 0,
	       "SNAPSHOT from a newer caller (zero tail): accepted");
	big.tail = 1;
	tap_ok(ioc(fd, _IOWR(R2CC_IOC_MAGIC, 1, typeof(big)), &big) == -E2BIG,
	       "SNAPSHOT from a newer caller asking for more: E2BIG");
	snap.size = sizeof(snap);
	snap.reserved[1] = 1;
	tap_ok(ioc(fd, R2CC_IOC_SNAPSHOT, &snap) == -EINVAL,
	       "SNAPSHOT reserved != 0: EINVAL");
	snap.reserved[1] = 0;
	snap.count = 4;
	snap.ports = 0;
	tap_ok(ioc(fd, R2CC_IOC_SNAPSHOT, &snap) == -EFAULT,
	       "SNAPSHOT count without array: EFAULT");
	snap.ports = (uintptr_t)BADPTR;
	tap_ok(ioc(fd, R2CC_IOC_SNAPSHOT, &snap) == -EFAULT,
	       "SNAPSHOT bad array pointer: EFAULT");
	snap.count = 0xffffffff;
	snap.ports = (uintptr_t)info;
	/* Capacity is clamped; only as many entries as exist are written. */
	st = ioc(fd, R2CC_IOC_SNAPSHOT, &snap);
	tap_ok(st == 0 && snap.count < 64,
	       "SNAPSHOT huge count is clamped (%u ports)", snap.count);
	tap_ok(ioc(fd, R2CC_IOC_SNAPSHOT, BADPTR) == -EFAULT,
	       "SNAPSHOT bad pointer: EFAULT");

	/* SET_FILTER */
	memset(&filt, 0, sizeof(filt));
	filt.size = sizeof(filt);
	tap_ok(ioc(fd, R2CC_IOC_SET_FILTER, &filt) == 0, "SET_FILTER all");
	filt.ndevs = R2CC_FILTER_MAX_DEVS + 1;
	tap_ok(ioc(fd, R2CC_IOC_SET_FILTER, &filt) == -EINVAL,
	       "SET_FILTER too many devices: EINVAL");
	filt.ndevs = 0;
	filt.kinds = 1ULL << 63;
	tap_ok(ioc(fd, R2CC_IOC_SET_FILTER, &filt) == -EINVAL,
	       "SET_FILTER unknown kind bit: EINVAL");
	filt.kinds = 1;
	tap_ok(ioc(fd, R2CC_IOC_SET_FILTER, &filt) == -EINVAL,
	       "SET_FILTER kind 0: EINVAL");
	filt.kinds = 0;
	filt.reserved[0] = 5;
	tap_ok(ioc(fd, R2CC_IOC_SET_FILTER, &filt) == -EINVAL,
	       "SET_FILTER reserved != 0: EINVAL");
	filt.reserved[0] = 0;
	filt.size = 3;
	tap_ok(ioc(fd, R2CC_IOC_SET_FILTER, &filt) == -EINVAL,
	       "SET_FILTER wrong size: EINVAL");
	filt.size = 0xffffffff;
	tap_ok(ioc(fd, R2CC_IOC_SET_FILTER, &filt) < 0,
	       "SET_FILTER size 4 GiB: refused");

	/* INJECT */
	tap_ok(r2cc_inject(fd, 999999, 1, R2CC_EV_PORT_DOWN) == -ENODEV,
	       "INJECT unknown device: ENODEV");
	tap_ok(r2cc_inject(fd, dev, 0, R2CC_EV_PORT_DOWN) == -EINVAL,
	       "INJECT port 0: EINVAL");
	tap_ok(r2cc_inject(fd, dev, r2cc_test_ports(name, NULL) + 1,
			   R2CC_EV_PORT_DOWN) == -EINVAL,
	       "INJECT port out of range: EINVAL");
	tap_ok(r2cc_inject(fd, dev, port, R2CC_EV_GID_CHANGE) == -EINVAL,
	       "INJECT kind that cannot be injected: EINVAL");
	tap_ok(r2cc_inject(fd, dev, port, 0xffff) == -EINVAL,
	       "INJECT kind 0xffff: EINVAL");
	tap_ok(r2cc_inject(fd, dev, port, R2CC_EV_DEVICE_FATAL) == -EINVAL,
	       "INJECT DEVICE_FATAL with a port: EINVAL");
	tap_ok(r2cc_inject(fd, dev, port, R2CC_EV_PORT_UP) == -EALREADY,
	       "INJECT up on an ACTIVE port: EALREADY");
	memset(&inj, 0, sizeof(inj));
	inj.size = sizeof(inj);
	inj.dev_index = dev;
	inj.port = port;
	inj.kind = R2CC_EV_PORT_DOWN;
	inj.reserved0 = 1;
	tap_ok(ioc(fd, R2CC_IOC_INJECT, &inj) == -EINVAL,
	       "INJECT reserved0 != 0: EINVAL");
	inj.reserved0 = 0;
	inj.size = 0;
	tap_ok(ioc(fd, R2CC_IOC_INJECT, &inj) == -EINVAL,
	       "INJECT size 0: EINVAL");
	tap_ok(ioc(fd, R2CC_IOC_INJECT, BADPTR) == -EFAULT,
	       "INJECT bad pointer: EFAULT");

	pid = fork();
	if (pid == 0) {
		/* Keep the open file, lose the privilege. */
		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(r2cc_inject(fd, dev, port, R2CC_EV_PORT_DOWN) == -EPERM ?
		      0 : 1);
	}
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "INJECT without CAP_NET_ADMIN: EPERM");

	/* read */
	r2cc_drain(fd);
	tap_ok(read(fd, small, sizeof(small)) < 0 && errno == EINVAL,
	       "read into a buffer smaller than a record: EINVAL");
	tap_ok(read(fd, &ev, sizeof(ev)) < 0 && errno == EAGAIN,
	       "non-blocking read with nothing queued: EAGAIN");

	/* A failed copy loses nothing: the records are there afterwards. */
	r2cc_inject(fd, dev, port, R2CC_EV_PORT_DOWN);
	r2cc_inject(fd, dev, port, R2CC_EV_PORT_UP);
	tap_ok(read(fd, badptr, sizeof(ev)) < 0 && errno == EFAULT,
	       "read into a bad pointer: EFAULT");
	tap_ok(r2cc_read_one(fd, &ev, 0) == 1 &&
	       ev.kind == R2CC_EV_PORT_DOWN && (seq = ev.seq) &&
	       r2cc_read_one(fd, &ev, 0) == 1 &&
	       ev.kind == R2CC_EV_PORT_UP && ev.seq == seq + 1,
	       "after EFAULT both records still come, in order");
	r2cc_inject(fd, dev, port, R2CC_EV_PORT_DOWN);
	snap.size = sizeof(snap);
	snap.count = 64;
	snap.ports = (uintptr_t)BADPTR;
	tap_ok(ioc(fd, R2CC_IOC_SNAPSHOT, &snap) == -EFAULT &&
	       r2cc_read_one(fd, &ev, 0) == 1 &&
	       ev.kind == R2CC_EV_PORT_DOWN,
	       "a SNAPSHOT that faulted discards no record");
	r2cc_inject(fd, dev, port, R2CC_EV_PORT_UP);
	snap.ports = (uintptr_t)info;
	tap_ok(ioc(fd, R2CC_IOC_SNAPSHOT, &snap) == 0 &&
	       r2cc_read_one(fd, &ev, 0) == 0,
	       "a SNAPSHOT that succeeded covers the records before it");
	tap_ok(lseek(fd, 0, SEEK_SET) < 0 && errno == ESPIPE,
	       "lseek: ESPIPE");

	/* mmap */
	map = mmap(NULL, ver.state_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	tap_ok(map == MAP_FAILED && errno == EACCES,
	       "mmap writable of a read-only file: EACCES");
	st = open("/dev/r2cc", O_RDWR | O_CLOEXEC);
	map = mmap(NULL, ver.state_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   st, 0);
	tap_ok(st >= 0 && map == MAP_FAILED && errno == EPERM,
	       "mmap writable of a read-write file: EPERM");
	close(st);
	map = mmap(NULL, ver.state_size * 2, PROT_READ, MAP_SHARED, fd, 0);
	tap_ok(map == MAP_FAILED && errno == EINVAL, "mmap two pages: EINVAL");
	map = mmap(NULL, ver.state_size, PROT_READ | PROT_EXEC, MAP_SHARED,
		   fd, 0);
	tap_ok(map == MAP_FAILED && errno == EPERM, "mmap executable: EPERM");
	map = mmap(NULL, ver.state_size, PROT_READ, MAP_SHARED, fd, 0);
	tap_ok(map != MAP_FAILED &&
	       mprotect(map, ver.state_size, PROT_READ | PROT_WRITE) != 0 &&
	       mprotect(map, ver.state_size, PROT_READ | PROT_EXEC) != 0,
	       "state page maps read-only and cannot be made writable or executable");
	if (map != MAP_FAILED)
		munmap(map, ver.state_size);
	close(fd);
	return tap_done();
}
