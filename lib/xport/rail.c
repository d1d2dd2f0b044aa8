// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Layer 2, rails (rail.h): one RC QP from a local NIC to the peer's NIC
 * of the same index.  Creation and connection, failure and fencing (see
 * xport.h for the protocol), and failback: a rail that failed is rebuilt
 * with fresh QPs through the control channel, probed, and only then
 * scheduled again.  News goes up as return values and the rail's state.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "platform/platform.h"
#include "xport/ctrl.h"
#include "xport/rail.h"
#include "xport/reap.h"

#define BACKOFF_MIN_NS	(200ull * 1000000)
#define BACKOFF_MAX_NS	(2000ull * 1000000)
/* failed probes in a row that confirm a rail's failure (st.confirmed) */
#define CONFIRM_PROBES	2

int rails_up(const struct r2cc_conn *c)
{
	int i, n = 0;

	for (i = 0; i < c->nrails; i++)
		n += c->rails[i].state == RAIL_UP;
	return n;
}

static struct ibv_context *rail_verbs(struct r2cc_conn *c, struct rail *r)
{
	return c->ctx->devs[c->ctx->nics[r->nic].dev];
}

void rail_destroy(struct rail *r)
{
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	r->qp = NULL;
	r->cq = NULL;
	rail_out(r, 0);
	r->rq_posted = 0;
}

/*
 * Set a failed rail's QP and CQ aside instead of destroying them now.
 * rxe (6.12) frees a QP whose packets are still queued after 200 ms with a
 * warning, and those packets then write into freed memory: a guest
 * panicked that way once in the testbed after a carrier cut.  A few
 * seconds later nothing should refer to them any more; they are then
 * destroyed in another thread (reap.c), as rxe (6.1) may still hold the
 * destroy for tens of seconds.
 */
static void rail_retire(struct r2cc_conn *c, struct rail *r)
{
	if (r->qp && c->ngrave == GRAVE_MAX) {
		/* Full: the oldest goes first, not every one set aside. */
		reap_qp(c->ctx, c->grave[0].qp, c->grave[0].cq);
		memmove(&c->grave[0], &c->grave[1],
			--c->ngrave * sizeof(c->grave[0]));
	}
	if (r->qp) {
		c->grave[c->ngrave].qp = r->qp;
		c->grave[c->ngrave].cq = r->cq;
		c->grave[c->ngrave++].at = clock_now_ns();
		r->qp = NULL;
		r->cq = NULL;
	}
	rail_destroy(r);
}

/* Destroy the QPs set aside long enough ago, or all of them. */
void rails_reap(struct r2cc_conn *c, bool all)
{
	uint64_t now = clock_now_ns();
	int i, n = 0;

	for (i = 0; i < c->ngrave; i++) {
		if (!all && now - c->grave[i].at <
			    c->ctx->tune.qp_grave_ms * 1000000ull) {
			c->grave[n++] = c->grave[i];
			continue;
		}
		reap_qp(c->ctx, c->grave[i].qp, c->grave[i].cq);
	}
	c->ngrave = n;
}

/* A fresh QP in INIT; its address goes in r->local. */
int rail_create(struct r2cc_conn *c, struct rail *r)
{
	const struct r2cc_nic *nic = &c->ctx->nics[r->nic];
	bool staged = c->ctx->tune.staged;
	/* the chunks, a probe, and staged chunks' slots (stage.h) */
	int depth = (int)c->ctx->tune.rail_depth + 2 +
		    (staged ? STAGE_WRS * STAGE_PER_RAIL : 0);
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = (uint32_t)depth,
			.max_recv_wr = RQ_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			/* a staged chunk's header goes inline */
			.max_inline_data = staged ?
				sizeof(struct wire_stage_hdr) : 0,
		},
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = (uint8_t)nic->info.port,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_port_attr pa;
	uint32_t psn = 0;

	r->st.size = sizeof(r->st);
	r->sq_cap = depth;
	r->cq = ibv_create_cq(rail_verbs(c, r), depth + RQ_DEPTH, NULL, NULL, 0);
	if (!r->cq)
		return errno ? -errno : -ENOMEM;
	ia.send_cq = ia.recv_cq = r->cq;
	r->qp = ibv_create_qp(c->ctx->pds[nic->dev], &ia);
	if (!r->qp)
		return errno ? -errno : -ENOMEM;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return errno ? -errno : -EIO;
	if (getrandom(&psn, sizeof(psn), GRND_NONBLOCK) != sizeof(psn))
		psn = (uint32_t)clock_now_ns();
	memset(&r->local, 0, sizeof(r->local));
	r->local.qpn = r->qp->qp_num;
	r->local.psn = psn & 0xffffff;
	memcpy(r->local.gid, nic->info.gid, 16);
	if (ibv_query_port(rail_verbs(c, r), (uint8_t)nic->info.port, &pa)) {
		r->local.mtu = IBV_MTU_1024;
	} else {
		r->local.mtu = (uint8_t)pa.active_mtu;
		r->local.lid = pa.lid;
	}
	r->flushed = false;
	r->local.active = r2cc_nic_is_active(c->ctx, r->nic) == 1;
	/* Both ends know the first RQ_DEPTH receives without a message. */
	r->credit = RQ_DEPTH;
	r->used = 0;
	r->rq_total = r->rq_told = r->rq_extra = 0;
	if (!c->sender) {
		rail_fill_rq(c, r);
		r->rq_told = r->rq_total;
	}
	return 0;
}

