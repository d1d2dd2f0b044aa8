/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Layer 7, collectives, on top of the data API (r2cc_isend, r2cc_irecv,
 * r2cc_test): element arithmetic (reduce.c), each rank's program of
 * steps (plan.c), the communicator (comm.c), the engine that runs
 * collectives one after another (run.c), the ring (ring.c), the
 * latency-bound programs over a mesh for small allreduces, broadcasts
 * and reduces (rd.c), the optimal allreduce (direct.c) and
 * R2CC-AllReduce (paper.c).  Nothing below calls up here.
 */
#ifndef R2CC_LIB_COLL_H
#define R2CC_LIB_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <r2cc/coll.h>

#include "coll/model/model.h"

/* ------------------------------------------------------- arithmetic */

size_t coll_dtype_size(enum r2cc_dtype dt);	/* 0: not a dtype */
bool coll_op_ok(enum r2cc_redop op);
/* @acc[i] = @acc[i] OP @in[i] for @n elements (AVG sums). */
void coll_reduce(void *acc, const void *in, size_t n, enum r2cc_dtype dt,
		 enum r2cc_redop op);
/* The last step of AVG: @acc[i] /= @nranks; nothing for other ops. */
void coll_finish(void *acc, size_t n, enum r2cc_dtype dt, enum r2cc_redop op,
		 int nranks);
float coll_half_to_float(uint16_t h);
uint16_t coll_float_to_half(float f);
float coll_bf16_to_float(uint16_t h);
uint16_t coll_float_to_bf16(float f);

/* ------------------------------------------------------- programs */

enum coll_kind {
	COLL_ALLREDUCE = 1,
	COLL_REDUCE_SCATTER,
	COLL_ALLGATHER,
	COLL_BROADCAST,
	COLL_REDUCE,
	COLL_BARRIER,
	COLL_P2P,	/* sends and receives on the mesh (p2p.c) */
};

enum coll_src {
	SRC_NONE = 0,
	SRC_LOCAL,	/* this rank's own data of the chunk */
	SRC_FWD,	/* what the previous step received (and reduced) */
};

enum coll_act {
	ACT_NONE = 0,
	ACT_REDUCE,	/* combine with this rank's own data of the chunk */
	ACT_COPY,	/* a result: store it */
};

/*
 * One step of one rank: send a chunk to the next rank and/or receive one
 * from the previous rank.  A step's send of slice j depends only on the
 * previous step's receive of slice j.
 */
struct coll_step {
	int16_t send_chunk;	/* -1: none */
	int16_t recv_chunk;	/* -1: none */
	uint8_t send_src;	/* enum coll_src */
	uint8_t recv_act;	/* enum coll_act */
	bool store;		/* the received (and reduced) slice is a result */
};

#define COLL_MAX_STEPS	(2 * 4096)

/*
 * The steps rank @rank of @n runs for @kind (@root for broadcast and
 * reduce), into @steps (room for 2 x @n).  Returns the step count.
 * Where a chunk's own data lives and where results go is the engine's.
 */
int coll_plan(enum coll_kind kind, int rank, int n, int root,
	      struct coll_step *steps);
/* Chunks the data is cut into for @kind: @n for ring ones, 1 for chains. */
int coll_nchunks(enum coll_kind kind, int n);

/* Elements [*@off, *@off + *@len) of chunk @c of @nchunks over @count. */
void coll_chunk(size_t count, int nchunks, int c, size_t *off, size_t *len);

/*
 * Whose view value (view.c) the message of @step carries: the one
 * @rank sends (@send) or receives.  Ring kinds pass every rank's value
 * around the ring, one value per step; chains carry none (-1).
 */
int coll_view_rank(enum coll_kind kind, int rank, int n, int step, bool send);

/*
 * The latency-bound algorithms (rd.c), for messages small enough
 * that the per-message latency dominates: allreduce by recursive
 * doubling, in ceil(log2 n) exchanges rather than the ring's 2 (n - 1)
 * steps, and broadcast and reduce by binomial trees, ceil(log2 n) steps
 * rather than the chain's n - 1.  One step of one rank:
 */
enum coll_rd_act {
	RD_SEND = 1,	/* send the partial result to @peer (fold) */
	RD_REDUCE,	/* receive @peer's partial and combine it */
	RD_XCHG,	/* both: exchange partials with @peer and combine */
	RD_RESULT,	/* send the result to @peer (unfold) */
	RD_TAKE,	/* receive the result from @peer */
};

struct coll_rd_step {
	int16_t peer;
	uint8_t act;		/* enum coll_rd_act */
	uint8_t round;		/* the same at both ends of a message */
	bool last;		/* the reduction is complete after this step */
};

