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

/* Parse an unsigned module parameter in [@min, @max] into *@n. */
static int r2cc_param_uint(const char *val, unsigned int min,
			   unsigned int max, unsigned int *n)
{
	int ret = kstrtouint(val, 0, n);

	if (ret)
		return ret;
	return *n < min || *n > max ? -EINVAL : 0;
}

unsigned int r2cc_queue_len = 4096;
static int r2cc_queue_len_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = r2cc_param_uint(val, 2, 1U << 20, &n);

	if (!ret)
		*(unsigned int *)kp->arg = n;
	return ret;
}

static const struct kernel_param_ops r2cc_queue_len_ops = {
	.set = r2cc_queue_len_set,
	.get = param_get_uint,
};

/* Read-only once loaded: the ring is allocated at load. */
module_param_cb(queue_len, &r2cc_queue_len_ops, &r2cc_queue_len, 0444);
MODULE_PARM_DESC(queue_len, "records kept for readers; a reader further behind loses the oldest (2..1048576, default 4096)");

/*
 * Each open of /dev/r2cc costs kernel memory (charged to the opener's
 * cgroup); users without CAP_NET_ADMIN may hold at most this many.
 */
unsigned int r2cc_max_user_subscribers = 64;
module_param_named(max_user_subscribers, r2cc_max_user_subscribers, uint, 0644);
MODULE_PARM_DESC(max_user_subscribers, "open files of /dev/r2cc per user without CAP_NET_ADMIN (default 64)");

unsigned int r2cc_damping_ms;
static int r2cc_damping_ms_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = r2cc_param_uint(val, 0, R2CC_DAMPING_MS_MAX, &n);

	if (ret)
		return ret;
	WRITE_ONCE(r2cc_damping_ms, n);
	r2cc_damping_changed();	/* ups held now follow the new value */
	return 0;
}

static const struct kernel_param_ops r2cc_damping_ms_ops = {
	.set = r2cc_damping_ms_set,
	.get = param_get_uint,
};

module_param_cb(damping_ms, &r2cc_damping_ms_ops, &r2cc_damping_ms, 0644);
MODULE_PARM_DESC(damping_ms, "report a port up only after it held this long (ms, 0 = off, at most 600000)");

unsigned int r2cc_poll_ms = 1000;
static int r2cc_poll_ms_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = r2cc_param_uint(val, 0, R2CC_POLL_MS_MAX, &n);

	if (!ret)
		WRITE_ONCE(r2cc_poll_ms, n);
	return ret;
}

static const struct kernel_param_ops r2cc_poll_ms_ops = {
	.set = r2cc_poll_ms_set,
	.get = param_get_uint,
};

module_param_cb(poll_ms, &r2cc_poll_ms_ops, &r2cc_poll_ms, 0644);
MODULE_PARM_DESC(poll_ms, "read every port's error counters this often, for DEGRADED (ms, 0 = off, at most 60000, default 1000)");

/*
 * Off by default: a RoCE port's query takes RTNL, and rxe on 6.1 logs a
 * line per query of a netdev of unknown speed (virtio).
 */
bool r2cc_poll_query;
module_param_named(poll_query, r2cc_poll_query, bool, 0644);
MODULE_PARM_DESC(poll_query, "re-query every port at each poll too, to find failing queries and speed changes that raise no event (default off)");

/*
 * Off by default until the testbed shows it changes nothing else
 * (r2cc_ports.c, r2cc_carrier_lost()).
 */
bool r2cc_carrier_down;
module_param_named(carrier_down, r2cc_carrier_down, bool, 0644);
MODULE_PARM_DESC(carrier_down, "report a RoCE port DOWN from its netdev's carrier loss, before any query (default off)");

unsigned int r2cc_degrade_rate = 2;
module_param_named(degrade_rate, r2cc_degrade_rate, uint, 0644);
MODULE_PARM_DESC(degrade_rate, "sequence errors per second (lost packets; see count_timeouts) that make an ACTIVE port DEGRADED, as the mean of 3 polls (default 2, 0 = early warning off)");

unsigned int r2cc_recover_rate = 1;
module_param_named(recover_rate, r2cc_recover_rate, uint, 0644);
MODULE_PARM_DESC(recover_rate, "errors per second at or under which a DEGRADED port RECOVERS after 5 polls (default 1)");

/*
 * Off: retries, duplicates and ACK timeouts rise on a congested link as on
 * a lossy one (r2cc_health.c); sequence errors alone judge a port.
 */
bool r2cc_count_timeouts;
module_param_named(count_timeouts, r2cc_count_timeouts, bool, 0644);
MODULE_PARM_DESC(count_timeouts, "count retries, duplicate requests and ACK timeouts toward degrade_rate, not only sequence errors (congestion raises them too; default off)");

static int __init r2cc_init(void)
{
	int ret;

	r2cc_wq = alloc_workqueue("r2cc", WQ_UNBOUND, 0);
	if (!r2cc_wq)
		return -ENOMEM;
	ret = r2cc_events_init();
	if (ret)
		goto err_wq;
	ret = r2cc_state_init();
	if (ret)
		goto err_events;
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
	r2cc_debugfs_init();
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
err_events:
	r2cc_events_exit();
err_wq:
	destroy_workqueue(r2cc_wq);
	return ret;
}

static void __exit r2cc_exit(void)
{
	r2cc_debugfs_exit();
	r2cc_ports_exit();
	r2cc_genl_exit();
	r2cc_cdev_exit();
	destroy_workqueue(r2cc_wq);
	r2cc_sysfs_exit();
	r2cc_state_exit();
	r2cc_events_exit();
	pr_info("unloaded\n");
}

module_init(r2cc_init);
module_exit(r2cc_exit);

MODULE_DESCRIPTION("RDMA port failure notification for fault-tolerant collectives");
MODULE_LICENSE("GPL");
MODULE_VERSION(R2CC_MODULE_VERSION);
MODULE_SOFTDEP("pre: ib_core");
