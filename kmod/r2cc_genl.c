// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generic netlink family "r2cc" for admin tools: dump ports and counters,
 * read the global counters, inject (CAP_NET_ADMIN), an "events" multicast
 * group carrying every record, and a dump of the records the ring holds.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/genetlink.h>

#include "r2cc.h"

static const struct nla_policy r2cc_genl_policy[R2CC_ATTR_MAX + 1] = {
	[R2CC_ATTR_DEV_INDEX] = { .type = NLA_U32 },
	[R2CC_ATTR_PORT] = { .type = NLA_U32 },
	[R2CC_ATTR_KIND] = NLA_POLICY_MAX(NLA_U16, R2CC_EV_KIND_MAX),
	[R2CC_ATTR_SEQ] = { .type = NLA_U64 },
};

static const struct genl_multicast_group r2cc_genl_mcgrps[] = {
	{ .name = R2CC_GENL_MCGRP_EVENTS },
};

static struct genl_family r2cc_genl_family;

static int r2cc_genl_put_port(struct sk_buff *skb,
			      const struct r2cc_port_stats *st)
{
	if (nla_put_u32(skb, R2CC_ATTR_DEV_INDEX, st->dev_index) ||
	    nla_put_string(skb, R2CC_ATTR_DEV_NAME, st->dev_name) ||
	    nla_put_u32(skb, R2CC_ATTR_PORT, st->port) ||
	    nla_put_u8(skb, R2CC_ATTR_STATE, st->state) ||
	    nla_put_u8(skb, R2CC_ATTR_PHYS_STATE, st->phys_state) ||
	    nla_put_u8(skb, R2CC_ATTR_LINK_LAYER, st->link_layer) ||
	    nla_put_u32(skb, R2CC_ATTR_IFINDEX, st->ifindex) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_BANDWIDTH_MBPS,
			      st->bandwidth_mbps, R2CC_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_LAST_CHANGE_NS,
			      st->last_change_ns, R2CC_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_DOWN_EVENTS, st->down_events,
			      R2CC_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_UP_EVENTS, st->up_events,
			      R2CC_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_FLAPS, st->flaps, R2CC_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_DOWN_TIME_MS, st->down_time_ms,
			      R2CC_ATTR_PAD) ||
	    nla_put_u8(skb, R2CC_ATTR_REASON, st->reason) ||
	    nla_put_u8(skb, R2CC_ATTR_DEGRADED, st->degraded) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_ERROR_RATE, st->error_rate,
			      R2CC_ATTR_PAD))
		return -EMSGSIZE;
	return 0;
}

/*
 * A dump goes in (device index, port) order and resumes after the last
 * port it sent, by key, so devices that come or go between two parts of
 * a dump neither repeat nor skip a port that stayed.
 */
static int r2cc_genl_dump_ports(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	struct r2cc_port_stats st;
	void *hdr;

	while (!r2cc_port_stats_after(cb->args[0], cb->args[1], cb->args[2],
				      &st)) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &r2cc_genl_family,
				  NLM_F_MULTI, R2CC_CMD_GET_PORT);
		if (!hdr)
			break;
		if (r2cc_genl_put_port(skb, &st)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = 1;	/* started */
		cb->args[1] = st.dev_index;
		cb->args[2] = st.port;
	}
	return skb->len;
}

static int r2cc_genl_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	void *hdr;

	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &r2cc_genl_family, 0,
				R2CC_CMD_GET_STATS);
	if (!hdr ||
	    nla_put_u64_64bit(msg, R2CC_ATTR_EVENTS_EMITTED,
			      r2cc_stat_emitted(), R2CC_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, R2CC_ATTR_EVENTS_DELIVERED,
			      r2cc_stat_delivered(), R2CC_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, R2CC_ATTR_EVENTS_DROPPED,
			      r2cc_stat_dropped(), R2CC_ATTR_PAD) ||
	    nla_put_u32(msg, R2CC_ATTR_SUBSCRIBERS, r2cc_stat_subscribers())) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int r2cc_genl_inject(struct sk_buff *skb, struct genl_info *info)
{
	struct r2cc_inject inj = { .size = sizeof(inj) };

	if (GENL_REQ_ATTR_CHECK(info, R2CC_ATTR_DEV_INDEX) ||
	    GENL_REQ_ATTR_CHECK(info, R2CC_ATTR_PORT) ||
	    GENL_REQ_ATTR_CHECK(info, R2CC_ATTR_KIND))
		return -EINVAL;
	inj.dev_index = nla_get_u32(info->attrs[R2CC_ATTR_DEV_INDEX]);
	inj.port = nla_get_u32(info->attrs[R2CC_ATTR_PORT]);
	inj.kind = nla_get_u16(info->attrs[R2CC_ATTR_KIND]);
	return r2cc_inject(&inj);
}

