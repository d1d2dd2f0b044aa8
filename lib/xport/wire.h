/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * What two libr2cc processes say to each other.
 *
 * The control channel is one TCP connection per r2cc connection; every
 * message is a struct wire_hdr followed by @len bytes.  Fields are
 * little-endian, which is what the hosts r2cc runs on are (checked below);
 * a big-endian port would byte-swap in ctrl.c.  Every length and index
 * from the wire is checked before use: a peer is not trusted.
 *
 * Messages are named by 32-bit sequence numbers (the receiver numbers its
 * receives 0, 1, 2, ... in the order it announces them) in every control
 * message.  RDMA writes carry 32 bits of immediate data (big-endian on the
 * wire, as verbs defines it): the low 12 bits of the message's sequence
 * number (see IMM_ID_MASK), a last-chunk flag and the chunk index (19
 * bits).  Message N lives in slot N % MAX_MSGS: the receiver announces
 * it only once message N - MAX_MSGS has been handed back on its side, and the
 * sender starts writing message N only once it has settled message
 * N - MAX_MSGS on its own, so no write of an older message can be in
 * flight in the same slot.
 */
#ifndef R2CC_LIB_WIRE_H
#define R2CC_LIB_WIRE_H

#include <stdint.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the r2cc wire format is little-endian; add byte swapping in ctrl.c"
#endif

#define WIRE_MAGIC	0x63633272u	/* "r2cc" */
/*
 * 3: W_RAIL_ASK and W_RAIL_SEEN.  A peer of version 2 is still taken; the
 * connection then speaks 2 (no stall questions).
 */
#define WIRE_VERSION	3u
#define WIRE_VERSION_MIN	2u
#define WIRE_VERSION_ASK	3u	/* the first that knows W_RAIL_ASK */
#define WIRE_MAX_RAILS	16
#define WIRE_MAX_MSG	(1u << 20)	/* largest control message payload */
#define WIRE_DATA_MAX	(256u << 10)	/* TCP fallback piece */

#define HANDLE_MAGIC	0x68633272u	/* "r2ch" */

/* What struct r2cc_handle holds, opaque to the application. */
struct handle_data {
	uint32_t magic;
	uint16_t family;		/* AF_INET */
	uint16_t port;			/* network order */
	uint32_t addr;			/* network order */
	uint32_t reserved;
	uint64_t nonce;			/* tells listeners apart */
};

enum wire_type {
	W_HELLO = 1,		/* connector -> acceptor: its rails */
	W_HELLO_ACK = 2,	/* acceptor -> connector: its rails */
	W_CTS = 3,		/* receiver -> sender: buffers posted */
	W_RAIL_DOWN = 4,	/* either way: I stopped using rail r */
	W_FENCED = 5,		/* receiver -> sender: r fenced, what arrived */
	W_NIC = 6,		/* either way: my NIC of rail r is up/down */
	W_RAIL_REQ = 7,		/* sender -> receiver: reconnect rail r */
	W_RAIL_ACK = 8,		/* receiver -> sender: reconnected (or not) */
	W_DATA = 9,		/* sender -> receiver: fallback payload */
	W_MSG_ERR = 10,		/* either way: message failed */
	W_CREDIT = 11,		/* receiver -> sender: receives re-posted */
	W_STAGE = 12,		/* receiver -> sender: its repair ring */
	W_STAGE_FREE = 13,	/* receiver -> sender: ring slots free again */
	W_RAIL_ASK = 14,	/* sender -> receiver: what landed on rail r? */
	W_RAIL_SEEN = 15,	/* receiver -> sender: the answer */
	W_TYPE_MAX
};

struct wire_hdr {
	uint32_t len;		/* bytes after this header */
	uint16_t type;		/* enum wire_type */
	uint16_t reserved;	/* 0 */
};

struct wire_qp {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint8_t mtu;		/* enum ibv_mtu */
	uint8_t active;		/* the NIC's port is ACTIVE */
	uint16_t lid;		/* InfiniBand: the port's LID; RoCE: 0 */
};

struct wire_hello {
	uint32_t magic;
	uint32_t version;
	uint64_t nonce;		/* the listener's, from its handle */
	uint32_t chunk_size;	/* the sender's */
	uint32_t nrails;
	struct wire_qp qp[];	/* nrails */
};

#define WIRE_CTS_DEVICE	1u	/* the buffer is GPU memory */

struct wire_cts_entry {
	uint32_t msg_id;	/* sequence number */
	uint32_t tag;
	uint64_t addr;
	uint64_t len;
	uint32_t rkey[WIRE_MAX_RAILS];
	uint32_t flags;		/* WIRE_CTS_* */
	uint32_t reserved;	/* 0 */
};

struct wire_cts {
	uint32_t count;		/* 1..R2CC_MAX_RECVS */
	uint32_t reserved;
	struct wire_cts_entry e[];
};

struct wire_rail {
	uint32_t rail;
	uint32_t epoch;
};

struct wire_nic {
	uint32_t rail;
	uint32_t up;			/* WIRE_NIC_* */
};
/*
 * The sender's port of this rail is ACTIVE; and failing slowly (r2cc.ko's
 * PORT_DEGRADED).  Peers before the flag took any non-zero value for up.
 * REPORT: not a change but the answer each end gives when the rail fails
 * (its port as it found it then), which locates the fault
 * (r2cc_rail_stats.reason); it does not hasten failback.
 */
#define WIRE_NIC_UP		(1u << 0)
#define WIRE_NIC_DEGRADED	(1u << 1)
#define WIRE_NIC_REPORT		(1u << 2)

