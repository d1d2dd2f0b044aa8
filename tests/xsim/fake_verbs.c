// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * A fake verbs layer for the protocol simulator: the libibverbs calls the
 * transport makes, over a model of RC queue pairs that the scheduler steps
 * one hardware event at a time.
 *
 * The model keeps what the lossless argument depends on:
 * - a QP delivers its writes in order; a write lands (placed in memory,
 *   a receive consumed, a completion queued at the responder) before the
 *   requester sees its completion, and that ACK may never come;
 * - ibv_modify_qp(ERR) does not stop the hardware at once: until the QP
 *   flushes (a separate step) its writes may still go out and land, and
 *   writes may still land through it; after the flush nothing does;
 * - ibv_destroy_qp stops everything at once;
 * - a receiver with no receive posted makes the writer wait (RNR);
 * - a QP addressed wrongly (IB without a LID, RoCE with the wrong GID
 *   index) connects but never delivers, as on a real fabric.
 * Misuse that real hardware would punish (posting past the queue depth,
 * a CQ overrun, a bad rkey, a write outside its MR) is a violation.
 */
#include <endian.h>
#include <pthread.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "xsim.h"

/*
 * One lock over the whole fake NIC, for the ThreadSanitizer harness where
 * the library's threads and a hardware thread use it at once (the
 * hardware is not what that test checks).  The simulator itself is one
 * thread and leaves it off.
 */
bool fv_threaded;
static pthread_mutex_t fv_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void fv_lock(void)
{
	if (fv_threaded)
		pthread_mutex_lock(&fv_mu);
}

void fv_unlock(void)
{
	if (fv_threaded)
		pthread_mutex_unlock(&fv_mu);
}

#undef ibv_query_port
#undef ibv_reg_mr

enum { FQ_RESET, FQ_INIT, FQ_RTR, FQ_RTS, FQ_ERR_PENDING, FQ_ERR };

struct fwr {
	uint64_t wr_id;
	uint32_t imm;		/* as posted (big-endian) */
	int opcode;		/* IBV_WR_* */
	uint64_t laddr;
	uint32_t len;
	uint32_t lkey;
	uint64_t raddr;
	uint32_t rkey;
	bool inl;		/* IBV_SEND_INLINE: the bytes are in @data */
	uint8_t data[64];
};

struct fcq {
	struct ibv_cq cq;
	int cap, head, len;
	struct ibv_wc *wc;
	bool live;
};

struct fqp {
	struct ibv_qp qp;
	int node, nic;
	int state;
	bool live, misaddressed;
	uint32_t dest_qpn;
	uint32_t max_send, max_recv, max_inline;
	struct fcq *cq;
	struct fwr *sq;		/* ring of max_send */
	uint32_t sq_post, sq_deliv, sq_ack;	/* counters, wrap-safe */
	uint64_t *rq;		/* ring of max_recv */
	uint32_t rq_head, rq_len;
};

struct fmr {
	struct ibv_mr mr;
	bool live;
	int node, nic;
};

struct fport {
	bool ib;
	uint16_t lid;
	bool fail_rtr;
	struct ibv_context ctx;
	struct ibv_pd pd;
};

#define MAX_QPS	512
#define MAX_CQS	512
#define MAX_MRS	256

static struct fv_hooks hooks;
void (*fv_on_write_posted)(int node, int nic, uint32_t imm);
static struct fport ports[XS_NODES][XS_MAX_RAILS];
static bool link_up[XS_MAX_RAILS];
static struct fqp *qps[MAX_QPS];
static int nqps;
static struct fcq *cqs[MAX_CQS];
static int ncqs;
static struct fmr mrs[MAX_MRS];
static uint32_t next_qpn = 100, next_key = 0x1000;

static void viol(const char *what)
{
	hooks.violation(what);
}

static void port_of(struct ibv_context *c, int *node, int *nic)
{
	int n, k;

	for (n = 0; n < XS_NODES; n++)
		for (k = 0; k < XS_MAX_RAILS; k++)
			if (&ports[n][k].ctx == c) {
				*node = n;
				*nic = k;
				return;
			}
	viol("unknown verbs context");
	*node = *nic = 0;
}

