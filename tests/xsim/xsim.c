// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * r2cc-xsim: runs the transport's protocol simulator over many seeds and
 * prints TAP.  A failing seed is printed with the command that replays it:
 *
 *   xsim [-c CASE] [-n SEEDS] [-s FIRST] [-t SECONDS]
 *   xsim -b                            the cost of r2cc_test()'s lock
 *   R2CC_SIM_SEED=0x1234 xsim [-c CASE]  one seed, traced on stderr
 *
 * Without -n it runs seeds for 30 s, or $R2CC_XSIM_SECONDS (-t sets the
 * time; with -n as well, whichever ends first), then every scripted case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "world.h"
#include "xport/engine.h"
#include "xport/stage.h"

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void describe(const struct xs_config *c)
{
	printf("#   rails %d %s, fallback %s, depth %u, NIC window %u, %d messages of up to %u chunks, window %d, groups of %d, %d faults%s%s%s%s%s%s\n",
	       c->nrails, c->ib ? "IB" : "RoCE", c->fallback ? "tcp" : "none",
	       c->rail_depth, c->nic_window, c->nmsgs, c->max_chunks, c->send_window,
	       c->max_group, c->faults, c->enomem ? ", ENOMEM" : "",
	       c->nic_dup ? ", NIC doubles writes" : "",
	       c->stall_adapt ? ", adaptive stall bound" : "",
	       c->staged ? ", staged repair" : "",
	       c->drain_graded ? ", graded drain" : "",
	       c->stall_ask ? ", stalls asked" : "");
	if (c->primary)
		printf("#   primary rails %#llx, failed as %s\n",
		       (unsigned long long)c->primary,
		       c->sb_quiet ? "black holes" : "loud cuts");
}

/*
 * Scripted cases: the scenarios of the bugs this simulator was built to
 * find, each a shape of run over several seeds plus what must have
 * happened in it (so a case that stopped reaching its scenario fails).
 */
struct xs_case {
	const char *name;
	void (*shape)(struct xs_config *c);
	/* The run reached the scenario (NULL: every run does). */
	bool (*reached)(void);
	/* What else must hold after each run: NULL, or what did not. */
	const char *(*check)(void);
	/*
	 * Phases (1 << enum xs_sb_phase) every seed must reach, counted one
	 * by one; 0: @reached, by at least one seed.
	 */
	unsigned phases;
	/*
	 * The library's deliberately broken variant (the flag that turns
	 * it on: stage_unfenced, stall_ask_blind), NULL: none.  The case
	 * passes only if some seed's run fails.
	 */
	bool *broken;
};

static const char *const phase_names[XS_SB_PHASES] = {
	[XS_SB_PRIMARY] = "primaries only",
	[XS_SB_ONE_LEFT] = "one primary down",
	[XS_SB_FAILOVER] = "failover to standbys",
	[XS_SB_FAILBACK] = "failback to primaries",
	[XS_DG_DRAINED] = "degraded rail drained",
	[XS_DG_RECOVERED] = "recovered rail carries again",
	[XS_DG_CUT] = "drained rail cut, nothing re-sent",
	[XS_LC_LOCAL] = "sender's port down, located",
	[XS_LC_PEER] = "receiver's port down, located",
	[XS_LC_PATH] = "path dead, ports up, located",
};

/* 32 grouped receives fill every slot; a later group finishes first. */
static void shape_slot_reuse(struct xs_config *c)
{
	c->nrails = 2;
	c->fallback = true;
	c->faults = 0;
	c->enomem = false;
	c->first_big = true;
	c->fixed_group = 8;
	c->nmsgs = 600;
	c->send_window = 16;
	c->rail_depth = 2;
	/*
	 * A later group overtakes the earlier ones more often under the
	 * fixed stall bound: 26 of 40 seeds reached it so on 2026-12-07, 14
	 * with the bound drawn as for any seed (half of them adaptive).
	 * The stall questions change the runs' course: left out, as they
	 * were when those counts were taken.
	 */
	c->stall_adapt = false;
	c->stall_ask = false;
}

