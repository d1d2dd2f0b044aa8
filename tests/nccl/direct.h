/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The harness's traffic straight on libr2cc, for the benchmark: a table of
 * the v9 shape whose calls are libr2cc's own, with what the plugin does
 * kept to the least the harness needs (a pointer kept in the handle while
 * connecting, a request wrapper from a free list for the send size).  The
 * connections are made as the plugin's: the context's NIC 0 is the
 * primary, the others standbys (R2CC_NCCL_MODE=stripe: all primaries).
 * Test code: it trusts its caller.
 */
#ifndef R2CC_TESTS_NCCL_DIRECT_H
#define R2CC_TESTS_NCCL_DIRECT_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <r2cc/r2cc.h>

#include "abi.h"

static struct r2cc_ctx *dctx;

struct dlisten {
	struct r2cc_listener *l;
	struct r2cc_conn *pending;
};

struct dreq {
	struct r2cc_req *r;
	int n, size;
	int next;
};

#define DREQS 1024
static struct dreq dreqs[DREQS];
static int dfree = -1;

static nn_result_t d9_init(nn_logger_t log)
{
	int i;

	(void)log;
	for (i = 0; i < DREQS; i++)
		dreqs[i].next = i + 1 < DREQS ? i + 1 : -1;
	dfree = 0;
	return dctx || !r2cc_ctx_create(NULL, &dctx) ? NN_SUCCESS :
						   NN_SYSTEM_ERROR;
}

static nn_result_t d9_devices(int *n)
{
	*n = r2cc_nic_count(dctx);
	return NN_SUCCESS;
}

static nn_result_t d9_listen(int dev, void *handle, void **lc)
{
	struct dlisten *l = calloc(1, sizeof(*l));

	(void)dev;
	if (!l || r2cc_listen(dctx, handle, &l->l)) {
		free(l);
		return NN_SYSTEM_ERROR;
	}
	*lc = l;
	return NN_SUCCESS;
}

/* The connection in progress is kept past libr2cc's 64 handle bytes. */
static nn_result_t d9_connect(int dev, void *handle, void **sc,
			      struct nn_dev_handle **dh)
{
	const char *mode = getenv("R2CC_NCCL_MODE");
	struct r2cc_conn_opts o = {
		.size = sizeof(o),
		.primary = mode && !strcmp(mode, "stripe") ? 0 : 1,
	};
	struct r2cc_conn *c;
	char *stage = (char *)handle + R2CC_HANDLE_SIZE;
	int ret;

	(void)dev;
	(void)dh;
	*sc = NULL;
	memcpy(&c, stage, sizeof(c));
	if (!c) {
		if (r2cc_connect_opts(dctx, handle, &o, &c))
			return NN_SYSTEM_ERROR;
		memcpy(stage, &c, sizeof(c));
	}
	ret = r2cc_conn_ready(c);
	if (ret < 0)
		return NN_SYSTEM_ERROR;
	if (ret)
		*sc = c;
	return NN_SUCCESS;
}

static nn_result_t d9_accept(void *lc, void **rc, struct nn_dev_handle **dh)
{
	struct dlisten *l = lc;
	int ret;

	(void)dh;
	*rc = NULL;
	if (!l->pending) {
		ret = r2cc_accept(l->l, &l->pending);
		if (ret == -EAGAIN)
			return NN_SUCCESS;
		if (ret)
			return NN_SYSTEM_ERROR;
	}
	ret = r2cc_conn_ready(l->pending);
	if (ret < 0)
		return NN_SYSTEM_ERROR;
	if (ret) {
		*rc = l->pending;
		l->pending = NULL;
	}
	return NN_SUCCESS;
}

static nn_result_t d9_reg_mr(void *comm, void *data, size_t size, int type,
			     void **mh)
{
	(void)comm;
	(void)type;
	return r2cc_mr_reg(dctx, data, size, 0, (struct r2cc_mr **)mh) ?
	       NN_SYSTEM_ERROR : NN_SUCCESS;
}

static nn_result_t d9_dereg_mr(void *comm, void *mh)
{
	(void)comm;
	return r2cc_mr_dereg(mh) ? NN_SYSTEM_ERROR : NN_SUCCESS;
}

static struct dreq *dreq_take(void)
{
	struct dreq *q;

	if (dfree < 0)
		return NULL;
	q = &dreqs[dfree];
	dfree = q->next;
	return q;
}

static void dreq_put(struct dreq *q)
{
	q->next = dfree;
	dfree = (int)(q - dreqs);
}

static nn_result_t d9_isend(void *sc, void *data, size_t size, int tag,
			    void *mh, void **req)
{
	struct dreq *q = dreq_take();

	*req = NULL;
	if (!q)
		return NN_SUCCESS;
	if (r2cc_isend(sc, mh, data, size, (uint32_t)tag, &q->r)) {
		dreq_put(q);
		return NN_SYSTEM_ERROR;
	}
	q->n = 1;
	q->size = (int)size;
	*req = q;
	return NN_SUCCESS;
}

static nn_result_t d9_irecv(void *rc, int n, void **data, size_t *sizes,
			    int *tags, void **mhs, void **req)
{
	struct dreq *q = dreq_take();
	uint32_t t[R2CC_MAX_RECVS];
	int i, ret;

	*req = NULL;
	if (!q)
		return NN_SUCCESS;
	for (i = 0; i < n; i++)
		t[i] = (uint32_t)tags[i];
	ret = r2cc_irecv(rc, n, data, sizes, t, (struct r2cc_mr *const *)mhs,
			 &q->r);
	if (ret) {
		dreq_put(q);
		return ret == -EAGAIN ? NN_SUCCESS : NN_SYSTEM_ERROR;
	}
	q->n = n;
	q->size = -1;
	*req = q;
	return NN_SUCCESS;
}

static nn_result_t d9_test(void *req, int *done, int *sizes)
{
	struct dreq *q = req;
	size_t got[R2CC_MAX_RECVS];
	int i;

	*done = 0;
	if (r2cc_test(q->r, done, got)) {
		dreq_put(q);
		return NN_SYSTEM_ERROR;
	}
	if (*done) {
		for (i = 0; sizes && i < q->n; i++)
			sizes[i] = q->size >= 0 ? q->size : (int)got[i];
		dreq_put(q);
	}
	return NN_SUCCESS;
}

static nn_result_t d9_close_conn(void *c)
{
	return r2cc_conn_close(c) ? NN_SYSTEM_ERROR : NN_SUCCESS;
}

static nn_result_t d9_close_listen(void *lc)
{
	struct dlisten *l = lc;

	if (l->pending)
		r2cc_conn_close(l->pending);
	r2cc_listener_close(l->l);
	free(l);
	return NN_SUCCESS;
}

static const struct nn_net_v9 direct_table = {
	.name = "r2cc",
	.init = d9_init,
	.devices = d9_devices,
	.listen = d9_listen,
	.connect = d9_connect,
	.accept = d9_accept,
	.reg_mr = d9_reg_mr,
	.dereg_mr = d9_dereg_mr,
	.isend = d9_isend,
	.irecv = d9_irecv,
	.test = d9_test,
	.close_send = d9_close_conn,
	.close_recv = d9_close_conn,
	.close_listen = d9_close_listen,
};

/* After the run: the context goes too. */
static void direct_done(void)
{
	if (dctx && !r2cc_ctx_destroy(dctx))
		dctx = NULL;
}

#endif /* R2CC_TESTS_NCCL_DIRECT_H */