/* Room any rank's program needs: log2 of the largest n, and two. */
#define COLL_RD_MAX_STEPS	34

/* The steps of rank @rank of @n (n >= 2) into @steps; returns the count. */
int coll_rd_plan(int rank, int n, struct coll_rd_step *steps);
/* The same for a broadcast or reduce from @root by a binomial tree. */
int coll_tree_plan(enum coll_kind kind, int rank, int n, int root,
		   struct coll_rd_step *steps);
/*
 * The largest allreduce, in bytes, for which the cost model prefers
 * recursive doubling to the ring on @n ranks, each with @bytes_per_us of
 * bandwidth and @alpha_us of latency per message; capped at @cap.
 */
size_t coll_rd_crossover(int n, double alpha_us, double bytes_per_us,
			 size_t cap);

/* ------------------------------------------------------- the engine */

enum coll_algo {
	COLL_ALGO_RING = 0,
	COLL_ALGO_RD,
	COLL_ALGO_WRING,	/* the ring with chunks weighted by the view */
	COLL_ALGO_DIRECT,	/* optimal: shares reduced by every rank (direct.c) */
	COLL_ALGO_PAPER,	/* R2CC-AllReduce: a ring, then direct (paper.c) */
};

struct r2cc_coll;

/*
 * An algorithm as the engine (run.c) runs it.  @start fixes a
 * collective's geometry when it starts, not when it is issued: every rank
 * has adopted the same view by then (view.c); 0 or -errno.  @step runs it
 * as far as it goes without waiting: 1 finished, 0 not yet, -errno.
 */
struct coll_algo_ops {
	const char *name;
	int (*start)(struct r2cc_coll *q);
	int (*step)(struct r2cc_coll *q);
};

/*
 * The ring (ring.c), recursive doubling and the trees (rd.c), the optimal
 * allreduce (direct.c), R2CC-AllReduce (paper.c)
 */
extern const struct coll_algo_ops coll_ring_ops;
extern const struct coll_algo_ops coll_rd_ops;
extern const struct coll_algo_ops coll_direct_ops;
extern const struct coll_algo_ops coll_paper_ops;

/*
 * How the optimal allreduce (direct.c) reaches the mesh's
 * connections to and from rank @peer: the transport's calls, or a
 * simulated network (tests/unit/coll_direct.c).
 */
struct coll_io {
	int (*send)(struct r2cc_comm *c, int peer, void *buf, size_t len,
		    struct r2cc_req **req);
	int (*recv)(struct r2cc_comm *c, int peer, void *buf, size_t cap,
		    struct r2cc_req **req);
	int (*test)(struct r2cc_req *req, int *done, size_t *got);
};

extern const struct coll_io coll_io_mesh;

/* One peer's messages each way in an optimal allreduce, in order. */
struct coll_dlink {
	size_t n;				/* messages, the same each way */
	size_t out_post, out_done, in_post, in_done;
};

/* What each slice message starts with; checked against the receiver's call. */
struct coll_hdr {
	uint32_t magic;		/* COLL_MAGIC */
	uint32_t seq;		/* collective number on the communicator */
	uint8_t kind;		/* enum coll_kind */
	uint8_t dtype;
	uint8_t op;
	uint8_t algo;		/* enum coll_algo */
	int32_t root;
	uint64_t count;
	uint32_t chunk;
	uint32_t slice;
	uint32_t vrank;		/* whose view value this is; ~0: none */
	uint32_t vmbps;		/* that rank's usable bandwidth, Mbit/s */
};

#define COLL_MAGIC	0x4c433252u	/* "R2CL" */

/*
 * Receive slot sets (R2CC_COLL_SETS).  Receive step k of a batch uses set
 * k % sets, and a slot is received into again only once its forward has
 * been sent, so a rank receives at most sets - 1 steps ahead of its own
 * forwards, and a slow link holds back the links before it by as much.
 * Two sets keep the equal ring busy; a weighted ring that sends one big
 * chunk down a chain of 2 (n - 1) hops needs more (Documentation/coll.rst,
 * "The engine's schedule").
 */
/*
 * auto's choices kept per view (ring.c): a training loop allreduces a
 * few bucket sizes over and over.
 */
#define COLL_PICKS	16u
#define COLL_SETS_MIN	2u
#define COLL_SETS_MAX	8u

enum slot_state {
	SLOT_FREE = 0,
	SLOT_RECV,	/* a receive is posted into it */
	SLOT_HELD,	/* received; waits to be forwarded */
	SLOT_SEND,	/* a send from it is posted */
};

