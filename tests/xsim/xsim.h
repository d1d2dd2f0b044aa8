/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The deterministic protocol simulator: libr2cc's real transport (conn.c,
 * engine.c, rail.c, xfer.c, ctrl.c, mr.c) linked against a fake verbs
 * layer (fake_verbs.c), a fake control network (world.c wraps send/recv)
 * and a virtual clock, all driven by one seeded scheduler.
 */
#ifndef R2CC_XSIM_H
#define R2CC_XSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XS_NODES	2	/* 0: the sender's context, 1: the receiver's */
#define XS_MAX_RAILS	4

/* ------------------------------------------------------------ rng */

struct xs_rng {
	uint64_t s;
};

static inline uint64_t xs_next(struct xs_rng *r)
{
	/* splitmix64: small, fast, and the same everywhere */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline uint32_t xs_below(struct xs_rng *r, uint32_t n)
{
	return (uint32_t)(xs_next(r) % n);
}

/* True with probability @num / @den. */
static inline bool xs_chance(struct xs_rng *r, uint32_t num, uint32_t den)
{
	return xs_below(r, den) < num;
}

/* ------------------------------------------------------------ fake NIC */

struct fqp;

/* Called once before any run: the world's hooks for the fake NIC. */
struct fv_hooks {
	/* A write of @len bytes is about to land at @addr on @node. */
	void (*on_write)(int node, uint64_t addr, uint32_t len);
	/* A broken rule of the verbs model (misuse, overrun, bad key). */
	void (*violation)(const char *what);
};

void fv_init(const struct fv_hooks *h);
/*
 * Called as an RDMA write with immediate data or a send is queued on
 * @node's NIC @nic (@imm: its immediate data): the world checks which
 * rails the scheduler chose at the moment it chose them.  NULL (the fuzz
 * and TSan harnesses): nothing is told.
 */
extern void (*fv_on_write_posted)(int node, int nic, uint32_t imm);
extern bool fv_threaded;		/* lock the fake NIC (TSan harness) */
void fv_lock(void);
void fv_unlock(void);
void fv_reset(void);			/* destroy everything, between runs */
struct ibv_context *fv_context(int node, int nic);
struct ibv_pd *fv_pd(int node, int nic);
void fv_set_port(int node, int nic, bool ib, uint16_t lid);
/* The cable of rail @nic carries packets (both ways) or not. */
void fv_set_link(int nic, bool up);
bool fv_link(int nic);
/* Make the next connect (INIT->RTR) of a QP on @node/@nic fail. */
void fv_fail_next_rtr(int node, int nic);

/* Hardware steps the scheduler picks from. */
int fv_qps(struct fqp **out, int max);	/* live QPs */
bool fv_can_deliver(const struct fqp *q);
bool fv_deliver(struct fqp *q);		/* the oldest packet lands */
/*
 * The last write delivered and not yet acked completes at the receiver
 * once more (a receive and a completion of its own; the bytes are the
 * same, so they are not copied again), as rxe has been seen to do.
 */
bool fv_redeliver(struct fqp *q);
bool fv_can_ack(const struct fqp *q);
bool fv_ack(struct fqp *q);		/* the oldest landed one completes */
bool fv_flush_pending(const struct fqp *q);
void fv_flush(struct fqp *q);		/* an error transition finishes */
void fv_fatal(struct fqp *q, bool quiet);	/* the NIC fails the QP */
int fv_qp_node(const struct fqp *q);
int fv_qp_nic(const struct fqp *q);
int fv_live_count(void);		/* QPs + CQs + MRs alive */

/* ------------------------------------------------------------ world */

uint64_t xs_time(void);

#endif
