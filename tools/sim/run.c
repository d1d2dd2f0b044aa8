// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine: one job, one strategy, a sorted failure trace.  Time only
 * moves at iteration ends and at events; an iteration's cost is computed
 * again only when the failure state changed, so the work grows with
 * iterations + events x (cost of one state), not iterations x cluster.
 *
 * An event lands inside an iteration: the part already done is kept (or
 * lost, if the strategy aborts) and the rest runs at the new speed, after
 * the strategy's detection stall.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static void tl_push(struct run_result *r, double t, double speed)
{
	if (r->captl < 0)
		return;
	if (r->ntl && r->tl[r->ntl - 1].speed == speed)
		return;
	if (r->ntl == r->captl) {
		int cap = r->captl ? r->captl * 2 : 256;
		struct tl_point *p = realloc(r->tl, sizeof(*p) * cap);

		if (!p) {
			r->captl = -1;	/* the plot loses detail, not the run */
			return;
		}
		r->tl = p;
		r->captl = cap;
	}
	r->tl[r->ntl].t = t;
	r->tl[r->ntl].speed = speed;
	r->ntl++;
}

void run_result_free(struct run_result *r)
{
	free(r->tl);
	r->tl = NULL;
	r->ntl = r->captl = 0;
}

/* Would the strategy have to abort in this state? */
static bool must_abort(const struct fabric *f, const double *view, int used,
		       enum strat_id s)
{
	const struct strategy *st = &strategies[s];
	int i, k;

	for (i = 0; i < used; i++) {
		const double *fr = view + (size_t)i * f->nics;

		if (st->abort_on_down)
			for (k = 0; k < f->nics; k++)
				if (fr[k] <= 0.0)
					return true;
		if (node_bw(f, fr, st->share, NULL) <= 0.0)
			return true;
	}
	return false;
}

struct job {
	const struct fabric *f;
	const struct workload *w;
	struct state_view v;
	double *actual, *view, *scratch;
	bool *swapped;
	int used;
};

static double cost(struct job *j, struct run_result *res)
{
	double t = wl_iter_time(j->w, &j->v, j->scratch);

	res->evals++;
	if (t > res->worst_iter)
		res->worst_iter = t;
	if (j->w->kind == WL_SERVE) {
		double a = wl_ttft(j->w, &j->v, j->scratch);
		double b = wl_tpot(j->w, &j->v, j->scratch);

		if (a > res->ttft_worst)
			res->ttft_worst = a;
		if (b > res->tpot_worst)
			res->tpot_worst = b;
	}
	return t;
}

int sim_run(const struct fabric *f, const struct workload *w,
	    const struct detect_params *d, const struct trace *tr,
	    long iters, enum strat_id s, bool timeline,
	    struct run_result *res)
{
	size_t nk = (size_t)f->nodes * f->nics, i;
	struct job j = { .f = f, .w = w };
	double t = 0.0, remaining = 1.0, last_ckpt = 0.0, ideal_it, it;
	long done = 0, ckpt_done = 0;
	int ev = 0, rc = -1;
	bool dirty = false;

	memset(res, 0, sizeof(*res));
	res->strat = s;
	res->captl = timeline ? 0 : -1;
	j.actual = malloc(sizeof(double) * nk);
	j.view = malloc(sizeof(double) * nk);
	j.swapped = calloc(nk, sizeof(bool));
	j.scratch = malloc(sizeof(double) * (wl_scratch_len(f) + 1));
	if (!j.actual || !j.view || !j.swapped || !j.scratch)
		goto out;
	for (i = 0; i < nk; i++)
		j.actual[i] = j.view[i] = 1.0;
	j.v = (struct state_view){ .f = f, .frac = j.view, .strat = s };
	j.used = wl_nodes_used(w, f);

	ideal_it = it = cost(&j, res);
	res->ideal = iters * ideal_it;
	if (d->ckpt_interval > 0.0)
		res->ideal += floor(res->ideal / d->ckpt_interval) *
			      d->ckpt_cost;
	tl_push(res, 0.0, 1.0);

	while (done < iters) {
		double t_end, te, stall;
		bool failing = false, silent = false;

		if (dirty) {
			it = cost(&j, res);
			dirty = false;
			tl_push(res, t, ideal_it / it);
		}
		t_end = t + remaining * it;
		if (ev >= tr->n || tr->ev[ev].t >= t_end) {
			t = t_end;
			remaining = 1.0;
			done++;
			if (w->kind == WL_SERVE) {
				/* finished requests stay finished */
				ckpt_done = done;
			} else if (d->ckpt_interval > 0.0 &&
				   t - last_ckpt >= d->ckpt_interval) {
				ckpt_done = done;
				last_ckpt = t;
				t += d->ckpt_cost;
			}
			continue;
		}
		te = tr->ev[ev].t > t ? tr->ev[ev].t : t;
		remaining -= (te - t) / it;
		if (remaining < 0.0)
			remaining = 0.0;
		t = te;
		for (; ev < tr->n && tr->ev[ev].t <= te; ev++) {
			const struct event *e = &tr->ev[ev];
			size_t x = (size_t)e->node * f->nics + e->nic;
			double old = j.view[x];

			if (e->node >= j.used)
				continue;
			j.actual[x] = e->frac;
			if (j.swapped[x]) {
				/* replaced at restart; its repair is moot */
				if (e->frac >= 1.0)
					j.swapped[x] = false;
				continue;
			}
			if (e->frac == old)
				continue;
			j.view[x] = e->frac;
			dirty = true;
			if (e->frac <= 0.0) {
				failing = true;
				silent |= e->silent;
			}
		}
		if (!failing)
			continue;
		stall = strat_detect(s, d, silent);
		tl_push(res, t, 0.0);
		res->stall += stall;
		t += stall;
		if (must_abort(f, j.view, j.used, s)) {
			res->aborts++;
			res->down += d->restart;
			t += d->restart;
			res->lost_iters += done - ckpt_done;
			if (w->kind == WL_SERVE)
				res->recomputed += w->concurrency;
			done = ckpt_done;
			remaining = 1.0;
			last_ckpt = t;
			/* the restarted job runs on replaced hardware */
			for (i = 0; i < nk; i++)
				if (j.actual[i] < 1.0) {
					j.swapped[i] = true;
					j.view[i] = 1.0;
				}
		}
		dirty = true;
	}
	res->total = t;
	rc = 0;
out:
	free(j.actual);
	free(j.view);
	free(j.swapped);
	free(j.scratch);
	return rc;
}
