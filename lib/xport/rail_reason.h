/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The names r2ccctl prints for r2cc_rail_stats.reason (enum
 * r2cc_rail_reason): where a rail's last failure was located.  One table
 * for the tool and the tests that print the same field.
 */
#ifndef R2CC_RAIL_REASON_H
#define R2CC_RAIL_REASON_H

#include <r2cc/r2cc.h>

static inline const char *rail_reason_name(unsigned int r)
{
	static const char *const names[] = {
		[R2CC_RAIL_REASON_NONE] = "-",
		[R2CC_RAIL_REASON_UNKNOWN] = "unknown",
		[R2CC_RAIL_REASON_LOCAL_PORT] = "local-port",
		[R2CC_RAIL_REASON_PEER_PORT] = "peer-port",
		[R2CC_RAIL_REASON_PATH] = "path",
	};

	return r < sizeof(names) / sizeof(names[0]) ? names[r] : "invalid";
}

#endif
