// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc-perf: throughput (--bw) and ping-pong latency (--lat) over libr2cc
 * between two ranks that meet through the bootstrap, with every byte of
 * every message checked and a timeline of what each rail carried, so that
 * a fault injected during the run (--at) shows as a dip, a state change
 * and a repair, and any data it corrupted or lost shows as an error.
 *
 * --coll runs a collective on any number of ranks instead (coll.c).
 *
 * --bw: rank 0 keeps --window isends outstanding, each from its own slot
 * of a registered ring; rank 1 keeps as many single-buffer receives
 * posted, checking each slot before posting it again.  A phase (one
 * message size) ends with a marker message of another length that carries
 * the number of messages sent; receives stay posted from one phase to the
 * next, in ring order.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <r2cc/bootstrap.h>

#include "perf.h"

static void check_stuck(const struct perf *p, double now, double last,
			const char *what)
{
	if (now - last > p->o.timeout)
		die("nothing completed for %g s while %s; is the peer gone? "
		    "(--timeout)", p->o.timeout, what);
}

/* Poll @req to completion, bounded by --timeout. */
static void wait_req(struct perf *p, struct r2cc_req *req, size_t *sizes,
		     const char *what)
{
	double last = perf_now(), now;
	int done = 0, ret;

	for (;;) {
		ret = r2cc_test(req, &done, sizes);
		if (ret)
			die_op("r2cc_test", ret, what);
		if (done)
			return;
		now = perf_now();
		check_stuck(p, now, last, what);
		tl_poll(&p->tl, now);
	}
}

static size_t mark_len(uint64_t size)
{
	return size == 16 ? 24 : 16;
}

static void put_marker(void *buf, uint64_t msgs)
{
	struct marker m = { MARK_MAGIC, msgs, 0 };

	memcpy(buf, &m, sizeof(m));
}

static int is_marker(const void *buf, size_t len, uint64_t size,
		     uint64_t *msgs)
{
	struct marker m;

	if (len != mark_len(size))
		return 0;
	memcpy(&m, buf, sizeof(m));
	*msgs = m.msgs;
	return m.magic == MARK_MAGIC;
}

static void verify(struct perf *p, struct phase *ph, const void *buf,
		   size_t len, uint64_t seq, uint64_t salt)
{
	struct pattern_bad first;
	size_t bad;

	if (!p->o.verify)
		return;
	bad = pattern_check(buf, len, seq, salt, &first);
	ph->r.verified += len;
	if (!bad)
		return;
	ph->r.bad += bad;
	p->phase_failed = 1;
	if (p->bad_reported++)
		return;
	fprintf(stderr, PERF_NAME ": rank %d: DATA MISMATCH in message %llu "
		"(%llu bytes) at offset %zu: expected 0x%02x, got 0x%02x; "
		"%zu bad bytes in this message\n", rank_g,
		(unsigned long long)seq, (unsigned long long)len,
		first.offset, first.want, first.got, bad);
	tl_add_event(&p->tl, "MISMATCH msg %llu offset %zu",
		     (unsigned long long)seq, first.offset);
}

static void unexpected(struct perf *p, size_t len, uint64_t size)
{
	die("message %llu: %zu bytes, expected %llu or a %zu-byte end marker",
	    (unsigned long long)p->seq_rx, len, (unsigned long long)size,
	    mark_len(size));
}

static int more(const struct perf *p, uint64_t sent, double start,
		double now)
{
	return p->o.iters ? sent < p->o.iters : now - start < p->o.duration;
}

static void bw_send(struct perf *p, struct phase *ph)
{
	unsigned int w = p->o.window, slot;
	uint64_t posted = 0, done = 0, data = 0, mark = UINT64_MAX;
	double start = perf_now(), last = start, now = start;
	size_t lens[PERF_MAX_WINDOW];
	unsigned char *buf;
	int fin, ret;

	for (;;) {
		while (posted - done < w && mark == UINT64_MAX) {
			slot = posted % w;
			buf = p->sbuf + slot * p->stride;
			if (more(p, data, start, now)) {
				if (p->o.verify)
					pattern_fill(buf, ph->size, p->seq_tx,
						     SALT_FWD);
				lens[slot] = ph->size;
				p->seq_tx++;
				data++;
			} else {
				put_marker(buf, data);
				lens[slot] = mark_len(ph->size);
				mark = posted;
			}
			ret = r2cc_isend(p->out, p->smr, buf, lens[slot], TAG,
					 &p->sreq[slot]);
			if (ret)
				die_op("r2cc_isend", ret, NULL);
			posted++;
		}
		if (done == posted)
			break;
		slot = done % w;
		ret = r2cc_test(p->sreq[slot], &fin, NULL);
		if (ret)
			die_op("r2cc_test", ret, "send");
		now = perf_now();
		if (fin) {
			if (done != mark) {
				ph->r.msgs++;
				ph->r.bytes += lens[slot];
				p->tl.bytes += lens[slot];
			}
			done++;
			last = now;
		} else {
			check_stuck(p, now, last, "sending");
		}
		tl_poll(&p->tl, now);
	}
	ph->secs = perf_now() - start;
}