/* INIT -> RTR -> RTS towards r->remote. */
int rail_connect(struct r2cc_conn *c, struct rail *r)
{
	const struct r2cc_nic *nic = &c->ctx->nics[r->nic];
	const struct r2cc_tune *t = &c->ctx->tune;
	bool ib = nic->info.link_layer == R2CC_LINK_INFINIBAND;
	int gid_index = t->ib_gid_index >= 0 ? t->ib_gid_index :
					       nic->info.gid_index;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = r->local.mtu < r->remote.mtu ? r->local.mtu :
							   r->remote.mtu,
		.dest_qp_num = r->remote.qpn,
		.rq_psn = r->remote.psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.dlid = ib ? r->remote.lid : 0,
			.sl = (uint8_t)t->ib_sl,
			.port_num = (uint8_t)nic->info.port,
		},
	};

	if (a.path_mtu < IBV_MTU_256 || a.path_mtu > IBV_MTU_4096)
		return -EPROTO;
	/*
	 * RoCE is always routed by GID.  InfiniBand is addressed by LID and
	 * needs a global route header only to reach another subnet (the
	 * GIDs' 64-bit prefixes differ).
	 */
	if (!ib || memcmp(r->remote.gid, r->local.gid, 8)) {
		if (gid_index < 0 || gid_index > 255)
			return -EADDRNOTAVAIL;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.grh.traffic_class = (uint8_t)t->ib_tc;
		memcpy(a.ah_attr.grh.dgid.raw, r->remote.gid, 16);
	} else if (!a.ah_attr.dlid) {
		return -EADDRNOTAVAIL;
	}
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return errno ? -errno : -EIO;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	/* Retries heal lost packets; detection relies on other signals. */
	a.timeout = c->ctx->nics[r->nic].info.ack_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = r->local.psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		return errno ? -errno : -EIO;
	rail_out(r, 0);
	r->last_progress_ns = clock_now_ns();
	memset(&r->stall, 0, sizeof(r->stall));	/* a new QP, maybe a new path */
	r->spared_ns = r->ask_ns = r->rx_ns = 0;
	return 0;
}

void rail_fill_rq(struct r2cc_conn *c, struct rail *r)
{
	struct ibv_recv_wr wr = { .wr_id = 0 }, *bad;

	(void)c;
	while (r->qp && r->rq_posted < RQ_DEPTH) {
		if (ibv_post_recv(r->qp, &wr, &bad))
			break;
		r->rq_posted++;
		r->rq_total++;
	}
}

static int send_ctl(struct r2cc_conn *c, uint16_t type, const void *p,
		    size_t len);

/*
 * Receiver, as it makes progress: the receive queue of an up rail is kept
 * full, and the sender told each time another quarter was re-posted.
 */
int rail_refill(struct r2cc_conn *c, struct rail *r)
{
	struct wire_credit w = { .rail = (uint32_t)(r - c->rails),
				 .epoch = r->epoch };

	if (r->state != RAIL_UP || r->rq_posted >= RQ_DEPTH / 2)
		return 0;
	rail_fill_rq(c, r);
	if (r->rq_total - r->rq_told < RQ_DEPTH / 4)
		return 0;
	r->rq_told = r->rq_total;
	/* The sender counts its writes: not those the NIC completed twice. */
	w.posted = r->rq_total - r->rq_extra;
	return send_ctl(c, W_CREDIT, &w, sizeof(w));
}

