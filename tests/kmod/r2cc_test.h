/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the r2cc.ko tests that run inside testbed nodes. */
#ifndef R2CC_TESTS_KMOD_H
#define R2CC_TESTS_KMOD_H

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