struct coll_slot {
	char *buf;		/* struct coll_hdr, then the slice */
	struct r2cc_req *req;
	uint8_t state;		/* enum slot_state */
};

struct r2cc_comm {
	struct r2cc_ctx *ctx;
	int rank, n;
	struct r2cc_conn *next;		/* sends to rank + 1 */
	struct r2cc_conn *prev;		/* receives from rank - 1 */
	uint32_t slice;			/* bytes of data per message */
	uint32_t depth;			/* slices per batch */
	uint32_t sets;			/* receive slot sets (R2CC_COLL_SETS) */
	char *stage;			/* (1 + sets) x depth slots, registered */
	size_t stage_len;
	struct r2cc_mr *mr;
	struct coll_slot *local;	/* depth slots: a rank's own data */
	/* depth slots each; receive step k of a batch uses set k % sets */
	struct coll_slot *recv[COLL_SETS_MAX];
	struct r2cc_coll *head, *tail;	/* issued, not finished: the queue */
	struct r2cc_coll *all;		/* every request not yet freed */
	uint32_t seq;
	uint64_t done;			/* collectives completed */
	uint64_t done_rd;		/* of them, by rd.c's programs */
	int err;			/* sticks */
	/* the agreed view (view.c) */
	int nnics;
	uint64_t *nic_mbps;		/* each NIC's bandwidth, at init */
	uint32_t *view;			/* every rank's usable bandwidth */
	uint32_t view_seq;		/* the collective that brought it */
	bool view_valid;
	uint64_t view_changes;
	/*
	 * R2CC_COMM_MESH: a connection to and one from every other rank for
	 * send/recv (@to, @from), and another such mesh for the collectives
	 * (@cto, @cfrom; @next and @prev are two of its connections).
	 */
	struct r2cc_conn **to, **from;
	struct r2cc_conn **cto, **cfrom;
	size_t rd_max;			/* up to this many bytes: rd.c */
	/*
	 * The weighted ring: forced (R2CC_ALGO=weighted) or left to the
	 * schedule model (auto), and the view's weights.
	 */
	bool weighted;
	bool w_auto;
	bool w_uneven;			/* the weights differ: use them */
	uint32_t w_seq;			/* the view they were computed from */
	bool w_valid;
	uint32_t *w;			/* n weights */
	uint64_t done_w;		/* collectives by the weighted ring */
	/* auto's answers for the view of collective pick_seq, by size */
	struct coll_auto_pick {
		size_t count, esize;
		bool weighted;
	} picks[COLL_PICKS];
	unsigned int npicks, pick_next;
	uint32_t pick_seq;
	/*
	 * The optimal allreduce (R2CC_ALGO=optimal, on the mesh): its shares
	 * of the view, and per peer dwin slots each way (peer p's at
	 * dslots + 2 p dwin, in then out), registered as dmr; dacc is where
	 * a share's slice is reduced.
	 */
	bool optimal;
	bool paper;			/* R2CC_ALGO=r2cc-ar */
	uint32_t *pw;			/* its direct part's shares, n */
	bool pa_logged;			/* its split was logged for view pa_seq */
	uint32_t pa_seq;
	/*
	 * auto on the mesh: whether it may run the optimal allreduce, and
	 * whether it does for the view of collective d_seq (ring.c).
	 */
	bool d_auto;
	bool d_pick;
	bool d_valid;
	uint32_t d_seq;
	const struct coll_io *io;
	uint32_t dw_seq;
	bool dw_valid;
	uint32_t *dw;			/* n shares of COLL_WEIGHT_ONE */
	uint32_t dwin;
	char *dstage;
	size_t dstage_len;
	struct r2cc_mr *dmr;
	struct coll_slot *dslots;
	char *dacc;
	uint64_t done_direct;		/* collectives by the optimal allreduce */
	uint64_t done_paper;		/* collectives by R2CC-AllReduce */
};

/* The requests of a point-to-point operation (one, or an all-to-all's). */
struct coll_p2p {
	struct r2cc_mr *mr[2];		/* the caller's buffers, for the call */
	size_t want;			/* bytes each receive expects */
	int nsend, nreq;		/* sends first, then receives */
	struct r2cc_req *req[];
};

struct coll_op {
	int16_t step;
	int16_t set;		/* recv steps: slot set; sends: of the step before */
};

