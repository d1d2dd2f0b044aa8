/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * r2cc: RDMA port failure notification, the ABI shared by r2cc.ko and
 * userspace.  This is the only copy: the module and libr2cc include it.
 *
 * /dev/r2cc: every open is a subscriber with its own read position in the
 * module's ring of the last queue_len struct r2cc_event records.  read()
 * returns whole records only; poll() and epoll wake on new records.  A
 * subscriber that falls more than queue_len records behind loses the
 * oldest, never silently: its next read returns an R2CC_EV_OVERFLOW record
 * carrying the number lost, at the place in the stream where they were
 * lost.
 *
 * Every structure has explicit padding; reserved fields must be zero on
 * input (-EINVAL otherwise) and are zero on output.  Structures passed to
 * ioctls start with a size field set by the caller to sizeof() as it knows
 * it, so that they can grow, with copy_struct_from_user() rules: a shorter
 * (older) structure, down to the R2CC_*_SIZE_VER0 of its first version, is
 * read as if the missing tail were zero; a longer (newer) one is accepted
 * if the tail this module does not know is zero, -E2BIG otherwise.  The
 * module dispatches on the ioctl's number (_IOC_NR), so a command encoded
 * with another size still reaches it.
 */
#ifndef _UAPI_LINUX_R2CC_H
#define _UAPI_LINUX_R2CC_H

