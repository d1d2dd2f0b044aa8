/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * r2cc-sim: shared types.  Units are SI throughout: bytes, seconds,
 * bytes per second.  The CLI converts Gbit/s and microseconds at the edge
 * so that no module has to guess a unit.
 */
#ifndef R2CC_SIM_H
#define R2CC_SIM_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_MAX_NODES	65536
#define SIM_MAX_GPUS	64
#define SIM_MAX_NICS	64
#define SIM_MAX_EVENTS	(1 << 22)

/* ------------------------------------------------------------ fabric */

struct fabric {
	int nodes, gpus, nics;
	double nic_bw;		/* bytes/s per NIC, nominal */
	double alpha;		/* seconds per message step */
	double intra_bw;	/* bytes/s inside a node (NVLink / PCIe) */
	int fuse;		/* NICs per fused virtual NIC (port failover) */
	int chunks;		/* pipeline chunks, 0 = fluid */
};

/* How a node spreads its traffic over its NICs. */
enum share_policy {
	SHARE_EQUAL,	/* NCCL: channels bound to NICs, equal shares */
	SHARE_PARTNER,	/* NCCL port failover: dead NIC's share -> partner */
	SHARE_BALANCE,	/* R2CCL/r2cc: in proportion to live bandwidth */
};

double node_bw(const struct fabric *f, const double *frac,
	       enum share_policy pol, double *share);

/* ------------------------------------------------------------ collectives */

enum coll_type {
	COLL_ALLREDUCE, COLL_TREE_ALLREDUCE, COLL_ALLGATHER,
	COLL_REDUCE_SCATTER, COLL_BROADCAST, COLL_ALLTOALL, COLL_SENDRECV,
	COLL_NR
};

enum ar_algo {
	AR_RING,	/* ring over all nodes (Balance when shares balance) */
	AR_PAPER,	/* R2CC-AllReduce: ring then reduce + broadcast */
	AR_OVERLAP,	/* beyond the paper: optimal split, overlapped */
	AR_WEIGHTED,	/* the library's ring with chunks sized to the view */
	AR_DIRECT,	/* the library's optimal allreduce: shares on the mesh */
	AR_LIB_PAPER,	/* the library's R2CC-AllReduce: ring, then direct */
	AR_NR
};

/*
 * A schedule: phases run one after the other; inside a phase every node
 * sends and receives concurrently, so a phase lasts as long as its slowest
 * node's busier direction, plus latency and pipeline fill.
 */
struct plan {
	int n, nphase, maxphase;
	double *snd, *rcv;	/* [maxphase][n] bytes */
	double *lat;		/* [maxphase] seconds */
	double *fill;		/* [maxphase] seconds */
};

int plan_init(struct plan *p, int n, int maxphase);
void plan_free(struct plan *p);
void plan_reset(struct plan *p);
double plan_time(const struct plan *p, const double *bw);
double plan_sent(const struct plan *p);
double plan_recv(const struct plan *p);
int coll_plan(struct plan *p, enum coll_type type, enum ar_algo algo,
	      const double *bw, int n, double bytes, const struct fabric *f);
double coll_algo_bytes(enum coll_type type, int n, double bytes);
const char *coll_name(enum coll_type t);
int coll_parse(const char *s);
const char *ar_algo_name(enum ar_algo a);
/*
 * Whether libr2cc's auto, at its default slicing, runs an allreduce of
 * @bytes (float32) per node as the weighted ring over nodes of bandwidth
 * @bw (bytes/s): lib/coll/model/sched.c's answer.  -1 when out of memory.
 */
int ar_lib_weighted(const double *bw, int n, double bytes);
/*
 * The allreduce libr2cc's auto runs (lib/coll/model/weight.c's
 * coll_auto_direct on a communicator with the mesh, @mesh, then
 * ar_lib_weighted): AR_DIRECT, AR_WEIGHTED or AR_RING; -1 when out of
 * memory.
 */
int ar_lib_auto(const double *bw, int n, double bytes, bool mesh);

/* Closed forms of the paper's single-degraded-node model. */
double cf_balance(double x);
double cf_r2cc_ar(int n, double x);

/* ------------------------------------------------------------ strategies */

enum strat_id {
	ST_NCCL, ST_NCCL_FO, ST_BALANCE, ST_R2CC_AR, ST_R2CC, ST_R2CC_OV,
	ST_R2CC_LIB, ST_R2CC_OPT, ST_R2CC_LIB_MESH, ST_R2CC_LIB_AR,
	ST_NR
};

