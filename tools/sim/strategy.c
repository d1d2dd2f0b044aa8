// SPDX-License-Identifier: GPL-2.0-only
/*
 * The failure-handling strategies compared by the simulator.  Each one is
 * a sharing policy (how a node uses its NICs), the allreduce schedules it
 * may pick from, and a detection model.  Documentation/sim.rst gives the
 * source of every constant.
 */
#include <math.h>
#include <string.h>

#include "sim.h"

#define B(a) (1u << (a))

const struct strategy strategies[ST_NR] = {
	[ST_NCCL] = {
		.name = "nccl", .share = SHARE_EQUAL, .algos = B(AR_RING),
		.abort_on_down = true,
	},
	[ST_NCCL_FO] = {
		.name = "nccl-failover", .share = SHARE_PARTNER,
		.algos = B(AR_RING), .partner_only = true,
	},
	[ST_BALANCE] = {
		.name = "r2ccl-balance", .share = SHARE_BALANCE,
		.algos = B(AR_RING),
	},
	[ST_R2CC_AR] = {
		.name = "r2cc-allreduce", .share = SHARE_BALANCE,
		.algos = B(AR_PAPER),
	},
	[ST_R2CC] = {
		.name = "r2cc", .share = SHARE_BALANCE,
		.algos = B(AR_RING) | B(AR_PAPER) | B(AR_WEIGHTED),
	},
	[ST_R2CC_OV] = {
		.name = "r2cc-overlap", .share = SHARE_BALANCE,
		.algos = B(AR_RING) | B(AR_PAPER) | B(AR_OVERLAP) |
			 B(AR_WEIGHTED),
	},
	[ST_R2CC_LIB] = {
		.name = "r2cc-lib", .share = SHARE_BALANCE,
		.algos = B(AR_RING) | B(AR_WEIGHTED), .lib_auto = true,
	},
	[ST_R2CC_OPT] = {
		.name = "r2cc-optimal", .share = SHARE_BALANCE,
		.algos = B(AR_DIRECT),
	},
	[ST_R2CC_LIB_MESH] = {
		.name = "r2cc-lib-mesh", .share = SHARE_BALANCE,
		.algos = B(AR_RING) | B(AR_WEIGHTED) | B(AR_DIRECT),
		.lib_auto = true, .lib_mesh = true,
	},
	[ST_R2CC_LIB_AR] = {
		.name = "r2cc-lib-ar", .share = SHARE_BALANCE,
		.algos = B(AR_LIB_PAPER),
	},
};

/*
 * InfiniBand local ACK timeout: 4.096 us * 2^timeout per try, times the
 * retry count (NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT; defaults 20 and 7).
 */
double ib_timeout_s(int timeout, int retry)
{
	return 4.096e-6 * ldexp(1.0, timeout) * retry;
}

/* Seconds from the fault to the moment the strategy acts on it. */
double strat_detect(enum strat_id s, const struct detect_params *d,
		    bool silent)
{
	switch (s) {
	case ST_NCCL:
	case ST_NCCL_FO:
		return ib_timeout_s(d->ib_timeout, d->ib_retry);
	case ST_BALANCE:
	case ST_R2CC_AR:
		return d->r2ccl_detect;
	case ST_R2CC:
	case ST_R2CC_OV:
	case ST_R2CC_LIB:
	case ST_R2CC_OPT:
	case ST_R2CC_LIB_MESH:
	case ST_R2CC_LIB_AR:
		return silent ? d->stall_detect : d->port_detect;
	case ST_NR:
		break;
	}
	return 0.0;
}

/* "all" or a comma list of names; returns -1 on an unknown name. */
int strat_parse_list(const char *s, unsigned *mask)
{
	const char *p = s;

	*mask = 0;
	if (!strcmp(s, "all")) {
		*mask = (1u << ST_NR) - 1;
		return 0;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		int i;

		for (i = 0; i < ST_NR; i++)
			if (strlen(strategies[i].name) == len &&
			    !strncmp(p, strategies[i].name, len))
				break;
		if (i == ST_NR)
			return -1;
		*mask |= 1u << i;
		p += len;
		if (*p == ',' && *++p == '\0')
			return -1;
	}
	return *mask ? 0 : -1;
}
