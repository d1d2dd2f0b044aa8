// SPDX-License-Identifier: GPL-2.0-only
/*
 * libr2cc's context API rejects bad arguments with -EINVAL and, on a
 * machine without RDMA devices, fails with -ENODEV through the log
 * callback, printing nothing itself.
 *
 * Sized structs from an older or a newer header (lib/base/opts.h): options
 * through r2cc_ctx_create(); r2cc_nic_info(), r2cc_next_event() and
 * r2cc_conn_stats() on a context and a connection made up here, since
 * no real one can be created without RDMA.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <r2cc/r2cc.h>

#include "../../lib/xport/xport.h"
#include "tap.h"

#define GUARD 0xa5

static int logged;
static char last[512];

static void log_cb(void *arg, enum r2cc_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	logged++;
	snprintf(last, sizeof(last), "%s", msg);
}

/* Options accepted: -ENODEV here, or a context on a host with RDMA. */
static int accepted(int ret, struct r2cc_ctx *ctx)
{
	if (ret == 0)
		r2cc_ctx_destroy(ctx);
	return ret == 0 || ret == -ENODEV;
}

/* Every byte of [@p, @p + @n) is GUARD. */
static int guarded(const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i] != GUARD)
			return 0;
	return 1;
}

static void test_opts_sizes(void)
{
	struct r2cc_ctx_opts o;
	struct r2cc_ctx *ctx;
	size_t old = offsetof(struct r2cc_ctx_opts, chunk_size), big;
	unsigned char *buf;
	int ret;

	/* An older struct: what is past its size reads as zero. */
	memset(&o, 0, sizeof(o));
	o.size = old;
	o.chunk_size = 1;		/* each invalid if it were read */
	o.fallback = 99;
	o.nic_window = 1;
	o.ctrl_ifname = "";
	ret = r2cc_ctx_create(&o, &ctx);
	tap_ok(accepted(ret, ctx),
	       "opts: older size %zu, junk past it ignored (%d)", old, ret);
	buf = malloc(old);		/* ASan: nothing past it is read */
	memset(buf, 0, old);
	memcpy(buf, &old, sizeof(old));
	ret = r2cc_ctx_create((void *)buf, &ctx);
	tap_ok(accepted(ret, ctx),
	       "opts: older size in a buffer of exactly that size (%d)", ret);
	free(buf);
	o.size = sizeof(size_t);
	ret = r2cc_ctx_create(&o, &ctx);
	tap_ok(accepted(ret, ctx), "opts: size field alone: defaults (%d)",
	       ret);
	o.size = offsetof(struct r2cc_ctx_opts, nics);
	o.log_level = 9;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL,
	       "opts: older size still checks the fields it covers");
	o.log_level = 0;

	/* A newer struct: accepted only if the bytes past ours are zero. */
	big = sizeof(o) + 16;
	buf = calloc(1, big);
	memset(&o, 0, sizeof(o));
	o.size = big;
	memcpy(buf, &o, sizeof(o));
	ret = r2cc_ctx_create((void *)buf, &ctx);
	tap_ok(accepted(ret, ctx), "opts: newer size, zero tail (%d)", ret);
	buf[sizeof(o)] = 1;
	ctx = (struct r2cc_ctx *)buf;
	tap_ok(r2cc_ctx_create((void *)buf, &ctx) == -E2BIG && !ctx,
	       "opts: newer size, first tail byte set: E2BIG, *ctx cleared");
	buf[sizeof(o)] = 0;
	buf[big - 1] = 0x80;
	tap_ok(r2cc_ctx_create((void *)buf, &ctx) == -E2BIG,
	       "opts: newer size, last tail byte set: E2BIG");
	free(buf);
	o.size = 1u << 20;		/* ASan: not read past @o */
	tap_ok(r2cc_ctx_create(&o, &ctx) == -E2BIG,
	       "opts: size 1 MiB: E2BIG without reading it");

	o.size = 0;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "opts: size 0: EINVAL");
	o.size = 1;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "opts: size 1: EINVAL");
	o.size = sizeof(size_t) - 1;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL,
	       "opts: size below the size field: EINVAL");
	o.size = old + 4;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL,
	       "opts: size no struct can have (not size_t-aligned): EINVAL");
}

