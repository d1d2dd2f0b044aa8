// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2ccctl prometheus: the port and event counters in Prometheus' text
 * exposition format (version 0.0.4), for node_exporter's textfile
 * collector.  Names follow Prometheus' conventions: base units (bytes,
 * seconds), counters ending in _total, one _info metric for the build.
 */
#include <stdio.h>
#include <time.h>

#include "r2ccctl.h"

/* A label value: backslash, double quote and newline escaped. */
static void label(FILE *f, const char *name, const char *v, int first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

/* "NAME{device=...,port=..." with the closing brace left to the caller. */
static void port_labels(FILE *f, const char *name, const struct ctl_port *p)
{
	char port[16];

	snprintf(port, sizeof(port), "%u", p->port);
	fprintf(f, "%s{", name);
	label(f, "device", p->dev_name, 1);
	label(f, "port", port, 0);
}

static void head(FILE *f, const char *name, const char *type,
		 const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* CLOCK_REALTIME minus CLOCK_MONOTONIC, in seconds, read once. */
static double wall_offset_s(void)
{
	struct timespec m, r;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	return (double)(r.tv_sec - m.tv_sec) +
	       (double)(r.tv_nsec - m.tv_nsec) / 1e9;
}

static double port_up(const struct ctl_port *p, double wall)
{
	(void)wall;
	return p->state == R2CC_PORT_ACTIVE ||
	       p->state == R2CC_PORT_ACTIVE_DEFER;
}

static double port_state(const struct ctl_port *p, double wall)
{
	(void)wall;
	return p->state;
}

static double port_speed(const struct ctl_port *p, double wall)
{
	(void)wall;
	return (double)p->bandwidth_mbps * 125000;
}

static double port_flaps(const struct ctl_port *p, double wall)
{
	(void)wall;
	return (double)p->flaps;
}

static double port_down_s(const struct ctl_port *p, double wall)
{
	(void)wall;
	return (double)p->down_time_ms / 1000;
}

static double port_degraded(const struct ctl_port *p, double wall)
{
	(void)wall;
	return p->degraded;
}

static double port_error_rate(const struct ctl_port *p, double wall)
{
	(void)wall;
	return (double)p->error_rate;
}

static double port_reason(const struct ctl_port *p, double wall)
{
	(void)wall;
	return p->reason;
}

static double port_change(const struct ctl_port *p, double wall)
{
	return p->last_change_ns ? (double)p->last_change_ns / 1e9 + wall : 0;
}

/* A metric with one sample per port, printed with @decimals places. */
static const struct port_metric {
	const char *name, *type, *help;
	int decimals;
	double (*value)(const struct ctl_port *p, double wall);
} port_metrics[] = {
	{ "r2cc_port_up", "gauge",
	  "1 if the port is ACTIVE as r2cc.ko last saw it, else 0.", 0,
	  port_up },
	{ "r2cc_port_state", "gauge",
	  "The port's state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, "
	  "5 ACTIVE_DEFER, 0 unknown.", 0, port_state },
	{ "r2cc_port_speed_bytes", "gauge",
	  "The port's data rate (lane rate x width) in bytes per second.", 0,
	  port_speed },
	{ NULL },	/* r2cc_port_transitions_total: two samples a port */
	{ "r2cc_port_flaps_total", "counter",
	  "Down/up cycles of the port, those flap damping hid included.", 0,
	  port_flaps },
	{ "r2cc_port_degraded", "gauge",
	  "1 if the port's error counters rise past degrade_rate (early "
	  "warning), else 0.", 0, port_degraded },
	{ "r2cc_port_errors_per_second", "gauge",
	  "Retransmissions, out-of-sequence and duplicate requests and ACK "
	  "timeouts per second at the module's last poll.", 0,
	  port_error_rate },
	{ "r2cc_port_reason", "gauge",
	  "Why the port has its state: 0 as queried, 1 device fatal, "
	  "2 queries fail, 3 removed.", 0, port_reason },
	{ "r2cc_port_down_seconds_total", "counter",
	  "Time the port spent down since the module loaded.", 3,
	  port_down_s },
	{ "r2cc_port_last_change_timestamp_seconds", "gauge",
	  "When the port last changed state (Unix time); 0 if never.", 3,
	  port_change },
};

static void print_transitions(FILE *f, const struct ctl_port *p, int n)
{
	const char *name = "r2cc_port_transitions_total";

	head(f, name, "counter",
	     "Times the port went down (left ACTIVE) or came up.");
	for (int i = 0; i < n; i++) {
		port_labels(f, name, &p[i]);
		fprintf(f, ",direction=\"down\"} %llu\n",
			(unsigned long long)p[i].down_events);
		port_labels(f, name, &p[i]);
		fprintf(f, ",direction=\"up\"} %llu\n",
			(unsigned long long)p[i].up_events);
	}
}

static void print_global(FILE *f, const char *name, const char *type,
			 const char *help, unsigned long long v)
{
	head(f, name, type, help);
	fprintf(f, "%s %llu\n", name, v);
}

void ctl_print_prometheus(FILE *f, const struct ctl_port *p, int n,
			  const struct ctl_stats *st,
			  const struct ctl_module *m)
{
	double wall = wall_offset_s();

	for (size_t k = 0; k < sizeof(port_metrics) / sizeof(port_metrics[0]);
	     k++) {
		const struct port_metric *pm = &port_metrics[k];

		if (!pm->name) {
			print_transitions(f, p, n);
			continue;
		}
		head(f, pm->name, pm->type, pm->help);
		for (int i = 0; i < n; i++) {
			port_labels(f, pm->name, &p[i]);
			fprintf(f, "} %.*f\n", pm->decimals,
				pm->value(&p[i], wall));
		}
	}
	print_global(f, "r2cc_events_emitted_total", "counter",
		     "Records r2cc.ko emitted.", st->emitted);
	print_global(f, "r2cc_events_delivered_total", "counter",
		     "Records queued to a subscriber.", st->delivered);
	print_global(f, "r2cc_events_dropped_total", "counter",
		     "Records lost to a full subscriber queue.", st->dropped);
	print_global(f, "r2cc_event_subscribers", "gauge",
		     "Open /dev/r2cc subscribers.", st->subscribers);
	head(f, "r2cc_module_info", "gauge",
	     "r2cc.ko's version; the value is always 1.");
	fputs("r2cc_module_info{", f);
	label(f, "version", m->version, 1);
	label(f, "srcversion", m->srcversion, 0);
	fputs("} 1\n", f);
}

/* "NAME{pid=...,comm=..." with the closing brace left to the caller. */
static void job_labels(FILE *f, const char *name, const struct ctl_job *j)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", j->h.pid);
	fprintf(f, "%s{", name);
	label(f, "pid", pid, 1);
	label(f, "comm", j->h.comm, 0);
}

enum job_value { JV_CONNS, JV_RAILS_DOWN, JV_FAILOVERS, JV_REPAIRS,
	JV_RESENT, JV_TCP, JV_REPAIR_MAX, JV_START };

static const struct {
	const char *name, *type, *help;
	enum job_value v;
} job_metrics[] = {
	{ "r2cc_job_connections", "gauge",
	  "Open libr2cc connections of the process.", JV_CONNS },
	{ "r2cc_job_rails_down", "gauge",
	  "Rails of its open connections not carrying traffic.",
	  JV_RAILS_DOWN },
	{ "r2cc_job_failovers_total", "counter",
	  "Rail failures the process's connections handled.", JV_FAILOVERS },
	{ "r2cc_job_repairs_total", "counter",
	  "Failures whose re-sent chunks completed.", JV_REPAIRS },
	{ "r2cc_job_resent_bytes_total", "counter",
	  "Bytes sent again after a rail failed.", JV_RESENT },
	{ "r2cc_job_fallback_bytes_total", "counter",
	  "Bytes carried over TCP with no rail up.", JV_TCP },
	{ "r2cc_job_repair_seconds_max", "gauge",
	  "Longest repair: failure detected to first re-sent chunk done.",
	  JV_REPAIR_MAX },
	{ "r2cc_job_start_time_seconds", "gauge",
	  "When the process's r2cc context was made, Unix time.", JV_START },
};

static double job_value(const struct ctl_job *j, enum job_value v)
{
	struct r2cc_job_counters t;
	int up, all;

	ctl_job_totals(j, &t);
	ctl_job_rails(j, &up, &all);
	switch (v) {
	case JV_CONNS: return j->nconns;
	case JV_RAILS_DOWN: return all - up;
	case JV_FAILOVERS: return (double)t.failovers;
	case JV_REPAIRS: return (double)t.repairs;
	case JV_RESENT: return (double)t.resent_bytes;
	case JV_TCP: return (double)t.tcp_bytes;
	case JV_REPAIR_MAX: return (double)t.repair_ns_max / 1e9;
	case JV_START: return (double)j->h.start_time_ns / 1e9;
	}
	return 0;
}

void ctl_print_prometheus_jobs(FILE *f, const struct ctl_job *j, int n)
{
	if (!n)
		return;
	for (size_t k = 0; k < sizeof(job_metrics) / sizeof(job_metrics[0]);
	     k++) {
		head(f, job_metrics[k].name, job_metrics[k].type,
		     job_metrics[k].help);
		for (int i = 0; i < n; i++) {
			job_labels(f, job_metrics[k].name, &j[i]);
			fprintf(f, "} %.15g\n", job_value(&j[i], job_metrics[k].v));
		}
	}
}
