// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2ccctl's side of the "r2cc" generic netlink family (linux/r2cc.h):
 * the port dump, the global counters, inject, the events group and the
 * replay of the records the module still holds.
 * Errors come back as the kernel's own -errno, read from the NLMSG_ERROR
 * reply (libnl's NLE_* codes lose which errno it was).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "r2ccctl.h"

struct ctl_nl {
	struct nl_sock *sk;	/* requests */
	struct nl_sock *mc;	/* the events group, once subscribed */
	int family;
	int err;		/* the last NLMSG_ERROR's errno, negative */
	/* A dump in progress. */
	struct ctl_port *ports;
	int nports, cap;
	struct ctl_stats *stats;
	/* A record received. */
	struct r2cc_event *ev;
	int got;
	/* A replay of the ring in progress. */
	void (*replay)(const struct r2cc_event *ev, void *arg);
	void *replay_arg;
};

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct ctl_nl *nl = arg;

	(void)nla;
	nl->err = e->error;
	return NL_STOP;
}

/* An ACK ends a request, NLMSG_DONE a dump (which gets no ACK). */
static int on_ack(struct nl_msg *msg, void *arg)
{
	(void)msg;
	((struct ctl_nl *)arg)->err = 0;
	return NL_STOP;
}

static struct nl_sock *sock_new(struct ctl_nl *nl)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return NULL;
	if (genl_connect(sk)) {
		nl_socket_free(sk);
		return NULL;
	}
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, on_error, nl);
	nl_socket_modify_cb(sk, NL_CB_ACK, NL_CB_CUSTOM, on_ack, nl);
	nl_socket_modify_cb(sk, NL_CB_FINISH, NL_CB_CUSTOM, on_ack, nl);
	return sk;
}

int ctl_nl_open(struct ctl_nl **out)
{
	struct ctl_nl *nl = calloc(1, sizeof(*nl));

	if (!nl)
		return -ENOMEM;
	nl->sk = sock_new(nl);
	if (!nl->sk) {
		free(nl);
		return -EPROTONOSUPPORT;
	}
	nl->family = genl_ctrl_resolve(nl->sk, R2CC_GENL_NAME);
	if (nl->family < 0) {
		ctl_nl_close(nl);
		return -ENOENT;
	}
	*out = nl;
	return 0;
}

void ctl_nl_close(struct ctl_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->mc);
	nl_socket_free(nl->sk);
	free(nl->ports);
	free(nl);
}

static uint64_t get_u64(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u64(tb[a]) : 0;
}

static uint32_t get_u32(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u32(tb[a]) : 0;
}

static uint8_t get_u8(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u8(tb[a]) : 0;
}

static int on_port(struct nl_msg *msg, void *arg)
{
	struct ctl_nl *nl = arg;
	struct nlattr *tb[R2CC_ATTR_MAX + 1];
	struct ctl_port *p;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, R2CC_ATTR_MAX, NULL) ||
	    !tb[R2CC_ATTR_DEV_INDEX] || !tb[R2CC_ATTR_PORT])
		return NL_SKIP;
	if (nl->nports == nl->cap) {
		int cap = nl->cap ? 2 * nl->cap : 16;
		void *np = realloc(nl->ports, (size_t)cap * sizeof(*p));

		if (!np) {
			nl->err = -ENOMEM;
			return NL_STOP;
		}
		nl->ports = np;
		nl->cap = cap;
	}
	p = &nl->ports[nl->nports++];
	memset(p, 0, sizeof(*p));
	p->dev_index = get_u32(tb, R2CC_ATTR_DEV_INDEX);
	p->port = get_u32(tb, R2CC_ATTR_PORT);
	if (tb[R2CC_ATTR_DEV_NAME])
		nla_strlcpy(p->dev_name, tb[R2CC_ATTR_DEV_NAME],
			    sizeof(p->dev_name));
	p->state = get_u8(tb, R2CC_ATTR_STATE);
	p->phys_state = get_u8(tb, R2CC_ATTR_PHYS_STATE);
	p->link_layer = get_u8(tb, R2CC_ATTR_LINK_LAYER);
	p->ifindex = get_u32(tb, R2CC_ATTR_IFINDEX);
	p->bandwidth_mbps = get_u64(tb, R2CC_ATTR_BANDWIDTH_MBPS);
	p->last_change_ns = get_u64(tb, R2CC_ATTR_LAST_CHANGE_NS);
	p->down_events = get_u64(tb, R2CC_ATTR_DOWN_EVENTS);
	p->up_events = get_u64(tb, R2CC_ATTR_UP_EVENTS);
	p->flaps = get_u64(tb, R2CC_ATTR_FLAPS);
	p->down_time_ms = get_u64(tb, R2CC_ATTR_DOWN_TIME_MS);
	p->reason = get_u8(tb, R2CC_ATTR_REASON);
	p->degraded = get_u8(tb, R2CC_ATTR_DEGRADED);
	p->error_rate = get_u64(tb, R2CC_ATTR_ERROR_RATE);
	return NL_OK;
}

