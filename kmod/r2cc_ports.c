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
 * One exception, with carrier_down=1: a RoCE port whose netdev lost its
 * carrier is reported DOWN by the notifier itself (r2cc_carrier_lost()),
 * and the work then confirms it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "compat.h"
#include "r2cc.h"
#include "r2cc_trace.h"

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
	if (atomic_add_unless(&p->fail_queries, -1, 0))
		return;		/* a drill (debugfs fail_query) */
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
		ev->reason = p->reason;
		ev->phys_state = p->phys_state;
		ev->ifindex = p->ifindex;
		ev->bandwidth_mbps = p->bandwidth_mbps;
		ev->old_bandwidth_mbps = p->bandwidth_mbps;
	}
}

static void r2cc_emit_simple(struct r2cc_dev *dev, struct r2cc_port *p,
			     u16 kind, u16 flags)
{
	struct r2cc_event ev;

	r2cc_fill(&ev, dev, p, kind, flags);
	r2cc_emit(&ev);
}

/*
 * Report @p in @state for @reason, if either changed (a change of reason
 * alone updates the state page, not the record stream).  Under r2cc_lock.
 */
static void r2cc_port_report(struct r2cc_port *p, u8 state, u8 reason,
			     u16 flags)
{
	u64 now = ktime_get_ns();
	struct r2cc_event ev;
	u8 old = p->state;
	u16 kind;

	lockdep_assert_held(&r2cc_lock);
	p->injected = flags & R2CC_EVF_INJECTED;
	if (state == old) {
		if (reason != p->reason) {
			p->reason = reason;
			p->generation++;
			r2cc_state_update(p, true);
		}
		return;
	}
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
		p->flaps++;	/* a down/up cycle completed */
		if (p->down_since_ns)
			p->down_time_ns += now - p->down_since_ns;
		p->down_since_ns = 0;
	}
	/* A port that leaves ACTIVE is not degraded: its DOWN says more. */
	if (state != R2CC_PORT_ACTIVE && p->degraded) {
		p->degraded = false;
		p->win_n = 0;
		p->under_polls = 0;
	}
	p->state = state;
	p->reason = reason;
	p->last_change_ns = now;
	p->generation++;
	r2cc_state_update(p, true);

	r2cc_fill(&ev, p->dev, p, kind, flags);
	ev.old_state = old;
	ev.time_ns = now;
	r2cc_emit(&ev);
}

/* @p's link bandwidth changed while it stayed ACTIVE.  Under r2cc_lock. */
static void r2cc_port_speed(struct r2cc_port *p, u64 old_mbps)
{
	struct r2cc_event ev;

	lockdep_assert_held(&r2cc_lock);
	p->generation++;
	r2cc_state_update(p, true);
	r2cc_fill(&ev, p->dev, p, R2CC_EV_PORT_SPEED, 0);
	ev.old_bandwidth_mbps = old_mbps;
	r2cc_emit(&ev);
}

/* Stop holding back an up (flap damping), if one is.  Under r2cc_lock. */
static void r2cc_port_undamp(struct r2cc_port *p)
{
	if (!p->damping)
		return;
	p->damping = false;
	/* Not _sync: the work takes r2cc_lock and rechecks. */
	cancel_delayed_work(&p->damp_work);
}

/*
 * A fresh sample of @p arrived; apply what overrides it (a fatal device),
 * flap damping, and report.
 */