static void cq_push(struct fcq *cq, const struct ibv_wc *wc)
{
	if (!cq->live)
		return;
	if (cq->len == cq->cap) {
		viol("completion queue overrun");
		return;
	}
	cq->wc[(cq->head + cq->len++) % cq->cap] = *wc;
}

static int raw_fv_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct fcq *cq = (struct fcq *)ibcq;
	int i;

	for (i = 0; i < n && cq->len; i++) {
		wc[i] = cq->wc[cq->head];
		cq->head = (cq->head + 1) % cq->cap;
		cq->len--;
	}
	return i;
}

static void flush_one_send(struct fqp *q, enum ibv_wc_status st)
{
	struct fwr *w = &q->sq[q->sq_ack % q->max_send];
	struct ibv_wc wc = { .wr_id = w->wr_id, .status = st,
			     .qp_num = q->qp.qp_num };

	cq_push(q->cq, &wc);
	q->sq_ack++;
	if (q->sq_deliv < q->sq_ack)
		q->sq_deliv = q->sq_ack;
}

/* The error transition finishes: every outstanding request flushes. */
void fv_flush(struct fqp *q)
{
	struct ibv_wc wc = { .status = IBV_WC_WR_FLUSH_ERR,
			     .qp_num = q->qp.qp_num };

	q->state = FQ_ERR;
	while (q->sq_ack != q->sq_post)
		flush_one_send(q, IBV_WC_WR_FLUSH_ERR);
	while (q->rq_len) {
		wc.wr_id = q->rq[q->rq_head];
		q->rq_head = (q->rq_head + 1) % q->max_recv;
		q->rq_len--;
		cq_push(q->cq, &wc);
	}
}

/* The NIC gives up on @q (retries exhausted); quiet: flushes only (6.12). */
void fv_fatal(struct fqp *q, bool quiet)
{
	if (q->state == FQ_ERR || !q->live)
		return;
	if (!quiet && q->sq_ack != q->sq_post)
		flush_one_send(q, IBV_WC_RETRY_EXC_ERR);
	fv_flush(q);
}

static int raw_fv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad)
{
	struct fqp *q = (struct fqp *)ibqp;

	for (; wr; wr = wr->next) {
		struct fwr *w;

		if (q->state != FQ_RTS && q->state != FQ_ERR_PENDING &&
		    q->state != FQ_ERR) {
			*bad = wr;
			return EINVAL;
		}
		if (q->sq_post - q->sq_ack >= q->max_send) {
			viol("send queue overrun");
			*bad = wr;
			return ENOMEM;
		}
		if (wr->num_sge > 1 || !(wr->send_flags & IBV_SEND_SIGNALED) ||
		    (wr->send_flags & IBV_SEND_INLINE &&
		     (!wr->num_sge || wr->sg_list[0].length > sizeof(w->data) ||
		      wr->sg_list[0].length > q->max_inline))) {
			viol("unsupported send work request");
			*bad = wr;
			return EINVAL;
		}
		w = &q->sq[q->sq_post % q->max_send];
		memset(w, 0, sizeof(*w));
		w->wr_id = wr->wr_id;
		w->imm = wr->imm_data;
		w->opcode = wr->opcode;
		if (wr->num_sge) {
			w->laddr = wr->sg_list[0].addr;
			w->len = wr->sg_list[0].length;
			w->lkey = wr->sg_list[0].lkey;
		}
		if (wr->send_flags & IBV_SEND_INLINE) {
			/* copied now: the caller may reuse its bytes at once */
			memcpy(w->data, (void *)(uintptr_t)w->laddr, w->len);
			w->laddr = (uintptr_t)w->data;
			w->inl = true;
		}
		w->raddr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		q->sq_post++;
		if (fv_on_write_posted &&
		    (w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
		     w->opcode == IBV_WR_SEND_WITH_IMM))
			fv_on_write_posted(q->node, q->nic, be32toh(w->imm));
		if (q->state == FQ_ERR)
			flush_one_send(q, IBV_WC_WR_FLUSH_ERR);
	}
	return 0;
}

