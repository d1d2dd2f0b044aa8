/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libr2cc: fault-tolerant multi-rail RDMA transport.  Public API.
 *
 * Conventions (all of the library follows them): every function is prefixed
 * r2cc_, objects are opaque, errors are returned as negative errno values,
 * and nothing is printed unless the application installs a log callback.
 * Option structs start with a size field that the caller sets to sizeof();
 * fields the library does not know must be zero.
 *
 * Sizes and versions (as libbpf's OPTS_VALID and the kernel's
 * copy_struct_from_user): the size tells the library which version of the
 * struct the caller was built with.  A size below sizeof(size_t) (0, 1)
 * or not a multiple of _Alignof(size_t) (no sizeof() of these structs is
 * one) is -EINVAL, and so is one over 4096 for a struct the library fills.
 *  - Structs the library reads (r2cc_ctx_opts, r2cc_conn_opts,
 *    r2cc_boot_opts): a smaller size is an older struct, and the fields
 *    past it read as zero; a larger one is accepted only if every byte
 *    past the library's own sizeof() is zero, else -E2BIG (a field this
 *    library does not have was set).  Over 4096: -E2BIG, without reading
 *    it.
 *  - Structs the library fills (r2cc_nic_info, r2cc_nic_event,
 *    r2cc_conn_stats, r2cc_rail_stats): it writes the first min(size, its
 *    own sizeof()) bytes but for the size field, which stays as the
 *    caller set it, and nothing past the caller's size.  Fields newer than
 *    the library are left as the caller set them, so initialise the
 *    struct ({ .size = sizeof(s) }) and they read as zero.
 */
#ifndef R2CC_R2CC_H
#define R2CC_R2CC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define R2CC_VERSION_MAJOR 0
#define R2CC_VERSION_MINOR 1
#define R2CC_VERSION_PATCH 0

/* The library's version as "MAJOR.MINOR.PATCH"; never NULL. */
const char *r2cc_version(void);

/*
 * Check that the library loaded at run time is compatible with the header
 * the caller was built against.  Returns 0, or -EPROTO if the major version
 * differs or the library is older than the header's minor version.
 */
int r2cc_check_version(unsigned int major, unsigned int minor);

/* ------------------------------------------------------------ context */

enum r2cc_log_level {
	R2CC_LOG_ERROR = 0,
	R2CC_LOG_WARN = 1,
	R2CC_LOG_INFO = 2,
	R2CC_LOG_DEBUG = 3,
};

/* @msg has no trailing newline and is valid only during the call. */
typedef void (*r2cc_log_fn)(void *arg, enum r2cc_log_level level,
			    const char *msg);

/* struct r2cc_ctx_opts.flags */
#define R2CC_CTX_NO_KMOD	(1U << 0)	/* ignore /dev/r2cc even if present */

/* What a connection does with no RDMA rail left. */
enum r2cc_fallback {
	R2CC_FALLBACK_DEFAULT = 0,	/* $R2CC_TCP_FALLBACK (0/1), else TCP */
	R2CC_FALLBACK_TCP = 1,		/* carry on over the control channel */
	R2CC_FALLBACK_NONE = 2,		/* fail operations with -ENETDOWN */
};

/*
 * The ranges of the tuning fields below and of their environment
 * variables; a value outside is -EINVAL.  ctrl_ifname is at most
 * R2CC_IFNAME_MAX - 1 characters, as a Linux interface name.
 */
#define R2CC_CHUNK_SIZE_MIN	4096u
#define R2CC_CHUNK_SIZE_MAX	(64u << 20)
#define R2CC_STALL_MS_MIN	1u
#define R2CC_STALL_MS_MAX	60000u
#define R2CC_RAIL_DEPTH_MIN	1u
#define R2CC_RAIL_DEPTH_MAX	128u
#define R2CC_PEER_TIMEOUT_MS_MIN	100u
#define R2CC_PEER_TIMEOUT_MS_MAX	600000u
#define R2CC_IFNAME_MAX		16