static bool slot_busy(void)
{
	return xs_stats.irecv_slot_busy;
}

/* Every rail lost with no fallback, then back: -ENETDOWN, then on. */
static void shape_no_rail(struct xs_config *c)
{
	c->fallback = false;
	c->faults = 0;
	c->enomem = false;
	c->nmsgs = 200;
	c->cut_all_ns = 2000000;
	c->restore_all_ns = 300000000;
}

static bool enetdown(void)
{
	return xs_stats.enetdown;
}

/* Fence reports split into many small parts. */
static void shape_fence_parts(struct xs_config *c)
{
	c->faults = 6;
	c->enomem = false;
	c->fence_part_max = 48 + c->seed % 64;
}

static bool fence_split(void)
{
	return xs_stats.fenced_parts > xs_stats.fenced_reports;
}

/* A control message lost to -ENOMEM on the failover path. */
static void shape_lost_ctrl(struct xs_config *c)
{
	c->faults = 8;
	c->enomem = true;
}

static bool enomem_fired(void)
{
	return xs_stats.enomem_fired;
}

/* GPU receive buffers and every rail lost: no TCP copy of them. */
static void shape_gpu_fallback(struct xs_config *c)
{
	c->fallback = true;
	c->rx_device = true;
	c->faults = 0;
	c->enomem = false;
	c->cut_all_ns = 2000000;
}


/* InfiniBand ports, and one rail of the two that cannot connect. */
static void shape_ib_start_down(struct xs_config *c)
{
	c->ib = true;
	c->nrails = 2;
	c->fail_rtr_node = (int)(c->seed & 1);
	c->fail_rtr_nic = (int)(c->seed >> 1 & 1);
}

/* The receiver's application stops for 2 s while the sender streams. */
static void shape_slow_consumer(struct xs_config *c)
{
	c->nrails = 2;
	c->fallback = true;
	c->faults = 0;
	c->enomem = false;
	c->fail_rtr_node = -1;
	c->nmsgs = 300;
	c->max_chunks = 8;
	c->send_window = 16;
	c->rx_pause_at = 3000000;
	c->rx_pause_ns = 2000000000;
	c->small_ticks = true;
}

static bool sends_waited(void)
{
	return xs_stats.sends_open_in_pause > 0;
}

static const char *no_failover(void)
{
	return xs_stats.failovers ? "a slow consumer failed a rail over" : NULL;
}

/*
 * An application blocked outside the library once its requests are done
 * (issue: a rank that waits on a peer who has moved on): both make no
 * call at all when they have nothing open, and once the receiver has
 * every message a rail the sender still has writes open on is cut, so
 * the sender needs the idle receiver's fence report to complete.  The
 * contexts' progress threads (every 5 ms) must answer for them; with
 * R2CC_XSIM_PROGRESS_MS=0 (no thread) the run hangs.
 */
static void shape_idle_peer(struct xs_config *c)
{
	const char *ms = getenv("R2CC_XSIM_PROGRESS_MS");

	c->nrails = 2 + (int)(c->seed % 2);
	c->faults = 0;
	c->enomem = false;
	c->fail_rtr_node = -1;
	c->nmsgs = 200;
	c->small_ticks = true;
	c->idle_done = true;
	c->tail_cut = true;
	c->progress_ns = ms ? strtoull(ms, NULL, 0) * 1000000 : 5000000;
}

/* The cut came, and a progress thread made a pass for its application. */
static bool tail_cut(void)
{
	return xs_stats.tail_cut && xs_stats.progress_passes;
}

/*
 * Three rails, rail 0 the only primary (two, with @primary 0b011): the
 * world fails the primaries in turn mid-stream, a loud cut or a black
 * hole by seed, and restores them once the standbys carried the stream.
 */
