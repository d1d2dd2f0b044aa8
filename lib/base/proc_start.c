// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/proc_start.h"

uint64_t proc_start_of(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, i;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	else
		strcpy(path, "/proc/self/stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/*
	 * The command name (field 2) may hold spaces and parentheses: count
	 * fields from its last closing parenthesis.
	 */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &v) != 1)
		return 0;
	return v;
}