static void bw_recv(struct perf *p, struct phase *ph)
{
	double start = perf_now(), last = start, now;
	size_t sizes[R2CC_MAX_RECVS];
	unsigned int slot;
	unsigned char *buf;
	uint64_t sent = 0;
	int fin, ret, end = 0;

	for (;;) {
		slot = p->rdone % p->rring;
		ret = r2cc_test(p->rreq[slot], &fin, sizes);
		if (ret)
			die_op("r2cc_test", ret, "receive");
		now = perf_now();
		if (!fin) {
			check_stuck(p, now, last, "receiving");
			tl_poll(&p->tl, now);
			continue;
		}
		last = now;
		buf = p->rbuf + slot * p->stride;
		if (sizes[0] == ph->size) {
			verify(p, ph, buf, sizes[0], p->seq_rx, SALT_FWD);
			p->seq_rx++;
			ph->r.msgs++;
			ph->r.bytes += sizes[0];
			p->tl.bytes += sizes[0];
		} else if (is_marker(buf, sizes[0], ph->size, &sent)) {
			ph->secs = now - start;
			end = 1;
		} else {
			unexpected(p, sizes[0], ph->size);
		}
		p->rdone++;
		post_recv(p);
		if (end)
			break;
		tl_poll(&p->tl, now);
	}
	if (sent != ph->r.msgs) {
		fprintf(stderr, PERF_NAME ": rank 1: the sender sent %llu "
			"messages, %llu arrived\n", (unsigned long long)sent,
			(unsigned long long)ph->r.msgs);
		p->phase_failed = 1;
	}
}

static void lat_sample(struct phase *ph, double rtt)
{
	if (ph->nlat == ph->latcap) {
		ph->latcap = ph->latcap ? ph->latcap * 2 : 4096;
		ph->lat = realloc(ph->lat, ph->latcap * sizeof(*ph->lat));
		if (!ph->lat)
			die("out of memory");
	}
	ph->lat[ph->nlat++] = rtt;
}

/* Rank 0 of --lat: ping, wait for the pong, check it. */
static void lat_ping(struct perf *p, struct phase *ph)
{
	double start = perf_now(), t1, now = start;
	size_t sizes[R2CC_MAX_RECVS], len;
	uint64_t data = 0, echoed;
	int data_msg, ret;

	for (;;) {
		data_msg = more(p, data, start, now);
		if (data_msg) {
			len = ph->size;
			if (p->o.verify)
				pattern_fill(p->sbuf, len, p->seq_tx,
					     SALT_FWD);
		} else {
			len = mark_len(ph->size);
			put_marker(p->sbuf, data);
		}
		/* rank 0 keeps nothing posted ahead: slot 0 every time */
		p->rposted = p->rdone = 0;
		post_recv(p);
		t1 = perf_now();
		ret = r2cc_isend(p->out, p->smr, p->sbuf, len, TAG,
				 &p->sreq[0]);
		if (ret)
			die_op("r2cc_isend", ret, NULL);
		wait_req(p, p->sreq[0], NULL, "sending a ping");
		wait_req(p, p->rreq[0], sizes, "waiting for a pong");
		now = perf_now();
		if (!data_msg) {
			if (!is_marker(p->rbuf, sizes[0], ph->size, &echoed))
				unexpected(p, sizes[0], ph->size);
			break;
		}
		if (sizes[0] != ph->size)
			unexpected(p, sizes[0], ph->size);
		lat_sample(ph, now - t1);
		verify(p, ph, p->rbuf, sizes[0], p->seq_tx, SALT_REV);
		p->seq_tx++;
		data++;
		ph->r.msgs++;
		ph->r.bytes += sizes[0];
		p->tl.bytes += sizes[0];
		tl_poll(&p->tl, now);
	}
	ph->secs = now - start;
}

/* Rank 1 of --lat: a receive is always posted one ahead. */
static void lat_pong(struct perf *p, struct phase *ph)
{
	double start = perf_now();
	size_t sizes[R2CC_MAX_RECVS], len;
	unsigned char *buf;
	uint64_t sent = 0;
	int end = 0, ret;

	while (!end) {
		if (p->o.verify)
			pattern_fill(p->sbuf, ph->size, p->seq_rx, SALT_REV);
		buf = p->rbuf + (p->rdone % p->rring) * p->stride;
		wait_req(p, p->rreq[p->rdone % p->rring], sizes,
			 "waiting for a ping");
		p->rdone++;
		post_recv(p);
		len = sizes[0];
		if (len != ph->size) {
			if (!is_marker(buf, len, ph->size, &sent))
				unexpected(p, len, ph->size);
			memcpy(p->sbuf, buf, len);
			end = 1;
		}
		ret = r2cc_isend(p->out, p->smr, p->sbuf, len, TAG,
				 &p->sreq[0]);
		if (ret)
			die_op("r2cc_isend", ret, NULL);
		if (!end) {
			verify(p, ph, buf, len, p->seq_rx, SALT_FWD);
			p->seq_rx++;
			ph->r.msgs++;
			ph->r.bytes += len;
			p->tl.bytes += len;
		}
		wait_req(p, p->sreq[0], NULL, "sending a pong");
		tl_poll(&p->tl, perf_now());
	}
	ph->secs = perf_now() - start;
	if (sent != ph->r.msgs) {
		fprintf(stderr, PERF_NAME ": rank 1: %llu pings sent, %llu "
			"arrived\n", (unsigned long long)sent,
			(unsigned long long)ph->r.msgs);
		p->phase_failed = 1;
	}
}