/* A context with two NICs and one event queued, no device behind it. */
static struct r2cc_ctx fake;

static void fake_ctx(void)
{
	int i;

	memset(&fake, 0, sizeof(fake));
	fake.nnics = 2;
	fake.kmod_fd = -1;
	fake.epoll_fd = -1;
	fake.source = R2CC_NOTIFY_VERBS;
	for (i = 0; i < 2; i++) {
		struct r2cc_nic_info *ni = &fake.nics[i].info;

		ni->size = sizeof(*ni);
		snprintf(ni->dev_name, sizeof(ni->dev_name), "fake%d", i);
		ni->port = 1;
		ni->numa_node = 3;
		ni->state = R2CC_NIC_ACTIVE;
		ni->gid_index = 1;
		ni->bandwidth_mbps = 100000 * (i + 1);
	}
}

static void queue_event(void)
{
	struct r2cc_nic_event *e = &fake.evq[0];

	e->size = sizeof(*e);
	e->nic = 1;
	e->old_state = R2CC_NIC_ACTIVE;
	e->new_state = R2CC_NIC_DOWN;
	e->source = R2CC_NOTIFY_VERBS;
	e->injected = 1;
	e->time_ns = 123456789;
	fake.evq_head = 0;
	fake.evq_len = 1;
}

static void test_out_sizes(void)
{
	size_t old, big = sizeof(struct r2cc_nic_info) + 16, usize;
	_Alignas(max_align_t) unsigned char
		buf[sizeof(struct r2cc_nic_info) + 64];
	struct r2cc_nic_info full = { .size = sizeof(full) }, ni;
	struct r2cc_nic_event ev;

	fake_ctx();
	tap_ok(r2cc_nic_info(&fake, 1, &full) == 0 &&
	       full.size == sizeof(full) && !strcmp(full.dev_name, "fake1") &&
	       full.numa_node == 3 && full.bandwidth_mbps == 200000,
	       "nic_info: current size: every field");

	/* An older struct ending after numa_node. */
	old = offsetof(struct r2cc_nic_info, pci_addr);
	memset(buf, GUARD, sizeof(buf));
	memcpy(buf, &old, sizeof(old));
	memset(&ni, 0, sizeof(ni));
	tap_ok(r2cc_nic_info(&fake, 1, (void *)buf) == 0 &&
	       (memcpy(&ni, buf, old), ni.size == old) &&
	       !strcmp(ni.dev_name, "fake1") && ni.port == 1 &&
	       ni.numa_node == 3 && guarded(buf + old, sizeof(buf) - old),
	       "nic_info: older size %zu: filled, size kept, guard after it "
	       "untouched", old);

	/* A newer struct: ours filled, the rest left as it was. */
	memset(buf, GUARD, sizeof(buf));
	memcpy(buf, &big, sizeof(big));
	tap_ok(r2cc_nic_info(&fake, 0, (void *)buf) == 0 &&
	       (memcpy(&ni, buf, sizeof(ni)), ni.size == big) &&
	       !strcmp(ni.dev_name, "fake0") && ni.bandwidth_mbps == 100000 &&
	       guarded(buf + sizeof(ni), sizeof(buf) - sizeof(ni)),
	       "nic_info: newer size: ours filled, size kept, the rest untouched");

	memset(buf, GUARD, sizeof(buf));
	usize = 0;
	memcpy(buf, &usize, sizeof(usize));
	tap_ok(r2cc_nic_info(&fake, 0, (void *)buf) == -EINVAL &&
	       guarded(buf + sizeof(usize), sizeof(buf) - sizeof(usize)),
	       "nic_info: size 0: EINVAL, nothing written");
	usize = 1;
	memcpy(buf, &usize, sizeof(usize));
	tap_ok(r2cc_nic_info(&fake, 0, (void *)buf) == -EINVAL &&
	       guarded(buf + sizeof(usize), sizeof(buf) - sizeof(usize)),
	       "nic_info: size 1: EINVAL, nothing written");

	/* Events: a bad size leaves the event queued. */
	queue_event();
	memset(&ev, GUARD, sizeof(ev));
	ev.size = 1;
	tap_ok(r2cc_next_event(&fake, &ev, 0) == -EINVAL && fake.evq_len == 1 &&
	       guarded(&ev.nic, sizeof(ev) - sizeof(ev.size)),
	       "next_event: size 1: EINVAL, event kept, nothing written");
	ev.size = 0;
	tap_ok(r2cc_next_event(&fake, &ev, 0) == -EINVAL && fake.evq_len == 1,
	       "next_event: size 0: EINVAL, event kept");
	old = offsetof(struct r2cc_nic_event, time_ns);
	ev.size = old;
	tap_ok(r2cc_next_event(&fake, &ev, 0) == 1 && fake.evq_len == 0 &&
	       ev.size == old && ev.nic == 1 &&
	       ev.new_state == R2CC_NIC_DOWN && ev.injected == 1 &&
	       guarded(&ev.time_ns, sizeof(ev.time_ns)),
	       "next_event: older size %zu: filled, time_ns untouched", old);
	queue_event();
	usize = sizeof(ev) + 8;
	memset(buf, GUARD, sizeof(buf));
	memcpy(buf, &usize, sizeof(usize));
	tap_ok(r2cc_next_event(&fake, (void *)buf, 0) == 1 &&
	       (memcpy(&ev, buf, sizeof(ev)), ev.size == usize) &&
	       ev.time_ns == 123456789 &&
	       guarded(buf + sizeof(ev), sizeof(buf) - sizeof(ev)),
	       "next_event: newer size: ours filled, the rest untouched");
}