static void shape_standby_mask(struct xs_config *c, uint64_t primary)
{
	c->nrails = 3;
	c->fallback = true;	/* so any failed request is a violation */
	c->faults = 0;
	c->enomem = false;
	c->fail_rtr_node = -1;
	c->nmsgs = 1000;
	c->small_ticks = true;	/* a stall is a fault, not a clock jump */
	c->primary = primary;
	c->sb_chunks = 32;
	c->sb_quiet = c->seed & 1;
}

static void shape_standby(struct xs_config *c)
{
	shape_standby_mask(c, 0x1);
}

static void shape_standby_two(struct xs_config *c)
{
	shape_standby_mask(c, 0x3);
}

/*
 * The NIC completes a few writes twice (rxe has): the receiver drops the
 * second completion, whether its message is open, complete or handed
 * back, and the stream goes on with every byte right.
 */
static void shape_nic_dup(struct xs_config *c)
{
	c->nic_dup = true;
	/* A full rail depth in flight: more writes for the NIC to double. */
	c->nic_window = 0;
}

static bool dups_dropped(void)
{
	return xs_stats.dup_chunks > 0;
}

/*
 * Three rails, no random fault: rail 1's port is reported degraded (on the
 * sender, or on the receiver, which tells the sender), recovered, degraded
 * again and then cut (the degrade script, world.h).
 */
static void shape_degrade(struct xs_config *c, int node)
{
	c->nrails = 3;
	c->fallback = true;
	c->faults = 0;
	c->enomem = false;
	c->fail_rtr_node = -1;
	c->nmsgs = 1500;
	c->small_ticks = true;
	c->primary = 0;
	c->dg_chunks = 32;
	c->dg_node = node;
}

static void shape_degrade_local(struct xs_config *c)
{
	shape_degrade(c, 0);
}

static void shape_degrade_peer(struct xs_config *c)
{
	shape_degrade(c, 1);
}

#define DG_PHASES \
	(1u << XS_DG_DRAINED | 1u << XS_DG_RECOVERED | 1u << XS_DG_CUT)

/*
 * Three rails, no random fault: rail 1 fails at the sender's port, at the
 * receiver's, and silently between them (the locate script, world.h).
 */
static void shape_locate(struct xs_config *c)
{
	shape_degrade(c, 0);
	c->dg_chunks = 0;
	c->lc_chunks = 32;
}

#define LC_PHASES \
	(1u << XS_LC_LOCAL | 1u << XS_LC_PEER | 1u << XS_LC_PATH)

/*
 * Staged repair (R2CC_REPAIR=staged) over two or three rails, loud cuts,
 * black holes and restores: chunks re-sent into the receiver's ring and
 * copied in once their first rail is fenced.
 */
static void shape_staged(struct xs_config *c)
{
	c->nrails = 2 + (int)(c->seed % 2);
	c->staged = true;
	c->fallback = true;	/* so any failed request is a violation */
	c->faults = 6;
	c->enomem = false;
	c->fail_rtr_node = -1;
	c->nmsgs = 200;
}

/*
 * Rail 0 drops and comes back every 20 ms or so, or falls silent for
 * about the stall bound, and a QP in error takes long to flush: what it
 * had in flight lands late, after its chunks were staged on the other
 * rail, unless the receiver fenced it first.
 */
static void shape_staged_late(struct xs_config *c)
{
	shape_staged(c);
	c->nrails = 2;
	c->faults = 0;
	c->nmsgs = 400;
	c->stall_adapt = false;
	c->blip_ns = 20000000;
	c->slow_flush = true;
}

static bool staged_used(void)
{
	return xs_stats.staged_used > 0;
}

/* The sender staged chunks (whether the originals beat them or not). */
static bool staged_sent(void)
{
	return xs_stats.staged_sent > 0;
}

