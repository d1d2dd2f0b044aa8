// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc.ko: RDMA port failure notification.
 *
 * Hears every RDMA port and device event first and hands it to userspace
 * through /dev/r2cc (records, poll, a mmap'able state page), sysfs,
 * tracepoints and generic netlink.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>

#include "r2cc.h"

/* Ports, devices, the state page and record order: see r2cc.h. */
DEFINE_MUTEX(r2cc_lock);
struct workqueue_struct *r2cc_wq;

unsigned int r2cc_queue_len = 4096;
static int r2cc_queue_len_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (n < 2 || n > 1U << 20)
		return -EINVAL;
	*(unsigned int *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops r2cc_queue_len_ops = {
	.set = r2cc_queue_len_set,
	.get = param_get_uint,
};

/* Read-only once loaded: queues are sized at open. */
module_param_cb(queue_len, &r2cc_queue_len_ops, &r2cc_queue_len, 0444);
MODULE_PARM_DESC(queue_len, "records per subscriber queue (2..1048576, default 4096)");

unsigned int r2cc_damping_ms;
module_param_named(damping_ms, r2cc_damping_ms, uint, 0644);
MODULE_PARM_DESC(damping_ms, "report a port up only after it held this long (ms, 0 = off)");

static int __init r2cc_init(void)
{
	int ret;

	r2cc_wq = alloc_workqueue("r2cc", WQ_UNBOUND, 0);
	if (!r2cc_wq)
		return -ENOMEM;
	ret = r2cc_state_init();
	if (ret)
		goto err_wq;
	ret = r2cc_sysfs_init();
	if (ret)
		goto err_state;
	ret = r2cc_cdev_init();
	if (ret)
		goto err_sysfs;
	ret = r2cc_genl_init();
	if (ret)
		goto err_cdev;
	ret = r2cc_ports_init();
	if (ret)
		goto err_genl;
	pr_info("loaded, ABI version %u\n", R2CC_ABI_VERSION);
	return 0;

err_genl:
	r2cc_genl_exit();
err_cdev:
	r2cc_cdev_exit();
err_sysfs:
	r2cc_sysfs_exit();
err_state:
	r2cc_state_exit();
err_wq:
	destroy_workqueue(r2cc_wq);
	return ret;
}

static void __exit r2cc_exit(void)
{
	r2cc_ports_exit();
	r2cc_genl_exit();
	r2cc_cdev_exit();
	destroy_workqueue(r2cc_wq);
	r2cc_sysfs_exit();
	r2cc_state_exit();
	pr_info("unloaded\n");
}

module_init(r2cc_init);
module_exit(r2cc_exit);

MODULE_DESCRIPTION("RDMA port failure notification for fault-tolerant collectives");
MODULE_LICENSE("GPL");
MODULE_SOFTDEP("pre: ib_core");