/* Queue a rail message for the peer: 0, or -errno. */
static int send_ctl(struct r2cc_conn *c, uint16_t type, const void *p,
		    size_t len)
{
	int ret = ctrl_send(&c->ctl, type, p, len, NULL, 0);

	return ret < 0 ? ret : 0;
}

static int send_rail(struct r2cc_conn *c, uint16_t type, struct rail *r)
{
	struct wire_rail w = { .rail = (uint32_t)(r - c->rails),
			       .epoch = r->epoch };

	return send_ctl(c, type, &w, sizeof(w));
}

/*
 * This end's port of @r is ACTIVE: as the library last heard (r2cc.ko's
 * state page, or verbs events) and as the device says now, since events
 * may not have been read yet when a completion error comes first.
 */
static bool port_active(struct r2cc_conn *c, struct rail *r)
{
	struct ibv_port_attr pa;

	if (r2cc_nic_is_active(c->ctx, r->nic) != 1)
		return false;
	if (ibv_query_port(rail_verbs(c, r),
			   (uint8_t)c->ctx->nics[r->nic].info.port, &pa))
		return true;	/* no answer is no evidence */
	return pa.state == IBV_PORT_ACTIVE;
}

static const char *const reason_text[] = {
	[R2CC_RAIL_REASON_LOCAL_PORT] = "this end's port",
	[R2CC_RAIL_REASON_PEER_PORT] = "the peer's port",
	[R2CC_RAIL_REASON_PATH] =
		"the path between the ports (both up: cable, switch, or a NIC failing silently)",
};

static void locate(struct r2cc_conn *c, struct rail *r, uint8_t where,
		   bool revised)
{
	r->locating = false;
	r->st.reason = where;
	R2CC_PROBE(fault, c, (int)(r - c->rails), (int)where);
	log_msg(c->ctx, R2CC_LOG_WARN, "rail %d (%s): fault %slocated at %s",
		(int)(r - c->rails), c->ctx->nics[r->nic].info.dev_name,
		revised ? "re" : "", reason_text[where]);
}

void rail_blame(struct r2cc_conn *c, struct rail *r, uint8_t where)
{
	if (r->state == RAIL_UP || r->state == RAIL_CONNECTING ||
	    !r->st.failures || r->st.reason == where)
		return;
	if (r->locating)
		locate(c, r, where, false);
	else if (r->st.reason == R2CC_RAIL_REASON_PATH &&
		 clock_now_ns() - r->fail_ns < FAULT_SETTLE_NS)
		locate(c, r, where, true);
}

/* The peer checked its port of failed @r: up, so both are, or down. */
static void on_report(struct r2cc_conn *c, struct rail *r, bool up)
{
	if (!up)
		rail_blame(c, r, R2CC_RAIL_REASON_PEER_PORT);
	else if (!r->locating)	/* cleared when the rail comes back */
		return;
	else if (!port_active(c, r))	/* ours went down meanwhile */
		locate(c, r, R2CC_RAIL_REASON_LOCAL_PORT, false);
	else
		locate(c, r, R2CC_RAIL_REASON_PATH, false);
}

/*
 * Where the fault of a rail failing now lies, as far as this end knows;
 * the peer is told how its port is, whatever it was told already.
 */
static int start_locating(struct r2cc_conn *c, struct rail *r)
{
	bool up = port_active(c, r);
	struct wire_nic w = {
		.rail = (uint32_t)(r - c->rails),
		.up = WIRE_NIC_REPORT | (up ? WIRE_NIC_UP : 0) |
		      (up && c->ctx->nics[r->nic].degraded ?
		       WIRE_NIC_DEGRADED : 0),
	};

	r->locating = true;
	if (!up)
		locate(c, r, R2CC_RAIL_REASON_LOCAL_PORT, false);
	else if (!r->peer_nic_up)
		locate(c, r, R2CC_RAIL_REASON_PEER_PORT, false);
	return send_ctl(c, W_NIC, &w, sizeof(w));
}

/*
 * The first half of rail_fail(), cheap: @r takes no more work (it is
 * fencing) and its failure is counted and the repair opened.  The
 * scheduler can act on it (staged repair) before rail_fail() does the
 * rest, which must follow at once.
 */
