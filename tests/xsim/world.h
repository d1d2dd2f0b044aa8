/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/* The simulated world: two processes, their rails, the network, faults. */
#ifndef R2CC_XSIM_WORLD_H
#define R2CC_XSIM_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "xsim.h"

#define XS_PIPE_WINDOW	(256u << 10)	/* bytes in flight, like a socket */

struct xs_pipe {
	uint8_t *buf;
	size_t len, deliv, rd, cap;	/* written, let through, read */
	size_t total;
	bool dead;
};

extern uint64_t xs_now;
extern struct xs_pipe xs_pipes[2];	/* 0: sender -> receiver */
extern int xs_fds[2];
extern int xs_send_eagain;
extern struct xs_rng *xs_net_rng;
void xs_pipe_push(int d, const void *buf, size_t len);
size_t xs_pipe_deliver(int d, size_t n);
void xs_pipes_reset(void);

/* One run's shape, drawn from its seed (or set by a scripted case). */
struct xs_config {
	uint64_t seed;
	int nrails;
	bool ib;			/* InfiniBand ports (else RoCE) */
	bool fallback;			/* TCP fallback when no rail is left */
	uint32_t rail_depth;
	uint32_t nic_window;		/* bytes in flight per NIC, 0: default */
	int nmsgs;			/* messages in the stream */
	uint32_t max_chunks;		/* largest message, in chunks */
	int send_window;		/* sends the application keeps open */
	int max_group;			/* receives per r2cc_irecv */
	int faults;			/* fault budget */
	bool enomem;			/* may inject a failed ctrl_send */
	bool verbose;
	/* scripted cases */
	int fixed_group;		/* receives per irecv, 0: random */
	bool first_big;			/* message 0 large, the rest small */
	uint64_t cut_all_ns;		/* cut every rail this long in, 0 */
	uint64_t restore_all_ns;	/* and restore them, 0: at the heal */
	bool rx_device;			/* receive buffers are "GPU memory" */
	int fail_rtr_node, fail_rtr_nic;	/* a rail that cannot connect */
	size_t fence_part_max;		/* split fence reports at this size */
	uint64_t rx_pause_ns;		/* the receiver stops this long, */
	uint64_t rx_pause_at;		/* from this far in */
	bool small_ticks;		/* no clock jumps past 100 us */
	uint64_t primary;		/* the sender's primaries, 0: all */
	int sb_chunks;			/* the standby script, see below */
	bool sb_quiet;			/* it fails them as black holes */
	bool nic_dup;			/* the NIC completes writes twice */
	/* the contexts' progress threads' period, virtual ns; 0: none */
	uint64_t progress_ns;
	/* an application with nothing open makes no call at all */
	bool idle_done;
	bool tail_cut;			/* the idle-peer case's cut */
	bool stall_adapt;		/* R2CC_STALL_ADAPT (lib/base/stall.h) */
	bool staged;			/* R2CC_REPAIR=staged (lib/xport/stage.h) */
	bool drain_graded;		/* R2CC_DRAIN=graded (lib/xport/rail.c) */
	bool stall_ask;			/* R2CC_STALL_ASK (lib/xport/wire.h) */
	/*
	 * rail 1 falls silent (a black hole) this long after the start and
	 * stays so until the sender fails it, which it must within
	 * XS_HOLE_LIMIT_NS; 0: no such hole
	 */
	uint64_t hole_ns;
#define XS_HOLE_LIMIT_NS	(2ull * 1000000000)
	/* rail 0 cut and restored at once every 0.5 to 1.5 x this, 0 */
	uint64_t blip_ns;
	bool slow_flush;		/* a QP in error takes long to flush */
	int dg_chunks;			/* the degrade script, see below */
	int dg_node;			/* whose port degrades: 0 or 1 */
	int lc_chunks;			/* the locate script, see below */
};

