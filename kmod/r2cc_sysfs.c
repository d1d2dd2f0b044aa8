// SPDX-License-Identifier: GPL-2.0-only
/*
 * sysfs: /sys/kernel/r2cc/ holds the global counters and, per RDMA device,
 * devices/<name>/ports/<n>/ with the port's reported state and counters.
 * One value per file; see Documentation/ABI/testing/sysfs-kernel-r2cc.
 *
 * A device's memory (ports included) lives until the last of its kobjects
 * is released: each port kobject holds a reference on the device's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/sysfs.h>

#include "r2cc.h"

static struct kobject *r2cc_kobj, *r2cc_devices_kobj;

/* ---------------------------------------------------------- global */

#define R2CC_GLOBAL_ATTR(_name, _fmt, _expr)				\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, _fmt "\n", _expr);			\
}									\
static struct kobj_attribute r2cc_attr_##_name = __ATTR_RO(_name)

R2CC_GLOBAL_ATTR(subscribers, "%u", r2cc_stat_subscribers());
R2CC_GLOBAL_ATTR(events_emitted, "%llu", r2cc_stat_emitted());
R2CC_GLOBAL_ATTR(events_delivered, "%llu", r2cc_stat_delivered());
R2CC_GLOBAL_ATTR(events_dropped, "%llu", r2cc_stat_dropped());
R2CC_GLOBAL_ATTR(subscribers_refused, "%llu", r2cc_stat_refused());

static struct attribute *r2cc_global_attrs[] = {
	&r2cc_attr_subscribers.attr,
	&r2cc_attr_events_emitted.attr,
	&r2cc_attr_events_delivered.attr,
	&r2cc_attr_events_dropped.attr,
	&r2cc_attr_subscribers_refused.attr,
	NULL,
};

static const struct attribute_group r2cc_global_group = {
	.attrs = r2cc_global_attrs,
};

/* ---------------------------------------------------------- ports */

struct r2cc_port_attribute {
	struct attribute attr;
	u64 (*get)(const struct r2cc_port *p);
};

static ssize_t r2cc_port_attr_show(struct kobject *kobj,
				   struct attribute *attr, char *buf)
{
	struct r2cc_port *p = container_of(kobj, struct r2cc_port, kobj);
	struct r2cc_port_attribute *pa =
		container_of(attr, struct r2cc_port_attribute, attr);
	u64 v;

	mutex_lock(&r2cc_lock);
	v = pa->get(p);
	mutex_unlock(&r2cc_lock);
	return sysfs_emit(buf, "%llu\n", v);
}

static const char * const r2cc_state_names[] = {
	[R2CC_PORT_NOP] = "NOP",
	[R2CC_PORT_DOWN] = "DOWN",
	[R2CC_PORT_INIT] = "INIT",
	[R2CC_PORT_ARMED] = "ARMED",
	[R2CC_PORT_ACTIVE] = "ACTIVE",
	[R2CC_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
};

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *a,
			  char *buf)
{
	struct r2cc_port *p = container_of(kobj, struct r2cc_port, kobj);
	u8 s;

	mutex_lock(&r2cc_lock);
	s = p->state;
	mutex_unlock(&r2cc_lock);
	return sysfs_emit(buf, "%s\n", s < ARRAY_SIZE(r2cc_state_names) ?
			  r2cc_state_names[s] : "UNKNOWN");
}

#define R2CC_PORT_ATTR(_name, _expr)					\
static u64 r2cc_get_##_name(const struct r2cc_port *p)			\
{									\
	return _expr;							\
}									\
static struct r2cc_port_attribute r2cc_port_attr_##_name = {		\
	.attr = { .name = __stringify(_name), .mode = 0444 },		\
	.get = r2cc_get_##_name,					\
}

