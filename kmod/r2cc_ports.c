// SPDX-License-Identifier: GPL-2.0-only
/*
 * Watching RDMA devices and ports.
 *
 * An ib_client sees every device come and go and registers an event
 * handler on each; a netdevice notifier catches carrier changes of the
 * netdevs under RoCE ports, whichever is first.  Handlers only note what
 * they saw and queue the port's work item: the work re-queries the port and
 * reports a transition if the state differs from the one last reported, so
 * duplicate, reordered or concurrent signals collapse into one record.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "compat.h"
#include "r2cc.h"

static LIST_HEAD(r2cc_devs);		/* under r2cc_lock and r2cc_devs_lock */
static DEFINE_SPINLOCK(r2cc_devs_lock);

struct r2cc_sample {
	bool ok;
	u8 state, phys_state, link_layer;
	u32 ifindex;
	u64 bandwidth_mbps;
};

/* Data rate of one lane in Mbit/s (after line coding). */
static u64 r2cc_lane_mbps(u16 speed)
{
	switch (speed) {
	case IB_SPEED_SDR:	return 2000;
	case IB_SPEED_DDR:	return 4000;
	case IB_SPEED_QDR:	return 8000;
	case IB_SPEED_FDR10:	return 10000;
	case IB_SPEED_FDR:	return 13636;
	case IB_SPEED_EDR:	return 25000;
	case IB_SPEED_HDR:	return 50000;
	case IB_SPEED_NDR:	return 100000;
	case R2CC_IB_SPEED_XDR:	return 200000;
	default:		return 0;
	}
}

static u32 r2cc_port_ifindex(struct ib_device *ibdev, u32 port)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	u32 ifindex = 0;

	if (!rdma_protocol_roce(ibdev, port))
		return 0;
	/* GID 0 of a RoCE port (the default GID) always names its netdev. */
	attr = rdma_get_gid_attr(ibdev, port, 0);
	if (IS_ERR(attr))
		return 0;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (!IS_ERR(ndev))
		ifindex = ndev->ifindex;
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
	return ifindex;
}

/* Query a port; may sleep and take RTNL, so never under r2cc_lock. */
static void r2cc_sample_port(struct r2cc_port *p, struct r2cc_sample *s)
{
	struct ib_device *ibdev = p->dev->ibdev;
	struct ib_port_attr attr;
	int width;

	memset(s, 0, sizeof(*s));
	if (ib_query_port(ibdev, p->num, &attr))
		return;
	width = ib_width_enum_to_int(attr.active_width);
	s->ok = true;
	s->state = attr.state;
	s->phys_state = attr.phys_state;
	s->link_layer = rdma_port_get_link_layer(ibdev, p->num);
	s->bandwidth_mbps = width > 0 ?
		r2cc_lane_mbps(attr.active_speed) * (u64)width : 0;
	s->ifindex = r2cc_port_ifindex(ibdev, p->num);
}

static void r2cc_fill(struct r2cc_event *ev, const struct r2cc_dev *dev,
		      const struct r2cc_port *p, u16 kind, u16 flags)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->flags = flags;
	ev->dev_index = dev->index;
	strscpy(ev->dev_name, dev->name, sizeof(ev->dev_name));
	if (p) {
		ev->port = p->num;
		ev->old_state = p->state;
		ev->new_state = p->state;
		ev->phys_state = p->phys_state;
		ev->ifindex = p->ifindex;
		ev->bandwidth_mbps = p->bandwidth_mbps;
	}
}

static void r2cc_emit_simple(struct r2cc_dev *dev, struct r2cc_port *p,
			     u16 kind, u16 flags)
{
	struct r2cc_event ev;

	r2cc_fill(&ev, dev, p, kind, flags);
	r2cc_emit(&ev);
}

