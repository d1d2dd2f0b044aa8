/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libr2cc: fault-tolerant multi-rail RDMA transport.  Public API.
 *
 * Conventions (all of the library follows them): every function is prefixed
 * r2cc_, objects are opaque, errors are returned as negative errno values,
 * and nothing is printed unless the application installs a log callback.
 * Option structs start with a size field that the caller sets to sizeof();
 * fields the library does not know must be zero.
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

struct r2cc_ctx_opts {
	size_t size;		/* sizeof(struct r2cc_ctx_opts) */
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
};

struct r2cc_ctx;

/*
 * Discover the fabric and start watching it.  @opts may be NULL for the
 * defaults.  Returns 0 and sets *@ctx, or -EINVAL (bad options), -ENODEV
 * (no usable NIC), -ENOMEM.
 */
int r2cc_ctx_create(const struct r2cc_ctx_opts *opts, struct r2cc_ctx **ctx);
void r2cc_ctx_destroy(struct r2cc_ctx *ctx);

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

/* One NIC is one port of an RDMA device. */
struct r2cc_nic_info {
	size_t size;		/* in: sizeof(struct r2cc_nic_info) */
	char dev_name[64];
	uint32_t port;
	int32_t numa_node;	/* -1 if unknown */
	char pci_addr[16];	/* "0000:00:03.0", empty if none */
	char netdev[16];	/* RoCE: the netdev; empty for InfiniBand */
	uint8_t link_layer;	/* enum r2cc_link_layer */
	uint8_t state;		/* enum r2cc_nic_state, at discovery */
	uint8_t reserved0[2];
	int32_t gid_index;	/* RoCEv2 IPv4 GID, or the IB GID 0; -1 none */
	uint8_t gid[16];
	uint64_t bandwidth_mbps;	/* active speed x width, data rate */
};

/* Number of NICs in use (after R2CC_NICS / opts->nics), >= 1. */
int r2cc_nic_count(const struct r2cc_ctx *ctx);

/* Describe NIC @i (0 .. count-1).  -EINVAL for a bad index or size. */
int r2cc_nic_info(const struct r2cc_ctx *ctx, int i,
		  struct r2cc_nic_info *info);

/* ------------------------------------------------------------ health */

enum r2cc_notify_source {
	R2CC_NOTIFY_KMOD = 1,	/* r2cc.ko: /dev/r2cc and its state page */
	R2CC_NOTIFY_VERBS = 2,	/* libibverbs async events on every device */
};

enum r2cc_notify_source r2cc_notify_source(const struct r2cc_ctx *ctx);

/* A change of one NIC's state, whatever the source. */
struct r2cc_nic_event {
	size_t size;		/* in: sizeof(struct r2cc_nic_event) */
	int32_t nic;		/* index as in r2cc_nic_info() */
	uint8_t old_state;	/* enum r2cc_nic_state */
	uint8_t new_state;
	uint8_t source;		/* enum r2cc_notify_source */
	uint8_t injected;	/* a drill (r2cc.ko inject), not a real fault */
	uint64_t time_ns;	/* CLOCK_MONOTONIC when the source saw it */
};

/*
 * A file descriptor that polls readable when r2cc_next_event() has
 * something; owned by the context.
 */
int r2cc_event_fd(const struct r2cc_ctx *ctx);

/*
 * Wait up to @timeout_ms (-1 forever, 0 not at all) for the next change of
 * a NIC in use.  Returns 1 with *@ev filled, 0 on timeout, or -errno.
 * Changes of NICs not in use are consumed silently.
 */
int r2cc_next_event(struct r2cc_ctx *ctx, struct r2cc_nic_event *ev,
		    int timeout_ms);

/*
 * Whether NIC @i is ACTIVE now: one load from r2cc.ko's state page when
 * the module is there, else the state as of the last event processed.
 * Returns 1, 0, or -EINVAL for a bad index.
 */
int r2cc_nic_is_active(const struct r2cc_ctx *ctx, int i);

#ifdef __cplusplus
}
#endif

#endif /* R2CC_R2CC_H */
