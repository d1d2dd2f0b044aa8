// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2ccctl: what r2cc.ko sees of every RDMA port, its events as they
 * happen, and failure drills.  See r2ccctl(8).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "r2ccctl.h"

static const char usage_main[] =
"usage: r2ccctl [--json] VERB [ARGS]\n"
"\n"
"  status              every RDMA port r2cc.ko watches, its counters,\n"
"                      the event counters and the module's parameters\n"
"  watch               port and device events as they happen\n"
"  inject DEV PORT down|up|fatal\n"
"                      a drill: a synthetic event (CAP_NET_ADMIN)\n"
"  jobs [--dir DIR]    every process using libr2cc on this node: its\n"
"                      connections, rails, failovers and repairs\n"
"  prometheus [--output FILE]\n"
"                      status and jobs as Prometheus metrics (textfile\n"
"                      collector)\n"
"  help [VERB]         this text, or a verb's\n"
"\n"
"  --json              machine-readable output (every verb)\n"
"  -h, --help          help; after a verb, that verb's\n"
"  --version           r2ccctl's version and the module ABI it speaks\n"
"\n"
"Exit status: 0 done, 1 failed (the kernel refused, I/O), 2 bad usage,\n"
"3 r2cc.ko is not loaded.\n";

static const char usage_status[] =
"usage: r2ccctl status [--json]\n"
"\n"
"Every port of every RDMA device, as r2cc.ko last saw it: state, link\n"
"layer, netdev, bandwidth (Mbit/s), downs, ups, flaps, total time down\n"
"and the age of the last change; then the global event counters and the\n"
"module's version and parameters.\n";

static const char usage_watch[] =
"usage: r2ccctl watch [--json] [--since SEQ] [--count N] [--timeout SEC]\n"
"\n"
"One line per event r2cc.ko emits (with --json, one JSON object per\n"
"line), from its generic netlink \"events\" group.\n"
"  --since SEQ    first the records after sequence number SEQ that the\n"
"                 module still holds (its last queue_len), then new ones;\n"
"                 those it no longer holds are reported as a gap\n"
"  --count N      stop after N records (1..1000000000)\n"
"  --timeout SEC  stop after SEC seconds (0.001..86400) even if fewer came\n"
"A jump in sequence numbers (records lost to a full socket) is printed as\n"
"a gap line (JSON: {\"gap\":{\"from\":A,\"to\":B}}) and the exit status is 1.\n";

static const char usage_inject[] =
"usage: r2ccctl inject [--json] DEV PORT down|up|fatal\n"
"\n"
"Make r2cc.ko report a port going down or up (PORT >= 1), or its device\n"
"failing (fatal, PORT 0), as if it had happened: subscribers get the\n"
"record, flagged injected, and the port reads as injected until its next\n"
"real change.  DEV is a device name (rxe0, mlx5_0) or index.  Needs\n"
"CAP_NET_ADMIN.  Nothing on the wire changes.\n";

static int json;

__attribute__((format(printf, 2, 3)))
static int usage_err(const char *verb_usage, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "r2ccctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", verb_usage);
	return CTL_USAGE;
}

/* A decimal number in [min, max], else -1 (no sign, no blanks, no 0x). */
static long long parse_num(const char *s, long long min, long long max)
{
	long long v = 0;

	if (!*s || strlen(s) > 18)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v < min || v > max ? -1 : v;
}

static int nl_failed(const char *what, int err)
{
	if (err == -ENOENT) {
		fprintf(stderr, "r2ccctl: r2cc.ko is not loaded (no generic "
			"netlink family \"%s\"); modprobe r2cc\n",
			R2CC_GENL_NAME);
		return CTL_NO_MODULE;
	}
	fprintf(stderr, "r2ccctl: %s: %s\n", what, strerror(-err));
	return CTL_FAIL;
}

/*
 * What status and prometheus show: the ports (malloc()ed, *@n of them),
 * the event counters and the module.  Returns CTL_OK or the exit status.
 */