/*
 * W_FENCED: what arrived of every receive still open when the receiver
 * fenced a rail, in as many parts as the message size limit needs; the
 * last part has WIRE_FENCED_LAST.  Each part is a struct wire_fenced,
 * then @nmsgs x (struct wire_fenced_msg + bitmap of @nbits bits from chunk
 * @first, padded to 8 bytes).  A message not listed in any part was
 * complete, or handed back, at the receiver.
 */
#define WIRE_FENCED_LAST	1u

struct wire_fenced {
	uint32_t rail;
	uint32_t epoch;
	uint32_t nmsgs;
	uint32_t flags;		/* WIRE_FENCED_* */
};

struct wire_fenced_msg {
	uint32_t msg_id;	/* sequence number */
	uint32_t first;		/* chunk of bit 0 */
	uint32_t nbits;		/* chunks described */
	uint32_t reserved;	/* 0 */
};

struct wire_rail_req {
	uint32_t rail;
	uint32_t epoch;
	struct wire_qp qp;
};

struct wire_rail_ack {
	uint32_t rail;
	uint32_t epoch;
	uint32_t ok;
	uint32_t reserved;
	struct wire_qp qp;
};

#define WIRE_DATA_LAST	1u	/* the piece ends the message */
#define WIRE_DATA_EOC	2u	/* the piece ends its chunk */

struct wire_data {
	uint32_t msg_id;	/* sequence number */
	uint32_t chunk;
	uint32_t off;		/* within the chunk */
	uint32_t len;		/* payload bytes that follow */
	uint32_t flags;		/* WIRE_DATA_* */
	uint32_t reserved;
};

/*
 * W_CREDIT: every write consumes one receive the receiver posted on the
 * rail; @posted counts those of this epoch (RQ_DEPTH at the start).  The
 * sender writes no more than that, so a receiver that stops making
 * progress makes the sender wait, not fail the rail as a black hole.
 */
struct wire_credit {
	uint32_t rail;
	uint32_t epoch;
	uint64_t posted;
};

/*
 * Staged repair (R2CC_REPAIR=staged, stage.c).  The receiver registers a
 * ring on every NIC of the connection and says where (W_STAGE): @per_rail
 * chunk-sized slots for each rail, rail r writing only slots r * per_rail
 * to (r + 1) * per_rail - 1, the data of slot s at @addr + s x the chunk
 * size and its header (struct wire_stage_hdr) at @addr + @nslots x the
 * chunk size + s x its size.  A chunk re-sent by stage is three work
 * requests on one rail, in order: an RDMA write of its bytes into slot s,
 * an RDMA write of its header, and a send of no bytes with immediate data
 * IMM_STAGE + s.  The receiver copies the chunk into its message only once
 * it has fenced the rail the chunk went on first (@origin, @epoch), and
 * only if the message is open and the chunk still missing.
 */
#define WIRE_STAGE_SLOTS	64	/* slots at most, all rails */

struct wire_stage {
	uint64_t addr;
	uint32_t per_rail;	/* 1..WIRE_STAGE_SLOTS / nrails */
	uint32_t nslots;	/* per_rail x the connection's rails */
	uint32_t rkey[WIRE_MAX_RAILS];
};

#define WIRE_STAGE_LAST	1u	/* the message's last chunk */

struct wire_stage_hdr {
	uint32_t msg_id;	/* sequence number */
	uint32_t chunk;
	uint32_t len;		/* the chunk's bytes */
	uint32_t flags;		/* WIRE_STAGE_* */
	uint32_t origin;	/* the failed rail the chunk went on first */
	uint32_t epoch;		/* ... in this epoch */
};

/* W_STAGE_FREE: slots whose entries the receiver is done with. */
struct wire_stage_free {
	uint64_t slots;		/* bit s: slot s */
};

struct wire_msg_err {
	uint32_t msg_id;	/* sequence number */
	int32_t err;		/* positive errno */
};

/*
 * R2CC_STALL_ASK=1: before the sender fails a rail that has work posted
 * and no completion for its stall bound, it asks the receiver (W_RAIL_ASK)
 * how long ago a write last landed on the rail in this epoch; the answer
 * (W_RAIL_SEEN) carries the question's @seq and that age in microseconds,
 * WIRE_SEEN_NEVER for none (or a rail not up in that epoch there).  A
 * write that landed after the sender's last completion means the rail
 * delivers and only its ACKs are late: the rail is kept.
 */
#define WIRE_SEEN_NEVER	0xffffffffu

struct wire_rail_ask {
	uint32_t rail;
	uint32_t epoch;
	uint32_t seq;
	uint32_t reserved;	/* 0 */
};

struct wire_rail_seen {
	uint32_t rail;
	uint32_t epoch;
	uint32_t seq;		/* the question's */
	uint32_t age_us;	/* since the last write landed; or NEVER */
};

/*
 * Immediate data of a chunk write: the low 12 bits of the sequence number
 * (16 times the slots, so that a late copy of a write is told from the
 * slot's next message), the last-chunk flag, the chunk index.
 */
#define IMM_MSG_SHIFT	20
#define IMM_ID_MASK	0xfffu
#define IMM_LAST	(1u << 19)
#define IMM_CHUNK_MASK	(IMM_LAST - 1)
#define IMM_PROBE	0xffffffffu	/* a probe send, not data */
#define IMM_STAGE	0xffff0000u	/* + slot: a staged chunk's send */
#define MSG_ID_MASK	0xffu		/* the slot of a sequence number */
#define MAX_MSGS	256		/* message slots */

static inline uint32_t imm_make(uint32_t msg_id, uint32_t chunk, int last)
{
	return (msg_id & IMM_ID_MASK) << IMM_MSG_SHIFT |
	       (last ? IMM_LAST : 0) | (chunk & IMM_CHUNK_MASK);
}

#endif
