// SPDX-License-Identifier: GPL-2.0-only
/*
 * Workloads: what one "iteration" costs in a given failure state.
 *
 *   coll    one collective over every node (microbenchmarks, validation);
 *   train   a GPT-class model with tensor (inside a node), pipeline and
 *           data parallelism: compute + pipeline bubble + the exposed part
 *           of the gradient allreduce and of the stage-to-stage transfers;
 *   serve   one tensor-parallel replica serving a batch of requests:
 *           prefill (TTFT) then one decode step per output token (TPOT).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* Public sizes: GPT-3 (Brown et al. 2020), Llama 2/3 model cards. */
const struct model_desc models[] = {
	{ "gpt-7b", 6.7e9, 32, 4096 },
	{ "gpt-13b", 13e9, 40, 5120 },
	{ "gpt-70b", 70e9, 80, 8192 },
	{ "gpt-175b", 175e9, 96, 12288 },
	{ "gpt-405b", 405e9, 126, 16384 },
	{ NULL, 0, 0, 0 },
};

int model_parse(const char *s)
{
	int i;

	for (i = 0; models[i].name; i++)
		if (!strcmp(s, models[i].name))
			return i;
	return -1;
}

size_t wl_scratch_len(const struct fabric *f)
{
	return (size_t)f->nodes;
}

/* Nodes of one serving replica: tensor parallelism may span nodes. */
static int serve_nodes(const struct workload *w, const struct fabric *f)
{
	return w->tp <= f->gpus ? 1 : w->tp / f->gpus;
}

int wl_nodes_used(const struct workload *w, const struct fabric *f)
{
	return w->kind == WL_SERVE ? serve_nodes(w, f) : f->nodes;
}

static int dp_size(const struct workload *w, const struct fabric *f)
{
	return f->nodes * f->gpus / (w->tp * w->pp);
}

static int microbatches(const struct workload *w, const struct fabric *f)
{
	int per = w->batch / dp_size(w, f), m = w->micro;

	return m > per ? per : m;
}

int wl_check(const struct workload *w, const struct fabric *f,
	     char *err, int errlen)
{
	if (w->kind == WL_TRAIN) {
		if (w->tp > f->gpus || f->gpus % w->tp) {
			snprintf(err, errlen, "--tp %d must divide the %d GPUs "
				 "of a node", w->tp, f->gpus);
			return -1;
		}
		if (f->nodes % w->pp) {
			snprintf(err, errlen, "--pp %d must divide the %d "
				 "nodes", w->pp, f->nodes);
			return -1;
		}
		if (w->batch < dp_size(w, f)) {
			snprintf(err, errlen, "--batch %d is smaller than the "
				 "data-parallel size %d", w->batch,
				 dp_size(w, f));
			return -1;
		}
		if (models[w->model].layers < w->pp) {
			snprintf(err, errlen, "--pp %d exceeds the %d layers "
				 "of %s", w->pp, models[w->model].layers,
				 models[w->model].name);
			return -1;
		}
	}
	if (w->kind == WL_SERVE) {
		if (w->tp > f->gpus ? w->tp % f->gpus : f->gpus % w->tp) {
			snprintf(err, errlen, "--tp %d must divide, or be a "
				 "multiple of, the %d GPUs of a node", w->tp,
				 f->gpus);
			return -1;
		}
		if (serve_nodes(w, f) > f->nodes) {
			snprintf(err, errlen, "--tp %d needs %d nodes, the "
				 "cluster has %d", w->tp, serve_nodes(w, f),
				 f->nodes);
			return -1;
		}
	}
	return 0;
}

/*
 * Time of one collective over nodes [first, first + n) as the strategy
 * runs it: its sharing policy sets each node's bandwidth, and among the
 * allreduce schedules it may use it takes the cheapest for this state and
 * size (r2cc's cost-model choice), or, for r2cc-lib, the one libr2cc's
 * auto runs.
 */
double wl_coll_time(const struct workload *w, const struct state_view *v,
		    enum coll_type t, int first, int n, double bytes,
		    double *scratch, enum ar_algo *chosen)
{
	const struct strategy *st = &strategies[v->strat];
	const struct fabric *f = v->f;
	unsigned int algos = st->algos;
	double best = INFINITY;
	struct plan p;
	int i, a;

	(void)w;
	if (n < 2 || bytes <= 0.0)
		return 0.0;
	for (i = 0; i < n; i++) {
		scratch[i] = node_bw(f, v->frac + (size_t)(first + i) * f->nics,
				     st->share, NULL);
		if (scratch[i] <= 0.0)
			return INFINITY;
	}
	if (st->lib_auto && t == COLL_ALLREDUCE) {
		int pick = ar_lib_auto(scratch, n, bytes, st->lib_mesh);

		if (pick < 0)
			return INFINITY;
		algos = 1u << pick;
	}
	if (plan_init(&p, n, 4))
		return INFINITY;
	for (a = 0; a < AR_NR; a++) {
		double x;

		if (t == COLL_ALLREDUCE ? !(algos & (1u << a)) : a > 0)
			continue;
		if (coll_plan(&p, t, a, scratch, n, bytes, f))
			continue;
		x = plan_time(&p, scratch);
		if (x < best) {
			best = x;
			if (chosen)
				*chosen = a;
		}
	}
	plan_free(&p);
	return best;
}

