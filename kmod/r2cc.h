/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * r2cc.ko internals.
 *
 * Locking, outermost first:
 *   RTNL		held by the netdev notifier, which takes r2cc_lock
 *			to report a lost carrier (carrier_down=1).
 *   r2cc_lock (mutex)	the device list, every port's reported state, the
 *			state page and the emission of records.  Never held
 *			while calling into ib_core (ib_query_port may take
 *			RTNL for RoCE ports) or waiting for anything that
 *			takes RTNL.
 *   r2cc_devs_lock	the device list for the poll timer's walk and the
 *			netdev notifier's (carrier_down=0).
 *   (spinlock)
 *   r2cc_users_lock	open files per user (r2cc_events.c).
 *   (mutex)
 *   r2cc_ring_lock	the ring of records, the sequence, and every
 *   (spinlock)		subscriber's read position and filter.
 */
#ifndef R2CC_KMOD_H
#define R2CC_KMOD_H

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/r2cc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

struct r2cc_dev;

#define R2CC_ERR_COUNTERS_MAX	8
/* A port degrades on the mean of this many polls' error rates. */
#define R2CC_DEGRADE_POLLS	3

struct r2cc_port {
	struct r2cc_dev *dev;
	u32 num;			/* 1-based */
	struct kobject kobj;
	struct work_struct work;	/* re-query and report */
	struct delayed_work damp_work;	/* flap damping hold timer */
	struct delayed_work retry_work;	/* re-query after a failed query */
	/*
	 * Held from a sample of the port to its application: the three
	 * works above run on an unordered workqueue, and a sample taken
	 * first must not be applied last.  Outside r2cc_lock.
	 */
	struct mutex sample_lock;
	unsigned long pending;		/* BIT(R2CC_EV_*) seen by handlers */
	atomic_t fail_queries;		/* debugfs: fail this many queries */
	int slot;			/* state page slot, -1 if none */

	/* Under r2cc_lock. */
	u8 state;			/* as reported to subscribers */
	u8 reason;			/* enum r2cc_reason of @state */
	u8 phys_state;
	u8 link_layer;
	u8 query_fails;			/* failed queries in a row */
	bool damping;			/* an up is being held back */
	bool injected;			/* @state was injected, not queried */
	u32 carrier_seq;		/* DOWNs reported from a carrier loss */
	u64 incarnation;		/* of the state page slot */

	/* Error counters, r2cc_health.c; @hw NULL if the device has none. */
	struct rdma_hw_stats *hw;	/* ours, filled by the driver */
	u8 err_idx[R2CC_ERR_COUNTERS_MAX];
	u8 nerr;
	u8 err_timeout;			/* BIT(i): err_idx[i] is a timeout */
	/* Under r2cc_lock. */
	bool degraded;
	u8 under_polls;			/* in a row at or under recover */
	u8 win_n, win_at;		/* rates in @win, the next slot */
	u64 win[R2CC_DEGRADE_POLLS];	/* the last polls' error rates */
	u32 degrade_rate, recover_rate;	/* sysfs overrides, 0: module's */
	u64 err_last, err_last_ns;	/* the last reading */
	u64 err_total;			/* errors counted since added */
	u64 error_rate;			/* per second, at the last poll */
	u32 ifindex;
	u64 bandwidth_mbps;
	u64 last_change_ns;
	u64 down_since_ns;		/* 0 while up */
	u64 down_time_ns;		/* accumulated */
	u64 down_events, up_events, flaps, generation;
};

struct r2cc_dev {
	struct list_head list;		/* r2cc_devs, under both locks */
	struct ib_device *ibdev;
	struct kobject kobj;
	struct kobject *ports_kobj;
	struct ib_event_handler handler;
	struct work_struct dev_work;	/* device-wide events */
	unsigned long dev_pending;
	u32 index;
	char name[R2CC_DEV_NAME_MAX];
	bool live;			/* reported; works may run */
	bool removing;
	bool fatal;			/* IB_EVENT_DEVICE_FATAL seen */
	u32 nports;
	struct r2cc_port ports[];
};

