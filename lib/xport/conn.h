/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Layer 4, connections (conn.c): listen, connect, accept, the handshake
 * that creates and connects one RC QP per rail, progress of a context's
 * connections, stats and close.  Above it, the API (xfer.c: isend, irecv,
 * test).
 */
#ifndef R2CC_LIB_CONN_H
#define R2CC_LIB_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "xport/ctrl.h"
#include "base/base.h"
#include "xport/rail.h"
#include "xport/engine.h"
#include "xport/wire.h"

enum conn_state {
	CONN_TCP = 1,			/* connector: TCP connect in progress */
	CONN_HELLO = 2,			/* waiting for the peer's rails */
	CONN_READY = 3,
	CONN_FAILED = 4,
};

struct cts {
	struct wire_cts_entry e[R2CC_MAX_RECVS];
	bool matched[R2CC_MAX_RECVS];
	int count;
};

struct r2cc_conn {
	struct r2cc_ctx *ctx;
	struct r2cc_conn *next;		/* ctx->conns */
	bool sender;
	uint8_t state;			/* enum conn_state */
	uint64_t primary;		/* sender: primary rails, 0 all */
	int err;
	uint64_t nonce;
	uint32_t chunk_size;
	struct ctrl ctl;
	int nrails;
	struct rail rails[WIRE_MAX_RAILS];
	struct msg msgs[MAX_MSGS];
	/* sender */
	struct r2cc_req *sq_head, *sq_tail;	/* sends waiting for a CTS */
	struct cts ctsq[MAX_RECV_REQS];		/* announced receives */
	int cts_head, cts_len;
	int pend_msgs;				/* messages with work to post */
	/* receiver */
	uint32_t next_msg_id;
	int open_reqs;
	/*
	 * The message last handed back from each slot, and its chunks: a
	 * write the NIC completes twice may come after that.
	 */
	uint32_t gone_id[MAX_MSGS], gone_nchunks[MAX_MSGS];
	uint64_t detect_ns;		/* last failure detected, for repair */
	uint64_t event_ns;		/* time of the NIC event being handled */
	bool repair_open;
	/* When the open repair reached each phase (0: not yet), for stats. */
	struct {
		uint64_t seen;		/* this end acted on the failure */
		uint64_t fenced;	/* the peer's fence report, whole */
		uint64_t settled;	/* every chunk's fate known */
		uint64_t posted;	/* the first re-sent chunk posted */
	} rep;
	bool fallback;			/* no rail: over TCP */
	struct r2cc_conn_stats st;
	/* QPs replaced by a failback, destroyed a while later (rail.c) */
	struct {
		struct ibv_qp *qp;
		struct ibv_cq *cq;
		uint64_t at;
	} grave[GRAVE_MAX];
	int ngrave;
};

struct r2cc_listener {
	struct r2cc_ctx *ctx;
	int fd;
	uint64_t nonce;
};

/* Rail @i carries traffic while a primary is up (struct r2cc_conn_opts). */
static inline bool conn_rail_primary(const struct r2cc_conn *c, int i)
{
	return !c->primary || (c->primary >> i & 1);
}

/*
 * Rail @i's schedule level: chunks go only to the up rails of the lowest
 * level present.  Healthy primaries, healthy standbys, degraded primaries,
 * degraded standbys: a rail whose port is failing slowly carries nothing
 * while a healthy one is up, since a message completes only when its last
 * chunk does, and the last would be the one on the slow rail.
 */
static inline int conn_rail_level(const struct r2cc_conn *c, int i)
{
	return (c->rails[i].degraded ? 2 : 0) + !conn_rail_primary(c, i);
}

/* A connection over the control socket @fd (the simulator makes its own). */
struct r2cc_conn *conn_new(struct r2cc_ctx *ctx, int fd, bool sender);
int conn_handshake(struct r2cc_conn *c);
int conn_progress(struct r2cc_conn *c);

#endif
