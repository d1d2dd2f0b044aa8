// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Fabric discovery: every port of every RDMA device that the selection
 * keeps, with its link layer, RoCEv2 GID, bandwidth, NUMA node, PCI
 * address and state.  One verbs context stays open per device used; the
 * transport and the verbs notification source share it.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base.h"
#include "platform/platform.h"

static int sysfs_read(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int sysfs_read(char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Data rate of one lane in Mbit/s, by IB speed code (as r2cc.ko). */
static uint64_t lane_mbps(unsigned int speed)
{
	switch (speed) {
	case 1:		return 2000;
	case 2:		return 4000;
	case 4:		return 8000;
	case 8:		return 10000;
	case 16:	return 13636;
	case 32:	return 25000;
	case 64:	return 50000;
	case 128:	return 100000;
	case 256:	return 200000;
	default:	return 0;
	}
}

static unsigned int width_lanes(unsigned int width)
{
	switch (width) {
	case 1:		return 1;
	case 2:		return 4;
	case 4:		return 8;
	case 8:		return 12;
	case 16:	return 2;
	default:	return 0;
	}
}

/* RoCE: the first RoCEv2 GID holding an IPv4 address; IB: GID 0. */
static void pick_gid(struct ibv_context *v, const struct ibv_port_attr *pa,
		     struct r2cc_nic_info *info)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	const char *dev = info->dev_name;
	union ibv_gid gid;
	char type[32];
	int i;

	info->gid_index = -1;
	for (i = 0; i < pa->gid_tbl_len && i < 256; i++) {
		if (ibv_query_gid(v, (uint8_t)info->port, i, &gid))
			continue;
		if (info->link_layer != R2CC_LINK_ETHERNET) {
			info->gid_index = i;
			memcpy(info->gid, gid.raw, 16);
			return;
		}
		if (sysfs_read(type, sizeof(type),
			       "/sys/class/infiniband/%s/ports/%u/gid_attrs/types/%d",
			       dev, info->port, i) ||
		    strcmp(type, "RoCE v2") || memcmp(gid.raw, v4mapped, 12))
			continue;
		info->gid_index = i;
		memcpy(info->gid, gid.raw, 16);
		return;
	}
}

static void describe(struct ibv_context *v, const char *dev, uint32_t port,
		     const struct ibv_port_attr *pa, struct r2cc_nic_info *info)
{
	char buf[PATH_MAX], path[PATH_MAX];
	const char *base;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	snprintf(info->dev_name, sizeof(info->dev_name), "%s", dev);
	info->port = port;
	info->link_layer = pa->link_layer == IBV_LINK_LAYER_ETHERNET ?
		R2CC_LINK_ETHERNET : R2CC_LINK_INFINIBAND;
	info->state = pa->state >= IBV_PORT_ACTIVE ? R2CC_NIC_ACTIVE :
						     (uint8_t)pa->state;
	info->bandwidth_mbps = lane_mbps(pa->active_speed) *
			       width_lanes(pa->active_width);
	info->numa_node = -1;
	if (!sysfs_read(buf, sizeof(buf),
			"/sys/class/infiniband/%s/device/numa_node", dev))
		info->numa_node = atoi(buf);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", dev);
	if (realpath(path, buf)) {
		base = strrchr(buf, '/');
		base = base ? base + 1 : buf;
		/* Only a PCI function has an address like 0000:00:03.0. */
		if (strlen(base) < sizeof(info->pci_addr) && strchr(base, ':'))
			snprintf(info->pci_addr, sizeof(info->pci_addr), "%s",
				 base);
	}
	if (info->link_layer == R2CC_LINK_ETHERNET &&
	    !sysfs_read(buf, sizeof(buf),
			"/sys/class/infiniband/%s/ports/%u/gid_attrs/ndevs/0",
			dev, port))
		snprintf(info->netdev, sizeof(info->netdev), "%.15s", buf);
	pick_gid(v, pa, info);
}

/*
 * A software RDMA device (rxe, siw) runs its transport in the kernel of a
 * general-purpose host: it has no bus device of its own under sysfs, where
 * a NIC (PCI, or a VM's virtual function) has one.  /sys unreadable says
 * nothing either way: hardware is assumed.
 */
static bool soft_device(const char *dev)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", dev);
	if (stat(path, &st))
		return false;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", dev);
	return stat(path, &st) && errno == ENOENT;
}

/*
 * The QPs' local ACK timeout (4.096 us x 2^n before the requester goes
 * back and sends again), unless R2CC_IB_TIMEOUT sets it.  A hardware NIC
 * ACKs within microseconds, so 2^14 (67 ms) only retransmits what was
 * lost, well inside the stall detector.  A software device ACKs when its
 * host's scheduler runs it: a busy or emulated host leaves ACKs later
 * than 67 ms often, and each late one makes the requester resend all it
 * has in flight (go-back-N).  Measured on the testbed (4 TCG guests, 2
 * rxe rails each, mixed collectives, no fault, 60 s): at 2^14 the
 * requesters timed out 762 times and the responders dropped 48,065
 * duplicate packets with no packet lost (no out-of-sequence request),
 * and rxe failed QPs with "remote invalid request" on a duplicate; at
 * 2^17 (537 ms) 41 timeouts, 2,096 duplicates, no failed QP
 * (Documentation/lib.rst).  The stall detector (100 ms at least) still
 * sees a black hole first.
 */
