/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The transport's state, below its layers: the control channel, rails,
 * messages and requests, registrations and connections.  Every file of
 * the transport reads and writes this state; the functions that act on
 * it are declared by the header of the file that has them (ctrl.h,
 * rail.h, msg.h, engine.h, conn.h, mr.h), so a file includes what it
 * calls, and no header includes another layer's functions.
 *
 * A connection moves messages one way.  Its sender cuts each message into
 * chunks and writes them, striped over the rails that are up, straight
 * into the receive buffer the receiver announced (W_CTS).  The receiver
 * learns each chunk from the immediate data and counts distinct chunks.
 *
 * When a rail fails, whoever sees it first stops using it and tells the
 * other side.  The receiver fences the rail (its QP to error, receive queue
 * drained) and reports exactly which chunks of each open message arrived
 * (W_FENCED).  The sender, once its own QP on that rail is drained, sends
 * again on surviving rails exactly the chunks that did not arrive.  So a
 * chunk lands at most once after the receiver has counted it, and a buffer
 * is handed back only when no rail can still touch it.
 */
#ifndef R2CC_LIB_XPORT_TYPES_H
#define R2CC_LIB_XPORT_TYPES_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "xport/wire.h"

struct r2cc_conn;

/* The control channel (ctrl.c) */

/* A control channel: framed messages over a non-blocking TCP socket. */
struct ctrl {
	int fd;
	uint8_t *out;			/* bytes not yet written */
	size_t out_len, out_cap, out_off;
	uint8_t *in;			/* bytes of the message being read */
	size_t in_len, in_cap;
	int err;			/* -errno once broken */
};

/* Rails (rail.c) */

#define PROBE_WRID	UINT64_MAX
#define RQ_DEPTH	256	/* receives posted per rail (receiver) */
#define FENCE_DRAIN_NS	(200ull * 1000000)	/* give up waiting for flushes */
#define GRAVE_MAX	32	/* replaced QPs kept per connection */
/* A link-down report may lag a failure this long (linkwatch: about 1 s). */
#define FAULT_SETTLE_NS	(2000ull * 1000000)
/*
 * A degraded rail stays drained R2CC_DEGRADE_HOLD_MS (tune) at least,
 * doubled (up to 16 times that) each time it degrades within 6 times that
 * of its return.
 */
#define DEG_HOLD_MAX	16
#define DEG_FLAP	6
/*
 * R2CC_DRAIN=graded: a degraded rail's weight halves every hold / 8
 * while it stays degraded, down to 1/2^(DRAIN_STEPS - 1); one step more
 * drains it.  Once recovered (and held) it doubles back as often.
 */
#define DRAIN_STEPS	R2CC_RAIL_CUT_DRAINED

enum { STOP_UP = 1, STOP_PROBING = 2 };	/* struct rail's stopping */

enum rail_state {
	RAIL_CONNECTING = R2CC_RAIL_CONNECTING,
	RAIL_UP = R2CC_RAIL_UP,
	RAIL_DOWN = R2CC_RAIL_DOWN,
	RAIL_PROBING = R2CC_RAIL_PROBING,
	RAIL_FENCING,			/* QP in error, draining */
};

struct rail {
	int nic;			/* local NIC index */
	uint8_t state;			/* enum rail_state */
	uint32_t epoch;			/* bumped by every reconnection */
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct wire_qp local, remote;
	int outstanding;		/* sender: WRs posted, not completed */
	int sq_cap;			/* ... at most (its send queue) */
	int *nic_wrs;			/* ... and its NIC's, all rails (rail_out) */
	bool nic_wait;			/* sender: found its NIC's window full */
	int rq_posted;			/* receiver: receives posted */
	uint64_t last_progress_ns;	/* sender: last completion (or post) */
	uint64_t done_ns;		/* sender: last completion, only */
	uint64_t spared_ns;		/* sender: the peer's answer kept it */
	uint64_t ask_ns;		/* sender: W_RAIL_ASK out since, 0 */
	uint32_t ask_seq;		/* sender: the last question's */
	uint64_t rx_ns;			/* receiver: a write last landed */
	struct stall_est stall;		/* sender: gaps between completions */
	uint64_t fence_start_ns;
	uint64_t vtime;			/* bytes posted / weight, scheduling */
	bool peer_fenced;		/* sender: W_FENCED for this epoch in */
	bool flushed;			/* receiver: a receive flushed */
	bool told_down;			/* W_RAIL_DOWN for this epoch sent */
	bool peer_nic_up;		/* the peer's NIC of this rail */
	bool locating;			/* failed; waiting for the peer's report */
	uint64_t fail_ns;		/* when it last failed */
	uint8_t degraded;		/* R2CC_RAIL_DEGRADED_*: drained */
	uint8_t cut;			/* R2CC_DRAIN=graded: weight halved
					 * this often; DRAIN_STEPS: drained */
	uint64_t cut_ns;		/* when cut last changed */
	uint64_t deg_at_ns;		/* when it was drained */
	uint64_t deg_hold_ns;		/* drained this long at least */
	uint64_t back_ns;		/* when it last came back from a drain */
	bool req_sent;			/* sender: W_RAIL_REQ outstanding */
	uint64_t next_try_ns;		/* sender: next reconnection attempt */
	uint64_t backoff_ns;
	uint64_t probe_ns;		/* when the probe went out */
	int probe_misses;		/* probes failed since it last failed */
	uint64_t credit;		/* sender: receives the peer posted */
	uint64_t used;			/* sender: requests posted (epoch) */
	uint64_t rq_total, rq_told;	/* receiver: receives posted, told */
	uint64_t rq_extra;		/* ... taken by writes completed twice */
	bool staged_all;		/* sender: what it carried is staged */
	uint8_t stopping;		/* rail_stop() done, rail_fail() not */
	uint8_t *fenced_map;		/* sender: bitmaps from W_FENCED */
	size_t fenced_len;
	struct r2cc_rail_stats st;
};