static void r2cc_port_apply(struct r2cc_port *p, const struct r2cc_sample *s)
{
	u8 state = s->state, reason = R2CC_REASON_NONE;
	u8 old_phys = p->phys_state;
	u64 old_mbps = p->bandwidth_mbps;
	bool was_damping = p->damping;

	lockdep_assert_held(&r2cc_lock);
	p->injected = false;
	if (p->dev->fatal) {
		state = R2CC_PORT_DOWN;
		reason = R2CC_REASON_FATAL;
	}
	p->query_fails = 0;
	p->phys_state = s->phys_state;
	p->link_layer = s->link_layer;
	p->ifindex = s->ifindex;
	p->bandwidth_mbps = s->bandwidth_mbps;

	if (state == R2CC_PORT_ACTIVE && p->state != R2CC_PORT_ACTIVE &&
	    READ_ONCE(r2cc_damping_ms)) {
		/* Report the up only once it has held for damping_ms. */
		if (!p->damping) {
			p->damping = true;
			trace_r2cc_damping(p->dev->name, p->num, true, p->flaps);
			mod_delayed_work(r2cc_wq, &p->damp_work,
					 msecs_to_jiffies(r2cc_damping_ms));
		}
		return;
	}
	if (was_damping) {
		r2cc_port_undamp(p);
		if (state != R2CC_PORT_ACTIVE) {
			p->flaps++;	/* bounced while held: a cycle */
			trace_r2cc_damping(p->dev->name, p->num, false,
					   p->flaps);
		}
	}
	if (state == p->state && reason == p->reason) {
		if (state == R2CC_PORT_ACTIVE && old_mbps != p->bandwidth_mbps) {
			r2cc_port_speed(p, old_mbps);
		} else if (old_phys != p->phys_state && p->carrier_seq) {
			/*
			 * After carrier_down reported phys_state 0: no record,
			 * but the state page shows what sysfs does.
			 */
			p->generation++;
			r2cc_state_update(p, true);
		}
		return;
	}
	r2cc_port_report(p, state, reason, was_damping &&
			 state == R2CC_PORT_ACTIVE ? R2CC_EVF_DAMPED : 0);
}

/*
 * Bits of r2cc_port.pending (event kinds start at 1): the port reported an
 * error; a real event (not a periodic poll) asked for this query; the port
 * is to be re-queried; its error counters are to be read.
 */
#define R2CC_PENDING_DOWN	0
#define R2CC_PENDING_EVENT	(R2CC_EV_KIND_MAX + 1)
#define R2CC_PENDING_QUERY	(R2CC_EV_KIND_MAX + 2)
#define R2CC_PENDING_POLL	(R2CC_EV_KIND_MAX + 3)

/* Failed queries in a row that make a port DOWN, and their spacing. */
#define R2CC_QUERY_FAILS_DOWN	3
#define R2CC_QUERY_RETRY_MS	100
#define R2CC_QUERY_DOWN_RETRY_MS	1000

static const u16 r2cc_port_kinds[] = {
	R2CC_EV_GID_CHANGE, R2CC_EV_LID_CHANGE, R2CC_EV_PKEY_CHANGE,
	R2CC_EV_CLIENT_REREGISTER, R2CC_EV_SM_CHANGE,
};

/* A query of @p failed.  Under r2cc_lock. */
static void r2cc_port_query_failed(struct r2cc_port *p)
{
	lockdep_assert_held(&r2cc_lock);
	if (p->query_fails < U8_MAX)
		p->query_fails++;
	trace_r2cc_query_failed(p->dev->name, p->num, p->query_fails);
	if (p->query_fails < R2CC_QUERY_FAILS_DOWN) {
		queue_delayed_work(r2cc_wq, &p->retry_work,
				   msecs_to_jiffies(R2CC_QUERY_RETRY_MS));
		return;
	}
	/*
	 * A port we cannot query is not one to send on.  A fatal device's
	 * are down already, for the better reason: queries to a dead device
	 * are expected to fail.
	 */
	r2cc_port_undamp(p);
	if (p->state != R2CC_PORT_NOP && !p->dev->fatal)
		r2cc_port_report(p, R2CC_PORT_DOWN, R2CC_REASON_QUERY, 0);
	/* Ask again, slower, until a query answers and brings it back. */
	queue_delayed_work(r2cc_wq, &p->retry_work,
			   msecs_to_jiffies(R2CC_QUERY_DOWN_RETRY_MS));
}

/* @p's error counters crossed a threshold.  Under r2cc_lock. */
static void r2cc_port_health(struct r2cc_port *p, u16 kind)
{
	struct r2cc_event ev;

	lockdep_assert_held(&r2cc_lock);
	p->generation++;
	r2cc_state_update(p, true);
	r2cc_fill(&ev, p->dev, p, kind, 0);
	ev.error_rate = p->error_rate;
	r2cc_emit(&ev);
}

