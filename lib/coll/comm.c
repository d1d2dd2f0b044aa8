// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The communicator: a ring of connections (each rank sends to the next
 * and receives from the previous), and the staging slots every slice
 * passes through, registered once on every NIC.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll.h"
#include "base/base.h"
#include "platform/platform.h"

#define GOODBYE_MS	30000u	/* destroy waits this long for the neighbours */

/* The transport's option rule (tune.c), and an option's own value in range too. */
static int comm_tune(struct r2cc_ctx *ctx, uint32_t val, const char *env,
		     uint32_t def, uint32_t lo, uint32_t hi, uint32_t *out)
{
	if (val && (val < lo || val > hi))
		return -EINVAL;
	return tune_u32(ctx, val, env, def, lo, hi, out);
}

/* Connect to the next rank and accept the previous one. */
static int comm_connect(struct r2cc_comm *c, struct r2cc_boot *boot,
			uint64_t primary, uint32_t timeout_ms)
{
	int next = (c->rank + 1) % c->n, ret;

	ret = coll_wire(c, boot, primary, &next, &c->next, 1, &c->prev, 1,
			clock_now_ns() + timeout_ms * 1000000ull);
	if (ret)
		log_msg(c->ctx, R2CC_LOG_ERROR,
			"communicator rank %d of %d: connecting the ring: %s",
			c->rank, c->n, strerror(-ret));
	return ret;
}

/*
 * The collectives' mesh (R2CC_COMM_MESH): the ring is two of its
 * connections.  Then how small an allreduce must be to go by recursive
 * doubling: the cost model's crossover for this rank's NICs and
 * $R2CC_COLL_ALPHA_US, or $R2CC_COLL_RD_MAX; every rank takes the
 * smallest, so all choose alike.
 */
