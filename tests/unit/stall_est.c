// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stall detector's adaptive bound (lib/base/stall.h): no gap seen, it is
 * R2CC_STALL_MS; steady gaps of g bring it to about g, and a link that
 * goes silent after them is declared stalled within 3 g (issue 30's
 * target), never sooner than the floor nor later than STALL_ADAPT_CEIL
 * times it; a slower link raises it within a few completions, and jittery
 * gaps leave room above their mean (all but under 1% of them).  The
 * NIC's queue bound: none without a sample or with nothing queued; with
 * a NIC that completes a chunk every g, a chunk behind w others may take
 * at least w g and at most about 2 w g before it is called stalled.
 */
#include <stdio.h>

#include "../../lib/base/stall.h"
#include "tap.h"
#include "xorshift.h"

#define MS	1000000ull

/* The bound after @n gaps of @gap, from @e as it is. */
static uint64_t after(struct stall_est *e, int n, uint64_t gap, uint64_t floor)
{
	while (n-- > 0)
		stall_sample(e, gap);
	return stall_bound(e, floor);
}

int main(void)
{
	struct stall_est e = { 0 };
	uint64_t b, floor = 100 * MS, s = 0x9e3779b97f4a7c15ull;
	int i, over = 0;

	tap_plan(13);
	tap_ok(stall_bound(&e, floor) == floor,
	       "no gap seen: the floor (R2CC_STALL_MS)");
	b = after(&e, 50, 1 * MS, floor);
	tap_ok(b == floor, "gaps of 1 ms: the floor (%.1f ms)", b / 1e6);

	e = (struct stall_est){ 0 };
	b = after(&e, 200, 300 * MS, floor);
	tap_ok(b >= 300 * MS && b <= 3 * 300 * MS,
	       "steady gaps of 300 ms: %.1f ms, within 3 gaps", b / 1e6);

	b = after(&e, 8, 600 * MS, floor);
	tap_ok(b >= 600 * MS, "the link slows to 600 ms gaps: %.1f ms after 8",
	       b / 1e6);

	e = (struct stall_est){ 0 };
	b = after(&e, 200, 60 * 1000 * MS, floor);
	tap_ok(b == STALL_ADAPT_CEIL * floor,
	       "gaps of a minute: capped at %d times the floor (%.1f ms)",
	       STALL_ADAPT_CEIL, b / 1e6);

	/*
	 * Gaps of 200 +- 100 ms, uniform: the bound stays above all but a
	 * few (the deviation's estimate dips now and then, as TCP's does).
	 */
	e = (struct stall_est){ 0 };
	for (i = 0; i < 2000; i++) {
		uint64_t g = 100 * MS + xorshift64(&s) % (200 * MS);

		if (i > 100 && g > stall_bound(&e, floor))
			over++;
		stall_sample(&e, g);
	}
	tap_ok(over < 20, "2000 gaps of 100 to 300 ms: under 1%% past the bound (%d; bound %.1f ms)",
	       over, stall_bound(&e, floor) / 1e6);

	/* The floor wins whatever the gaps. */
	e = (struct stall_est){ 0 };
	for (i = 0, over = 0; i < 1000; i++) {
		stall_sample(&e, xorshift64(&s) % (50 * MS));
		over += stall_bound(&e, floor) < floor;
	}
	tap_ok(!over, "1000 random gaps under 50 ms: never below the floor");

	e = (struct stall_est){ 0 };
	tap_ok(stall_queue_ns(&e, 8) == 0, "queue bound: 0 before the NIC's first gap");
	after(&e, 100, 52 * MS, floor);
	tap_ok(stall_queue_ns(&e, 0) == 0, "queue bound: 0 with nothing queued");
	b = stall_queue_ns(&e, 8);
	tap_ok(b >= 8 * 52 * MS && b <= 3 * 8 * 52 * MS,
	       "8 chunks queued on a NIC that completes one each 52 ms (64 KiB at 10 Mbit/s): %.1f ms",
	       b / 1e6);
	tap_ok(stall_queue_ns(&e, 16) > b,
	       "twice the queue (a failed rail's chunks): a longer bound (%.1f ms)",
	       stall_queue_ns(&e, 16) / 1e6);
	{
		struct stall_est rail = { 0 };

		tap_ok(stall_bound_queued(&rail, &e, 8, floor) == b,
		       "a rail with no history behind 8 queued chunks: the queue's bound (%.1f ms)",
		       b / 1e6);
		tap_ok(stall_bound_queued(&rail, &e, 1000, floor) ==
		       STALL_ADAPT_CEIL * floor,
		       "1000 queued: capped at %d times the floor", STALL_ADAPT_CEIL);
	}
	return tap_done();
}