static void run_phase(struct perf *p, uint64_t size, int first)
{
	struct report all[2];
	struct phase ph;
	int ret, n;

	memset(&ph, 0, sizeof(ph));
	ph.size = size;
	ret = r2cc_boot_barrier(p->boot);
	if (ret)
		die_op("r2cc_boot_barrier", ret, "start of a phase");
	n = perf_stats(p->tl.conn, &ph.st0, ph.rails0);
	if (n < 0)
		die_op("r2cc_conn_stats", n, NULL);
	if (first)
		tl_start(&p->tl, perf_now());
	tl_phase_begin(&p->tl, size, perf_now());
	if (p->o.mode == PERF_LAT)
		p->o.rank ? lat_pong(p, &ph) : lat_ping(p, &ph);
	else
		p->o.rank ? bw_recv(p, &ph) : bw_send(p, &ph);
	tl_phase_end(&p->tl, perf_now());
	/* this phase's failures; p->failed keeps the whole run's */
	ph.r.failed = p->phase_failed;
	p->phase_failed = 0;
	ret = r2cc_boot_allgather(p->boot, &ph.r, sizeof(ph.r), all);
	if (ret)
		die_op("r2cc_boot_allgather", ret, "results");
	print_summary(p, &ph, &all[1 - p->o.rank]);
	p->failed |= ph.r.failed || all[1 - p->o.rank].failed;
	free(ph.lat);
}

int main(int argc, char **argv)
{
	struct r2cc_boot_opts bo = { .size = sizeof(bo) };
	static struct perf perf;
	struct perf *p = &perf;
	double tmo;
	int i, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* a peer that vanishes must give an error, not a silent death */
	signal(SIGPIPE, SIG_IGN);
	perf_parse_args(argc, argv, &p->o);
	rank_g = p->o.rank;
	ret = r2cc_check_version(R2CC_VERSION_MAJOR, R2CC_VERSION_MINOR);
	if (ret)
		die("libr2cc %s does not match the header %d.%d: %s",
		    r2cc_version(), R2CC_VERSION_MAJOR, R2CC_VERSION_MINOR,
		    strerror(-ret));
	tl_init(&p->tl, &p->o, NULL, NULL);
	if (p->o.csv)
		p->tl.csv = open_csv(p->o.csv, p->o.rank);

	tmo = p->o.timeout * 1000;
	bo.root = p->o.root;
	bo.rank = p->o.rank;
	bo.world_size = p->o.world;
	bo.timeout_ms = tmo > 4e9 ? 4000000000U : (uint32_t)tmo;
	if (!bo.timeout_ms)
		bo.timeout_ms = 1;
	ret = r2cc_boot_init(&bo, &p->boot);
	if (ret)
		die_op("r2cc_boot_init", ret, p->o.root_desc);
	if (r2cc_boot_size(p->boot) != p->o.world ||
	    r2cc_boot_rank(p->boot) != p->o.rank)
		die("the bootstrap says rank %d of %d, expected %d of %d",
		    r2cc_boot_rank(p->boot), r2cc_boot_size(p->boot),
		    p->o.rank, p->o.world);

	setup_ctx(p);
	if (p->o.mode == PERF_COLL) {
		ret = perf_coll_run(p);
		teardown(p);
		return ret;
	}
	setup_buffers(p);
	setup_conns(p);
	p->tl.ctx = p->ctx;
	p->tl.conn = p->o.mode == PERF_BW && p->o.rank == 0 ? p->out : p->in;

	printf("%s: rank %d of 2 (%s) via %s, libr2cc %s, %d NICs, %s\n",
	       PERF_NAME, p->o.rank, role(p), p->o.root_desc, r2cc_version(),
	       r2cc_nic_count(p->ctx),
	       r2cc_notify_source(p->ctx) == R2CC_NOTIFY_KMOD ?
	       "notify kmod" : "notify verbs");

	for (i = 0; i < p->o.nsizes; i++)
		run_phase(p, p->o.sizes[i], i == 0);
	tl_finish(&p->tl);
	free(p->tl.iv);
	teardown(p);
	if (p->failed)
		fprintf(stderr, PERF_NAME ": rank %d: FAILED (%s)\n", rank_g,
			p->bad_reported ? "data mismatch" :
			"see the messages above, here or on the peer");
	return p->failed ? 1 : 0;
}