/* A connection with two rails, registered but with nothing behind it. */
static struct r2cc_conn conn;

static void fake_conn(void)
{
	int i;

	memset(&conn, 0, sizeof(conn));
	conn.ctx = &fake;
	conn.nrails = 2;
	conn.st.size = sizeof(conn.st);
	conn.st.msgs = 7;
	conn.st.repair_ns_max = 42;
	for (i = 0; i < 2; i++) {
		conn.rails[i].nic = i;
		conn.rails[i].state = i ? RAIL_FENCING : RAIL_UP;
		conn.rails[i].st.size = sizeof(conn.rails[i].st);
		conn.rails[i].st.bytes = 1000 * (i + 1);
		conn.rails[i].st.weight = 1;	/* replaced by the NIC's */
	}
}

static void test_stats_sizes(void)
{
	_Alignas(max_align_t) unsigned char
		sb[sizeof(struct r2cc_conn_stats) + 32];
	_Alignas(max_align_t) unsigned char
		rb[3 * (sizeof(struct r2cc_rail_stats) + 16) + 32];
	struct r2cc_conn_stats st;
	struct r2cc_rail_stats rs[2];
	size_t old, stride, usize;
	int ret, i, ok;

	fake_ctx();
	fake_conn();
	st.size = sizeof(st);
	rs[0].size = sizeof(rs[0]);
	tap_ok(r2cc_conn_stats(&conn, &st, rs, 2) == -EBADF,
	       "conn_stats: good sizes, not a connection: EBADF");
	st.size = 0;
	tap_ok(r2cc_conn_stats(&conn, &st, NULL, 0) == -EINVAL,
	       "conn_stats: stats size 0: EINVAL");
	st.size = 1;
	tap_ok(r2cc_conn_stats(&conn, &st, NULL, 0) == -EINVAL,
	       "conn_stats: stats size 1: EINVAL");
	st.size = sizeof(st);
	rs[0].size = 1;
	tap_ok(r2cc_conn_stats(&conn, &st, rs, 2) == -EINVAL,
	       "conn_stats: rail size 1: EINVAL");
	rs[0].size = R2CC_OPTS_MAX + 8;
	tap_ok(r2cc_conn_stats(&conn, &st, rs, 2) == -EINVAL,
	       "conn_stats: rail size over %u: EINVAL", R2CC_OPTS_MAX);

	/* Registered: the copy itself (the transport never runs here). */
	handle_add(&conn, R2CC_OBJ_CONN);
	rs[0].size = sizeof(rs[0]);
	rs[1].size = sizeof(rs[1]);
	ret = r2cc_conn_stats(&conn, &st, rs, 2);
	tap_ok(ret == 2 && st.size == sizeof(st) && st.nrails == 2 &&
	       st.msgs == 7 && st.repair_ns_max == 42 &&
	       rs[0].state == R2CC_RAIL_UP && rs[1].state == R2CC_RAIL_DOWN &&
	       rs[1].bytes == 2000 && rs[1].weight == 200000,
	       "conn_stats: current sizes: every field (%d)", ret);

	old = offsetof(struct r2cc_conn_stats, msgs);
	memset(sb, GUARD, sizeof(sb));
	memcpy(sb, &old, sizeof(old));
	ret = r2cc_conn_stats(&conn, (void *)sb, NULL, 0);
	memset(&st, 0, sizeof(st));
	memcpy(&st, sb, old);
	tap_ok(ret == 2 && st.size == old && st.nrails == 2 &&
	       guarded(sb + old, sizeof(sb) - old),
	       "conn_stats: older stats size %zu: filled, guard untouched", old);

	/* Rails at the caller's stride, read from rails[0].size. */
	stride = offsetof(struct r2cc_rail_stats, chunks);
	memset(rb, GUARD, sizeof(rb));
	memcpy(rb, &stride, sizeof(stride));
	st.size = sizeof(st);
	ret = r2cc_conn_stats(&conn, &st, (void *)rb, 3);
	ok = ret == 2;
	for (i = 0; i < 2; i++) {
		unsigned char *e = rb + i * stride;

		memset(&rs[0], 0, sizeof(rs[0]));
		memcpy((char *)&rs[0] + sizeof(size_t), e + sizeof(size_t),
		       stride - sizeof(size_t));
		ok = ok && rs[0].nic == i && rs[0].bytes == 1000u * (i + 1);
	}
	memcpy(&usize, rb, sizeof(usize));
	tap_ok(ok && usize == stride && guarded(rb + stride, sizeof(size_t)) &&
	       guarded(rb + 2 * stride, sizeof(rb) - 2 * stride),
	       "conn_stats: older rail size %zu: rails[i] at i x %zu, their size "
	       "fields and the rest untouched", stride, stride);

	stride = sizeof(struct r2cc_rail_stats) + 16;
	memset(rb, GUARD, sizeof(rb));
	memcpy(rb, &stride, sizeof(stride));
	ret = r2cc_conn_stats(&conn, &st, (void *)rb, 3);
	ok = ret == 2;
	for (i = 0; i < 2; i++) {
		unsigned char *e = rb + i * stride;

		memcpy(&rs[0], e, sizeof(rs[0]));
		ok = ok && rs[0].nic == i && rs[0].bytes == 1000u * (i + 1) &&
		     rs[0].weight == 100000u * (i + 1) &&
		     guarded(e + sizeof(rs[0]), 16);
	}
	memcpy(&usize, rb + stride, sizeof(usize));
	tap_ok(ok && guarded(rb + 2 * stride, sizeof(rb) - 2 * stride) &&
	       guarded(&usize, sizeof(usize)),
	       "conn_stats: newer rail size %zu: ours filled at the caller's "
	       "stride, the rest untouched", stride);
	handle_del(&conn);
}

