// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* Transport options: an option's value, else its R2CC_* variable, else the default. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* @val, else $@env, else @def; what $@env says must lie in [@lo, @hi]. */
int tune_u32(struct r2cc_ctx *ctx, uint32_t val, const char *env,
	     uint32_t def, uint32_t lo, uint32_t hi, uint32_t *out)
{
	const char *s = getenv(env);
	unsigned long long v;
	char *end;

	if (val) {
		*out = val;
		return 0;
	}
	if (!s || !*s) {
		*out = def;
		return 0;
	}
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < lo || v > hi || *s == '-') {
		log_msg(ctx, R2CC_LOG_ERROR, "%s=%s: want %u..%u", env, s,
			lo, hi);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

int tune_resolve(struct r2cc_ctx *ctx, const struct r2cc_ctx_opts *o)
{
	struct r2cc_tune *t = &ctx->tune;
	const char *ifn;
	uint32_t fb, gid;
	uint64_t win;
	int ret;

	ret = tune_u32(ctx, o->chunk_size, "R2CC_CHUNK_SIZE", 65536,
		       R2CC_CHUNK_SIZE_MIN, R2CC_CHUNK_SIZE_MAX,
		       &t->chunk_size);
	ret = ret ?: tune_u32(ctx, o->stall_ms, "R2CC_STALL_MS", 100,
			      R2CC_STALL_MS_MIN, R2CC_STALL_MS_MAX,
			      &t->stall_ms);
	ret = ret ?: tune_u32(ctx, o->rail_depth, "R2CC_RAIL_DEPTH", 8,
			      R2CC_RAIL_DEPTH_MIN, R2CC_RAIL_DEPTH_MAX,
			      &t->rail_depth);
	/* One rail's depth by default: a lone connection as it always was. */
	win = (uint64_t)t->rail_depth * t->chunk_size;
	ret = ret ?: tune_u32(ctx, o->nic_window, "R2CC_NIC_WINDOW",
			      win > UINT32_MAX ? UINT32_MAX : (uint32_t)win,
			      R2CC_CHUNK_SIZE_MIN, UINT32_MAX,
			      &t->nic_window);
	ret = ret ?: tune_u32(ctx, o->peer_timeout_ms, "R2CC_PEER_TIMEOUT_MS",
			      5000, R2CC_PEER_TIMEOUT_MS_MIN,
			      R2CC_PEER_TIMEOUT_MS_MAX, &t->peer_timeout_ms);
	/*
	 * Unset (0): each NIC's own default, chosen at discovery (fabric.c:
	 * 14 on a hardware NIC, 17 on a software device).  Environment only:
	 * few users should touch it.
	 */
	ret = ret ?: tune_u32(ctx, 0, "R2CC_IB_TIMEOUT", 0, 1, 31,
			      &t->ib_timeout);
	/* Addressing, as NCCL's NCCL_IB_SL, NCCL_IB_TC, NCCL_IB_GID_INDEX. */
	ret = ret ?: tune_u32(ctx, 0, "R2CC_IB_SL", 0, 0, 15, &t->ib_sl);
	ret = ret ?: tune_u32(ctx, 0, "R2CC_IB_TC", 0, 0, 255, &t->ib_tc);
	ret = ret ?: tune_u32(ctx, 0, "R2CC_IB_GID_INDEX", UINT32_MAX, 0, 255,
			      &gid);
	/*
	 * Replaced QPs outlive their packets (rxe 6.12, rail.c); 0 destroys
	 * them at once, for the experiment in scripts/rxe-panic.sh.
	 */
	ret = ret ?: tune_u32(ctx, 0, "R2CC_QP_GRAVE_MS", 3000, 0, 60000,
			      &t->qp_grave_ms);
	/* How long a degraded rail stays drained at least (rail.h). */
	ret = ret ?: tune_u32(ctx, 0, "R2CC_DEGRADE_HOLD_MS", 10000, 0, 600000,
			      &t->degrade_hold_ms);
	/* The stall detector's bound from each rail's gaps (stall.h). */
	ret = ret ?: tune_u32(ctx, 0, "R2CC_STALL_ADAPT", 1, 0, 1,
			      &t->stall_adapt);
	/* Ask the receiver before failing a stalled rail (wire.h). */
	ret = ret ?: tune_u32(ctx, 0, "R2CC_STALL_ASK", 1, 0, 1,
			      &t->stall_ask);
	/*
	 * Without r2cc.ko, the library judges each port from its error
	 * counters (platform/health.c), as the module would: every
	 * R2CC_HEALTH_MS (0: off), degraded at a mean of R2CC_DEGRADE_RATE
	 * sequence errors a second (0: off), the module's defaults.
	 */
	ret = ret ?: tune_u32(ctx, 0, "R2CC_HEALTH_MS", 1000, 0, 60000,
			      &t->health_ms);
	ret = ret ?: tune_u32(ctx, 0, "R2CC_DEGRADE_RATE", 2, 0, 1000000,
			      &t->degrade_rate);
	/* The progress thread's period (progress.c); 0: no thread. */
	ret = ret ?: tune_u32(ctx, 0, "R2CC_PROGRESS_MS", 10, 0, 10000,
			      &t->progress_ms);
	if (ret)
		return ret;
	/*
	 * How a failed rail's chunks go again (xport/stage.c): staged unless
	 * asked for the fence report's round trip.
	 */
	ifn = getenv("R2CC_REPAIR");
	if (ifn && *ifn && strcmp(ifn, "fenced") && strcmp(ifn, "staged")) {
		log_msg(ctx, R2CC_LOG_ERROR,
			"R2CC_REPAIR=%s: want fenced or staged", ifn);
		return -EINVAL;
	}
	t->staged = !ifn || strcmp(ifn, "fenced");
	/*
	 * How a degraded rail leaves the schedule (xport/rail.c): at once
	 * (full), or its weight lowered in steps (graded).
	 */
	ifn = getenv("R2CC_DRAIN");
	if (ifn && *ifn && strcmp(ifn, "full") && strcmp(ifn, "graded")) {
		log_msg(ctx, R2CC_LOG_ERROR,
			"R2CC_DRAIN=%s: want full or graded", ifn);
		return -EINVAL;
	}
	t->drain_graded = ifn && !strcmp(ifn, "graded");
	t->ib_gid_index = gid == UINT32_MAX ? -1 : (int32_t)gid;
	if (o->fallback) {
		t->tcp_fallback = o->fallback == R2CC_FALLBACK_TCP;
	} else {
		ret = tune_u32(ctx, 0, "R2CC_TCP_FALLBACK", 1, 0, 1, &fb);
		if (ret)
			return ret;
		t->tcp_fallback = fb;
	}
	ifn = o->ctrl_ifname ? o->ctrl_ifname : getenv("R2CC_SOCKET_IFNAME");
	if (ifn && strlen(ifn) >= sizeof(t->ctrl_ifname)) {
		log_msg(ctx, R2CC_LOG_ERROR, "interface name '%s' too long",
			ifn);
		return -EINVAL;
	}
	if (ifn)
		strcpy(t->ctrl_ifname, ifn);
	return 0;
}