static int raw_fv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad)
{
	struct fqp *q = (struct fqp *)ibqp;

	for (; wr; wr = wr->next) {
		if (q->state == FQ_RESET) {
			*bad = wr;
			return EINVAL;
		}
		if (q->rq_len == q->max_recv) {
			*bad = wr;
			return ENOMEM;
		}
		if (q->state == FQ_ERR) {
			struct ibv_wc wc = { .wr_id = wr->wr_id,
					     .status = IBV_WC_WR_FLUSH_ERR,
					     .qp_num = q->qp.qp_num };

			cq_push(q->cq, &wc);
			continue;
		}
		q->rq[(q->rq_head + q->rq_len++) % q->max_recv] = wr->wr_id;
	}
	return 0;
}

static int fv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
static int fv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad);
static int fv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad);

static void ctx_init(struct ibv_context *c)
{
	memset(c, 0, sizeof(*c));
	c->ops.poll_cq = fv_poll_cq;
	c->ops.post_send = fv_post_send;
	c->ops.post_recv = fv_post_recv;
}

void fv_init(const struct fv_hooks *h)
{
	int n, k;

	hooks = *h;
	for (n = 0; n < XS_NODES; n++)
		for (k = 0; k < XS_MAX_RAILS; k++) {
			ctx_init(&ports[n][k].ctx);
			ports[n][k].pd.context = &ports[n][k].ctx;
		}
}

void fv_reset(void)
{
	int i, n, k;

	for (i = 0; i < nqps; i++) {
		free(qps[i]->sq);
		free(qps[i]->rq);
		free(qps[i]);
	}
	nqps = 0;
	for (i = 0; i < ncqs; i++) {
		free(cqs[i]->wc);
		free(cqs[i]);
	}
	ncqs = 0;
	memset(mrs, 0, sizeof(mrs));
	for (n = 0; n < XS_NODES; n++)
		for (k = 0; k < XS_MAX_RAILS; k++) {
			ports[n][k].ib = false;
			ports[n][k].lid = 0;
			ports[n][k].fail_rtr = false;
		}
	for (k = 0; k < XS_MAX_RAILS; k++)
		link_up[k] = true;
	next_qpn = 100;
}

struct ibv_context *fv_context(int node, int nic)
{
	return &ports[node][nic].ctx;
}

struct ibv_pd *fv_pd(int node, int nic)
{
	return &ports[node][nic].pd;
}

void fv_set_port(int node, int nic, bool ib, uint16_t lid)
{
	ports[node][nic].ib = ib;
	ports[node][nic].lid = lid;
}

void fv_set_link(int nic, bool up)
{
	link_up[nic] = up;
}

bool fv_link(int nic)
{
	return link_up[nic];
}

void fv_fail_next_rtr(int node, int nic)
{
	ports[node][nic].fail_rtr = true;
}

int fv_live_count(void)
{
	int i, n = 0;

	for (i = 0; i < nqps; i++)
		n += qps[i]->live;
	for (i = 0; i < ncqs; i++)
		n += cqs[i]->live;
	for (i = 0; i < MAX_MRS; i++)
		n += mrs[i].live;
	return n;
}

/* ------------------------------------------------------------ verbs calls */

static struct ibv_cq *fake_ibv_create_cq(struct ibv_context *c, int cqe, void *cq_ctx,
			     struct ibv_comp_channel *ch, int vec)
{
	struct fcq *cq;

	(void)cq_ctx;
	(void)ch;
	(void)vec;
	if (ncqs == MAX_CQS) {
		viol("too many CQs (leak?)");
		errno = ENOMEM;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	cq->wc = calloc((size_t)cqe, sizeof(*cq->wc));
	cq->cap = cqe;
	cq->live = true;
	cq->cq.context = c;
	cq->cq.cqe = cqe;
	cqs[ncqs++] = cq;
	return &cq->cq;
}

static int fake_ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct fcq *cq = (struct fcq *)ibcq;
	int i;

	for (i = 0; i < nqps; i++)
		if (qps[i]->live && qps[i]->cq == cq)
			return EBUSY;
	if (!cq->live)
		viol("CQ destroyed twice");
	cq->live = false;
	return 0;
}