struct r2cc_ctx_opts {
	size_t size;		/* sizeof(struct r2cc_ctx_opts), see the top */
	r2cc_log_fn log;	/* NULL: silent */
	void *log_arg;
	int log_level;		/* messages up to this level; default ERROR */
	/*
	 * NICs to use: comma-separated "dev" or "dev:port", or, starting with
	 * '^', NICs to leave out.  NULL: $R2CC_NICS, else every port.
	 */
	const char *nics;
	uint32_t flags;		/* R2CC_CTX_* */
	uint32_t reserved;
	/*
	 * Transport tuning.  0 takes the environment variable named in the
	 * comment, else the default in brackets.
	 */
	uint32_t chunk_size;	/* R2CC_CHUNK_SIZE bytes [65536], 4 KiB..64 MiB */
	uint32_t stall_ms;	/* R2CC_STALL_MS [100]: silent-rail detector */
	uint32_t rail_depth;	/* R2CC_RAIL_DEPTH chunks in flight per rail [8] */
	uint32_t peer_timeout_ms;	/* R2CC_PEER_TIMEOUT_MS [5000] */
	uint32_t fallback;	/* enum r2cc_fallback */
	/*
	 * R2CC_NIC_WINDOW bytes in flight per NIC, all connections of the
	 * context together [rail_depth x chunk_size]: what may queue in front
	 * of a chunk on the wire, shared fairly among the rails on the NIC.
	 */
	uint32_t nic_window;
	/*
	 * Network interface for the out-of-band control channel (prefix
	 * match, like NCCL_SOCKET_IFNAME).  NULL: $R2CC_SOCKET_IFNAME, else
	 * the first IPv4 interface that is up, not loopback and not under a
	 * NIC in use; loopback last.
	 */
	const char *ctrl_ifname;
};

struct r2cc_ctx;

/*
 * Discover the fabric and start watching it.  @opts may be NULL for the
 * defaults.  Returns 0 and sets *@ctx, or -EINVAL (bad options), -E2BIG
 * (@opts from a newer header, with a field this library lacks set),
 * -ENODEV (no usable NIC), -ENOMEM.
 */
int r2cc_ctx_create(const struct r2cc_ctx_opts *opts, struct r2cc_ctx **ctx);

/*
 * Close @ctx and the connections left on it (their requests are freed).
 * Returns 0, -EBADF (not a live context), or -EBUSY while memory regions
 * or listeners of it remain: deregister and close them first (they refer
 * to the context).  Since R2CC_0.2; the R2CC_0.1 symbol returned nothing
 * and now leaves such a context open (logging why) instead of freeing it.
 */
int r2cc_ctx_destroy(struct r2cc_ctx *ctx);

/* ------------------------------------------------------------ fabric */

enum r2cc_nic_state {
	R2CC_NIC_UNKNOWN = 0,
	R2CC_NIC_DOWN = 1,
	R2CC_NIC_INIT = 2,
	R2CC_NIC_ARMED = 3,
	R2CC_NIC_ACTIVE = 4,
};

enum r2cc_link_layer {
	R2CC_LINK_UNKNOWN = 0,
	R2CC_LINK_INFINIBAND = 1,
	R2CC_LINK_ETHERNET = 2,
};

/* r2cc_nic_info.flags: a software device (rxe, siw), no NIC of its own */
#define R2CC_NIC_SOFTWARE	0x1

/* One NIC is one port of an RDMA device. */
struct r2cc_nic_info {
	size_t size;		/* in: sizeof(struct r2cc_nic_info), kept */
	char dev_name[64];
	uint32_t port;
	int32_t numa_node;	/* -1 if unknown */
	char pci_addr[16];	/* "0000:00:03.0", empty if none */
	char netdev[16];	/* RoCE: the netdev; empty for InfiniBand */
	uint8_t link_layer;	/* enum r2cc_link_layer */
	uint8_t state;		/* enum r2cc_nic_state, at discovery */
	uint8_t flags;		/* R2CC_NIC_SOFTWARE */
	uint8_t ack_timeout;	/* QPs' local ACK timeout: 4.096 us x 2^n */
	int32_t gid_index;	/* RoCEv2 IPv4 GID, or the IB GID 0; -1 none */
	uint8_t gid[16];
	uint64_t bandwidth_mbps;	/* active speed x width, data rate */
};

