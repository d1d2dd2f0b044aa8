// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc-test-watch: print /dev/r2cc records, one per line, for tests.
 *
 *   watch [-s] [-n COUNT] [-t TIMEOUT_MS]
 *
 * -s takes a snapshot first and prints "snapshot SEQ PORTS".  Each record:
 * "SEQ KIND DEV PORT OLD NEW PHYS FLAGS BW IFINDEX LOST TIME_NS REASON
 * OLD_BW ERROR_RATE".  Stops
 * after COUNT records or TIMEOUT_MS without one; exit 0, or 3 on timeout.
 * Prints "ready" once subscribed so callers know when to act.
 */
#include <stdint.h>

#include "r2cc_test.h"

static const char *const kinds[] = {
	"?", "PORT_DOWN", "PORT_UP", "PORT_CHANGE", "DEVICE_ADD",
	"DEVICE_REMOVE", "DEVICE_FATAL", "GID_CHANGE", "LID_CHANGE",
	"PKEY_CHANGE", "CLIENT_REREGISTER", "SM_CHANGE", "OVERFLOW",
	"PORT_SPEED", "PORT_DEGRADED", "PORT_RECOVERED",
};

int main(int argc, char **argv)
{
	int fd, opt, count = -1, timeout = 10000, snap = 0, got = 0, r;
	struct r2cc_event ev;

	while ((opt = getopt(argc, argv, "sn:t:")) != -1) {
		switch (opt) {
		case 's':
			snap = 1;
			break;
		case 'n':
			count = atoi(optarg);
			break;
		case 't':
			timeout = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: watch [-s] [-n N] [-t MS]\n");
			return 2;
		}
	}
	fd = open("/dev/r2cc", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("/dev/r2cc");
		return 1;
	}
	if (snap) {
		struct r2cc_snapshot s = { .size = sizeof(s) };

		if (ioctl(fd, R2CC_IOC_SNAPSHOT, &s)) {
			perror("SNAPSHOT");
			return 1;
		}
		printf("snapshot %llu %u\n", (unsigned long long)s.seq,
		       s.count);
	}
	printf("ready\n");
	fflush(stdout);
	while (count < 0 || got < count) {
		r = r2cc_read_one(fd, &ev, timeout);
		if (r <= 0)
			return r == 0 ? 3 : 1;
		got++;
		printf("%llu %s %s %u %u %u %u %u %llu %u %llu %llu %u %llu %llu\n",
		       (unsigned long long)ev.seq,
		       ev.kind < sizeof(kinds) / sizeof(kinds[0]) ?
		       kinds[ev.kind] : "?", ev.dev_name[0] ? ev.dev_name : "-",
		       ev.port, ev.old_state, ev.new_state, ev.phys_state,
		       ev.flags, (unsigned long long)ev.bandwidth_mbps,
		       ev.ifindex, (unsigned long long)ev.lost,
		       (unsigned long long)ev.time_ns, ev.reason,
		       (unsigned long long)ev.old_bandwidth_mbps,
		       (unsigned long long)ev.error_rate);
		fflush(stdout);
	}
	return 0;
}