static struct ibv_qp *fake_ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
	struct fqp *q;

	if (nqps == MAX_QPS) {
		viol("too many QPs (leak?)");
		errno = ENOMEM;
		return NULL;
	}
	if (ia->qp_type != IBV_QPT_RC || ia->send_cq != ia->recv_cq ||
	    ia->srq) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	port_of(pd->context, &q->node, &q->nic);
	q->qp.context = pd->context;
	q->qp.pd = pd;
	q->qp.send_cq = q->qp.recv_cq = ia->send_cq;
	q->qp.qp_num = next_qpn++;
	q->qp.qp_type = IBV_QPT_RC;
	q->cq = (struct fcq *)ia->send_cq;
	q->max_send = ia->cap.max_send_wr;
	q->max_inline = ia->cap.max_inline_data;
	q->max_recv = ia->cap.max_recv_wr;
	q->sq = calloc(q->max_send, sizeof(*q->sq));
	q->rq = calloc(q->max_recv, sizeof(*q->rq));
	q->live = true;
	q->state = FQ_RESET;
	if ((int)(q->max_send + q->max_recv) > q->cq->cap)
		viol("CQ smaller than the QP's queues");
	qps[nqps++] = q;
	return &q->qp;
}

static int fake_ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct fqp *q = (struct fqp *)ibqp;

	if (!q->live)
		viol("QP destroyed twice");
	q->live = false;
	return 0;
}

static bool ah_ok(const struct fqp *q, const struct ibv_qp_attr *a)
{
	const struct fport *p = &ports[q->node][q->nic];
	const struct fport *peer = &ports[!q->node][q->nic];

	if (p->ib) {
		if (a->ah_attr.dlid != peer->lid)
			return false;
		if (a->ah_attr.is_global && a->ah_attr.grh.sgid_index != 0)
			return false;
		return true;
	}
	/* RoCE: always global, GID index 0 in this fake */
	return a->ah_attr.is_global && a->ah_attr.grh.sgid_index == 0;
}

static int fake_ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask)
{
	struct fqp *q = (struct fqp *)ibqp;
	struct fport *p = &ports[q->node][q->nic];

	if (!q->live) {
		viol("modify of a destroyed QP");
		return EINVAL;
	}
	if (!(mask & IBV_QP_STATE))
		return EINVAL;
	switch (a->qp_state) {
	case IBV_QPS_INIT:
		if (q->state != FQ_RESET)
			return EINVAL;
		q->state = FQ_INIT;
		return 0;
	case IBV_QPS_RTR:
		if (q->state != FQ_INIT)
			return EINVAL;
		if (p->fail_rtr) {
			p->fail_rtr = false;
			return EINVAL;
		}
		q->dest_qpn = a->dest_qp_num;
		q->misaddressed = !ah_ok(q, a);
		q->state = FQ_RTR;
		return 0;
	case IBV_QPS_RTS:
		if (q->state != FQ_RTR)
			return EINVAL;
		q->state = FQ_RTS;
		return 0;
	case IBV_QPS_ERR:
		if (q->state != FQ_ERR)
			q->state = FQ_ERR_PENDING;
		return 0;
	default:
		return EINVAL;
	}
}

static int fake_ibv_query_port(struct ibv_context *c, uint8_t port,
		   struct _compat_ibv_port_attr *attr)
{
	struct ibv_port_attr *pa = (struct ibv_port_attr *)attr;
	int node, nic;

	if (port != 1)
		return EINVAL;
	port_of(c, &node, &nic);
	memset(pa, 0, sizeof(*pa));
	pa->state = IBV_PORT_ACTIVE;
	pa->active_mtu = IBV_MTU_4096;
	pa->lid = ports[node][nic].lid;
	pa->link_layer = ports[node][nic].ib ? IBV_LINK_LAYER_INFINIBAND :
					       IBV_LINK_LAYER_ETHERNET;
	return 0;
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *addr, size_t len,
			  int access)
{
	int i, node, nic;

	(void)access;
	port_of(pd->context, &node, &nic);
	for (i = 0; i < MAX_MRS && mrs[i].live; i++)
		;
	if (i == MAX_MRS) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&mrs[i], 0, sizeof(mrs[i]));
	mrs[i].live = true;
	mrs[i].node = node;
	mrs[i].nic = nic;
	mrs[i].mr.context = pd->context;
	mrs[i].mr.pd = pd;
	mrs[i].mr.addr = addr;
	mrs[i].mr.length = len;
	mrs[i].mr.lkey = next_key++;
	mrs[i].mr.rkey = next_key++;
	return &mrs[i].mr;
}