/* Report @p moving to @state, if it is a change.  Under r2cc_lock. */
static void r2cc_port_report(struct r2cc_port *p, u8 state, u16 flags)
{
	u64 now = ktime_get_ns();
	struct r2cc_event ev;
	u8 old = p->state;
	u16 kind;

	lockdep_assert_held(&r2cc_lock);
	if (state == old)
		return;
	if (state == R2CC_PORT_ACTIVE)
		kind = R2CC_EV_PORT_UP;
	else if (old == R2CC_PORT_ACTIVE)
		kind = R2CC_EV_PORT_DOWN;
	else
		kind = R2CC_EV_PORT_CHANGE;

	/* Counters are about changes: the first sighting (from NOP) is none. */
	if (old == R2CC_PORT_NOP) {
		if (state != R2CC_PORT_ACTIVE)
			p->down_since_ns = now;
	} else if (kind == R2CC_EV_PORT_DOWN) {
		p->down_events++;
		p->down_since_ns = now;
	} else if (kind == R2CC_EV_PORT_UP) {
		p->up_events++;
		if (p->down_since_ns)
			p->down_time_ns += now - p->down_since_ns;
		p->down_since_ns = 0;
	}
	p->state = state;
	p->last_change_ns = now;
	p->generation++;
	r2cc_state_update(p, true);

	r2cc_fill(&ev, p->dev, p, kind, flags);
	ev.old_state = old;
	ev.time_ns = now;
	r2cc_emit(&ev);
}

/* A fresh sample of @p arrived; apply flap damping and report. */
static void r2cc_port_apply(struct r2cc_port *p, const struct r2cc_sample *s)
{
	lockdep_assert_held(&r2cc_lock);
	p->phys_state = s->phys_state;
	p->link_layer = s->link_layer;
	p->ifindex = s->ifindex;
	p->bandwidth_mbps = s->bandwidth_mbps;

	if (s->state == R2CC_PORT_ACTIVE && p->state != R2CC_PORT_ACTIVE &&
	    r2cc_damping_ms) {
		/* Report the up only once it has held for damping_ms. */
		if (!p->damping) {
			p->damping = true;
			mod_delayed_work(r2cc_wq, &p->damp_work,
					 msecs_to_jiffies(r2cc_damping_ms));
		}
		return;
	}
	if (s->state != R2CC_PORT_ACTIVE && p->damping) {
		p->damping = false;
		p->flaps++;
		/* Not _sync: the work takes r2cc_lock and rechecks. */
		cancel_delayed_work(&p->damp_work);
	}
	r2cc_port_report(p, s->state, 0);
}

/* Bit of r2cc_port.pending (kinds start at 1): the port reported an error. */
#define R2CC_PENDING_DOWN 0

static const u16 r2cc_port_kinds[] = {
	R2CC_EV_GID_CHANGE, R2CC_EV_LID_CHANGE, R2CC_EV_PKEY_CHANGE,
	R2CC_EV_CLIENT_REREGISTER, R2CC_EV_SM_CHANGE,
};

static void r2cc_port_work(struct work_struct *work)
{
	struct r2cc_port *p = container_of(work, struct r2cc_port, work);
	struct r2cc_dev *dev = p->dev;
	struct r2cc_sample s;
	unsigned long pending;
	int i;

	r2cc_sample_port(p, &s);
	mutex_lock(&r2cc_lock);
	if (!dev->live || dev->removing)
		goto out;
	pending = xchg(&p->pending, 0);
	for (i = 0; i < ARRAY_SIZE(r2cc_port_kinds); i++)
		if (pending & BIT(r2cc_port_kinds[i]))
			r2cc_emit_simple(dev, p, r2cc_port_kinds[i], 0);
	if (s.ok && (pending & BIT(R2CC_PENDING_DOWN)) &&
	    s.state == R2CC_PORT_ACTIVE &&
	    (p->state == R2CC_PORT_ACTIVE || p->damping)) {
		/*
		 * The port went down and came back before this work looked:
		 * a flap shorter than our latency is still a flap.  So is one
		 * while an up is held back (the port still reads DOWN here):
		 * it counts, and the hold starts again.
		 */
		struct r2cc_sample down = s;

		down.state = R2CC_PORT_DOWN;
		r2cc_port_apply(p, &down);
	}
	if (s.ok)
		r2cc_port_apply(p, &s);
out:
	mutex_unlock(&r2cc_lock);
}

