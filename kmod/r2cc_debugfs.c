// SPDX-License-Identifier: GPL-2.0-only
/*
 * debugfs (root only): fault injection for drills and tests of paths real
 * soft-RoCE cannot reach.
 *
 * r2cc/fail_query: write "DEV_INDEX PORT COUNT" to make the next COUNT
 * queries of that port fail, as a dying HCA's would.
 *
 * r2cc/fatal: write "DEV_INDEX" to hand that device's event handler
 * IB_EVENT_DEVICE_FATAL, as its driver would on a catastrophic error
 * (rxe never raises one).  The device stays fatal until it goes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/uaccess.h>

#include "r2cc.h"

static struct dentry *r2cc_debugfs_dir;

static ssize_t r2cc_fail_query_write(struct file *file,
				     const char __user *ubuf, size_t len,
				     loff_t *off)
{
	unsigned int dev, port, n;
	char buf[48];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %u %u", &dev, &port, &n) != 3 || n > 1000)
		return -EINVAL;
	ret = r2cc_fail_queries(dev, port, n);
	return ret ? ret : len;
}

static const struct file_operations r2cc_fail_query_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = r2cc_fail_query_write,
	.llseek = noop_llseek,
};

static ssize_t r2cc_fatal_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *off)
{
	unsigned int dev;
	int ret;

	ret = kstrtouint_from_user(ubuf, len, 10, &dev);
	if (ret)
		return ret;
	ret = r2cc_fail_device(dev);
	return ret ? ret : len;
}

static const struct file_operations r2cc_fatal_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = r2cc_fatal_write,
	.llseek = noop_llseek,
};

void r2cc_debugfs_init(void)
{
	/* debugfs failures are not errors: the module works without it. */
	r2cc_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("fail_query", 0200, r2cc_debugfs_dir, NULL,
			    &r2cc_fail_query_fops);
	debugfs_create_file("fatal", 0200, r2cc_debugfs_dir, NULL,
			    &r2cc_fatal_fops);
}

void r2cc_debugfs_exit(void)
{
	debugfs_remove_recursive(r2cc_debugfs_dir);
}
