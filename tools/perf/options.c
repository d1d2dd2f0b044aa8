// SPDX-License-Identifier: GPL-2.0-only
/*
 * Command line and environment.  Every value must parse completely and lie
 * in range; anything else is reported on stderr, naming the flag, and the
 * program exits 2 before it touches the fabric or the network.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static const char usage[] =
"Usage: r2cc-perf [MODE] [OPTIONS]\n"
"\n"
"Moves messages between two ranks over libr2cc and reports throughput or\n"
"latency, verifying every byte and showing what each rail carried.  Rank 0\n"
"sends, rank 1 receives (--bw); --lat bounces messages both ways.\n"
"\n"
"Modes:\n"
"  --bw                 throughput, rank 0 -> rank 1 (default)\n"
"  --lat                ping-pong latency: median and p99 in us (half the\n"
"                       round trip), one message in flight\n"
"  --coll KIND          a collective on every rank of the world (any size):\n"
"                       allreduce, reduce_scatter, allgather, broadcast or\n"
"                       reduce (root 0), SIZE bytes in the largest\n"
"                       buffer as nccl-tests counts them; median time, algbw\n"
"                       and busbw; --iters per size (default 10)\n"
"      --mesh           --coll on a communicator with the mesh\n"
"                       (R2CC_COMM_MESH): small allreduces by recursive\n"
"                       doubling\n"
"      --dtype TYPE     --coll's elements: int8, uint8, int32 (default),\n"
"                       uint32, int64, uint64, float16, bfloat16, float32\n"
"                       or float64\n"
"      --op OP          --coll's reduction: sum (default), prod, min, max\n"
"                       or avg (allreduce, reduce_scatter, reduce)\n"
"\n"
"Messages:\n"
"  -s, --size BYTES     message size, suffixes K, M, G (x1024); default\n"
"                       1M for --bw, 8 for --lat; at most 1G\n"
"      --sweep MIN:MAX  every power-of-two multiple of MIN up to MAX (and\n"
"                       MAX itself), one phase per size\n"
"  -n, --iters N        messages per size\n"
"  -d, --duration SECS  seconds per size (default: 5 for --bw; --lat runs\n"
"                       1000 iterations)\n"
"  -w, --window W       --bw: messages in flight, 1..64 (default 4); each\n"
"                       has its own slot of a registered ring\n"
"      --no-verify      do not fill or check the payload\n"
"\n"
"Timeline and output:\n"
"      --interval-ms MS  timeline interval (default 100)\n"
"      --timeline       print one line per interval: time, Mbit/s, per rail\n"
"                       Mbit/s and state, and events (rail state changes,\n"
"                       failovers, repairs and their latency, --at commands);\n"
"                       --coll: one line per call on rank 0 (time, size, us,\n"
"                       algorithm, failovers, re-sent and TCP bytes, view)\n"
"      --csv FILE       write the timeline as CSV (time_s, mbit_s, railN_mbit_s,\n"
"                       railN_state, event, msg_size; --coll: time_s, size,\n"
"                       iter, us, algo, failovers, resent_bytes, tcp_bytes,\n"
"                       view_changes); %r in FILE becomes the rank\n"
"      --at SECS:CMD    SECS after the transfer starts, run CMD with /bin/sh\n"
"                       in the background (repeatable, up to 32); e.g.\n"
"                       --at '2:ip link set eth1 down'\n"
"      --timeout SECS   give up when nothing completes for SECS, in every\n"
"                       wait, rendezvous included (default 60)\n"
"  -v, --verbose        library log: -v info, -vv debug (default: warnings)\n"
"\n"
"Rendezvous (flags override the environment):\n"
"      --root HOST:PORT rank 0's address; else $R2CC_ROOT, else\n"
"                       $MASTER_ADDR:$MASTER_PORT\n"
"      --rank R         this rank; else $R2CC_RANK, else $RANK\n"
"      --world N        number of ranks, 2 (--coll: 1..4096); else\n"
"                       $R2CC_WORLD_SIZE, else $WORLD_SIZE, else 2\n"
"\n"
"Transport (0 or unset: the library's environment variable or default):\n"
"      --chunk BYTES    chunk size, 4K..64M (R2CC_CHUNK_SIZE)\n"
"      --stall-ms MS    silent-rail detector, 1..60000 (R2CC_STALL_MS)\n"
"      --rail-depth N   chunks in flight per rail, 1..128 (R2CC_RAIL_DEPTH)\n"
"      --peer-timeout-ms MS  100..600000 (R2CC_PEER_TIMEOUT_MS)\n"
"      --tcp-fallback on|off  carry on over TCP with no rail left\n"
"      --nics LIST      NICs to use: dev[:port],... or ^dev,... (R2CC_NICS)\n"
"      --ctrl-if IFNAME control channel interface (R2CC_SOCKET_IFNAME)\n"
"      --no-kmod        ignore /dev/r2cc, take port events from verbs\n"
"\n"
"  -h, --help           this text\n"
"      --version        library and header versions\n"
"\n"
"Output: a summary per size on each rank (the receiver's is authoritative)\n"
"and one machine-readable line per size:\n"
"  r2cc-perf-result: size= msgs= bytes= verified= bad= mbps= failovers=\n"
"  repairs= repair_ms_max= tcp_bytes= resent= mbps_med= mbps_p99= ...\n"
"--coll: rank 0 prints one line per size, every rank's results counted:\n"
"  r2cc-perf-coll: kind= dtype= op= size= count= ranks= iters= us_med=\n"
"  us_min= algbw_mbps= busbw_mbps= bad= failovers= resent=\n"
"\n"
"Exit status: 0 success, 1 a failed operation, a timeout or corrupted\n"
"data (on either rank), 2 a bad command line or environment.\n";

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_err(const char *fmt, ...)
{
	va_list ap;

	fputs(PERF_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'r2cc-perf --help'.\n", stderr);
	exit(EXIT_USAGE);
}

/* Quoted value for messages, cut to a sane length. */
static const char *shown(const char *v)
{
	static char buf[80];

	snprintf(buf, sizeof(buf), "'%.64s%s'", v, strlen(v) > 64 ? "..." : "");
	return buf;
}

