// SPDX-License-Identifier: GPL-2.0-only
/*
 * Early warning of links about to fail.  Real links die slowly: before a
 * port drops, retransmissions, out-of-sequence and duplicate requests and
 * ACK timeouts climb.  Every poll_ms the port work reads the device's
 * error counters (its hw_counters, the ones `rdma statistic` shows) and
 * turns their rise into a rate; a mean rate over R2CC_DEGRADE_POLLS polls
 * at or above degrade_rate makes an ACTIVE port DEGRADED, a rate at or
 * under recover_rate for R2CC_RECOVER_POLLS polls in a row makes it
 * RECOVERED.  Between the two nothing changes (hysteresis).
 *
 * ib_core exports no reader of a port's counters for clients (6.1, 6.12:
 * rdma_counter_get_hwstat_value() is internal), so this reads them through
 * the driver's alloc_hw_port_stats/get_hw_stats ops into a structure of its
 * own, as the core's sysfs does into its.  IB PMA counters (symbol errors,
 * link error recovery) need MADs and are not read.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "r2cc.h"
#include "r2cc_trace.h"

#define R2CC_RECOVER_POLLS	5

/*
 * Counters whose rise means a lossy or failing path, by the names drivers
 * give them: rxe's, then mlx5's.  Receiver-not-ready errors are left out:
 * they mean a slow consumer, not a bad link.
 *
 * Two kinds.  A sequence error (a packet arrived after a gap, or the
 * sender was told of one) takes a lost packet.  A retry, a duplicate or an
 * ACK timeout takes only a late one: a link shaped or congested until its
 * queue outlasts the ACK timeout makes the sender re-send what was merely
 * queued, and the receiver counts the copies, hundreds a second on the
 * testbed's rails shaped to 10 Mbit/s, with no packet lost.  Only sequence
 * errors judge a port, unless count_timeouts is set.
 */
static const struct {
	const char *name;
	bool timeout;
} r2cc_error_counters[] = {
	{ "out_of_seq_request" }, { "rcvd_seq_err" },		/* rxe */
	{ "completer_retry_err", true }, { "duplicate_request", true },
	{ "retry_exceeded_err", true },
	{ "out_of_sequence" }, { "packet_seq_err" },		/* mlx5 */
	{ "implied_nak_seq_err" }, { "local_ack_timeout_err", true },
};

/* Find @p's error counters; may sleep.  Without any, @p has no health. */
void r2cc_health_init(struct r2cc_port *p)
{
	struct ib_device *ibdev = p->dev->ibdev;
	struct rdma_hw_stats *hw;
	int i, j;

	p->hw = NULL;
	p->nerr = 0;
	if (!ibdev->ops.alloc_hw_port_stats || !ibdev->ops.get_hw_stats)
		return;
	hw = ibdev->ops.alloc_hw_port_stats(ibdev, p->num);
	if (!hw)
		return;
	p->err_timeout = 0;
	for (i = 0; i < hw->num_counters && p->nerr < R2CC_ERR_COUNTERS_MAX;
	     i++)
		for (j = 0; j < ARRAY_SIZE(r2cc_error_counters); j++)
			if (hw->descs[i].name &&
			    !strcmp(hw->descs[i].name,
				    r2cc_error_counters[j].name)) {
				if (r2cc_error_counters[j].timeout)
					p->err_timeout |= BIT(p->nerr);
				p->err_idx[p->nerr++] = i;
			}
	if (!p->nerr) {
		rdma_free_hw_stats_struct(hw);
		return;
	}
	p->hw = hw;
}

void r2cc_health_exit(struct r2cc_port *p)
{
	if (p->hw)
		rdma_free_hw_stats_struct(p->hw);
	p->hw = NULL;
}

/*
 * The sum of @p's error counters that judge it now (see above); may sleep.
 * False if unreadable.
 */
