// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fabric discovery in a testbed node: every rxe port, with its netdev,
 * RoCEv2 IPv4 GID, bandwidth and state, known as a software device with
 * its longer ACK timeout; R2CC_NICS selections; R2CC_IB_TIMEOUT.
 *
 *   fabric NODE_INDEX NICS
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <r2cc/r2cc.h>

#include "tap.h"

static int create(const char *nics, struct r2cc_ctx **ctx)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o), .nics = nics,
				   .flags = R2CC_CTX_NO_KMOD };

	return r2cc_ctx_create(&o, ctx);
}

int main(int argc, char **argv)
{
	struct r2cc_nic_info info = { .size = sizeof(info) };
	struct r2cc_ctx *ctx;
	int node, nics, k, ret;

	if (argc != 3)
		return 2;
	node = atoi(argv[1]);
	nics = atoi(argv[2]);
	tap_plan(7 * nics + 9);
	ret = create(NULL, &ctx);
	tap_ok(ret == 0, "context over every NIC (%d)", ret);
	if (ret)
		return tap_done();
	tap_ok(r2cc_nic_count(ctx) == nics, "%d NICs", r2cc_nic_count(ctx));
	for (k = 0; k < nics; k++) {
		char dev[16], ifname[16], addr[INET_ADDRSTRLEN] = "";

		snprintf(dev, sizeof(dev), "rxe%d", k);
		snprintf(ifname, sizeof(ifname), "eth%d", k);
		ret = r2cc_nic_info(ctx, k, &info);
		tap_ok(ret == 0 && !strcmp(info.dev_name, dev) && info.port == 1,
		       "NIC %d is %s port 1", k, info.dev_name);
		tap_ok(info.link_layer == R2CC_LINK_ETHERNET &&
		       !strcmp(info.netdev, ifname), "%s: RoCE on %s", dev,
		       info.netdev);
		inet_ntop(AF_INET, info.gid + 12, addr, sizeof(addr));
		{
			char want[32];

			snprintf(want, sizeof(want), "198.18.%d.%d", k, node + 1);
			tap_ok(info.gid_index >= 0 && !strcmp(addr, want),
			       "%s: RoCEv2 GID %d is ::ffff:%s", dev,
			       info.gid_index, addr);
		}
		tap_ok(info.bandwidth_mbps == 2000,
		       "%s: %llu Mbit/s (rxe on virtio: SDR x1)", dev,
		       (unsigned long long)info.bandwidth_mbps);
		tap_ok(info.state == R2CC_NIC_ACTIVE, "%s: ACTIVE", dev);
		tap_ok(info.pci_addr[0] == '\0' && info.numa_node == -1,
		       "%s: no PCI function of its own (soft-RoCE)", dev);
		tap_ok(info.flags == R2CC_NIC_SOFTWARE && info.ack_timeout == 17,
		       "%s: a software device (flags %#x), ACK timeout 2^%u",
		       dev, info.flags, info.ack_timeout);
	}
	tap_ok(r2cc_nic_info(ctx, nics, &info) == -EINVAL &&
	       r2cc_nic_info(ctx, -1, &info) == -EINVAL,
	       "out-of-range index: EINVAL");
	info.size = 3;
	tap_ok(r2cc_nic_info(ctx, 0, &info) == -EINVAL, "wrong size: EINVAL");
	r2cc_ctx_destroy(ctx);

	ret = create("rxe1", &ctx);
	info.size = sizeof(info);
	tap_ok(ret == 0 && r2cc_nic_count(ctx) == 1 &&
	       !r2cc_nic_info(ctx, 0, &info) && !strcmp(info.dev_name, "rxe1"),
	       "R2CC_NICS=rxe1 keeps rxe1 only");
	if (!ret)
		r2cc_ctx_destroy(ctx);
	ret = create("^rxe0", &ctx);
	tap_ok(ret == 0 && r2cc_nic_count(ctx) == nics - 1,
	       "R2CC_NICS=^rxe0 leaves rxe0 out");
	if (!ret)
		r2cc_ctx_destroy(ctx);
	setenv("R2CC_NICS", "rxe0:1", 1);
	ret = create(NULL, &ctx);
	tap_ok(ret == 0 && r2cc_nic_count(ctx) == 1,
	       "the R2CC_NICS environment variable is read");
	if (!ret)
		r2cc_ctx_destroy(ctx);
	ret = create("rxe9", &ctx);
	tap_ok(ret == -ENODEV, "no such NIC: ENODEV");
	setenv("R2CC_IB_TIMEOUT", "14", 1);
	ret = create(NULL, &ctx);
	tap_ok(ret == 0 && !r2cc_nic_info(ctx, 0, &info) &&
	       info.ack_timeout == 14,
	       "R2CC_IB_TIMEOUT=14 sets the ACK timeout (2^%u)",
	       info.ack_timeout);
	if (!ret)
		r2cc_ctx_destroy(ctx);
	return tap_done();
}