static int on_stats(struct nl_msg *msg, void *arg)
{
	struct ctl_nl *nl = arg;
	struct nlattr *tb[R2CC_ATTR_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, R2CC_ATTR_MAX, NULL))
		return NL_SKIP;
	nl->stats->emitted = get_u64(tb, R2CC_ATTR_EVENTS_EMITTED);
	nl->stats->delivered = get_u64(tb, R2CC_ATTR_EVENTS_DELIVERED);
	nl->stats->dropped = get_u64(tb, R2CC_ATTR_EVENTS_DROPPED);
	nl->stats->subscribers = get_u32(tb, R2CC_ATTR_SUBSCRIBERS);
	return NL_OK;
}

/*
 * Send @msg (freed here) and read the answer through @cb; returns 0 or
 * the kernel's -errno.
 */
static int request(struct ctl_nl *nl, struct nl_msg *msg, nl_recvmsg_msg_cb_t cb)
{
	int ret;

	nl_socket_modify_cb(nl->sk, NL_CB_VALID, cb ? NL_CB_CUSTOM :
			    NL_CB_DEFAULT, cb, nl);
	nl->err = 1;		/* no answer yet */
	ret = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return -EIO;
	while (nl->err == 1) {
		ret = nl_recvmsgs_default(nl->sk);
		if (ret < 0 && nl->err == 1)
			return -EIO;
	}
	return nl->err;
}