/* A record as R2CC_CMD_EVENT's attributes, one per field (linux/r2cc.h). */
static int r2cc_genl_put_event(struct sk_buff *skb,
			       const struct r2cc_event *ev)
{
	if (nla_put_u64_64bit(skb, R2CC_ATTR_SEQ, ev->seq, R2CC_ATTR_PAD) ||
	    nla_put_u16(skb, R2CC_ATTR_KIND, ev->kind) ||
	    nla_put_u16(skb, R2CC_ATTR_FLAGS, ev->flags) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_TIME_NS, ev->time_ns,
			      R2CC_ATTR_PAD) ||
	    nla_put_u32(skb, R2CC_ATTR_DEV_INDEX, ev->dev_index) ||
	    nla_put_string(skb, R2CC_ATTR_DEV_NAME, ev->dev_name) ||
	    nla_put_u32(skb, R2CC_ATTR_PORT, ev->port) ||
	    nla_put_u8(skb, R2CC_ATTR_OLD_STATE, ev->old_state) ||
	    nla_put_u8(skb, R2CC_ATTR_STATE, ev->new_state) ||
	    nla_put_u8(skb, R2CC_ATTR_PHYS_STATE, ev->phys_state) ||
	    nla_put_u8(skb, R2CC_ATTR_REASON, ev->reason) ||
	    nla_put_u32(skb, R2CC_ATTR_IFINDEX, ev->ifindex) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_BANDWIDTH_MBPS,
			      ev->bandwidth_mbps, R2CC_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_OLD_BANDWIDTH_MBPS,
			      ev->old_bandwidth_mbps, R2CC_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_LOST, ev->lost, R2CC_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, R2CC_ATTR_ERROR_RATE, ev->error_rate,
			      R2CC_ATTR_PAD) ||
	    nla_put(skb, R2CC_ATTR_EVENT, sizeof(*ev), ev))
		return -EMSGSIZE;
	return 0;
}

/* Where a dump of the ring stands, in the callback's scratch space. */
struct r2cc_dump_ctx {
	u64 next;		/* the next record to send */
	bool started;
	bool past_end;		/* asked after U64_MAX: nothing to send */
};

static_assert(sizeof(struct r2cc_dump_ctx) <=
	      sizeof_field(struct netlink_callback, ctx));

/*
 * The ring's records after R2CC_ATTR_SEQ, for a tool that starts late
 * (r2ccctl watch --since).  A record overwritten between two parts of the
 * dump becomes an overflow record, as for a slow reader of /dev/r2cc.
 */
static int r2cc_genl_dump_events(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct r2cc_dump_ctx *d = (struct r2cc_dump_ctx *)cb->ctx;
	struct r2cc_event rec;
	void *hdr;
	u64 after;

	if (!d->started) {
		/* the family's policy has checked that it is a u64 */
		const struct nlattr *a = nlmsg_find_attr(cb->nlh, GENL_HDRLEN,
							 R2CC_ATTR_SEQ);
		u64 since = a ? nla_get_u64(a) : 0;

		d->started = true;
		d->past_end = since == U64_MAX;
		d->next = since + 1;
	}
	while (!d->past_end && r2cc_ring_peek(d->next, &rec, &after)) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &r2cc_genl_family,
				  NLM_F_MULTI, R2CC_CMD_GET_EVENTS);
		if (!hdr)
			break;
		if (r2cc_genl_put_event(skb, &rec)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		d->next = after;
	}
	return skb->len;
}

static const struct genl_small_ops r2cc_genl_ops[] = {
	{
		.cmd = R2CC_CMD_GET_PORT,
		.dumpit = r2cc_genl_dump_ports,
	},
	{
		.cmd = R2CC_CMD_GET_STATS,
		.doit = r2cc_genl_get_stats,
	},
	{
		.cmd = R2CC_CMD_GET_EVENTS,
		.dumpit = r2cc_genl_dump_events,
	},
	{
		.cmd = R2CC_CMD_INJECT,
		.doit = r2cc_genl_inject,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family r2cc_genl_family __ro_after_init = {
	.name = R2CC_GENL_NAME,
	.version = R2CC_GENL_VERSION,
	.maxattr = R2CC_ATTR_MAX,
	.policy = r2cc_genl_policy,
	.module = THIS_MODULE,
	.small_ops = r2cc_genl_ops,
	.n_small_ops = ARRAY_SIZE(r2cc_genl_ops),
	.mcgrps = r2cc_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(r2cc_genl_mcgrps),
};

/* Under r2cc_lock, in process context; costs nothing without listeners. */
void r2cc_genl_notify(const struct r2cc_event *ev)
{
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&r2cc_genl_family, &init_net, 0))
		return;
	msg = genlmsg_new(2 * nla_total_size(sizeof(*ev)) + 256, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &r2cc_genl_family, 0, R2CC_CMD_EVENT);
	if (!hdr || r2cc_genl_put_event(msg, ev)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&r2cc_genl_family, msg, 0, 0, GFP_KERNEL);
}

int r2cc_genl_init(void)
{
	return genl_register_family(&r2cc_genl_family);
}

void r2cc_genl_exit(void)
{
	genl_unregister_family(&r2cc_genl_family);
}