/* NICs in use (after R2CC_NICS / opts->nics), >= 1; -EINVAL for NULL. */
int r2cc_nic_count(const struct r2cc_ctx *ctx);

/*
 * Describe NIC @i (0 .. count-1): min(@info->size, sizeof) bytes of it.
 * -EINVAL for a bad index or size.
 */
int r2cc_nic_info(const struct r2cc_ctx *ctx, int i,
		  struct r2cc_nic_info *info);

/* ------------------------------------------------------------ health */

enum r2cc_notify_source {
	R2CC_NOTIFY_KMOD = 1,	/* r2cc.ko: /dev/r2cc and its state page */
	R2CC_NOTIFY_VERBS = 2,	/* libibverbs async events on every device */
};

/* 0 for NULL or a context that is not live. */
enum r2cc_notify_source r2cc_notify_source(const struct r2cc_ctx *ctx);

/*
 * A change of one NIC's state, whatever the source, or of its health: with
 * r2cc.ko, a port that stays ACTIVE while its error counters climb past
 * the module's threshold is reported degraded (old_state == new_state,
 * degraded 1), and again when it recovers (degraded 0).  The transport
 * stops giving a degraded rail new chunks while a healthy one is up, so
 * the link drains before it fails.  A caller whose size ends before
 * @degraded is not given the health changes.
 */
struct r2cc_nic_event {
	size_t size;		/* in: sizeof(struct r2cc_nic_event), kept */
	int32_t nic;		/* index as in r2cc_nic_info() */
	uint8_t old_state;	/* enum r2cc_nic_state */
	uint8_t new_state;
	uint8_t source;		/* enum r2cc_notify_source */
	uint8_t injected;	/* a drill (r2cc.ko inject), not a real fault */
	uint64_t time_ns;	/* CLOCK_MONOTONIC when the source saw it */
	uint8_t degraded;	/* 1: failing while ACTIVE (r2cc.ko only); 0 */
	uint8_t reserved[3];
	uint32_t error_rate;	/* health changes: errors/s r2cc.ko measured */
};

/*
 * A file descriptor that polls readable when a source has news for
 * r2cc_next_event() (changes that a progress call already read and
 * queued do not make it readable: call r2cc_next_event() with timeout 0
 * after each wake-up until it returns 0); owned by the context.
 */
int r2cc_event_fd(const struct r2cc_ctx *ctx);

/*
 * Wait up to @timeout_ms (-1 forever, 0 not at all) for the next change of
 * a NIC in use.  Returns 1 with *@ev filled (up to @ev->size), 0 on
 * timeout, or -errno; with a bad @ev->size, -EINVAL and no event is
 * consumed.  Changes of NICs not in use are consumed silently.
 */
int r2cc_next_event(struct r2cc_ctx *ctx, struct r2cc_nic_event *ev,
		    int timeout_ms);

/*
 * Whether NIC @i is ACTIVE now: a few loads from r2cc.ko's state page when
 * the module is there (the slot's state, checked against the incarnation
 * of the port it was bound to, so a slot reused by another device never
 * answers for this NIC), else the state as of the last event processed.
 * Returns 1, 0, or -EINVAL for a bad index.
 */
int r2cc_nic_is_active(const struct r2cc_ctx *ctx, int i);

/* ------------------------------------------------------------ memory */

struct r2cc_mr;

/* r2cc_mr_reg() flags */
#define R2CC_MR_CUDA	(1U << 0)	/* @addr is CUDA device memory */

/*
 * Register [@addr, @addr + @len) on every NIC in use, up front, so that a
 * failover never registers or exchanges keys.  Host memory, or with
 * R2CC_MR_CUDA GPU memory (exported as a DMA-BUF through the CUDA driver,
 * loaded at run time; nvidia-peermem as the fallback): -ENODEV without a
 * CUDA driver, -EOPNOTSUPP where neither path works.  Returns 0 and sets
 * *@mr, -EINVAL (NULL, zero length, unknown flags), -ENOMEM, or the errno
 * of the first NIC that refused it (nothing stays registered then).
 */