bool r2cc_health_read(struct r2cc_port *p, u64 *sum)
{
	struct ib_device *ibdev = p->dev->ibdev;
	bool timeouts = READ_ONCE(r2cc_count_timeouts);
	struct rdma_hw_stats *hw = p->hw;
	int ret, i;

	if (!hw)
		return false;
	mutex_lock(&hw->lock);
	ret = ibdev->ops.get_hw_stats(ibdev, hw, p->num, hw->num_counters);
	*sum = 0;
	for (i = 0; ret >= 0 && i < p->nerr; i++)
		if (timeouts || !(p->err_timeout & BIT(i)))
			*sum += hw->value[p->err_idx[i]];
	mutex_unlock(&hw->lock);
	return ret >= 0;
}

static u32 r2cc_rate_or(u32 port_value, unsigned int module_value)
{
	return port_value ? port_value : READ_ONCE(module_value);
}

/*
 * A new reading @sum of @p's counters at @now; under r2cc_lock.  Returns
 * R2CC_EV_PORT_DEGRADED or R2CC_EV_PORT_RECOVERED when that is news, else
 * 0.  A port that is not ACTIVE is not degraded: its DOWN says more.
 */
static u16 r2cc_health_judge(struct r2cc_port *p);

u16 r2cc_health_apply(struct r2cc_port *p, u64 sum, u64 now)
{
	u64 delta = sum >= p->err_last ? sum - p->err_last : 0;
	u64 elapsed = now - p->err_last_ns;
	bool first = !p->err_last_ns;
	u16 kind;

	lockdep_assert_held(&r2cc_lock);
	p->err_last = sum;
	p->err_last_ns = now;
	if (first || !elapsed)
		return 0;
	p->err_total += delta;
	p->error_rate = mul_u64_u64_div_u64(delta, NSEC_PER_SEC, elapsed);
	kind = r2cc_health_judge(p);
	trace_r2cc_errors(p->dev->name, p->num, p->error_rate, p->err_total,
			  p->degraded);
	return kind;
}

/*
 * Hysteresis over the rates measured; under r2cc_lock.  A port degrades
 * when the mean of its last R2CC_DEGRADE_POLLS rates reaches degrade_rate:
 * losses come in bursts, and a lossy rail under a library's stream shows
 * sequence errors at 0 to 7 a second from one poll to the next, so a rule
 * of every poll at or above the rate would miss it now and then for tens
 * of seconds.  It recovers after R2CC_RECOVER_POLLS polls in a row at or
 * under recover_rate.  A degrade_rate of 0 turns early warning off (a
 * degraded port then recovers).
 */
static u16 r2cc_health_judge(struct r2cc_port *p)
{
	u64 sum = 0;
	u32 degrade;
	int i;

	if (p->state != R2CC_PORT_ACTIVE) {
		p->win_n = 0;
		p->under_polls = 0;
		if (p->degraded) {
			p->degraded = false;
			r2cc_state_update(p, true);
		}
		return 0;
	}
	p->win[p->win_at] = p->error_rate;
	p->win_at = (p->win_at + 1) % R2CC_DEGRADE_POLLS;
	if (p->win_n < R2CC_DEGRADE_POLLS)
		p->win_n++;
	for (i = 0; p->win_n == R2CC_DEGRADE_POLLS && i < p->win_n; i++)
		sum += p->win[i];	/* all fresh: written since the reset */
	degrade = r2cc_rate_or(p->degrade_rate, r2cc_degrade_rate);
	if (degrade && p->win_n == R2CC_DEGRADE_POLLS &&
	    sum >= (u64)degrade * R2CC_DEGRADE_POLLS) {
		p->under_polls = 0;
		if (!p->degraded) {
			p->degraded = true;
			return R2CC_EV_PORT_DEGRADED;
		}
	} else if (!degrade || p->error_rate <=
		   r2cc_rate_or(p->recover_rate, r2cc_recover_rate)) {
		if (p->under_polls < U8_MAX)
			p->under_polls++;
		if (p->degraded && p->under_polls >= R2CC_RECOVER_POLLS) {
			p->degraded = false;
			return R2CC_EV_PORT_RECOVERED;
		}
	} else {
		p->under_polls = 0;
	}
	return 0;
}
