// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2ccctl jobs' output: one line per process with its totals, then a
 * line per connection and one per rail; or one JSON document.
 */
#include <stdlib.h>
#include <time.h>

#include "r2ccctl.h"
#include "xport/rail_reason.h"

const char *ctl_jobs_dir(void)
{
	const char *d = getenv("R2CC_STATS_DIR");

	return d && *d ? d : "/run/r2cc";
}

static const char *rail_state(unsigned int s)
{
	static const char *const names[] = {
		[R2CC_RAIL_CONNECTING] = "connecting", [R2CC_RAIL_UP] = "up",
		[R2CC_RAIL_DOWN] = "down", [R2CC_RAIL_PROBING] = "probing",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

static const char *conn_state(const struct r2cc_job_conn *c)
{
	return c->failed ? "failed" : !c->ready ? "connecting" :
	       c->fallback ? "tcp-fallback" : "ready";
}

/* Whose port is degraded; "hold": recovered, drained a while longer. */
static const char *degraded_name(unsigned int d)
{
	d &= R2CC_RAIL_DEGRADED_LOCAL | R2CC_RAIL_DEGRADED_PEER |
	     R2CC_RAIL_DEGRADED_HOLD;
	return d == 3 ? "both" : d == 1 ? "local" : d == 2 ? "peer" :
	       d == R2CC_RAIL_DEGRADED_HOLD ? "hold" : "-";
}

static double age_s(uint64_t realtime_ns)
{
	struct timespec ts;
	double now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	return now - (double)realtime_ns / 1e9;
}

static const char *nic_name(const struct ctl_job *j, int32_t nic)
{
	return nic >= 0 && (uint32_t)nic < j->h.nnics ?
	       j->h.nics[nic].dev_name : "?";
}

static void text(FILE *f, const struct ctl_job *jobs, int n, int removed)
{
	fprintf(f, "%-8s %-15s %5s %7s %9s %7s %17s %12s %12s\n", "PID",
		"COMMAND", "CONNS", "RAILS", "FAILOVERS", "REPAIRS",
		"REPAIR LAST/MAX", "RESENT", "OVER TCP");
	for (int i = 0; i < n; i++) {
		const struct ctl_job *j = &jobs[i];
		struct r2cc_job_counters t;
		char rails[24];
		int up, all;

		ctl_job_totals(j, &t);
		ctl_job_rails(j, &up, &all);
		snprintf(rails, sizeof(rails), "%d/%d", up, all);
		fprintf(f, "%-8d %-15s %5d %7s %9llu %7llu %7.1f/%-6.1f ms %10llu B %10llu B\n",
			j->h.pid, j->h.comm, j->nconns, rails,
			(unsigned long long)t.failovers,
			(unsigned long long)t.repairs, t.repair_ns_last / 1e6,
			t.repair_ns_max / 1e6,
			(unsigned long long)t.resent_bytes,
			(unsigned long long)t.tcp_bytes);
		for (int k = 0; k < j->nconns; k++) {
			const struct ctl_job_conn *c = &j->conns[k];

			fprintf(f, "  conn %d %s %s %s: %llu msgs, %llu bytes, %llu failovers\n",
				k, c->c.sender ? "to" : "from", c->c.peer,
				conn_state(&c->c),
				(unsigned long long)c->c.c.msgs,
				(unsigned long long)c->c.c.bytes,
				(unsigned long long)c->c.c.failovers);
			for (uint32_t r = 0; r < c->nrails; r++) {
				const struct r2cc_job_rail *x = &c->rails[r];

				fprintf(f, "    rail %u %-10s %-10s%s bytes %llu failures %llu rollbacks %llu failbacks %llu degraded %s fault %s\n",
					r, nic_name(j, x->nic),
					rail_state(x->state),
					x->standby ? " standby" : "",
					(unsigned long long)x->bytes,
					(unsigned long long)x->failures,
					(unsigned long long)x->rollbacks,
					(unsigned long long)x->failbacks,
					degraded_name(x->degraded),
					rail_reason_name(x->reason));
			}
		}
	}
	if (removed)
		fprintf(f, "(%d stats files of exited processes removed)\n",
			removed);
}

static void json_counters(FILE *f, const struct r2cc_job_counters *c)
{
	fprintf(f, "\"msgs\":%llu,\"bytes\":%llu,\"resent_bytes\":%llu,"
		"\"tcp_bytes\":%llu,\"failovers\":%llu,\"repairs\":%llu,"
		"\"repair_ms_last\":%.3f,\"repair_ms_max\":%.3f",
		(unsigned long long)c->msgs, (unsigned long long)c->bytes,
		(unsigned long long)c->resent_bytes,
		(unsigned long long)c->tcp_bytes,
		(unsigned long long)c->failovers,
		(unsigned long long)c->repairs, c->repair_ns_last / 1e6,
		c->repair_ns_max / 1e6);
}

static void json_conn(FILE *f, const struct ctl_job *j,
		      const struct ctl_job_conn *c)
{
	fprintf(f, "{\"peer\":");
	ctl_json_str(f, c->c.peer);
	fprintf(f, ",\"sender\":%s,\"state\":\"%s\",",
		c->c.sender ? "true" : "false", conn_state(&c->c));
	json_counters(f, &c->c.c);
	fprintf(f, ",\"rails\":[");
	for (uint32_t r = 0; r < c->nrails; r++) {
		const struct r2cc_job_rail *x = &c->rails[r];

		fprintf(f, "%s{\"nic\":", r ? "," : "");
		ctl_json_str(f, nic_name(j, x->nic));
		fprintf(f, ",\"state\":\"%s\",\"standby\":%s,\"degraded\":\"%s\","
			"\"fault\":\"%s\",\"bytes\":%llu,\"failures\":%llu,\"rollbacks\":%llu,"
			"\"failbacks\":%llu,\"drains\":%llu}",
			rail_state(x->state), x->standby ? "true" : "false",
			degraded_name(x->degraded), rail_reason_name(x->reason),
			(unsigned long long)x->bytes,
			(unsigned long long)x->failures,
			(unsigned long long)x->rollbacks,
			(unsigned long long)x->failbacks,
			(unsigned long long)x->drains);
	}
	fprintf(f, "]}");
}

static void json(FILE *f, const struct ctl_job *jobs, int n, int removed)
{
	fprintf(f, "{\"jobs\":[");
	for (int i = 0; i < n; i++) {
		const struct ctl_job *j = &jobs[i];
		struct r2cc_job_counters t;

		ctl_job_totals(j, &t);
		fprintf(f, "%s{\"pid\":%d,\"comm\":", i ? "," : "", j->h.pid);
		ctl_json_str(f, j->h.comm);
		fprintf(f, ",\"started_s_ago\":%.1f,\"updated_s_ago\":%.1f,"
			"\"notify_source\":\"%s\",\"connections_total\":%llu,",
			age_s(j->h.start_time_ns), age_s(j->h.update_time_ns),
			j->h.notify_source == 1 ? "r2cc.ko" :
			j->h.notify_source == 2 ? "verbs" : "none",
			(unsigned long long)j->h.conns_total);
		json_counters(f, &t);
		fprintf(f, ",\"nics\":[");
		for (uint32_t k = 0; k < j->h.nnics; k++) {
			fprintf(f, "%s{\"name\":", k ? "," : "");
			ctl_json_str(f, j->h.nics[k].dev_name);
			fprintf(f, ",\"port\":%u,\"active\":%s,\"degraded\":%s}",
				j->h.nics[k].port,
				j->h.nics[k].state == R2CC_NIC_ACTIVE ? "true" : "false",
				j->h.nics[k].degraded ? "true" : "false");
		}
		fprintf(f, "],\"connections\":[");
		for (int k = 0; k < j->nconns; k++) {
			fprintf(f, "%s", k ? "," : "");
			json_conn(f, j, &j->conns[k]);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "],\"removed_stale\":%d}\n", removed);
}

void ctl_print_jobs(FILE *f, const struct ctl_job *j, int n, int removed,
		    int as_json)
{
	if (as_json)
		json(f, j, n, removed);
	else
		text(f, j, n, removed);
}
