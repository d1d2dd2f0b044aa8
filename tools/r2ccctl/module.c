// SPDX-License-Identifier: GPL-2.0-only
/* r2cc.ko's version and parameters, from /sys/module/r2cc. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "r2ccctl.h"

#define MODDIR "/sys/module/r2cc"

/* The first line of @path into @buf ("" if unreadable). */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ctl_module_read(struct ctl_module *m)
{
	char path[512], *names[CTL_MAX_PARAMS];
	struct dirent *d;
	DIR *dir;
	int i, n = 0;

	memset(m, 0, sizeof(*m));
	read_line(MODDIR "/initstate", path, sizeof(path));
	if (strcmp(path, "live"))
		return -ENOENT;
	read_line(MODDIR "/version", m->version, sizeof(m->version));
	read_line(MODDIR "/srcversion", m->srcversion, sizeof(m->srcversion));
	dir = opendir(MODDIR "/parameters");
	if (!dir)
		return 0;
	while ((d = readdir(dir)) && n < CTL_MAX_PARAMS) {
		if (d->d_name[0] == '.' || strlen(d->d_name) >= 32)
			continue;
		names[n] = strdup(d->d_name);
		if (names[n])
			n++;
	}
	closedir(dir);
	qsort(names, (size_t)n, sizeof(names[0]), by_name);
	for (i = 0; i < n; i++) {
		snprintf(m->param[i], sizeof(m->param[i]), "%s", names[i]);
		snprintf(path, sizeof(path), MODDIR "/parameters/%s", names[i]);
		read_line(path, m->value[i], sizeof(m->value[i]));
		free(names[i]);
	}
	m->nparams = n;
	return 0;
}