static double intra_allreduce(const struct fabric *f, int g, double bytes)
{
	return g > 1 ? 2.0 * (g - 1) / g * bytes / f->intra_bw : 0.0;
}

static double train_iter(const struct workload *w, const struct state_view *v,
			 double *scratch)
{
	const struct fabric *f = v->f;
	const struct model_desc *m = &models[w->model];
	int dp = dp_size(w, f), mb = microbatches(w, f);
	int per_stage = f->nodes / w->pp, s, i;
	double tokens = (double)w->batch * w->seq;
	double compute = 6.0 * m->params * tokens /
			 ((double)f->nodes * f->gpus * w->gpu_flops * w->mfu);
	double seqs = (double)w->batch / dp / mb;
	double act = seqs * w->seq * m->hidden * 2.0;	/* bf16 */
	double tp = (double)m->layers / w->pp * 4.0 * mb *
		    intra_allreduce(f, w->tp, act);
	double bubble = compute * (w->pp - 1) / mb;
	double grads = 2.0 * m->params / w->pp;		/* bf16, per node */
	double dp_worst = 0.0, pp_comm = 0.0;

	for (s = 0; s < w->pp; s++) {
		double x = wl_coll_time(w, v, COLL_ALLREDUCE, s * per_stage,
					per_stage, grads, scratch, NULL);
		/* the part that backward (2/3 of compute) does not hide */
		x -= w->overlap * compute * 2.0 / 3.0;
		if (x > dp_worst)
			dp_worst = x;
	}
	/* fill and drain cross every stage boundary, forward and backward */
	for (s = 0; s + 1 < w->pp; s++) {
		double worst = 0.0;

		for (i = 0; i < per_stage; i++) {
			double pbw[2], x;

			/* two nodes, possibly far apart: gather their bw */
			pbw[0] = node_bw(f, v->frac + (size_t)(s * per_stage +
					 i) * f->nics,
					 strategies[v->strat].share, NULL);
			pbw[1] = node_bw(f, v->frac + (size_t)((s + 1) *
					 per_stage + i) * f->nics,
					 strategies[v->strat].share, NULL);
			if (pbw[0] <= 0.0 || pbw[1] <= 0.0)
				return INFINITY;
			x = f->alpha + act * f->gpus / w->tp /
			    (pbw[0] < pbw[1] ? pbw[0] : pbw[1]);
			if (x > worst)
				worst = x;
		}
		pp_comm += 2.0 * worst;
	}
	return compute + bubble + tp + dp_worst + pp_comm;
}

/* Per layer two allreduces (attention and MLP outputs), inside and across
 * nodes; a replica spans nodes [0, serve_nodes). */
static double tp_comm(const struct workload *w, const struct state_view *v,
		      double bytes, double *scratch)
{
	const struct fabric *f = v->f;
	int g = w->tp < f->gpus ? w->tp : f->gpus;
	double x = intra_allreduce(f, g, bytes) +
		   wl_coll_time(w, v, COLL_ALLREDUCE, 0, serve_nodes(w, f),
				bytes, scratch, NULL);

	return 2.0 * models[w->model].layers * x;
}

double wl_ttft(const struct workload *w, const struct state_view *v,
	       double *scratch)
{
	const struct model_desc *m = &models[w->model];
	double tokens = (double)w->prompt * w->concurrency;

	return 2.0 * m->params * tokens / (w->tp * w->gpu_flops * w->mfu) +
	       tp_comm(w, v, tokens * m->hidden * 2.0, scratch);
}

double wl_tpot(const struct workload *w, const struct state_view *v,
	       double *scratch)
{
	const struct model_desc *m = &models[w->model];
	double flops = 2.0 * m->params * w->concurrency /
		       (w->tp * w->gpu_flops * w->mfu);
	double weights = 2.0 * m->params / w->tp / w->hbm_bw;

	/* decode is bound by reading the weights unless the batch is big */
	return (flops > weights ? flops : weights) +
	       tp_comm(w, v, (double)w->concurrency * m->hidden * 2.0,
		       scratch);
}

double wl_iter_time(const struct workload *w, const struct state_view *v,
		    double *scratch)
{
	switch (w->kind) {
	case WL_COLL:
		return wl_coll_time(w, v, w->coll, 0, v->f->nodes, w->size,
				    scratch, NULL);
	case WL_TRAIN:
		return train_iter(w, v, scratch);
	case WL_SERVE:
		return wl_ttft(w, v, scratch) +
		       (w->output - 1) * wl_tpot(w, v, scratch);
	}
	return INFINITY;
}
