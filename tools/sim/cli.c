// SPDX-License-Identifier: GPL-2.0-only
/*
 * Flags and config files share one table, so every key is checked the
 * same way wherever it comes from: numbers must parse completely, be
 * finite and lie in range; names must be known; nothing may be longer
 * than CLI_MAX_VALUE.  Errors name the key and the value and return 2.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum opt_type { O_INT, O_LONG, O_DBL, O_SIZE, O_FLAG, O_CHOICE, O_STR,
		O_FAIL, O_DEGRADE, O_CONFIG, O_HELP, O_VERSION };

struct opt {
	const char *name;
	enum opt_type type;
	size_t off;
	double min, max;
	const char *help;
};

#define C(f) offsetof(struct sim_config, f)
static const struct opt opts[] = {
	{ "config", O_CONFIG, 0, 0, 0, "FILE: read KEY = VALUE lines" },
	{ "nodes", O_INT, C(fab.nodes), 1, SIM_MAX_NODES, "nodes (16)" },
	{ "gpus", O_INT, C(fab.gpus), 1, SIM_MAX_GPUS, "GPUs per node (8)" },
	{ "nics", O_INT, C(fab.nics), 1, SIM_MAX_NICS, "NICs per node (8)" },
	{ "nic-gbps", O_DBL, C(nic_gbps), 1e-3, 1e5,
	  "Gbit/s per NIC (400)" },
	{ "nic-lat-us", O_DBL, C(lat_us), 0, 1e6,
	  "alpha: us per message step (5)" },
	{ "intra-gbps", O_DBL, C(intra_gbps), 1e-3, 1e6,
	  "Gbit/s inside a node (3600)" },
	{ "fuse", O_INT, C(fab.fuse), 1, SIM_MAX_NICS,
	  "NICs per fused NIC for nccl-failover (2)" },
	{ "chunks", O_INT, C(fab.chunks), 0, 4096,
	  "pipeline chunks of a decomposition, 0 = fluid (64)" },
	{ "workload", O_CHOICE, C(wl.kind), 0, 0, "coll|train|serve (coll)" },
	{ "coll", O_CHOICE, C(wl.coll), 0, 0,
	  "collective for --workload coll (allreduce)" },
	{ "size", O_SIZE, C(wl.size), 1, 1e15,
	  "bytes per node, K/M/G/Ki/Mi/Gi suffixes (1GiB)" },
	{ "model", O_CHOICE, C(wl.model), 0, 0,
	  "gpt-7b|gpt-13b|gpt-70b|gpt-175b|gpt-405b (gpt-70b)" },
	{ "tp", O_INT, C(wl.tp), 1, 4096, "tensor-parallel size (8)" },
	{ "pp", O_INT, C(wl.pp), 1, 4096, "pipeline stages (1)" },
	{ "batch", O_INT, C(wl.batch), 1, 1e8,
	  "global batch, sequences (1024)" },
	{ "seq", O_INT, C(wl.seq), 1, 1e7, "sequence length (4096)" },
	{ "micro", O_INT, C(wl.micro), 1, 4096, "microbatches (8)" },
	{ "mfu", O_DBL, C(wl.mfu), 1e-3, 1, "model FLOPs utilisation (0.4)" },
	{ "gpu-tflops", O_DBL, C(tflops), 1e-3, 1e6,
	  "peak dense TFLOP/s per GPU (989)" },
	{ "overlap", O_DBL, C(wl.overlap), 0, 1,
	  "share of backward that hides the gradient allreduce (0)" },
	{ "prompt", O_INT, C(wl.prompt), 1, 1e7, "prompt tokens (2048)" },
	{ "output", O_INT, C(wl.output), 1, 1e7, "output tokens (256)" },
	{ "concurrency", O_INT, C(wl.concurrency), 1, 1e6,
	  "requests per batch (32)" },
	{ "hbm-tbps", O_DBL, C(hbm_tbps), 1e-3, 1e3,
	  "HBM TB/s per GPU (3.35)" },
	{ "iters", O_LONG, C(iters), 1, 1e9, "iterations or batches (1000)" },
	{ "strategy", O_CHOICE, C(strat_mask), 0, 0,
	  "all or a comma list (all)" },
	{ "ib-timeout", O_INT, C(det.ib_timeout), 0, 31,
	  "NCCL_IB_TIMEOUT (20)" },
	{ "ib-retry", O_INT, C(det.ib_retry), 0, 7, "NCCL_IB_RETRY_CNT (7)" },
	{ "r2ccl-detect-s", O_DBL, C(det.r2ccl_detect), 0, 1e6,
	  "R2CCL detection time (5)" },
	{ "port-detect-us", O_DBL, C(port_us), 0, 1e9,
	  "r2cc port-event detection (10)" },
	{ "stall-ms", O_DBL, C(stall_ms), 0, 1e9,
	  "r2cc silent-failure bound (100)" },
	{ "restart-s", O_DBL, C(det.restart), 0, 1e9,
	  "abort to running again (600)" },
	{ "ckpt-interval-s", O_DBL, C(det.ckpt_interval), 0, 1e9,
	  "checkpoint interval, 0 = never (3600)" },
	{ "ckpt-cost-s", O_DBL, C(det.ckpt_cost), 0, 1e6,
	  "time to write a checkpoint (0)" },
	{ "fail", O_FAIL, 0, 0, 0, "NODE:NIC@T[..T2][/silent] (repeatable)" },
	{ "degrade", O_DEGRADE, 0, 0, 0,
	  "NODE:NIC@T[..T2]=FRAC (repeatable)" },
	{ "mtbf-h", O_DBL, C(mtbf_h), 0, 1e9,
	  "random trace: mean hours between failures per NIC, 0 = off" },
	{ "repair-s", O_DBL, C(rnd.repair), 1e-6, 1e9,
	  "random trace: mean repair time (3600)" },
	{ "flap-prob", O_DBL, C(rnd.flap_prob), 0, 1,
	  "random trace: share of failures that flap (0)" },
	{ "flap-count", O_INT, C(rnd.flap_count), 1, 1000,
	  "down/up cycles per flap (3)" },
	{ "flap-period-s", O_DBL, C(rnd.flap_period), 1e-6, 1e6,
	  "seconds per flap half-cycle (1)" },
	{ "degrade-prob", O_DBL, C(rnd.degrade_prob), 0, 1,
	  "random trace: share of failures that only degrade (0)" },
	{ "degrade-frac", O_DBL, C(rnd.degrade_frac), 1e-6, 0.999999,
	  "bandwidth a degraded NIC keeps (0.5)" },
	{ "silent-prob", O_DBL, C(rnd.silent_prob), 0, 1,
	  "random trace: share of silent failures (0)" },
	{ "seed", O_DBL, C(seed), 0, 9007199254740992.0,
	  "random trace seed (1)" },
	{ "horizon-s", O_DBL, C(horizon), 0, 1e12,
	  "random trace length, 0 = 2 x failure-free run (0)" },
	{ "csv", O_FLAG, C(csv), 0, 0, "CSV instead of a table" },
	{ "plot", O_STR, C(plot), 0, 0,
	  "FILE.png|FILE.svg: timeline via gnuplot" },
	{ "help", O_HELP, 0, 0, 0, "this text" },
	{ "version", O_VERSION, 0, 0, 0, "print the version" },
};
#undef C

static const char *const wl_names[] = { "coll", "train", "serve", NULL };

void cli_usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: r2cc-sim [--KEY VALUE | --KEY=VALUE]...\n"
		"Simulates a job under NIC failures with each strategy.\n\n");
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		fprintf(out, "  --%-16s %s\n", opts[i].name, opts[i].help);
}

static void defaults(struct sim_config *c)
{
	memset(c, 0, sizeof(*c));
	c->fab = (struct fabric){ .nodes = 16, .gpus = 8, .nics = 8,
				  .fuse = 2, .chunks = 64 };
	c->nic_gbps = 400;
	c->lat_us = 5;
	c->intra_gbps = 3600;
	c->wl = (struct workload){ .kind = WL_COLL, .coll = COLL_ALLREDUCE,
		.size = 1073741824.0, .model = 2, .tp = 8, .pp = 1,
		.batch = 1024, .seq = 4096, .micro = 8, .mfu = 0.4,
		.prompt = 2048, .output = 256, .concurrency = 32 };
	c->tflops = 989;
	c->hbm_tbps = 3.35;
	c->iters = 1000;
	c->strat_mask = (1u << ST_NR) - 1;
	c->det = (struct detect_params){ .ib_timeout = 20, .ib_retry = 7,
		.r2ccl_detect = 5, .restart = 600, .ckpt_interval = 3600 };
	c->port_us = 10;
	c->stall_ms = 100;
	c->rnd = (struct random_trace){ .repair = 3600, .flap_count = 3,
		.flap_period = 1, .degrade_frac = 0.5 };
	c->seed = 1;
}

static int bad(const char *key, const char *val, const char *why)
{
	fprintf(stderr, "r2cc-sim: --%s: '%.64s%s': %s\n", key, val,
		strlen(val) > 64 ? "..." : "", why);
	return 2;
}

/* Reads a size with an optional decimal or binary suffix. */
static int parse_size(const char *s, double *v)
{
	static const struct { const char *sfx; double mul; } sfx[] = {
		{ "", 1 }, { "K", 1e3 }, { "M", 1e6 }, { "G", 1e9 },
		{ "T", 1e12 }, { "Ki", 1024.0 }, { "Mi", 1048576.0 },
		{ "Gi", 1073741824.0 }, { "Ti", 1099511627776.0 },
		{ "KiB", 1024.0 }, { "MiB", 1048576.0 },
		{ "GiB", 1073741824.0 }, { "TiB", 1099511627776.0 },
		{ "B", 1 }, { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 },
	};
	char *end;
	size_t i;

	errno = 0;
	*v = strtod(s, &end);
	if (end == s || errno || !isfinite(*v))
		return -1;
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if (!strcmp(end, sfx[i].sfx)) {
			*v *= sfx[i].mul;
			return 0;
		}
	return -1;
}

