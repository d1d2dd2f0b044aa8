/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * r2cc tracepoints (group r2cc): every reported transition, every record
 * queued for a subscriber, every record lost to a full queue.  For perf,
 * ftrace and bpftrace (tools/bpftrace/).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM r2cc

#if !defined(R2CC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define R2CC_TRACE_H

#include <linux/r2cc.h>
#include <linux/tracepoint.h>

#include "compat.h"

/* Every record emitted, transitions and device events alike. */
TRACE_EVENT(r2cc_transition,
	    TP_PROTO(const struct r2cc_event *ev),
	    TP_ARGS(ev),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(u32, dev_index)
			     __field(u32, port)
			     __field(u16, kind)
			     __field(u16, flags)
			     __field(u8, old_state)
			     __field(u8, new_state)
			     __field(u64, bandwidth_mbps)
			     __string(dev, ev->dev_name)),
	    TP_fast_assign(__entry->seq = ev->seq;
			   __entry->dev_index = ev->dev_index;
			   __entry->port = ev->port;
			   __entry->kind = ev->kind;
			   __entry->flags = ev->flags;
			   __entry->old_state = ev->old_state;
			   __entry->new_state = ev->new_state;
			   __entry->bandwidth_mbps = ev->bandwidth_mbps;
			   r2cc_assign_str(dev, ev->dev_name);),
	    TP_printk("seq=%llu dev=%s index=%u port=%u kind=%u flags=0x%x state=%u->%u bw=%llu",
		      __entry->seq, __get_str(dev), __entry->dev_index,
		      __entry->port, __entry->kind, __entry->flags,
		      __entry->old_state, __entry->new_state,
		      __entry->bandwidth_mbps)
);

/* A record handed to the subscribers: queued for @queued of them. */
TRACE_EVENT(r2cc_deliver,
	    TP_PROTO(u64 seq, unsigned int queued, unsigned int subscribers),
	    TP_ARGS(seq, queued, subscribers),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(unsigned int, queued)
			     __field(unsigned int, subscribers)),
	    TP_fast_assign(__entry->seq = seq;
			   __entry->queued = queued;
			   __entry->subscribers = subscribers;),
	    TP_printk("seq=%llu queued=%u subscribers=%u", __entry->seq,
		      __entry->queued, __entry->subscribers)
);

/* A record lost to a full queue; @lost counts this subscriber's losses. */
TRACE_EVENT(r2cc_overflow,
	    TP_PROTO(u64 seq, u64 lost),
	    TP_ARGS(seq, lost),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(u64, lost)),
	    TP_fast_assign(__entry->seq = seq;
			   __entry->lost = lost;),
	    TP_printk("seq=%llu lost=%llu", __entry->seq, __entry->lost)
);

#endif /* R2CC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE r2cc_trace
#include <trace/define_trace.h>
