// SPDX-License-Identifier: GPL-2.0-only
/*
 * The transport API against misuse, in one process that connects to
 * itself over every rail of its node: NULL, zero lengths, unregistered
 * and partially registered memory, oversize messages, tags that match
 * nothing, requests and connections used after they are gone, double
 * close.  Each gets a clear error and nothing else breaks: the
 * connection still carries a checked message at the end.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <r2cc/r2cc.h>

#include "tap.h"

#define BUF (1 << 20)

static struct r2cc_ctx *ctx;

/* Drive @q to its end; returns its result, -ETIMEDOUT after ~20 s. */
static int finish(struct r2cc_req *q, size_t *sizes)
{
	int done = 0, ret, i;

	for (i = 0; i < 2000000; i++) {
		ret = r2cc_test(q, &done, sizes);
		if (ret || done)
			return ret;
		if (i > 1000)
			usleep(10);
	}
	return -ETIMEDOUT;
}

static int connect_self(struct r2cc_conn **tx, struct r2cc_conn **rx)
{
	struct r2cc_listener *l;
	struct r2cc_handle h;
	int ret, i, a = 0, b = 0;

	ret = r2cc_listen(ctx, &h, &l);
	if (ret)
		return ret;
	ret = r2cc_connect(ctx, &h, tx);
	for (i = 0; !ret && i < 200000; i++) {
		ret = r2cc_accept(l, rx);
		if (ret != -EAGAIN)
			break;
		r2cc_progress(ctx);
	}
	for (i = 0; !ret && i < 2000000 && (a != 1 || b != 1); i++) {
		a = r2cc_conn_ready(*tx);
		b = r2cc_conn_ready(*rx);
		if (a < 0 || b < 0)
			ret = a < 0 ? a : b;
	}
	r2cc_listener_close(l);
	return ret ? ret : (a == 1 && b == 1 ? 0 : -ETIMEDOUT);
}

static void memory(uint8_t *buf, struct r2cc_mr **mr)
{
	struct r2cc_mr *m = (void *)1;
	int memfd;

	tap_ok(r2cc_mr_reg(NULL, buf, BUF, 0, &m) == -EINVAL && !m,
	       "mr_reg: NULL context -> -EINVAL, *mr cleared");
	tap_ok(r2cc_mr_reg(ctx, NULL, BUF, 0, &m) == -EINVAL,
	       "mr_reg: NULL address -> -EINVAL");
	tap_ok(r2cc_mr_reg(ctx, buf, 0, 0, &m) == -EINVAL,
	       "mr_reg: zero length -> -EINVAL");
	tap_ok(r2cc_mr_reg(ctx, buf, BUF, 1u << 31, &m) == -EINVAL,
	       "mr_reg: unknown flag -> -EINVAL");
	tap_ok(r2cc_mr_reg(ctx, buf, BUF, R2CC_MR_CUDA, &m) < 0 && !m,
	       "mr_reg: host memory as CUDA memory, no GPU -> refused");
	tap_ok(r2cc_mr_reg(ctx, buf, SIZE_MAX, 0, &m) == -EINVAL,
	       "mr_reg: range wrapping the address space -> -EINVAL");
	tap_ok(r2cc_mr_reg(ctx, buf, BUF, 0, NULL) == -EINVAL,
	       "mr_reg: NULL result -> -EINVAL");
	tap_ok(r2cc_mr_reg_dmabuf(ctx, buf, BUF, 0, -1, 0, &m) == -EINVAL,
	       "mr_reg_dmabuf: fd -1 -> -EINVAL");
	memfd = memfd_create("not-a-dmabuf", 0);
	tap_ok(memfd >= 0 && !ftruncate(memfd, BUF) &&
	       r2cc_mr_reg_dmabuf(ctx, buf, BUF, 0, memfd, 0, &m) < 0 && !m,
	       "mr_reg_dmabuf: a file that is not a DMA-BUF is refused");
	close(memfd);
	tap_ok(r2cc_mr_dereg(NULL) == -EINVAL, "mr_dereg: NULL -> -EINVAL");
	tap_ok(r2cc_mr_reg(ctx, buf, BUF, 0, &m) == 0, "mr_reg: 1 MiB");
	tap_ok(r2cc_mr_dereg(m) == 0, "mr_dereg");
	tap_ok(r2cc_mr_dereg(m) == -EBADF, "mr_dereg twice -> -EBADF");
	tap_ok(r2cc_mr_reg(ctx, buf, BUF / 2, 0, mr) == 0,
	       "mr_reg: the first half of the buffer");
}

