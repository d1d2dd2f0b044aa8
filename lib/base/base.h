/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The base layer (lib/base): what every layer above uses.  The context
 * and its NICs, the log, handles, options (tune.c), the NIC selection
 * (nics.c), size-versioned structs (opts.h) and the gap estimator
 * (stall.h).  Library-private; never installed.
 */
#ifndef R2CC_LIB_INTERNAL_H
#define R2CC_LIB_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <r2cc/r2cc.h>

#include "base/opts.h"	/* size-versioned structs: r2cc_opts_in(), _out() */
#include "base/proc_start.h"	/* a process's start time, for its stats file */
#include "base/stall.h"	/* the NICs' gap estimators */

/* Everything is hidden (-fvisibility=hidden) unless marked for export. */
#define R2CC_EXPORT __attribute__((visibility("default")))

#define R2CC_MAX_NICS	64

struct ibv_context;
struct r2cc_state_header;

/* A NIC selection parsed from R2CC_NICS: "a,b:2" or "^a,b". */
struct r2cc_nic_sel {
	bool exclude;
	int n;
	struct {
		char dev[64];
		uint32_t port;		/* 0: every port */
	} item[R2CC_MAX_NICS];
};

int nics_parse(const char *spec, struct r2cc_nic_sel *sel);
bool nics_match(const struct r2cc_nic_sel *sel, const char *dev,
		uint32_t port);
/* Where a kept NIC comes in the list: its place in the order of use. */
int nics_rank(const struct r2cc_nic_sel *sel, const char *dev,
	      uint32_t port);

/* Transport options after defaults and the environment (ctx.c). */
struct r2cc_tune {
	uint32_t chunk_size;
	uint32_t stall_ms;
	uint32_t rail_depth;
	uint32_t nic_window;		/* bytes in flight per NIC */
	uint32_t peer_timeout_ms;
	uint32_t ib_timeout;		/* QP local ACK timeout exponent, 0:
					 * by the device (fabric.c) */
	uint32_t ib_sl;			/* InfiniBand service level */
	uint32_t ib_tc;			/* traffic class (GRH) */
	int32_t ib_gid_index;		/* -1: the one discovery chose */
	uint32_t qp_grave_ms;		/* a replaced QP lives on this long */
	uint32_t degrade_hold_ms;	/* a degraded rail's least drain */
	uint32_t progress_ms;		/* the progress thread's period, 0 */
	uint32_t health_ms;		/* hw_counters poll, no r2cc.ko; 0 */
	uint32_t degrade_rate;		/* sequence errors/s that degrade */
	uint32_t stall_adapt;		/* stall bound from the gaps (stall.h) */
	uint32_t stall_ask;		/* ask the peer before failing one */
	bool staged;			/* R2CC_REPAIR=staged (xport/stage.c) */
	bool drain_graded;		/* R2CC_DRAIN=graded (xport/rail.c) */
	bool tcp_fallback;
	char ctrl_ifname[16];
};

/*
 * A NIC's error counters, read by the library itself when r2cc.ko does
 * not judge its port (platform/health.c).
 */
#define NIC_HEALTH_FDS	4
struct nic_health {
	int fd[NIC_HEALTH_FDS];		/* hw_counters files, open */
	int nfd;
	uint64_t last, last_ns;		/* the last reading, and when */
	uint32_t rate;			/* errors/s between the last two */
	uint32_t win[3];		/* the last rates, for their mean */
	uint8_t win_n, win_at, under;
	bool news;			/* a verdict not handed out yet */
};

struct r2cc_nic {
	struct r2cc_nic_info info;
	struct ibv_context *verbs;	/* verbs source: shared per device */
	uint8_t state;			/* last known (verbs source) */
	int dev;			/* index into ctx->devs / ctx->pds */
	int32_t kmod_dev;		/* r2cc.ko device index, -1 */
	int32_t slot;			/* state page slot, -1 */
	uint64_t incarnation;		/* the port's, in that slot */
	uint8_t degraded;		/* failing while ACTIVE: r2cc.ko or
					 * health.c says so */
	struct nic_health health;
	/* the in-flight window every connection's rails on it share */
	int wrs;			/* work requests posted, not completed */
	int active;			/* rails holding or wanting some of it */
	/* sender: gaps between its completions while busy (stall.h) */
	struct stall_est gap;
	uint64_t progress_ns;		/* last completion, or busy since */
};

/*
 * A context, and everything reached through it (its connections, their
 * requests, its NIC event queue), is guarded by @lock: every API call that
 * reads or changes such state holds it, so an application may call from
 * several threads at once (NCCL: setup from one, data from another).
 */
struct r2cc_ctx {
	pthread_mutex_t lock;
	r2cc_log_fn log;
	void *log_arg;
	int log_level;
	uint32_t flags;
	int nnics;
	struct r2cc_nic nics[R2CC_MAX_NICS];
	enum r2cc_notify_source source;
	int kmod_fd;			/* /dev/r2cc, or -1 */
	const struct r2cc_state_header *state;	/* mapped page, or NULL */
	size_t state_size;
	int epoll_fd;			/* verbs source: all async fds */
	uint64_t health_next_ns;	/* verbs source: next counters poll */
	int ndevs;			/* devices with a NIC in use */
	struct ibv_context *devs[R2CC_MAX_NICS];
	struct ibv_pd *pds[R2CC_MAX_NICS];
	struct r2cc_tune tune;		/* resolved transport options */
	struct r2cc_conn *conns;	/* every connection, for progress */
	uint64_t progress_passes;	/* conn_progress_all() calls */
	/* the progress thread (progress.c); @prog_stop under @prog_mu */
	pthread_t prog_thread;
	pthread_mutex_t prog_mu;
	pthread_cond_t prog_cv;
	bool prog_running, prog_stop;
	int nmrs, nlisteners;		/* alive, refer to the context */
	/* NIC changes seen by the transport, kept for r2cc_next_event() */
	struct r2cc_nic_event evq[64];
	unsigned int evq_head, evq_len;
	/* the stats file (publish.c), NULL if none */
	struct r2cc_job_header *job;
	uint64_t job_next_ns, job_nclosed;
	char job_path[256];
};

void log_msg(const struct r2cc_ctx *ctx, enum r2cc_log_level level,
	     const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* handles.c: objects handed out, for -EBADF on closed ones */
enum r2cc_obj_kind {
	R2CC_OBJ_CTX = 1,
	R2CC_OBJ_MR,
	R2CC_OBJ_LISTENER,
	R2CC_OBJ_CONN,
	R2CC_OBJ_REQ,
	R2CC_OBJ_COMM,		/* collectives (coll.h) */
	R2CC_OBJ_COLL,
};
int handle_add(const void *p, int kind);
void handle_del(const void *p);
bool handle_ok(const void *p, int kind);
int handle_check(const void *p, int kind);

int tune_resolve(struct r2cc_ctx *ctx, const struct r2cc_ctx_opts *o);
int tune_u32(struct r2cc_ctx *ctx, uint32_t val, const char *env,
	     uint32_t def, uint32_t lo, uint32_t hi, uint32_t *out);

static inline void ctx_lock(struct r2cc_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
}

static inline void ctx_unlock(struct r2cc_ctx *ctx)
{
	pthread_mutex_unlock(&ctx->lock);
}


#endif
