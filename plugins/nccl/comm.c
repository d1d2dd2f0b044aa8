// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Comms and requests.  A send comm is a libr2cc connection made by
 * connect, a receive comm one taken by accept; both are one-way, as
 * NCCL's are.  Nothing blocks: connect and accept hand NCCL a NULL comm
 * until every rail is connected, and isend/irecv a NULL request when the
 * comm has no room (NCCL calls again).  The state of a connect in
 * progress lives in NCCL's handle, which NCCL passes again on every call;
 * the pointer kept there is looked up before use, so a stale or garbage
 * handle is an error, not a wild pointer.
 */
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin.h"

#define HANDLE_MAGIC	0x6e326363u
#define MAGIC_LISTEN	0x72326c69u
#define MAGIC_SEND	0x72327364u
#define MAGIC_RECV	0x72327263u
#define MAX_RAILS	16
#define LOOK_NS		(100ull * 1000000)	/* rail news at most this often */

/* What listen writes into NCCL's handle. */
struct nn_handle {
	uint32_t magic;
	int32_t dev;			/* the listener's, for logs */
	struct r2cc_handle h;
	uint64_t stage;			/* connector: its comm in progress */
};
_Static_assert(sizeof(struct nn_handle) <= NN_HANDLE_MAXSIZE,
	       "the handle fits NCCL's");

struct nn_comm;

struct nn_req {
	struct nn_comm *comm;
	struct r2cc_req *r;
	int n;				/* messages */
	int size;			/* send: bytes */
	int next_free;
};

struct nn_comm {
	uint32_t magic;
	int dev;
	struct nn_dev *d;
	struct r2cc_conn *conn;
	struct r2cc_listener *l;	/* listen comm */
	struct nn_comm *pending;	/* listen comm: accepted, not ready */
	struct nn_comm *next;		/* every comm, for lookups */
	int free_head;
	int nreqs;
	struct nn_req *reqs;
	uint64_t look_ns;
	int nrails;
	uint8_t rail_state[MAX_RAILS];
	uint64_t rail_failures[MAX_RAILS];	/* as of the last look */
	uint64_t rail_failbacks[MAX_RAILS];
};

static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static struct nn_comm *comms;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static struct nn_comm *comm_new(uint32_t magic, int dev, struct nn_dev *d,
				int nreqs)
{
	struct nn_comm *c = calloc(1, sizeof(*c));
	int i;

	if (!c)
		return NULL;
	if (nreqs) {
		c->reqs = calloc((size_t)nreqs, sizeof(*c->reqs));
		if (!c->reqs) {
			free(c);
			return NULL;
		}
		for (i = 0; i < nreqs; i++)
			c->reqs[i].next_free = i + 1 < nreqs ? i + 1 : -1;
	}
	c->free_head = nreqs ? 0 : -1;
	c->nreqs = nreqs;
	c->magic = magic;
	c->dev = dev;
	c->d = d;
	nn_dev_comm_opened();
	pthread_mutex_lock(&cmu);
	c->next = comms;
	comms = c;
	pthread_mutex_unlock(&cmu);
	return c;
}

/* @p is a live comm of kind @magic (setup paths only: it walks a list). */
static struct nn_comm *comm_lookup(const void *p, uint32_t magic)
{
	struct nn_comm *c;

	pthread_mutex_lock(&cmu);
	for (c = comms; c && (c != p || c->magic != magic); c = c->next)
		;
	pthread_mutex_unlock(&cmu);
	return c;
}

