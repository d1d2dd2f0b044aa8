/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * r2ccctl: the operator's view of r2cc.ko, over its generic netlink family
 * and sysfs.  One file per job: r2ccctl.c parses the command line and runs
 * a verb, nl.c talks to the family, module.c reads sysfs, out.c writes
 * text or JSON, prom.c Prometheus' text format.
 */
#ifndef R2CCCTL_H
#define R2CCCTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/r2cc.h>
#include <r2cc/job.h>
#include <r2cc/r2cc.h>

/* Exit statuses (r2ccctl(8)). */
enum {
	CTL_OK = 0,
	CTL_FAIL = 1,		/* the kernel refused, or I/O failed */
	CTL_USAGE = 2,		/* bad command line */
	CTL_NO_MODULE = 3,	/* r2cc.ko is not loaded */
};

struct ctl_port {
	uint32_t dev_index, port, ifindex;
	char dev_name[R2CC_DEV_NAME_MAX];
	uint8_t state, phys_state, link_layer;
	uint64_t bandwidth_mbps, last_change_ns;
	uint64_t down_events, up_events, flaps, down_time_ms;
	uint8_t reason, degraded;	/* 0 from a first-version module */
	uint64_t error_rate;
};

struct ctl_stats {
	uint64_t emitted, delivered, dropped;
	uint32_t subscribers;
};

#define CTL_MAX_PARAMS 16

/* The module as sysfs shows it (/sys/module/r2cc). */
struct ctl_module {
	char version[64];		/* "" when it declares none */
	char srcversion[64];
	int nparams;
	char param[CTL_MAX_PARAMS][32];
	char value[CTL_MAX_PARAMS][64];
};

/* 0, or -ENOENT when r2cc.ko is not loaded. */
int ctl_module_read(struct ctl_module *m);

struct ctl_nl;

/* 0, -ENOENT when the family is not registered (no r2cc.ko), -errno. */
int ctl_nl_open(struct ctl_nl **nl);
void ctl_nl_close(struct ctl_nl *nl);
/* Every port into a malloc()ed array; returns the count or -errno. */
int ctl_nl_ports(struct ctl_nl *nl, struct ctl_port **ports);
int ctl_nl_stats(struct ctl_nl *nl, struct ctl_stats *st);
/* 0 or the kernel's -errno (-EPERM without CAP_NET_ADMIN). */
int ctl_nl_inject(struct ctl_nl *nl, uint32_t dev, uint32_t port,
		  uint16_t kind);
/* Join the events group; then ctl_nl_next_event() until it says stop. */
int ctl_nl_subscribe(struct ctl_nl *nl);
/*
 * Wait up to @timeout_ms (-1: forever) for the next record: 1 with *@ev,
 * 0 on timeout, -errno (-ENOBUFS: the socket overflowed, records lost).
 */
int ctl_nl_next_event(struct ctl_nl *nl, struct r2cc_event *ev,
		      int timeout_ms);
/*
 * Every record the module's ring holds after @since, in order, to @fn;
 * first an R2CC_EV_OVERFLOW record for those after @since it no longer
 * holds.  0 or the kernel's -errno (-EOPNOTSUPP: a module without it).
 */
int ctl_nl_replay(struct ctl_nl *nl, uint64_t since,
		  void (*fn)(const struct r2cc_event *ev, void *arg),
		  void *arg);

/* libr2cc's per-process stats files (jobs.c). */
struct ctl_job_conn {
	struct r2cc_job_conn c;
	uint32_t nrails;
	struct r2cc_job_rail rails[R2CC_JOB_MAX_RAILS];
};

struct ctl_job {
	struct r2cc_job_header h;	/* strings cut at their fields */
	int nconns;
	struct ctl_job_conn *conns;
};

/*
 * The live jobs in @dir into a malloc()ed array: returns their count or
 * -errno (the directory); files of processes that are gone are removed
 * (counted in *@removed), files that are not valid stats files skipped.
 */
int ctl_jobs_read(const char *dir, struct ctl_job **jobs, int *removed);
void ctl_jobs_free(struct ctl_job *jobs, int n);
void ctl_job_totals(const struct ctl_job *j, struct r2cc_job_counters *t);
void ctl_job_rails(const struct ctl_job *j, int *up, int *all);
/* $R2CC_STATS_DIR, or /run/r2cc. */
const char *ctl_jobs_dir(void);
void ctl_print_jobs(FILE *f, const struct ctl_job *j, int n, int removed,
		    int json);
void ctl_print_prometheus_jobs(FILE *f, const struct ctl_job *j, int n);

/* Output: text for people, JSON (one object per line for watch). */
const char *ctl_state_name(unsigned int state);
const char *ctl_kind_name(unsigned int kind);
const char *ctl_link_layer_name(unsigned int ll);
void ctl_json_str(FILE *f, const char *s);
void ctl_print_status(FILE *f, const struct ctl_port *p, int n,
		      const struct ctl_stats *st, const struct ctl_module *m,
		      int json);
void ctl_print_event(FILE *f, const struct r2cc_event *ev, int json);
/* Prometheus text exposition (prom.c). */
void ctl_print_prometheus(FILE *f, const struct ctl_port *p, int n,
			  const struct ctl_stats *st,
			  const struct ctl_module *m);

#endif
