// SPDX-License-Identifier: GPL-2.0-only
/*
 * The "r2cc" generic netlink family: port dump, stats, inject (admin only,
 * with argument validation), the "events" multicast group, and the dump
 * of the records the ring holds (GET_EVENTS after a sequence number).
 */
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <sys/wait.h>

#include "r2cc_test.h"

static int family, ports, got_event;
static struct r2cc_event event;

static int on_port(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[R2CC_ATTR_MAX + 1];

	(void)arg;
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, R2CC_ATTR_MAX, NULL))
		return NL_SKIP;
	if (tb[R2CC_ATTR_DEV_NAME] && tb[R2CC_ATTR_PORT] &&
	    tb[R2CC_ATTR_STATE] && tb[R2CC_ATTR_BANDWIDTH_MBPS] &&
	    tb[R2CC_ATTR_DOWN_EVENTS] && tb[R2CC_ATTR_DOWN_TIME_MS])
		ports++;
	return NL_OK;
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[R2CC_ATTR_MAX + 1];

	(void)arg;
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, R2CC_ATTR_MAX, NULL))
		return NL_SKIP;
	if (genlmsg_hdr(nlmsg_hdr(msg))->cmd == R2CC_CMD_EVENT &&
	    tb[R2CC_ATTR_EVENT] && nla_len(tb[R2CC_ATTR_EVENT]) ==
	    sizeof(event)) {
		memcpy(&event, nla_data(tb[R2CC_ATTR_EVENT]), sizeof(event));
		got_event = 1;
	}
	return NL_OK;
}

/* Records a GET_EVENTS dump returned, in order. */
static struct r2cc_event dumped[64];
static int ndumped, dump_total;

static int on_dumped(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[R2CC_ATTR_MAX + 1];

	(void)arg;
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, R2CC_ATTR_MAX, NULL) ||
	    genlmsg_hdr(nlmsg_hdr(msg))->cmd != R2CC_CMD_GET_EVENTS ||
	    !tb[R2CC_ATTR_EVENT] ||
	    nla_len(tb[R2CC_ATTR_EVENT]) != sizeof(dumped[0]))
		return NL_SKIP;
	if (ndumped < (int)(sizeof(dumped) / sizeof(dumped[0])))
		memcpy(&dumped[ndumped++], nla_data(tb[R2CC_ATTR_EVENT]),
		       sizeof(dumped[0]));
	dump_total++;
	return NL_OK;
}

/*
 * GET_EVENTS after @since (@how 0: as a u64, 1: as a u32, too short,
 * 2: no attribute); the records in dumped[].  0 or a libnl error.
 */
static int dump_events(struct nl_sock *sk, uint64_t since, int how)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	ndumped = dump_total = 0;
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_DUMP,
		    R2CC_CMD_GET_EVENTS, R2CC_GENL_VERSION);
	if (how == 0)
		nla_put_u64(msg, R2CC_ATTR_SEQ, since);
	else if (how == 1)
		nla_put_u32(msg, R2CC_ATTR_SEQ, (uint32_t)since);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_dumped, NULL);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret >= 0)
		ret = nl_recvmsgs_default(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_DEFAULT, NULL, NULL);
	return ret < 0 ? ret : 0;
}

/*
 * Send INJECT with the attributes given (-1: leave out); returns 0 or a
 * negative libnl error (the kernel's errno mapped to NLE_*).
 */
static int nl_inject(struct nl_sock *sk, long dev, long port, long kind,
		     int u8_dev)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_ACK,
		    R2CC_CMD_INJECT, R2CC_GENL_VERSION);
	if (dev >= 0) {
		if (u8_dev)
			nla_put_u8(msg, R2CC_ATTR_DEV_INDEX, (uint8_t)dev);
		else
			nla_put_u32(msg, R2CC_ATTR_DEV_INDEX, (uint32_t)dev);
	}
	if (port >= 0)
		nla_put_u32(msg, R2CC_ATTR_PORT, (uint32_t)port);
	if (kind >= 0)
		nla_put_u16(msg, R2CC_ATTR_KIND, (uint16_t)kind);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return ret;
	return nl_wait_for_ack(sk);
}

static int simple(struct nl_sock *sk, int cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd,
		    R2CC_GENL_VERSION);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	return ret < 0 ? ret : nl_recvmsgs_default(sk);
}