/*
 * R2CC_STALL_ASK: rail 0 blips or falls silent for about the stall bound
 * (as in staged-late), and rail 1 falls silent for good 50 ms in: the
 * sender asks the receiver before failing a stalled rail, keeps one whose
 * writes still land, and still fails the black hole (hole_found; the
 * world fails a run whose hole stays up XS_HOLE_LIMIT_NS with work
 * posted).
 */
static void shape_stall_ask(struct xs_config *c)
{
	c->nrails = 2;
	c->fallback = true;
	c->faults = 0;
	c->nmsgs = 400;
	c->stall_adapt = false;
	c->stall_ask = true;
	c->blip_ns = 20000000;
	c->hole_ns = 50000000;
}

static bool stalls_spared(void)
{
	return xs_stats.stalls_spared > 0;
}

static const char *hole_found(void)
{
	return xs_stats.hole_failed ? NULL :
	       "the black hole on rail 1 was never failed";
}

static const struct xs_case cases[] = {
	{ "slot-reuse", shape_slot_reuse, slot_busy, NULL, 0, NULL },
	{ "no-rail-left", shape_no_rail, enetdown, NULL, 0, NULL },
	{ "fence-parts", shape_fence_parts, fence_split, NULL, 0, NULL },
	{ "lost-ctrl", shape_lost_ctrl, enomem_fired, NULL, 0, NULL },
	{ "gpu-no-fallback", shape_gpu_fallback, enetdown, NULL, 0, NULL },
	{ "ib-rail-starts-down", shape_ib_start_down, NULL, NULL, 0, NULL },
	{ "slow-consumer", shape_slow_consumer, sends_waited, no_failover, 0,
	  NULL },
	{ "nic-dup", shape_nic_dup, dups_dropped, NULL, 0, NULL },
	{ "standby", shape_standby, NULL, NULL,
	  1u << XS_SB_PRIMARY | 1u << XS_SB_FAILOVER | 1u << XS_SB_FAILBACK,
	  NULL },
	{ "standby-two", shape_standby_two, NULL, NULL,
	  1u << XS_SB_PRIMARY | 1u << XS_SB_ONE_LEFT | 1u << XS_SB_FAILOVER |
	  1u << XS_SB_FAILBACK, NULL },
	{ "degrade-local", shape_degrade_local, NULL, NULL, DG_PHASES, NULL },
	{ "degrade-peer", shape_degrade_peer, NULL, NULL, DG_PHASES, NULL },
	{ "locate", shape_locate, NULL, NULL, LC_PHASES, NULL },
	{ "idle-peer", shape_idle_peer, tail_cut, NULL, 0, NULL },
	{ "staged", shape_staged, staged_used, NULL, 0, NULL },
	{ "staged-late", shape_staged_late, staged_sent, NULL, 0, NULL },
	{ "staged-unfenced", shape_staged_late, NULL, NULL, 0,
	  &stage_unfenced },
	{ "stall-ask", shape_stall_ask, stalls_spared, hole_found, 0, NULL },
	{ "stall-ask-blind", shape_stall_ask, NULL, NULL, 0,
	  &stall_ask_blind },
};

#define NCASES	(int)(sizeof(cases) / sizeof(cases[0]))
/* seeds per scripted case: R2CC_XSIM_CASE_SEEDS, 40 by default */
static int case_seeds = 40;

/* A broken variant's case: some seed must catch it. */
static int run_broken(int i, const char *argv0)
{
	const struct xs_case *k = &cases[i];
	int caught = 0;
	uint64_t s, first = 0;
	char why[sizeof(xs_why)] = "";

	*k->broken = true;
	/* up to ten times the seeds, until three have caught it */
	for (s = 1; s <= 10 * (uint64_t)case_seeds && caught < 3; s++) {
		struct xs_config c;

		xs_config_draw(&c, s);
		k->shape(&c);
		if (!xs_run(&c))
			continue;
		if (!caught++) {
			first = s;
			snprintf(why, sizeof(why), "%s", xs_why);
		}
	}
	*k->broken = false;
	if (caught)
		printf("#   case %s: first caught by seed %llu: %s (R2CC_SIM_SEED=%llu %s -c %s)\n",
		       k->name, (unsigned long long)first, why,
		       (unsigned long long)first, argv0, k->name);
	printf("%sok %d - case %s: the broken variant caught by %d of %llu seeds\n",
	       caught ? "" : "not ", i + 2, k->name, caught,
	       (unsigned long long)(s - 1));
	return !caught;
}