static struct ibv_mr *fake_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			  int access)
{
	return reg(pd, addr, len, access);
}

static struct ibv_mr *fake_ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len,
				uint64_t iova, unsigned int access)
{
	(void)iova;
	return reg(pd, addr, len, (int)access);
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t off, size_t len,
				 uint64_t iova, int fd, int access)
{
	(void)pd;
	(void)off;
	(void)len;
	(void)iova;
	(void)fd;
	(void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

static int fake_ibv_dereg_mr(struct ibv_mr *mr)
{
	struct fmr *m = (struct fmr *)mr;

	if (!m->live)
		viol("MR deregistered twice");
	m->live = false;
	return 0;
}

const char *ibv_wc_status_str(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_SUCCESS: return "success";
	case IBV_WC_WR_FLUSH_ERR: return "WR flushed";
	case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
	default: return "error";
	}
}

/* ------------------------------------------------------------ hardware */

int fv_qps(struct fqp **out, int max)
{
	int i, n = 0;

	for (i = 0; i < nqps && n < max; i++)
		if (qps[i]->live)
			out[n++] = qps[i];
	return n;
}

int fv_qp_node(const struct fqp *q)
{
	return q->node;
}

int fv_qp_nic(const struct fqp *q)
{
	return q->nic;
}

static struct fqp *dest_of(const struct fqp *q)
{
	int i;

	for (i = 0; i < nqps; i++)
		if (qps[i]->live && qps[i]->qp.qp_num == q->dest_qpn &&
		    qps[i]->node != q->node && qps[i]->nic == q->nic)
			return qps[i];
	return NULL;
}

static bool hw_running(const struct fqp *q)
{
	return q->live && (q->state == FQ_RTR || q->state == FQ_RTS ||
			   q->state == FQ_ERR_PENDING);
}

bool fv_can_deliver(const struct fqp *q)
{
	const struct fqp *d;

	if (!hw_running(q) || q->state == FQ_RTR || q->misaddressed ||
	    q->sq_deliv == q->sq_post || !link_up[q->nic])
		return false;
	d = dest_of(q);
	/* a plain write takes no receive */
	return d && hw_running(d) && !d->misaddressed &&
	       (d->rq_len ||
		q->sq[q->sq_deliv % q->max_send].opcode == IBV_WR_RDMA_WRITE);
}

static const struct fmr *mr_by_key(uint32_t key, bool remote, int node,
				   int nic)
{
	int i;

	for (i = 0; i < MAX_MRS; i++)
		if (mrs[i].live && mrs[i].node == node && mrs[i].nic == nic &&
		    (remote ? mrs[i].mr.rkey : mrs[i].mr.lkey) == key)
			return &mrs[i];
	return NULL;
}

static bool in_mr(const struct fmr *m, uint64_t addr, uint32_t len)
{
	uint64_t a = (uintptr_t)m->mr.addr;

	return m && addr >= a && addr + len <= a + m->mr.length;
}

bool fv_deliver(struct fqp *q)
{
	struct fwr *w;
	struct fqp *d;
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS };

	if (!fv_can_deliver(q))
		return false;
	d = dest_of(q);
	w = &q->sq[q->sq_deliv % q->max_send];
	if (w->len) {
		const struct fmr *lm = mr_by_key(w->lkey, false, q->node,
						 q->nic);
		const struct fmr *rm = mr_by_key(w->rkey, true, d->node,
						 d->nic);

		if (!w->inl && (!lm || !in_mr(lm, w->laddr, w->len))) {
			viol("send outside its local MR");
			return false;
		}
		if ((w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
		     w->opcode == IBV_WR_RDMA_WRITE) &&
		    (!rm || !in_mr(rm, w->raddr, w->len))) {
			viol("write with a bad rkey or outside the remote MR");
			return false;
		}
	}
	if (w->opcode == IBV_WR_RDMA_WRITE) {
		if (w->len) {
			hooks.on_write(d->node, w->raddr, w->len);
			memmove((void *)(uintptr_t)w->raddr,
				(void *)(uintptr_t)w->laddr, w->len);
		}
		q->sq_deliv++;
		return true;	/* no receive, no completion at the target */
	}
	if (w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
		if (w->len) {
			hooks.on_write(d->node, w->raddr, w->len);
			memmove((void *)(uintptr_t)w->raddr,
				(void *)(uintptr_t)w->laddr, w->len);
		}
		wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	} else if (w->opcode == IBV_WR_SEND_WITH_IMM && !w->len) {
		wc.opcode = IBV_WC_RECV;
	} else {
		viol("unsupported opcode");
		return false;
	}
	wc.wr_id = d->rq[d->rq_head];
	d->rq_head = (d->rq_head + 1) % d->max_recv;
	d->rq_len--;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = w->imm;
	wc.byte_len = w->len;
	wc.qp_num = d->qp.qp_num;
	cq_push(d->cq, &wc);
	q->sq_deliv++;
	return true;
}

