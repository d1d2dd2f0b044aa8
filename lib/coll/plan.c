// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Each rank's program for a collective over the ring rank -> rank + 1.
 *
 * Ring collectives cut the data into n chunks.  Reduce-scatter runs n - 1
 * steps: at step s rank r sends chunk r-1-s (its own data at step 0, else
 * what it reduced at step s-1) and receives chunk r-2-s, which it combines
 * with its own data of that chunk; after step n-2 it holds chunk r fully
 * reduced.  Allgather runs n - 1 steps: at step t rank r sends chunk r-t
 * and receives and stores chunk r-t-1.  Allreduce is the one then the
 * other (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for
 * clusters of workstations", JPDC 2009; NCCL's ring).  Each element is
 * reduced once, in an order fixed by the ring, and the result is copied
 * around: every rank ends with the same bits.
 *
 * Broadcast and reduce are chains of one chunk: root, root+1, ... for
 * broadcast; root+1, ..., root for reduce, each rank forwarding slice by
 * slice, so the chain is a pipeline.
 */
#include "coll/coll.h"

static int mod(int x, int n)
{
	return ((x % n) + n) % n;
}

static void step(struct coll_step *st, int send, enum coll_src src, int recv,
		 enum coll_act act, bool store)
{
	st->send_chunk = (int16_t)send;
	st->send_src = (uint8_t)src;
	st->recv_chunk = (int16_t)recv;
	st->recv_act = (uint8_t)act;
	st->store = store;
}

int coll_nchunks(enum coll_kind kind, int n)
{
	return kind == COLL_BROADCAST || kind == COLL_REDUCE ? 1 : n;
}

void coll_chunk(size_t count, int nchunks, int c, size_t *off, size_t *len)
{
	size_t base = count / (size_t)nchunks, rest = count % (size_t)nchunks;
	size_t i = (size_t)c;

	*off = i * base + (i < rest ? i : rest);
	*len = base + (i < rest);
}

static int reduce_scatter(int r, int n, struct coll_step *st)
{
	int s;

	for (s = 0; s < n - 1; s++)
		step(&st[s], mod(r - 1 - s, n), s ? SRC_FWD : SRC_LOCAL,
		     mod(r - 2 - s, n), ACT_REDUCE, s == n - 2);
	return n - 1;
}

static int allgather(int r, int n, bool fwd_first, struct coll_step *st)
{
	int t;

	for (t = 0; t < n - 1; t++)
		step(&st[t], mod(r - t, n),
		     t || fwd_first ? SRC_FWD : SRC_LOCAL,
		     mod(r - t - 1, n), ACT_COPY, true);
	return n - 1;
}

/* A chain of one chunk: position 0 only sends, the last only receives. */
static int chain(int pos, int n, enum coll_act act, struct coll_step *st)
{
	if (pos == 0) {
		step(&st[0], 0, SRC_LOCAL, -1, ACT_NONE, false);
		return 1;
	}
	step(&st[0], -1, SRC_NONE, 0, act, pos == n - 1 || act == ACT_COPY);
	if (pos == n - 1)
		return 1;
	step(&st[1], 0, SRC_FWD, -1, ACT_NONE, false);
	return 2;
}

int coll_plan(enum coll_kind kind, int rank, int n, int root,
	      struct coll_step *st)
{
	int k;

	if (n <= 1)
		return 0;
	switch (kind) {
	case COLL_ALLREDUCE:
		k = reduce_scatter(rank, n, st);
		return k + allgather(rank, n, true, st + k);
	case COLL_REDUCE_SCATTER:
		return reduce_scatter(rank, n, st);
	case COLL_ALLGATHER:
	case COLL_BARRIER:
		return allgather(rank, n, false, st);
	case COLL_BROADCAST:
		return chain(mod(rank - root, n), n, ACT_COPY, st);
	case COLL_REDUCE:
		return chain(mod(rank - root - 1, n), n, ACT_REDUCE, st);
	case COLL_P2P:	/* no ring program: p2p.c */
		break;
	}
	return 0;
}

/*
 * A ring kind's step s: rank r sends the value of rank r - s (its own at
 * step 0, then what it received the step before) and receives that of
 * rank r - 1 - s.  After n - 1 steps every rank holds every value; in an
 * allreduce's second half the values go round again, each rank's own
 * coming back to it at step n - 1, to be checked.
 */
int coll_view_rank(enum coll_kind kind, int rank, int n, int step, bool send)
{
	if (kind == COLL_BROADCAST || kind == COLL_REDUCE || kind == COLL_P2P ||
	    n < 2)
		return -1;
	return mod(rank - step - !send, n);
}