static void connections(struct r2cc_listener **lp)
{
	struct r2cc_handle h, bad;
	struct r2cc_conn *c = (void *)1;

	tap_ok(r2cc_listen(ctx, NULL, lp) == -EINVAL,
	       "listen: NULL handle -> -EINVAL");
	tap_ok(r2cc_listen(ctx, &h, lp) == 0, "listen");
	memset(&bad, 0, sizeof(bad));
	tap_ok(r2cc_connect(ctx, &bad, &c) == -EINVAL && !c,
	       "connect: zeroed handle -> -EINVAL");
	memset(&bad, 0xa5, sizeof(bad));
	tap_ok(r2cc_connect(ctx, &bad, &c) == -EINVAL,
	       "connect: garbage handle -> -EINVAL");
	tap_ok(r2cc_connect(NULL, &h, &c) == -EINVAL,
	       "connect: NULL context -> -EINVAL");
	tap_ok(r2cc_accept(*lp, &c) == -EAGAIN,
	       "accept: nobody connecting -> -EAGAIN");
	tap_ok(r2cc_accept(NULL, &c) == -EINVAL, "accept: NULL -> -EINVAL");
	tap_ok(r2cc_conn_ready(NULL) == -EINVAL, "conn_ready: NULL -> -EINVAL");
	tap_ok(r2cc_listener_close(*lp) == 0, "listener_close");
	tap_ok(r2cc_listener_close(*lp) == -EBADF,
	       "listener_close twice -> -EBADF");
	tap_ok(r2cc_accept(*lp, &c) == -EBADF,
	       "accept on a closed listener -> -EBADF");
}

static void misuse(struct r2cc_conn *tx, struct r2cc_conn *rx,
		   struct r2cc_mr *mr, uint8_t *buf)
{
	uint8_t stray[64];
	struct r2cc_req *q = (void *)1;
	void *bp = buf;
	size_t len = 4096;
	uint32_t tag = 0;
	struct r2cc_conn_stats st = { .size = 1 };
	int done;

	tap_ok(r2cc_isend(NULL, mr, buf, 10, 0, &q) == -EINVAL && !q,
	       "isend: NULL connection -> -EINVAL, *req cleared");
	tap_ok(r2cc_isend(tx, mr, NULL, 10, 0, &q) == -EINVAL,
	       "isend: NULL buffer -> -EINVAL");
	tap_ok(r2cc_isend(tx, NULL, buf, 10, 0, &q) == -EINVAL,
	       "isend: no memory region -> -EINVAL");
	tap_ok(r2cc_isend(tx, mr, stray, sizeof(stray), 0, &q) == -EINVAL,
	       "isend: unregistered memory -> -EINVAL");
	tap_ok(r2cc_isend(tx, mr, buf + BUF / 2 - 100, 200, 0, &q) == -EINVAL,
	       "isend: partially registered memory -> -EINVAL");
	tap_ok(r2cc_isend(tx, mr, buf, SIZE_MAX, 0, &q) == -EINVAL,
	       "isend: SIZE_MAX bytes -> -EINVAL");
	tap_ok(r2cc_isend(tx, mr, buf, 10, 0, NULL) == -EINVAL,
	       "isend: NULL request -> -EINVAL");
	tap_ok(r2cc_isend(rx, mr, buf, 10, 0, &q) == -EOPNOTSUPP,
	       "isend on the receiving end -> -EOPNOTSUPP");
	tap_ok(r2cc_irecv(tx, 1, &bp, &len, &tag, &mr, &q) == -EOPNOTSUPP,
	       "irecv on the sending end -> -EOPNOTSUPP");
	tap_ok(r2cc_irecv(rx, 0, &bp, &len, &tag, &mr, &q) == -EINVAL,
	       "irecv: 0 buffers -> -EINVAL");
	tap_ok(r2cc_irecv(rx, R2CC_MAX_RECVS + 1, &bp, &len, &tag, &mr, &q) ==
	       -EINVAL, "irecv: more than R2CC_MAX_RECVS -> -EINVAL");
	tap_ok(r2cc_irecv(rx, 1, NULL, &len, &tag, &mr, &q) == -EINVAL,
	       "irecv: NULL buffer array -> -EINVAL");
	bp = stray;
	tap_ok(r2cc_irecv(rx, 1, &bp, &len, &tag, &mr, &q) == -EINVAL,
	       "irecv: unregistered buffer -> -EINVAL");
	bp = buf;
	len = BUF;
	tap_ok(r2cc_irecv(rx, 1, &bp, &len, &tag, &mr, &q) == -EINVAL,
	       "irecv: buffer larger than its region -> -EINVAL");
	tap_ok(r2cc_test(NULL, &done, NULL) == -EINVAL, "test: NULL -> -EINVAL");
	tap_ok(r2cc_conn_stats(tx, &st, NULL, 0) == -EINVAL,
	       "conn_stats: wrong size -> -EINVAL");
}