static void comm_free(struct nn_comm *c)
{
	struct nn_comm **pp;

	if (c->conn)
		r2cc_conn_close(c->conn);
	if (c->l)
		r2cc_listener_close(c->l);
	pthread_mutex_lock(&cmu);
	for (pp = &comms; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	pthread_mutex_unlock(&cmu);
	nn_dev_comm_closed();
	c->magic = 0;
	free(c->reqs);
	free(c);
}

static const char *rail_state_name(int s)
{
	static const char *const n[] = { "connecting", "up", "down", "probing" };

	return s >= 0 && s < 4 ? n[s] : "?";
}

/*
 * A rail's path since the last look, e.g. "up -> down -> up": the failures
 * and failbacks counted in between say what a sampled state would miss (a
 * comm NCCL does not test for a while, a fault shorter than LOOK_NS).
 */
static void rail_path(char *buf, size_t len, int was, int now,
		      uint64_t nfail, uint64_t nback)
{
	int last = was, off;

	off = snprintf(buf, len, "%s", rail_state_name(was));
	if (nfail && last != R2CC_RAIL_DOWN) {
		off += snprintf(buf + off, len - off, " -> down");
		last = R2CC_RAIL_DOWN;
	}
	if (nback && last != R2CC_RAIL_UP) {
		off += snprintf(buf + off, len - off, " -> up");
		last = R2CC_RAIL_UP;
	}
	if (now != last)
		off += snprintf(buf + off, len - off, " -> %s",
				rail_state_name(now));
	if (nfail > 1 || nback > 1)
		snprintf(buf + off, len - off,
			 " (%llu failures, %llu failbacks since the last look)",
			 (unsigned long long)nfail, (unsigned long long)nback);
}

/* One rail's news since the last look, and with @all what it carried. */
static void tell_rail(struct nn_comm *c, int i, const struct r2cc_rail_stats *rs,
		      bool all)
{
	struct r2cc_nic_info ni = { .size = sizeof(ni) };
	const char *kind = c->magic == MAGIC_SEND ? "send" : "recv";
	bool known = i < c->nrails;
	uint64_t nfail = known ? rs->failures - c->rail_failures[i] : 0;
	uint64_t nback = known ? rs->failbacks - c->rail_failbacks[i] : 0;
	bool changed = known && (rs->state != c->rail_state[i] || nfail || nback);
	char path[160];

	if (!changed && !all)
		return;
	if (r2cc_nic_info(c->d->ctx, rs->nic, &ni))
		ni.dev_name[0] = '\0';
	if (changed) {
		rail_path(path, sizeof(path), c->rail_state[i], rs->state,
			  nfail, nback);
		NN_INFO("dev %d %s comm %p: rail %d (%s:%u%s) %s",
			c->dev, kind, (void *)c, i, ni.dev_name, ni.port,
			rs->standby ? ", standby" : "", path);
	}
	if (all)
		NN_INFO("dev %d %s comm %p closed: rail %d (%s:%u%s) %s bytes %llu failures %llu failbacks %llu",
			c->dev, kind, (void *)c, i, ni.dev_name, ni.port,
			rs->standby ? ", standby" : "",
			rail_state_name(rs->state),
			(unsigned long long)rs->bytes,
			(unsigned long long)rs->failures,
			(unsigned long long)rs->failbacks);
}

/*
 * Rail news, in NCCL's log: a rail going down or coming back, looked at
 * from test() at most every LOOK_NS, or at once with @all (close), when
 * each rail's bytes are told too.  Every look is recorded, the first one
 * (at connect) too: it is what the next compares with.
 */
static void look_rails(struct nn_comm *c, bool all)
{
	struct r2cc_rail_stats rs[MAX_RAILS] = { { .size = sizeof(rs[0]) } };
	struct r2cc_conn_stats cs = { .size = sizeof(cs) };
	const char *kind = c->magic == MAGIC_SEND ? "send" : "recv";
	int i, n;

	n = r2cc_conn_stats(c->conn, &cs, rs, MAX_RAILS);
	if (n < 0)
		return;
	if (n > MAX_RAILS)
		n = MAX_RAILS;
	for (i = 0; i < n; i++) {
		tell_rail(c, i, &rs[i], all);
		c->rail_state[i] = rs[i].state;
		c->rail_failures[i] = rs[i].failures;
		c->rail_failbacks[i] = rs[i].failbacks;
	}
	c->nrails = n;
	if (all)
		NN_INFO("dev %d %s comm %p closed: %llu messages, %llu bytes, %llu re-sent, %llu over TCP, %llu failovers, repair max %.3f ms, %llu chunks completed twice",
			c->dev, kind, (void *)c, (unsigned long long)cs.msgs,
			(unsigned long long)cs.bytes,
			(unsigned long long)cs.resent_bytes,
			(unsigned long long)cs.tcp_bytes,
			(unsigned long long)cs.failovers,
			cs.repair_ns_max / 1e6,
			(unsigned long long)cs.dup_chunks);
}

nn_result_t nn_listen(int dev, void *handle, void **out)
{
	struct nn_handle *h = handle;
	struct nn_comm *c;
	struct nn_dev *d;
	int ret;

	if (out)
		*out = NULL;
	if (!h || !out)
		return NN_INVALID_ARGUMENT;
	d = nn_dev_get(dev);
	if (!d)
		return NN_INVALID_ARGUMENT;
	c = comm_new(MAGIC_LISTEN, dev, d, 0);
	if (!c)
		return NN_SYSTEM_ERROR;
	memset(h, 0, sizeof(*h));
	ret = r2cc_listen(d->ctx, &h->h, &c->l);
	if (ret) {
		comm_free(c);
		NN_WARN("listen on device %d: %s", dev, strerror(-ret));
		return nn_errno(ret);
	}
	h->magic = HANDLE_MAGIC;
	h->dev = dev;
	*out = c;
	return NN_SUCCESS;
}

/* A connection that reached ready, or failed: 1, 0 not yet, or an error. */
static int conn_ready(struct nn_comm *c, const char *what)
{
	int ret = r2cc_conn_ready(c->conn);

	if (ret < 0)
		NN_WARN("dev %d: %s failed: %s", c->dev, what, strerror(-ret));
	else if (ret)
		look_rails(c, false);
	return ret;
}

nn_result_t nn_connect(int dev, void *handle, void **out)
{
	struct nn_handle *h = handle;
	struct nn_comm *c;
	int ret;

	if (out)
		*out = NULL;
	if (!h || !out || h->magic != HANDLE_MAGIC) {
		NN_WARN("connect: %s", !h || !out ? "NULL argument" :
			"not a handle of this plugin");
		return NN_INVALID_ARGUMENT;
	}
	if (!h->stage) {
		struct nn_dev *d = nn_dev_get(dev);
		struct r2cc_conn_opts o = { .size = sizeof(o) };

		if (!d)
			return NN_INVALID_ARGUMENT;
		c = comm_new(MAGIC_SEND, dev, d, NN_MAX_REQUESTS * R2CC_MAX_RECVS);
		if (!c)
			return NN_SYSTEM_ERROR;
		o.primary = nn_dev_primary(d);
		ret = r2cc_connect_opts(d->ctx, &h->h, &o, &c->conn);
		if (ret) {
			comm_free(c);
			NN_WARN("connect on device %d: %s", dev, strerror(-ret));
			return nn_errno(ret);
		}
		h->stage = (uintptr_t)c;
	}
	c = comm_lookup((void *)(uintptr_t)h->stage, MAGIC_SEND);
	if (!c) {
		NN_WARN("connect: the handle's connection is not in progress");
		return NN_INVALID_ARGUMENT;
	}
	ret = conn_ready(c, "connect");
	if (ret <= 0) {
		if (ret < 0) {
			h->stage = 0;
			comm_free(c);
		}
		return nn_errno(ret);
	}
	h->stage = 0;
	*out = c;
	return NN_SUCCESS;
}

nn_result_t nn_accept(void *lcomm, void **out)
{
	struct nn_comm *l = lcomm, *c;
	struct r2cc_conn *conn;
	int ret;

	if (out)
		*out = NULL;
	if (!l || !out || l->magic != MAGIC_LISTEN)
		return NN_INVALID_ARGUMENT;
	if (!l->pending) {
		ret = r2cc_accept(l->l, &conn);
		if (ret == -EAGAIN)
			return NN_SUCCESS;
		if (ret) {
			NN_WARN("accept on device %d: %s", l->dev, strerror(-ret));
			return nn_errno(ret);
		}
		c = comm_new(MAGIC_RECV, l->dev, l->d, NN_MAX_REQUESTS);
		if (!c) {
			r2cc_conn_close(conn);
			return NN_SYSTEM_ERROR;
		}
		c->conn = conn;
		l->pending = c;
	}
	ret = conn_ready(l->pending, "accept");
	if (ret <= 0) {
		if (ret < 0) {
			comm_free(l->pending);
			l->pending = NULL;
		}
		return nn_errno(ret);
	}
	*out = l->pending;
	l->pending = NULL;
	return NN_SUCCESS;
}

static struct nn_comm *data_comm(void *comm)
{
	struct nn_comm *c = comm;

	return c && (c->magic == MAGIC_SEND || c->magic == MAGIC_RECV) ? c : NULL;
}

/* regMr, and regMrDmaBuf (@dmabuf): memory on every NIC of the device. */
static nn_result_t reg(void *comm, void *data, size_t size, int type,
		       bool dmabuf, uint64_t offset, int fd, void **mh)
{
	struct nn_comm *c = data_comm(comm);
	uint32_t flags = type == NN_PTR_CUDA ? R2CC_MR_CUDA : 0;
	struct r2cc_mr *mr;
	int ret;

	if (mh)
		*mh = NULL;
	if (!c || !mh || (type != NN_PTR_HOST && type != NN_PTR_CUDA))
		return NN_INVALID_ARGUMENT;
	ret = dmabuf ? r2cc_mr_reg_dmabuf(c->d->ctx, data, size, offset, fd,
					  flags, &mr) :
		       r2cc_mr_reg(c->d->ctx, data, size, flags, &mr);
	if (ret) {
		NN_WARN("%s %p + %zu (%s, DMA-BUF fd %d): %s",
			dmabuf ? "regMrDmaBuf" : "regMr", data, size,
			flags ? "CUDA" : "host", fd, strerror(-ret));
		return nn_errno(ret);
	}
	*mh = mr;
	return NN_SUCCESS;
}

nn_result_t nn_reg_mr(void *comm, void *data, size_t size, int type,
		      void **mh)
{
	return reg(comm, data, size, type, false, 0, -1, mh);
}

nn_result_t nn_reg_mr_dmabuf(void *comm, void *data, size_t size, int type,
			     uint64_t offset, int fd, void **mh)
{
	return reg(comm, data, size, type, true, offset, fd, mh);
}

static struct nn_req *req_take(struct nn_comm *c)
{
	struct nn_req *q;

	if (c->free_head < 0)
		return NULL;
	q = &c->reqs[c->free_head];
	c->free_head = q->next_free;
	q->comm = c;
	return q;
}

static void req_put(struct nn_req *q)
{
	struct nn_comm *c = q->comm;

	q->r = NULL;
	q->comm = NULL;
	q->next_free = c->free_head;
	c->free_head = (int)(q - c->reqs);
}

/* Requests of @c not yet tested to completion. */
static bool req_busy(const struct nn_comm *c)
{
	int i;

	for (i = 0; i < c->nreqs; i++)
		if (c->reqs[i].comm)
			return true;
	return false;
}

/*
 * NCCL's proxy deregisters a comm's buffers before it closes the comm, also
 * after an abort with receives still posted into them: then the MR is busy
 * with this comm's requests, so the connection is closed first (they fail
 * and no rail can write into the buffer any more) and closeRecv or
 * closeSend only frees what is left.
 */
nn_result_t nn_dereg_mr(void *comm, void *mh)
{
	struct nn_comm *c = data_comm(comm);
	int i, ret;

	if (!c || !mh)
		return NN_INVALID_ARGUMENT;
	ret = r2cc_mr_dereg(mh);
	if (ret == -EBUSY && c->conn && req_busy(c)) {
		NN_INFO("dev %d: deregMr with requests in flight: closing the %s comm's connection first",
			c->dev, c->magic == MAGIC_SEND ? "send" : "recv");
		look_rails(c, true);
		r2cc_conn_close(c->conn);
		c->conn = NULL;
		for (i = 0; i < c->nreqs; i++)	/* freed with the connection */
			if (c->reqs[i].comm)
				req_put(&c->reqs[i]);
		ret = r2cc_mr_dereg(mh);
	}
	if (ret)
		NN_WARN("deregMr %p: %s", mh, strerror(-ret));
	return nn_errno(ret);
}

nn_result_t nn_isend(void *comm, void *data, size_t size, int tag, void *mh,
		     void **request)
{
	struct nn_comm *c = comm;
	struct nn_req *q;
	int ret;

	if (request)
		*request = NULL;
	if (!c || c->magic != MAGIC_SEND || !request || size > INT32_MAX ||
	    !c->conn)
		return NN_INVALID_ARGUMENT;
	q = req_take(c);
	if (!q)
		return NN_SUCCESS;		/* full: NCCL calls again */
	ret = r2cc_isend(c->conn, mh, data, size, (uint32_t)tag, &q->r);
	if (ret) {
		req_put(q);
		if (ret == -EAGAIN)
			return NN_SUCCESS;
		NN_WARN("dev %d: isend of %zu bytes: %s", c->dev, size,
			strerror(-ret));
		return nn_errno(ret);
	}
	q->n = 1;
	q->size = (int)size;
	*request = q;
	return NN_SUCCESS;
}

nn_result_t nn_irecv(void *comm, int n, void **data, const size_t *sizes,
		     const int *tags, void **mhs, void **request)
{
	struct nn_comm *c = comm;
	uint32_t utags[R2CC_MAX_RECVS];
	struct nn_req *q;
	int i, ret;

	if (request)
		*request = NULL;
	if (!c || c->magic != MAGIC_RECV || !request || n < 1 ||
	    n > R2CC_MAX_RECVS || !data || !sizes || !tags || !mhs ||
	    !c->conn)
		return NN_INVALID_ARGUMENT;
	for (i = 0; i < n; i++)
		utags[i] = (uint32_t)tags[i];
	q = req_take(c);
	if (!q)
		return NN_SUCCESS;
	ret = r2cc_irecv(c->conn, n, data, sizes, utags,
			 (struct r2cc_mr *const *)mhs, &q->r);
	if (ret) {
		req_put(q);
		if (ret == -EAGAIN)
			return NN_SUCCESS;	/* no free message slot yet */
		NN_WARN("dev %d: irecv of %d: %s", c->dev, n, strerror(-ret));
		return nn_errno(ret);
	}
	q->n = n;
	*request = q;
	return NN_SUCCESS;
}

/*
 * Host memory needs no flush: a receive completes only once its data is in
 * memory.  GPU memory (R2CC_NCCL_GDR=1) is completed at once too, which
 * relies on the platform ordering the NIC's writes before the completion
 * (see Documentation/nccl.rst): no read-back is made.
 */
nn_result_t nn_iflush(void *comm, int n, void **data, int *sizes, void **mhs,
		      void **request)
{
	struct nn_comm *c = comm;

	(void)data;
	(void)sizes;
	(void)mhs;
	if (request)
		*request = NULL;
	if (!c || c->magic != MAGIC_RECV || !request || n < 0 ||
	    n > R2CC_MAX_RECVS)
		return NN_INVALID_ARGUMENT;
	return NN_SUCCESS;
}

nn_result_t nn_test(void *request, int *done, int *sizes)
{
	struct nn_req *q = request;
	size_t got[R2CC_MAX_RECVS];
	struct nn_comm *c;
	int i, ret;

	if (!q || !done || !q->comm || !q->r)
		return NN_INVALID_ARGUMENT;
	c = q->comm;
	*done = 0;
	ret = r2cc_test(q->r, done, got);
	if (c->nrails) {
		uint64_t now = now_ns();

		if (now >= c->look_ns) {
			c->look_ns = now + LOOK_NS;
			look_rails(c, false);
		}
	}
	if (ret) {
		NN_WARN("dev %d: %s request failed: %s", c->dev,
			c->magic == MAGIC_SEND ? "send" : "receive",
			strerror(-ret));
		req_put(q);
		return nn_errno(ret);
	}
	if (!*done)
		return NN_SUCCESS;
	if (sizes)
		for (i = 0; i < q->n; i++)
			sizes[i] = c->magic == MAGIC_SEND ? q->size :
				   (int)got[i];
	req_put(q);
	return NN_SUCCESS;
}

/* Requests still open are freed with the connection (NCCL's close does). */
static nn_result_t close_data(void *comm, uint32_t magic)
{
	struct nn_comm *c = comm;

	if (!c || c->magic != magic)
		return NN_INVALID_ARGUMENT;
	if (c->conn)
		look_rails(c, true);
	comm_free(c);
	return NN_SUCCESS;
}

nn_result_t nn_close_send(void *comm)
{
	return close_data(comm, MAGIC_SEND);
}

nn_result_t nn_close_recv(void *comm)
{
	return close_data(comm, MAGIC_RECV);
}

nn_result_t nn_close_listen(void *comm)
{
	struct nn_comm *l = comm;

	if (!l || l->magic != MAGIC_LISTEN)
		return NN_INVALID_ARGUMENT;
	if (l->pending)
		comm_free(l->pending);
	comm_free(l);
	return NN_SUCCESS;
}