void rail_stop(struct r2cc_conn *c, struct rail *r)
{
	uint64_t now = clock_now_ns();

	if (r->state != RAIL_UP && r->state != RAIL_PROBING)
		return;
	r->stopping = r->state == RAIL_PROBING ? STOP_PROBING : STOP_UP;
	r->state = RAIL_FENCING;
	r->fence_start_ns = now;
	r->req_sent = false;
	if (r->stopping == STOP_PROBING) {
		/*
		 * Rebuilt, and a probe alone on fresh QPs did not get through
		 * either: not a queue that was slow to drain.  Twice in a row,
		 * so that one pause of a host (the testbed's guests stop for
		 * hundreds of milliseconds now and then) does not pass for a
		 * dead path.
		 */
		r->st.probe_failures++;
		if (++r->probe_misses == CONFIRM_PROBES) {
			r->st.confirmed = 1;
			log_msg(c->ctx, R2CC_LOG_WARN,
				"rail %d (%s): failure confirmed: rebuilt, it failed %d probes in a row",
				(int)(r - c->rails),
				c->ctx->nics[r->nic].info.dev_name,
				r->probe_misses);
		}
		return;
	}
	r->st.failures++;
	r->st.confirmed = 0;
	r->probe_misses = 0;
	r->st.reason = R2CC_RAIL_REASON_UNKNOWN;
	r->fail_ns = now;
	c->st.failovers++;
	if (!c->repair_open) {
		/* From the port event itself when that is the cause. */
		c->repair_open = true;
		c->detect_ns = c->event_ns && c->event_ns <= now ?
			       c->event_ns : now;
		memset(&c->rep, 0, sizeof(c->rep));
		c->rep.seen = now;
	}
}

/*
 * Stop using @r now: its QP goes to error, so the NIC stops reading and
 * writing buffers through it once it has drained, and the peer is told.
 * What was in flight is settled once the QP is drained (the scheduler
 * waits for rail_fence_drained()).  0, or -errno if the peer could not be
 * told.
 */
int rail_fail(struct r2cc_conn *c, struct rail *r, const char *why)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	bool probing;

	if (!r->stopping)
		rail_stop(c, r);
	if (!r->stopping)
		return 0;	/* failing already, or down */
	probing = r->stopping == STOP_PROBING;
	r->stopping = 0;
	log_msg(c->ctx, probing ? R2CC_LOG_INFO : R2CC_LOG_WARN,
		"rail %d (%s): %s; failing over", (int)(r - c->rails),
		c->ctx->nics[r->nic].info.dev_name, why);
	R2CC_PROBE(rail_fail, c, (int)(r - c->rails), why);
	/* A QP that cannot be put in error must not live on. */
	if (r->qp && ibv_modify_qp(r->qp, &a, IBV_QP_STATE))
		rail_destroy(r);
	/* The peer hears of the failure before the report that locates it. */
	if (!r->told_down) {
		int ret = send_rail(c, W_RAIL_DOWN, r);

		r->told_down = true;
		if (ret)
			return ret;
	}
	return probing ? 0 : start_locating(c, r);
}

/*
 * A fencing rail's QP is drained: on the sender, every work request given
 * back (each chunk's fate is then known, from its completion or the
 * receiver's report, which must be in too); on the receiver, one receive
 * flushed (the receive queue completes in order, so nothing lands through
 * it after).  A QP that does not drain in time is destroyed first: only
 * then is it certain to touch no buffer again.
 */
bool rail_fence_drained(struct r2cc_conn *c, struct rail *r)
{
	bool late = clock_now_ns() - r->fence_start_ns > FENCE_DRAIN_NS;
	bool drained = c->sender ? !r->outstanding :
				   r->flushed || !r->rq_posted;

	if (r->state != RAIL_FENCING || (c->sender && !r->peer_fenced))
		return false;
	if (!drained && !late)
		return false;
	if (!drained) {
		log_msg(c->ctx, R2CC_LOG_WARN,
			"rail %d: %d requests not flushed after fencing; destroying its QP",
			(int)(r - c->rails),
			c->sender ? r->outstanding : r->rq_posted);
		rail_destroy(r);
	}
	return true;
}

/* The scheduler settled what @r carried: it is down until failback. */
void rail_fence_done(struct r2cc_conn *c, struct rail *r)
{
	R2CC_PROBE(fence, c, (int)(r - c->rails), (int)c->sender,
		   clock_now_ns() - r->fence_start_ns);
	log_msg(c->ctx, R2CC_LOG_DEBUG, "rail %d: settled %.3f ms after it failed",
		(int)(r - c->rails),
		(clock_now_ns() - r->fence_start_ns) / 1e6);
	r->state = RAIL_DOWN;
	r->backoff_ns = r->backoff_ns ? r->backoff_ns : BACKOFF_MIN_NS;
	r->next_try_ns = clock_now_ns() + r->backoff_ns / 4;
}