static int parse_choice(const struct opt *o, const char *val,
			struct sim_config *c)
{
	int i = -1;

	if (!strcmp(o->name, "workload")) {
		for (i = 0; wl_names[i] && strcmp(val, wl_names[i]); i++)
			;
		if (!wl_names[i])
			return bad(o->name, val, "expected coll, train or "
				   "serve");
		c->wl.kind = i;
	} else if (!strcmp(o->name, "coll")) {
		i = coll_parse(val);
		if (i < 0)
			return bad(o->name, val, "unknown collective (allreduce"
				   ", tree-allreduce, allgather, reduce-scatter"
				   ", broadcast, alltoall, sendrecv)");
		c->wl.coll = i;
	} else if (!strcmp(o->name, "model")) {
		i = model_parse(val);
		if (i < 0)
			return bad(o->name, val, "unknown model");
		c->wl.model = i;
	} else if (strat_parse_list(val, &c->strat_mask)) {
		return bad(o->name, val, "expected all or a comma list of "
			   "nccl, nccl-failover, r2ccl-balance, "
			   "r2cc-allreduce, r2cc, r2cc-overlap, r2cc-lib, "
			   "r2cc-optimal, r2cc-lib-mesh");
	}
	return 0;
}

static int read_config(const char *path, struct sim_config *c);