/* A send larger than the receive buffer fails at both ends. */
static void oversize(struct r2cc_conn *tx, struct r2cc_conn *rx,
		     struct r2cc_mr *mr, uint8_t *buf)
{
	struct r2cc_req *s, *r;
	void *bp = buf;
	size_t len = 1000, got = 0;
	uint32_t tag = 1;

	tap_ok(r2cc_irecv(rx, 1, &bp, &len, &tag, &mr, &r) == 0 &&
	       r2cc_isend(tx, mr, buf + 4096, 2000, 1, &s) == 0,
	       "2000-byte send into a 1000-byte receive: posted");
	tap_ok(finish(s, NULL) == -EMSGSIZE, "the send fails with -EMSGSIZE");
	tap_ok(finish(r, &got) == -EMSGSIZE, "the receive fails with -EMSGSIZE");
	tap_ok(r2cc_test(s, &(int){ 0 }, NULL) == -EBADF,
	       "testing a finished request again -> -EBADF");
}

/* A grouped receive: sends land by tag, whatever their order. */
static void grouped(struct r2cc_conn *tx, struct r2cc_conn *rx,
		    struct r2cc_mr *mr, uint8_t *buf)
{
	void *bufs[3] = { buf, buf + 8192, buf + 16384 };
	size_t lens[3] = { 4096, 4096, 0 }, sizes[3] = { 9, 9, 9 };
	uint32_t tags[3] = { 7, 8, 9 };
	struct r2cc_mr *mrs[3] = { mr, mr, NULL };
	struct r2cc_req *r, *s[3];
	uint8_t *src = buf + 65536;
	int ok = 1, i;

	memset(buf, 0, 32768);
	memset(src, 0xb8, 4096);
	memset(src + 4096, 0xb7, 4096);
	tap_ok(r2cc_irecv(rx, 3, bufs, lens, tags, mrs, &r) == 0,
	       "grouped receive of 3 (tags 7, 8, 9; the last zero-length)");
	ok &= !r2cc_isend(tx, NULL, NULL, 0, 9, &s[0]);
	ok &= !r2cc_isend(tx, mr, src, 4096, 8, &s[1]);
	ok &= !r2cc_isend(tx, mr, src + 4096, 3000, 7, &s[2]);
	tap_ok(ok, "sends with tags 9, 8, 7 posted");
	for (i = 0; i < 3; i++)
		ok &= !finish(s[i], NULL);
	ok &= !finish(r, sizes);
	tap_ok(ok, "all four requests complete");
	tap_ok(sizes[0] == 3000 && sizes[1] == 4096 && sizes[2] == 0,
	       "sizes by tag: %zu %zu %zu", sizes[0], sizes[1], sizes[2]);
	tap_ok(buf[0] == 0xb7 && buf[2999] == 0xb7 && buf[3000] == 0 &&
	       buf[8192] == 0xb8 && buf[8192 + 4095] == 0xb8,
	       "each message in the buffer of its tag, nothing past its end");
	tap_ok(r2cc_irecv(rx, 1, bufs, lens, tags, mrs, &r) == 0 &&
	       r2cc_isend(tx, mr, src, 10, 5, &s[0]) == 0 &&
	       finish(s[0], NULL) == -ENOMSG,
	       "a send whose tag no posted receive has -> -ENOMSG");
	/* The receive is still open: a matching send completes it. */
	tap_ok(r2cc_isend(tx, mr, src, 10, 7, &s[0]) == 0 &&
	       !finish(s[0], NULL) && !finish(r, NULL),
	       "the receive then takes the next send with its tag");
}