static void r2cc_damp_work(struct work_struct *work)
{
	struct r2cc_port *p = container_of(to_delayed_work(work),
					   struct r2cc_port, damp_work);
	struct r2cc_sample s;

	r2cc_sample_port(p, &s);
	mutex_lock(&r2cc_lock);
	if (p->dev->live && !p->dev->removing && p->damping) {
		p->damping = false;
		if (s.ok && s.state == R2CC_PORT_ACTIVE)
			r2cc_port_report(p, R2CC_PORT_ACTIVE, R2CC_EVF_DAMPED);
		else
			p->flaps++;
	}
	mutex_unlock(&r2cc_lock);
}

static void r2cc_queue_ports(struct r2cc_dev *dev)
{
	u32 i;

	for (i = 0; i < dev->nports; i++)
		queue_work(r2cc_wq, &dev->ports[i].work);
}

static void r2cc_dev_work(struct work_struct *work)
{
	struct r2cc_dev *dev = container_of(work, struct r2cc_dev, dev_work);

	mutex_lock(&r2cc_lock);
	if (dev->live && !dev->removing &&
	    test_and_clear_bit(R2CC_EV_DEVICE_FATAL, &dev->dev_pending))
		r2cc_emit_simple(dev, NULL, R2CC_EV_DEVICE_FATAL, 0);
	mutex_unlock(&r2cc_lock);
	r2cc_queue_ports(dev);
}

/* May be called in atomic context: note the event, defer the work. */
static void r2cc_event_handler(struct ib_event_handler *h, struct ib_event *e)
{
	struct r2cc_dev *dev = container_of(h, struct r2cc_dev, handler);
	struct r2cc_port *p;
	u16 kind = 0;
	u32 num;

	switch (e->event) {
	case IB_EVENT_PORT_ERR:
		kind = R2CC_PENDING_DOWN;
		break;
	case IB_EVENT_PORT_ACTIVE:
		break;
	case IB_EVENT_GID_CHANGE:
		kind = R2CC_EV_GID_CHANGE;
		break;
	case IB_EVENT_LID_CHANGE:
		kind = R2CC_EV_LID_CHANGE;
		break;
	case IB_EVENT_PKEY_CHANGE:
		kind = R2CC_EV_PKEY_CHANGE;
		break;
	case IB_EVENT_CLIENT_REREGISTER:
		kind = R2CC_EV_CLIENT_REREGISTER;
		break;
	case IB_EVENT_SM_CHANGE:
		kind = R2CC_EV_SM_CHANGE;
		break;
	case IB_EVENT_DEVICE_FATAL:
		set_bit(R2CC_EV_DEVICE_FATAL, &dev->dev_pending);
		queue_work(r2cc_wq, &dev->dev_work);
		return;
	default:
		return;
	}
	num = e->element.port_num;
	if (num < 1 || num > dev->nports)
		return;
	p = &dev->ports[num - 1];
	if (e->event != IB_EVENT_PORT_ACTIVE)
		set_bit(kind, &p->pending);
	queue_work(r2cc_wq, &p->work);
}

