// SPDX-License-Identifier: GPL-2.0-only
/*
 * The summary of a phase, for people, and its r2cc-perf-result line, for
 * scripts.
 */
#include <stdio.h>
#include <string.h>

#include "perf.h"

const char *role(const struct perf *p)
{
	if (p->o.mode == PERF_LAT)
		return p->o.rank ? "pong" : "ping";
	return p->o.rank ? "recv" : "send";
}

void print_summary(struct perf *p, struct phase *ph,
			  const struct report *peer)
{
	struct r2cc_rail_stats rails[PERF_MAX_RAILS], *r, *r0;
	struct r2cc_nic_info ni = { .size = sizeof(ni) };
	const struct report *auth = &ph->r;
	struct r2cc_conn_stats st;
	double med, p99, min, mbps, lmed = 0, lp99 = 0, rmed = 0;
	int n, i, nint, failed;
	char nic[80];

	n = perf_stats(p->tl.conn, &st, rails);
	if (n < 0)
		die_op("r2cc_conn_stats", n, NULL);
	nint = tl_phase_rates(&p->tl, &med, &p99, &min);
	mbps = ph->secs > 0 ? (double)ph->r.bytes * 8 / ph->secs / 1e6 : 0;
	/* the sender reports what the receiver verified */
	if (p->o.mode == PERF_BW && p->o.rank == 0)
		auth = peer;
	failed = ph->r.failed || peer->failed;
	if (ph->nlat) {
		rmed = perf_percentile(ph->lat, ph->nlat, 50) * 1e6;
		lmed = rmed / 2;
		lp99 = perf_percentile(ph->lat, ph->nlat, 99) * 1e6 / 2;
	}

	printf("%s: rank %d (%s), %s, %llu-byte messages", PERF_NAME,
	       p->o.rank, role(p),
	       p->o.mode == PERF_LAT ? "latency" : "bandwidth",
	       (unsigned long long)ph->size);
	if (p->o.mode == PERF_BW)
		printf(", window %u", p->o.window);
	putchar('\n');
	printf("  messages     %llu\n", (unsigned long long)ph->r.msgs);
	printf("  bytes        %llu in %.3f s\n",
	       (unsigned long long)ph->r.bytes, ph->secs);
	if (!p->o.verify)
		printf("  verified     off (--no-verify)\n");
	else
		printf("  verified     %llu bytes, %llu bad%s\n",
		       (unsigned long long)auth->verified,
		       (unsigned long long)auth->bad,
		       auth == peer ? " (by the receiver)" : "");
	printf("  throughput   %.1f Mbit/s overall; per %u ms: median %.1f, "
	       "p99 %.1f, min %.1f (%d intervals)\n", mbps,
	       p->o.interval_ms, med, p99, min, nint);
	if (ph->nlat)
		printf("  latency      median %.2f us, p99 %.2f us (half the "
		       "round trip; round trip median %.2f us, %zu samples)\n",
		       lmed, lp99, rmed, ph->nlat);
	for (i = 0; i < n; i++) {
		r = &rails[i];
		r0 = &ph->rails0[i];
		if (r2cc_nic_info(p->ctx, r->nic, &ni))
			snprintf(nic, sizeof(nic), "nic%d", r->nic);
		else
			snprintf(nic, sizeof(nic), "%s:%u", ni.dev_name,
				 ni.port);
		printf("  rail%d %-12s %-5s bytes %llu  chunks %llu  failures "
		       "%llu  rollbacks %llu  failbacks %llu\n", i, nic,
		       perf_rail_state(r->state),
		       (unsigned long long)(r->bytes - r0->bytes),
		       (unsigned long long)(r->chunks - r0->chunks),
		       (unsigned long long)(r->failures - r0->failures),
		       (unsigned long long)(r->rollbacks - r0->rollbacks),
		       (unsigned long long)(r->failbacks - r0->failbacks));
	}
	printf("  connection   resent %llu B, tcp fallback %llu B%s, failovers "
	       "%llu, repairs %llu, repair last %.3f ms, max %.3f ms, "
	       "chunks the NIC delivered twice %llu\n",
	       (unsigned long long)(st.resent_bytes - ph->st0.resent_bytes),
	       (unsigned long long)(st.tcp_bytes - ph->st0.tcp_bytes),
	       st.fallback ? " (now on TCP)" : "",
	       (unsigned long long)(st.failovers - ph->st0.failovers),
	       (unsigned long long)(st.repairs - ph->st0.repairs),
	       (double)st.repair_ns_last / 1e6, (double)st.repair_ns_max / 1e6,
	       (unsigned long long)(st.dup_chunks - ph->st0.dup_chunks));
	printf("  notify       %s\n", st.notify_source == R2CC_NOTIFY_KMOD ?
	       "kmod" : st.notify_source == R2CC_NOTIFY_VERBS ? "verbs" : "?");

	printf("r2cc-perf-result: size=%llu msgs=%llu bytes=%llu verified=%llu "
	       "bad=%llu mbps=%.1f failovers=%llu repairs=%llu "
	       "repair_ms_max=%.3f tcp_bytes=%llu resent=%llu mode=%s "
	       "rank=%d role=%s secs=%.3f mbps_med=%.1f mbps_p99=%.1f "
	       "mbps_min=%.1f repair_ms_last=%.3f rails=%d notify=%s",
	       (unsigned long long)ph->size, (unsigned long long)ph->r.msgs,
	       (unsigned long long)ph->r.bytes,
	       (unsigned long long)auth->verified,
	       (unsigned long long)auth->bad, mbps,
	       (unsigned long long)(st.failovers - ph->st0.failovers),
	       (unsigned long long)(st.repairs - ph->st0.repairs),
	       (double)st.repair_ns_max / 1e6,
	       (unsigned long long)(st.tcp_bytes - ph->st0.tcp_bytes),
	       (unsigned long long)(st.resent_bytes - ph->st0.resent_bytes),
	       p->o.mode == PERF_LAT ? "lat" : "bw", p->o.rank, role(p),
	       ph->secs, med, p99, min, (double)st.repair_ns_last / 1e6, n,
	       st.notify_source == R2CC_NOTIFY_KMOD ? "kmod" :
	       st.notify_source == R2CC_NOTIFY_VERBS ? "verbs" : "unknown");
	if (ph->nlat)
		printf(" lat_us_med=%.2f lat_us_p99=%.2f rtt_us_med=%.2f",
		       lmed, lp99, rmed);
	printf(" dup_chunks=%llu verify=%s status=%s\n",
	       (unsigned long long)(st.dup_chunks - ph->st0.dup_chunks),
	       p->o.verify ? "on" : "off", failed ? "fail" : "ok");
	fflush(stdout);
}
