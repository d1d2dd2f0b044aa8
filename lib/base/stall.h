/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The stall detector's adaptive bound (R2CC_STALL_ADAPT, on by default;
 * 0 keeps the fixed bound of R2CC_STALL_MS).
 *
 * A rail with work posted is stalled when nothing completes for its bound.
 * A fixed bound (R2CC_STALL_MS, 100 ms) calls a slow or deeply queued link
 * dead: at 10 Mbit/s with several connections on a NIC the gap between
 * two completions can pass it with nothing wrong.  So each rail keeps a
 * smoothed gap between completions and its variation, as TCP keeps its
 * round-trip time (RFC 6298: gains 1/8 and 1/4), and its bound is the
 * smoothed gap plus four variations, never below R2CC_STALL_MS and never
 * above STALL_ADAPT_CEIL times it: a link that goes silent after steady
 * gaps of g is declared stalled after about g, not after a fixed time.
 */
#ifndef R2CC_STALL_H
#define R2CC_STALL_H

#include <stdbool.h>
#include <stdint.h>

/* the bound is at most this many times R2CC_STALL_MS */
#define STALL_ADAPT_CEIL	16
/* a rail silent with the rest of its connection waits this many bounds */
#define STALL_ALONE		4

struct stall_est {
	uint64_t srtt_ns;		/* smoothed gap between completions */
	uint64_t var_ns;		/* its mean deviation */
	bool valid;			/* a gap has been seen */
};

/* A gap of @gap_ns from the rail's last progress to a completion. */
static inline void stall_sample(struct stall_est *e, uint64_t gap_ns)
{
	uint64_t d;

	if (!e->valid) {
		e->srtt_ns = gap_ns;
		e->var_ns = gap_ns / 2;
		e->valid = true;
		return;
	}
	d = gap_ns > e->srtt_ns ? gap_ns - e->srtt_ns : e->srtt_ns - gap_ns;
	e->var_ns = e->var_ns - e->var_ns / 4 + d / 4;
	e->srtt_ns = e->srtt_ns - e->srtt_ns / 8 + gap_ns / 8;
}

/* How long the rail may go without a completion, given @floor_ns. */
static inline uint64_t stall_bound(const struct stall_est *e,
				   uint64_t floor_ns)
{
	uint64_t b;

	if (!e->valid)
		return floor_ns;
	b = e->srtt_ns + 4 * e->var_ns;
	if (b < floor_ns)
		return floor_ns;
	return b > STALL_ADAPT_CEIL * floor_ns ? STALL_ADAPT_CEIL * floor_ns : b;
}

/*
 * A rail's chunk waits behind the work of every connection on its NIC: a
 * rail that has just been given a failed one's chunks, or that shares its
 * NIC with many connections, sees a gap far longer than its own history
 * says, and a reconnected rail has no history at all.  So the bound is at
 * least what the NIC's own smoothed gap between completions (@nic, kept
 * across rails and reconnections) says @wrs work requests take to drain,
 * twice over, plus four variations; 0 without a sample.
 */
static inline uint64_t stall_queue_ns(const struct stall_est *nic, int wrs)
{
	if (!nic->valid || wrs <= 0)
		return 0;
	return 2 * (uint64_t)wrs * nic->srtt_ns + 4 * nic->var_ns;
}

/*
 * A rail's whole bound: its own (stall_bound()), or its NIC's queue's when
 * that is longer, under the same ceiling.
 */
static inline uint64_t stall_bound_queued(const struct stall_est *rail,
					  const struct stall_est *nic, int wrs,
					  uint64_t floor_ns)
{
	uint64_t b = stall_bound(rail, floor_ns), q = stall_queue_ns(nic, wrs);

	if (q > STALL_ADAPT_CEIL * floor_ns)
		q = STALL_ADAPT_CEIL * floor_ns;
	return q > b ? q : b;
}

#endif
