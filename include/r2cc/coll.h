/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libr2cc collectives: a communicator over a bootstrap and a context, and
 * non-blocking collectives on it.  Same conventions as <r2cc/r2cc.h>:
 * negative errno returns, opaque objects, option structs with a size
 * field (read as r2cc_ctx_opts is).
 *
 * Every rank issues the same collectives in the same order with matching
 * arguments, as in NCCL and MPI.  Several may be in flight; they run on
 * the wire one after another, in the order issued.  Buffers are any host
 * memory: the library stages them through memory it registered on every
 * NIC at r2cc_comm_init(), so a buffer needs no registration and may be
 * freed once its collective completed.  A rail failing under a collective
 * is the transport's business: its chunks are re-sent on the survivors
 * and the collective completes with every byte right.
 *
 * Results are bit-identical on every rank: each element is reduced once,
 * in one fixed order along the ring, and the result is copied to the
 * others.  Integers wrap as their C unsigned type does; float16 and
 * bfloat16 are converted to float, combined, and rounded to nearest-even
 * at each step.  R2CC_AVG divides the sum by the rank count at the end
 * (integers: C division, rounding towards zero).
 * See Documentation/coll.rst.
 */
#ifndef R2CC_COLL_H
#define R2CC_COLL_H

#include <stddef.h>
#include <stdint.h>

#include <r2cc/bootstrap.h>
#include <r2cc/r2cc.h>