/*
 * $@env set to each of @bad: tune_resolve() refuses every one with
 * -EINVAL and logs the variable and @range; false if any got through.
 */
static bool env_refused(struct r2cc_ctx *ctx, const char *env,
			const char *const *bad, size_t n, const char *range)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	char want[64];
	bool ok = true;
	size_t i;

	snprintf(want, sizeof(want), "%s=", env);
	for (i = 0; i < n; i++) {
		setenv(env, bad[i], 1);
		logged = 0;
		ok = ok && tune_resolve(ctx, &o) == -EINVAL && logged &&
		     strstr(last, want) && strstr(last, range);
	}
	unsetenv(env);
	return ok;
}

/* R2CC_PROGRESS_MS: the progress thread's period, 0 for none. */
static void test_progress_ms(void)
{
	static const char *const bad[] = {
		"10001", "-1", "abc", "5ms", "4294967306", " ",
	};
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_ctx *ctx = calloc(1, sizeof(*ctx));
	int ret;

	ctx->log = log_cb;
	ctx->log_level = R2CC_LOG_ERROR;
	unsetenv("R2CC_PROGRESS_MS");
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.progress_ms == 10,
	       "progress_ms: default 10 (%u)", ctx->tune.progress_ms);
	setenv("R2CC_PROGRESS_MS", "0", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.progress_ms == 0,
	       "R2CC_PROGRESS_MS=0: no thread, taken");
	setenv("R2CC_PROGRESS_MS", "10000", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.progress_ms == 10000,
	       "R2CC_PROGRESS_MS=10000: the most, taken");
	tap_ok(env_refused(ctx, "R2CC_PROGRESS_MS", bad, sizeof(bad) / sizeof(bad[0]),
			   "want 0..10000"),
	       "R2CC_PROGRESS_MS over 10000, negative, junk, a unit, "
	       "over 32 bits, blank: EINVAL, the range logged");
	free(ctx);
}