/* Messages and requests (msg.c, engine.c) */

#define RESENT		0x80	/* chunk_rail flag: a re-sent chunk */
#define STAGED		0x40	/* ... re-sent into the receiver's ring */
#define CHUNK_RAIL	0x0f	/* ... the rail it is on */
#define MAX_RECV_REQS	32	/* receive requests open per connection */

enum chunk_state {
	CH_PENDING = 0,			/* to be (re)sent */
	CH_POSTED = 1,			/* on rail ch_rail, no completion yet */
	CH_DONE = 2,
};

/* A message, either side, in slot id % MAX_MSGS. */
struct msg {
	bool used;
	uint32_t id;			/* sequence number */
	struct r2cc_req *req;		/* owner */
	int entry;			/* index within a grouped receive */
	uint8_t *buf;
	size_t len;			/* sender: message; receiver: buffer */
	struct r2cc_mr *mr;
	uint32_t tag;
	uint32_t nchunks;
	uint32_t ndone;			/* chunks done / distinct arrived */
	uint8_t *chunk_state;		/* sender: enum chunk_state */
	uint8_t *chunk_rail;		/* sender: the rail it went on */
	/*
	 * sender, staged chunks (stage.h): 1 + the rail it went on first,
	 * until that rail's fence report is in; 0 then (NULL: none staged)
	 */
	uint8_t *chunk_first;
	uint32_t cursor;		/* sender: first chunk maybe pending */
	bool listed;			/* sender: in the fence report read */
	bool device;			/* GPU memory at either end */
	/*
	 * sender: failed rails whose QPs may still read this message's
	 * buffer (chunks of it staged elsewhere before they drained): the
	 * message completes only once they have.
	 */
	uint16_t held_by;
	uint64_t raddr;			/* sender: the receiver's buffer */
	uint32_t rkey[WIRE_MAX_RAILS];
	uint8_t *bitmap;		/* receiver: chunks arrived */
	int64_t total;			/* receiver: chunk count, -1 unknown */
	uint32_t hi;			/* receiver: highest chunk seen + 1 */
	size_t size;			/* receiver: message size */
	int err;
	bool done;
};

enum req_kind { REQ_SEND = 1, REQ_RECV = 2 };

struct r2cc_req {
	struct r2cc_conn *conn;
	struct r2cc_req *next;		/* sender: queue waiting for a CTS */
	uint8_t kind;
	int n;				/* messages */
	int ndone;
	int err;
	struct msg *m[R2CC_MAX_RECVS];
	size_t sizes[R2CC_MAX_RECVS];
	/* a send until it is matched to an announced receive */
	uint8_t *sbuf;
	struct r2cc_mr *smr;
	uint32_t stag;
};

/* Multi-registration: a buffer registered on every device (mr.c) */

struct r2cc_mr {
	struct r2cc_ctx *ctx;
	uintptr_t addr;
	size_t len;
	int inflight;			/* operations using it */
	bool device;			/* GPU memory */
	bool counted;			/* in ctx->nmrs */
	struct ibv_mr *mrs[R2CC_MAX_NICS];	/* per device */
};

/* Connections (conn.c) */

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

/* Staged repair (stage.c, wire.h): the receiver's ring, as each end sees it. */
#define STAGE_PER_RAIL	4	/* slots per rail at most */
#define STAGE_WRS	3	/* work requests per staged chunk */
#define STAGE_PART_WRID	(UINT64_MAX - 1)	/* its two writes */
#define STAGE_SEND_BIT	(1u << 31)	/* in its send's wr_id */

struct stage {
	uint32_t per_rail, nslots;	/* 0: no ring */
	/* receiver */
	uint8_t *ring;
	size_t ring_len;
	struct ibv_mr *mr[R2CC_MAX_NICS];	/* per device */
	uint64_t held;			/* slots whose entry waits */
	uint64_t done;			/* slots to tell the sender are free */
	struct wire_stage_hdr e[WIRE_STAGE_SLOTS];	/* held entries */
	/* sender */
	uint64_t addr;
	uint32_t rkey[WIRE_MAX_RAILS];
	uint64_t busy;			/* slots not free */
	uint16_t held_rails;		/* rails in some message's held_by */
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
	uint32_t peer_version;		/* its hello's WIRE_VERSION */
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
	struct stage stage;
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
 * chunk does, and the last would be the one on the slow rail.  Under
 * R2CC_DRAIN=graded a degraded rail keeps its level, at a weight lowered
 * in steps (struct rail's cut), until the last step drains it.
 */
/* @r is drained: degraded, and (R2CC_DRAIN=graded) past its last step. */
static inline bool conn_rail_drained(const struct r2cc_conn *c,
				     const struct rail *r)
{
	return r->degraded &&
	       (!c->ctx->tune.drain_graded || r->cut >= DRAIN_STEPS);
}

/* How often @r's weight is halved while a graded drain lowers it. */
static inline int conn_rail_shift(const struct r2cc_conn *c,
				  const struct rail *r)
{
	return c->ctx->tune.drain_graded && r->cut < DRAIN_STEPS ? r->cut : 0;
}

static inline int conn_rail_level(const struct r2cc_conn *c, int i)
{
	return (conn_rail_drained(c, &c->rails[i]) ? 2 : 0) +
	       !conn_rail_primary(c, i);
}

#endif