static int snapshot(struct ctl_port **ports, int *n, struct ctl_stats *st,
		    struct ctl_module *mod)
{
	struct ctl_nl *nl;
	int ret;

	*ports = NULL;
	ret = ctl_nl_open(&nl);
	if (ret)
		return nl_failed("netlink", ret);
	*n = ctl_nl_ports(nl, ports);
	ret = *n < 0 ? *n : ctl_nl_stats(nl, st);
	ctl_nl_close(nl);
	if (ret) {
		free(*ports);
		return nl_failed("reading the ports", ret);
	}
	ctl_module_read(mod);
	return CTL_OK;
}

static int cmd_status(int argc, char **argv)
{
	struct ctl_port *ports;
	struct ctl_stats st;
	struct ctl_module mod;
	int n, rc;

	if (argc == 2 && !strcmp(argv[1], "--json"))
		json = 1;
	else if (argc > 1)
		return usage_err(usage_status, "status: unexpected '%s'",
				 argv[1]);
	rc = snapshot(&ports, &n, &st, &mod);
	if (rc)
		return rc;
	ctl_print_status(stdout, ports, n, &st, &mod, json);
	free(ports);
	return fflush(stdout) ? CTL_FAIL : CTL_OK;
}

static const char usage_prometheus[] =
"usage: r2ccctl prometheus [--output FILE]\n"
"\n"
"What status shows, as Prometheus metrics (text exposition format) for\n"
"node_exporter's textfile collector: r2cc_port_up, r2cc_port_state,\n"
"r2cc_port_speed_bytes, r2cc_port_transitions_total{direction},\n"
"r2cc_port_flaps_total, r2cc_port_down_seconds_total,\n"
"r2cc_port_last_change_timestamp_seconds, r2cc_events_*_total,\n"
"r2cc_event_subscribers, r2cc_module_info; and for every process using\n"
"libr2cc (see jobs), labelled pid and comm: r2cc_job_connections,\n"
"r2cc_job_rails_down, r2cc_job_failovers_total, r2cc_job_repairs_total,\n"
"r2cc_job_resent_bytes_total, r2cc_job_fallback_bytes_total,\n"
"r2cc_job_repair_seconds_max, r2cc_job_start_time_seconds.\n"
"  --output FILE  write FILE (FILE.tmp, then renamed over it, so the\n"
"                 collector never reads half a file); default stdout\n";

static int cmd_prometheus(int argc, char **argv)
{
	struct ctl_port *ports;
	const char *path = NULL;
	char tmp[4096];
	struct ctl_stats st;
	struct ctl_module mod;
	FILE *f = stdout;
	int n, rc;

	if (argc == 3 && !strcmp(argv[1], "--output") && *argv[2])
		path = argv[2];
	else if (argc != 1)
		return usage_err(usage_prometheus, "prometheus: %s",
				 argc == 2 && !strcmp(argv[1], "--output") ?
				 "--output needs a FILE" : "bad arguments");
	if (path && snprintf(tmp, sizeof(tmp), "%s.tmp", path) >=
	    (int)sizeof(tmp))
		return usage_err(usage_prometheus, "%s", "--output: too long");
	rc = snapshot(&ports, &n, &st, &mod);
	if (rc)
		return rc;
	if (path && !(f = fopen(tmp, "w"))) {
		fprintf(stderr, "r2ccctl: %s: %s\n", tmp, strerror(errno));
		free(ports);
		return CTL_FAIL;
	}
	ctl_print_prometheus(f, ports, n, &st, &mod);
	free(ports);
	{
		struct ctl_job *jobs;
		int removed, nj = ctl_jobs_read(ctl_jobs_dir(), &jobs,
						&removed);

		if (nj > 0)
			ctl_print_prometheus_jobs(f, jobs, nj);
		if (nj >= 0)
			ctl_jobs_free(jobs, nj);
	}
	if (!path)
		return fflush(f) ? CTL_FAIL : CTL_OK;
	if (fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "r2ccctl: %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return CTL_FAIL;
	}
	return CTL_OK;
}