static void r2cc_port_refresh(struct r2cc_port *p)
{
	unsigned long pending = xchg(&p->pending, 0);
	bool query = pending & ~BIT(R2CC_PENDING_POLL) ||
		     READ_ONCE(r2cc_poll_query);
	struct r2cc_dev *dev = p->dev;
	u32 carrier_seq = READ_ONCE(p->carrier_seq);
	bool counted = false;
	struct r2cc_sample s;
	u64 errors = 0;
	u16 health;
	int i;

	/* Both may sleep: before r2cc_lock. */
	mutex_lock(&p->sample_lock);
	if (pending & BIT(R2CC_PENDING_POLL))
		counted = r2cc_health_read(p, &errors);
	if (query)
		r2cc_sample_port(p, &s);
	mutex_lock(&r2cc_lock);
	if (!dev->live || dev->removing)
		goto out;
	for (i = 0; i < ARRAY_SIZE(r2cc_port_kinds); i++)
		if (pending & BIT(r2cc_port_kinds[i]))
			r2cc_emit_simple(dev, p, r2cc_port_kinds[i], 0);
	if (counted) {
		health = r2cc_health_apply(p, errors, ktime_get_ns());
		if (health)
			r2cc_port_health(p, health);
	}
	if (!query)
		goto out;
	/*
	 * The carrier went while we queried: the sample may predate the DOWN
	 * the notifier reported, and the notifier has queued a fresh query.
	 */
	if (p->carrier_seq != carrier_seq)
		goto out;
	if (!s.ok) {
		r2cc_port_query_failed(p);
		goto out;
	}
	/* An injected state lasts until the port's next real event. */
	if (p->injected && !(pending & BIT(R2CC_PENDING_EVENT)))
		goto out;
	if ((pending & BIT(R2CC_PENDING_DOWN)) &&
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
	r2cc_port_apply(p, &s);
out:
	mutex_unlock(&r2cc_lock);
	mutex_unlock(&p->sample_lock);
}

static void r2cc_port_work(struct work_struct *work)
{
	r2cc_port_refresh(container_of(work, struct r2cc_port, work));
}

static void r2cc_retry_work(struct work_struct *work)
{
	struct r2cc_port *p = container_of(to_delayed_work(work),
					   struct r2cc_port, retry_work);

	set_bit(R2CC_PENDING_QUERY, &p->pending);
	r2cc_port_refresh(p);
}

static void r2cc_damp_work(struct work_struct *work)
{
	struct r2cc_port *p = container_of(to_delayed_work(work),
					   struct r2cc_port, damp_work);
	struct r2cc_sample s;

	mutex_lock(&p->sample_lock);
	r2cc_sample_port(p, &s);
	mutex_lock(&r2cc_lock);
	if (p->dev->live && !p->dev->removing && p->damping) {
		p->damping = false;
		/* A dead device's hold ends with no up and no flap. */
		if (p->dev->fatal)
			goto out;
		if (s.ok && s.state == R2CC_PORT_ACTIVE)
			r2cc_port_report(p, R2CC_PORT_ACTIVE, R2CC_REASON_NONE,
					 R2CC_EVF_DAMPED);
		else
			p->flaps++;
	}
out:
	mutex_unlock(&r2cc_lock);
	mutex_unlock(&p->sample_lock);
}

/* Work on every port of @dev: R2CC_PENDING_EVENT, or _POLL. */
static void r2cc_queue_ports(struct r2cc_dev *dev, unsigned int why)
{
	u32 i;

	for (i = 0; i < dev->nports; i++) {
		set_bit(why, &dev->ports[i].pending);
		queue_work(r2cc_wq, &dev->ports[i].work);
	}
}

/* Every port of @dev DOWN for @reason, e.g. a fatal device.  Under r2cc_lock. */
static void r2cc_dev_down(struct r2cc_dev *dev, u8 reason, u16 flags)
{
	u32 i;

	lockdep_assert_held(&r2cc_lock);
	for (i = 0; i < dev->nports; i++) {
		struct r2cc_port *p = &dev->ports[i];

		r2cc_port_undamp(p);
		r2cc_port_report(p, R2CC_PORT_DOWN, reason, flags);
	}
}

static void r2cc_dev_work(struct work_struct *work)
{
	struct r2cc_dev *dev = container_of(work, struct r2cc_dev, dev_work);

	mutex_lock(&r2cc_lock);
	/* Not live yet: the bit stays, and add queues this work again. */
	if (dev->live && !dev->removing &&
	    test_and_clear_bit(R2CC_EV_DEVICE_FATAL, &dev->dev_pending)) {
		dev->fatal = true;
		r2cc_emit_simple(dev, NULL, R2CC_EV_DEVICE_FATAL, 0);
		r2cc_dev_down(dev, R2CC_REASON_FATAL, 0);
	}
	mutex_unlock(&r2cc_lock);
	r2cc_queue_ports(dev, R2CC_PENDING_EVENT);
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
	set_bit(R2CC_PENDING_EVENT, &p->pending);
	queue_work(r2cc_wq, &p->work);
}

/*
 * @dev's RoCE ports on netdev @ifindex lost their carrier: report the
 * ACTIVE ones DOWN now.  A port cannot pass a packet without its netdev's
 * carrier, so no query could say otherwise; and a query (ib_query_port()
 * of a RoCE port asks ethtool for the speed) would wait for RTNL, which
 * our caller holds until every notifier has run, while the verbs event
 * may reach userspace first.  Under r2cc_lock, in the notifier.
 */
static void r2cc_carrier_lost(struct r2cc_dev *dev, u32 ifindex)
{
	u32 i;

	lockdep_assert_held(&r2cc_lock);
	if (!dev->live || dev->removing)
		return;
	for (i = 0; i < dev->nports; i++) {
		struct r2cc_port *p = &dev->ports[i];

		/* Held-back ups and other states: the work's query decides. */
		if (!ifindex || p->ifindex != ifindex ||
		    p->state != R2CC_PORT_ACTIVE || p->damping)
			continue;
		p->carrier_seq++;
		p->phys_state = 0;	/* unknown until the work's query */
		r2cc_port_report(p, R2CC_PORT_DOWN, R2CC_REASON_NONE, 0);
	}
}

/* Queue a query of every port of @ibdev's devices. */
static void r2cc_netdev_queue(struct ib_device *ibdev)
{
	struct r2cc_dev *dev;

	spin_lock(&r2cc_devs_lock);
	list_for_each_entry(dev, &r2cc_devs, list)
		if (dev->ibdev == ibdev && !dev->removing)
			r2cc_queue_ports(dev, R2CC_PENDING_EVENT);
	spin_unlock(&r2cc_devs_lock);
}

/*
 * carrier_down: the carrier of netdev @ifindex went; report its ports
 * DOWN, then queue the queries.  Nothing that holds r2cc_lock waits for
 * RTNL (queries come before it), so the notifier may take it.
 */
static void r2cc_netdev_lost(struct ib_device *ibdev, u32 ifindex)
{
	struct r2cc_dev *dev;

	mutex_lock(&r2cc_lock);
	list_for_each_entry(dev, &r2cc_devs, list) {
		if (dev->ibdev != ibdev || dev->removing)
			continue;
		r2cc_carrier_lost(dev, ifindex);
		r2cc_queue_ports(dev, R2CC_PENDING_EVENT);
	}
	mutex_unlock(&r2cc_lock);
}

/* Under RTNL, in process context. */
static int r2cc_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct ib_device *ibdev;

	if (event != NETDEV_UP && event != NETDEV_DOWN &&
	    event != NETDEV_CHANGE)
		return NOTIFY_DONE;
	ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev)
		return NOTIFY_DONE;
	if (READ_ONCE(r2cc_carrier_down) &&
	    (event == NETDEV_DOWN || !netif_running(ndev) ||
	     !netif_carrier_ok(ndev)))
		r2cc_netdev_lost(ibdev, ndev->ifindex);
	else
		r2cc_netdev_queue(ibdev);
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
		mutex_init(&p->sample_lock);
		INIT_WORK(&p->work, r2cc_port_work);
		INIT_DELAYED_WORK(&p->damp_work, r2cc_damp_work);
		INIT_DELAYED_WORK(&p->retry_work, r2cc_retry_work);
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
	for (i = 0; i < n; i++) {
		r2cc_sample_port(&dev->ports[i], &s[i]);
		r2cc_health_init(&dev->ports[i]);
	}

	mutex_lock(&r2cc_lock);
	spin_lock(&r2cc_devs_lock);
	list_add_tail(&dev->list, &r2cc_devs);
	spin_unlock(&r2cc_devs_lock);
	r2cc_emit_simple(dev, NULL, R2CC_EV_DEVICE_ADD, 0);
	for (i = 0; i < n; i++) {
		struct r2cc_port *p = &dev->ports[i];

		p->slot = r2cc_state_slot_get(&p->incarnation);
		if (p->slot < 0)
			pr_warn_once("state page full: %s port %u not mapped\n",
				     dev->name, p->num);
		if (s[i].ok) {
			p->phys_state = s[i].phys_state;
			p->link_layer = s[i].link_layer;
			p->ifindex = s[i].ifindex;
			p->bandwidth_mbps = s[i].bandwidth_mbps;
			/* First report: no damping for the initial state. */
			r2cc_port_report(p, s[i].state, R2CC_REASON_NONE, 0);
		}
	}
	dev->live = true;
	mutex_unlock(&r2cc_lock);
	kfree(s);

	ib_set_client_data(ibdev, &r2cc_client, dev);
	/* A fatal event while we sampled is handled now, then every port. */
	queue_work(r2cc_wq, &dev->dev_work);
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
		cancel_delayed_work_sync(&dev->ports[i].retry_work);
		r2cc_health_exit(&dev->ports[i]);
	}

	/* The ports are gone: report them so, then the device. */
	mutex_lock(&r2cc_lock);
	for (i = 0; i < dev->nports; i++) {
		struct r2cc_port *p = &dev->ports[i];

		r2cc_port_report(p, R2CC_PORT_NOP, R2CC_REASON_REMOVED, 0);
		r2cc_state_update(p, false);
		r2cc_state_slot_put(p->slot);
		p->slot = -1;
	}
	r2cc_emit_simple(dev, NULL, R2CC_EV_DEVICE_REMOVE, 0);
	mutex_unlock(&r2cc_lock);

	r2cc_sysfs_del_dev(dev);	/* drops the last reference */
}