#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * Bumped when a reader of the previous version would misread the new
 * layout; new fields go at the end of a structure whose size its readers
 * are given (a record's @size, an ioctl argument's @size, the state
 * page's @entry_size), and need no bump.  A field never moves, shrinks or
 * changes meaning.
 *
 * 1: the first.  2: state-page entries grew from 40 to 48 bytes (the
 * incarnation), and version 1 had told readers to index hdr->ports[i];
 * since 2 they stride by hdr->entry_size.
 */
#define R2CC_ABI_VERSION	2

/* Character device (misc device name, so /dev/r2cc). */
#define R2CC_DEVICE_NAME	"r2cc"

/*
 * Generic netlink family "r2cc" (version R2CC_GENL_VERSION), for admin
 * tools.  R2CC_CMD_GET_PORT dumps one message per port; R2CC_CMD_GET_STATS
 * answers the global counters; R2CC_CMD_INJECT (CAP_NET_ADMIN) takes
 * R2CC_ATTR_DEV_INDEX, R2CC_ATTR_PORT and R2CC_ATTR_KIND as the ioctl does.
 * The "events" multicast group carries every record as R2CC_CMD_EVENT, one
 * attribute per field: R2CC_ATTR_SEQ, _KIND, _FLAGS, _TIME_NS, _DEV_INDEX,
 * _DEV_NAME, _PORT, _OLD_STATE, _STATE (the new one), _PHYS_STATE, _REASON,
 * _IFINDEX, _BANDWIDTH_MBPS, _OLD_BANDWIDTH_MBPS, _LOST and _ERROR_RATE.
 * R2CC_ATTR_EVENT (the struct r2cc_event) still comes too, for tools
 * written against the first version; it is deprecated.
 *
 * R2CC_CMD_GET_EVENTS dumps the records the module's ring (the last
 * queue_len) still holds after R2CC_ATTR_SEQ (u64; absent: 0, from the
 * first), in order, up to the last one emitted while the dump runs, one
 * message each with R2CC_CMD_EVENT's attributes.  Records after
 * R2CC_ATTR_SEQ that were overwritten come first as one R2CC_EV_OVERFLOW
 * record: @lost counts them, @seq is the last of them.  A tool that joins
 * the events group first and then dumps sees every record once, or is
 * told which it missed.  A module without it answers -EOPNOTSUPP.
 */
#define R2CC_GENL_NAME		"r2cc"
#define R2CC_GENL_VERSION	1
#define R2CC_GENL_MCGRP_EVENTS	"events"

enum r2cc_genl_cmd {
	R2CC_CMD_UNSPEC,
	R2CC_CMD_GET_PORT,	/* dump */
	R2CC_CMD_GET_STATS,
	R2CC_CMD_INJECT,
	R2CC_CMD_EVENT,		/* notification */
	R2CC_CMD_GET_EVENTS,	/* dump, after R2CC_ATTR_SEQ */
	__R2CC_CMD_MAX,
};

#define R2CC_CMD_MAX (__R2CC_CMD_MAX - 1)

enum r2cc_genl_attr {
	R2CC_ATTR_UNSPEC,
	R2CC_ATTR_PAD,
	R2CC_ATTR_DEV_INDEX,		/* u32 */
	R2CC_ATTR_DEV_NAME,		/* string */
	R2CC_ATTR_PORT,			/* u32 */
	R2CC_ATTR_KIND,			/* u16, enum r2cc_event_kind */
	R2CC_ATTR_STATE,		/* u8, enum r2cc_port_state */
	R2CC_ATTR_PHYS_STATE,		/* u8 */
	R2CC_ATTR_LINK_LAYER,		/* u8 */
	R2CC_ATTR_IFINDEX,		/* u32 */
	R2CC_ATTR_BANDWIDTH_MBPS,	/* u64 */
	R2CC_ATTR_LAST_CHANGE_NS,	/* u64 */
	R2CC_ATTR_DOWN_EVENTS,		/* u64 */
	R2CC_ATTR_UP_EVENTS,		/* u64 */
	R2CC_ATTR_FLAPS,		/* u64 */
	R2CC_ATTR_DOWN_TIME_MS,		/* u64 */
	R2CC_ATTR_SEQ,			/* u64 */
	R2CC_ATTR_EVENT,		/* binary, struct r2cc_event */
	R2CC_ATTR_EVENTS_EMITTED,	/* u64 */
	R2CC_ATTR_EVENTS_DELIVERED,	/* u64 */
	R2CC_ATTR_EVENTS_DROPPED,	/* u64 */
	R2CC_ATTR_SUBSCRIBERS,		/* u32 */
	R2CC_ATTR_REASON,		/* u8, enum r2cc_reason */
	R2CC_ATTR_OLD_STATE,		/* u8 */
	R2CC_ATTR_FLAGS,		/* u16, R2CC_EVF_* */
	R2CC_ATTR_TIME_NS,		/* u64, CLOCK_MONOTONIC */
	R2CC_ATTR_OLD_BANDWIDTH_MBPS,	/* u64 */
	R2CC_ATTR_LOST,			/* u64 */
	R2CC_ATTR_ERROR_RATE,		/* u64, errors per second */
	R2CC_ATTR_DEGRADED,		/* u8, 0 or 1 */
	__R2CC_ATTR_MAX,
};

#define R2CC_ATTR_MAX (__R2CC_ATTR_MAX - 1)

#define R2CC_DEV_NAME_MAX	64	/* IB_DEVICE_NAME_MAX */

/* Port states, the values of enum ib_port_state. */
enum r2cc_port_state {
	R2CC_PORT_NOP		= 0,	/* unknown, or the port is gone */
	R2CC_PORT_DOWN		= 1,
	R2CC_PORT_INIT		= 2,
	R2CC_PORT_ARMED		= 3,
	R2CC_PORT_ACTIVE	= 4,
	R2CC_PORT_ACTIVE_DEFER	= 5,
};

enum r2cc_event_kind {
	R2CC_EV_PORT_DOWN	= 1,	/* the port left ACTIVE */
	R2CC_EV_PORT_UP		= 2,	/* the port became ACTIVE */
	R2CC_EV_PORT_CHANGE	= 3,	/* any other state transition */
	R2CC_EV_DEVICE_ADD	= 4,	/* port is 0 */
	R2CC_EV_DEVICE_REMOVE	= 5,	/* port is 0 */
	R2CC_EV_DEVICE_FATAL	= 6,	/* port is 0 */
	R2CC_EV_GID_CHANGE	= 7,
	R2CC_EV_LID_CHANGE	= 8,
	R2CC_EV_PKEY_CHANGE	= 9,
	R2CC_EV_CLIENT_REREGISTER = 10,
	R2CC_EV_SM_CHANGE	= 11,
	R2CC_EV_OVERFLOW	= 12,	/* in-band: records were lost */
	/*
	 * The link's bandwidth changed and its state did not (a 4x port
	 * training at 2x): old_bandwidth_mbps -> bandwidth_mbps.
	 */
	R2CC_EV_PORT_SPEED	= 13,
	/*
	 * Early warning: the port's error counters (retransmissions,
	 * out-of-sequence and duplicate requests, ACK timeouts) rise faster
	 * than degrade_rate per second, while it is still ACTIVE; RECOVERED
	 * once they stay under recover_rate.  @error_rate has the rate.
	 */
	R2CC_EV_PORT_DEGRADED	= 14,
	R2CC_EV_PORT_RECOVERED	= 15,
	R2CC_EV_KIND_MAX	= R2CC_EV_PORT_RECOVERED,
};

/*
 * Why a port has the state it is reported in (struct r2cc_event.reason,
 * r2cc_port_info.reason, r2cc_state_port.reason).  Anything but NONE
 * overrides what the device says about the port: a port is never shown
 * ACTIVE while its device is fatal or cannot be queried.
 */
enum r2cc_reason {
	R2CC_REASON_NONE	= 0,	/* the port's state as queried */
	/* IB_EVENT_DEVICE_FATAL: every port DOWN until the device goes. */
	R2CC_REASON_FATAL	= 1,
	R2CC_REASON_QUERY	= 2,	/* ib_query_port failed repeatedly */
	R2CC_REASON_REMOVED	= 3,	/* the device went away (state NOP) */
};

/* struct r2cc_event.flags */
#define R2CC_EVF_INJECTED	(1U << 0)	/* synthesized by R2CC_IOC_INJECT */
#define R2CC_EVF_DAMPED		(1U << 1)	/* an up held back by flap damping */
#define R2CC_EVF_OVERFLOW	(1U << 2)	/* R2CC_EV_OVERFLOW record */

/*
 * One record, as read() returns it.  For R2CC_EV_OVERFLOW, @lost is the
 * number of records this subscriber lost and @seq the sequence number of
 * the last one lost; the device fields are zero.
 */
struct r2cc_event {
	__u16	size;		/* sizeof(struct r2cc_event) */
	__u16	version;	/* R2CC_ABI_VERSION */
	__u16	kind;		/* enum r2cc_event_kind */
	__u16	flags;		/* R2CC_EVF_* */
	__u64	seq;		/* global sequence number, from 1, no gaps */
	__u64	time_ns;	/* CLOCK_MONOTONIC */
	__u32	dev_index;	/* ib_device index, as `rdma dev` shows it */
	__u32	port;		/* 1-based; 0 for device-wide events */
	__u8	old_state;	/* enum r2cc_port_state */
	__u8	new_state;
	__u8	phys_state;	/* IB physical port state, 0 if unknown */
	__u8	reason;		/* enum r2cc_reason */
	__u32	ifindex;	/* netdev under a RoCE port, 0 if none */
	__u64	bandwidth_mbps;	/* link data rate: per-lane rate x width */
	__u64	lost;		/* R2CC_EV_OVERFLOW only */
	char	dev_name[R2CC_DEV_NAME_MAX];
	__u64	old_bandwidth_mbps;	/* before the change (PORT_SPEED) */
	__u64	error_rate;	/* PORT_DEGRADED/RECOVERED: errors per second */
};

/*
 * R2CC_IOC_VERSION: the module writes min(_IOC_SIZE(cmd), @size) bytes, so
 * a caller built against an older, shorter structure still gets its part.
 */
struct r2cc_version {
	__u32	abi;		/* R2CC_ABI_VERSION */
	__u32	event_size;	/* sizeof(struct r2cc_event) */
	__u32	port_info_size;	/* sizeof(struct r2cc_port_info) */
	__u32	state_size;	/* bytes to mmap for the state page */
	__u32	queue_len;	/* records the module keeps for readers */
	__u32	size;		/* sizeof(struct r2cc_version) in the module */
	__u32	reserved[2];
};

#define R2CC_VERSION_SIZE_VER0	32

/* One port, as R2CC_IOC_SNAPSHOT reports it. */
struct r2cc_port_info {
	__u32	dev_index;
	__u32	port;
	__u8	state;		/* enum r2cc_port_state, as last reported */
	__u8	phys_state;
	__u8	link_layer;	/* 1 InfiniBand, 2 Ethernet (RoCE) */
	__u8	reason;		/* enum r2cc_reason */
	__u32	ifindex;
	__u64	bandwidth_mbps;
	__u64	last_change_ns;	/* CLOCK_MONOTONIC of the last transition */
	char	dev_name[R2CC_DEV_NAME_MAX];
	__u64	reserved;
};

/*
 * R2CC_IOC_SNAPSHOT: every port's state and the sequence number @seq of the
 * last record emitted at that instant.  Once the snapshot is copied out,
 * this subscriber's next read starts after @seq, so a subscriber that takes
 * a snapshot and then reads starts consistent, with no gap and no
 * duplicate; a call that fails (-EFAULT) moves nothing.  @ports points to
 * @count entries; on return @count holds the number of ports, which may
 * exceed the array: call again with a larger one, up to
 * R2CC_SNAPSHOT_MAX_PORTS (one call fills at most that many entries).
 */
#define R2CC_SNAPSHOT_MAX_PORTS	4096

struct r2cc_snapshot {
	__u32	size;		/* in: sizeof(struct r2cc_snapshot) */
	__u32	count;		/* in: entries at @ports; out: ports */
	__u64	ports;		/* in: struct r2cc_port_info * */
	__u64	seq;		/* out */
	__u64	reserved[2];
};

#define R2CC_SNAPSHOT_SIZE_VER0	40

#define R2CC_FILTER_MAX_DEVS	16

/*
 * R2CC_IOC_SET_FILTER: which records this subscriber wants.  @kinds is a
 * mask of (1 << R2CC_EV_*); 0 means all kinds.  @ndevs device indexes in
 * @devs; 0 means all devices.  Overflow records are always delivered.  A
 * filtered subscriber sees gaps in @seq where records were filtered out.
 */
struct r2cc_filter {
	__u32	size;		/* in: sizeof(struct r2cc_filter) */
	__u32	ndevs;
	__u64	kinds;
	__u32	devs[R2CC_FILTER_MAX_DEVS];
	__u64	reserved[2];
};

#define R2CC_FILTER_SIZE_VER0	96

/*
 * R2CC_IOC_INJECT (CAP_NET_ADMIN): synthesize R2CC_EV_PORT_DOWN,
 * R2CC_EV_PORT_UP (port >= 1) or R2CC_EV_DEVICE_FATAL (port 0) for drills and
 * tests.  A port's reported state follows the injected one until the
 * module next queries the port (on its next real event, or any event of
 * its device).  The record carries R2CC_EVF_INJECTED.
 */
struct r2cc_inject {
	__u32	size;		/* in: sizeof(struct r2cc_inject) */
	__u32	dev_index;
	__u32	port;
	__u16	kind;
	__u16	reserved0;
	__u64	reserved[2];
};

#define R2CC_INJECT_SIZE_VER0	32

#define R2CC_IOC_MAGIC		0xC2
#define R2CC_IOC_VERSION	_IOR(R2CC_IOC_MAGIC, 0, struct r2cc_version)
#define R2CC_IOC_SNAPSHOT	_IOWR(R2CC_IOC_MAGIC, 1, struct r2cc_snapshot)
#define R2CC_IOC_SET_FILTER	_IOW(R2CC_IOC_MAGIC, 2, struct r2cc_filter)
#define R2CC_IOC_INJECT		_IOW(R2CC_IOC_MAGIC, 3, struct r2cc_inject)

/*
 * The state page: mmap(NULL, state_size, PROT_READ, MAP_SHARED, fd, 0).
 * Read-only; one slot per port, reused after a device goes away.
 *
 * The kernel updates it under a sequence counter.  To read consistently:
 *
 *	do {
 *		s = __atomic_load_n(&hdr->seq, __ATOMIC_ACQUIRE);
 *		if (s & 1)
 *			continue;			// update in progress
 *		... copy what you need from hdr and its slots ...
 *		__atomic_thread_fence(__ATOMIC_ACQUIRE);
 *	} while ((s & 1) ||
 *		 __atomic_load_n(&hdr->seq, __ATOMIC_RELAXED) != s);
 *
 * Slot i is at (char *)hdr->ports + i * hdr->entry_size: entries may grow.
 * A single port's health is one load of its state (a byte, always written
 * whole); @generation of the header counts every change, that of a port its
 * own changes.  A slot is reused when its device goes and another comes:
 * @incarnation, never repeated while the module is loaded (and never 0 in
 * a valid slot), names the port a slot holds.  A reader that bound itself
 * to a slot keeps the incarnation it saw and checks it inside the loop
 * above: a different one means its port is gone.
 */
#define R2CC_SLOT_VALID		(1U << 0)
#define R2CC_SLOT_DEGRADED	(1U << 1)	/* see R2CC_EV_PORT_DEGRADED */

struct r2cc_state_port {
	__u32	dev_index;
	__u32	port;
	__u8	state;		/* enum r2cc_port_state */
	__u8	phys_state;
	__u8	flags;		/* R2CC_SLOT_* */
	__u8	reason;		/* enum r2cc_reason */
	__u32	ifindex;
	__u64	generation;
	__u64	last_change_ns;
	__u64	bandwidth_mbps;
	__u64	incarnation;
};

struct r2cc_state_header {
	__u32	version;	/* R2CC_ABI_VERSION */
	__u32	seq;		/* odd while an update is in progress */
	__u32	nslots;		/* entries in ports[] (valid or not) */
	__u32	entry_size;	/* sizeof(struct r2cc_state_port) */
	__u64	generation;
	__u64	reserved[5];
	struct r2cc_state_port ports[];
};

#endif /* _UAPI_LINUX_R2CC_H */