#define ACK_TIMEOUT_HW		14
#define ACK_TIMEOUT_SOFT	17

/*
 * A list of NICs to keep is also their order: NIC i (rail i) is the i-th
 * listed, so that an application (the NCCL plugin) can put a primary NIC
 * first.  A stable insertion sort: at most R2CC_MAX_NICS of them.
 */
static void order_nics(struct r2cc_ctx *ctx, const struct r2cc_nic_sel *sel)
{
	int rank[R2CC_MAX_NICS], i, j;

	for (i = 0; i < ctx->nnics; i++)
		rank[i] = nics_rank(sel, ctx->nics[i].info.dev_name,
				    ctx->nics[i].info.port);
	for (i = 1; i < ctx->nnics; i++) {
		struct r2cc_nic t = ctx->nics[i];
		int r = rank[i];

		for (j = i; j > 0 && rank[j - 1] > r; j--) {
			ctx->nics[j] = ctx->nics[j - 1];
			rank[j] = rank[j - 1];
		}
		ctx->nics[j] = t;
		rank[j] = r;
	}
	for (i = 0; i < ctx->nnics; i++) {
		const struct r2cc_nic_info *in = &ctx->nics[i].info;

		log_msg(ctx, R2CC_LOG_INFO,
			"NIC %d: %s:%u %s state %u %llu Mbit/s gid %d numa %d%s ack timeout 2^%u",
			i, in->dev_name, in->port, in->netdev, in->state,
			(unsigned long long)in->bandwidth_mbps,
			in->gid_index, in->numa_node,
			in->flags & R2CC_NIC_SOFTWARE ? " software" : "",
			in->ack_timeout);
	}
}

int fabric_discover(struct r2cc_ctx *ctx, const struct r2cc_nic_sel *sel)
{
	struct ibv_device **list;
	int n, d;

	list = ibv_get_device_list(&n);
	if (!list) {
		log_msg(ctx, R2CC_LOG_ERROR, "no RDMA devices: %s",
			strerror(errno));
		return -ENODEV;
	}
	for (d = 0; d < n; d++) {
		const char *dev = ibv_get_device_name(list[d]);
		struct ibv_device_attr da;
		struct ibv_context *v;
		int used = 0;
		uint32_t p;
		bool soft;

		v = ibv_open_device(list[d]);
		if (!v || ibv_query_device(v, &da)) {
			log_msg(ctx, R2CC_LOG_WARN, "%s: cannot open", dev);
			if (v)
				ibv_close_device(v);
			continue;
		}
		soft = soft_device(dev);	/* the device's, every port's */
		for (p = 1; p <= da.phys_port_cnt; p++) {
			struct ibv_port_attr pa;
			struct r2cc_nic *nic;

			if (!nics_match(sel, dev, p) ||
			    ibv_query_port(v, (uint8_t)p, &pa))
				continue;
			if (ctx->nnics == R2CC_MAX_NICS) {
				log_msg(ctx, R2CC_LOG_WARN,
					"more than %d NICs: %s:%u left out",
					R2CC_MAX_NICS, dev, p);
				continue;
			}
			nic = &ctx->nics[ctx->nnics++];
			describe(v, dev, p, &pa, &nic->info);
			if (soft)
				nic->info.flags |= R2CC_NIC_SOFTWARE;
			nic->info.ack_timeout = (uint8_t)(ctx->tune.ib_timeout ?:
				(soft ? ACK_TIMEOUT_SOFT : ACK_TIMEOUT_HW));
			nic->verbs = v;
			nic->dev = ctx->ndevs;	/* v is appended below */
			nic->state = nic->info.state;
			nic->kmod_dev = -1;
			nic->slot = -1;
			used = 1;
		}
		if (used)
			ctx->devs[ctx->ndevs++] = v;
		else
			ibv_close_device(v);
	}
	ibv_free_device_list(list);
	if (!ctx->nnics) {
		log_msg(ctx, R2CC_LOG_ERROR, "no usable NIC");
		return -ENODEV;
	}
	order_nics(ctx, sel);
	/* One protection domain per device: every MR and QP lives in it. */
	for (d = 0; d < ctx->ndevs; d++) {
		ctx->pds[d] = ibv_alloc_pd(ctx->devs[d]);
		if (!ctx->pds[d]) {
			log_msg(ctx, R2CC_LOG_ERROR, "%s: no protection domain",
				ibv_get_device_name(ctx->devs[d]->device));
			return -ENOMEM;
		}
	}
	return 0;
}

void fabric_close(struct r2cc_ctx *ctx)
{
	int i;

	for (i = 0; i < ctx->ndevs; i++) {
		if (ctx->pds[i])
			ibv_dealloc_pd(ctx->pds[i]);
		ctx->pds[i] = NULL;
		ibv_close_device(ctx->devs[i]);
	}
	ctx->ndevs = 0;
	ctx->nnics = 0;
}