/* Decimal digits only: no sign, no blanks, no base prefix. */
static int parse_u64(const char *s, uint64_t *v, const char **end)
{
	uint64_t x = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	*v = x;
	*end = p;
	return 0;
}

static uint64_t get_uint(const char *flag, const char *s, uint64_t min,
			 uint64_t max)
{
	const char *end;
	uint64_t v;

	if (parse_u64(s, &v, &end) || *end)
		usage_err("%s: %s is not a whole number", flag, shown(s));
	if (v < min || v > max)
		usage_err("%s: %s out of range (%llu..%llu)", flag, shown(s),
			  (unsigned long long)min, (unsigned long long)max);
	return v;
}

/* BYTES with an optional K, M or G (x1024), also written Ki, KiB, KB. */
static int parse_bytes(const char *s, uint64_t *v)
{
	const char *end;
	unsigned int shift = 0;
	uint64_t x;

	if (parse_u64(s, &x, &end))
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	default:
		return -EINVAL;
	}
	if (*end) {
		end++;
		if (!strcmp(end, "i") || !strcmp(end, "iB") ||
		    !strcmp(end, "B"))
			end += strlen(end);
		if (*end)
			return -EINVAL;
	}
	if (shift && x > (UINT64_MAX >> shift))
		return -ERANGE;
	*v = x << shift;
	return 0;
}

static uint64_t get_bytes(const char *flag, const char *s, uint64_t min,
			  uint64_t max)
{
	uint64_t v;

	if (parse_bytes(s, &v))
		usage_err("%s: %s is not a size (BYTES with an optional K, M "
			  "or G)", flag, shown(s));
	if (v < min || v > max)
		usage_err("%s: %s out of range (%llu..%llu bytes)", flag,
			  shown(s), (unsigned long long)min,
			  (unsigned long long)max);
	return v;
}

static double get_secs(const char *flag, const char *s, double min,
		       double max, int min_ok)
{
	char *end;
	double v;

	errno = 0;
	if ((*s < '0' || *s > '9') && *s != '.')
		usage_err("%s: %s is not a number of seconds", flag, shown(s));
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		usage_err("%s: %s is not a number of seconds", flag, shown(s));
	if (v < min || v > max || (!min_ok && v == min))
		usage_err("%s: %s out of range (%s%g..%g s)", flag, shown(s),
			  min_ok ? "" : "above ", min, max);
	return v;
}