/*
 * R2CC_HEALTH_MS and R2CC_DEGRADE_RATE: the library's own judge of its
 * ports without r2cc.ko (platform/health.c), the module's defaults.
 */
static void test_health(void)
{
	static const char *const bad_ms[] = {
		"60001", "-1", "abc", "1s", "4294967297", " ",
	};
	static const char *const bad_rate[] = {
		"1000001", "-2", "two", "2/s", "18446744073709551617", "2 ",
	};
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_ctx *ctx = calloc(1, sizeof(*ctx));
	int ret;

	ctx->log = log_cb;
	ctx->log_level = R2CC_LOG_ERROR;
	unsetenv("R2CC_HEALTH_MS");
	unsetenv("R2CC_DEGRADE_RATE");
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.health_ms == 1000 &&
	       ctx->tune.degrade_rate == 2,
	       "health: every 1000 ms, degraded at 2 errors/s by default (%u, %u)",
	       ctx->tune.health_ms, ctx->tune.degrade_rate);
	setenv("R2CC_HEALTH_MS", "0", 1);
	setenv("R2CC_DEGRADE_RATE", "1000000", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.health_ms == 0 &&
	       ctx->tune.degrade_rate == 1000000,
	       "R2CC_HEALTH_MS=0 (off) and R2CC_DEGRADE_RATE=1000000 (the most): taken");
	unsetenv("R2CC_DEGRADE_RATE");
	tap_ok(env_refused(ctx, "R2CC_HEALTH_MS", bad_ms,
			   sizeof(bad_ms) / sizeof(bad_ms[0]), "want 0..60000"),
	       "R2CC_HEALTH_MS over 60000, negative, junk, a unit, over 32 "
	       "bits, blank: EINVAL, the range logged");
	tap_ok(env_refused(ctx, "R2CC_DEGRADE_RATE", bad_rate,
			   sizeof(bad_rate) / sizeof(bad_rate[0]),
			   "want 0..1000000"),
	       "R2CC_DEGRADE_RATE over 1000000, negative, junk, a unit, over "
	       "64 bits, a trailing blank: EINVAL, the range logged");
	free(ctx);
}

/* R2CC_REPAIR: staged (the default) or fenced, nothing else. */
static void test_repair(void)
{
	static const char *const bad[] = {
		"STAGED", "staged ", "stage", "1", "fenced,staged", "-",
	};
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_ctx *ctx = calloc(1, sizeof(*ctx));
	int ret;

	ctx->log = log_cb;
	ctx->log_level = R2CC_LOG_ERROR;
	unsetenv("R2CC_REPAIR");
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.staged, "repair: staged by default");
	setenv("R2CC_REPAIR", "staged", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.staged, "R2CC_REPAIR=staged: taken");
	setenv("R2CC_REPAIR", "fenced", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && !ctx->tune.staged, "R2CC_REPAIR=fenced: taken");
	setenv("R2CC_REPAIR", "", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.staged, "R2CC_REPAIR empty: the default");
	tap_ok(env_refused(ctx, "R2CC_REPAIR", bad, sizeof(bad) / sizeof(bad[0]),
			   "want fenced or staged"),
	       "R2CC_REPAIR in capitals, with a space, cut short, a number, "
	       "a list, junk: EINVAL, the choices logged");
	free(ctx);
}

