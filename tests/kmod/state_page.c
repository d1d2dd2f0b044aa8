// SPDX-License-Identifier: GPL-2.0-only
/*
 * The state page agrees with r2cc's sysfs and with ibv_query_port for every
 * RDMA port of the node; every valid slot names its port by an incarnation
 * of its own, the one sysfs shows.
 */
#include <infiniband/verbs.h>
#include <stdint.h>
#include <sys/mman.h>

#include "r2cc_test.h"

/* Slots are entry_size apart, as the uapi header says. */
static const struct r2cc_state_port *slot(const struct r2cc_state_header *h,
					  __u32 i)
{
	return (const void *)((const char *)h->ports + i * h->entry_size);
}

static const struct r2cc_state_port *find(const struct r2cc_state_header *h,
					  unsigned int dev, unsigned int port)
{
	__u32 i;

	for (i = 0; i < h->nslots; i++)
		if ((slot(h, i)->flags & R2CC_SLOT_VALID) &&
		    slot(h, i)->dev_index == dev && slot(h, i)->port == port)
			return slot(h, i);
	return NULL;
}

int main(void)
{
	struct r2cc_state_header *copy;
	const struct r2cc_state_header *h;
	struct ibv_device **list;
	int fd, n, i, nvalid = 0, unique = 1;
	__u32 s, j, k;

	fd = r2cc_open_dev(0);
	h = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	list = ibv_get_device_list(&n);
	if (!list || n == 0)
		tap_skip_all("no RDMA devices");
	if (h == MAP_FAILED)
		tap_skip_all("cannot map the state page");
	copy = malloc(4096);
	do {	/* a consistent copy, per the uapi header's protocol */
		s = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		memcpy(copy, h, 4096);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((s & 1) || __atomic_load_n(&h->seq, __ATOMIC_RELAXED) != s);
	for (j = 0; j < copy->nslots; j++) {
		if (!(slot(copy, j)->flags & R2CC_SLOT_VALID))
			continue;
		nvalid++;
		unique &= slot(copy, j)->incarnation != 0;
		for (k = 0; k < j; k++)
			unique &= !(slot(copy, k)->flags & R2CC_SLOT_VALID) ||
				  slot(copy, k)->incarnation !=
				  slot(copy, j)->incarnation;
	}

	tap_plan(2 + 4 * n);
	tap_ok(nvalid == n, "%d valid slots for %d single-port devices",
	       nvalid, n);
	tap_ok(unique && copy->entry_size >= sizeof(struct r2cc_state_port),
	       "every valid slot has a non-zero incarnation of its own");
	for (i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);
		struct ibv_context *ctx = ibv_open_device(list[i]);
		const struct r2cc_state_port *e;
		struct ibv_port_attr attr;
		char path[256];
		int idx = r2cc_dev_index(name);
		long long st;

		e = idx >= 0 ? find(copy, idx, 1) : NULL;
		tap_ok(e != NULL, "%s port 1 has a slot", name);
		if (!ctx || ibv_query_port(ctx, 1, &attr))
			attr.state = IBV_PORT_NOP;
		tap_ok(e && e->state == attr.state,
		       "%s: state page %d, ibv_query_port %d", name,
		       e ? e->state : -1, attr.state);
		snprintf(path, sizeof(path),
			 "/sys/kernel/r2cc/devices/%s/ports/1/state_num", name);
		st = r2cc_sysfs_num(path);
		tap_ok(e && st == e->state, "%s: sysfs state_num %lld", name,
		       st);
		snprintf(path, sizeof(path),
			 "/sys/kernel/r2cc/devices/%s/ports/1/incarnation", name);
		st = r2cc_sysfs_num(path);
		tap_ok(e && st == (long long)e->incarnation,
		       "%s: sysfs incarnation %lld", name, st);
		if (ctx)
			ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return tap_done();
}