static void add_size(struct perf_opts *o, uint64_t v)
{
	if (o->nsizes < PERF_MAX_SIZES)
		o->sizes[o->nsizes++] = v;
}

static void parse_sweep(struct perf_opts *o, const char *s)
{
	const char *colon = strchr(s, ':');
	uint64_t lo, hi, v;
	char lo_s[32];

	if (!colon || (size_t)(colon - s) >= sizeof(lo_s))
		usage_err("--sweep: %s is not MIN:MAX", shown(s));
	memcpy(lo_s, s, (size_t)(colon - s));
	lo_s[colon - s] = '\0';
	lo = get_bytes("--sweep MIN", lo_s, 1, PERF_MAX_MSG);
	hi = get_bytes("--sweep MAX", colon + 1, 1, PERF_MAX_MSG);
	if (lo > hi)
		usage_err("--sweep: MIN %llu is above MAX %llu",
			  (unsigned long long)lo, (unsigned long long)hi);
	o->nsizes = 0;
	for (v = lo; v < hi; v *= 2)
		add_size(o, v);
	add_size(o, hi);
}

static void parse_at(struct perf_opts *o, const char *s)
{
	const char *colon = strchr(s, ':');
	char t[32];

	if (!colon)
		usage_err("--at: %s is not SECONDS:COMMAND (no colon)",
			  shown(s));
	if ((size_t)(colon - s) >= sizeof(t) || colon == s)
		usage_err("--at: %s: bad SECONDS", shown(s));
	if (!colon[1] || strspn(colon + 1, " \t") == strlen(colon + 1))
		usage_err("--at: %s: empty COMMAND", shown(s));
	if (o->nat >= PERF_MAX_AT)
		usage_err("--at: more than %d commands", PERF_MAX_AT);
	memcpy(t, s, (size_t)(colon - s));
	t[colon - s] = '\0';
	o->at[o->nat].t = get_secs("--at", t, 0, 86400, 1);
	o->at[o->nat].cmd = colon + 1;
	o->nat++;
}

/* "host:port" with a port 1..65535 and a non-empty host. */
static int check_root(const char *r)
{
	const char *colon = strrchr(r, ':');
	const char *end;
	uint64_t port;

	if (!colon || colon == r)
		return -EINVAL;
	if (parse_u64(colon + 1, &port, &end) || *end || !port ||
	    port > 65535)
		return -EINVAL;
	return 0;
}

/* An integer from the first of @names that is set: 0, or -ENOENT. */
static int env_int(const char *const *names, long min, long max, int *v,
		   const char **from)
{
	const char *end, *s;
	uint64_t x;
	int i;

	for (i = 0; names[i]; i++) {
		s = getenv(names[i]);
		if (!s || !*s)
			continue;
		if (parse_u64(s, &x, &end) || *end || x < (uint64_t)min ||
		    x > (uint64_t)max)
			usage_err("$%s: %s is not a number in %ld..%ld",
				  names[i], shown(s), min, max);
		*v = (int)x;
		*from = names[i];
		return 0;
	}
	return -ENOENT;
}

static enum perf_coll parse_coll(const char *s)
{
	enum perf_coll k;

	for (k = PERF_ALLREDUCE; k <= PERF_REDUCE; k++)
		if (!strcmp(s, perf_coll_name(k)))
			return k;
	if (!strcmp(s, "reduce-scatter"))
		return PERF_REDUCE_SCATTER;
	usage_err("--coll: %s is not allreduce, reduce_scatter, allgather, "
		  "broadcast or reduce", shown(s));
}