/* R2CC_DRAIN: full (the default) or graded, nothing else. */
static void test_drain(void)
{
	static const char *const bad[] = {
		"GRADED", "graded ", "grade", "0", "full,graded", "-",
	};
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_ctx *ctx = calloc(1, sizeof(*ctx));
	int ret;

	ctx->log = log_cb;
	ctx->log_level = R2CC_LOG_ERROR;
	unsetenv("R2CC_DRAIN");
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && !ctx->tune.drain_graded, "drain: full by default");
	setenv("R2CC_DRAIN", "graded", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.drain_graded, "R2CC_DRAIN=graded: taken");
	setenv("R2CC_DRAIN", "full", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && !ctx->tune.drain_graded, "R2CC_DRAIN=full: taken");
	setenv("R2CC_DRAIN", "", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && !ctx->tune.drain_graded, "R2CC_DRAIN empty: the default");
	tap_ok(env_refused(ctx, "R2CC_DRAIN", bad, sizeof(bad) / sizeof(bad[0]),
			   "want full or graded"),
	       "R2CC_DRAIN in capitals, with a space, cut short, a number, "
	       "a list, junk: EINVAL, the choices logged");
	unsetenv("R2CC_DRAIN");
	free(ctx);
}

/*
 * R2CC_STALL_ASK: 1 (the default) or 0; R2CC_IB_TIMEOUT unset leaves the
 * ACK timeout to each NIC (0 here), set it must be 1..31.
 */
static void test_stall_ask(void)
{
	static const char *const bad[] = { "2", "-1", "yes", "1 ", "0x" };
	static const char *const bad_ib[] = { "0", "32", "-1", "14ms" };
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_ctx *ctx = calloc(1, sizeof(*ctx));
	int ret;

	ctx->log = log_cb;
	ctx->log_level = R2CC_LOG_ERROR;
	unsetenv("R2CC_STALL_ASK");
	unsetenv("R2CC_IB_TIMEOUT");
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.stall_ask && !ctx->tune.ib_timeout,
	       "stall questions on, ACK timeout left to each NIC, by default");
	setenv("R2CC_STALL_ASK", "0", 1);
	setenv("R2CC_IB_TIMEOUT", "16", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && !ctx->tune.stall_ask && ctx->tune.ib_timeout == 16,
	       "R2CC_STALL_ASK=0, R2CC_IB_TIMEOUT=16: taken");
	tap_ok(env_refused(ctx, "R2CC_STALL_ASK", bad,
			   sizeof(bad) / sizeof(bad[0]), "want 0..1"),
	       "R2CC_STALL_ASK 2, negative, a word, a trailing blank, junk: "
	       "EINVAL, the range logged");
	tap_ok(env_refused(ctx, "R2CC_IB_TIMEOUT", bad_ib,
			   sizeof(bad_ib) / sizeof(bad_ib[0]), "want 1..31"),
	       "R2CC_IB_TIMEOUT 0, 32, negative, a unit: EINVAL, the range "
	       "logged");
	unsetenv("R2CC_STALL_ASK");
	unsetenv("R2CC_IB_TIMEOUT");
	free(ctx);
}

