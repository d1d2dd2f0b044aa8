// SPDX-License-Identifier: GPL-2.0-only
/*
 * Records and subscribers: the global sequence, one bounded queue per open
 * of /dev/r2cc, and overflow accounting that is never silent.
 *
 * A full queue drops the newest record and counts it.  As soon as there is
 * room again, an R2CC_EV_OVERFLOW record with the count goes into the queue
 * first, so the reader sees the gap exactly where it happened; if the
 * reader drains the queue before anything else arrives, read() reports the
 * pending loss by itself.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#include "r2cc.h"

#define CREATE_TRACE_POINTS
#include "r2cc_trace.h"

#define R2CC_READ_BATCH 32

struct r2cc_sub {
	struct list_head list;
	wait_queue_head_t wait;
	struct mutex read_lock;		/* one reader at a time per file */
	struct r2cc_event *bounce;	/* R2CC_READ_BATCH records */

	/* Under r2cc_subs_lock. */
	struct r2cc_event *ring;
	u32 head, count;
	u64 lost, lost_last_seq;
	u64 kinds;			/* 0: all */
	u32 ndevs;
	u32 devs[R2CC_FILTER_MAX_DEVS];
};

static LIST_HEAD(r2cc_subs);
static DEFINE_SPINLOCK(r2cc_subs_lock);
static u64 r2cc_seq;			/* under r2cc_subs_lock */
static unsigned int r2cc_nsubs;		/* under r2cc_subs_lock */
static atomic64_t r2cc_delivered = ATOMIC64_INIT(0);
static atomic64_t r2cc_dropped = ATOMIC64_INIT(0);

struct r2cc_sub *r2cc_sub_alloc(void)
{
	struct r2cc_sub *sub = kzalloc(sizeof(*sub), GFP_KERNEL);

	if (!sub)
		return NULL;
	sub->ring = kvcalloc(r2cc_queue_len, sizeof(*sub->ring), GFP_KERNEL);
	sub->bounce = kcalloc(R2CC_READ_BATCH, sizeof(*sub->bounce),
			      GFP_KERNEL);
	if (!sub->ring || !sub->bounce) {
		kvfree(sub->ring);
		kfree(sub->bounce);
		kfree(sub);
		return NULL;
	}
	init_waitqueue_head(&sub->wait);
	mutex_init(&sub->read_lock);
	spin_lock(&r2cc_subs_lock);
	list_add_tail(&sub->list, &r2cc_subs);
	r2cc_nsubs++;
	spin_unlock(&r2cc_subs_lock);
	return sub;
}

void r2cc_sub_free(struct r2cc_sub *sub)
{
	spin_lock(&r2cc_subs_lock);
	list_del(&sub->list);
	r2cc_nsubs--;
	spin_unlock(&r2cc_subs_lock);
	kvfree(sub->ring);
	kfree(sub->bounce);
	kfree(sub);
}

static bool r2cc_sub_wants(const struct r2cc_sub *sub,
			   const struct r2cc_event *ev)
{
	u32 i;

	if (sub->kinds && !(sub->kinds & BIT_ULL(ev->kind)))
		return false;
	if (!sub->ndevs)
		return true;
	for (i = 0; i < sub->ndevs; i++)
		if (sub->devs[i] == ev->dev_index)
			return true;
	return false;
}

static void r2cc_overflow_record(struct r2cc_event *rec, u64 lost,
				 u64 last_seq)
{
	memset(rec, 0, sizeof(*rec));
	rec->size = sizeof(*rec);
	rec->version = R2CC_ABI_VERSION;
	rec->kind = R2CC_EV_OVERFLOW;
	rec->flags = R2CC_EVF_OVERFLOW;
	rec->seq = last_seq;
	rec->time_ns = ktime_get_ns();
	rec->lost = lost;
}

static struct r2cc_event *r2cc_ring_tail(struct r2cc_sub *sub)
{
	u32 i = (sub->head + sub->count) % r2cc_queue_len;

	sub->count++;
	return &sub->ring[i];
}

/* Called with r2cc_subs_lock held; true if @ev was queued. */
static bool r2cc_sub_push(struct r2cc_sub *sub, const struct r2cc_event *ev)
{
	u32 room = r2cc_queue_len - sub->count;

	if (sub->lost) {
		if (room == 0) {
			sub->lost++;
			sub->lost_last_seq = ev->seq;
			atomic64_inc(&r2cc_dropped);
			trace_r2cc_overflow(ev->seq, sub->lost);
			return false;
		}
		if (room == 1) {	/* the overflow record takes the last slot */
			sub->lost++;
			sub->lost_last_seq = ev->seq;
			atomic64_inc(&r2cc_dropped);
			trace_r2cc_overflow(ev->seq, sub->lost);
			r2cc_overflow_record(r2cc_ring_tail(sub), sub->lost,
					     sub->lost_last_seq);
			sub->lost = 0;
			return false;
		}
		r2cc_overflow_record(r2cc_ring_tail(sub), sub->lost,
				     sub->lost_last_seq);
		sub->lost = 0;
		room--;
	}
	if (room == 0) {
		sub->lost = 1;
		sub->lost_last_seq = ev->seq;
		atomic64_inc(&r2cc_dropped);
		trace_r2cc_overflow(ev->seq, sub->lost);
		return false;
	}
	*r2cc_ring_tail(sub) = *ev;
	atomic64_inc(&r2cc_delivered);
	return true;
}