static void resolve_rendezvous(struct perf_opts *o, int rank_set,
			       int world_set)
{
	static const char *const rank_env[] = { "R2CC_RANK", "RANK", NULL };
	static const char *const world_env[] = { "R2CC_WORLD_SIZE",
						 "WORLD_SIZE", NULL };
	static char desc[300];
	const char *from = "--world", *addr, *port, *end;
	uint64_t p;

	if (!world_set && env_int(world_env, 0, 1 << 20, &o->world, &from))
		o->world = 2, from = "default";
	if (o->mode != PERF_COLL && o->world != 2)
		usage_err("world size %d (from %s): r2cc-perf runs between "
			  "exactly 2 ranks (--coll runs on any number)",
			  o->world, from);
	if (o->mode == PERF_COLL &&
	    (o->world < 1 || o->world > PERF_MAX_COLL_WORLD))
		usage_err("world size %d (from %s) out of range for --coll "
			  "(1..%d)", o->world, from, PERF_MAX_COLL_WORLD);
	from = "--rank";
	if (!rank_set && env_int(rank_env, 0, 1 << 20, &o->rank, &from))
		usage_err("no rank: give --rank or set R2CC_RANK (or RANK)");
	if (o->rank >= o->world)
		usage_err("rank %d (from %s) must be below the world size %d",
			  o->rank, from, o->world);

	if (o->root) {
		if (check_root(o->root))
			usage_err("--root: %s is not HOST:PORT", shown(o->root));
		o->root_desc = o->root;
		return;
	}
	o->root = getenv("R2CC_ROOT");
	if (o->root && *o->root) {
		if (check_root(o->root))
			usage_err("$R2CC_ROOT: %s is not HOST:PORT",
				  shown(o->root));
		o->root_desc = o->root;
		return;
	}
	o->root = NULL;
	addr = getenv("MASTER_ADDR");
	port = getenv("MASTER_PORT");
	if (!addr || !*addr)
		usage_err("no rendezvous address: give --root HOST:PORT or set "
			  "R2CC_ROOT (or MASTER_ADDR and MASTER_PORT)");
	if (!port || parse_u64(port, &p, &end) || *end || !p || p > 65535)
		usage_err("$MASTER_ADDR is set but $MASTER_PORT %s is not a "
			  "port", port ? shown(port) : "is not set");
	/* The library joins them itself; this is only for messages. */
	snprintf(desc, sizeof(desc), "%.200s:%s", addr, port);
	o->root_desc = desc;
}

enum {
	OPT_BW = 256, OPT_LAT, OPT_SWEEP, OPT_NO_VERIFY, OPT_INTERVAL,
	OPT_TIMELINE, OPT_CSV, OPT_AT, OPT_TIMEOUT, OPT_ROOT, OPT_RANK,
	OPT_WORLD, OPT_CHUNK, OPT_STALL, OPT_DEPTH, OPT_PEER_TIMEOUT,
	OPT_TCP, OPT_NICS, OPT_CTRL_IF, OPT_NO_KMOD, OPT_VERSION, OPT_COLL,
	OPT_MESH, OPT_DTYPE, OPT_OP,
};

