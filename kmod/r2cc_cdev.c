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

static int r2cc_open(struct inode *inode, struct file *file)
{
	/* noaudit: an ordinary reader is no denial worth logging. */
	bool admin = ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN);
	struct r2cc_sub *sub = r2cc_sub_alloc(admin);

	if (IS_ERR(sub))
		return PTR_ERR(sub);
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
 * Copy an ioctl argument that starts with a __u32 size, the caller's
 * sizeof(): copy_struct_from_user() rules (a shorter structure reads as if
 * its missing tail were zero, a longer one must have a zero tail, -E2BIG
 * otherwise), and no shorter than the structure's first version @min.
 * Returns the caller's size, or a negative errno.
 */
static long r2cc_copy_arg(void *karg, size_t ksize, size_t min,
			  unsigned long uarg)
{
	u32 size;
	int ret;

	if (get_user(size, (u32 __user *)uarg))
		return -EFAULT;
	if (size < min)
		return -EINVAL;
	ret = copy_struct_from_user(karg, ksize, (void __user *)uarg, size);
	if (ret)
		return ret;
	return size;
}

/* The caller's structure is _IOC_SIZE(cmd) bytes: write what fits. */
static long r2cc_ioc_version(unsigned int cmd, unsigned long uarg)
{
	struct r2cc_version v = {
		.abi = R2CC_ABI_VERSION,
		.event_size = sizeof(struct r2cc_event),
		.port_info_size = sizeof(struct r2cc_port_info),
		.state_size = r2cc_state_size(),
		.queue_len = r2cc_queue_len,
		.size = sizeof(v),
	};
	size_t usize = _IOC_SIZE(cmd);

	if (usize < R2CC_VERSION_SIZE_VER0)
		return -EINVAL;
	if (copy_to_user((void __user *)uarg, &v, min(usize, sizeof(v))))
		return -EFAULT;
	return 0;
}

static long r2cc_ioc_snapshot(struct r2cc_sub *sub, unsigned long uarg)
{
	struct r2cc_port_info *info = NULL;
	struct r2cc_snapshot snap;
	u32 max, count;
	long usize, ret;

	usize = r2cc_copy_arg(&snap, sizeof(snap), R2CC_SNAPSHOT_SIZE_VER0,
			      uarg);
	if (usize < 0)
		return usize;
	if (!r2cc_zero(snap.reserved, sizeof(snap.reserved)))
		return -EINVAL;
	if (snap.count && !snap.ports)
		return -EFAULT;
	max = min_t(u32, snap.count, R2CC_SNAPSHOT_MAX_PORTS);
	if (max) {
		info = kvcalloc(max, sizeof(*info), GFP_KERNEL_ACCOUNT);
		if (!info)
			return -ENOMEM;
	}
	r2cc_snapshot_fill(info, max, &count, &snap.seq);
	ret = 0;
	if (max && copy_to_user(u64_to_user_ptr(snap.ports), info,
				min(count, max) * sizeof(*info)))
		ret = -EFAULT;
	snap.count = count;
	if (!ret && copy_to_user((void __user *)uarg, &snap,
				 min_t(size_t, usize, sizeof(snap))))
		ret = -EFAULT;
	kvfree(info);
	/* Only a snapshot that is out moves the read position. */
	if (!ret)
		ret = r2cc_sub_skip_to(sub, snap.seq);
	return ret;
}

static long r2cc_ioc_filter(struct r2cc_sub *sub, unsigned long uarg)
{
	struct r2cc_filter f;
	long ret;

	ret = r2cc_copy_arg(&f, sizeof(f), R2CC_FILTER_SIZE_VER0, uarg);
	if (ret < 0)
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
	ret = r2cc_copy_arg(&inj, sizeof(inj), R2CC_INJECT_SIZE_VER0, uarg);
	if (ret < 0)
		return ret;
	if (inj.reserved0 || !r2cc_zero(inj.reserved, sizeof(inj.reserved)))
		return -EINVAL;
	return r2cc_inject(&inj);
}

/* @cmd is @known's command, whatever size it encodes. */
static bool r2cc_ioc_is(unsigned int cmd, unsigned int known)
{
	return _IOC_NR(cmd) == _IOC_NR(known) &&
	       _IOC_DIR(cmd) == _IOC_DIR(known);
}

/*
 * Dispatch on the command's number and direction, not its size: a caller
 * built with an older or newer header encodes another size in @cmd, and
 * the size rules above decide.
 */
static long r2cc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct r2cc_sub *sub = file->private_data;

	if (_IOC_TYPE(cmd) != R2CC_IOC_MAGIC)
		return -ENOTTY;
	if (r2cc_ioc_is(cmd, R2CC_IOC_VERSION))
		return r2cc_ioc_version(cmd, arg);
	if (r2cc_ioc_is(cmd, R2CC_IOC_SNAPSHOT))
		return r2cc_ioc_snapshot(sub, arg);
	if (r2cc_ioc_is(cmd, R2CC_IOC_SET_FILTER))
		return r2cc_ioc_filter(sub, arg);
	if (r2cc_ioc_is(cmd, R2CC_IOC_INJECT))
		return r2cc_ioc_inject(arg);
	return -ENOTTY;
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
	.mode = 0600,	/* udev's rule grants the rdma group read */
};

int r2cc_cdev_init(void)
{
	return misc_register(&r2cc_misc);
}

void r2cc_cdev_exit(void)
{
	misc_deregister(&r2cc_misc);
}
