// SPDX-License-Identifier: GPL-2.0-only
/*
 * /dev/r2cc: one subscriber per open file; read/poll over its queue,
 * ioctls, and mmap of the state page.  The misc device's fops hold a
 * reference on the module, so rmmod is refused while a file is open or
 * the state page is mapped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "r2cc.h"

#define R2CC_SNAPSHOT_MAX 4096	/* ports per snapshot call */

static int r2cc_open(struct inode *inode, struct file *file)
{
	struct r2cc_sub *sub = r2cc_sub_alloc();

	if (!sub)
		return -ENOMEM;
	file->private_data = sub;
	return nonseekable_open(inode, file);
}

static int r2cc_release(struct inode *inode, struct file *file)
{
	r2cc_sub_free(file->private_data);
	return 0;
}

static ssize_t r2cc_read(struct file *file, char __user *buf, size_t len,
			 loff_t *off)
{
	return r2cc_sub_read(file->private_data, buf, len,
			     file->f_flags & O_NONBLOCK);
}

static __poll_t r2cc_poll(struct file *file, poll_table *wait)
{
	return r2cc_sub_poll(file->private_data, file, wait);
}

static bool r2cc_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/*
 * Copy an ioctl argument that starts with a __u32 size: it must be exactly
 * the size this module knows (no older or newer layouts exist yet).
 */
static int r2cc_copy_arg(void *karg, size_t ksize, unsigned long uarg)
{
	u32 size;

	if (get_user(size, (u32 __user *)uarg))
		return -EFAULT;
	if (size != ksize)
		return -EINVAL;
	if (copy_from_user(karg, (void __user *)uarg, ksize))
		return -EFAULT;
	return 0;
}

static long r2cc_ioc_version(unsigned long uarg)
{
	struct r2cc_version v = {
		.abi = R2CC_ABI_VERSION,
		.event_size = sizeof(struct r2cc_event),
		.port_info_size = sizeof(struct r2cc_port_info),
		.state_size = r2cc_state_size(),
		.queue_len = r2cc_queue_len,
	};

	return copy_to_user((void __user *)uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long r2cc_ioc_snapshot(struct r2cc_sub *sub, unsigned long uarg)
{
	struct r2cc_port_info *info = NULL;
	struct r2cc_snapshot snap;
	u32 max, count;
	long ret;

	ret = r2cc_copy_arg(&snap, sizeof(snap), uarg);
	if (ret)
		return ret;
	if (!r2cc_zero(snap.reserved, sizeof(snap.reserved)))
		return -EINVAL;
	if (snap.count && !snap.ports)
		return -EFAULT;
	max = min_t(u32, snap.count, R2CC_SNAPSHOT_MAX);
	if (max) {
		info = kvcalloc(max, sizeof(*info), GFP_KERNEL);
		if (!info)
			return -ENOMEM;
	}
	r2cc_snapshot_fill(info, max, &count, &snap.seq);
	r2cc_sub_discard_upto(sub, snap.seq);
	ret = 0;
	if (max && copy_to_user(u64_to_user_ptr(snap.ports), info,
				min(count, max) * sizeof(*info)))
		ret = -EFAULT;
	snap.count = count;
	if (!ret && copy_to_user((void __user *)uarg, &snap, sizeof(snap)))
		ret = -EFAULT;
	kvfree(info);
	return ret;
}

static long r2cc_ioc_filter(struct r2cc_sub *sub, unsigned long uarg)
{
	struct r2cc_filter f;
	long ret;

	ret = r2cc_copy_arg(&f, sizeof(f), uarg);
	if (ret)
		return ret;
	if (!r2cc_zero(f.reserved, sizeof(f.reserved)) ||
	    f.ndevs > R2CC_FILTER_MAX_DEVS ||
	    (f.kinds & ~GENMASK_ULL(R2CC_EV_KIND_MAX, 1)))
		return -EINVAL;
	r2cc_sub_set_filter(sub, f.kinds, f.ndevs, f.devs);
	return 0;
}

static long r2cc_ioc_inject(unsigned long uarg)
{
	struct r2cc_inject inj;
	long ret;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	ret = r2cc_copy_arg(&inj, sizeof(inj), uarg);
	if (ret)
		return ret;
	if (inj.reserved0 || !r2cc_zero(inj.reserved, sizeof(inj.reserved)))
		return -EINVAL;
	return r2cc_inject(&inj);
}

static long r2cc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct r2cc_sub *sub = file->private_data;

	switch (cmd) {
	case R2CC_IOC_VERSION:
		return r2cc_ioc_version(arg);
	case R2CC_IOC_SNAPSHOT:
		return r2cc_ioc_snapshot(sub, arg);
	case R2CC_IOC_SET_FILTER:
		return r2cc_ioc_filter(sub, arg);
	case R2CC_IOC_INJECT:
		return r2cc_ioc_inject(arg);
	default:
		return -ENOTTY;
	}
}

static int r2cc_mmap(struct file *file, struct vm_area_struct *vma)
{
	return r2cc_state_mmap(file, vma);
}

static const struct file_operations r2cc_fops = {
	.owner = THIS_MODULE,
	.open = r2cc_open,
	.release = r2cc_release,
	.read = r2cc_read,
	.poll = r2cc_poll,
	.unlocked_ioctl = r2cc_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = r2cc_mmap,
};

static struct miscdevice r2cc_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = R2CC_DEVICE_NAME,
	.fops = &r2cc_fops,
	.mode = 0644,
};

int r2cc_cdev_init(void)
{
	return misc_register(&r2cc_misc);
}

void r2cc_cdev_exit(void)
{
	misc_deregister(&r2cc_misc);
}