/*
 * The locate script (cfg->lc_chunks set, no random faults): rail 1 fails
 * three times, each once every rail carried lc_chunks chunks: node 0's
 * port goes down, then node 1's, then the link drops everything with
 * both ports up.  Each time both ends must locate the fault (local port
 * and peer's port, the other way round, the path at both), and the rail
 * must come back and carry before the next.
 */

/*
 * The degrade script (cfg->dg_chunks set, no random faults): once every
 * rail carried, node cfg->dg_node's port of rail 1 is reported degraded;
 * the sender must drain it (no new chunk while a healthy rail is up) as
 * the others carry 2 x dg_chunks; it is reported recovered and must carry
 * again; degraded once more and, drained, cut: the cut must take back no
 * chunk.  The phases reached are bits of xs_stats.sb_reached, after the
 * standby script's.
 */

/*
 * The standby script (cfg->primary set): the world fails the primary
 * rails one at a time, lowest first, each once it carried cfg->sb_chunks
 * chunks, and restores them all once the standbys carried as many; the
 * phases a run reached are bits of xs_stats.sb_reached.
 */
enum xs_sb_phase {
	XS_SB_PRIMARY,		/* primaries carried, standbys up, idle */
	XS_SB_ONE_LEFT,		/* one primary failed, the others carried */
	XS_SB_FAILOVER,		/* every primary failed, standbys carried */
	XS_SB_FAILBACK,		/* primaries back: a window all on them */
	XS_DG_DRAINED,		/* degraded: drained, the others carried */
	XS_DG_RECOVERED,	/* recovered: carries again */
	XS_DG_CUT,		/* degraded again, drained, cut: no rollback */
	XS_LC_LOCAL,		/* node 0's port down: located at both ends */
	XS_LC_PEER,		/* node 1's port down: located */
	XS_LC_PATH,		/* both ports up, the link dead: located */
	XS_SB_PHASES
};

/* What a run did, for the scripted cases to check. */
struct xs_stats {
	int fenced_parts, fenced_reports;
	size_t fenced_max;
	int data_msgs;			/* W_DATA sent */
	int irecv_slot_busy;		/* -EAGAIN with requests to spare */
	int enetdown;			/* requests failed with -ENETDOWN */
	bool enomem_fired, conn_lost;
	uint64_t failovers;		/* both ends */
	int sends_open_in_pause;	/* sends open when the pause ended */
	unsigned sb_reached;		/* 1 << enum xs_sb_phase, both scripts */
	uint64_t sb_chunks[XS_MAX_RAILS];	/* chunks posted per rail */
	uint64_t nic_dups;		/* writes the NIC completed twice */
	uint64_t dup_chunks;		/* ... that the receiver dropped */
	bool tail_cut;			/* the idle-peer cut happened */
	uint64_t progress_passes;	/* the progress threads' own passes */
	/* staged repair: chunks sent into the ring, entries copied in */
	uint64_t staged_sent, staged_used;
	/* R2CC_STALL_ASK: questions the sender asked, rails it kept */
	uint64_t stalls_asked, stalls_spared;
	bool hole_failed;		/* the hole's rail was failed */
};

extern struct xs_stats xs_stats;

void xs_config_draw(struct xs_config *cfg, uint64_t seed);

/* 0: every invariant held; else the run failed (message in xs_why). */
int xs_run(const struct xs_config *cfg);
extern char xs_why[256];
extern uint64_t xs_steps_total;

/* Fuzzing (tests/fuzz/fuzz_wire.c): a hostile peer's bytes. */
int xs_fuzz_open(const struct xs_config *cfg, int victim, int traffic);
void xs_fuzz_inject(int victim, const void *p, size_t len);
int xs_fuzz_steps(int victim, int n);
int xs_fuzz_close(void);

/*
 * The cost of r2cc_test() and of its lock, ns per call; with
 * R2CC_STATS_DIR set, also r2cc_test() with the stats file and one
 * rewrite of the file.
 */
int xs_bench_test(double *test_ns, double *lock_ns);
extern double xs_bench_published_ns, xs_bench_rewrite_ns;

#endif