/*
 * A rail that could not be connected at the handshake starts down, so
 * failback retries it; the peer, which may have connected its end, is
 * told to fence it.
 */
int rail_start_down(struct r2cc_conn *c, struct rail *r, int err)
{
	if (err)
		log_msg(c->ctx, R2CC_LOG_WARN,
			"rail %d (%s): cannot connect (%d); starting down",
			(int)(r - c->rails), c->ctx->nics[r->nic].info.dev_name,
			err);
	r->state = RAIL_DOWN;
	r->backoff_ns = BACKOFF_MIN_NS;
	r->next_try_ns = clock_now_ns() + BACKOFF_MIN_NS;
	if (!err || !c->sender || !r->remote.qpn)
		return 0;
	r->told_down = true;
	return send_rail(c, W_RAIL_DOWN, r);
}

static int send_ack(struct r2cc_conn *c, uint32_t rail, uint32_t epoch,
		    bool ok)
{
	struct wire_rail_ack a = { .rail = rail, .epoch = epoch, .ok = ok };

	if (ok)
		a.qp = c->rails[rail].local;
	return send_ctl(c, W_RAIL_ACK, &a, sizeof(a));
}

/* Sender: try to bring a failed rail back when both NICs are up. */
int rail_failback(struct r2cc_conn *c, struct rail *r)
{
	struct wire_rail_req q = { .rail = (uint32_t)(r - c->rails) };
	uint64_t now = clock_now_ns();

	if (!c->sender || r->state != RAIL_DOWN || r->req_sent ||
	    now < r->next_try_ns || !r->peer_nic_up ||
	    r2cc_nic_is_active(c->ctx, r->nic) != 1)
		return 0;
	r->next_try_ns = now + r->backoff_ns;
	r->backoff_ns = r->backoff_ns * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS :
							     r->backoff_ns * 2;
	rail_retire(c, r);
	free(r->fenced_map);
	r->fenced_map = NULL;
	r->fenced_len = 0;
	r->epoch++;
	r->peer_fenced = false;
	r->told_down = false;
	if (rail_create(c, r)) {
		rail_destroy(r);
		return 0;	/* tried again after the backoff */
	}
	q.epoch = r->epoch;
	q.qp = r->local;
	r->req_sent = true;
	return send_ctl(c, W_RAIL_REQ, &q, sizeof(q));
}

static int probe(struct r2cc_conn *c, struct rail *r)
{
	struct ibv_send_wr wr = {
		.wr_id = PROBE_WRID,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(IMM_PROBE),
	}, *bad;

	r->state = RAIL_PROBING;
	r->probe_ns = clock_now_ns();
	if (ibv_post_send(r->qp, &wr, &bad))
		return rail_fail(c, r, "probe not posted");
	rail_out(r, r->outstanding + 1);
	r->used++;
	return 0;
}

/* Sender: the probe of @r completed (@ok) or failed. */
/*
 * @r starts to carry chunks again: it joins the schedule position of the
 * others of its level (conn_rail_level), not behind them: an idle
 * standby's or a drained rail's position is frozen, and from there it
 * would take nearly every chunk until it caught up.
 */
static void join_level(struct r2cc_conn *c, struct rail *r)
{
	int i, me = (int)(r - c->rails);
	uint64_t vmin = UINT64_MAX;

	for (i = 0; i < c->nrails; i++)
		if (i != me && c->rails[i].state == RAIL_UP &&
		    c->rails[i].vtime < vmin &&
		    conn_rail_level(c, i) == conn_rail_level(c, me))
			vmin = c->rails[i].vtime;
	r->vtime = vmin == UINT64_MAX ? 0 : vmin;
}

/* How often a graded drain steps (R2CC_DRAIN=graded): hold / 8. */
static uint64_t drain_step_ns(const struct r2cc_conn *c)
{
	return (uint64_t)c->ctx->tune.degrade_hold_ms * 1000000 / 8;
}

/*
 * Back in the schedule after a drain: at once at its full weight, or
 * (graded) at the last step's, doubled back step by step.
 */