int main(void)
{
	struct nl_sock *sk, *mc;
	int dev, grp, ret, i, st, sysfs_ports;
	unsigned int port;
	char name[64];
	pid_t pid;
	FILE *f;

	if (geteuid())
		tap_skip_all("needs root");
	dev = r2cc_test_dev(name, sizeof(name), &port);
	sk = nl_socket_alloc();
	mc = nl_socket_alloc();
	if (genl_connect(sk) || genl_connect(mc))
		tap_skip_all("no generic netlink");
	/* Only INJECT asks for an ACK; nothing stale is left to read. */
	nl_socket_disable_auto_ack(sk);
	tap_plan(18);

	family = genl_ctrl_resolve(sk, R2CC_GENL_NAME);
	tap_ok(family > 0, "family %s resolves (id %d)", R2CC_GENL_NAME,
	       family);
	grp = genl_ctrl_resolve_grp(sk, R2CC_GENL_NAME,
				    R2CC_GENL_MCGRP_EVENTS);
	tap_ok(grp > 0, "multicast group %s resolves", R2CC_GENL_MCGRP_EVENTS);

	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_port, NULL);
	ret = simple(sk, R2CC_CMD_GET_PORT, NLM_F_DUMP);
	f = popen("ls -d /sys/kernel/r2cc/devices/*/ports/* | wc -l", "r");
	sysfs_ports = -1;
	if (f) {
		if (fscanf(f, "%d", &sysfs_ports) != 1)
			sysfs_ports = -1;
		pclose(f);
	}
	tap_ok(ret >= 0 && ports == sysfs_ports && ports > 0,
	       "GET_PORT dump: %d ports with all attributes (sysfs: %d)",
	       ports, sysfs_ports);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_DEFAULT, NULL, NULL);
	tap_ok(simple(sk, R2CC_CMD_GET_STATS, 0) >= 0, "GET_STATS answers");

	nl_socket_disable_seq_check(mc);
	nl_socket_modify_cb(mc, NL_CB_VALID, NL_CB_CUSTOM, on_event, NULL);
	tap_ok(nl_socket_add_membership(mc, grp) == 0, "joined %s",
	       R2CC_GENL_MCGRP_EVENTS);
	tap_ok(nl_inject(sk, dev, port, R2CC_EV_PORT_DOWN, 0) == 0,
	       "INJECT down over netlink");
	for (i = 0; i < 20 && !got_event; i++)
		nl_recvmsgs_default(mc);
	tap_ok(got_event && event.kind == R2CC_EV_PORT_DOWN &&
	       event.dev_index == (__u32)dev && event.port == port &&
	       (event.flags & R2CC_EVF_INJECTED),
	       "the events group carries the record (seq %llu)",
	       (unsigned long long)event.seq);
	tap_ok(nl_inject(sk, dev, port, R2CC_EV_PORT_UP, 0) == 0, "INJECT up");

	/* The ring after the record just seen: it, then the up. */
	ret = dump_events(sk, event.seq - 1, 0);
	tap_ok(!ret && ndumped >= 2 && dumped[0].seq == event.seq &&
	       dumped[0].kind == R2CC_EV_PORT_DOWN &&
	       dumped[1].seq == event.seq + 1 &&
	       dumped[1].kind == R2CC_EV_PORT_UP,
	       "GET_EVENTS after seq %llu: the down (seq %llu), then the up (%d records, %s)",
	       (unsigned long long)event.seq - 1,
	       (unsigned long long)(ndumped ? dumped[0].seq : 0), dump_total,
	       nl_geterror(ret));
	ret = dump_events(sk, event.seq + 1, 0);
	tap_ok(!ret && dump_total == 0,
	       "GET_EVENTS after the last record: none (%d, %s)", dump_total,
	       nl_geterror(ret));
	ret = dump_events(sk, UINT64_MAX, 0);
	tap_ok(!ret && dump_total == 0,
	       "GET_EVENTS after 2^64 - 1: none, no wrap to the first (%d, %s)",
	       dump_total, nl_geterror(ret));
	ret = dump_events(sk, 0, 2);
	for (i = 1; i < ndumped && dumped[i].seq == dumped[i - 1].seq + 1; i++)
		;
	tap_ok(!ret && ndumped > 0 && i == ndumped &&
	       (dumped[0].seq == 1 || dumped[0].kind == R2CC_EV_OVERFLOW),
	       "GET_EVENTS with no sequence: from the first record held, in order (first seq %llu, %d records)",
	       (unsigned long long)(ndumped ? dumped[0].seq : 0), dump_total);
	ret = dump_events(sk, 5, 1);
	/* Attribute length errors are EINVAL or ERANGE by kernel version. */
	tap_ok(ret == -NLE_INVAL || ret == -NLE_RANGE,
	       "GET_EVENTS with a u32 sequence is refused (%s)",
	       nl_geterror(ret));

	ret = nl_inject(sk, dev, port, -1, 0);
	tap_ok(ret == -NLE_INVAL, "INJECT without a kind: EINVAL (%s)",
	       nl_geterror(ret));
	ret = nl_inject(sk, dev, port, 0x7fff, 0);
	tap_ok(ret == -NLE_RANGE,
	       "INJECT with an out-of-range kind: ERANGE (%s)",
	       nl_geterror(ret));
	ret = nl_inject(sk, dev, port, R2CC_EV_PORT_DOWN, 1);
	/* Attribute length errors are EINVAL or ERANGE by kernel version. */
	tap_ok(ret == -NLE_INVAL || ret == -NLE_RANGE,
	       "INJECT with a u8 device index is refused (%s)",
	       nl_geterror(ret));
	ret = nl_inject(sk, 999999, 1, R2CC_EV_PORT_DOWN, 0);
	tap_ok(ret == -NLE_NODEV, "INJECT on an unknown device: ENODEV (%s)",
	       nl_geterror(ret));
	pid = fork();
	if (pid == 0) {
		struct nl_sock *u;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		u = nl_socket_alloc();
		if (genl_connect(u))
			_exit(3);
		_exit(nl_inject(u, dev, port, R2CC_EV_PORT_DOWN, 0) == -NLE_PERM ?
		      0 : 1);
	}
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "INJECT from an unprivileged user: EPERM");
	nl_socket_free(mc);
	nl_socket_free(sk);
	return tap_done();
}