static const char usage_jobs[] =
"usage: r2ccctl jobs [--json] [--dir DIR]\n"
"\n"
"Every process on this node using libr2cc, from the stats file each of\n"
"its contexts keeps: per process, its connections, rails up of all,\n"
"failovers, repairs (the last and the longest), bytes sent again and\n"
"bytes carried over TCP; then each connection (peer, state, messages)\n"
"and each rail (NIC, state, bytes, failures, rollbacks, failbacks, and\n"
"whose port r2cc.ko reports degraded).  Files left by processes that\n"
"are gone are removed.  Needs no r2cc.ko.\n"
"  --dir DIR   where the files are (default $R2CC_STATS_DIR, else\n"
"              /run/r2cc)\n";

static int cmd_jobs(int argc, char **argv)
{
	const char *dir = ctl_jobs_dir();
	struct ctl_job *jobs;
	int i, n, removed;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc &&
			   *argv[i + 1]) {
			dir = argv[++i];
		} else {
			return usage_err(usage_jobs, "jobs: %s '%s'",
					 !strcmp(argv[i], "--dir") ?
					 "--dir needs a directory, not" :
					 "unexpected", argv[i]);
		}
	}
	n = ctl_jobs_read(dir, &jobs, &removed);
	if (n < 0) {
		fprintf(stderr, "r2ccctl: jobs: %s: %s%s\n", dir,
			strerror(-n), n == -ENOENT ?
			" (r2cc's tmpfiles.d entry makes it at boot)" : "");
		return CTL_FAIL;
	}
	ctl_print_jobs(stdout, jobs, n, removed, json);
	ctl_jobs_free(jobs, n);
	return fflush(stdout) ? CTL_FAIL : CTL_OK;
}

static void print_gap(uint64_t from, uint64_t to)
{
	if (json)
		printf("{\"gap\":{\"from\":%llu,\"to\":%llu}}\n",
		       (unsigned long long)from, (unsigned long long)to);
	else
		printf("gap: records %llu..%llu were not seen\n",
		       (unsigned long long)from, (unsigned long long)to);
}

/* Where a watch stands: the next record due, and how many printed. */
struct watch {
	uint64_t next;
	long long seen, count;
	int rc;
};

/*
 * One record, in order: a jump in sequence numbers is a gap (records
 * lost), an overflow record names the ones the ring no longer had, and a
 * record seen already (in the replay, then live) is not printed twice.
 */
static void watch_one(const struct r2cc_event *ev, void *arg)
{
	struct watch *w = arg;

	if (w->count >= 0 && w->seen >= w->count)
		return;
	if (ev->kind == R2CC_EV_OVERFLOW) {
		if (ev->lost && ev->seq >= w->next) {
			print_gap(ev->seq - ev->lost + 1, ev->seq);
			w->rc = CTL_FAIL;
			w->next = ev->seq + 1;
		}
		return;
	}
	if (ev->seq < w->next)
		return;
	if (w->next && ev->seq > w->next) {
		print_gap(w->next, ev->seq - 1);
		w->rc = CTL_FAIL;
	}
	w->next = ev->seq + 1;
	ctl_print_event(stdout, ev, json);
	fflush(stdout);
	w->seen++;
}

/*
 * The records after @since that the module's ring still holds, before the
 * live ones (the group is joined already, so none falls between).  A
 * module without the replay leaves those records to be reported as a gap.
 */