static int run_case(int i, const char *argv0)
{
	const struct xs_case *k = &cases[i];
	const char *why = NULL;
	int reached = 0, in_phase[XS_SB_PHASES] = { 0 }, p;
	uint64_t s;

	if (k->broken)
		return run_broken(i, argv0);

	for (s = 1; s <= (uint64_t)case_seeds && !why; s++) {
		struct xs_config c;

		xs_config_draw(&c, s);
		k->shape(&c);
		if (xs_run(&c))
			why = xs_why;
		else if (k->check && k->check())
			why = k->check();
		else if (k->phases) {
			for (p = 0; p < XS_SB_PHASES; p++)
				in_phase[p] += xs_stats.sb_reached >> p & 1;
			if ((xs_stats.sb_reached & k->phases) == k->phases)
				reached++;
			else
				printf("#   case %s, seed %llu: a phase not reached (R2CC_SIM_SEED=%llu %s -c %s)\n",
				       k->name, (unsigned long long)s,
				       (unsigned long long)s, argv0, k->name);
		} else if (!k->reached || k->reached()) {
			reached++;
		}
	}
	if (why) {
		printf("not ok %d - case %s, seed %llu: %s\n", i + 2, k->name,
		       (unsigned long long)(s - 1), why);
		printf("#   replay: R2CC_SIM_SEED=%llu %s -c %s\n",
		       (unsigned long long)(s - 1), argv0, k->name);
		return 1;
	}
	if (k->phases) {
		for (p = 0; p < XS_SB_PHASES; p++)
			if (k->phases >> p & 1)
				printf("#   case %s: %d of %d seeds reached phase '%s'\n",
				       k->name, in_phase[p], case_seeds,
				       phase_names[p]);
		printf("%sok %d - case %s: %d seeds, %d reached every phase\n",
		       reached == case_seeds ? "" : "not ", i + 2, k->name,
		       case_seeds, reached);
		return reached != case_seeds;
	}
	printf("%sok %d - case %s: %d seeds, %d reached the scenario\n",
	       reached ? "" : "not ", i + 2, k->name, case_seeds, reached);
	return !reached;
}

static const struct xs_case *case_named(const char *name)
{
	int i;

	for (i = 0; i < NCASES; i++)
		if (!strcmp(cases[i].name, name))
			return &cases[i];
	return NULL;
}

/* One seed, traced on stderr: R2CC_SIM_SEED=N [-c CASE]. */
static int replay(uint64_t seed, const struct xs_case *k)
{
	struct xs_config c;
	const char *why = NULL;
	int i;

	xs_config_draw(&c, seed);
	if (k)
		k->shape(&c);
	if (k && k->broken)
		*k->broken = true;
	c.verbose = true;
	printf("1..1\n");
	describe(&c);
	if (xs_run(&c))
		why = xs_why;
	else if (k && k->check)
		why = k->check();
	if (!why && k && k->reached && !k->reached())
		printf("# the run did not reach case %s\n", k->name);
	for (i = 0; !why && k && i < XS_SB_PHASES; i++)
		if (k->phases >> i & 1)
			printf("# phase '%s' %sreached\n", phase_names[i],
			       xs_stats.sb_reached >> i & 1 ? "" : "not ");
	printf("%sok 1 - seed %#llx%s%s\n", why ? "not " : "",
	       (unsigned long long)seed, why ? ": " : "", why ? why : "");
	return !!why;
}