static const struct fabric any_size = {
	.nodes = SIM_MAX_NODES, .nics = SIM_MAX_NICS,
};

static int set(const struct opt *o, const char *val, struct sim_config *c,
	       bool in_file)
{
	char *p = (char *)c + o->off, *end, err[256];
	double d;

	if (strlen(val) > CLI_MAX_VALUE)
		return bad(o->name, val, "value too long");
	switch (o->type) {
	case O_INT:
	case O_LONG:
	case O_DBL:
	case O_SIZE:
		errno = 0;
		if (o->type == O_SIZE) {
			if (parse_size(val, &d))
				return bad(o->name, val, "not a size");
		} else {
			d = strtod(val, &end);
			if (end == val || *end || errno == ERANGE ||
			    !isfinite(d))
				return bad(o->name, val, "not a number");
		}
		if ((o->type == O_INT || o->type == O_LONG) && d != floor(d))
			return bad(o->name, val, "not a whole number");
		if (!(d >= o->min && d <= o->max)) {
			snprintf(err, sizeof(err), "must be between %g and %g",
				 o->min, o->max);
			return bad(o->name, val, err);
		}
		if (o->type == O_INT)
			*(int *)p = (int)d;
		else if (o->type == O_LONG)
			*(long *)p = (long)d;
		else
			*(double *)p = d;
		return 0;
	case O_FLAG:
		if (strcmp(val, "1") && strcmp(val, "yes") &&
		    strcmp(val, "0") && strcmp(val, "no"))
			return bad(o->name, val, "expected yes or no");
		*(int *)p = !strcmp(val, "1") || !strcmp(val, "yes");
		return 0;
	case O_CHOICE:
		return parse_choice(o, val, c);
	case O_STR:
		if (!*val)
			return bad(o->name, val, "empty");
		strcpy(p, val);
		return 0;
	case O_FAIL:
	case O_DEGRADE:
		/* checked against the final cluster size in finish() */
		if (trace_add_spec(&c->trace, val, o->type == O_DEGRADE,
				   &any_size, err, sizeof(err)))
			return bad(o->name, val, err);
		return 0;
	case O_CONFIG:
		if (in_file)
			return bad(o->name, val, "config files do not nest");
		return read_config(val, c);
	default:
		break;
	}
	return bad(o->name, val, "takes no value");
}