static int watch_replay(struct ctl_nl *nl, long long since, struct watch *w)
{
	struct ctl_stats st;
	int ret;

	w->next = (uint64_t)since + 1;
	ret = ctl_nl_stats(nl, &st);
	if (ret)
		return nl_failed("reading the counters", ret);
	if ((uint64_t)since > st.emitted) {
		fprintf(stderr, "r2ccctl: --since %lld: r2cc.ko has emitted %llu records only (was it reloaded?)\n",
			since, (unsigned long long)st.emitted);
		return CTL_FAIL;
	}
	ret = ctl_nl_replay(nl, (uint64_t)since, watch_one, w);
	if (ret == -EOPNOTSUPP) {
		fprintf(stderr, "r2ccctl: this r2cc.ko keeps no history to replay: records after %lld before the first one seen are a gap\n",
			since);
		return CTL_OK;
	}
	return ret ? nl_failed("replaying the records", ret) : CTL_OK;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long since = -1, count = -1;
	double timeout = -1, end = 0;
	struct watch w = { 0 };
	struct r2cc_event ev;
	struct ctl_nl *nl = NULL;
	int c, ret, rc = CTL_OK;
	char *e;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			since = parse_num(optarg, 0, (1LL << 62));
			if (since < 0)
				return usage_err(usage_watch, "--since: '%s' "
						 "is not a sequence number",
						 optarg);
			break;
		case 'c':
			count = parse_num(optarg, 1, 1000000000);
			if (count < 0)
				return usage_err(usage_watch, "--count: '%s' "
						 "is not 1..1000000000",
						 optarg);
			break;
		case 't':
			errno = 0;
			timeout = strtod(optarg, &e);
			if (errno || e == optarg || *e || !(timeout >= 0.001) ||
			    timeout > 86400)
				return usage_err(usage_watch, "--timeout: '%s' "
						 "is not 0.001..86400 seconds",
						 optarg);
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(usage_watch, stdout);
			return CTL_OK;
		default:
			return usage_err(usage_watch, "watch: bad option '%s'",
					 argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_err(usage_watch, "watch: unexpected '%s'",
				 argv[optind]);
	ret = ctl_nl_open(&nl);
	ret = ret ?: ctl_nl_subscribe(nl);
	if (ret) {
		ctl_nl_close(nl);
		return nl_failed("joining the events group", ret);
	}
	if (timeout > 0)
		end = mono_s() + timeout;
	/* Tell a script the subscription is live before it makes events. */
	fprintf(stderr, "r2ccctl: watching\n");
	w.count = count;
	if (since >= 0) {
		rc = watch_replay(nl, since, &w);
		if (rc != CTL_OK) {
			ctl_nl_close(nl);
			return rc;
		}
	}
	while (count < 0 || w.seen < count) {
		int ms = -1;

		if (timeout > 0) {
			double left = end - mono_s();

			if (left <= 0)
				break;
			ms = (int)(left * 1000) + 1;
		}
		ret = ctl_nl_next_event(nl, &ev, ms);
		if (ret == 0)
			break;
		if (ret == -ENOBUFS) {
			/* The next record shows how many were lost. */
			continue;
		}
		if (ret < 0) {
			rc = nl_failed("reading events", ret);
			break;
		}
		watch_one(&ev, &w);
	}
	ctl_nl_close(nl);
	return rc != CTL_OK ? rc : w.rc;
}

/* DEV as a name or an index, resolved against the module's ports. */
static int find_dev(const struct ctl_port *p, int n, const char *dev,
		    uint32_t *index)
{
	long long i = parse_num(dev, 0, UINT32_MAX);

	for (int k = 0; k < n; k++)
		if (!strcmp(p[k].dev_name, dev) ||
		    (i >= 0 && p[k].dev_index == (uint32_t)i)) {
			*index = p[k].dev_index;
			return 0;
		}
	return -ENODEV;
}

static int cmd_inject(int argc, char **argv)
{
	struct ctl_port *ports = NULL;
	uint32_t dev = 0;
	struct ctl_nl *nl;
	long long port;
	uint16_t kind;
	int n, k, ret, known = 0;

	if (argc > 1 && !strcmp(argv[1], "--json")) {
		json = 1;
		argc--;
		argv++;
	}
	if (argc != 4)
		return usage_err(usage_inject, "inject: %s", argc < 4 ?
				 "needs DEV PORT down|up|fatal" :
				 "too many arguments");
	if (!strcmp(argv[3], "down"))
		kind = R2CC_EV_PORT_DOWN;
	else if (!strcmp(argv[3], "up"))
		kind = R2CC_EV_PORT_UP;
	else if (!strcmp(argv[3], "fatal"))
		kind = R2CC_EV_DEVICE_FATAL;
	else
		return usage_err(usage_inject, "inject: '%s' is not down, up "
				 "or fatal", argv[3]);
	port = parse_num(argv[2], 0, UINT32_MAX);
	if (port < 0)
		return usage_err(usage_inject, "inject: '%s' is not a port "
				 "number", argv[2]);
	if ((kind == R2CC_EV_DEVICE_FATAL) != (port == 0))
		return usage_err(usage_inject, "inject: %s",
				 kind == R2CC_EV_DEVICE_FATAL ?
				 "fatal is device-wide: PORT must be 0" :
				 "down and up need a PORT from 1");
	ret = ctl_nl_open(&nl);
	if (ret)
		return nl_failed("netlink", ret);
	n = ctl_nl_ports(nl, &ports);
	if (n < 0) {
		ctl_nl_close(nl);
		return nl_failed("reading the ports", n);
	}
	ret = find_dev(ports, n, argv[1], &dev);
	for (k = 0; !ret && k < n; k++)
		known |= ports[k].dev_index == dev &&
			 (port == 0 || ports[k].port == (uint32_t)port);
	free(ports);
	if (ret || !known) {
		ctl_nl_close(nl);
		fprintf(stderr, "r2ccctl: inject: %s %s%s is not an RDMA "
			"%s r2cc.ko watches (see r2ccctl status)\n", argv[1],
			ret ? "" : "port ", ret ? "" : argv[2],
			ret ? "device" : "port");
		return CTL_FAIL;
	}
	ret = ctl_nl_inject(nl, dev, (uint32_t)port, kind);
	ctl_nl_close(nl);
	if (ret == -EPERM) {
		fprintf(stderr, "r2ccctl: inject: not permitted: needs "
			"CAP_NET_ADMIN (run as root)\n");
		return CTL_FAIL;
	}
	if (ret)
		return nl_failed("inject", ret);
	if (json)
		printf("{\"injected\":\"%s\",\"dev_index\":%u,\"port\":%lld}\n",
		       argv[3], dev, port);
	return CTL_OK;
}

static const struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
} verbs[] = {
	{ "status", cmd_status, usage_status },
	{ "watch", cmd_watch, usage_watch },
	{ "inject", cmd_inject, usage_inject },
	{ "prometheus", cmd_prometheus, usage_prometheus },
	{ "jobs", cmd_jobs, usage_jobs },
};

