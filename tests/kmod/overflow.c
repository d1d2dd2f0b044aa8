// SPDX-License-Identifier: GPL-2.0-only
/*
 * Overflow accounting with a slow reader: the module keeps the last
 * queue_len records; a reader further behind loses the oldest, counted,
 * and finds an R2CC_EV_OVERFLOW record with the count exactly where the
 * gap is, then the records that are left; a fast reader loses nothing;
 * memory stays bounded.  Run with r2cc.ko loaded with a small queue_len.
 */
#include "r2cc_test.h"

static int dev, toggles;
static unsigned int port;
static char name[64];

/* Flip the port; the fast reader @fast takes its record at once. */
static int flip(int ctl, int fast, __u64 *seq)
{
	struct r2cc_event ev;
	int kind = toggles++ % 2 ? R2CC_EV_PORT_UP : R2CC_EV_PORT_DOWN;

	if (r2cc_inject(ctl, dev, port, kind))
		return -1;
	if (r2cc_read_one(fast, &ev, 2000) != 1 || ev.kind != kind)
		return -1;
	*seq = ev.seq;
	return 0;
}

int main(void)
{
	struct r2cc_version ver;
	struct r2cc_event ev;
	__u64 first = 0, last = 0, s;
	long long drop0, drop1;
	int slow, fast, i, ok, n, q;

	if (geteuid())
		tap_skip_all("needs root");
	slow = r2cc_open_dev(O_NONBLOCK);
	fast = r2cc_open_dev(0);
	dev = r2cc_test_dev(name, sizeof(name), &port);
	if (ioctl(slow, R2CC_IOC_VERSION, &ver)) {
		perror("R2CC_IOC_VERSION");
		return KSFT_FAIL;
	}
	q = (int)ver.queue_len;
	if (q > 64)
		tap_skip_all("load r2cc.ko with queue_len <= 64 (it is %d)", q);
	tap_plan(11);
	r2cc_drain(slow);
	r2cc_drain(fast);
	drop0 = r2cc_sysfs_num("/sys/kernel/r2cc/events_dropped");

	/* Case 1: Q + 6 records; the 6 oldest are lost, the newest Q stay. */
	for (i = 0, ok = 1; i < q + 6; i++) {
		ok &= flip(slow, fast, &s) == 0;
		if (i == 0)
			first = s;
		last = s;
	}
	tap_ok(ok, "fast reader got all %d records", q + 6);
	tap_ok(r2cc_read_one(slow, &ev, 0) == 1 &&
	       ev.kind == R2CC_EV_OVERFLOW && ev.flags == R2CC_EVF_OVERFLOW,
	       "slow reader: an overflow record first");
	tap_ok(ev.lost == 6 && ev.seq == first + 5,
	       "it counts 6 lost, up to seq %llu (got %llu, %llu)",
	       (unsigned long long)first + 5, (unsigned long long)ev.lost,
	       (unsigned long long)ev.seq);
	for (i = 0, ok = 1; i < q; i++)
		ok &= r2cc_read_one(slow, &ev, 0) == 1 &&
		      ev.kind != R2CC_EV_OVERFLOW && ev.seq == first + 6 + i;
	tap_ok(ok, "then the newest %d records, in order", q);
	tap_ok(ev.seq == last && r2cc_read_one(slow, &ev, 0) == 0,
	       "up to seq %llu, then nothing", (unsigned long long)last);
	drop1 = r2cc_sysfs_num("/sys/kernel/r2cc/events_dropped");
	tap_ok(drop1 == drop0 + 6, "events_dropped %lld -> %lld", drop0, drop1);

	/* Case 2: the gap sits between the records read and the rest. */
	for (i = 0, ok = 1; i < q; i++) {
		ok &= flip(slow, fast, &s) == 0;
		if (i == 0)
			first = s;
	}
	for (i = 0; i < 4; i++)
		ok &= r2cc_read_one(slow, &ev, 0) == 1 && ev.seq == first + i;
	tap_ok(ok, "filled the ring again, read 4");
	/* Q - 4 unread; Q + 2 more overwrite them and 2 of the new ones. */
	for (i = 0; i < q + 2; i++) {
		ok &= flip(slow, fast, &s) == 0;
		last = s;
	}
	tap_ok(r2cc_read_one(slow, &ev, 0) == 1 &&
	       ev.kind == R2CC_EV_OVERFLOW && ev.lost == (__u64)q - 4 + 2 &&
	       ev.seq == last - q,
	       "an overflow record for the %d lost, up to seq %llu", q - 2,
	       (unsigned long long)last - q);
	for (i = 0, n = 0; i < q; i++)
		n += r2cc_read_one(slow, &ev, 0) == 1 &&
		     ev.seq == last - q + 1 + i;
	tap_ok(n == q, "then the %d records left, from seq %llu", n,
	       (unsigned long long)last - q + 1);
	tap_ok(r2cc_read_one(slow, &ev, 0) == 0, "and nothing else");
	/* Leave the port ACTIVE. */
	if (toggles % 2)
		flip(slow, fast, &s);
	tap_ok(toggles % 2 == 0, "%s port %u is back ACTIVE", name, port);
	return tap_done();
}