static int comm_mesh(struct r2cc_comm *c, struct r2cc_boot *boot,
		     uint64_t primary, uint32_t timeout_ms)
{
	uint64_t mbps = 0, mine, *all;
	uint32_t alpha, rd_max;
	int i, ret;

	for (i = 0; i < c->nnics; i++)
		mbps += c->nic_mbps[i];
	ret = tune_u32(c->ctx, 0, "R2CC_COLL_ALPHA_US", 10, 0, 1000000,
		       &alpha);
	if (!ret)
		ret = tune_u32(c->ctx, 0, "R2CC_COLL_RD_MAX",
			       (uint32_t)coll_rd_crossover(c->n, alpha,
								mbps / 8.0,
								c->slice),
			       0, c->slice, &rd_max);
	if (ret)
		return ret;
	ret = coll_mesh_connect(c, boot, primary, timeout_ms, &c->cto,
				&c->cfrom);
	if (ret)
		return ret;
	c->next = c->cto[(c->rank + 1) % c->n];
	c->prev = c->cfrom[(c->rank + c->n - 1) % c->n];
	all = calloc((size_t)c->n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	mine = rd_max;
	ret = r2cc_boot_allgather(boot, &mine, sizeof(mine), all);
	for (i = 0; i < c->n && !ret; i++)
		mine = all[i] < mine ? all[i] : mine;
	free(all);
	c->rd_max = (size_t)mine;
	return ret;
}

static int comm_stage(struct r2cc_comm *c)
{
	/* every slot's header aligned, whatever the slice size */
	size_t slot = (sizeof(struct coll_hdr) + c->slice + 63) & ~(size_t)63;
	size_t i, k = 0;
	size_t nslots = (1 + (size_t)c->sets) * c->depth;
	struct coll_slot *s;
	int ret;

	c->stage_len = nslots * slot;
	if (posix_memalign((void **)&c->stage, 4096, c->stage_len))
		return -ENOMEM;
	memset(c->stage, 0, c->stage_len);
	ret = r2cc_mr_reg(c->ctx, c->stage, c->stage_len, 0, &c->mr);
	if (ret)
		return ret;
	s = calloc(nslots, sizeof(*s));
	if (!s)
		return -ENOMEM;
	c->local = s;
	for (i = 0; i < c->sets; i++)
		c->recv[i] = s + (1 + i) * c->depth;
	for (i = 0; i < nslots; i++)
		s[i].buf = c->stage + k++ * slot;
	return 0;
}

static void comm_free(struct r2cc_comm *c);

static const char *const algo_names[] = {
	[R2CC_COLL_ALGO_AUTO] = "auto",
	[R2CC_COLL_ALGO_RING] = "ring",
	[R2CC_COLL_ALGO_WEIGHTED] = "weighted",
	[R2CC_COLL_ALGO_OPTIMAL] = "optimal",
	[R2CC_COLL_ALGO_R2CC_AR] = "r2cc-ar",
};

#define NALGOS	(int)(sizeof(algo_names) / sizeof(algo_names[0]))

/*
 * What every rank must choose alike, as r2cc_comm_init() gathers it, and
 * whether its own setup failed so far (@err, -errno): every rank takes
 * part in the gather even then, so that none is left waiting in it.
 */
struct comm_choice {
	uint32_t algo, slice, depth, sets, mesh;
	int32_t err;
};

static const char *const choice_names[] = {
	"R2CC_ALGO", "slice_bytes (R2CC_COLL_SLICE)", "depth (R2CC_COLL_DEPTH)",
	"R2CC_COLL_SETS", "the mesh (R2CC_COMM_MESH or R2CC_COLL_MESH)",
};

/*
 * The first field in which @a and @b differ, as its index into
 * choice_names, with the two values in *@x and *@y; or -1.
 */
static int choice_differs(const struct comm_choice *a,
			  const struct comm_choice *b, uint32_t *x, uint32_t *y)
{
	const uint32_t p[] = { a->algo, a->slice, a->depth, a->sets, a->mesh };
	const uint32_t q[] = { b->algo, b->slice, b->depth, b->sets, b->mesh };
	int i;

	for (i = 0; i < (int)(sizeof(p) / sizeof(p[0])); i++)
		if (p[i] != q[i]) {
			*x = p[i];
			*y = q[i];
			return i;
		}
	return -1;
}

/* This rank's allreduce algorithm: the option, else $R2CC_ALGO, else auto. */
static int algo_choose(struct r2cc_comm *c, uint32_t opt, bool mesh,
		       uint32_t *algo)
{
	const char *env = getenv("R2CC_ALGO");
	int i;

	if (opt >= NALGOS)
		return -EINVAL;
	/* the paper's Balance is the ring over the rails that are left */
	if (env && !strcmp(env, "balance"))
		env = algo_names[R2CC_COLL_ALGO_RING];
	for (i = 0; !opt && env && *env && i < NALGOS; i++)
		if (!strcmp(env, algo_names[i]))
			break;
	if (!opt && env && *env && i == NALGOS) {
		log_msg(c->ctx, R2CC_LOG_ERROR,
			"R2CC_ALGO=%s: want auto, ring (or balance), weighted, optimal or r2cc-ar",
			env);
		return -EINVAL;
	}
	*algo = !opt && env && *env ? (uint32_t)i : opt;
	if ((*algo == R2CC_COLL_ALGO_OPTIMAL ||
	     *algo == R2CC_COLL_ALGO_R2CC_AR) && !mesh && c->n > 1) {
		log_msg(c->ctx, R2CC_LOG_ERROR,
			"communicator rank %d: the %s allreduce needs the mesh (R2CC_COMM_MESH)",
			c->rank, algo_names[*algo]);
		return -EINVAL;
	}
	return 0;
}

/*
 * The allreduce algorithm, the same on every rank, or ranks would cut the
 * data differently.  So must the slicing be: it sets every message's size
 * and order, and auto's choice (coll/model/sched.c) depends on it; and the
 * mesh, or ranks would wait for connections others never make.  @err: this
 * rank's setup failed before (-errno); it still takes part in the gather,
 * and every rank then fails, none waiting for it.
 */
static int comm_algo(struct r2cc_comm *c, struct r2cc_boot *boot,
		     uint32_t opt, bool mesh, int err)
{
	struct comm_choice mine = { 0, c->slice, c->depth, c->sets, mesh, err };
	struct comm_choice *all;
	int i, ret;

	if (!err)
		mine.err = algo_choose(c, opt, mesh, &mine.algo);
	all = calloc((size_t)c->n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	ret = c->n > 1 ? r2cc_boot_allgather(boot, &mine, sizeof(mine), all) :
			 0;
	if (!ret && mine.err)
		ret = mine.err;
	for (i = 0; i < c->n && !ret && c->n > 1; i++) {
		uint32_t x = 0, y = 0;
		int k;

		if (all[i].err) {
			log_msg(c->ctx, R2CC_LOG_ERROR,
				"communicator rank %d: rank %d could not set up its side (%s): no communicator",
				c->rank, i, strerror(-all[i].err));
			ret = -EINVAL;
			break;
		}
		k = choice_differs(&mine, &all[i], &x, &y);
		if (k == 0)
			log_msg(c->ctx, R2CC_LOG_ERROR,
				"communicator rank %d: algorithm %s, rank %d's %s: every rank must choose the same (R2CC_ALGO)",
				c->rank, algo_names[x], i,
				y < (uint32_t)NALGOS ? algo_names[y] : "?");
		else if (k > 0)
			log_msg(c->ctx, R2CC_LOG_ERROR,
				"communicator rank %d: %s %u, rank %d's %u: every rank must choose the same",
				c->rank, choice_names[k], x, i, y);
		if (k >= 0)
			ret = -EINVAL;
	}
	free(all);
	if (ret)
		return ret;
	/*
	 * auto runs the weighted ring where the engine's schedule model has
	 * it clearly faster (coll/model/sched.c), the ring everywhere else; on the
	 * mesh, the optimal allreduce first (coll_auto_direct)
	 */
	c->weighted = mine.algo == R2CC_COLL_ALGO_WEIGHTED;
	c->w_auto = mine.algo == R2CC_COLL_ALGO_AUTO;
	c->optimal = mine.algo == R2CC_COLL_ALGO_OPTIMAL && c->n > 1;
	c->paper = mine.algo == R2CC_COLL_ALGO_R2CC_AR && c->n > 1;
	/* and the optimal allreduce where the view makes it worth it */
	c->d_auto = c->w_auto && mesh && c->n >= 3 &&
		    c->n <= COLL_AUTO_DIRECT_MAX;
	c->w = calloc((size_t)c->n, sizeof(*c->w));
	c->pw = calloc((size_t)c->n, sizeof(*c->pw));
	return c->w && c->pw ? 0 : -ENOMEM;
}

R2CC_EXPORT int r2cc_comm_init(struct r2cc_ctx *ctx, struct r2cc_boot *boot,
			       const struct r2cc_comm_opts *opts,
			       struct r2cc_comm **out)
{
	struct r2cc_comm_opts o = { .size = sizeof(o) };
	struct r2cc_comm *c;
	uint32_t mesh;
	int ret;

	if (out)
		*out = NULL;
	if (!ctx || !boot || !out)
		return -EINVAL;
	if (!handle_ok(ctx, R2CC_OBJ_CTX))
		return -EBADF;
	if (opts) {
		ret = r2cc_opts_in(&o, sizeof(o), opts);
		if (ret)
			return ret;
	}
	if ((o.flags & ~R2CC_COMM_MESH) || (o.primary && r2cc_nic_count(ctx) < 64 &&
			o.primary >> r2cc_nic_count(ctx)))
		return -EINVAL;
	/* a program that cannot say so (a framework's backend) asks here */
	ret = tune_u32(ctx, 0, "R2CC_COLL_MESH", 0, 0, 1, &mesh);
	if (ret)
		return ret;
	if (mesh)
		o.flags |= R2CC_COMM_MESH;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	c->rank = r2cc_boot_rank(boot);
	c->n = r2cc_boot_size(boot);
	if (c->rank < 0 || c->n < 1) {
		free(c);
		return -EINVAL;
	}
	ret = comm_tune(ctx, o.slice_bytes, "R2CC_COLL_SLICE",
			COLL_SLICE_DEFAULT, R2CC_COLL_SLICE_MIN,
			R2CC_COLL_SLICE_MAX, &c->slice);
	if (!ret)
		ret = comm_tune(ctx, o.depth, "R2CC_COLL_DEPTH",
				COLL_DEPTH_DEFAULT, 1, R2CC_COLL_DEPTH_MAX,
				&c->depth);
	if (!ret)
		ret = comm_tune(ctx, 0, "R2CC_COLL_SETS", COLL_SETS_DEFAULT,
				COLL_SETS_MIN, COLL_SETS_MAX, &c->sets);
	if (!ret)
		ret = coll_view_init(c);
	/* from here on, every rank knows whether every other one goes on */
	ret = comm_algo(c, boot, o.algo, o.flags & R2CC_COMM_MESH, ret);
	if (!ret && c->n > 1)
		ret = comm_stage(c);
	if (!ret && (c->optimal || c->d_auto || c->paper))
		ret = coll_direct_stage(c);
	if (!ret && c->n > 1 && (o.flags & R2CC_COMM_MESH))
		ret = comm_mesh(c, boot, o.primary,
				o.timeout_ms ? o.timeout_ms : 60000);
	else if (!ret && c->n > 1)
		ret = comm_connect(c, boot, o.primary,
				   o.timeout_ms ? o.timeout_ms : 60000);
	if (!ret && (o.flags & R2CC_COMM_MESH))
		ret = coll_mesh_connect(c, boot, o.primary,
					o.timeout_ms ? o.timeout_ms : 60000,
					&c->to, &c->from);
	if (!ret)
		ret = handle_add(c, R2CC_OBJ_COMM);
	if (ret) {
		comm_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

R2CC_EXPORT int r2cc_comm_rank(const struct r2cc_comm *c)
{
	return c && handle_ok(c, R2CC_OBJ_COMM) ? c->rank : -EINVAL;
}

R2CC_EXPORT int r2cc_comm_size(const struct r2cc_comm *c)
{
	return c && handle_ok(c, R2CC_OBJ_COMM) ? c->n : -EINVAL;
}

/*
 * Add connection @conn's counters to @o: its bytes as sent or received
 * (@out: this rank sends on it), its failures, re-sends and TCP bytes.
 */
static int stats_add(struct r2cc_conn *conn, bool out,
		     struct r2cc_comm_stats *o)
{
	struct r2cc_conn_stats cs = { .size = sizeof(cs) };
	int ret;

	if (!conn)
		return 0;
	ret = r2cc_conn_stats(conn, &cs, NULL, 0);
	if (ret < 0)
		return ret;
	if (out)
		o->bytes_sent += cs.bytes;
	else
		o->bytes_received += cs.bytes;
	o->failovers += cs.failovers;
	o->resent_bytes += cs.resent_bytes;
	o->tcp_bytes += cs.tcp_bytes;
	return 0;
}

/*
 * Every connection of the communicator, each once: the ring's two, or the
 * collectives' mesh (which holds them), and the point-to-point mesh.
 */
static int stats_conns(struct r2cc_comm *c, struct r2cc_comm_stats *o)
{
	int i, ret = 0;

	if (!c->cto) {
		ret = stats_add(c->next, true, o);
		if (!ret)
			ret = stats_add(c->prev, false, o);
	}
	for (i = 0; i < c->n && !ret; i++) {
		if (c->cto)
			ret = stats_add(c->cto[i], true, o);
		if (!ret && c->cfrom)
			ret = stats_add(c->cfrom[i], false, o);
		if (!ret && c->to)
			ret = stats_add(c->to[i], true, o);
		if (!ret && c->from)
			ret = stats_add(c->from[i], false, o);
	}
	return ret;
}

R2CC_EXPORT int r2cc_comm_stats(struct r2cc_comm *c, struct r2cc_comm_stats *st)
{
	struct r2cc_comm_stats o = { .size = sizeof(o) };
	int ret;

	if (!c || !st || r2cc_opts_out_check(r2cc_opts_size(st)))
		return -EINVAL;
	if (!handle_ok(c, R2CC_OBJ_COMM))
		return -EBADF;
	o.colls = c->done;
	o.colls_rd = c->done_rd;
	o.rd_max = c->rd_max;
	o.colls_weighted = c->done_w;
	o.colls_optimal = c->done_direct;
	o.colls_r2cc_ar = c->done_paper;
	ret = stats_conns(c, &o);
	if (ret)
		return ret;
	r2cc_opts_out(st, &o, sizeof(o));
	return 0;
}

static void comm_free(struct r2cc_comm *c)
{
	/*
	 * Closing cancels what is posted: no DMA into the slots, or into a
	 * point-to-point buffer, after this; then their registrations go.
	 */
	if (c->next && !c->cto)
		r2cc_conn_close(c->next);
	if (c->prev && !c->cfrom)
		r2cc_conn_close(c->prev);
	coll_close_all(c->cto, c->n);
	coll_close_all(c->cfrom, c->n);
	coll_close_all(c->to, c->n);
	coll_close_all(c->from, c->n);
	while (c->all)
		coll_free(c->all);
	if (c->mr)
		r2cc_mr_dereg(c->mr);
	coll_direct_unstage(c);
	free(c->local);
	free(c->stage);
	free(c->nic_mbps);
	free(c->view);
	free(c->w);
	free(c->pw);
	free(c->to);
	free(c->from);
	free(c->cto);
	free(c->cfrom);
	free(c);
}

R2CC_EXPORT int r2cc_comm_destroy(struct r2cc_comm *c)
{
	if (!c)
		return -EINVAL;
	if (!handle_ok(c, R2CC_OBJ_COMM))
		return -EBADF;
	coll_goodbye(c, GOODBYE_MS);
	handle_del(c);
	comm_free(c);
	return 0;
}