struct r2cc_coll {
	struct r2cc_comm *comm;
	struct r2cc_coll *next;		/* in the queue */
	struct r2cc_coll *anext;	/* in comm->all */
	enum coll_kind kind;
	enum coll_algo algo;		/* on the wire; what ran, for stats */
	const struct coll_algo_ops *ops;	/* how the engine runs it */
	enum r2cc_dtype dtype;
	enum r2cc_redop op;
	int root;
	const char *src;
	char *dst;
	size_t count;			/* as called */
	size_t esize;
	uint32_t seq;
	int nsteps;
	struct coll_step *steps;
	int nchunks;
	size_t nslices;			/* per chunk */
	struct coll_op *recv_ops;	/* the steps that receive, in order */
	struct coll_op *send_ops;
	int nrecv, nsend;
	/* the batch in progress: slices [b0, b0 + bn) of every step */
	size_t b0, bn;
	size_t recv_post, recv_done, send_post, send_done;
	size_t *coff;			/* COLL_ALGO_WRING: chunk offsets, n + 1 */
	bool started;			/* its geometry is set (ops->start) */
	struct coll_p2p *p2p;		/* COLL_P2P */
	struct coll_rd_step *rd;	/* COLL_ALGO_RD: its nsteps steps */
	int rd_at;			/* the step in progress */
	bool rd_posted;
	size_t rd_got;			/* bytes its receive brought */
	struct coll_dlink *dl;		/* COLL_ALGO_DIRECT: per peer */
	size_t *doff;			/* its shares' offsets, n + 1 */
	size_t dcap, dred;		/* elements per slice; slices reduced */
	/*
	 * COLL_ALGO_PAPER: the call's count and buffers, the ring's part
	 * (elements [0, pa_ring)), the slow rank, the phase (0: the ring).
	 */
	size_t pa_count, pa_ring;
	const char *pa_src;
	char *pa_dst;
	int pa_slow, pa_phase;
	uint32_t *gather;		/* view values seen so far, by rank */
	uint8_t *have;
	bool finished;
	int err;
};

void coll_run(struct r2cc_comm *comm);
/* Log, at INFO, the view's weights @w as @what uses them. */
void coll_log_weights(const struct r2cc_comm *c, const char *what,
		      const uint32_t *w);
/*
 * A received header against this rank's call: what does not match, or
 * NULL; and the error that reports it (from @peer), -EPROTO.
 */
const char *coll_hdr_why(const struct r2cc_coll *q, const struct coll_hdr *h,
			 size_t got);
int coll_hdr_mismatch(const struct r2cc_coll *q, const struct coll_hdr *h,
		      int peer, const char *why);
void coll_hdr_fill(const struct r2cc_coll *q, struct coll_hdr *h, int chunk,
		   size_t j, int vrank);
/*
 * The optimal allreduce: its slots (at r2cc_comm_init, registered when
 * the communicator has a context), its geometry from the agreed view
 * when it starts, and a run as far as it goes (1 finished, 0, -errno).
 */
int coll_direct_stage(struct r2cc_comm *c);
void coll_direct_unstage(struct r2cc_comm *c);
int coll_direct_start(struct r2cc_coll *q);
/* The same with the shares @w (n, summing to COLL_WEIGHT_ONE), kept. */
int coll_direct_geometry(struct r2cc_coll *q, const uint32_t *w);
int coll_direct_step(struct r2cc_coll *q);
/*
 * The view (view.c): the NICs' bandwidths (at init), this rank's
 * value now, and the adoption of what a finished collective gathered.
 */
int coll_view_init(struct r2cc_comm *c);
uint32_t coll_view_local(struct r2cc_comm *c);
void coll_view_adopt(struct r2cc_coll *q);
/* wire.c: close @conns[0..@n) that are open, NULL them (NULL: none). */
void coll_close_all(struct r2cc_conn **conns, int n);
/* wire.c: connect to the ranks of @dst, accept @nin, until all ready. */
int coll_wire(struct r2cc_comm *c, struct r2cc_boot *boot, uint64_t primary,
	      const int *dst, struct r2cc_conn **out, int nout,
	      struct r2cc_conn **in, int nin, uint64_t deadline_ns);
/* The mesh (p2p.c): connect every pair; run an operation as far as it goes. */
int coll_mesh_connect(struct r2cc_comm *c, struct r2cc_boot *boot,
		      uint64_t primary, uint32_t timeout_ms,
		      struct r2cc_conn ***to, struct r2cc_conn ***from);

void coll_p2p_run(struct r2cc_coll *q);
/* req.c: a request out of its communicator's lists, freed */
void coll_free(struct r2cc_coll *q);
void coll_goodbye(struct r2cc_comm *c, uint32_t timeout_ms);

#endif /* R2CC_LIB_COLL_H */
