// SPDX-License-Identifier: GPL-2.0-only
/*
 * A hostile peer on the control channel.  This program listens with
 * libr2cc and connects to itself with a raw TCP socket that speaks the
 * wire protocol (lib/xport/wire.h) badly: wrong magic, version, nonce, rail
 * counts, lengths and types before the handshake; after it, messages the
 * receiving end must never get, indexes out of range, short and lying
 * lengths, data for buffers that are not open or that it would overrun.
 * Each must fail that connection with -EPROTO (or -ECONNRESET for a peer
 * that hangs up), never crash or hang; one well-formed fallback message
 * shows the checks do not refuse the good.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <r2cc/r2cc.h>

#include "tap.h"
#include "xport/wire.h"

static struct r2cc_ctx *ctx;
static struct r2cc_listener *lst;
static struct handle_data hd;
static struct wire_qp myqp[2];
static int nnics;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int raw_connect(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = hd.port,
				  .sin_addr.s_addr = hd.addr };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		tap_skip_all("cannot reach the listener");
	return fd;
}

/* One frame with a header the caller may spoil. */
static void frame(int fd, uint16_t type, const void *p, uint32_t len,
		  uint32_t hdr_len, uint16_t reserved)
{
	struct wire_hdr h = { .len = hdr_len, .type = type,
			      .reserved = reserved };

	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) != sizeof(h) ||
	    (len && send(fd, p, len, MSG_NOSIGNAL) != (ssize_t)len))
		tap_diag("send failed: %s", strerror(errno));
}

static void msg(int fd, uint16_t type, const void *p, uint32_t len)
{
	frame(fd, type, p, len, len, 0);
}

struct hello2 {
	struct wire_hello h;
	struct wire_qp qp[2];
};

/* The version the raw peer says it speaks. */
static uint32_t peer_version = WIRE_VERSION;

static struct hello2 good_hello(void)
{
	struct hello2 m = {
		.h = { .magic = WIRE_MAGIC, .version = peer_version,
		       .nonce = hd.nonce, .chunk_size = 4096,
		       .nrails = (uint32_t)nnics },
	};

	memcpy(m.qp, myqp, sizeof(m.qp));
	return m;
}

static size_t hello_len(const struct hello2 *m)
{
	return sizeof(m->h) + m->h.nrails * sizeof(m->qp[0]);
}

/* Accept the raw peer's connection and drive it to ready or failure. */
static int outcome(struct r2cc_conn **cp, double secs)
{
	struct r2cc_conn *c = NULL;
	double t0 = now_s();
	int ret;

	while ((ret = r2cc_accept(lst, &c)) == -EAGAIN && now_s() - t0 < secs)
		;
	if (ret)
		return ret;
	while ((ret = r2cc_conn_ready(c)) == 0 && now_s() - t0 < secs)
		;
	if (cp && ret == 1)
		*cp = c;
	else
		r2cc_conn_close(c);
	return ret == 0 ? -ETIMEDOUT : ret;
}

static void bad_hello(const char *what, void (*spoil)(struct hello2 *m,
						      size_t *len))
{
	struct hello2 m = good_hello();
	size_t len = hello_len(&m);
	int fd = raw_connect(), ret;

	spoil(&m, &len);
	msg(fd, W_HELLO, &m, (uint32_t)len);
	ret = outcome(NULL, 10);
	tap_ok(ret == -EPROTO, "hello with %s -> -EPROTO (%d)", what, ret);
	close(fd);
}

static void s_magic(struct hello2 *m, size_t *l) { (void)l; m->h.magic ^= 1; }
static void s_version(struct hello2 *m, size_t *l) { (void)l; m->h.version = WIRE_VERSION + 1; }
static void s_nonce(struct hello2 *m, size_t *l) { (void)l; m->h.nonce ^= 2; }
static void s_rails0(struct hello2 *m, size_t *l) { m->h.nrails = 0; *l = sizeof(m->h); }
static void s_rails17(struct hello2 *m, size_t *l) { (void)l; m->h.nrails = 17; }
static void s_short(struct hello2 *m, size_t *l) { (void)m; *l -= 4; }
static void s_chunk(struct hello2 *m, size_t *l) { (void)l; m->h.chunk_size = 1; }
static void s_mtu(struct hello2 *m, size_t *l) { (void)l; m->qp[0].mtu = 0; }