/* r2cc_main.c */
#define R2CC_DAMPING_MS_MAX	600000
#define R2CC_POLL_MS_MAX	60000
extern struct mutex r2cc_lock;
extern struct workqueue_struct *r2cc_wq;
extern unsigned int r2cc_queue_len;
extern unsigned int r2cc_damping_ms;
extern unsigned int r2cc_max_user_subscribers;
extern unsigned int r2cc_poll_ms;
extern bool r2cc_poll_query;
extern bool r2cc_carrier_down;
extern unsigned int r2cc_degrade_rate;
extern unsigned int r2cc_recover_rate;
extern bool r2cc_count_timeouts;

/* r2cc_ports.c */
int r2cc_ports_init(void);
void r2cc_ports_exit(void);
int r2cc_snapshot_fill(struct r2cc_port_info *info, u32 max, u32 *count,
		       u64 *seq);
int r2cc_inject(const struct r2cc_inject *inj);
void r2cc_damping_changed(void);
int r2cc_fail_queries(u32 dev_index, u32 port, unsigned int n);
int r2cc_fail_device(u32 dev_index);

/* A port's reported state and counters, copied under r2cc_lock. */
struct r2cc_port_stats {
	u32 dev_index, port, ifindex;
	u8 state, reason, phys_state, link_layer;
	bool degraded;
	u64 error_rate;
	u64 bandwidth_mbps, last_change_ns, down_events, up_events, flaps;
	u64 down_time_ms;
	char dev_name[R2CC_DEV_NAME_MAX];
};

int r2cc_port_stats_after(bool started, u32 dev_index, u32 port,
			  struct r2cc_port_stats *st);
u64 r2cc_down_time_ms(const struct r2cc_port *p);

/* r2cc_genl.c */
int r2cc_genl_init(void);
void r2cc_genl_exit(void);
void r2cc_genl_notify(const struct r2cc_event *ev);

/* r2cc_events.c */
struct r2cc_sub;
int r2cc_events_init(void);
void r2cc_events_exit(void);
struct r2cc_sub *r2cc_sub_alloc(bool exempt);
void r2cc_sub_free(struct r2cc_sub *sub);
void r2cc_emit(struct r2cc_event *ev);
u64 r2cc_last_seq(void);
bool r2cc_ring_peek(u64 next, struct r2cc_event *rec, u64 *after);
int r2cc_sub_skip_to(struct r2cc_sub *sub, u64 seq);
void r2cc_sub_set_filter(struct r2cc_sub *sub, u64 kinds, u32 ndevs,
			 const u32 *devs);
ssize_t r2cc_sub_read(struct r2cc_sub *sub, char __user *buf, size_t len,
		      bool nonblock);
__poll_t r2cc_sub_poll(struct r2cc_sub *sub, struct file *file,
		       poll_table *wait);
u64 r2cc_stat_delivered(void);
u64 r2cc_stat_dropped(void);
u64 r2cc_stat_emitted(void);
u64 r2cc_stat_refused(void);
unsigned int r2cc_stat_subscribers(void);

/* r2cc_state.c */
int r2cc_state_init(void);
void r2cc_state_exit(void);
int r2cc_state_slot_get(u64 *incarnation);
void r2cc_state_slot_put(int slot);
void r2cc_state_update(const struct r2cc_port *port, bool valid);
int r2cc_state_mmap(struct file *file, struct vm_area_struct *vma);
size_t r2cc_state_size(void);

/* r2cc_health.c */
void r2cc_health_init(struct r2cc_port *p);
void r2cc_health_exit(struct r2cc_port *p);
bool r2cc_health_read(struct r2cc_port *p, u64 *sum);
u16 r2cc_health_apply(struct r2cc_port *p, u64 sum, u64 now);

/* r2cc_debugfs.c */
void r2cc_debugfs_init(void);
void r2cc_debugfs_exit(void);

/* r2cc_cdev.c */
int r2cc_cdev_init(void);
void r2cc_cdev_exit(void);

/* r2cc_sysfs.c */
int r2cc_sysfs_init(void);
void r2cc_sysfs_exit(void);
int r2cc_sysfs_add_dev(struct r2cc_dev *dev);
void r2cc_sysfs_del_dev(struct r2cc_dev *dev);
extern const struct kobj_type r2cc_port_ktype;
extern const struct kobj_type r2cc_dev_ktype;

#endif /* R2CC_KMOD_H */