static void undrain(struct r2cc_conn *c, struct rail *r, uint64_t now)
{
	bool graded = c->ctx->tune.drain_graded;

	r->degraded = 0;
	r->back_ns = now;
	if (!graded || r->cut >= DRAIN_STEPS)
		join_level(c, r);
	if (graded) {
		r->cut = r->cut >= DRAIN_STEPS ? DRAIN_STEPS - 1 : r->cut;
		r->cut_ns = now;
	} else {
		r->cut = 0;
	}
	R2CC_PROBE(degraded, c, (int)(r - c->rails), 0);
	if (r->cut)
		log_msg(c->ctx, R2CC_LOG_WARN,
			"rail %d (%s): port recovered; back in the schedule at 1/%u of its weight, doubled every %.2f s",
			(int)(r - c->rails), c->ctx->nics[r->nic].info.dev_name,
			1u << r->cut, drain_step_ns(c) / 1e9);
	else
		log_msg(c->ctx, R2CC_LOG_WARN,
			"rail %d (%s): port recovered; back in the schedule",
			(int)(r - c->rails),
			c->ctx->nics[r->nic].info.dev_name);
}

/* Some rail of @c is up and not degraded: a degraded one then carries nothing. */
static bool healthy_rail(const struct r2cc_conn *c)
{
	int i;

	for (i = 0; i < c->nrails; i++)
		if (c->rails[i].state == RAIL_UP && !c->rails[i].degraded)
			return true;
	return false;
}

void rail_set_degraded(struct r2cc_conn *c, struct rail *r, uint8_t who,
		       bool on)
{
	const uint8_t ports = R2CC_RAIL_DEGRADED_LOCAL | R2CC_RAIL_DEGRADED_PEER;
	uint8_t was = r->degraded;
	uint64_t now, min;

	r->degraded = on ? (was | who) & ports : was & ~who;
	/*
	 * A rail out of service keeps the mark for when it is back (an
	 * all-clear keeps a HOLD too: was & ~who).
	 */
	if (!(was & ports) == !(r->degraded & ports) || r->state != RAIL_UP)
		return;
	now = clock_now_ns();
	min = (uint64_t)c->ctx->tune.degrade_hold_ms * 1000000;
	if (r->degraded) {
		/*
		 * A drained link carries nothing, so the module soon finds it
		 * clean again, whether it is or not: a rail that degrades
		 * again soon after its return stays drained twice as long.
		 */
		if (!(was & R2CC_RAIL_DEGRADED_HOLD))
			r->deg_hold_ns = r->back_ns &&
					 now - r->back_ns < DEG_FLAP * min ?
					 2 * r->deg_hold_ns : min;
		if (r->deg_hold_ns > DEG_HOLD_MAX * min)
			r->deg_hold_ns = DEG_HOLD_MAX * min;
		if (r->deg_hold_ns < min)
			r->deg_hold_ns = min;
		r->deg_at_ns = now;
		if (was & R2CC_RAIL_DEGRADED_HOLD)
			return;
		r->st.drains++;
		R2CC_PROBE(degraded, c, (int)(r - c->rails), r->degraded);
		if (c->ctx->tune.drain_graded) {
			/*
			 * A port that reports errors may still move most of its
			 * traffic: it keeps a share, halved as long as it stays
			 * degraded, and the last step drains it.
			 */
			r->cut = r->cut ? r->cut : 1;
			r->cut_ns = now;
			log_msg(c->ctx, R2CC_LOG_WARN,
				"rail %d (%s): %s port degraded; its weight cut to 1/%u, halved every %.2f s while it stays so, drained after %d steps",
				(int)(r - c->rails),
				c->ctx->nics[r->nic].info.dev_name,
				who == R2CC_RAIL_DEGRADED_LOCAL ? "local" :
								  "peer's",
				1u << r->cut, drain_step_ns(c) / 1e9,
				DRAIN_STEPS);
			return;
		}
		log_msg(c->ctx, R2CC_LOG_WARN,
			"rail %d (%s): %s port degraded; draining it for %.1f s at least%s",
			(int)(r - c->rails), c->ctx->nics[r->nic].info.dev_name,
			who == R2CC_RAIL_DEGRADED_LOCAL ? "local" : "peer's",
			r->deg_hold_ns / 1e9,
			healthy_rail(c) ? "" :
			" (no healthy rail left: it keeps carrying until one is)");
	} else if (now < r->deg_at_ns + r->deg_hold_ns) {
		r->degraded = R2CC_RAIL_DEGRADED_HOLD;
	} else {
		undrain(c, r, now);
	}
}

