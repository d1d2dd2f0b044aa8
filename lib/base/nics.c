// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * R2CC_NICS: which NICs a context uses.  "mlx5_0,mlx5_1:2" keeps those,
 * in that order (a device alone means all its ports); "^mlx5_3" keeps all
 * but those, in the order the system lists them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

int nics_parse(const char *spec, struct r2cc_nic_sel *sel)
{
	const char *p = spec;

	memset(sel, 0, sizeof(*sel));
	if (!spec)
		return 0;
	if (*p == '^') {
		sel->exclude = true;
		p++;
	}
	if (!*p)
		return -EINVAL;
	while (*p) {
		size_t len = strcspn(p, ",:");
		uint32_t port = 0;

		if (len == 0 || len >= sizeof(sel->item[0].dev) ||
		    sel->n == R2CC_MAX_NICS)
			return -EINVAL;
		memcpy(sel->item[sel->n].dev, p, len);
		sel->item[sel->n].dev[len] = '\0';
		p += len;
		if (*p == ':') {
			char *end;
			unsigned long v;

			p++;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			errno = 0;
			v = strtoul(p, &end, 10);
			if (errno || v == 0 || v > 255)
				return -EINVAL;
			port = (uint32_t)v;
			p = end;
		}
		sel->item[sel->n++].port = port;
		if (*p == ',') {
			p++;
			if (!*p)
				return -EINVAL;
		} else if (*p) {
			return -EINVAL;
		}
	}
	return 0;
}

/* The first item of the list naming @dev:@port, or -1. */
static int listed_at(const struct r2cc_nic_sel *sel, const char *dev,
		     uint32_t port)
{
	int i;

	for (i = 0; i < sel->n; i++)
		if (!strcmp(sel->item[i].dev, dev) &&
		    (!sel->item[i].port || sel->item[i].port == port))
			return i;
	return -1;
}

bool nics_match(const struct r2cc_nic_sel *sel, const char *dev,
		uint32_t port)
{
	bool listed;

	if (!sel->n)
		return true;
	listed = listed_at(sel, dev, port) >= 0;
	return sel->exclude ? !listed : listed;
}

int nics_rank(const struct r2cc_nic_sel *sel, const char *dev,
	      uint32_t port)
{
	int at = sel->exclude ? -1 : listed_at(sel, dev, port);

	return at < 0 ? 0 : at;
}