static const struct option longopts[] = {
	{ "bw", no_argument, NULL, OPT_BW },
	{ "lat", no_argument, NULL, OPT_LAT },
	{ "coll", required_argument, NULL, OPT_COLL },
	{ "mesh", no_argument, NULL, OPT_MESH },
	{ "dtype", required_argument, NULL, OPT_DTYPE },
	{ "op", required_argument, NULL, OPT_OP },
	{ "size", required_argument, NULL, 's' },
	{ "sweep", required_argument, NULL, OPT_SWEEP },
	{ "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'd' },
	{ "window", required_argument, NULL, 'w' },
	{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
	{ "interval-ms", required_argument, NULL, OPT_INTERVAL },
	{ "timeline", no_argument, NULL, OPT_TIMELINE },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "at", required_argument, NULL, OPT_AT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "rank", required_argument, NULL, OPT_RANK },
	{ "world", required_argument, NULL, OPT_WORLD },
	{ "chunk", required_argument, NULL, OPT_CHUNK },
	{ "stall-ms", required_argument, NULL, OPT_STALL },
	{ "rail-depth", required_argument, NULL, OPT_DEPTH },
	{ "peer-timeout-ms", required_argument, NULL, OPT_PEER_TIMEOUT },
	{ "tcp-fallback", required_argument, NULL, OPT_TCP },
	{ "nics", required_argument, NULL, OPT_NICS },
	{ "ctrl-if", required_argument, NULL, OPT_CTRL_IF },
	{ "no-kmod", no_argument, NULL, OPT_NO_KMOD },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* The flag as the user wrote it, for messages about it. */
static const char *flag_name(int c, int idx)
{
	static char buf[40];
	size_t i;

	if (idx >= 0)
		snprintf(buf, sizeof(buf), "--%s", longopts[idx].name);
	else {
		snprintf(buf, sizeof(buf), "-%c", c);
		for (i = 0; longopts[i].name; i++)
			if (longopts[i].val == c)
				snprintf(buf, sizeof(buf), "--%s",
					 longopts[i].name);
	}
	return buf;
}

void perf_parse_args(int argc, char **argv, struct perf_opts *o)
{
	int c, idx, mode_set = 0, size_set = 0, sweep_set = 0;
	int rank_set = 0, world_set = 0, window_set = 0, dtype_set = 0;
	int op_set = 0;
	uint64_t slot, ring;
	const char *f;

	memset(o, 0, sizeof(*o));
	o->mode = PERF_BW;
	o->dtype = R2CC_INT32;
	o->op = R2CC_SUM;
	o->window = 4;
	o->verify = 1;
	o->interval_ms = 100;
	o->timeout = 60;
	o->tcp_fallback = -1;
	o->rank = -1;

	opterr = 0;
	for (;;) {
		idx = -1;
		c = getopt_long(argc, argv, ":s:n:d:w:vh", longopts, &idx);
		if (c == -1)
			break;
		f = flag_name(c, idx);
		switch (c) {
		case OPT_BW:
		case OPT_LAT:
		case OPT_COLL: {
			enum perf_mode m = c == OPT_LAT ? PERF_LAT :
					   c == OPT_COLL ? PERF_COLL : PERF_BW;

			if (mode_set && o->mode != m)
				usage_err("--bw, --lat and --coll exclude each other");
			o->mode = m;
			mode_set = 1;
			if (c == OPT_COLL)
				o->coll = parse_coll(optarg);
			break;
		}
		case OPT_MESH:
			o->mesh = 1;
			break;
		case OPT_DTYPE:
			if (perf_dtype_parse(optarg, &o->dtype))
				usage_err("--dtype: %s is not int8, uint8, int32, "
					  "uint32, int64, uint64, float16, "
					  "bfloat16, float32 or float64",
					  shown(optarg));
			dtype_set = 1;
			break;
		case OPT_OP:
			if (perf_op_parse(optarg, &o->op))
				usage_err("--op: %s is not sum, prod, min, max "
					  "or avg", shown(optarg));
			op_set = 1;
			break;
		case 's':
			o->sizes[0] = get_bytes(f, optarg, 1, PERF_MAX_MSG);
			o->nsizes = 1;
			size_set = 1;
			break;
		case OPT_SWEEP:
			parse_sweep(o, optarg);
			sweep_set = 1;
			break;
		case 'n':
			o->iters = get_uint(f, optarg, 1, 1000000000000ULL);
			break;
		case 'd':
			o->duration = get_secs(f, optarg, 0, 86400, 0);
			break;
		case 'w':
			o->window = (unsigned int)get_uint(f, optarg, 1,
							   PERF_MAX_WINDOW);
			window_set = 1;
			break;
		case OPT_NO_VERIFY:
			o->verify = 0;
			break;
		case OPT_INTERVAL:
			o->interval_ms = (unsigned int)get_uint(f, optarg, 1,
								60000);
			break;
		case OPT_TIMELINE:
			o->timeline = 1;
			break;
		case OPT_CSV:
			if (!*optarg)
				usage_err("--csv: empty file name");
			o->csv = optarg;
			break;
		case OPT_AT:
			parse_at(o, optarg);
			break;
		case OPT_TIMEOUT:
			o->timeout = get_secs(f, optarg, 0, 86400, 0);
			break;
		case 'v':
			o->verbose++;
			break;
		case OPT_ROOT:
			o->root = optarg;
			if (check_root(o->root))
				usage_err("--root: %s is not HOST:PORT",
					  shown(optarg));
			break;
		case OPT_RANK:
			o->rank = (int)get_uint(f, optarg, 0, 1 << 20);
			rank_set = 1;
			break;
		case OPT_WORLD:
			o->world = (int)get_uint(f, optarg, 1, 1 << 20);
			world_set = 1;
			break;
		case OPT_CHUNK:
			o->chunk = (uint32_t)get_bytes(f, optarg,
						       R2CC_CHUNK_SIZE_MIN,
						       R2CC_CHUNK_SIZE_MAX);
			break;
		case OPT_STALL:
			o->stall_ms = (uint32_t)get_uint(f, optarg,
							 R2CC_STALL_MS_MIN,
							 R2CC_STALL_MS_MAX);
			break;
		case OPT_DEPTH:
			o->rail_depth = (uint32_t)get_uint(f, optarg,
							   R2CC_RAIL_DEPTH_MIN,
							   R2CC_RAIL_DEPTH_MAX);
			break;
		case OPT_PEER_TIMEOUT:
			o->peer_timeout_ms = (uint32_t)get_uint(f, optarg,
						R2CC_PEER_TIMEOUT_MS_MIN,
						R2CC_PEER_TIMEOUT_MS_MAX);
			break;
		case OPT_TCP:
			if (!strcmp(optarg, "on") || !strcmp(optarg, "1"))
				o->tcp_fallback = 1;
			else if (!strcmp(optarg, "off") || !strcmp(optarg, "0"))
				o->tcp_fallback = 0;
			else
				usage_err("--tcp-fallback: %s is not on or off",
					  shown(optarg));
			break;
		case OPT_NICS:
			if (!*optarg)
				usage_err("--nics: empty list");
			o->nics = optarg;
			break;
		case OPT_CTRL_IF:
			if (!*optarg || strlen(optarg) >= R2CC_IFNAME_MAX)
				usage_err("--ctrl-if: '%s' is not an interface"
					  " name (1..%d characters)",
					  shown(optarg), R2CC_IFNAME_MAX - 1);
			o->ctrl_if = optarg;
			break;
		case OPT_NO_KMOD:
			o->no_kmod = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case OPT_VERSION:
			printf("r2cc-perf: header %d.%d.%d, library %s\n",
			       R2CC_VERSION_MAJOR, R2CC_VERSION_MINOR,
			       R2CC_VERSION_PATCH, r2cc_version());
			exit(0);
		case ':':
			usage_err("%s needs a value", optopt ?
				  flag_name(optopt, -1) : argv[optind - 1]);
		default:
			if (optopt >= OPT_BW)
				usage_err("%s takes no value",
					  flag_name(optopt, -1));
			if (optopt && optopt != '?')
				usage_err("unknown option '-%c'", optopt);
			usage_err("unknown option %s", shown(argv[optind - 1]));
		}
	}
	if (optind < argc)
		usage_err("unexpected argument %s", shown(argv[optind]));

	if (size_set && sweep_set)
		usage_err("--size and --sweep exclude each other");
	if (o->iters && o->duration > 0)
		usage_err("--iters and --duration exclude each other");
	if (window_set && o->mode == PERF_LAT)
		usage_err("--window applies to --bw only (--lat keeps one "
			  "message in flight)");
	if (o->mesh && o->mode != PERF_COLL)
		usage_err("--mesh applies to --coll only");
	if ((dtype_set || op_set) && o->mode != PERF_COLL)
		usage_err("--dtype and --op apply to --coll only");
	if (op_set && (o->coll == PERF_ALLGATHER || o->coll == PERF_BROADCAST))
		usage_err("--op applies to the reductions: allreduce, "
			  "reduce_scatter and reduce");
	if (o->mode == PERF_COLL) {
		if (window_set)
			usage_err("--window applies to --bw only (--coll runs "
				  "one collective at a time)");
		if (o->duration > 0)
			usage_err("--duration applies to --bw and --lat (every "
				  "rank must run as many collectives: --iters)");
		if (o->nat)
			usage_err("--at applies to --bw and --lat");
		if (!o->iters)
			o->iters = 10;
	}
	if (!o->nsizes) {
		o->sizes[0] = o->mode == PERF_LAT ? 8 : 1 << 20;
		o->nsizes = 1;
	}
	if (!o->iters && !(o->duration > 0)) {
		if (o->mode == PERF_LAT)
			o->iters = 1000;
		else
			o->duration = 5;
	}
	if (o->mode == PERF_LAT)
		o->window = 1;
	slot = o->sizes[o->nsizes - 1];
	ring = slot * (o->mode == PERF_LAT ? 2 : o->window);
	if (ring > PERF_MAX_RING)
		usage_err("window %u x %llu bytes is above the %llu GiB limit "
			  "of registered memory", o->window,
			  (unsigned long long)slot,
			  (unsigned long long)(PERF_MAX_RING >> 30));
	resolve_rendezvous(o, rank_set, world_set);
}
