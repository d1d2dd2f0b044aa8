// SPDX-License-Identifier: GPL-2.0-only
/*
 * Failure traces: scripted specs parse or fail cleanly; random traces are
 * reproducible from the seed, sorted, alternate failure and repair per
 * NIC, and their failure count matches the exponential model.
 */
#include <string.h>

#include "simtest.h"

static int spec_ok(const char *s, bool deg, const struct fabric *f)
{
	struct trace tr = { 0 };
	char err[256] = "";
	int rc = trace_add_spec(&tr, s, deg, f, err, sizeof(err));

	trace_free(&tr);
	return rc == 0 ? 1 : (err[0] ? 0 : -1);	/* -1: failed silently */
}

int main(void)
{
	struct fabric f = fab_make(128, 8, 8, 400);
	struct random_trace r = {
		.mtbf = 1000.0, .repair = 100.0, .flap_count = 3,
		.flap_period = 1.0, .degrade_frac = 0.5, .seed = 9,
	};
	static const char *const bad[] = {
		"", "1", "1:2", "1:2@", "1:2@x", "-1:2@3", "1:-2@3",
		"1:2@-3", "1:2@3..2", "1:2@3..3", "1:2@3..", "1:2@nan",
		"1:2@inf", "1:2@1e999", "128:0@1", "0:8@1", "1:2@3/loud",
		"1:2@3 ", "99999999999:1@1", "1:2@3=0.5", "0x1:2@3",
		"1:2@1e13",
	};
	struct trace a = { 0 }, b = { 0 }, c = { 0 };
	size_t i;
	int bad_ok = 0, sorted = 1, alternate = 1, fails = 0, k;
	double expect, last[128 * 8];

	tap_plan(9);
	tap_ok(spec_ok("3:1@10", false, &f) == 1 &&
	       spec_ok("3:1@10..50", false, &f) == 1 &&
	       spec_ok("3:1@10.5..50.25/silent", false, &f) == 1 &&
	       spec_ok("127:7@0", false, &f) == 1,
	       "valid --fail specs parse");
	tap_ok(spec_ok("3:1@10..50=0.5", true, &f) == 1 &&
	       spec_ok("3:1@10=0.5", false, &f) == 0 &&
	       spec_ok("3:1@10=0", true, &f) == 0 &&
	       spec_ok("3:1@10=1", true, &f) == 0 &&
	       spec_ok("3:1@10=1.5", true, &f) == 0,
	       "--degrade needs a fraction in (0, 1)");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (spec_ok(bad[i], false, &f) != 0) {
			bad_ok++;
			tap_diag("accepted or silent: '%s'", bad[i]);
		}
	tap_ok(!bad_ok, "%zu malformed specs rejected with a message",
	       sizeof(bad) / sizeof(bad[0]));

	if (trace_random(&a, &r, &f, 50000.0) ||
	    trace_random(&b, &r, &f, 50000.0))
		return KSFT_FAIL;
	r.seed = 10;
	if (trace_random(&c, &r, &f, 50000.0))
		return KSFT_FAIL;
	tap_ok(a.n == b.n && a.n > 0 &&
	       !memcmp(a.ev, b.ev, sizeof(*a.ev) * a.n),
	       "same seed, same trace (%d events)", a.n);
	tap_ok(a.n != c.n || memcmp(a.ev, c.ev, sizeof(*a.ev) * a.n),
	       "another seed, another trace");
	for (k = 0; k < 128 * 8; k++)
		last[k] = 1.0;
	for (k = 0; k < a.n; k++) {
		const struct event *e = &a.ev[k];
		int x = e->node * 8 + e->nic;

		if (k && e->t < a.ev[k - 1].t)
			sorted = 0;
		if ((e->frac < 1.0) == (last[x] < 1.0))
			alternate = 0;
		last[x] = e->frac;
		fails += e->frac < 1.0;
	}
	tap_ok(sorted, "events sorted by time");
	tap_ok(alternate, "per NIC, failures and repairs alternate");
	/* renewal process: 1024 NICs x 50000 s / (1000 + 100) s each */
	expect = 1024 * 50000.0 / 1100.0;
	tap_ok(fabs(fails - expect) < 5 * sqrt(expect),
	       "%d failures, expected %.0f +- 5 sigma", fails, expect);
	trace_free(&a);
	trace_free(&b);
	trace_free(&c);

	/* flaps: every burst is flap_count down/up pairs */
	r.flap_prob = 1.0;
	r.mtbf = 5000.0;
	if (trace_random(&a, &r, &f, 20000.0))
		return KSFT_FAIL;
	fails = 0;
	for (k = 0; k < a.n; k++)
		fails += a.ev[k].frac == 0.0;
	tap_ok(a.n > 0 && a.n == 2 * fails && fails % 3 == 0,
	       "flapping: %d down events in bursts of 3", fails);
	trace_free(&a);
	return tap_done();
}
