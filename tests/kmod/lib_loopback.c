// SPDX-License-Identifier: GPL-2.0-only
/*
 * libr2cc over each local NIC on its own: the process connects to itself
 * through one NIC at a time (a context that sees only that NIC) and
 * sends itself messages of 1 B to 4 MiB, every byte checked, then closes.
 * What an operator runs on a real node to see that every NIC carries r2cc
 * traffic.  It needs no r2cc.ko (the library then polls the ports) and
 * skips when the node has no RDMA NIC; a NIC whose port is down fails.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <r2cc/r2cc.h>

#include "tap.h"

#define BIG	(4u << 20)

/* Drive @q to its end: its result, or -ETIMEDOUT after about 30 s. */
static int finish(struct r2cc_ctx *ctx, struct r2cc_req *q, size_t *sizes)
{
	int done = 0, ret;
	long i;

	for (i = 0; i < 3000000; i++) {
		ret = r2cc_test(q, &done, sizes);
		if (ret || done)
			return ret;
		r2cc_progress(ctx);
		if (i > 1000)
			usleep(10);
	}
	return -ETIMEDOUT;
}

static int connect_self(struct r2cc_ctx *ctx, struct r2cc_conn **tx,
			struct r2cc_conn **rx)
{
	struct r2cc_listener *l;
	struct r2cc_handle h;
	int ret, a = 0, b = 0;
	long i;

	*tx = *rx = NULL;
	ret = r2cc_listen(ctx, &h, &l);
	if (ret)
		return ret;
	ret = r2cc_connect(ctx, &h, tx);
	for (i = 0; !ret && i < 300000; i++) {
		ret = r2cc_accept(l, rx);
		if (ret != -EAGAIN)
			break;
		r2cc_progress(ctx);
		usleep(10);
	}
	for (i = 0; !ret && i < 3000000 && (a != 1 || b != 1); i++) {
		a = r2cc_conn_ready(*tx);
		b = r2cc_conn_ready(*rx);
		if (a < 0 || b < 0)
			ret = a < 0 ? a : b;
		else if (i > 1000)
			usleep(10);
	}
	r2cc_listener_close(l);
	return ret ? ret : (a == 1 && b == 1 ? 0 : -ETIMEDOUT);
}

/* One message of @len through @tx to @rx, checked; 0 or what went wrong. */
static const char *one(struct r2cc_ctx *ctx, struct r2cc_conn *tx,
		       struct r2cc_conn *rx, struct r2cc_mr *mr, uint8_t *out,
		       uint8_t *in, size_t len, unsigned int seed)
{
	struct r2cc_req *sq, *rq;
	void *bufs[1] = { in };
	size_t cap = BIG, got = 0, k;
	uint32_t tag = 0;

	for (k = 0; k < len; k++)
		out[k] = (uint8_t)(k * 131 + seed);
	memset(in, 0xa5, len);
	if (r2cc_irecv(rx, 1, bufs, &cap, &tag, &mr, &rq))
		return "irecv refused";
	if (r2cc_isend(tx, mr, out, len, 0, &sq))
		return "isend refused";
	if (finish(ctx, sq, NULL))
		return "send failed";
	if (finish(ctx, rq, &got))
		return "receive failed";
	if (got != len)
		return "wrong size";
	return memcmp(in, out, len) ? "wrong bytes" : NULL;
}

/* Everything through NIC @name alone; NULL, or what went wrong. */
static const char *nic(const char *name, size_t *moved)
{
	static const size_t sizes[] = { 1, 4095, 65537, 1 << 20, BIG };
	struct r2cc_ctx_opts o = { .size = sizeof(o), .nics = name };
	struct r2cc_conn *tx = NULL, *rx = NULL;
	struct r2cc_ctx *ctx = NULL;
	struct r2cc_mr *mr = NULL;
	const char *why = NULL;
	uint8_t *buf;
	size_t i;

	*moved = 0;
	buf = malloc(2 * (size_t)BIG);
	if (!buf)
		return "out of memory";
	if (r2cc_ctx_create(&o, &ctx))
		why = "no context on it";
	else if (r2cc_mr_reg(ctx, buf, 2 * (size_t)BIG, 0, &mr))
		why = "memory registration failed";
	else if (connect_self(ctx, &tx, &rx))
		why = "no connection to itself";
	for (i = 0; !why && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		why = one(ctx, tx, rx, mr, buf, buf + BIG, sizes[i],
			  (unsigned int)i);
		*moved += why ? 0 : sizes[i];
	}
	/* over the NIC itself: a port that is down sends by TCP instead */
	if (!why) {
		struct r2cc_conn_stats st = { .size = sizeof(st) };

		if (r2cc_conn_stats(tx, &st, NULL, 0) < 0)
			why = "no statistics";
		else if (st.tcp_bytes || st.fallback)
			why = "carried over the TCP fallback, not the NIC";
		else if (st.failovers)
			why = "the NIC's rail failed";
	}
	if (tx && r2cc_conn_close(tx) && !why)
		why = "close failed";
	if (rx && r2cc_conn_close(rx) && !why)
		why = "close failed";
	if (mr)
		r2cc_mr_dereg(mr);
	if (ctx && r2cc_ctx_destroy(ctx) && !why)
		why = "context destroy failed";
	free(buf);
	return why;
}

int main(void)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_ctx *all;
	int n, i, ret;

	ret = r2cc_ctx_create(&o, &all);
	if (ret == -ENODEV)
		tap_skip_all("no RDMA NIC");
	if (ret) {
		fprintf(stderr, "r2cc_ctx_create: %s\n", strerror(-ret));
		return KSFT_FAIL;
	}
	n = r2cc_nic_count(all);
	tap_plan(n);
	for (i = 0; i < n; i++) {
		struct r2cc_nic_info ni = { .size = sizeof(ni) };
		char name[80];
		const char *why;
		size_t moved;

		if (r2cc_nic_info(all, i, &ni)) {
			tap_ok(0, "NIC %d: no information", i);
			continue;
		}
		snprintf(name, sizeof(name), "%s:%u", ni.dev_name, ni.port);
		why = nic(name, &moved);
		tap_ok(!why, "%s (%s): 1 B to 4 MiB to itself, %zu bytes checked%s%s",
		       name, ni.netdev[0] ? ni.netdev : "-", moved,
		       why ? ": " : "", why ? why : "");
	}
	r2cc_ctx_destroy(all);
	return tap_done();
}
