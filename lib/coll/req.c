// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The end of a collective request (struct r2cc_coll): out of its
 * communicator's lists and freed with whatever its algorithm holds.
 * Below the algorithms, which free a request they could not start.
 */
#include <stdlib.h>

#include "coll/coll.h"
#include "base/base.h"

/* A point-to-point operation's buffers, registered while it ran. */
static void req_free_p2p(struct r2cc_coll *q)
{
	int j;

	if (!q->p2p)
		return;
	for (j = 0; j < 2; j++)
		if (q->p2p->mr[j])
			r2cc_mr_dereg(q->p2p->mr[j]);
	free(q->p2p);
	q->p2p = NULL;
}

void coll_free(struct r2cc_coll *q)
{
	struct r2cc_comm *c = q->comm;
	struct r2cc_coll **pp, *prev = NULL;

	for (pp = &c->all; *pp; pp = &(*pp)->anext)
		if (*pp == q) {
			*pp = q->anext;
			break;
		}
	for (pp = &c->head; *pp; prev = *pp, pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			if (c->tail == q)
				c->tail = prev;
			break;
		}
	handle_del(q);
	req_free_p2p(q);
	free(q->steps);
	free(q->recv_ops);
	free(q->send_ops);
	free(q->gather);
	free(q->have);
	free(q->rd);
	free(q->coff);
	free(q->dl);
	free(q->doff);
	free(q);
}