struct detect_params {
	int ib_timeout, ib_retry;	/* NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT */
	double r2ccl_detect;		/* R2CCL reference detection, s */
	double port_detect;		/* r2cc kernel notification, s */
	double stall_detect;		/* r2cc silent-failure bound, s */
	double restart;			/* abort -> running again, s */
	double ckpt_interval;		/* s between checkpoints */
	double ckpt_cost;		/* s to write one */
};

struct strategy {
	const char *name;
	enum share_policy share;
	unsigned algos;		/* bitmask of enum ar_algo it may use */
	bool abort_on_down;	/* any dead NIC aborts the job */
	bool partner_only;	/* abort when a fused group is all dead */
	/*
	 * Allreduce as libr2cc's auto chooses, not the cheapest of algos:
	 * the weighted ring where the library's schedule model picks it.
	 */
	bool lib_auto;
	/* ... on a communicator with the mesh (R2CC_COMM_MESH) */
	bool lib_mesh;
};

extern const struct strategy strategies[ST_NR];
double ib_timeout_s(int timeout, int retry);
double strat_detect(enum strat_id s, const struct detect_params *d,
		    bool silent);
int strat_parse_list(const char *s, unsigned *mask);

/* ------------------------------------------------------------ traces */

struct event {
	double t;
	int node, nic;
	double frac;		/* new available fraction: 0 down, 1 up */
	bool silent;		/* black hole: no port event */
	unsigned seq;		/* insertion order, breaks time ties */
};

struct trace {
	struct event *ev;
	int n, cap;
};

struct random_trace {
	double mtbf;		/* s, per NIC; 0 = no random failures */
	double repair;		/* s, mean repair time (exponential) */
	double flap_prob;	/* a failure is a flap burst */
	int flap_count;		/* down/up cycles in a burst */
	double flap_period;	/* s between flaps */
	double degrade_prob;	/* a failure only degrades the NIC */
	double degrade_frac;	/* bandwidth left when degraded */
	double silent_prob;	/* a failure is silent */
	uint64_t seed;
};

int trace_add(struct trace *tr, const struct event *e);
int trace_add_spec(struct trace *tr, const char *spec, bool degrade,
		   const struct fabric *f, char *err, int errlen);
int trace_random(struct trace *tr, const struct random_trace *r,
		 const struct fabric *f, double horizon);
void trace_sort(struct trace *tr);
void trace_free(struct trace *tr);
uint64_t rng_next(uint64_t *s);
double rng_uniform(uint64_t *s);

/* ------------------------------------------------------------ workloads */

enum workload_kind { WL_COLL, WL_TRAIN, WL_SERVE };

struct model_desc {
	const char *name;
	double params;		/* parameters */
	int layers, hidden;
};

extern const struct model_desc models[];
int model_parse(const char *s);

struct workload {
	enum workload_kind kind;
	enum coll_type coll;
	double size;		/* WL_COLL: bytes per node */
	int model;
	int tp, pp;
	int batch, seq, micro;	/* global batch (sequences), seq len */
	double mfu, gpu_flops, overlap;
	int prompt, output, concurrency;
	double hbm_bw;
};

/* What the engine needs from a failure state: a cost per iteration. */
struct state_view {
	const struct fabric *f;
	const double *frac;	/* [nodes][nics] as the strategy sees it */
	enum strat_id strat;
};

double wl_iter_time(const struct workload *w, const struct state_view *v,
		    double *scratch);
double wl_coll_time(const struct workload *w, const struct state_view *v,
		    enum coll_type t, int first, int n, double bytes,
		    double *scratch, enum ar_algo *chosen);
int wl_check(const struct workload *w, const struct fabric *f,
	     char *err, int errlen);
size_t wl_scratch_len(const struct fabric *f);
int wl_nodes_used(const struct workload *w, const struct fabric *f);
double wl_ttft(const struct workload *w, const struct state_view *v,
	       double *scratch);
double wl_tpot(const struct workload *w, const struct state_view *v,
	       double *scratch);

/* ------------------------------------------------------------ engine */

struct tl_point { double t, speed; };

struct run_result {
	enum strat_id strat;
	double total;		/* s to finish all iterations */
	double ideal;		/* s failure-free */
	double stall;		/* s spent detecting */
	double down;		/* s spent restarting */
	long aborts, lost_iters, evals;
	long recomputed;	/* serving: requests redone */
	double worst_iter;	/* s, slowest iteration state seen */
	double ttft_worst, tpot_worst;
	struct tl_point *tl;	/* timeline, change points only */
	int ntl, captl;
};

int sim_run(const struct fabric *f, const struct workload *w,
	    const struct detect_params *d, const struct trace *tr,
	    long iters, enum strat_id s, bool timeline,
	    struct run_result *res);
void run_result_free(struct run_result *r);

#endif