static const struct verb *verb_find(const char *name)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(verbs[i].name, name))
			return &verbs[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct verb *v;
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_main, stdout);
			return CTL_OK;
		} else if (!strcmp(argv[i], "--version")) {
			printf("r2ccctl %s (r2cc ABI %d, genl version %d)\n",
			       R2CC_CTL_VERSION, R2CC_ABI_VERSION,
			       R2CC_GENL_VERSION);
			return CTL_OK;
		} else {
			return usage_err(usage_main, "unknown option '%s'",
					 argv[i]);
		}
	}
	if (i == argc)
		return usage_err(usage_main, "%s", "no verb given");
	if (!strcmp(argv[i], "help")) {
		if (i + 1 == argc) {
			fputs(usage_main, stdout);
			return CTL_OK;
		}
		v = verb_find(argv[i + 1]);
		if (!v || i + 2 != argc)
			return usage_err(usage_main, "help: no verb '%s'",
					 argv[i + 1]);
		fputs(v->usage, stdout);
		return CTL_OK;
	}
	v = verb_find(argv[i]);
	if (!v)
		return usage_err(usage_main, "unknown verb '%s'", argv[i]);
	/* VERB --help, VERB --json for the verbs that take no options. */
	for (int k = i + 1; k < argc && v->fn != cmd_watch; k++) {
		if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
			fputs(v->usage, stdout);
			return CTL_OK;
		}
	}
	return v->fn(argc - i, argv + i);
}
