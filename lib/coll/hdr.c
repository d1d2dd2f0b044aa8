// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The header every collective message carries (struct coll_hdr): filled
 * from this rank's call, and a received one checked against it.  Below
 * every algorithm: each fills and checks its own messages with these.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>

#include "coll/coll.h"
#include "base/base.h"

/* @vrank: whose view value the message carries, or -1. */
void coll_hdr_fill(const struct r2cc_coll *q, struct coll_hdr *h, int chunk,
		   size_t j, int vrank)
{
	h->magic = htole32(COLL_MAGIC);
	h->seq = htole32(q->seq);
	h->kind = (uint8_t)q->kind;
	h->dtype = (uint8_t)q->dtype;
	h->op = (uint8_t)q->op;
	h->algo = (uint8_t)q->algo;
	h->root = (int32_t)htole32((uint32_t)q->root);
	h->count = htole64(q->count);
	h->chunk = htole32((uint32_t)chunk);
	h->slice = htole32((uint32_t)j);
	h->vrank = htole32(vrank < 0 ? UINT32_MAX : (uint32_t)vrank);
	h->vmbps = htole32(vrank < 0 ? 0 : q->gather[vrank]);
}

const char *coll_hdr_why(const struct r2cc_coll *q, const struct coll_hdr *h,
			 size_t got)
{
	if (got < sizeof(*h) || le32toh(h->magic) != COLL_MAGIC)
		return "not a collective message";
	if (le32toh(h->seq) != q->seq)
		return "another collective number";
	if (h->kind != q->kind)
		return "another collective";
	if (le64toh(h->count) != q->count)
		return "another count";
	if (h->dtype != q->dtype)
		return "another datatype";
	if (h->op != q->op && q->kind != COLL_ALLGATHER &&
	    q->kind != COLL_BROADCAST && q->kind != COLL_BARRIER)
		return "another op";
	if ((int32_t)le32toh((uint32_t)h->root) != q->root)
		return "another root";
	if (h->algo != q->algo)
		return "another algorithm (another view, or another libr2cc?)";
	return NULL;
}

int coll_hdr_mismatch(const struct r2cc_coll *q, const struct coll_hdr *h,
		      int peer, const char *why)
{
	const struct r2cc_comm *c = q->comm;

	log_msg(c->ctx, R2CC_LOG_ERROR,
		"collective #%u: rank %d's call does not match rank %d's: %s (kind %u/%u, count %llu/%llu, dtype %u/%u, op %u/%u, root %d/%d)",
		q->seq, peer, c->rank, why, h->kind, q->kind,
		(unsigned long long)le64toh(h->count),
		(unsigned long long)q->count, h->dtype, q->dtype, h->op,
		q->op, (int)le32toh((uint32_t)h->root), q->root);
	return -EPROTO;
}