R2CC_PORT_ATTR(state_num, p->state);
R2CC_PORT_ATTR(phys_state, p->phys_state);
R2CC_PORT_ATTR(bandwidth_mbps, p->bandwidth_mbps);
R2CC_PORT_ATTR(ifindex, p->ifindex);
R2CC_PORT_ATTR(down_events, p->down_events);
R2CC_PORT_ATTR(up_events, p->up_events);
R2CC_PORT_ATTR(flaps, p->flaps);
R2CC_PORT_ATTR(last_change_ns, p->last_change_ns);
R2CC_PORT_ATTR(down_time_ms, r2cc_down_time_ms(p));
R2CC_PORT_ATTR(generation, p->generation);
R2CC_PORT_ATTR(reason, p->reason);
R2CC_PORT_ATTR(incarnation, p->incarnation);
R2CC_PORT_ATTR(degraded, p->degraded);
R2CC_PORT_ATTR(error_rate, p->error_rate);
R2CC_PORT_ATTR(errors, p->err_total);
R2CC_PORT_ATTR(error_counters, p->nerr);

/*
 * Per-port thresholds of r2cc_health.c, read-write: 0 means the module
 * parameter of the same name.
 */
static u32 *r2cc_rate_field(struct r2cc_port *p, struct kobj_attribute *a);

static ssize_t r2cc_rate_show(struct kobject *kobj, struct kobj_attribute *a,
			      char *buf)
{
	struct r2cc_port *p = container_of(kobj, struct r2cc_port, kobj);

	return sysfs_emit(buf, "%u\n", READ_ONCE(*r2cc_rate_field(p, a)));
}

static ssize_t r2cc_rate_store(struct kobject *kobj, struct kobj_attribute *a,
			       const char *buf, size_t len)
{
	struct r2cc_port *p = container_of(kobj, struct r2cc_port, kobj);
	u32 v;
	int ret = kstrtou32(buf, 0, &v);

	if (ret)
		return ret;
	mutex_lock(&r2cc_lock);
	*r2cc_rate_field(p, a) = v;
	mutex_unlock(&r2cc_lock);
	return len;
}

static struct kobj_attribute r2cc_port_attr_degrade_rate =
	__ATTR(degrade_rate, 0644, r2cc_rate_show, r2cc_rate_store);
static struct kobj_attribute r2cc_port_attr_recover_rate =
	__ATTR(recover_rate, 0644, r2cc_rate_show, r2cc_rate_store);

static u32 *r2cc_rate_field(struct r2cc_port *p, struct kobj_attribute *a)
{
	return a == &r2cc_port_attr_degrade_rate ? &p->degrade_rate :
						   &p->recover_rate;
}

/*
 * "state" is text; the kobj_attribute wrapper below is dispatched by
 * r2cc_port_sysfs_show like the numeric ones.
 */
static struct kobj_attribute r2cc_port_attr_state = __ATTR_RO(state);

static ssize_t r2cc_port_sysfs_show(struct kobject *kobj,
				    struct attribute *attr, char *buf)
{
	if (attr == &r2cc_port_attr_state.attr)
		return state_show(kobj, &r2cc_port_attr_state, buf);
	if (attr == &r2cc_port_attr_degrade_rate.attr ||
	    attr == &r2cc_port_attr_recover_rate.attr)
		return r2cc_rate_show(kobj, container_of(attr,
				      struct kobj_attribute, attr), buf);
	return r2cc_port_attr_show(kobj, attr, buf);
}

static ssize_t r2cc_port_sysfs_store(struct kobject *kobj,
				     struct attribute *attr, const char *buf,
				     size_t len)
{
	if (attr == &r2cc_port_attr_degrade_rate.attr ||
	    attr == &r2cc_port_attr_recover_rate.attr)
		return r2cc_rate_store(kobj, container_of(attr,
				       struct kobj_attribute, attr), buf, len);
	return -EIO;
}

static const struct sysfs_ops r2cc_port_sysfs_ops = {
	.show = r2cc_port_sysfs_show,
	.store = r2cc_port_sysfs_store,
};

static struct attribute *r2cc_port_attrs[] = {
	&r2cc_port_attr_state.attr,
	&r2cc_port_attr_state_num.attr,
	&r2cc_port_attr_phys_state.attr,
	&r2cc_port_attr_bandwidth_mbps.attr,
	&r2cc_port_attr_ifindex.attr,
	&r2cc_port_attr_down_events.attr,
	&r2cc_port_attr_up_events.attr,
	&r2cc_port_attr_flaps.attr,
	&r2cc_port_attr_last_change_ns.attr,
	&r2cc_port_attr_down_time_ms.attr,
	&r2cc_port_attr_generation.attr,
	&r2cc_port_attr_reason.attr,
	&r2cc_port_attr_incarnation.attr,
	&r2cc_port_attr_degraded.attr,
	&r2cc_port_attr_error_rate.attr,
	&r2cc_port_attr_errors.attr,
	&r2cc_port_attr_error_counters.attr,
	&r2cc_port_attr_degrade_rate.attr,
	&r2cc_port_attr_recover_rate.attr,
	NULL,
};
ATTRIBUTE_GROUPS(r2cc_port);

