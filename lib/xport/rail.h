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

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "xport/ctrl.h"
#include "base/probes.h"
#include "base/stall.h"

struct r2cc_conn;

#define PROBE_WRID	UINT64_MAX
#define RQ_DEPTH	256	/* receives posted per rail (receiver) */
#define FENCE_DRAIN_NS	(200ull * 1000000)	/* give up waiting for flushes */
#define GRAVE_MAX	32	/* replaced QPs kept per connection */
/* A link-down report may lag a failure this long (linkwatch: about 1 s). */
#define FAULT_SETTLE_NS	(2000ull * 1000000)
/*
 * A degraded rail stays drained R2CC_DEGRADE_HOLD_MS (tune) at least,
 * doubled (up to 16 times that) each time it degrades within 6 times that
 * of its return.
 */
#define DEG_HOLD_MAX	16
#define DEG_FLAP	6

enum rail_state {
	RAIL_CONNECTING = R2CC_RAIL_CONNECTING,
	RAIL_UP = R2CC_RAIL_UP,
	RAIL_DOWN = R2CC_RAIL_DOWN,
	RAIL_PROBING = R2CC_RAIL_PROBING,
	RAIL_FENCING,			/* QP in error, draining */
};

struct rail {
	int nic;			/* local NIC index */
	uint8_t state;			/* enum rail_state */
	uint32_t epoch;			/* bumped by every reconnection */
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct wire_qp local, remote;
	int outstanding;		/* sender: WRs posted, not completed */
	int *nic_wrs;			/* ... and its NIC's, all rails (rail_out) */
	bool nic_wait;			/* sender: found its NIC's window full */
	int rq_posted;			/* receiver: receives posted */
	uint64_t last_progress_ns;	/* sender: last completion (or post) */
	uint64_t done_ns;		/* sender: last completion, only */
	struct stall_est stall;		/* sender: gaps between completions */
	uint64_t fence_start_ns;
	uint64_t vtime;			/* bytes posted / weight, scheduling */
	bool peer_fenced;		/* sender: W_FENCED for this epoch in */
	bool flushed;			/* receiver: a receive flushed */
	bool told_down;			/* W_RAIL_DOWN for this epoch sent */
	bool peer_nic_up;		/* the peer's NIC of this rail */
	bool locating;			/* failed; waiting for the peer's report */
	uint64_t fail_ns;		/* when it last failed */
	uint8_t degraded;		/* R2CC_RAIL_DEGRADED_*: drained */
	uint64_t deg_at_ns;		/* when it was drained */
	uint64_t deg_hold_ns;		/* drained this long at least */
	uint64_t back_ns;		/* when it last came back from a drain */
	bool req_sent;			/* sender: W_RAIL_REQ outstanding */
	uint64_t next_try_ns;		/* sender: next reconnection attempt */
	uint64_t backoff_ns;
	uint64_t probe_ns;		/* when the probe went out */
	uint64_t credit;		/* sender: receives the peer posted */
	uint64_t used;			/* sender: requests posted (epoch) */
	uint64_t rq_total, rq_told;	/* receiver: receives posted, told */
	uint64_t rq_extra;		/* ... taken by writes completed twice */
	uint8_t *fenced_map;		/* sender: bitmaps from W_FENCED */
	size_t fenced_len;
	struct r2cc_rail_stats st;
};

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