static void bad_header(const char *what, uint16_t type, uint32_t hlen,
		       uint16_t reserved)
{
	struct hello2 m = good_hello();
	int fd = raw_connect(), ret;

	frame(fd, type, &m, (uint32_t)hello_len(&m), hlen, reserved);
	ret = outcome(NULL, 10);
	tap_ok(ret == -EPROTO, "%s -> -EPROTO (%d)", what, ret);
	close(fd);
}

/* A connection through the handshake, the raw end as the sender. */
static int ready(struct r2cc_conn **c)
{
	struct hello2 m = good_hello();
	int fd = raw_connect();

	msg(fd, W_HELLO, &m, (uint32_t)hello_len(&m));
	if (outcome(c, 10) != 1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* After the handshake: @what must fail the connection with -EPROTO. */
static void bad_after(const char *what, uint16_t type, const void *p,
		      uint32_t len)
{
	struct r2cc_conn *c;
	double t0;
	int fd = ready(&c), ret = 1;

	if (fd < 0) {
		tap_ok(0, "%s: handshake", what);
		return;
	}
	msg(fd, type, p, len);
	for (t0 = now_s(); ret == 1 && now_s() - t0 < 10;)
		ret = r2cc_conn_ready(c);
	tap_ok(ret == -EPROTO, "after the handshake, %s -> -EPROTO (%d)",
	       what, ret);
	r2cc_conn_close(c);
	close(fd);
}

/* Fallback data into a posted receive: good, then overrunning. */
static void data_path(void)
{
	static uint8_t buf[8192];
	struct {
		struct wire_data d;
		uint8_t p[200];
	} m = { .d = { .msg_id = 0, .chunk = 0, .len = 100,
		       .flags = WIRE_DATA_EOC | WIRE_DATA_LAST } };
	void *bp = buf;
	size_t len = 100, got = 0;
	uint32_t tag = 0;
	struct r2cc_mr *mr;
	struct r2cc_conn *c;
	struct r2cc_req *q;
	int fd, ret = 0, done = 0;
	double t0;

	if (r2cc_mr_reg(ctx, buf, sizeof(buf), 0, &mr)) {
		tap_ok(0, "register a buffer");
		return;
	}
	fd = ready(&c);
	tap_ok(fd >= 0 && !r2cc_irecv(c, 1, &bp, &len, &tag, &mr, &q),
	       "a 100-byte receive posted");
	memset(m.p, 0x5a, sizeof(m.p));
	msg(fd, W_DATA, &m, sizeof(m.d) + 100);
	for (t0 = now_s(); !ret && !done && now_s() - t0 < 10;)
		ret = r2cc_test(q, &done, &got);
	tap_ok(!ret && done && got == 100 && buf[0] == 0x5a && buf[99] == 0x5a &&
	       buf[100] == 0, "well-formed fallback data completes it");
	tap_ok(!r2cc_irecv(c, 1, &bp, &len, &tag, &mr, &q),
	       "another 100-byte receive posted");
	m.d.msg_id = 1;
	m.d.len = 200;
	msg(fd, W_DATA, &m, sizeof(m.d) + 200);
	done = 0;
	for (t0 = now_s(); !ret && !done && now_s() - t0 < 10;)
		ret = r2cc_test(q, &done, NULL);
	tap_ok(ret == -EPROTO && buf[100] == 0,
	       "200 bytes for a 100-byte buffer -> -EPROTO, nothing written past it");
	r2cc_conn_close(c);
	close(fd);
	r2cc_mr_dereg(mr);
}

int main(void)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o), .ctrl_ifname = "lo",
				   .log_level = R2CC_LOG_ERROR };
	struct r2cc_nic_info ni = { .size = sizeof(ni) };
	struct r2cc_handle h;
	struct wire_cts cts = { .count = 1 };
	struct wire_data d = { .msg_id = 3, .len = 0,
			       .flags = WIRE_DATA_EOC };
	struct wire_rail rd = { .rail = 99 };
	struct wire_nic wn = { .rail = 5, .up = 1 };
	struct wire_msg_err me = { .msg_id = 7, .err = EIO };
	struct wire_credit cr = { .rail = 0, .posted = 1000 };
	struct wire_rail_seen seen = { .rail = 0, .age_us = 1 };
	struct wire_rail_ask ask = { .rail = 0, .seq = 1 };
	struct r2cc_conn *c;
	struct hello2 hello;
	uint8_t fenced[8] = { 0 };
	int i, fd, ret;

	if (r2cc_ctx_create(&o, &ctx))
		tap_skip_all("no RDMA device");
	if (r2cc_listen(ctx, &h, &lst))
		tap_skip_all("cannot listen");
	memcpy(&hd, h.bytes, sizeof(hd));
	nnics = r2cc_nic_count(ctx) < 2 ? r2cc_nic_count(ctx) : 2;
	for (i = 0; i < nnics; i++) {
		r2cc_nic_info(ctx, i, &ni);
		memcpy(myqp[i].gid, ni.gid, 16);
		myqp[i].qpn = 0x100 + (uint32_t)i;	/* nobody there: fine */
		myqp[i].psn = 1;
		myqp[i].mtu = 3;			/* IBV_MTU_1024 */
		myqp[i].active = 1;
	}
	tap_plan(32);

	bad_hello("a wrong magic", s_magic);
	bad_hello("a version from the future", s_version);
	bad_hello("another listener's nonce", s_nonce);
	bad_hello("0 rails", s_rails0);
	bad_hello("17 rails", s_rails17);
	bad_hello("a length short of its rails", s_short);
	bad_hello("a 1-byte chunk size", s_chunk);
	bad_hello("MTU 0 on a rail", s_mtu);
	bad_header("message type 0", 0, sizeof(struct hello2), 0);
	bad_header("message type 99", 99, sizeof(struct hello2), 0);
	bad_header("a 2 MiB length", W_HELLO, 2u << 20, 0);
	bad_header("a non-zero reserved field", W_HELLO, sizeof(struct hello2), 1);
	bad_header("a receive announcement before hello", W_CTS,
		   sizeof(struct hello2), 0);

	fd = raw_connect();
	hello = good_hello();
	if (send(fd, &hello, 5, MSG_NOSIGNAL) != 5)
		tap_diag("send failed");
	close(fd);
	ret = outcome(NULL, 10);
	tap_ok(ret == -ECONNRESET, "a peer that hangs up mid-header -> -ECONNRESET (%d)",
	       ret);

	bad_after("a receive announcement sent to the receiver", W_CTS, &cts,
		  sizeof(cts));
	bad_after("data for a receive that is not open", W_DATA, &d, sizeof(d));
	d.len = 10;
	bad_after("data whose length lies", W_DATA, &d, sizeof(d));
	bad_after("rail 99 down", W_RAIL_DOWN, &rd, sizeof(rd));
	bad_after("a 8-byte fence report", W_FENCED, fenced, sizeof(fenced));
	bad_after("NIC state of rail 5", W_NIC, &wn, sizeof(wn));
	bad_after("an error for a message never announced", W_MSG_ERR, &me,
		  sizeof(me));
	bad_after("a receive credit sent to the receiver", W_CREDIT, &cr,
		  sizeof(cr));
	peer_version = WIRE_VERSION_MIN;
	fd = ready(&c);
	tap_ok(fd >= 0, "a peer of wire version %u (no stall questions) is taken",
	       WIRE_VERSION_MIN);
	if (fd >= 0) {
		r2cc_conn_close(c);
		close(fd);
	}
	peer_version = WIRE_VERSION;
	bad_after("a stall answer sent to the receiver", W_RAIL_SEEN, &seen,
		  sizeof(seen));
	ask.reserved = 1;
	bad_after("a stall question with its reserved field set", W_RAIL_ASK,
		  &ask, sizeof(ask));
	ask.reserved = 0;
	ask.rail = 9;
	bad_after("a stall question about rail 9", W_RAIL_ASK, &ask,
		  sizeof(ask));
	ask.rail = 0;
	bad_after("a 12-byte stall question", W_RAIL_ASK, &ask, 12);
	hello = good_hello();
	bad_after("a second hello", W_HELLO, &hello, (uint32_t)hello_len(&hello));

	data_path();
	r2cc_listener_close(lst);
	r2cc_ctx_destroy(ctx);
	return tap_done();
}
