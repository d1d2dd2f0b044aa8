// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc.ko: RDMA port failure notification.
 *
 * Placeholder: it loads, says which ABI it speaks and unloads.  The
 * ib_client, /dev/r2cc, state page, sysfs, tracepoints and netlink family
 * grow here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/r2cc.h>

static int __init r2cc_init(void)
{
	pr_info("loaded, ABI version %u\n", R2CC_ABI_VERSION);
	return 0;
}

static void __exit r2cc_exit(void)
{
	pr_info("unloaded\n");
}

module_init(r2cc_init);
module_exit(r2cc_exit);

MODULE_DESCRIPTION("RDMA port failure notification for fault-tolerant collectives");
MODULE_LICENSE("GPL");