/*
 * `rdma dev set NAME name NEW`: records and sysfs follow the new name, so
 * a new device taking the old name is monitored under it.
 */
static void r2cc_rename_one(struct ib_device *ibdev, void *data)
{
	struct r2cc_dev *dev = data;
	char name[R2CC_DEV_NAME_MAX];
	int ret;

	strscpy(name, dev_name(&ibdev->dev), sizeof(name));
	mutex_lock(&r2cc_lock);
	ret = kobject_rename(&dev->kobj, name);
	if (ret)
		pr_warn("%s renamed to %s, but its sysfs directory was not: %d\n",
			dev->name, name, ret);
	strscpy(dev->name, name, sizeof(dev->name));
	mutex_unlock(&r2cc_lock);
}

static struct ib_client r2cc_client = {
	.name = "r2cc",
	.no_kverbs_req = 1,
	.add = r2cc_add_one,
	.remove = r2cc_remove_one,
	.rename = r2cc_rename_one,
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
			e->reason = p->reason;
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

/* (@dev_index, @port) comes before (@d, @p). */
static bool r2cc_key_before(u32 dev_index, u32 port, u32 d, u32 p)
{
	return dev_index < d || (dev_index == d && port < p);
}

/*
 * The first port in (device index, port) order after (@dev_index, @port),
 * or the first of all unless @started; -ENOENT past the last one.
 */
int r2cc_port_stats_after(bool started, u32 dev_index, u32 port,
			  struct r2cc_port_stats *st)
{
	const struct r2cc_port *best = NULL;
	const struct r2cc_dev *dev;
	u32 i;