int r2cc_mr_reg(struct r2cc_ctx *ctx, void *addr, size_t len, uint32_t flags,
		struct r2cc_mr **mr);

/*
 * The same for a DMA-BUF (GPU memory exported by the driver): @offset into
 * @fd, mapped at @addr in the caller.  -EOPNOTSUPP where a NIC cannot.
 */
int r2cc_mr_reg_dmabuf(struct r2cc_ctx *ctx, void *addr, size_t len,
		       uint64_t offset, int fd, uint32_t flags,
		       struct r2cc_mr **mr);

/* Release: -EBUSY while an operation in flight still uses it. */
int r2cc_mr_dereg(struct r2cc_mr *mr);

/* ------------------------------------------------------------ connections */

/*
 * A connection carries messages one way, from the side that called
 * r2cc_connect() to the side that accepted it (as NCCL's send and receive
 * comms do).  It holds one RC QP per rail (local NIC i <-> the peer's NIC i)
 * plus a TCP control channel.  Nothing blocks: connect and accept return
 * at once, and r2cc_conn_ready() / r2cc_test() move things on.  A context
 * and everything made from it may be used from several threads: calls on
 * one context take turns on its lock (NCCL sets up connections on one
 * thread while another moves data).
 */
#define R2CC_HANDLE_SIZE 64

struct r2cc_handle {
	uint8_t bytes[R2CC_HANDLE_SIZE];	/* opaque, pass to the peer */
};

struct r2cc_listener;
struct r2cc_conn;
struct r2cc_req;

/* Listen for connections; *@handle tells a peer how to reach this one. */
int r2cc_listen(struct r2cc_ctx *ctx, struct r2cc_handle *handle,
		struct r2cc_listener **listener);
int r2cc_listener_close(struct r2cc_listener *listener);

/*
 * Start connecting to the listener behind @handle.  Returns 0 with
 * *@conn (not yet ready), -EINVAL for a handle not made by r2cc_listen().
 */
int r2cc_connect(struct r2cc_ctx *ctx, const struct r2cc_handle *handle,
		 struct r2cc_conn **conn);

/* How a connection uses its rails (r2cc_connect_opts). */
struct r2cc_conn_opts {
	size_t size;		/* sizeof(struct r2cc_conn_opts), see the top */
	/*
	 * Bit i set: rail i (local NIC i <-> the peer's NIC i) is a primary.
	 * Primaries carry the traffic, striped by bandwidth.  The other rails
	 * are standbys: connected, with receives posted and memory registered
	 * up front, but given a chunk only while no primary is up, so a
	 * primary's failure moves its traffic to them without loss and its
	 * failback hands it back.  0: every rail is a primary.
	 */
	uint64_t primary;
	uint32_t flags;		/* must be 0 */
	uint32_t reserved;	/* must be 0 */
};

/*
 * r2cc_connect() with options (@opts may be NULL for the defaults).  Only
 * the connecting side schedules, so only it takes them.  -EINVAL as
 * r2cc_connect(), and for bits of @opts->primary at or past
 * r2cc_nic_count() or flags set; -E2BIG for a newer struct with a field
 * this library lacks set.  If the peer has fewer NICs and no primary rail
 * is left, every rail is a primary.  Since R2CC_0.3.
 */
int r2cc_connect_opts(struct r2cc_ctx *ctx, const struct r2cc_handle *handle,
		      const struct r2cc_conn_opts *opts,
		      struct r2cc_conn **conn);

/* Take the next incoming connection: 0 with *@conn, or -EAGAIN. */
int r2cc_accept(struct r2cc_listener *listener, struct r2cc_conn **conn);

/*
 * 1 when the connection carries messages (the handshake is done; a rail
 * whose NIC is down or that failed to connect starts down and joins
 * when it comes up), 0 not yet, or -errno (then close it).
 */
int r2cc_conn_ready(struct r2cc_conn *conn);

/*
 * Close: requests still pending are cancelled and freed (testing one
 * after this is -EBADF).  Returns 0, -EINVAL for NULL, or -EBADF for a
 * handle that is not a live connection.
 */