void rail_degraded_tick(struct r2cc_conn *c, struct rail *r, uint64_t now)
{
	const uint8_t ports = R2CC_RAIL_DEGRADED_LOCAL | R2CC_RAIL_DEGRADED_PEER;
	int i = (int)(r - c->rails);

	if (r->degraded == R2CC_RAIL_DEGRADED_HOLD &&
	    now >= r->deg_at_ns + r->deg_hold_ns)
		undrain(c, r, now);
	/* R2CC_DRAIN=graded: one step down while degraded, up once healthy */
	if (!c->ctx->tune.drain_graded || now < r->cut_ns + drain_step_ns(c))
		return;
	if (r->degraded & ports && r->cut < DRAIN_STEPS) {
		r->cut++;
		r->cut_ns = now;
		if (r->cut < DRAIN_STEPS)
			log_msg(c->ctx, R2CC_LOG_WARN,
				"rail %d (%s): still degraded; its weight cut to 1/%u",
				i, c->ctx->nics[r->nic].info.dev_name,
				1u << r->cut);
		else
			log_msg(c->ctx, R2CC_LOG_WARN,
				"rail %d (%s): still degraded; drained%s", i,
				c->ctx->nics[r->nic].info.dev_name,
				healthy_rail(c) ? "" :
				" (no healthy rail left: it keeps carrying until one is)");
	} else if (!r->degraded && r->cut) {
		r->cut--;
		r->cut_ns = now;
		if (r->cut)
			log_msg(c->ctx, R2CC_LOG_INFO,
				"rail %d (%s): healthy; its weight back to 1/%u",
				i, c->ctx->nics[r->nic].info.dev_name,
				1u << r->cut);
		else
			log_msg(c->ctx, R2CC_LOG_WARN,
				"rail %d (%s): healthy; back to its full weight",
				i, c->ctx->nics[r->nic].info.dev_name);
	}
}

int rail_probe_done(struct r2cc_conn *c, struct rail *r, bool ok)
{
	struct r2cc_rail_stats *st = &r->st;

	if (r->state != RAIL_PROBING)
		return 0;
	if (!ok)
		return rail_fail(c, r, "probe failed");
	join_level(c, r);
	r->state = RAIL_UP;
	r->st.confirmed = 0;
	r->probe_misses = 0;
	r->locating = false;	/* back before the peer's report: unknown */
	r->backoff_ns = BACKOFF_MIN_NS;
	st->failbacks++;
	R2CC_PROBE(failback, c, (int)(r - c->rails));
	log_msg(c->ctx, R2CC_LOG_WARN, "rail %d (%s): back in service",
		(int)(r - c->rails), c->ctx->nics[r->nic].info.dev_name);
	return 0;
}

static int on_rail_req(struct r2cc_conn *c, const struct wire_rail_req *q)
{
	struct rail *r = &c->rails[q->rail];
	int ret;

	if (c->sender || q->epoch <= r->epoch)
		return 0;
	if (r->state == RAIL_FENCING ||
	    r2cc_nic_is_active(c->ctx, r->nic) != 1)
		return send_ack(c, q->rail, q->epoch, false);
	if (r->state == RAIL_UP) {	/* the sender saw a failure first */
		ret = rail_fail(c, r, "peer rebuilds it");
		if (ret)
			return ret;
	}
	if (r->state != RAIL_DOWN)
		return send_ack(c, q->rail, q->epoch, false);
	rail_retire(c, r);
	r->epoch = q->epoch;
	r->told_down = false;
	r->remote = q->qp;
	ret = rail_create(c, r);
	ret = ret ?: rail_connect(c, r);
	if (ret) {
		rail_destroy(r);
		return send_ack(c, q->rail, q->epoch, false);
	}
	r->state = RAIL_UP;
	r->locating = false;
	r->st.failbacks++;
	log_msg(c->ctx, R2CC_LOG_WARN, "rail %d (%s): reconnected by peer",
		(int)q->rail, c->ctx->nics[r->nic].info.dev_name);
	return send_ack(c, q->rail, q->epoch, true);
}

static int on_rail_ack(struct r2cc_conn *c, const struct wire_rail_ack *a)
{
	struct rail *r = &c->rails[a->rail];

	if (!c->sender || a->epoch != r->epoch || !r->req_sent ||
	    r->state != RAIL_DOWN)
		return 0;
	r->req_sent = false;
	if (!a->ok)
		return 0;
	r->remote = a->qp;
	if (rail_connect(c, r)) {
		rail_destroy(r);
		return 0;	/* tried again after the backoff */
	}
	return probe(c, r);
}

