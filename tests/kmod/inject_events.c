// SPDX-License-Identifier: GPL-2.0-only
/*
 * Snapshot, then injected events: records arrive with consecutive
 * sequence numbers after the snapshot's, the right fields and flags, poll
 * wakes, every subscriber gets every record, filters work, and the state
 * page and sysfs follow.  Needs root and an RDMA device with an ACTIVE
 * port (r2cc_test_dev()); leaves that port ACTIVE.
 */
#include <stdint.h>
#include <sys/mman.h>

#include "r2cc_test.h"

#define NSUBS 4

static int state_page_port(const struct r2cc_state_header *h, int dev,
			   unsigned int port, struct r2cc_state_port *out)
{
	__u32 s, i;

	do {
		s = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		memset(out, 0, sizeof(*out));
		for (i = 0; i < h->nslots; i++)
			if ((h->ports[i].flags & R2CC_SLOT_VALID) &&
			    h->ports[i].dev_index == (__u32)dev &&
			    h->ports[i].port == port)
				*out = h->ports[i];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((s & 1) || __atomic_load_n(&h->seq, __ATOMIC_RELAXED) != s);
	return out->flags & R2CC_SLOT_VALID;
}

/* The path of attribute @attr of port @port of device @dev, in @buf. */
static const char *port_attr(char *buf, size_t len, const char *dev,
			     unsigned int port, const char *attr)
{
	snprintf(buf, len, "/sys/kernel/r2cc/devices/%s/ports/%u/%s", dev,
		 port, attr);
	return buf;
}

int main(void)
{
	struct r2cc_port_info info[64];
	struct r2cc_snapshot snap = { .size = sizeof(snap), .count = 64 };
	struct r2cc_filter filt = { .size = sizeof(filt) };
	const struct r2cc_state_header *h;
	int fds[NSUBS], ffd, dev, i, got, ok;
	struct r2cc_state_port sp;
	struct r2cc_event ev, ev2;
	long long downs0, downs1;
	char buf[64], name[64], path[320];
	unsigned int port;
	__u64 seq0;

	if (geteuid())
		tap_skip_all("needs root");
	for (i = 0; i < NSUBS; i++)
		fds[i] = r2cc_open_dev(0);
	ffd = r2cc_open_dev(0);
	dev = r2cc_test_dev(name, sizeof(name), &port);
	tap_plan(19);

	snap.ports = (uintptr_t)info;
	tap_ok(ioctl(fds[0], R2CC_IOC_SNAPSHOT, &snap) == 0, "snapshot");
	seq0 = snap.seq;
	for (i = 1; i < NSUBS; i++)
		r2cc_drain(fds[i]);
	for (i = 0, ok = 0; i < (int)snap.count && i < 64; i++)
		if (info[i].dev_index == (__u32)dev && info[i].port == port &&
		    info[i].state == R2CC_PORT_ACTIVE &&
		    !strcmp(info[i].dev_name, name))
			ok = 1;
	tap_ok(ok, "snapshot shows %s port %u ACTIVE", name, port);
	tap_ok(r2cc_read_one(fds[0], &ev, 0) == 0,
	       "nothing queued right after the snapshot");

	/* Only PORT_UP records for the device on the filtered subscriber. */
	filt.kinds = 1ULL << R2CC_EV_PORT_UP;
	filt.ndevs = 1;
	filt.devs[0] = dev;
	tap_ok(ioctl(ffd, R2CC_IOC_SET_FILTER, &filt) == 0, "filter set");
	r2cc_drain(ffd);

	h = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fds[0], 0);
	if (h == MAP_FAILED)
		h = NULL;
	tap_ok(h && h->version == R2CC_ABI_VERSION &&
	       h->entry_size == sizeof(struct r2cc_state_port),
	       "state page mapped");
	downs0 = r2cc_sysfs_num(port_attr(path, sizeof(path), name, port,
					  "down_events"));

	tap_ok(r2cc_inject(fds[0], dev, port, R2CC_EV_PORT_DOWN) == 0,
	       "inject down");
	for (i = 0, ok = 1; i < NSUBS; i++) {
		got = r2cc_read_one(fds[i], &ev, 2000);
		ok &= got == 1 && ev.seq == seq0 + 1;
	}
	tap_ok(ok, "every subscriber got the record, seq %llu = snapshot + 1",
	       (unsigned long long)seq0 + 1);
	tap_ok(ev.size == sizeof(ev) && ev.version == R2CC_ABI_VERSION &&
	       ev.kind == R2CC_EV_PORT_DOWN && ev.flags == R2CC_EVF_INJECTED &&
	       ev.dev_index == (__u32)dev && ev.port == port &&
	       ev.old_state == R2CC_PORT_ACTIVE &&
	       ev.new_state == R2CC_PORT_DOWN &&
	       !strcmp(ev.dev_name, name) && ev.time_ns > 0 &&
	       !ev.reason && !ev.error_rate &&
	       ev.old_bandwidth_mbps == ev.bandwidth_mbps,
	       "record: kind DOWN, injected, ACTIVE -> DOWN, %s port %u", name,
	       port);
	tap_ok(h && state_page_port(h, dev, port, &sp) &&
	       sp.state == R2CC_PORT_DOWN && sp.last_change_ns == ev.time_ns,
	       "state page shows DOWN");
	tap_ok(!strcmp(r2cc_sysfs_str(port_attr(path, sizeof(path), name, port,
						"state"), buf, sizeof(buf)),
		       "DOWN"),
	       "sysfs state is DOWN");
	downs1 = r2cc_sysfs_num(port_attr(path, sizeof(path), name, port,
					  "down_events"));
	tap_ok(downs1 == downs0 + 1, "sysfs down_events %lld -> %lld",
	       downs0, downs1);
	tap_ok(r2cc_read_one(ffd, &ev2, 100) == 0,
	       "the filtered subscriber did not get the DOWN");

	tap_ok(r2cc_inject(fds[0], dev, port, R2CC_EV_PORT_UP) == 0,
	       "inject up");
	for (i = 0, ok = 1; i < NSUBS; i++) {
		got = r2cc_read_one(fds[i], &ev, 2000);
		ok &= got == 1 && ev.seq == seq0 + 2 &&
		      ev.kind == R2CC_EV_PORT_UP &&
		      ev.new_state == R2CC_PORT_ACTIVE;
	}
	tap_ok(ok, "every subscriber got the UP, seq %llu",
	       (unsigned long long)seq0 + 2);
	tap_ok(r2cc_read_one(ffd, &ev2, 2000) == 1 &&
	       ev2.kind == R2CC_EV_PORT_UP && ev2.seq == seq0 + 2,
	       "the filtered subscriber got the UP");
	tap_ok(h && state_page_port(h, dev, port, &sp) &&
	       sp.state == R2CC_PORT_ACTIVE && sp.bandwidth_mbps ==
	       ev.bandwidth_mbps, "state page shows ACTIVE, %llu Mbit/s",
	       (unsigned long long)sp.bandwidth_mbps);

	tap_ok(r2cc_inject(fds[0], dev, 0, R2CC_EV_DEVICE_FATAL) == 0 &&
	       r2cc_read_one(fds[1], &ev, 2000) == 1 &&
	       ev.kind == R2CC_EV_DEVICE_FATAL && ev.port == 0 &&
	       (ev.flags & R2CC_EVF_INJECTED), "inject device fatal");
	tap_ok(r2cc_read_one(fds[2], &ev, 0) == 1 && ev.seq == seq0 + 3,
	       "sequence numbers have no gaps");
	{
		struct r2cc_event many[8];
		ssize_t n;

		for (i = 0; i < 3; i++)
			r2cc_inject(fds[0], dev, port,
				    i % 2 ? R2CC_EV_PORT_UP : R2CC_EV_PORT_DOWN);
		r2cc_inject(fds[0], dev, port, R2CC_EV_PORT_UP);
		n = read(fds[3], many, sizeof(many));
		tap_ok(n > 0 && n % sizeof(struct r2cc_event) == 0,
		       "one read returns %zd whole records",
		       n / (ssize_t)sizeof(struct r2cc_event));
	}
	return tap_done();
}
