/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Layer 3, the chunk scheduler and failover (msg.c, engine.c): messages and
 * requests, matching sends to announced receives, striping chunks over
 * the rails in proportion to bandwidth, completions, the stall detector,
 * settling a failed rail's chunks (fence reports, exact re-send), the TCP
 * fallback, and failing a connection (xfer_abort).  It drives the rails
 * (layer 2) and the control channel (layer 1); the connection (layer 4)
 * and the API (layer 5) call it.
 */
#ifndef R2CC_LIB_ENGINE_H
#define R2CC_LIB_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "xport/mr.h"
#include "xport/rail.h"
#include "xport/wire.h"

struct r2cc_conn;

#define RESENT		0x80	/* chunk_rail flag: a re-sent chunk */
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
	uint32_t cursor;		/* sender: first chunk maybe pending */
	bool listed;			/* sender: in the fence report read */
	bool device;			/* GPU memory at either end */
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

/* msg.c: messages and requests */
struct r2cc_req *req_new(struct r2cc_conn *c, uint8_t kind, int n);
void req_free(struct r2cc_req *q);
void msg_done(struct r2cc_conn *c, struct msg *m, int err);
struct msg *msg_by_id(struct r2cc_conn *c, uint32_t id);
uint32_t nchunks_of(const struct r2cc_conn *c, size_t len);
size_t chunk_len(const struct r2cc_conn *c, const struct msg *m, uint32_t k);
void xfer_fail_all(struct r2cc_conn *c, int err);
void xfer_release(struct r2cc_conn *c);

/* engine.c: progress and failover */
void xfer_progress(struct r2cc_conn *c);
/* Split each NIC's in-flight window among its rails; before a pass. */
void xfer_nic_shares(struct r2cc_ctx *ctx);
/* Fail the connection: its QPs destroyed first, then every request. */
void xfer_abort(struct r2cc_conn *c, int err, const char *why);
/* Queue a control message; one that cannot be queued fails it all. */
int xfer_send(struct r2cc_conn *c, uint16_t type, const void *a,
	      size_t alen, const void *b, size_t blen);
void xfer_sender_resolve(struct r2cc_conn *c, struct rail *r);
extern size_t xfer_fence_part_max;
int xfer_fence_report(struct r2cc_conn *c, struct rail *r);

#endif
