/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * r2cc.ko internals.
 *
 * Locking, outermost first:
 *   r2cc_lock (mutex)	the device list, every port's reported state, the
 *			state page and the emission of records.  Never held
 *			while calling into ib_core (ib_query_port may take
 *			RTNL for RoCE ports, and the netdev notifier runs
 *			under RTNL).
 *   r2cc_devs_lock	the device list for lookups from atomic context and
 *   (spinlock)		the netdev notifier.
 *   r2cc_subs_lock	the subscriber list and every subscriber's queue.
 *   (spinlock)
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

struct r2cc_port {
	struct r2cc_dev *dev;
	u32 num;			/* 1-based */
	struct kobject kobj;
	struct work_struct work;	/* re-query and report */
	struct delayed_work damp_work;	/* flap damping hold timer */
	unsigned long pending;		/* BIT(R2CC_EV_*) seen by handlers */
	int slot;			/* state page slot, -1 if none */

	/* Under r2cc_lock. */
	u8 state;			/* as reported to subscribers */
	u8 phys_state;
	u8 link_layer;
	bool damping;			/* an up is being held back */
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
	u32 nports;
	struct r2cc_port ports[];
};

/* r2cc_main.c */
extern struct mutex r2cc_lock;
extern struct workqueue_struct *r2cc_wq;
extern unsigned int r2cc_queue_len;
extern unsigned int r2cc_damping_ms;

/* r2cc_ports.c */
int r2cc_ports_init(void);
void r2cc_ports_exit(void);
int r2cc_snapshot_fill(struct r2cc_port_info *info, u32 max, u32 *count,
		       u64 *seq);
int r2cc_inject(const struct r2cc_inject *inj);

/* A port's reported state and counters, copied under r2cc_lock. */
struct r2cc_port_stats {
	u32 dev_index, port, ifindex;
	u8 state, phys_state, link_layer;
	u64 bandwidth_mbps, last_change_ns, down_events, up_events, flaps;
	u64 down_time_ms;
	char dev_name[R2CC_DEV_NAME_MAX];
};

int r2cc_port_stats_at(u32 pos, struct r2cc_port_stats *st);
u64 r2cc_down_time_ms(const struct r2cc_port *p);

/* r2cc_genl.c */
int r2cc_genl_init(void);
void r2cc_genl_exit(void);
void r2cc_genl_notify(const struct r2cc_event *ev);

/* r2cc_events.c */
struct r2cc_sub;
struct r2cc_sub *r2cc_sub_alloc(void);
void r2cc_sub_free(struct r2cc_sub *sub);
void r2cc_emit(struct r2cc_event *ev);
u64 r2cc_last_seq(void);
void r2cc_sub_discard_upto(struct r2cc_sub *sub, u64 seq);
void r2cc_sub_set_filter(struct r2cc_sub *sub, u64 kinds, u32 ndevs,
			 const u32 *devs);
ssize_t r2cc_sub_read(struct r2cc_sub *sub, char __user *buf, size_t len,
		      bool nonblock);
__poll_t r2cc_sub_poll(struct r2cc_sub *sub, struct file *file,
		       poll_table *wait);
u64 r2cc_stat_delivered(void);
u64 r2cc_stat_dropped(void);
u64 r2cc_stat_emitted(void);
unsigned int r2cc_stat_subscribers(void);

/* r2cc_state.c */
int r2cc_state_init(void);
void r2cc_state_exit(void);
int r2cc_state_slot_get(void);
void r2cc_state_slot_put(int slot);
void r2cc_state_update(const struct r2cc_port *port, bool valid);
int r2cc_state_mmap(struct file *file, struct vm_area_struct *vma);
size_t r2cc_state_size(void);

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
