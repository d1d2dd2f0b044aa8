// SPDX-License-Identifier: GPL-2.0-only
/*
 * Workloads: training iterations grow with the bandwidth a failure takes
 * and shrink back when the gradient allreduce is hidden; tensor-parallel
 * serving is untouched by NIC failures inside one node and slowed across
 * nodes; NCCL's abort costs serving whole batches of requests.
 */
#include "simtest.h"

static double iter(const struct fabric *f, const struct workload *w,
		   const double *fr, enum strat_id s)
{
	struct state_view v = { .f = f, .frac = fr, .strat = s };
	double *scratch = calloc(f->nodes + 1, sizeof(double)), x;

	x = wl_iter_time(w, &v, scratch);
	free(scratch);
	return x;
}

int main(void)
{
	struct fabric f = fab_make(32, 8, 8, 400);
	struct workload w = {
		.kind = WL_TRAIN, .model = 2, .tp = 8, .pp = 4, .batch = 256,
		.seq = 4096, .micro = 8, .mfu = 0.4, .gpu_flops = 989e12,
		.prompt = 2048, .output = 128, .concurrency = 16,
		.hbm_bw = 3.35e12,
	};
	double *fr = frac_up(&f), nf, bal, nccl, ov, hidden;
	struct detect_params d = { .ib_timeout = 20, .ib_retry = 7,
				   .restart = 120, .r2ccl_detect = 5 };
	struct event e = { .t = 10.0, .node = 0, .nic = 0 };
	struct trace tr = { 0 };
	struct run_result r;
	char err[128];

	f.alpha = 5e-6;
	f.intra_bw = 450e9;
	tap_plan(9);
	tap_ok(!wl_check(&w, &f, err, sizeof(err)), "GPT-70B tp8 pp4 on 256 "
	       "GPUs is a valid layout");
	nf = iter(&f, &w, fr, ST_R2CC);
	fr[5 * 8 + 3] = 0.0;
	bal = iter(&f, &w, fr, ST_BALANCE);
	nccl = iter(&f, &w, fr, ST_NCCL_FO);
	tap_ok(nf > 0 && bal > nf && nccl > bal,
	       "one NIC lost: failover %.4g > balance %.4g > none %.4g s",
	       nccl, bal, nf);
	tap_ok(iter(&f, &w, fr, ST_R2CC) <= bal * (1 + 1e-12),
	       "r2cc never slower than balance in training");
	w.overlap = 1.0;
	hidden = iter(&f, &w, fr, ST_BALANCE);
	fr[5 * 8 + 3] = 1.0;
	ov = iter(&f, &w, fr, ST_BALANCE);
	tap_ok(hidden <= bal && hidden - ov <= bal - nf,
	       "hiding the allreduce behind backward hides the failure too");
	w.tp = 3;
	tap_ok(wl_check(&w, &f, err, sizeof(err)) != 0,
	       "tp that does not divide a node is refused: %s", err);

	/* serving, tp 8 inside one node: NIC failures cost nothing */
	w.kind = WL_SERVE;
	w.tp = 8;
	nf = iter(&f, &w, fr, ST_R2CC);
	fr[0] = 0.0;
	tap_ok(nf > 0 && iter(&f, &w, fr, ST_BALANCE) == nf,
	       "serving inside a node: a NIC failure changes nothing");
	/* tp 16 over nodes 0 and 1 */
	w.tp = 16;
	fr[0] = 1.0;
	nf = iter(&f, &w, fr, ST_R2CC);
	fr[0] = 0.0;
	tap_ok(iter(&f, &w, fr, ST_BALANCE) > nf,
	       "serving across nodes: a NIC failure slows the replica");
	fr[0] = 1.0;

	if (trace_add(&tr, &e) || sim_run(&f, &w, &d, &tr, 50, ST_NCCL,
					  false, &r))
		return KSFT_FAIL;
	tap_ok(r.aborts == 1 && r.recomputed == w.concurrency &&
	       r.total > r.ideal + 120,
	       "nccl serving: abort recomputes the in-flight batch (%ld)",
	       r.recomputed);
	run_result_free(&r);
	if (sim_run(&f, &w, &d, &tr, 50, ST_R2CC, false, &r))
		return KSFT_FAIL;
	tap_ok(r.aborts == 0 && r.recomputed == 0 &&
	       r.tpot_worst > 0 && r.ttft_worst > 0,
	       "r2cc serving: no request recomputed; TTFT %.4g s TPOT %.4g "
	       "ms", r.ttft_worst, r.tpot_worst * 1e3);
	run_result_free(&r);
	trace_free(&tr);
	free(fr);
	return tap_done();
}
