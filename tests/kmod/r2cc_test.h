/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the r2cc.ko tests that run inside testbed nodes. */
#ifndef R2CC_TESTS_KMOD_H
#define R2CC_TESTS_KMOD_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/r2cc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tap.h"

static inline int r2cc_open_dev(int flags)
{
	int fd = open("/dev/r2cc", O_RDONLY | O_CLOEXEC | flags);

	if (fd < 0 && (errno == ENOENT || errno == ENODEV))
		tap_skip_all("/dev/r2cc missing: r2cc.ko not loaded");
	if (fd < 0 && errno == EACCES)
		tap_skip_all("no permission to open /dev/r2cc");
	if (fd < 0) {
		perror("open /dev/r2cc");
		exit(KSFT_FAIL);
	}
	return fd;
}

/* Index of an RDMA device as r2cc reports it, or -1. */
static inline int r2cc_dev_index(const char *name)
{
	char path[256];
	FILE *f;
	int idx = -1;

	snprintf(path, sizeof(path), "/sys/kernel/r2cc/devices/%s/index",
		 name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &idx) != 1)
		idx = -1;
	fclose(f);
	return idx;
}

/* The first line of a sysfs file into @buf, without its newline; "" if none. */
static inline char *r2cc_sysfs_str(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static inline int r2cc_test_port_active(const char *dev, unsigned int port)
{
	char path[512], st[32];

	snprintf(path, sizeof(path),
		 "/sys/kernel/r2cc/devices/%s/ports/%u/state", dev, port);
	return !strcmp(r2cc_sysfs_str(path, st, sizeof(st)), "ACTIVE");
}

/*
 * @dev's ports as r2cc.ko lists them: returns the highest port number
 * (0: none) and, when @active is not NULL, the lowest ACTIVE one in
 * *@active (0: none).
 */
static inline unsigned int r2cc_test_ports(const char *dev,
					   unsigned int *active)
{
	char path[512];
	unsigned int last = 0, p;
	struct dirent *e;
	DIR *d;

	if (active)
		*active = 0;
	snprintf(path, sizeof(path), "/sys/kernel/r2cc/devices/%s/ports", dev);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		if (sscanf(e->d_name, "%u", &p) != 1 || !p)
			continue;
		last = p > last ? p : last;
		if (active && (!*active || p < *active) &&
		    r2cc_test_port_active(dev, p))
			*active = p;
	}
	if (d)
		closedir(d);
	return last;
}

/*
 * The device and port a test acts on, as r2cc.ko knows them: the one
 * $R2CC_TEST_DEV names ("dev" or "dev:port", the lowest ACTIVE port when
 * none is given), else the first device by name with an ACTIVE port, and
 * that port.  The name goes to @name (@len bytes), the port to *@port;
 * returns the device's index.  The test is skipped only when r2cc.ko is
 * not loaded or the node has no RDMA device at all; a device that is
 * named but unknown, or no ACTIVE port anywhere, fails it: on a node with
 * NICs, a test that cannot find one is not a pass.
 */
static inline int r2cc_test_dev(char *name, size_t len, unsigned int *port)
{
	const char *want = getenv("R2CC_TEST_DEV");
	char best[256] = "", tried[256] = "";
	unsigned int p = 0;
	struct dirent *e;
	int idx, ndev = 0;
	DIR *d;

	d = opendir("/sys/kernel/r2cc/devices");
	if (!d)
		tap_skip_all("r2cc.ko not loaded (no /sys/kernel/r2cc)");
	while ((e = readdir(d))) {
		unsigned int q;

		if (e->d_name[0] == '.')
			continue;
		ndev++;
		snprintf(tried, sizeof(tried), "%s", e->d_name);
		if (want && *want)
			continue;
		r2cc_test_ports(e->d_name, &q);
		if (q && (!best[0] || strcmp(e->d_name, best) < 0)) {
			snprintf(best, sizeof(best), "%s", e->d_name);
			p = q;
		}
	}
	closedir(d);
	if (!ndev)
		tap_skip_all("no RDMA device on this node");
	if (want && *want) {
		size_t n = strcspn(want, ":");

		snprintf(best, sizeof(best), "%.*s", (int)n, want);
		if (want[n])
			p = (unsigned int)strtoul(want + n + 1, NULL, 10);
		else
			r2cc_test_ports(best, &p);
		if (r2cc_dev_index(best) < 0 || !p ||
		    !r2cc_test_port_active(best, p)) {
			printf("Bail out! R2CC_TEST_DEV=%s: not a device with an ACTIVE port r2cc.ko knows\n",
			       want);
			exit(KSFT_FAIL);
		}
	}
	if (!best[0]) {
		printf("Bail out! %d RDMA devices (%s, ...), none with an ACTIVE port\n",
		       ndev, tried);
		exit(KSFT_FAIL);
	}
	idx = r2cc_dev_index(best);
	if (idx < 0) {
		printf("Bail out! %s: no index in /sys/kernel/r2cc\n", best);
		exit(KSFT_FAIL);
	}
	snprintf(name, len, "%s", best);
	*port = p;
	printf("# device %s port %u (index %d)\n", best, p, idx);
	return idx;
}

static inline long long r2cc_sysfs_num(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static inline int r2cc_inject(int fd, unsigned int dev, unsigned int port,
			      unsigned int kind)
{
	struct r2cc_inject inj = {
		.size = sizeof(inj), .dev_index = dev, .port = port,
		.kind = (__u16)kind,
	};

	return ioctl(fd, R2CC_IOC_INJECT, &inj) ? -errno : 0;
}

/* Read one record, waiting up to @ms; returns 1, 0 on timeout, -errno. */
static inline int r2cc_read_one(int fd, struct r2cc_event *ev, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int r = poll(&p, 1, ms);

	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	n = read(fd, ev, sizeof(*ev));
	if (n < 0)
		return -errno;
	return n == sizeof(*ev) ? 1 : -EIO;
}

/* Discard whatever is queued now. */
static inline void r2cc_drain(int fd)
{
	struct r2cc_event ev;

	while (r2cc_read_one(fd, &ev, 0) == 1)
		;
}

#endif
