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

static double wall_of(uint64_t mono_ns)
{
	struct timespec m, r;
	double now_m, now_r;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	now_m = (double)m.tv_sec + (double)m.tv_nsec / 1e9;
	now_r = (double)r.tv_sec + (double)r.tv_nsec / 1e9;
	return now_r - (now_m - (double)mono_ns / 1e9);
}

void ctl_print_prometheus(FILE *f, const struct ctl_port *p, int n,
			  const struct ctl_stats *st,
			  const struct ctl_module *m)
{
	int i;

	head(f, "r2cc_port_up", "gauge",
	     "1 if the port is ACTIVE as r2cc.ko last saw it, else 0.");
	for (i = 0; i < n; i++) {
		port_labels(f, "r2cc_port_up", &p[i]);
		fprintf(f, "} %d\n", p[i].state == R2CC_PORT_ACTIVE ||
			p[i].state == R2CC_PORT_ACTIVE_DEFER);
	}
	head(f, "r2cc_port_state", "gauge",
	     "The port's state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, "
	     "5 ACTIVE_DEFER, 0 unknown.");
	for (i = 0; i < n; i++) {
		port_labels(f, "r2cc_port_state", &p[i]);
		fprintf(f, "} %u\n", p[i].state);
	}
	head(f, "r2cc_port_speed_bytes", "gauge",
	     "The port's data rate (lane rate x width) in bytes per second.");
	for (i = 0; i < n; i++) {
		port_labels(f, "r2cc_port_speed_bytes", &p[i]);
		fprintf(f, "} %llu\n",
			(unsigned long long)p[i].bandwidth_mbps * 125000ull);
	}
	head(f, "r2cc_port_transitions_total", "counter",
	     "Times the port went down (left ACTIVE) or came up.");
	for (i = 0; i < n; i++) {
		port_labels(f, "r2cc_port_transitions_total", &p[i]);
		fprintf(f, ",direction=\"down\"} %llu\n",
			(unsigned long long)p[i].down_events);
		port_labels(f, "r2cc_port_transitions_total", &p[i]);
		fprintf(f, ",direction=\"up\"} %llu\n",
			(unsigned long long)p[i].up_events);
	}
	head(f, "r2cc_port_flaps_total", "counter",
	     "Downs that came inside the module's flap-damping window.");
	for (i = 0; i < n; i++) {
		port_labels(f, "r2cc_port_flaps_total", &p[i]);
		fprintf(f, "} %llu\n", (unsigned long long)p[i].flaps);
	}
	head(f, "r2cc_port_down_seconds_total", "counter",
	     "Time the port spent down since the module loaded.");
	for (i = 0; i < n; i++) {
		port_labels(f, "r2cc_port_down_seconds_total", &p[i]);
		fprintf(f, "} %.3f\n", (double)p[i].down_time_ms / 1000);
	}
	head(f, "r2cc_port_last_change_timestamp_seconds", "gauge",
	     "When the port last changed state (Unix time); 0 if never.");
	for (i = 0; i < n; i++) {
		port_labels(f, "r2cc_port_last_change_timestamp_seconds", &p[i]);
		fprintf(f, "} %.3f\n", p[i].last_change_ns ?
			wall_of(p[i].last_change_ns) : 0.0);
	}
	head(f, "r2cc_events_emitted_total", "counter",
	     "Records r2cc.ko emitted.");
	fprintf(f, "r2cc_events_emitted_total %llu\n",
		(unsigned long long)st->emitted);
	head(f, "r2cc_events_delivered_total", "counter",
	     "Records queued to a subscriber.");
	fprintf(f, "r2cc_events_delivered_total %llu\n",
		(unsigned long long)st->delivered);
	head(f, "r2cc_events_dropped_total", "counter",
	     "Records lost to a full subscriber queue.");
	fprintf(f, "r2cc_events_dropped_total %llu\n",
		(unsigned long long)st->dropped);
	head(f, "r2cc_event_subscribers", "gauge",
	     "Open /dev/r2cc subscribers.");
	fprintf(f, "r2cc_event_subscribers %u\n", st->subscribers);
	head(f, "r2cc_module_info", "gauge",
	     "r2cc.ko's version; the value is always 1.");
	fputs("r2cc_module_info{", f);
	label(f, "version", m->version, 1);
	label(f, "srcversion", m->srcversion, 0);
	fputs("} 1\n", f);
}