	mutex_lock(&r2cc_lock);
	list_for_each_entry(dev, &r2cc_devs, list)
		for (i = 0; i < dev->nports; i++) {
			const struct r2cc_port *p = &dev->ports[i];

			if (started &&
			    !r2cc_key_before(dev_index, port, dev->index, p->num))
				continue;
			if (!best || r2cc_key_before(dev->index, p->num,
						     best->dev->index,
						     best->num))
				best = p;
		}
	if (best) {
		memset(st, 0, sizeof(*st));
		st->dev_index = best->dev->index;
		st->port = best->num;
		st->ifindex = best->ifindex;
		st->state = best->state;
		st->reason = best->reason;
		st->degraded = best->degraded;
		st->error_rate = best->error_rate;
		st->phys_state = best->phys_state;
		st->link_layer = best->link_layer;
		st->bandwidth_mbps = best->bandwidth_mbps;
		st->last_change_ns = best->last_change_ns;
		st->down_events = best->down_events;
		st->up_events = best->up_events;
		st->flaps = best->flaps;
		st->down_time_ms = r2cc_down_time_ms(best);
		strscpy(st->dev_name, best->dev->name, sizeof(st->dev_name));
	}
	mutex_unlock(&r2cc_lock);
	return best ? 0 : -ENOENT;
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
		r2cc_dev_down(dev, R2CC_REASON_FATAL, R2CC_EVF_INJECTED);
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
	if (state == R2CC_PORT_ACTIVE && dev->fatal) {
		ret = -EIO;	/* a dead device's port is never shown up */
		goto out;
	}
	if (p->state == state && p->reason == R2CC_REASON_NONE) {
		ret = -EALREADY;
		goto out;
	}
	r2cc_port_undamp(p);
	r2cc_port_report(p, state, R2CC_REASON_NONE, R2CC_EVF_INJECTED);
out:
	mutex_unlock(&r2cc_lock);
	return ret;
}

/* damping_ms changed: holds end by the new rule now, not at the old one's. */
void r2cc_damping_changed(void)
{
	struct r2cc_dev *dev;
	u32 i;

	mutex_lock(&r2cc_lock);
	list_for_each_entry(dev, &r2cc_devs, list)
		for (i = 0; i < dev->nports; i++)
			if (dev->ports[i].damping)
				mod_delayed_work(r2cc_wq,
						 &dev->ports[i].damp_work,
						 msecs_to_jiffies(r2cc_damping_ms));
	mutex_unlock(&r2cc_lock);
}

/* Make the next @n queries of a port fail (debugfs, for drills and tests). */
int r2cc_fail_queries(u32 dev_index, u32 port, unsigned int n)
{
	struct r2cc_dev *dev;
	int ret = -ENODEV;

	mutex_lock(&r2cc_lock);
	dev = r2cc_find_dev(dev_index);
	if (dev && port >= 1 && port <= dev->nports) {
		atomic_set(&dev->ports[port - 1].fail_queries, n);
		set_bit(R2CC_PENDING_EVENT, &dev->ports[port - 1].pending);
		queue_work(r2cc_wq, &dev->ports[port - 1].work);
		ret = 0;
	} else if (dev) {
		ret = -EINVAL;
	}
	mutex_unlock(&r2cc_lock);
	return ret;
}

/*
 * Hand @dev_index's event handler IB_EVENT_DEVICE_FATAL, as the driver's
 * ib_dispatch_event() would (debugfs, for drills and tests): unlike
 * R2CC_IOC_INJECT's fatal, the module cannot tell it from a real one.
 * The device stays fatal until it is removed.
 */
int r2cc_fail_device(u32 dev_index)
{
	struct ib_event e = { .event = IB_EVENT_DEVICE_FATAL };
	struct r2cc_dev *dev;
	int ret = -ENODEV;

	mutex_lock(&r2cc_lock);
	dev = r2cc_find_dev(dev_index);
	if (dev) {
		e.device = dev->ibdev;
		r2cc_event_handler(&dev->handler, &e);
		ret = 0;
	}
	mutex_unlock(&r2cc_lock);
	return ret;
}

/*
 * Every poll_ms, read every port's error counters (r2cc_health.c) and,
 * with poll_query, re-query it: a port whose queries fail, or whose speed
 * changes without an event, is seen within one period.
 */
static void r2cc_poll_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(r2cc_poll_work, r2cc_poll_fn);

static void r2cc_poll_fn(struct work_struct *work)
{
	unsigned int ms = READ_ONCE(r2cc_poll_ms);
	struct r2cc_dev *dev;

	if (ms) {
		spin_lock(&r2cc_devs_lock);
		list_for_each_entry(dev, &r2cc_devs, list)
			if (!dev->removing)
				r2cc_queue_ports(dev, R2CC_PENDING_POLL);
		spin_unlock(&r2cc_devs_lock);
	}
	/* Off: look again in a second whether it was turned on. */
	queue_delayed_work(r2cc_wq, &r2cc_poll_work,
			   msecs_to_jiffies(ms ? ms : MSEC_PER_SEC));
}

int r2cc_ports_init(void)
{
	int ret;

	ret = register_netdevice_notifier(&r2cc_netdev_nb);
	if (ret)
		return ret;
	ret = ib_register_client(&r2cc_client);
	if (ret) {
		unregister_netdevice_notifier(&r2cc_netdev_nb);
		return ret;
	}
	queue_delayed_work(r2cc_wq, &r2cc_poll_work, 0);
	return 0;
}

void r2cc_ports_exit(void)
{
	cancel_delayed_work_sync(&r2cc_poll_work);
	ib_unregister_client(&r2cc_client);
	unregister_netdevice_notifier(&r2cc_netdev_nb);
}