/* A fence report part is well formed: entries and bitmaps fit @len. */
static bool fenced_ok(const struct wire_fenced *f, size_t len)
{
	const uint8_t *p = (const void *)(f + 1), *end = (const void *)f;
	uint32_t i;

	end += len;
	if (f->flags & ~WIRE_FENCED_LAST)
		return false;
	for (i = 0; i < f->nmsgs; i++) {
		const struct wire_fenced_msg *fm = (const void *)p;
		size_t bytes;

		if ((size_t)(end - p) < sizeof(*fm))
			return false;
		bytes = ((size_t)fm->nbits + 63) / 64 * 8;
		if (fm->reserved || !fm->nbits || fm->nbits > IMM_CHUNK_MASK ||
		    fm->first > IMM_CHUNK_MASK - fm->nbits ||
		    (size_t)(end - p) - sizeof(*fm) < bytes)
			return false;
		p += sizeof(*fm) + bytes;
	}
	return p == end;
}

/* Gather what the receiver says arrived before it fenced @r. */
static int on_fenced(struct r2cc_conn *c, const void *p, size_t len,
		     const char **why)
{
	const struct wire_fenced *f = p;
	struct rail *r = &c->rails[f->rail];
	uint8_t *map;

	if (!c->sender || !fenced_ok(f, len)) {
		*why = "bad fence report";
		return -EPROTO;
	}
	if (f->epoch != r->epoch || r->peer_fenced)
		return 0;
	if (r->state == RAIL_DOWN) {
		/* The receiver fences an epoch only once it acked it. */
		if (r->req_sent) {
			*why = "fence report for a rail not rebuilt yet";
			return -EPROTO;
		}
		/* Nothing was posted on it (it never connected here). */
		r->peer_fenced = f->flags & WIRE_FENCED_LAST;
		return 0;
	}
	/* At most every open message's bitmap, whole, in full parts. */
	if (r->fenced_len + len > (size_t)MAX_MSGS * (WIRE_MAX_MSG + 64)) {
		*why = "fence report without end";
		return -EPROTO;
	}
	map = realloc(r->fenced_map, r->fenced_len + len);
	if (!map) {
		*why = "fence report";
		return -ENOMEM;
	}
	memcpy(map + r->fenced_len, p, len);
	r->fenced_map = map;
	r->fenced_len += len;
	if (!(f->flags & WIRE_FENCED_LAST))
		return 0;
	r->peer_fenced = true;
	if (c->repair_open && !c->rep.fenced)
		c->rep.fenced = clock_now_ns();
	r->told_down = true;	/* the receiver knows */
	return rail_fail(c, r, "peer fenced it");
}

/* Control messages about rails; lengths were checked by the caller. */
int rail_on_msg(struct r2cc_conn *c, uint16_t type, const void *p,
		size_t len, const char **why)
{
	const struct wire_rail *w = p;
	struct rail *r;

	*why = "control message not sent";
	if (w->rail >= (uint32_t)c->nrails) {
		*why = "rail index out of range";
		return -EPROTO;
	}
	r = &c->rails[w->rail];
	switch (type) {
	case W_RAIL_DOWN:
		if (w->epoch != r->epoch)
			return 0;
		r->told_down = true;
		return rail_fail(c, r, "peer saw it fail");
	case W_NIC: {
		uint32_t up = ((const struct wire_nic *)p)->up;

		int ret = 0;

		r->peer_nic_up = up & WIRE_NIC_UP;
		if (!r->peer_nic_up)
			ret = rail_fail(c, r, "peer's port went down");
		else if (!(up & WIRE_NIC_REPORT))
			r->next_try_ns = 0;
		if (!ret && (up & WIRE_NIC_REPORT || !r->peer_nic_up))
			on_report(c, r, r->peer_nic_up);
		rail_set_degraded(c, r, R2CC_RAIL_DEGRADED_PEER,
				  up & WIRE_NIC_DEGRADED);
		return ret;
	}
	case W_FENCED:
		return on_fenced(c, p, len, why);
	case W_CREDIT: {
		const struct wire_credit *k = p;

		if (!c->sender || len != sizeof(*k)) {
			*why = "bad receive credit";
			return -EPROTO;
		}
		if (k->epoch != r->epoch || k->posted <= r->credit)
			return 0;	/* stale, or nothing new */
		/* No more receives can be posted than were ever consumed. */
		if (k->posted > r->used + RQ_DEPTH) {
			*why = "receive credit beyond the queue";
			return -EPROTO;
		}
		r->credit = k->posted;
		return 0;
	}
	case W_RAIL_REQ:
		return on_rail_req(c, p);
	case W_RAIL_ACK:
		return on_rail_ack(c, p);
	}
	return 0;
}