#ifdef __cplusplus
extern "C" {
#endif

struct r2cc_comm;
struct r2cc_coll;

enum r2cc_dtype {
	R2CC_INT8 = 0,
	R2CC_UINT8 = 1,
	R2CC_INT32 = 2,
	R2CC_UINT32 = 3,
	R2CC_INT64 = 4,
	R2CC_UINT64 = 5,
	R2CC_FLOAT16 = 6,	/* IEEE 754 binary16 */
	R2CC_BFLOAT16 = 7,
	R2CC_FLOAT32 = 8,
	R2CC_FLOAT64 = 9,
};

enum r2cc_redop {
	R2CC_SUM = 0,
	R2CC_PROD = 1,
	R2CC_MIN = 2,
	R2CC_MAX = 3,
	R2CC_AVG = 4,
};

#define R2CC_COLL_SLICE_MIN	4096u
#define R2CC_COLL_SLICE_MAX	(16u << 20)
#define R2CC_COLL_DEPTH_MAX	64u

struct r2cc_comm_opts {
	size_t size;		/* sizeof(struct r2cc_comm_opts) */
	/*
	 * Rails that are primaries on the communicator's connections (as
	 * r2cc_conn_opts.primary); 0: every rail.
	 */
	uint64_t primary;
	/*
	 * Pipeline unit in bytes; 0: $R2CC_COLL_SLICE, else 256 KiB.  This,
	 * depth and $R2CC_COLL_SETS must be the same on every rank.
	 */
	uint32_t slice_bytes;
	/* Slices in flight per step; 0: $R2CC_COLL_DEPTH, else 4. */
	uint32_t depth;
	/* Connecting to the neighbours; 0: 60000. */
	uint32_t timeout_ms;
	uint32_t flags;		/* R2CC_COMM_*; others must be 0 */
	/*
	 * enum r2cc_coll_algo; 0: $R2CC_ALGO (auto, ring, weighted or
	 * optimal), else auto.  Every rank must choose the same:
	 * r2cc_comm_init() fails with -EINVAL otherwise.
	 */
	uint32_t algo;
};

/*
 * How allreduces larger than the latency-bound algorithms' (below) go:
 * RING always cuts the data into n equal chunks, so a rank with less
 * bandwidth than the others paces them all; WEIGHTED sizes the ring's
 * chunks to the bandwidth every rank agrees each has (r2cc_comm_view()),
 * so that a rank that lost a NIC moves fewer bytes (equal chunks while
 * every rank has the same); AUTO runs an allreduce WEIGHTED when a model
 * of the engine's schedule, given the view, the size and the slicing,
 * has it at most 0.82 of RING's time, else RING: the same choice on every
 * rank (Documentation/coll.rst).  At the default slicing it stays RING
 * for one rank at half bandwidth; 64 KiB x 16 with 4 slot sets
 * (R2CC_COLL_SETS) makes it WEIGHTED.
 *
 * OPTIMAL needs R2CC_COMM_MESH: every rank reduces a share of the data
 * sized to the view and sends the result to every other, over the mesh,
 * which reaches the lower bound max(D / (beta B), 2 (n - 1) D /
 * ((n - 1 + beta) B)) for one rank at beta of the others' bandwidth, for
 * every beta (equal shares, in two message latencies, while all ranks
 * have the same); it stages (2 n depth) slices per rank.
 *
 * R2CC_AR also needs R2CC_COMM_MESH: the R2CCL paper's R2CC-AllReduce.
 * With one rank at w of the fastest rank's B in the view, the ring over
 * every rank reduces the first w / B of the data; the rest is reduced by
 * the other ranks alone, the slow rank sending them its part of it and
 * receiving their result (the optimal allreduce with a share of 0 for
 * the slow rank).  The ring alone while every rank has the same.
 * $R2CC_ALGO takes "r2cc-ar", and "balance" (the paper's Balance, the
 * ring over the rails that are left) for RING.
 */
enum r2cc_coll_algo {
	R2CC_COLL_ALGO_AUTO = 0,
	R2CC_COLL_ALGO_RING,
	R2CC_COLL_ALGO_WEIGHTED,
	R2CC_COLL_ALGO_OPTIMAL,
	R2CC_COLL_ALGO_R2CC_AR,
};

/*
 * r2cc_comm_opts.flags: also connect every pair of ranks, twice (2 (n - 1)
 * more connections each way per rank): one mesh for r2cc_send(),
 * r2cc_recv() and r2cc_alltoall(), one for the collectives, whose small
 * allreduces then go by recursive doubling, in ceil(log2 n) steps rather
 * than the ring's 2 (n - 1), and small broadcasts and reduces by binomial
 * trees, ceil(log2 n) steps rather than the chain's n - 1.  How small: a cost model's choice from the
 * NICs' bandwidth and $R2CC_COLL_ALPHA_US (latency per message, default
 * 10), or $R2CC_COLL_RD_MAX bytes (0: never); at most the slice size.
 * Ranks agree on it at r2cc_comm_init() (the smallest of theirs).
 * $R2CC_COLL_MESH=1 sets it for a caller that did not (0 or unset: as
 * the caller says); every rank must have the mesh or none.
 */
#define R2CC_COMM_MESH	(1u << 0)

/*
 * Make a communicator of every rank of @boot on @ctx: each rank connects
 * to the next and accepts the previous one (a ring).  Collective: every
 * rank calls it.  Returns 0 with *@comm, or -EINVAL (NULL, bad options),
 * -E2BIG, -ETIMEDOUT, -ENOMEM, or what connecting or the bootstrap
 * returned.  @boot and @ctx must outlive the communicator.
 */
int r2cc_comm_init(struct r2cc_ctx *ctx, struct r2cc_boot *boot,
		   const struct r2cc_comm_opts *opts, struct r2cc_comm **comm);
int r2cc_comm_rank(const struct r2cc_comm *comm);
int r2cc_comm_size(const struct r2cc_comm *comm);

struct r2cc_comm_stats {
	size_t size;		/* in: sizeof(struct r2cc_comm_stats), kept */
	uint64_t colls;		/* collectives completed */
	uint64_t bytes_sent;	/* payload sent, every connection and path */
	uint64_t bytes_received;	/* payload received, the same */
	uint64_t failovers;	/* rail failures its connections handled */
	uint64_t resent_bytes;	/* sent again after a rail failed */
	uint64_t tcp_bytes;	/* carried by the TCP fallback, both ways */
	uint64_t colls_rd;	/* of colls, by recursive doubling or a tree */
	uint64_t rd_max;	/* the largest such, bytes (0: none) */
	uint64_t colls_weighted;	/* of colls, by the weighted ring */
	uint64_t colls_optimal;	/* of colls, by the optimal allreduce */
	uint64_t colls_r2cc_ar;	/* of colls, by R2CC-AllReduce */
};

/*
 * The communicator's counters (filled as r2cc_conn_stats() fills its
 * struct).  Returns 0, -EINVAL (NULL, a bad size) or -EBADF.
 */
int r2cc_comm_stats(struct r2cc_comm *comm, struct r2cc_comm_stats *stats);

/*
 * The view every rank of the communicator agrees on: each rank's usable
 * bandwidth (its NICs whose port is ACTIVE and not degraded, in Mbit/s),
 * as it was when that rank issued the ring collective (allreduce,
 * reduce-scatter, allgather, barrier) that brought the view.  Every rank
 * adopts a view when that collective finishes there, so every collective
 * issued after it sees the same numbers on every rank.
 */
struct r2cc_comm_view {
	size_t size;		/* in: sizeof(struct r2cc_comm_view), kept */
	uint8_t valid;		/* 0: no ring collective has finished yet */
	uint8_t reserved[3];
	uint32_t seq;		/* the collective (from 0) it came with */
	uint64_t changes;	/* times it changed after the first */
};

/*
 * The view into @view, and min(@n, ranks) ranks' bandwidths into @mbps
 * (may be NULL when @n is 0).  Returns the number of ranks, -EINVAL
 * (NULL, a bad size, @n < 0) or -EBADF.
 */
int r2cc_comm_view(struct r2cc_comm *comm, struct r2cc_comm_view *view,
		   uint32_t *mbps, int n);

/*
 * Free the communicator.  Collective: unless the communicator has failed,
 * it first waits (up to 30 s) until every rank has called it, so that no
 * rank closes the ring while a neighbour still finishes a collective on
 * it.  Collectives not completed are cancelled (their buffers are no
 * longer touched once this returns).  Returns 0, -EINVAL for NULL, or
 * -EBADF for a handle that is not a live communicator.
 */
int r2cc_comm_destroy(struct r2cc_comm *comm);

/*
 * The collectives.  Each returns 0 with *@req, completed by
 * r2cc_coll_test(), or -EINVAL (NULL buffer with a count, unknown dtype
 * or op, root out of range, buffers that overlap other than exactly),
 * -EOVERFLOW (count x element size too large), -ENOMEM, or the
 * communicator's error once it has one (it sticks: a failed collective
 * leaves the ring in an unknown state; destroy the communicator).
 * Counts are in elements.  In place: @recvbuf == @sendbuf (for
 * allgather, @sendbuf at rank x @count elements into @recvbuf; for
 * reduce_scatter, @recvbuf at rank x @count into @sendbuf).
 */
int r2cc_allreduce(struct r2cc_comm *comm, const void *sendbuf, void *recvbuf,
		   size_t count, enum r2cc_dtype dtype, enum r2cc_redop op,
		   struct r2cc_coll **req);
/* @sendbuf holds size x @count elements; rank r gets block r reduced. */
int r2cc_reduce_scatter(struct r2cc_comm *comm, const void *sendbuf,
			void *recvbuf, size_t count, enum r2cc_dtype dtype,
			enum r2cc_redop op, struct r2cc_coll **req);
/* @recvbuf gets size x @count elements, rank r's block at r x @count. */
int r2cc_allgather(struct r2cc_comm *comm, const void *sendbuf,
		   void *recvbuf, size_t count, enum r2cc_dtype dtype,
		   struct r2cc_coll **req);
/* @root's @sendbuf to every rank's @recvbuf (@sendbuf is read at root only). */
int r2cc_broadcast(struct r2cc_comm *comm, const void *sendbuf, void *recvbuf,
		   size_t count, enum r2cc_dtype dtype, int root,
		   struct r2cc_coll **req);
/* The reduction lands in @root's @recvbuf only (others may pass NULL). */
int r2cc_reduce(struct r2cc_comm *comm, const void *sendbuf, void *recvbuf,
		size_t count, enum r2cc_dtype dtype, enum r2cc_redop op,
		int root, struct r2cc_coll **req);
/* Completes once every rank has entered it. */
int r2cc_barrier(struct r2cc_comm *comm, struct r2cc_coll **req);

/*
 * Point to point, on a communicator made with R2CC_COMM_MESH: @count
 * elements to or from rank @peer.  Between two ranks, sends complete the
 * receives in the order each side posted them, and a send and its receive
 * must give the same count and datatype (else the receive fails with
 * -EPROTO).  These run beside the collectives, not in their order.  The
 * buffer is registered for the call and released when it completes.
 * Returns 0 with *@req (completed by r2cc_coll_test()), -EINVAL (NULL,
 * @peer out of range or this rank, unknown dtype), -EOPNOTSUPP (no mesh),
 * -EOVERFLOW, -ENOMEM, or what registering or posting returned.
 */
int r2cc_send(struct r2cc_comm *comm, const void *buf, size_t count,
	      enum r2cc_dtype dtype, int peer, struct r2cc_coll **req);
int r2cc_recv(struct r2cc_comm *comm, void *buf, size_t count,
	      enum r2cc_dtype dtype, int peer, struct r2cc_coll **req);
/*
 * Every rank sends block j of @sendbuf (@count elements at j x @count) to
 * rank j, which stores it as block r of its @recvbuf; on a mesh, over the
 * point-to-point connections, with the errors of r2cc_send().  The two
 * buffers must not overlap.
 */
int r2cc_alltoall(struct r2cc_comm *comm, const void *sendbuf, void *recvbuf,
		  size_t count, enum r2cc_dtype dtype, struct r2cc_coll **req);

/*
 * Make progress on @req's communicator; set *@done to 1 when @req has
 * finished (completed or failed, as r2cc_test()).  A finished request is
 * freed by this call.
 * Returns 0, or -errno when the collective failed: -EPROTO (ranks called
 * different collectives, or with other counts, types, ops or roots),
 * -ECONNRESET (a rank went away), or the transport's error.
 */
int r2cc_coll_test(struct r2cc_coll *req, int *done);

#ifdef __cplusplus
}
#endif

#endif /* R2CC_COLL_H */
