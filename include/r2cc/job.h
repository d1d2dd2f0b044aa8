/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The stats file libr2cc keeps for each context, so that an operator sees
 * every process using r2cc on a node (r2ccctl jobs, r2ccctl prometheus)
 * without asking the process.
 *
 * Where: $R2CC_STATS_DIR (default /run/r2cc; empty: no file), which must
 * exist (the tmpfiles.d entry r2cc installs makes it, mode 1777 like
 * /tmp); the file is PID-SERIAL.job, mode 0644, made when the context is
 * created and removed when it is destroyed.  A process that died without
 * destroying its context leaves its file: a reader knows it by @pid and
 * @proc_start (field 22 of /proc/PID/stat), and r2ccctl removes it.
 *
 * Per-process totals are those of the connections open now plus @closed.
 *
 * What: the header, then @max_conns connection entries of @conn_size
 * bytes each, the first @nconns in use; every entry holds @max_rails rail
 * entries of @rail_size bytes.  Sizes only grow, new fields at the end,
 * so a reader uses the sizes in the file, never its own.  The library
 * rewrites the counters at most every 100 ms from its progress calls,
 * under @seq: even when stable; a reader copies the file, and keeps the
 * copy if @seq was even and unchanged across the copy.
 */
#ifndef R2CC_JOB_H
#define R2CC_JOB_H

#include <stdint.h>

#define R2CC_JOB_MAGIC		0x0a424f4a43433252ull	/* "R2CCJOB\n" */
#define R2CC_JOB_VERSION	1
#define R2CC_JOB_SUFFIX		".job"
#define R2CC_JOB_MAX_NICS	16
#define R2CC_JOB_MAX_CONNS	64
#define R2CC_JOB_MAX_RAILS	16

struct r2cc_job_nic {
	char dev_name[64];
	uint32_t port;
	uint8_t state;		/* enum r2cc_nic_state, now */
	uint8_t degraded;	/* r2cc.ko reports it degraded */
	uint8_t reserved[2];
	uint64_t bandwidth_mbps;
};

struct r2cc_job_rail {
	int32_t nic;		/* index into r2cc_job_header.nics */
	uint8_t state;		/* enum r2cc_rail_state */
	uint8_t standby;
	uint8_t degraded;	/* R2CC_RAIL_DEGRADED_* */
	uint8_t reason;		/* enum r2cc_rail_reason; was reserved (0) */
	uint64_t bytes;
	uint64_t failures;
	uint64_t rollbacks;
	uint64_t failbacks;
	uint64_t drains;
};

/* As struct r2cc_conn_stats. */
struct r2cc_job_counters {
	uint64_t msgs;
	uint64_t bytes;
	uint64_t resent_bytes;	/* sent again after a rollback */
	uint64_t tcp_bytes;	/* carried by the TCP fallback */
	uint64_t failovers;
	uint64_t repairs;
	uint64_t repair_ns_last;
	uint64_t repair_ns_max;
};

struct r2cc_job_conn {
	uint8_t sender;		/* 1: this end sends */
	uint8_t ready;		/* 1: handshake done */
	uint8_t failed;		/* 1: the connection failed */
	uint8_t fallback;	/* 1: no rail up, over TCP now */
	uint32_t nrails;
	char peer[64];		/* the peer's control address, "ADDR:PORT" */
	struct r2cc_job_counters c;
	/* then max_rails struct r2cc_job_rail of rail_size bytes */
};

struct r2cc_job_header {
	uint64_t magic;		/* R2CC_JOB_MAGIC */
	uint32_t version;	/* R2CC_JOB_VERSION */
	uint32_t header_size;	/* sizeof(struct r2cc_job_header) */
	uint32_t file_size;
	uint32_t conn_size;	/* a connection entry with its rails */
	uint32_t rail_size;
	uint32_t max_conns;
	uint32_t max_rails;
	uint32_t nconns;	/* entries in use */
	uint32_t seq;		/* odd while the library writes */
	int32_t pid;
	uint64_t proc_start;	/* /proc/PID/stat field 22: the PID's owner */
	uint64_t start_time_ns;	/* CLOCK_REALTIME, the context's creation */
	uint64_t update_time_ns;	/* CLOCK_REALTIME, the last rewrite */
	char comm[16];		/* the process's name */
	uint32_t notify_source;	/* enum r2cc_notify_source */
	uint32_t nnics;
	uint64_t conns_total;	/* connections ever made, closed included */
	/* Connections already closed, summed (repair_ns_*: the last, max). */
	struct r2cc_job_counters closed;
	struct r2cc_job_nic nics[R2CC_JOB_MAX_NICS];
	/* then max_conns connection entries of conn_size bytes */
};

#endif