static struct nl_msg *msg_new(struct ctl_nl *nl, int cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family,
				0, flags | NLM_F_ACK, (uint8_t)cmd,
				R2CC_GENL_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

int ctl_nl_ports(struct ctl_nl *nl, struct ctl_port **ports)
{
	struct nl_msg *msg = msg_new(nl, R2CC_CMD_GET_PORT, NLM_F_DUMP);
	int ret;

	if (!msg)
		return -ENOMEM;
	nl->nports = 0;
	ret = request(nl, msg, on_port);
	if (ret)
		return ret;
	*ports = nl->ports;
	nl->ports = NULL;
	nl->cap = 0;
	return nl->nports;
}

int ctl_nl_stats(struct ctl_nl *nl, struct ctl_stats *st)
{
	struct nl_msg *msg = msg_new(nl, R2CC_CMD_GET_STATS, 0);

	if (!msg)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	nl->stats = st;
	return request(nl, msg, on_stats);
}

int ctl_nl_inject(struct ctl_nl *nl, uint32_t dev, uint32_t port,
		  uint16_t kind)
{
	struct nl_msg *msg = msg_new(nl, R2CC_CMD_INJECT, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, R2CC_ATTR_DEV_INDEX, dev) ||
	    nla_put_u32(msg, R2CC_ATTR_PORT, port) ||
	    nla_put_u16(msg, R2CC_ATTR_KIND, kind)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return request(nl, msg, NULL);
}

/*
 * A record into *@ev (from the group or a replay), from its attributes;
 * from the struct r2cc_event blob when a first-version module sends only
 * that.  0, or -1 if @msg is not a
 * record.
 */
static int parse_event(struct nl_msg *msg, struct r2cc_event *ev)
{
	uint8_t cmd = genlmsg_hdr(nlmsg_hdr(msg))->cmd;
	struct nlattr *tb[R2CC_ATTR_MAX + 1];
	struct nlattr *a;

	if ((cmd != R2CC_CMD_EVENT && cmd != R2CC_CMD_GET_EVENTS) ||
	    genlmsg_parse(nlmsg_hdr(msg), 0, tb, R2CC_ATTR_MAX, NULL))
		return -1;
	memset(ev, 0, sizeof(*ev));
	if (tb[R2CC_ATTR_KIND] && tb[R2CC_ATTR_SEQ]) {
		ev->size = sizeof(*ev);
		ev->version = R2CC_ABI_VERSION;
		ev->kind = nla_get_u16(tb[R2CC_ATTR_KIND]);
		ev->flags = tb[R2CC_ATTR_FLAGS] ?
			    nla_get_u16(tb[R2CC_ATTR_FLAGS]) : 0;
		ev->seq = get_u64(tb, R2CC_ATTR_SEQ);
		ev->time_ns = get_u64(tb, R2CC_ATTR_TIME_NS);
		ev->dev_index = get_u32(tb, R2CC_ATTR_DEV_INDEX);
		if (tb[R2CC_ATTR_DEV_NAME])
			nla_strlcpy(ev->dev_name, tb[R2CC_ATTR_DEV_NAME],
				    sizeof(ev->dev_name));
		ev->port = get_u32(tb, R2CC_ATTR_PORT);
		ev->old_state = get_u8(tb, R2CC_ATTR_OLD_STATE);
		ev->new_state = get_u8(tb, R2CC_ATTR_STATE);
		ev->phys_state = get_u8(tb, R2CC_ATTR_PHYS_STATE);
		ev->reason = get_u8(tb, R2CC_ATTR_REASON);
		ev->ifindex = get_u32(tb, R2CC_ATTR_IFINDEX);
		ev->bandwidth_mbps = get_u64(tb, R2CC_ATTR_BANDWIDTH_MBPS);
		ev->old_bandwidth_mbps =
			get_u64(tb, R2CC_ATTR_OLD_BANDWIDTH_MBPS);
		ev->lost = get_u64(tb, R2CC_ATTR_LOST);
		ev->error_rate = get_u64(tb, R2CC_ATTR_ERROR_RATE);
		return 0;
	}
	a = tb[R2CC_ATTR_EVENT];
	/* An older module's shorter record reads as zero past its end. */
	if (!a || nla_len(a) < (int)offsetof(struct r2cc_event, dev_name))
		return -1;
	memcpy(ev, nla_data(a), (size_t)nla_len(a) < sizeof(*ev) ?
	       (size_t)nla_len(a) : sizeof(*ev));
	ev->dev_name[sizeof(ev->dev_name) - 1] = '\0';
	return 0;
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct ctl_nl *nl = arg;

	if (parse_event(msg, nl->ev))
		return NL_SKIP;
	nl->got = 1;
	return NL_STOP;
}

static int on_replayed(struct nl_msg *msg, void *arg)
{
	struct ctl_nl *nl = arg;
	struct r2cc_event ev;

	if (!parse_event(msg, &ev))
		nl->replay(&ev, nl->replay_arg);
	return NL_OK;
}

int ctl_nl_replay(struct ctl_nl *nl, uint64_t since,
		  void (*fn)(const struct r2cc_event *ev, void *arg),
		  void *arg)
{
	struct nl_msg *msg = msg_new(nl, R2CC_CMD_GET_EVENTS, NLM_F_DUMP);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u64(msg, R2CC_ATTR_SEQ, since)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl->replay = fn;
	nl->replay_arg = arg;
	return request(nl, msg, on_replayed);
}

int ctl_nl_subscribe(struct ctl_nl *nl)
{
	int grp;

	grp = genl_ctrl_resolve_grp(nl->sk, R2CC_GENL_NAME,
				    R2CC_GENL_MCGRP_EVENTS);
	if (grp < 0)
		return -ENOENT;
	nl->mc = sock_new(nl);
	if (!nl->mc)
		return -EPROTONOSUPPORT;
	nl_socket_disable_seq_check(nl->mc);
	nl_socket_modify_cb(nl->mc, NL_CB_VALID, NL_CB_CUSTOM, on_event, nl);
	/* Ask for ENOBUFS when the socket overflows, not silence. */
	if (nl_socket_add_membership(nl->mc, grp) ||
	    nl_socket_set_nonblocking(nl->mc))
		return -EIO;
	return 0;
}

int ctl_nl_next_event(struct ctl_nl *nl, struct r2cc_event *ev,
		      int timeout_ms)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(nl->mc),
			      .events = POLLIN };
	int ret;

	nl->ev = ev;
	nl->got = 0;
	for (;;) {
		ret = nl_recvmsgs_default(nl->mc);
		if (nl->got)
			return 1;
		if (ret == -NLE_NOMEM || ret == -NLE_MSG_OVERFLOW)
			return -ENOBUFS;
		if (ret < 0 && ret != -NLE_AGAIN)
			return -EIO;
		if (ret == 0)
			continue;	/* a message that was not a record */
		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret == 0)
			return 0;
	}
}
