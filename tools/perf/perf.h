/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * r2cc-perf: throughput and latency over libr2cc between two ranks, with
 * every byte verified and a per-interval timeline of the rails.
 */
#ifndef R2CC_PERF_H
#define R2CC_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <r2cc/coll.h>
#include <r2cc/r2cc.h>

#define PERF_NAME		"r2cc-perf"
#define PERF_MAX_WINDOW		64
#define PERF_MAX_RAILS		16
#define PERF_MAX_AT		32
#define PERF_MAX_SIZES		64
#define PERF_MAX_MSG		(1ULL << 30)	/* one message */
#define PERF_MAX_RING		(4ULL << 30)	/* window x message */

/* Exit codes. */
#define EXIT_USAGE		2

enum perf_mode { PERF_BW, PERF_LAT, PERF_COLL };

/* --coll KIND */
enum perf_coll {
	PERF_ALLREDUCE = 1, PERF_REDUCE_SCATTER, PERF_ALLGATHER,
	PERF_BROADCAST, PERF_REDUCE,
};

#define PERF_MAX_COLL_WORLD	4096

struct perf_at {
	double t;		/* seconds after the transfer starts */
	const char *cmd;
	int fired;
	int reaped;
	pid_t pid;
};

struct perf_opts {
	enum perf_mode mode;
	enum perf_coll coll;	/* PERF_COLL */
	uint64_t sizes[PERF_MAX_SIZES];
	int nsizes;
	uint64_t iters;		/* 0: run for duration */
	double duration;	/* seconds per size */
	unsigned int window;
	int verify;
	unsigned int interval_ms;
	int timeline;
	const char *csv;
	struct perf_at at[PERF_MAX_AT];
	int nat;
	double timeout;		/* seconds without progress */
	int verbose;

	/* Rendezvous, resolved from flags then environment. */
	const char *root;	/* NULL: the library reads the environment */
	const char *root_desc;	/* for messages */
	int rank;
	int world;

	/* Context tuning, 0 = library default. */
	uint32_t chunk;
	uint32_t stall_ms;
	uint32_t rail_depth;
	uint32_t peer_timeout_ms;
	int tcp_fallback;	/* -1 default */
	const char *nics;
	const char *ctrl_if;
	int no_kmod;
	int mesh;		/* --mesh: R2CC_COMM_MESH */
	enum r2cc_dtype dtype;	/* --dtype, --coll */
	enum r2cc_redop op;	/* --op, --coll's reductions */
};

/* options.c: fills @o or exits (0 for --help/--version, 2 for errors). */
void perf_parse_args(int argc, char **argv, struct perf_opts *o);

/* pattern.c */
uint64_t pattern_word(uint64_t seq, uint64_t word, uint64_t salt);
void pattern_fill(void *buf, size_t len, uint64_t seq, uint64_t salt);

struct pattern_bad {
	size_t offset;		/* first bad byte */
	uint8_t want, got;
};

/* Number of bytes that differ; *@bad describes the first one. */
size_t pattern_check(const void *buf, size_t len, uint64_t seq,
		     uint64_t salt, struct pattern_bad *bad);

/* timeline.c */
struct perf_interval {
	double t;		/* end, seconds since the transfer started */
	double dt;
	double mbps;
	int partial;		/* cut short by the end of a phase */
	uint64_t size;		/* message size of the phase */
};

struct timeline {
	const struct perf_opts *o;
	struct r2cc_ctx *ctx;
	struct r2cc_conn *conn;	/* the connection whose rails are shown */
	FILE *csv;
	double t0;		/* transfer start, monotonic seconds */
	double next;		/* next tick */
	double last;		/* start of the open interval */
	uint64_t bytes;		/* application bytes completed, running */
	uint64_t bytes_last;
	uint64_t size;		/* current phase's message size */
	int nrails;
	struct r2cc_conn_stats st;	/* as of the last tick */
	struct r2cc_rail_stats rails[PERF_MAX_RAILS];
	char event[512];	/* text for the open interval */
	struct perf_interval *iv;
	size_t niv, cap;
	size_t phase_first;	/* first interval of the current phase */
};

double perf_now(void);
int perf_stats(struct r2cc_conn *conn, struct r2cc_conn_stats *st,
	       struct r2cc_rail_stats *rails);
const char *perf_rail_state(unsigned int state);
void tl_init(struct timeline *tl, const struct perf_opts *o,
	     struct r2cc_ctx *ctx, struct r2cc_conn *conn);