int r2cc_conn_close(struct r2cc_conn *conn);

/* ------------------------------------------------------------ messages */

#define R2CC_MAX_RECVS 8

/*
 * Send @len bytes at @buf (inside @mr) with @tag.  Sends are matched, in
 * order, to the receives the peer posts; within a grouped receive, to the
 * first unmatched buffer with the same tag.  Returns 0 with *@req, or
 * -EINVAL (NULL, buffer outside @mr), -ENOTCONN (not ready), -ENETDOWN (no
 * rail left and the TCP fallback is off), -ECONNRESET (peer gone).
 */
int r2cc_isend(struct r2cc_conn *conn, struct r2cc_mr *mr, const void *buf,
	       size_t len, uint32_t tag, struct r2cc_req **req);

/*
 * Receive up to @n (1..R2CC_MAX_RECVS) messages, one into each buffer, as
 * one request; a message longer than its buffer fails the request with
 * -EMSGSIZE.  @mrs[i] may be NULL only when @lens[i] is 0.
 */
int r2cc_irecv(struct r2cc_conn *conn, int n, void *const *bufs,
	       const size_t *lens, const uint32_t *tags,
	       struct r2cc_mr *const *mrs, struct r2cc_req **req);

/*
 * Make progress; set *@done to 1 when @req has completed, and then (for a
 * receive, when @sizes is not NULL) the size of each message.  A completed
 * or failed request is freed by this call.  Returns 0, or -errno when the
 * request failed.  A buffer is handed back only when no rail can still
 * write into it or read from it.
 */
int r2cc_test(struct r2cc_req *req, int *done, size_t *sizes);

/* Make progress on every connection of @ctx without testing anything. */
int r2cc_progress(struct r2cc_ctx *ctx);

/* ------------------------------------------------------------ stats */

enum r2cc_rail_state {
	R2CC_RAIL_CONNECTING = 0,
	R2CC_RAIL_UP = 1,
	R2CC_RAIL_DOWN = 2,	/* failed, fenced; waits for the port */
	R2CC_RAIL_PROBING = 3,	/* reconnected, proving itself */
};

struct r2cc_rail_stats {
	size_t size;		/* in: sizeof(); only rails[0]'s is read */
	int32_t nic;		/* local NIC index */
	uint8_t state;		/* enum r2cc_rail_state */
	uint8_t standby;	/* 1: a standby (r2cc_conn_opts; sender only) */
	uint8_t degraded;	/* R2CC_RAIL_DEGRADED_*: drained while set */
	uint8_t reason;		/* enum r2cc_rail_reason: the last failure's */
	uint64_t bytes;		/* payload bytes completed on this rail */
	uint64_t chunks;
	uint64_t failures;	/* times the rail was declared down */
	uint64_t rollbacks;	/* chunks taken back from it */
	uint64_t failbacks;	/* times it came back */
	uint64_t weight;	/* share of the schedule (bandwidth, Mbit/s) */
	uint64_t drains;	/* times it was drained for a degraded port */
	uint64_t inflight;	/* sender: writes posted, not completed yet */
	uint64_t probe_failures; /* sender: rebuilt, and its probe failed */
	uint8_t confirmed;	/* sender: out, two probes failed in a row */
	uint8_t cut;		/* weight halved this often; 4: drained */
	uint8_t reserved[6];	/* written as 0 */
	uint64_t stalls_spared;	/* sender: stalled, but writes still
				 * landed at the peer (R2CC_STALL_ASK) */
};

/*
 * r2cc_rail_stats.cut: a degraded rail leaves the schedule at once
 * (cut R2CC_RAIL_CUT_DRAINED while it is degraded or held), or, with
 * $R2CC_DRAIN=graded, in steps: its weight is halved when its port
 * degrades and again every R2CC_DEGRADE_HOLD_MS / 8 while it stays so,
 * and the fourth step drains it; once recovered and held it doubles back
 * as often.
 */
#define R2CC_RAIL_CUT_DRAINED	4