static const struct opt *find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strlen(opts[i].name) == len &&
		    !strncmp(opts[i].name, name, len))
			return &opts[i];
	return NULL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* 1: a line; 0: end of file; -1: too long; -2: NUL byte. */
static int read_line(FILE *f, char *buf, size_t max)
{
	size_t n = 0;
	int ch;

	while ((ch = getc(f)) != EOF && ch != '\n') {
		if (ch == '\0')
			return -2;
		if (n == max)
			return -1;
		buf[n++] = (char)ch;
	}
	buf[n] = '\0';
	return ch == EOF && !n ? 0 : 1;
}

static int read_config(const char *path, struct sim_config *c)
{
	char line[CLI_MAX_VALUE + 1];
	int lineno = 0, rc = 0, got;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "r2cc-sim: --config: %.256s: %s\n", path,
			strerror(errno));
		return 2;
	}
	while (!rc && (got = read_line(f, line, CLI_MAX_VALUE)) != 0) {
		const struct opt *o;
		char *s, *eq;

		lineno++;
		if (got < 0) {
			fprintf(stderr, "r2cc-sim: %.256s:%d: %s\n", path,
				lineno, got == -1 ? "line too long" :
				"NUL byte in line");
			rc = 2;
			break;
		}
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			fprintf(stderr, "r2cc-sim: %.256s:%d: expected "
				"KEY = VALUE\n", path, lineno);
			rc = 2;
			break;
		}
		*eq = '\0';
		s = trim(s);
		o = find(s, strlen(s));
		if (!o || o->type == O_HELP || o->type == O_VERSION) {
			fprintf(stderr, "r2cc-sim: %.256s:%d: unknown key "
				"'%.64s'\n", path, lineno, s);
			rc = 2;
			break;
		}
		rc = set(o, trim(eq + 1), c, true);
		if (rc)
			fprintf(stderr, "r2cc-sim: (in %.256s:%d)\n", path,
				lineno);
	}
	if (!rc && ferror(f)) {
		fprintf(stderr, "r2cc-sim: %.256s: read error\n", path);
		rc = 2;
	}
	fclose(f);
	return rc;
}