int main(int argc, char **argv)
{
	const char *one = getenv("R2CC_SIM_SEED");
	const struct xs_case *k = NULL;
	uint64_t first = 1, n = 1000000, s, asked = 0, spared = 0;
	const char *secs = getenv("R2CC_XSIM_SECONDS");
	const char *per_case = getenv("R2CC_XSIM_CASE_SEEDS");
	/* the ASan phase runs it with no options, the time from the env */
	double limit = secs && *secs ? atof(secs) : 30, t0;
	int opt, bad = 0, i;

	while ((opt = getopt(argc, argv, "bc:n:s:t:")) != -1) {
		switch (opt) {
		case 'b': {
			double t, l;

			if (xs_bench_test(&t, &l))
				return 1;
			printf("r2cc_test: %.1f ns per call, of which lock+unlock %.1f ns (%.0f%%)\n",
			       t, l, 100 * l / t);
			if (xs_bench_rewrite_ns)
				printf("with the stats file: %.1f ns per call; a rewrite of it %.1f ns\n",
				       xs_bench_published_ns,
				       xs_bench_rewrite_ns);
			return 0;
		}
		case 'c':
			k = case_named(optarg);
			if (!k) {
				fprintf(stderr, "%s: no case '%s'\n", argv[0],
					optarg);
				return 2;
			}
			break;
		case 'n':
			n = strtoull(optarg, NULL, 0);
			limit = 0;
			break;
		case 's':
			first = strtoull(optarg, NULL, 0);
			break;
		case 't':
			limit = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-c CASE] [-n SEEDS] [-s FIRST] [-t SECONDS]\n",
				argv[0]);
			return 2;
		}
	}
	if (per_case && *per_case) {
		char *end;
		long v = strtol(per_case, &end, 0);

		if (*end || v < 1 || v > 100000) {
			fprintf(stderr, "%s: R2CC_XSIM_CASE_SEEDS must be 1..100000\n",
				argv[0]);
			return 2;
		}
		case_seeds = (int)v;
	}
	if (one && *one)
		return replay(strtoull(one, NULL, 0), k);
	printf("1..%d\n", k ? 1 : 1 + NCASES);
	t0 = wall();
	for (s = first; s < first + n; s++) {
		struct xs_config c;
		const char *why = NULL;

		if (limit && wall() - t0 > limit)
			break;
		xs_config_draw(&c, s);
		if (k)
			k->shape(&c);
		if (xs_run(&c))
			why = xs_why;
		else if (k && k->check)
			why = k->check();
		asked += xs_stats.stalls_asked;
		spared += xs_stats.stalls_spared;
		if (why) {
			printf("# seed %#llx: %s\n", (unsigned long long)s, why);
			describe(&c);
			printf("#   replay: R2CC_SIM_SEED=%#llx %s%s%s\n",
			       (unsigned long long)s, argv[0], k ? " -c " : "",
			       k ? k->name : "");
			if (++bad == 10)
				break;
		}
	}
	printf("# %llu seeds in %.1f s (%.0f seeds/s, %.0f steps/s)\n",
	       (unsigned long long)(s - first), wall() - t0,
	       (s - first) / (wall() - t0), xs_steps_total / (wall() - t0));
	/* the same seeds take the same steps: a digest of the run */
	printf("# %llu steps in all\n", (unsigned long long)xs_steps_total);
	printf("# stalled rails: %llu questions to the receiver, %llu rails kept on its word\n",
	       (unsigned long long)asked, (unsigned long long)spared);
	printf("%sok 1 - protocol simulator%s%s: %llu seeds from %llu, %d failed\n",
	       bad ? "not " : "", k ? ", case " : "", k ? k->name : "",
	       (unsigned long long)(s - first), (unsigned long long)first, bad);
	for (i = 0; !k && i < NCASES; i++)
		bad += run_case(i, argv[0]);
	return bad ? 1 : 0;
}