/*
 * r2cc_rail_stats.degraded: whose port r2cc.ko reports degraded; or, with
 * neither, HOLD: it recovered but stays drained a while (a drained link
 * carries nothing, so it looks clean whether it is or not: the hold is
 * R2CC_DEGRADE_HOLD_MS, 10 s, doubled up to 16 times that each time the
 * rail degrades within 6 times that of its return).
 */
#define R2CC_RAIL_DEGRADED_LOCAL	(1u << 0)
#define R2CC_RAIL_DEGRADED_PEER		(1u << 1)
#define R2CC_RAIL_DEGRADED_HOLD		(1u << 2)

/*
 * r2cc_rail_stats.reason: where the rail's last failure lies, as both
 * ends see it.  Each end checks its own port of the rail when the rail
 * fails and tells the other over the control channel; a rail whose two
 * ports are both ACTIVE failed between them (a cable, a switch, or a NIC
 * that stopped moving packets with its port up).  A port found down
 * within 2 s of the failure (link-down reports lag on real NICs) moves a
 * PATH verdict to that port.  UNKNOWN: the peer's answer has not come
 * (or could not: the control channel went first).
 */
enum r2cc_rail_reason {
	R2CC_RAIL_REASON_NONE = 0,	/* never failed */
	R2CC_RAIL_REASON_UNKNOWN = 1,
	R2CC_RAIL_REASON_LOCAL_PORT = 2,	/* this end's port was down */
	R2CC_RAIL_REASON_PEER_PORT = 3,	/* the peer's port was down */
	R2CC_RAIL_REASON_PATH = 4,	/* both ports up */
};

struct r2cc_conn_stats {
	size_t size;		/* in: sizeof(struct r2cc_conn_stats), kept */
	int32_t nrails;
	uint8_t notify_source;	/* enum r2cc_notify_source */
	uint8_t fallback;	/* no rail up: carried over TCP */
	uint8_t reserved[2];
	uint64_t msgs;		/* messages completed */
	uint64_t bytes;		/* payload bytes, every path */
	uint64_t resent_bytes;	/* sent again after a rollback */
	uint64_t tcp_bytes;	/* carried by the TCP fallback */
	uint64_t failovers;	/* rail failures handled */
	uint64_t repairs;	/* failures whose re-sent chunks completed */
	uint64_t repair_ns_last;	/* detection to first re-sent completion */
	uint64_t repair_ns_max;
	uint64_t dup_chunks;	/* receiver: chunks the NIC delivered twice */
	/*
	 * The last repair's phases.  Detection is when this end acted on the
	 * failure; repair_ns_* above run from the port event when one caused
	 * it, from detection otherwise.
	 */
	uint64_t repair_notice_ns_last;	/* port event to detection; 0: none */
	uint64_t repair_fenced_ns_last;	/* detection to the peer's fence report */
	uint64_t repair_settled_ns_last;	/* ... to every chunk's fate known */
	uint64_t repair_posted_ns_last;	/* ... to the first re-sent chunk posted */
	uint64_t repair_posted_ns_max;
	/*
	 * Staged repair (R2CC_REPAIR, the default): the sender's chunks
	 * re-sent through the receiver's repair ring; the receiver's ring
	 * entries copied into their messages (an entry whose chunk had
	 * arrived is not counted).
	 */
	uint64_t staged;
};

/*
 * Copy the connection's counters, and those of up to @nrails rails into
 * @rails (may be NULL when @nrails is 0).  @rails is an array of elements
 * of rails[0].size bytes each: only the first element's size is read, and
 * rail i is written at (char *)rails + i * rails[0].size, its first
 * min(rails[0].size, sizeof(struct r2cc_rail_stats)) bytes (no element's
 * size field is written).  A caller built against another header thus
 * gets its own layout.  Returns the number of rails (possibly more than
 * @nrails), -EINVAL (NULL, bad sizes), or -EBADF (not a connection).
 */
int r2cc_conn_stats(struct r2cc_conn *conn, struct r2cc_conn_stats *stats,
		    struct r2cc_rail_stats *rails, int nrails);

#ifdef __cplusplus
}
#endif

#endif /* R2CC_R2CC_H */