static void r2cc_port_release(struct kobject *kobj)
{
	struct r2cc_port *p = container_of(kobj, struct r2cc_port, kobj);

	kobject_put(&p->dev->kobj);
}

const struct kobj_type r2cc_port_ktype = {
	.release = r2cc_port_release,
	.sysfs_ops = &r2cc_port_sysfs_ops,
	.default_groups = r2cc_port_groups,
};

/* ---------------------------------------------------------- devices */

static ssize_t index_show(struct kobject *kobj, struct kobj_attribute *a,
			  char *buf)
{
	struct r2cc_dev *dev = container_of(kobj, struct r2cc_dev, kobj);

	return sysfs_emit(buf, "%u\n", dev->index);
}

static struct kobj_attribute r2cc_dev_attr_index = __ATTR_RO(index);

static struct attribute *r2cc_dev_attrs[] = {
	&r2cc_dev_attr_index.attr,
	NULL,
};
ATTRIBUTE_GROUPS(r2cc_dev);

static void r2cc_dev_release(struct kobject *kobj)
{
	struct r2cc_dev *dev = container_of(kobj, struct r2cc_dev, kobj);
	u32 i;

	for (i = 0; i < dev->nports; i++)
		mutex_destroy(&dev->ports[i].sample_lock);
	kfree(dev);
}

const struct kobj_type r2cc_dev_ktype = {
	.release = r2cc_dev_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = r2cc_dev_groups,
};

/* On failure @dev has been freed. */
int r2cc_sysfs_add_dev(struct r2cc_dev *dev)
{
	u32 i;
	int ret;

	ret = kobject_init_and_add(&dev->kobj, &r2cc_dev_ktype,
				   r2cc_devices_kobj, "%s", dev->name);
	if (ret)
		goto err_dev;
	dev->ports_kobj = kobject_create_and_add("ports", &dev->kobj);
	if (!dev->ports_kobj) {
		ret = -ENOMEM;
		goto err_dev;
	}
	for (i = 0; i < dev->nports; i++) {
		kobject_get(&dev->kobj);
		ret = kobject_init_and_add(&dev->ports[i].kobj,
					   &r2cc_port_ktype, dev->ports_kobj,
					   "%u", dev->ports[i].num);
		if (ret) {
			/* This one and the ones before go with their refs. */
			kobject_put(&dev->ports[i].kobj);
			while (i--)
				kobject_put(&dev->ports[i].kobj);
			goto err_ports;
		}
	}
	return 0;

err_ports:
	kobject_put(dev->ports_kobj);
err_dev:
	kobject_put(&dev->kobj);
	return ret;
}

/* The directories go now, the objects with their last reference. */
void r2cc_sysfs_del_dev(struct r2cc_dev *dev)
{
	u32 i;

	for (i = 0; i < dev->nports; i++) {
		kobject_del(&dev->ports[i].kobj);
		kobject_put(&dev->ports[i].kobj);
	}
	kobject_del(dev->ports_kobj);
	kobject_put(dev->ports_kobj);
	kobject_del(&dev->kobj);
	kobject_put(&dev->kobj);
}

int r2cc_sysfs_init(void)
{
	int ret;

	r2cc_kobj = kobject_create_and_add("r2cc", kernel_kobj);
	if (!r2cc_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(r2cc_kobj, &r2cc_global_group);
	if (ret)
		goto err;
	r2cc_devices_kobj = kobject_create_and_add("devices", r2cc_kobj);
	if (!r2cc_devices_kobj) {
		ret = -ENOMEM;
		goto err;
	}
	return 0;
err:
	kobject_put(r2cc_kobj);
	return ret;
}

void r2cc_sysfs_exit(void)
{
	kobject_put(r2cc_devices_kobj);
	kobject_put(r2cc_kobj);
}
