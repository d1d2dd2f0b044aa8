/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * USDT probes (provider "r2cc") at the points where a failure is handled,
 * for bpftrace/perf/systemtap: usdt:libr2cc.so:r2cc:NAME.  Each costs a
 * nop when nobody listens.  Without <sys/sdt.h> (Debian:
 * systemtap-sdt-dev) they compile to nothing.
 *
 *   rail_fail(conn, rail, reason)      a rail stops being used
 *   fault(conn, rail, where)           its fault located (r2cc_rail_reason)
 *   fence(conn, rail, sender, ns)      its QP is drained, ns after the fail
 *   rollback(conn, rail, chunks, bytes) chunks put back to be sent again
 *   repair(conn, ns)                   first re-sent chunk completed
 *   failback(conn, rail)               the rail is back in the schedule
 *   degraded(conn, rail, who)          drained (R2CC_RAIL_DEGRADED_*), 0 back
 *   fallback(conn, bytes)              a chunk went over TCP
 */
#ifndef R2CC_LIB_PROBES_H
#define R2CC_LIB_PROBES_H

#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
#define R2CC_HAVE_USDT 1
#endif
#endif

#ifdef R2CC_HAVE_USDT
#define R2CC_PROBE(...) STAP_PROBEV(r2cc, __VA_ARGS__)
#else
#define R2CC_PROBE(...) do { } while (0)
#endif

#endif