static void busy_and_close(struct r2cc_conn *tx, struct r2cc_conn *rx,
			   struct r2cc_mr *mr, uint8_t *buf)
{
	struct r2cc_req *r[33], *first;
	void *bp = buf;
	size_t len = 64;
	uint32_t tag = 0;
	int i, ret = 0;

	for (i = 0; i < 32 && !ret; i++)
		ret = r2cc_irecv(rx, 1, &bp, &len, &tag, &mr, &r[i]);
	tap_ok(!ret && r2cc_irecv(rx, 1, &bp, &len, &tag, &mr, &r[32]) ==
	       -EAGAIN, "33rd open receive -> -EAGAIN");
	tap_ok(r2cc_mr_dereg(mr) == -EBUSY,
	       "mr_dereg while receives use it -> -EBUSY");
	first = r[0];
	tap_ok(r2cc_conn_close(rx) == 0,
	       "closing with 32 receives open frees them");
	tap_ok(r2cc_irecv(rx, 1, &bp, &len, &tag, &mr, &r[0]) == -EBADF,
	       "irecv on a closed connection -> -EBADF");
	tap_ok(r2cc_conn_close(rx) == -EBADF, "conn_close twice -> -EBADF");
	tap_ok(r2cc_test(first, &i, NULL) == -EBADF,
	       "a request freed by the close -> -EBADF");
	tap_ok(r2cc_mr_dereg(mr) == 0, "mr_dereg once nothing uses it");
	(void)tx;
}

int main(void)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o), .ctrl_ifname = "lo" };
	struct r2cc_conn *tx = NULL, *rx = NULL;
	struct r2cc_listener *l;
	struct r2cc_mr *mr;
	uint8_t *buf;
	int ret;

	if (r2cc_ctx_create(&o, &ctx))
		tap_skip_all("no RDMA device");
	tap_plan(68);
	buf = aligned_alloc(4096, BUF);
	memory(buf, &mr);
	connections(&l);
	ret = connect_self(&tx, &rx);
	tap_ok(!ret, "connected to itself over every rail (%d)", ret);
	if (ret)
		return tap_done();
	misuse(tx, rx, mr, buf);
	oversize(tx, rx, mr, buf);
	grouped(tx, rx, mr, buf);
	busy_and_close(tx, rx, mr, buf);
	tap_ok(r2cc_conn_close(tx) == 0, "the sending end closes");
	tap_ok(r2cc_isend(tx, NULL, NULL, 0, 0, &(struct r2cc_req *){ 0 }) ==
	       -EBADF, "isend after close -> -EBADF");
	tap_ok(r2cc_mr_reg(ctx, buf, BUF, 0, &mr) == 0, "another region");
	tap_ok(r2cc_ctx_destroy(ctx) == -EBUSY,
	       "ctx_destroy while a region remains -> -EBUSY");
	tap_ok(r2cc_mr_dereg(mr) == 0, "the region still deregisters after it");
	tap_ok(r2cc_ctx_destroy(ctx) == 0,
	       "ctx_destroy once nothing refers to it");
	tap_ok(r2cc_ctx_destroy(ctx) == -EBADF, "ctx_destroy twice -> -EBADF");
	tap_ok(r2cc_mr_reg(ctx, buf, BUF, 0, &mr) == -EBADF,
	       "mr_reg on a destroyed context -> -EBADF");
	free(buf);
	return tap_done();
}
