// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject DEVICE PORT down|up|fatal: drive R2CC_IOC_INJECT from scripts.
 * Exit 0, or 1 with the errno's message.
 */
#include "r2cc_test.h"

int main(int argc, char **argv)
{
	int fd, dev, kind, ret;

	if (argc != 4) {
		fprintf(stderr, "usage: inject DEVICE PORT down|up|fatal\n");
		return 2;
	}
	dev = r2cc_dev_index(argv[1]);
	if (dev < 0) {
		fprintf(stderr, "inject: no device %s\n", argv[1]);
		return 1;
	}
	if (!strcmp(argv[3], "down"))
		kind = R2CC_EV_PORT_DOWN;
	else if (!strcmp(argv[3], "up"))
		kind = R2CC_EV_PORT_UP;
	else if (!strcmp(argv[3], "fatal"))
		kind = R2CC_EV_DEVICE_FATAL;
	else
		return 2;
	fd = open("/dev/r2cc", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("/dev/r2cc");
		return 1;
	}
	ret = r2cc_inject(fd, dev, (unsigned int)atoi(argv[2]), kind);
	if (ret) {
		fprintf(stderr, "inject: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
