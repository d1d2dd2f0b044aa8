// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The communicator's view of the cluster: every rank's usable bandwidth,
 * the same on every rank.  A failure-aware schedule must be computed from
 * the same numbers everywhere, or ranks would run different schedules and
 * wait on messages that never come.
 *
 * How the ranks agree: each ring collective (allreduce, reduce-scatter,
 * allgather, barrier) carries, in its slice headers, every rank's value as
 * that rank sampled it when it issued the call, one value per step
 * (coll_view_rank()).  Each value is forwarded unchanged, and every slice
 * that carries one is checked against the first (a mismatch is -EPROTO),
 * so when such a collective finishes every rank holds the same vector.  A
 * rank adopts it then.  Ranks issue collectives in the same order and the
 * engine runs them in that order, so when collective j starts, every rank
 * has adopted the vector of the same collective: the last ring collective
 * before j.  No clock and no extra message is involved; a change reaches
 * every rank within one ring collective of the call that first saw it.
 * Chains (broadcast, reduce) and allreduces by recursive doubling
 * (rd.c) carry no view and leave it as it was.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll.h"
#include "base/base.h"

/* Every NIC's bandwidth, read once: it is the NIC's, not the moment's. */
int coll_view_init(struct r2cc_comm *c)
{
	int i;

	c->nnics = r2cc_nic_count(c->ctx);
	if (c->nnics < 0)
		return c->nnics;
	c->nic_mbps = calloc((size_t)c->nnics, sizeof(*c->nic_mbps));
	c->view = calloc((size_t)c->n, sizeof(*c->view));
	if (!c->nic_mbps || !c->view)
		return -ENOMEM;
	for (i = 0; i < c->nnics; i++) {
		struct r2cc_nic_info info = { .size = sizeof(info) };

		if (!r2cc_nic_info(c->ctx, i, &info))
			c->nic_mbps[i] = info.bandwidth_mbps;
	}
	return 0;
}

/*
 * This rank's usable bandwidth now: its NICs whose port is ACTIVE and not
 * reported degraded here, as the transport schedules them (it drains
 * those) -- unless every active one is degraded: the transport then keeps
 * sending on them (conn_rail_level), so they count, and a link that is
 * only slow or congested everywhere does not take a node out of the view.
 *
 * A path that fails with both ports up (a black hole, a switch) counts
 * too, once the transport has located it there and confirmed it: the
 * NIC's rail to the ring's next rank is out of service with both ends'
 * ports up (reason PATH), and rebuilt with fresh QPs it still failed its
 * probes (r2cc_rail_stats.confirmed), so this rank sends that much less.
 * Rails do not pool (rail k reaches rail k), so the NIC is of no use to
 * the ring until the rail is back up.  Only the sender's side counts it,
 * once, as the sender's; a rail failed for the peer's port is already in
 * the peer's own value.  A suspicion leaves the view alone: the stall
 * detector fails rails that are only slow under load, both ends then
 * find their ports up (PATH), and the rebuilt rail's probe completes.
 *
 * Under R2CC_DRAIN=graded a degraded rail keeps a share of its weight,
 * halved in steps (r2cc_rail_stats.cut) before it is drained: its NIC
 * counts at that share, as the transport schedules it, whichever end's
 * port is degraded (a loss on the link shows at both).  The steps are
 * powers of two a second or more apart, so the view changes a few times
 * per drain, at agreed collectives as ever.
 */
uint32_t coll_view_local(struct r2cc_comm *c)
{
	struct r2cc_rail_stats rs[R2CC_MAX_NICS];
	struct r2cc_conn_stats cs = { .size = sizeof(cs) };
	uint64_t healthy = 0, degraded = 0, drained = 0, path = 0, sum;
	uint8_t cut[64] = { 0 };
	int i, nr = 0;

	rs[0].size = sizeof(rs[0]);
	if (c->next)
		nr = r2cc_conn_stats(c->next, &cs, rs, R2CC_MAX_NICS);
	for (i = 0; i < nr && i < R2CC_MAX_NICS; i++) {
		if (rs[i].nic < 0 || rs[i].nic >= 64)
			continue;
		if (rs[i].cut && rs[i].cut < R2CC_RAIL_CUT_DRAINED)
			cut[rs[i].nic] = rs[i].cut;
		else if (rs[i].degraded & R2CC_RAIL_DEGRADED_LOCAL)
			drained |= 1ull << rs[i].nic;
		if (rs[i].state != R2CC_RAIL_UP && rs[i].confirmed &&
		    rs[i].reason == R2CC_RAIL_REASON_PATH)
			path |= 1ull << rs[i].nic;
	}
	for (i = 0; i < c->nnics; i++) {
		if (r2cc_nic_is_active(c->ctx, i) != 1 ||
		    (i < 64 && path >> i & 1))
			continue;
		if (i < 64 && drained >> i & 1)
			degraded += c->nic_mbps[i];
		else
			healthy += c->nic_mbps[i] >> (i < 64 ? cut[i] : 0);
	}
	sum = healthy ? healthy : degraded;
	return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

/* @q finished without error: what it gathered is the view from now on. */
void coll_view_adopt(struct r2cc_coll *q)
{
	struct r2cc_comm *c = q->comm;
	int i;

	if (q->algo == COLL_ALGO_RD ||
	    coll_view_rank(q->kind, c->rank, c->n, 0, true) < 0 || !q->nsteps)
		return;
	for (i = 0; i < c->n; i++)
		if (!q->have[i])
			return;	/* cannot happen: every step received */
	if (c->view_valid && !memcmp(c->view, q->gather,
				     (size_t)c->n * sizeof(*c->view)))
		return;
	for (i = 0; i < c->n; i++)
		if (c->view_valid && c->view[i] != q->gather[i])
			log_msg(c->ctx, R2CC_LOG_INFO,
				"collective #%u: rank %d's usable bandwidth %u -> %u Mbit/s",
				q->seq, i, c->view[i], q->gather[i]);
	c->view_changes += c->view_valid;
	c->view_valid = true;
	c->view_seq = q->seq;
	memcpy(c->view, q->gather, (size_t)c->n * sizeof(*c->view));
}

R2CC_EXPORT int r2cc_comm_view(struct r2cc_comm *c, struct r2cc_comm_view *v,
			       uint32_t *mbps, int n)
{
	struct r2cc_comm_view o = { .size = sizeof(o) };

	if (!c || !v || n < 0 || (n && !mbps) ||
	    r2cc_opts_out_check(r2cc_opts_size(v)))
		return -EINVAL;
	if (!handle_ok(c, R2CC_OBJ_COMM))
		return -EBADF;
	o.valid = c->view_valid;
	o.seq = c->view_seq;
	o.changes = c->view_changes;
	if (n)
		memcpy(mbps, c->view,
		       (size_t)(n < c->n ? n : c->n) * sizeof(*mbps));
	r2cc_opts_out(v, &o, sizeof(o));
	return c->n;
}

/* Say once per view what the ranks run from it: @what with weights @w. */
void coll_log_weights(const struct r2cc_comm *c, const char *what,
		      const uint32_t *w)
{
	char buf[256];
	size_t at = 0;
	int k;

	if (!c->ctx)
		return;
	for (k = 0; k < c->n && at < sizeof(buf) - 16; k++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%.3f",
				       k ? " " : "",
				       (double)w[k] / COLL_WEIGHT_ONE);
	log_msg(c->ctx, R2CC_LOG_INFO, "view of collective #%u: %s %s%s",
		c->view_seq, what, buf, k < c->n ? " ..." : "");
}