/* R2CC_NIC_WINDOW and its option: bytes in flight per NIC. */
static void test_nic_window(void)
{
	static const char *const bad[] = {
		"4095", "0", "-4096", "0x", "65536 ", "4294967296", "abc",
	};
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_ctx *ctx = calloc(1, sizeof(*ctx));
	int ret;

	ctx->log = log_cb;
	ctx->log_level = R2CC_LOG_ERROR;
	unsetenv("R2CC_CHUNK_SIZE");
	unsetenv("R2CC_RAIL_DEPTH");
	unsetenv("R2CC_NIC_WINDOW");
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.nic_window == 8u * 65536,
	       "nic_window: default one rail's depth, 8 x 64 KiB (%u)",
	       ctx->tune.nic_window);
	setenv("R2CC_RAIL_DEPTH", "128", 1);
	setenv("R2CC_CHUNK_SIZE", "67108864", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.nic_window == UINT32_MAX,
	       "nic_window: default of 128 x 64 MiB clamps to 4 GiB - 1 (%u)",
	       ctx->tune.nic_window);
	unsetenv("R2CC_RAIL_DEPTH");
	unsetenv("R2CC_CHUNK_SIZE");
	setenv("R2CC_NIC_WINDOW", "4096", 1);
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.nic_window == 4096,
	       "R2CC_NIC_WINDOW=4096: the least, taken");
	tap_ok(env_refused(ctx, "R2CC_NIC_WINDOW", bad, sizeof(bad) / sizeof(bad[0]),
			   "want 4096..4294967295"),
	       "R2CC_NIC_WINDOW below 4 KiB, 0, negative, junk, over "
	       "32 bits: EINVAL, the range logged");
	setenv("R2CC_NIC_WINDOW", "4096", 1);
	o.nic_window = 1u << 20;
	ret = tune_resolve(ctx, &o);
	tap_ok(!ret && ctx->tune.nic_window == 1u << 20,
	       "nic_window option wins over the variable");
	unsetenv("R2CC_NIC_WINDOW");
	free(ctx);
	o.nic_window = R2CC_CHUNK_SIZE_MIN - 1;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL && !ctx,
	       "nic_window option below 4 KiB: EINVAL");
	o.nic_window = R2CC_CHUNK_SIZE_MIN;
	o.log = log_cb;
	ret = r2cc_ctx_create(&o, &ctx);
	tap_ok(accepted(ret, ctx), "nic_window option of 4 KiB: accepted (%d)",
	       ret);
}

int main(void)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_nic_event ev = { .size = sizeof(ev) };
	struct r2cc_ctx *ctx = (struct r2cc_ctx *)&o;
	int ret;

	tap_plan(11 + 12 + 9 + 9 + 3 + 7 + 4 + 5 + 4 + 4 + 5);
	tap_ok(r2cc_notify_source(NULL) == 0, "notify_source(NULL): 0");
	tap_ok(r2cc_notify_source(ctx) == 0,
	       "notify_source of something not a context: 0");
	tap_ok(r2cc_ctx_destroy(ctx) == -EBADF,
	       "ctx_destroy of something not a context: EBADF");
	tap_ok(r2cc_ctx_create(&o, NULL) == -EINVAL, "NULL result: EINVAL");
	o.size = sizeof(o) - 1;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL && ctx == NULL,
	       "short opts size: EINVAL, *ctx cleared");
	o.size = sizeof(o);
	o.flags = 0x80;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "unknown flag: EINVAL");
	o.flags = 0;
	o.reserved = 1;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "reserved != 0: EINVAL");
	o.reserved = 0;
	o.log_level = 9;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "log level 9: EINVAL");
	o.log_level = -1;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "log level -1: EINVAL");
	o.log_level = R2CC_LOG_DEBUG;
	o.log = log_cb;
	o.nics = "bad,,list";
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL && logged &&
	       strstr(last, "bad NIC list"), "bad NIC list: EINVAL, logged");
	o.nics = NULL;
	logged = 0;
	ret = r2cc_ctx_create(&o, &ctx);
	if (ret == 0) {
		tap_ok(1, "# SKIP this host has RDMA devices");
		r2cc_ctx_destroy(ctx);
	} else {
		tap_ok(ret == -ENODEV && logged, "no RDMA device: ENODEV (%s)",
		       last);
	}
	tap_ok(r2cc_nic_count(NULL) == -EINVAL, "nic_count(NULL): EINVAL");
	tap_ok(r2cc_next_event(NULL, &ev, 0) == -EINVAL,
	       "next_event(NULL): EINVAL");
	r2cc_ctx_destroy(NULL);
	tap_ok(r2cc_nic_is_active(NULL, 0) == -EINVAL,
	       "nic_is_active(NULL): EINVAL; destroy(NULL) is a no-op");
	test_opts_sizes();
	test_out_sizes();
	test_stats_sizes();
	test_nic_window();
	test_progress_ms();
	test_repair();
	test_drain();
	test_stall_ask();
	test_health();
	return tap_done();
}
