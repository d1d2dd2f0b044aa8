/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Layer 2, rails (rail.c): one RC QP from a local NIC to the peer's NIC of
 * the same index, and its state machine: create, connect, fail (QP to
 * error), drain, settle, rebuild (failback) and probe.  A rail speaks to
 * its peer over the control channel (layer 1) and tells the layers above
 * what happened only by return values and by its state: it never calls
 * up.  Functions returning int give 0 or -errno: a control message that
 * could not be queued, or a peer's message that breaks the protocol; the
 * caller fails the connection.
 */
#ifndef R2CC_LIB_RAIL_H
#define R2CC_LIB_RAIL_H

#include <stdbool.h>
#include <stdint.h>

#include "xport/probes.h"
#include "xport/types.h"

/*
 * Every change of a rail's WRs in flight goes through here, so that its
 * NIC's count (the window all connections on the NIC share) stays the sum
 * of its rails'.
 */
static inline void rail_out(struct rail *r, int n)
{
	if (r->nic_wrs)			/* NULL: a rail never made */
		*r->nic_wrs += n - r->outstanding;
	r->outstanding = n;
}

int rail_create(struct r2cc_conn *c, struct rail *r);
void rail_destroy(struct rail *r);
void rails_reap(struct r2cc_conn *c, bool all);
int rail_connect(struct r2cc_conn *c, struct rail *r);
void rail_fill_rq(struct r2cc_conn *c, struct rail *r);
/* The cheap first half of rail_fail(), which must follow at once. */
void rail_stop(struct r2cc_conn *c, struct rail *r);
int rail_fail(struct r2cc_conn *c, struct rail *r, const char *why);
/*
 * A port of a failed rail is known down (@where: R2CC_RAIL_REASON_LOCAL_PORT
 * or _PEER_PORT): the fault is located there if it was not yet, or if it
 * was put on the path a moment ago (FAULT_SETTLE_NS).
 */
void rail_blame(struct r2cc_conn *c, struct rail *r, uint8_t where);
int rail_start_down(struct r2cc_conn *c, struct rail *r, int err);
/* A fencing rail is drained (its QP destroyed if it never drained). */
bool rail_fence_drained(struct r2cc_conn *c, struct rail *r);
/* Its chunks settled: the rail is down until failback. */
void rail_fence_done(struct r2cc_conn *c, struct rail *r);
int rail_failback(struct r2cc_conn *c, struct rail *r);
int rail_probe_done(struct r2cc_conn *c, struct rail *r, bool ok);
/* Receiver: re-post receives and tell the sender when enough were. */
int rail_refill(struct r2cc_conn *c, struct rail *r);
/* Sender: the peer has a receive for one more request on @r. */
static inline bool rail_has_credit(const struct rail *r)
{
	return r->used < r->credit;
}
/* A control message about a rail; *@why says what was wrong with it. */
int rail_on_msg(struct r2cc_conn *c, uint16_t type, const void *p,
		size_t len, const char **why);
int rails_up(const struct r2cc_conn *c);
/*
 * Whose port is degraded (@who: R2CC_RAIL_DEGRADED_LOCAL or _PEER) has
 * changed: a degraded rail is drained (no new chunks while a healthy one
 * is up); one that recovers joins the schedule level of its kind, once
 * it has been drained for its hold (R2CC_RAIL_DEGRADED_HOLD until then).
 */
void rail_set_degraded(struct r2cc_conn *c, struct rail *r, uint8_t who,
		       bool on);
/* A recovered rail held drained is back once its hold is over. */
void rail_degraded_tick(struct r2cc_conn *c, struct rail *r, uint64_t now);

#endif
