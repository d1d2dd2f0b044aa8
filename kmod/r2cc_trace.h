/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * r2cc tracepoints (group r2cc): every reported transition, every record
 * put in the ring, every loss a subscriber reads, failed port queries,
 * flap damping, and every poll of a port's error counters.  For perf,
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
			     __field(u8, reason)
			     __field(u64, bandwidth_mbps)
			     __field(u64, old_bandwidth_mbps)
			     __field(u64, error_rate)
			     __string(dev, ev->dev_name)),
	    TP_fast_assign(__entry->seq = ev->seq;
			   __entry->dev_index = ev->dev_index;
			   __entry->port = ev->port;
			   __entry->kind = ev->kind;
			   __entry->flags = ev->flags;
			   __entry->old_state = ev->old_state;
			   __entry->new_state = ev->new_state;
			   __entry->reason = ev->reason;
			   __entry->bandwidth_mbps = ev->bandwidth_mbps;
			   __entry->old_bandwidth_mbps = ev->old_bandwidth_mbps;
			   __entry->error_rate = ev->error_rate;
			   r2cc_assign_str(dev, ev->dev_name);),
	    TP_printk("seq=%llu dev=%s index=%u port=%u kind=%u flags=0x%x state=%u->%u reason=%u bw=%llu old_bw=%llu error_rate=%llu",
		      __entry->seq, __get_str(dev), __entry->dev_index,
		      __entry->port, __entry->kind, __entry->flags,
		      __entry->old_state, __entry->new_state,
		      __entry->reason, __entry->bandwidth_mbps,
		      __entry->old_bandwidth_mbps, __entry->error_rate)
);

/* A record put in the ring, for the @subscribers open at that moment. */
TRACE_EVENT(r2cc_deliver,
	    TP_PROTO(u64 seq, unsigned int subscribers),
	    TP_ARGS(seq, subscribers),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(unsigned int, subscribers)),
	    TP_fast_assign(__entry->seq = seq;
			   __entry->subscribers = subscribers;),
	    TP_printk("seq=%llu subscribers=%u", __entry->seq,
		      __entry->subscribers)
);

/*
 * A subscriber found it fell behind: @lost records up to @seq were
 * overwritten before it read them (reported when it reads the overflow
 * record).
 */
TRACE_EVENT(r2cc_overflow,
	    TP_PROTO(u64 seq, u64 lost),
	    TP_ARGS(seq, lost),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(u64, lost)),
	    TP_fast_assign(__entry->seq = seq;
			   __entry->lost = lost;),
	    TP_printk("seq=%llu lost=%llu", __entry->seq, __entry->lost)
);

/* A port's query failed; @fails in a row (3 make it DOWN). */
TRACE_EVENT(r2cc_query_failed,
	    TP_PROTO(const char *dev, u32 port, unsigned int fails),
	    TP_ARGS(dev, port, fails),
	    TP_STRUCT__entry(__string(dev, dev)
			     __field(u32, port)
			     __field(unsigned int, fails)),
	    TP_fast_assign(r2cc_assign_str(dev, dev);
			   __entry->port = port;
			   __entry->fails = fails;),
	    TP_printk("dev=%s port=%u fails=%u", __get_str(dev),
		      __entry->port, __entry->fails)
);

/*
 * Flap damping: an up is held back (@held 1), or a hold ended because the
 * port bounced (@held 0, @flaps counts it).
 */
TRACE_EVENT(r2cc_damping,
	    TP_PROTO(const char *dev, u32 port, bool held, u64 flaps),
	    TP_ARGS(dev, port, held, flaps),
	    TP_STRUCT__entry(__string(dev, dev)
			     __field(u32, port)
			     __field(bool, held)
			     __field(u64, flaps)),
	    TP_fast_assign(r2cc_assign_str(dev, dev);
			   __entry->port = port;
			   __entry->held = held;
			   __entry->flaps = flaps;),
	    TP_printk("dev=%s port=%u held=%d flaps=%llu", __get_str(dev),
		      __entry->port, __entry->held, __entry->flaps)
);

/*
 * Every poll of a port's error counters: @rate errors per second, @total
 * since added, @degraded after this poll.
 */
TRACE_EVENT(r2cc_errors,
	    TP_PROTO(const char *dev, u32 port, u64 rate, u64 total,
		     bool degraded),
	    TP_ARGS(dev, port, rate, total, degraded),
	    TP_STRUCT__entry(__string(dev, dev)
			     __field(u32, port)
			     __field(u64, rate)
			     __field(u64, total)
			     __field(bool, degraded)),
	    TP_fast_assign(r2cc_assign_str(dev, dev);
			   __entry->port = port;
			   __entry->rate = rate;
			   __entry->total = total;
			   __entry->degraded = degraded;),
	    TP_printk("dev=%s port=%u rate=%llu total=%llu degraded=%d",
		      __get_str(dev), __entry->port, __entry->rate,
		      __entry->total, __entry->degraded)
);

#endif /* R2CC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE r2cc_trace
#include <trace/define_trace.h>
