// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine and the strategies' detection and recovery, against hand
 * arithmetic: a failure in the middle of an iteration, NCCL's transport
 * timeout then restart from the last checkpoint, port failover's partner
 * and its abort on a second failure in the same fused NIC, r2cc's port
 * and silent detection, failback on repair, and all-NICs-down.
 */
#include "simtest.h"

static struct run_result go(const struct fabric *f, const struct workload *w,
			    const struct detect_params *d,
			    const struct event *ev, int nev, long iters,
			    enum strat_id s)
{
	struct trace tr = { 0 };
	struct run_result r;
	int i;

	for (i = 0; i < nev; i++)
		if (trace_add(&tr, &ev[i]))
			exit(KSFT_FAIL);
	trace_sort(&tr);
	if (sim_run(f, w, d, &tr, iters, s, true, &r))
		exit(KSFT_FAIL);
	trace_free(&tr);
	return r;
}

int main(void)
{
	struct fabric f = fab_make(4, 1, 4, 80);	/* 10 GB/s per NIC */
	struct workload w = wl_coll(COLL_ALLREDUCE, 40e9);
	struct detect_params d = {
		.ib_timeout = 20, .ib_retry = 7, .r2ccl_detect = 5,
		.port_detect = 10e-6, .stall_detect = 0.1, .restart = 600,
		.ckpt_interval = 100,
	};
	/* failure-free: 2*3/4 * 40e9 / 40e9 = 1.5 s per iteration */
	double it = 1.5, x;
	struct event mid[] = {
		{ .t = 0.75, .node = 2, .nic = 1, .frac = 0.0 },
	};
	struct event fix[] = {
		{ .t = 0.75, .node = 2, .nic = 1, .frac = 0.0 },
		{ .t = 10.0, .node = 2, .nic = 1, .frac = 1.0 },
	};
	struct event pair[] = {
		{ .t = 1.0, .node = 0, .nic = 0, .frac = 0.0 },
		{ .t = 2.0, .node = 0, .nic = 1, .frac = 0.0 },
	};
	struct event apart[] = {
		{ .t = 1.0, .node = 0, .nic = 0, .frac = 0.0 },
		{ .t = 2.0, .node = 0, .nic = 2, .frac = 0.0 },
	};
	struct event all[] = {
		{ .t = 1.0, .node = 3, .nic = 0, .frac = 0.0 },
		{ .t = 1.0, .node = 3, .nic = 1, .frac = 0.0 },
		{ .t = 1.0, .node = 3, .nic = 2, .frac = 0.0 },
		{ .t = 1.0, .node = 3, .nic = 3, .frac = 0.0, .silent = true },
	};
	struct event silent[] = {
		{ .t = 0.75, .node = 2, .nic = 1, .frac = 0.0,
		  .silent = true },
	};
	struct run_result r;
	int i, ok;

	tap_plan(12);
	tap_ok(close_rel(ib_timeout_s(20, 7), 4.096e-6 * 1048576 * 7, 1e-12)
	       && close_rel(ib_timeout_s(20, 7), 30.064771072, 1e-12),
	       "IB timeout with NCCL defaults: 30.06 s");

	/*
	 * r2cc: half an iteration done, 10 us stall, the rest on the weighted
	 * ring (faster than R2CC-AllReduce's 1 + X/c (2n-3)/(n-1) here):
	 * 2(n-1)/(n-2+2 beta) D/B for n = 4, beta = 3/4, against the healthy
	 * 2(n-1)/n; the weights' quantization (1/65536) is the tolerance.
	 */
	r = go(&f, &w, &d, mid, 1, 1, ST_R2CC);
	x = 0.75 + 10e-6 + 0.75 * (6.0 / 3.5) / 1.5;
	tap_ok(close_rel(r.total, x, 1e-5),
	       "r2cc: mid-iteration failure, 10 us stall, rest at the "
	       "weighted ring's speed (%.9g s, %.9g expected)", r.total, x);
	tap_ok(close_rel(r.stall, 10e-6, 1e-9), "r2cc port detection 10 us");
	run_result_free(&r);

	r = go(&f, &w, &d, silent, 1, 1, ST_R2CC);
	tap_ok(close_rel(r.stall, 0.1, 1e-9), "r2cc silent failure: the "
	       "100 ms stall bound");
	run_result_free(&r);

	/* balance: exact 1/(1-X) on the second half */
	r = go(&f, &w, &d, mid, 1, 1, ST_BALANCE);
	tap_ok(close_rel(r.total, 0.75 + 5.0 + 0.75 * 4.0 / 3.0, 1e-9),
	       "r2ccl-balance: 5 s detection, rest at 4/3 (%.9g)", r.total);
	run_result_free(&r);

	/* NCCL: 200 iterations = 300 s; checkpoint every >= 100 s */
	r = go(&f, &w, &d, mid, 1, 200, ST_NCCL);
	tap_ok(r.aborts == 1 && r.lost_iters == 0 &&
	       close_rel(r.total, 0.75 + ib_timeout_s(20, 7) + 600 + 300,
			 1e-9),
	       "nccl: timeout + restart, the partial iteration redone "
	       "(%.9g s)", r.total);
	run_result_free(&r);
	{
		struct event late = { .t = 150.0, .node = 1, .nic = 0 };

		r = go(&f, &w, &d, &late, 1, 200, ST_NCCL);
		/* checkpoint after iteration 67 (100.5 s); 100 done at 150 */
		tap_ok(r.lost_iters == 100 - 67 && close_rel(r.total,
		       150 + ib_timeout_s(20, 7) + 600 + (200 - 67) * it,
		       1e-9), "nccl: work since the checkpoint is lost "
		       "(%ld iterations)", r.lost_iters);
		run_result_free(&r);
	}

	/* port failover: partner carries two shares; same group aborts */
	r = go(&f, &w, &d, apart, 2, 20, ST_NCCL_FO);
	tap_ok(r.aborts == 0 && close_rel(r.worst_iter, 2 * it, 1e-9),
	       "nccl-failover: two failures in two fused NICs, 2x slower");
	run_result_free(&r);
	r = go(&f, &w, &d, pair, 2, 20, ST_NCCL_FO);
	tap_ok(r.aborts == 1, "nccl-failover: second failure in one fused "
	       "NIC aborts");
	run_result_free(&r);

	/* failback: after the repair the iteration is 1.5 s again */
	r = go(&f, &w, &d, fix, 2, 20, ST_R2CC);
	ok = r.ntl >= 3 && r.tl[r.ntl - 1].speed == 1.0;
	for (i = 0; i < r.ntl; i++)
		tap_diag("timeline %.6g s speed %.6g", r.tl[i].t,
			 r.tl[i].speed);
	tap_ok(ok, "r2cc: back to full speed after the repair");
	run_result_free(&r);

	/* every NIC of a node lost: every strategy must restart */
	ok = 1;
	for (i = 0; i < ST_NR; i++) {
		r = go(&f, &w, &d, all, 4, 5, i);
		ok &= r.aborts == 1;
		run_result_free(&r);
	}
	tap_ok(ok, "all NICs of a node down: every strategy restarts");

	/* degraded (not down) NIC: no detection stall, NCCL throttled */
	{
		struct event deg = { .t = 0.0, .node = 0, .nic = 3,
				     .frac = 0.25 };

		r = go(&f, &w, &d, &deg, 1, 4, ST_NCCL);
		tap_ok(r.stall == 0 && close_rel(r.worst_iter, 4 * it, 1e-9),
		       "nccl: a NIC at 1/4 speed slows the node 4x, no "
		       "abort");
		run_result_free(&r);
	}
	return tap_done();
}
