/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The multi-rail transport's private state.
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
#ifndef R2CC_LIB_XPORT_H
#define R2CC_LIB_XPORT_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "probes.h"
#include "wire.h"

#define PROBE_WRID	UINT64_MAX
#define RESENT		0x80	/* chunk_rail flag: a re-sent chunk */
#define RQ_DEPTH	256	/* receives posted per rail (receiver) */
#define MAX_RECV_REQS	32	/* receive requests open per connection */
#define FENCE_DRAIN_NS	(200ull * 1000000)	/* give up waiting for flushes */
#define GRAVE_MAX	32	/* replaced QPs kept per connection */
#define GRAVE_NS	(3000ull * 1000000)	/* and for how long */

struct r2cc_mr {
	struct r2cc_ctx *ctx;
	uintptr_t addr;
	size_t len;
	int inflight;			/* operations using it */
	bool device;			/* GPU memory */
	struct ibv_mr *mrs[R2CC_MAX_NICS];	/* per device */
};

/* A control channel: framed messages over a non-blocking TCP socket. */
struct ctrl {
	int fd;
	uint8_t *out;			/* bytes not yet written */
	size_t out_len, out_cap, out_off;
	uint8_t *in;			/* bytes of the message being read */
	size_t in_len, in_cap;
	int err;			/* -errno once broken */
};

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
	int rq_posted;			/* receiver: receives posted */
	uint64_t last_progress_ns;	/* sender: last completion (or post) */
	uint64_t fence_start_ns;
	uint64_t vtime;			/* bytes posted / weight, scheduling */
	bool peer_fenced;		/* sender: W_FENCED for this epoch in */
	bool flushed;			/* receiver: a receive flushed */
	bool told_down;			/* W_RAIL_DOWN for this epoch sent */
	bool peer_nic_up;		/* the peer's NIC of this rail */
	bool req_sent;			/* sender: W_RAIL_REQ outstanding */
	uint64_t next_try_ns;		/* sender: next reconnection attempt */
	uint64_t backoff_ns;
	uint64_t probe_ns;		/* when the probe went out */
	uint8_t *fenced_map;		/* sender: bitmaps from W_FENCED */
	size_t fenced_len;
	struct r2cc_rail_stats st;
};

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
	uint32_t cursor;		/* sender: first chunk maybe pending */
	bool listed;			/* sender: in the fence report read */
	bool device;			/* GPU memory at either end */
	uint64_t raddr;			/* sender: the receiver's buffer */
	uint32_t rkey[WIRE_MAX_RAILS];
	uint8_t *bitmap;		/* receiver: chunks arrived */
	int64_t total;			/* receiver: chunk count, -1 unknown */
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
	uint64_t detect_ns;		/* last failure detected, for repair */
	uint64_t event_ns;		/* time of the NIC event being handled */
	bool repair_open;
	uint64_t resend_n, resend_bytes;	/* sender: of the last fence */
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

/* mr.c */
int r2cc_mr_covers(const struct r2cc_mr *mr, const void *buf, size_t len);

/* ctrl.c */
void ctrl_init(struct ctrl *c, int fd);
void ctrl_close(struct ctrl *c);
int ctrl_send(struct ctrl *c, uint16_t type, const void *a, size_t alen,
	      const void *b, size_t blen);
int ctrl_flush(struct ctrl *c);
/* 1 with a whole message in c->in (header first), 0 not yet, -errno. */
int ctrl_recv(struct ctrl *c);
void ctrl_consumed(struct ctrl *c);
int ctrl_addr(struct r2cc_ctx *ctx, void *sa, unsigned int *salen);
void ctrl_keepalive(int fd, uint32_t timeout_ms);

/* rail.c */
int rail_create(struct r2cc_conn *c, struct rail *r);
void rail_destroy(struct rail *r);
void rails_reap(struct r2cc_conn *c, bool all);
int rail_connect(struct r2cc_conn *c, struct rail *r);
void rail_fill_rq(struct r2cc_conn *c, struct rail *r);
void rail_fail(struct r2cc_conn *c, struct rail *r, const char *why);
void rail_start_down(struct r2cc_conn *c, struct rail *r, int err);
void rail_progress_fence(struct r2cc_conn *c, struct rail *r);
void rail_on_msg(struct r2cc_conn *c, uint16_t type, const void *p,
		 size_t len);
void rail_failback(struct r2cc_conn *c, struct rail *r);
int rails_up(const struct r2cc_conn *c);

/* conn.c */
struct r2cc_conn *conn_new(struct r2cc_ctx *ctx, int fd, bool sender);
void conn_fail(struct r2cc_conn *c, int err, const char *why);
int ctl_send(struct r2cc_conn *c, uint16_t type, const void *a, size_t alen,
	     const void *b, size_t blen);
int conn_handshake(struct r2cc_conn *c);

/* xfer.c: the API */
void msg_done(struct r2cc_conn *c, struct msg *m, int err);
struct msg *msg_by_id(struct r2cc_conn *c, uint32_t id);
uint32_t nchunks_of(const struct r2cc_conn *c, size_t len);
size_t chunk_len(const struct r2cc_conn *c, const struct msg *m, uint32_t k);

/* engine.c: progress */
void rail_probe_done(struct r2cc_conn *c, struct rail *r, bool ok);
void xfer_progress(struct r2cc_conn *c);
void xfer_on_msg(struct r2cc_conn *c, uint16_t type, const void *p,
		 size_t len);
void xfer_sender_resolve(struct r2cc_conn *c, struct rail *r);
void xfer_fail_all(struct r2cc_conn *c, int err);
void xfer_release(struct r2cc_conn *c);
extern size_t xfer_fence_part_max;
int xfer_fence_report(struct r2cc_conn *c, struct rail *r);
int conn_progress(struct r2cc_conn *c);

#endif
