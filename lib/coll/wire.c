// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * A communicator's connections: made through the bootstrap (the ring's
 * two, the mesh's n - 1 pairs) and closed.  Below the communicator and
 * the point-to-point operations, which both wire with it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll.h"
#include "base/base.h"
#include "platform/platform.h"

void coll_close_all(struct r2cc_conn **conns, int n)
{
	int i;

	for (i = 0; conns && i < n; i++) {
		if (conns[i])
			r2cc_conn_close(conns[i]);
		conns[i] = NULL;
	}
}

/*
 * Wire a communicator's connections: every rank listens and the handles
 * are all-gathered; then this rank connects to each rank of @dst (into
 * @out) and accepts @nin connections (into @in), until all are ready.
 * The ring connects to the next rank, the mesh to every other.  On an
 * error nothing it made is left open.
 */
int coll_wire(struct r2cc_comm *c, struct r2cc_boot *boot, uint64_t primary,
	      const int *dst, struct r2cc_conn **out, int nout,
	      struct r2cc_conn **in, int nin, uint64_t deadline_ns)
{
	struct r2cc_conn_opts co = { .size = sizeof(co), .primary = primary };
	struct timespec nap = { 0, 100000 };
	struct r2cc_listener *l = NULL;
	int i, ret, got = 0, ready = 0;
	struct r2cc_handle mine, *all;

	all = calloc((size_t)c->n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	memset(&mine, 0, sizeof(mine));
	ret = r2cc_listen(c->ctx, &mine, &l);
	if (!ret)
		ret = r2cc_boot_allgather(boot, &mine, sizeof(mine), all);
	for (i = 0; i < nout && !ret; i++)
		ret = r2cc_connect_opts(c->ctx, &all[dst[i]], &co, &out[i]);
	while (!ret && ready < nout + nin) {
		if (got < nin) {
			ret = r2cc_accept(l, &in[got]);
			got += !ret;
			ret = ret == -EAGAIN ? 0 : ret;
		}
		for (i = 0, ready = 0; i < nout + got && ret >= 0; i++) {
			ret = r2cc_conn_ready(i < nout ? out[i] : in[i - nout]);
			ready += ret > 0;
		}
		ret = ret > 0 ? 0 : ret;
		if (ret || ready == nout + nin)
			break;
		if (clock_now_ns() > deadline_ns)
			ret = -ETIMEDOUT;
		else
			nanosleep(&nap, NULL);
	}
	if (l)
		r2cc_listener_close(l);
	free(all);
	if (ret) {
		coll_close_all(out, nout);
		coll_close_all(in, nin);
	}
	return ret;
}