bool fv_redeliver(struct fqp *q)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS };
	struct fwr *w;
	struct fqp *d;

	/* Both ends up: an RC QP in error moves no data. */
	if (!q->live || q->state != FQ_RTS || q->misaddressed ||
	    q->sq_deliv == q->sq_ack || !link_up[q->nic])
		return false;
	d = dest_of(q);
	w = &q->sq[(q->sq_deliv - 1) % q->max_send];
	if (!d || !d->live || (d->state != FQ_RTR && d->state != FQ_RTS) ||
	    !d->rq_len ||
	    w->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)
		return false;
	wc.wr_id = d->rq[d->rq_head];
	d->rq_head = (d->rq_head + 1) % d->max_recv;
	d->rq_len--;
	wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = w->imm;
	wc.byte_len = w->len;
	wc.qp_num = d->qp.qp_num;
	cq_push(d->cq, &wc);
	return true;
}

bool fv_can_ack(const struct fqp *q)
{
	return q->live && q->state == FQ_RTS && q->sq_ack != q->sq_deliv &&
	       link_up[q->nic];
}

bool fv_ack(struct fqp *q)
{
	struct fwr *w;
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS };

	if (!fv_can_ack(q))
		return false;
	w = &q->sq[q->sq_ack % q->max_send];
	wc.wr_id = w->wr_id;
	wc.opcode = w->opcode == IBV_WR_SEND_WITH_IMM ? IBV_WC_SEND :
							IBV_WC_RDMA_WRITE;
	wc.qp_num = q->qp.qp_num;
	cq_push(q->cq, &wc);
	q->sq_ack++;
	return true;
}

bool fv_flush_pending(const struct fqp *q)
{
	return q->live && q->state == FQ_ERR_PENDING;
}

/* ------------------------------------------------------------ locked entries */

#define LOCKED(type, call)			\
	do {					\
		type r_;			\
						\
		fv_lock();			\
		r_ = call;			\
		fv_unlock();			\
		return r_;			\
	} while (0)

static int fv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	LOCKED(int, raw_fv_poll_cq(cq, n, wc));
}

static int fv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad)
{
	LOCKED(int, raw_fv_post_send(qp, wr, bad));
}

static int fv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad)
{
	LOCKED(int, raw_fv_post_recv(qp, wr, bad));
}

struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe, void *cq_ctx,
			     struct ibv_comp_channel *ch, int vec)
{
	LOCKED(struct ibv_cq *, fake_ibv_create_cq(c, cqe, cq_ctx, ch, vec));
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	LOCKED(int, fake_ibv_destroy_cq(cq));
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
	LOCKED(struct ibv_qp *, fake_ibv_create_qp(pd, ia));
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	LOCKED(int, fake_ibv_destroy_qp(qp));
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	LOCKED(int, fake_ibv_modify_qp(qp, a, mask));
}

int ibv_query_port(struct ibv_context *c, uint8_t port,
		   struct _compat_ibv_port_attr *attr);
int ibv_query_port(struct ibv_context *c, uint8_t port,
		   struct _compat_ibv_port_attr *attr)
{
	LOCKED(int, fake_ibv_query_port(c, port, attr));
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			  int access)
{
	LOCKED(struct ibv_mr *, fake_ibv_reg_mr(pd, addr, len, access));
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len,
				uint64_t iova, unsigned int access)
{
	LOCKED(struct ibv_mr *, fake_ibv_reg_mr_iova2(pd, addr, len, iova,
						      access));
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	LOCKED(int, fake_ibv_dereg_mr(mr));
}