static int r2cc_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct ib_device *ibdev;
	struct r2cc_dev *dev;

	if (event != NETDEV_UP && event != NETDEV_DOWN &&
	    event != NETDEV_CHANGE)
		return NOTIFY_DONE;
	ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev)
		return NOTIFY_DONE;
	spin_lock(&r2cc_devs_lock);
	list_for_each_entry(dev, &r2cc_devs, list)
		if (dev->ibdev == ibdev && !dev->removing)
			r2cc_queue_ports(dev);
	spin_unlock(&r2cc_devs_lock);
	ib_device_put(ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block r2cc_netdev_nb = {
	.notifier_call = r2cc_netdev_event,
};

static struct ib_client r2cc_client;

static int r2cc_add_one(struct ib_device *ibdev)
{
	u32 n = rdma_end_port(ibdev), i;
	struct r2cc_sample *s;
	struct r2cc_dev *dev;
	int ret;

	dev = kzalloc(struct_size(dev, ports, n), GFP_KERNEL);
	s = kcalloc(n, sizeof(*s), GFP_KERNEL);
	if (!dev || !s) {
		kfree(dev);
		kfree(s);
		return -ENOMEM;
	}
	dev->ibdev = ibdev;
	dev->index = ibdev->index;
	dev->nports = n;
	strscpy(dev->name, dev_name(&ibdev->dev), sizeof(dev->name));
	INIT_WORK(&dev->dev_work, r2cc_dev_work);
	for (i = 0; i < n; i++) {
		struct r2cc_port *p = &dev->ports[i];

		p->dev = dev;
		p->num = i + 1;
		p->slot = -1;
		INIT_WORK(&p->work, r2cc_port_work);
		INIT_DELAYED_WORK(&p->damp_work, r2cc_damp_work);
	}
	ret = r2cc_sysfs_add_dev(dev);	/* takes ownership of dev */
	if (ret) {
		kfree(s);
		return ret;
	}

	/*
	 * Listen first, then sample: a change after the sample is queued
	 * (and ignored until the device is live), and the ports are
	 * re-queried once it is.
	 */
	INIT_IB_EVENT_HANDLER(&dev->handler, ibdev, r2cc_event_handler);
	ib_register_event_handler(&dev->handler);
	for (i = 0; i < n; i++)
		r2cc_sample_port(&dev->ports[i], &s[i]);

	mutex_lock(&r2cc_lock);
	spin_lock(&r2cc_devs_lock);
	list_add_tail(&dev->list, &r2cc_devs);
	spin_unlock(&r2cc_devs_lock);
	r2cc_emit_simple(dev, NULL, R2CC_EV_DEVICE_ADD, 0);
	for (i = 0; i < n; i++) {
		struct r2cc_port *p = &dev->ports[i];

		p->slot = r2cc_state_slot_get();
		if (p->slot < 0)
			pr_warn_once("state page full: %s port %u not mapped\n",
				     dev->name, p->num);
		if (s[i].ok) {
			p->phys_state = s[i].phys_state;
			p->link_layer = s[i].link_layer;
			p->ifindex = s[i].ifindex;
			p->bandwidth_mbps = s[i].bandwidth_mbps;
			/* First report: no damping for the initial state. */
			r2cc_port_report(p, s[i].state, 0);
		}
	}
	dev->live = true;
	mutex_unlock(&r2cc_lock);
	kfree(s);

	ib_set_client_data(ibdev, &r2cc_client, dev);
	r2cc_queue_ports(dev);
	return 0;
}

static void r2cc_remove_one(struct ib_device *ibdev, void *data)
{
	struct r2cc_dev *dev = data;
	u32 i;

	mutex_lock(&r2cc_lock);
	spin_lock(&r2cc_devs_lock);
	dev->removing = true;
	list_del(&dev->list);
	spin_unlock(&r2cc_devs_lock);
	mutex_unlock(&r2cc_lock);

	ib_unregister_event_handler(&dev->handler);
	cancel_work_sync(&dev->dev_work);
	for (i = 0; i < dev->nports; i++) {
		cancel_work_sync(&dev->ports[i].work);
		cancel_delayed_work_sync(&dev->ports[i].damp_work);
	}

	/* The ports are gone: report them so, then the device. */
	mutex_lock(&r2cc_lock);
	for (i = 0; i < dev->nports; i++) {
		struct r2cc_port *p = &dev->ports[i];

		r2cc_port_report(p, R2CC_PORT_NOP, 0);
		r2cc_state_update(p, false);
		r2cc_state_slot_put(p->slot);
		p->slot = -1;
	}
	r2cc_emit_simple(dev, NULL, R2CC_EV_DEVICE_REMOVE, 0);
	mutex_unlock(&r2cc_lock);

	r2cc_sysfs_del_dev(dev);	/* drops the last reference */
}

static struct ib_client r2cc_client = {
	.name = "r2cc",
	.no_kverbs_req = 1,
	.add = r2cc_add_one,
	.remove = r2cc_remove_one,
};

/* Under r2cc_lock. */
static struct r2cc_dev *r2cc_find_dev(u32 index)
{
	struct r2cc_dev *dev;

	list_for_each_entry(dev, &r2cc_devs, list)
		if (dev->index == index)
			return dev;
	return NULL;
}

int r2cc_snapshot_fill(struct r2cc_port_info *info, u32 max, u32 *count,
		       u64 *seq)
{
	struct r2cc_dev *dev;
	u32 n = 0, i;

	mutex_lock(&r2cc_lock);
	list_for_each_entry(dev, &r2cc_devs, list) {
		for (i = 0; i < dev->nports; i++, n++) {
			const struct r2cc_port *p = &dev->ports[i];
			struct r2cc_port_info *e = &info[n];

			if (n >= max)
				continue;
			memset(e, 0, sizeof(*e));
			e->dev_index = dev->index;
			e->port = p->num;
			e->state = p->state;
			e->phys_state = p->phys_state;
			e->link_layer = p->link_layer;
			e->ifindex = p->ifindex;
			e->bandwidth_mbps = p->bandwidth_mbps;
			e->last_change_ns = p->last_change_ns;
			strscpy(e->dev_name, dev->name, sizeof(e->dev_name));
		}
	}
	/* Every record is emitted under r2cc_lock: this seq matches. */
	*seq = r2cc_last_seq();
	mutex_unlock(&r2cc_lock);
	*count = n;
	return 0;
}

u64 r2cc_down_time_ms(const struct r2cc_port *p)
{
	u64 t = p->down_time_ns;

	if (p->down_since_ns)
		t += ktime_get_ns() - p->down_since_ns;
	return div_u64(t, NSEC_PER_MSEC);
}

/* The @pos-th port of all devices, or -ENOENT past the last one. */
int r2cc_port_stats_at(u32 pos, struct r2cc_port_stats *st)
{
	const struct r2cc_dev *dev;
	int ret = -ENOENT;

	mutex_lock(&r2cc_lock);
	list_for_each_entry(dev, &r2cc_devs, list) {
		const struct r2cc_port *p;

		if (pos >= dev->nports) {
			pos -= dev->nports;
			continue;
		}
		p = &dev->ports[pos];
		memset(st, 0, sizeof(*st));
		st->dev_index = dev->index;
		st->port = p->num;
		st->ifindex = p->ifindex;
		st->state = p->state;
		st->phys_state = p->phys_state;
		st->link_layer = p->link_layer;
		st->bandwidth_mbps = p->bandwidth_mbps;
		st->last_change_ns = p->last_change_ns;
		st->down_events = p->down_events;
		st->up_events = p->up_events;
		st->flaps = p->flaps;
		st->down_time_ms = r2cc_down_time_ms(p);
		strscpy(st->dev_name, dev->name, sizeof(st->dev_name));
		ret = 0;
		break;
	}
	mutex_unlock(&r2cc_lock);
	return ret;
}

int r2cc_inject(const struct r2cc_inject *inj)
{
	struct r2cc_dev *dev;
	struct r2cc_port *p;
	int ret = 0;
	u8 state;

	mutex_lock(&r2cc_lock);
	dev = r2cc_find_dev(inj->dev_index);
	if (!dev) {
		ret = -ENODEV;
		goto out;
	}
	if (inj->kind == R2CC_EV_DEVICE_FATAL) {
		if (inj->port) {
			ret = -EINVAL;
			goto out;
		}
		r2cc_emit_simple(dev, NULL, R2CC_EV_DEVICE_FATAL,
				 R2CC_EVF_INJECTED);
		goto out;
	}
	if (inj->kind != R2CC_EV_PORT_DOWN && inj->kind != R2CC_EV_PORT_UP) {
		ret = -EINVAL;
		goto out;
	}
	if (inj->port < 1 || inj->port > dev->nports) {
		ret = -EINVAL;
		goto out;
	}
	p = &dev->ports[inj->port - 1];
	state = inj->kind == R2CC_EV_PORT_UP ? R2CC_PORT_ACTIVE :
					       R2CC_PORT_DOWN;
	if (p->state == state) {
		ret = -EALREADY;
		goto out;
	}
	r2cc_port_report(p, state, R2CC_EVF_INJECTED);
out:
	mutex_unlock(&r2cc_lock);
	return ret;
}

int r2cc_ports_init(void)
{
	int ret;

	ret = register_netdevice_notifier(&r2cc_netdev_nb);
	if (ret)
		return ret;
	ret = ib_register_client(&r2cc_client);
	if (ret)
		unregister_netdevice_notifier(&r2cc_netdev_nb);
	return ret;
}

void r2cc_ports_exit(void)
{
	ib_unregister_client(&r2cc_client);
	unregister_netdevice_notifier(&r2cc_netdev_nb);
}