/*
 * Stamp @ev with the next sequence number (and the time, unless set) and
 * queue it for every subscriber that wants it.  Callers hold r2cc_lock,
 * which orders records with the state they describe.
 */
void r2cc_emit(struct r2cc_event *ev)
{
	unsigned int queued = 0, nsubs = 0;
	struct r2cc_sub *sub;

	lockdep_assert_held(&r2cc_lock);
	ev->size = sizeof(*ev);
	ev->version = R2CC_ABI_VERSION;
	if (!ev->time_ns)	/* transitions carry their own, see sysfs */
		ev->time_ns = ktime_get_ns();

	spin_lock(&r2cc_subs_lock);
	ev->seq = ++r2cc_seq;
	trace_r2cc_transition(ev);
	list_for_each_entry(sub, &r2cc_subs, list) {
		if (!r2cc_sub_wants(sub, ev))
			continue;
		nsubs++;
		queued += r2cc_sub_push(sub, ev);
		wake_up_interruptible_poll(&sub->wait, EPOLLIN | EPOLLRDNORM);
	}
	trace_r2cc_deliver(ev->seq, queued, nsubs);
	spin_unlock(&r2cc_subs_lock);
	r2cc_genl_notify(ev);
}

u64 r2cc_last_seq(void)
{
	u64 seq;

	spin_lock(&r2cc_subs_lock);
	seq = r2cc_seq;
	spin_unlock(&r2cc_subs_lock);
	return seq;
}

/* Drop queued records already reflected in a snapshot taken at @seq. */
void r2cc_sub_discard_upto(struct r2cc_sub *sub, u64 seq)
{
	spin_lock(&r2cc_subs_lock);
	while (sub->count && sub->ring[sub->head].seq <= seq &&
	       sub->ring[sub->head].kind != R2CC_EV_OVERFLOW) {
		sub->head = (sub->head + 1) % r2cc_queue_len;
		sub->count--;
	}
	spin_unlock(&r2cc_subs_lock);
}

void r2cc_sub_set_filter(struct r2cc_sub *sub, u64 kinds, u32 ndevs,
			 const u32 *devs)
{
	spin_lock(&r2cc_subs_lock);
	sub->kinds = kinds;
	sub->ndevs = ndevs;
	memcpy(sub->devs, devs, ndevs * sizeof(*devs));
	spin_unlock(&r2cc_subs_lock);
}

static bool r2cc_sub_ready(struct r2cc_sub *sub)
{
	bool ready;

	spin_lock(&r2cc_subs_lock);
	ready = sub->count || sub->lost;
	spin_unlock(&r2cc_subs_lock);
	return ready;
}

/* Move up to @max records into the bounce buffer; returns how many. */
static u32 r2cc_sub_take(struct r2cc_sub *sub, u32 max)
{
	u32 n = 0;

	spin_lock(&r2cc_subs_lock);
	while (n < max && sub->count) {
		sub->bounce[n++] = sub->ring[sub->head];
		sub->head = (sub->head + 1) % r2cc_queue_len;
		sub->count--;
	}
	/* Loss after the last queued record, with nothing queued behind it. */
	if (n < max && !sub->count && sub->lost) {
		r2cc_overflow_record(&sub->bounce[n++], sub->lost,
				     sub->lost_last_seq);
		sub->lost = 0;
	}
	spin_unlock(&r2cc_subs_lock);
	return n;
}

ssize_t r2cc_sub_read(struct r2cc_sub *sub, char __user *buf, size_t len,
		      bool nonblock)
{
	size_t rec = sizeof(struct r2cc_event);
	u32 want, n;
	int ret;

	if (len < rec)
		return -EINVAL;
	want = min_t(size_t, len / rec, R2CC_READ_BATCH);

	if (mutex_lock_interruptible(&sub->read_lock))
		return -ERESTARTSYS;
	for (;;) {
		n = r2cc_sub_take(sub, want);
		if (n)
			break;
		mutex_unlock(&sub->read_lock);
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(sub->wait, r2cc_sub_ready(sub));
		if (ret)
			return ret;
		if (mutex_lock_interruptible(&sub->read_lock))
			return -ERESTARTSYS;
	}
	ret = copy_to_user(buf, sub->bounce, n * rec) ? -EFAULT : 0;
	mutex_unlock(&sub->read_lock);
	return ret ? ret : (ssize_t)(n * rec);
}

__poll_t r2cc_sub_poll(struct r2cc_sub *sub, struct file *file,
		       poll_table *wait)
{
	poll_wait(file, &sub->wait, wait);
	return r2cc_sub_ready(sub) ? EPOLLIN | EPOLLRDNORM : 0;
}

u64 r2cc_stat_delivered(void)
{
	return atomic64_read(&r2cc_delivered);
}

u64 r2cc_stat_dropped(void)
{
	return atomic64_read(&r2cc_dropped);
}

u64 r2cc_stat_emitted(void)
{
	return r2cc_last_seq();
}

unsigned int r2cc_stat_subscribers(void)
{
	unsigned int n;

	spin_lock(&r2cc_subs_lock);
	n = r2cc_nsubs;
	spin_unlock(&r2cc_subs_lock);
	return n;
}