void tl_start(struct timeline *tl, double now);
void tl_phase_begin(struct timeline *tl, uint64_t size, double now);
void tl_poll(struct timeline *tl, double now);
void tl_phase_end(struct timeline *tl, double now);
void tl_finish(struct timeline *tl);
/* Median, p99 and minimum of the full intervals of the current phase. */
int tl_phase_rates(const struct timeline *tl, double *med, double *p99,
		   double *min);
void tl_add_event(struct timeline *tl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Percentile @p (0..100) of @n values, which are sorted in place. */
double perf_percentile(double *v, size_t n, double p);

/* r2cc-perf.c, setup.c, report.c */
#define SALT_FWD	0ULL			/* rank 0 -> rank 1 */
#define SALT_REV	0xa076f1e5c3b2d49bULL	/* rank 1 -> rank 0 (--lat) */
#define MARK_MAGIC	0x444e452d66726570ULL	/* "perf-END" */
#define TAG		0			/* every message */

struct marker {
	uint64_t magic;
	uint64_t msgs;		/* data messages of the phase */
	uint64_t pad;
};

/* One rank's results of a phase, swapped through the bootstrap. */
struct report {
	uint64_t msgs, bytes, verified, bad;
	int32_t failed;
	uint32_t pad;
};

struct phase {
	uint64_t size;
	double secs;
	struct report r;
	struct r2cc_conn_stats st0;	/* at the start, for deltas */
	struct r2cc_rail_stats rails0[PERF_MAX_RAILS];
	double *lat;			/* --lat round trips, seconds */
	size_t nlat, latcap;
};

struct perf {
	struct perf_opts o;
	struct r2cc_boot *boot;
	struct r2cc_ctx *ctx;
	struct r2cc_listener *lis;
	struct r2cc_conn *out;		/* we connected: we send on it */
	struct r2cc_conn *in;		/* we accepted: we receive on it */
	unsigned char *sbuf, *rbuf;
	size_t stride, sring, rring;	/* bytes per slot, slots */
	struct r2cc_mr *smr, *rmr;
	struct r2cc_req *sreq[PERF_MAX_WINDOW];
	struct r2cc_req *rreq[PERF_MAX_WINDOW];
	uint64_t rposted, rdone;	/* receive ring positions */
	uint64_t seq_tx, seq_rx;	/* data messages, all phases */
	struct timeline tl;
	/* --coll: when the timed calls began, and the counters then */
	double coll_t0;
	struct r2cc_comm_stats coll_st0;
	int failed;			/* bad data or protocol: exit 1 */
	int phase_failed;		/* the same, in the current phase */
	int bad_reported;
};

/*
 * dtype.c: --dtype and --op.  What a reduction's element must be, from
 * every rank's small integer input: the exact sum, the product wrapped to
 * 64 bits (and as a power of two, 2^@prod_log2: the inputs are 1 or 2),
 * the least and the greatest.
 */
struct perf_want {
	uint64_t sum, prod, min, max;
	unsigned int prod_log2;
};

int perf_dtype_parse(const char *s, enum r2cc_dtype *dt);
int perf_op_parse(const char *s, enum r2cc_redop *op);
const char *perf_dtype_name(enum r2cc_dtype dt);
const char *perf_op_name(enum r2cc_redop op);
size_t perf_dtype_size(enum r2cc_dtype dt);
/* Store the small integer @k (at most 2048) as element @i: exact. */
void perf_dtype_put(void *buf, size_t i, enum r2cc_dtype dt, uint64_t k);
/* Element @i is exactly @k. */
int perf_dtype_is(const void *buf, size_t i, enum r2cc_dtype dt, uint64_t k);
/* Element @i is the reduction @op of @n ranks' inputs that @w describes. */
int perf_dtype_check(const void *buf, size_t i, enum r2cc_dtype dt,
		     enum r2cc_redop op, int n, const struct perf_want *w);

/* coll.c: --coll, on a communicator of every rank; returns the exit code. */
int perf_coll_run(struct perf *p);
const char *perf_coll_name(enum perf_coll k);

/* die.c: give up with one line naming this rank (rank_g, -1 until known) */
extern int rank_g;
void die_op(const char *fn, int ret, const char *what)
	__attribute__((noreturn));
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void post_recv(struct perf *p);
void setup_ctx(struct perf *p);
void setup_buffers(struct perf *p);
void setup_conns(struct perf *p);
void teardown(struct perf *p);
FILE *open_csv(const char *name, int rank);
const char *role(const struct perf *p);
void print_summary(struct perf *p, struct phase *ph, const struct report *peer);

#endif /* R2CC_PERF_H */