/* Cross-field checks and unit conversion, after every key is in. */
static int finish(struct sim_config *c)
{
	struct fabric *f = &c->fab;
	char err[256];
	int i;

	if (f->fuse > f->nics) {
		fprintf(stderr, "r2cc-sim: --fuse %d: larger than --nics %d\n",
			f->fuse, f->nics);
		return 2;
	}
	if (c->rnd.flap_prob + c->rnd.degrade_prob > 1.0) {
		fprintf(stderr, "r2cc-sim: --flap-prob + --degrade-prob "
			"exceed 1\n");
		return 2;
	}
	if (c->wl.kind != WL_COLL && wl_check(&c->wl, f, err, sizeof(err))) {
		fprintf(stderr, "r2cc-sim: %s\n", err);
		return 2;
	}
	if (c->wl.kind == WL_COLL && c->wl.coll == COLL_SENDRECV &&
	    f->nodes != 2) {
		fprintf(stderr, "r2cc-sim: --coll sendrecv needs --nodes 2\n");
		return 2;
	}
	if (c->plot[0]) {
		size_t n = strlen(c->plot);

		if (n < 5 || (strcmp(c->plot + n - 4, ".png") &&
			      strcmp(c->plot + n - 4, ".svg"))) {
			fprintf(stderr, "r2cc-sim: --plot: '%.64s': the file "
				"name must end in .png or .svg\n", c->plot);
			return 2;
		}
	}
	/* scripted events named NICs before --nodes/--nics may have moved */
	trace_sort(&c->trace);
	for (i = 0; i < c->trace.n; i++) {
		const struct event *e = &c->trace.ev[i];
		int j;

		if (e->node >= f->nodes || e->nic >= f->nics) {
			fprintf(stderr, "r2cc-sim: event for node %d NIC %d, "
				"but the cluster has %d nodes x %d NICs\n",
				e->node, e->nic, f->nodes, f->nics);
			return 2;
		}
		if (e->frac >= 1.0)
			continue;
		/* a NIC cannot fail again before it is restored */
		for (j = i - 1; j >= 0; j--) {
			const struct event *p = &c->trace.ev[j];

			if (p->node != e->node || p->nic != e->nic)
				continue;
			if (p->frac < 1.0) {
				fprintf(stderr, "r2cc-sim: node %d NIC %d "
					"fails at %g s while already failed "
					"since %g s (more failures than "
					"NICs)\n", e->node, e->nic, e->t,
					p->t);
				return 2;
			}
			break;
		}
	}
	f->nic_bw = c->nic_gbps * 1e9 / 8.0;
	f->intra_bw = c->intra_gbps * 1e9 / 8.0;
	f->alpha = c->lat_us * 1e-6;
	c->wl.gpu_flops = c->tflops * 1e12;
	c->wl.hbm_bw = c->hbm_tbps * 1e12;
	c->det.port_detect = c->port_us * 1e-6;
	c->det.stall_detect = c->stall_ms * 1e-3;
	c->rnd.mtbf = c->mtbf_h * 3600.0;
	c->rnd.seed = (uint64_t)c->seed;
	return 0;
}

int cli_parse(int argc, char **argv, struct sim_config *c)
{
	int i, rc;

	defaults(c);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *val;
		const struct opt *o;
		size_t len;

		if (strncmp(a, "--", 2) || !a[2]) {
			fprintf(stderr, "r2cc-sim: unexpected argument "
				"'%.64s' (try --help)\n", a);
			return 2;
		}
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		o = find(a, len);
		if (!o) {
			fprintf(stderr, "r2cc-sim: unknown option '--%.*s' "
				"(try --help)\n", (int)(len > 64 ? 64 : len),
				a);
			return 2;
		}
		if (o->type == O_HELP) {
			cli_usage(stdout);
			return 1;
		}
		if (o->type == O_VERSION) {
			printf("r2cc-sim 0.1.0\n");
			return 1;
		}
		if (o->type == O_FLAG && !eq) {
			*(int *)((char *)c + o->off) = 1;
			continue;
		}
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			fprintf(stderr, "r2cc-sim: --%s needs a value\n",
				o->name);
			return 2;
		}
		rc = set(o, val, c, false);
		if (rc)
			return rc;
	}
	return finish(c);
}

void cli_free(struct sim_config *c)
{
	trace_free(&c->trace);
}
