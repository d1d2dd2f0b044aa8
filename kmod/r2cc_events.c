// SPDX-License-Identifier: GPL-2.0-only
/*
 * Records and subscribers: the global sequence, one ring of the last
 * queue_len records shared by every open of /dev/r2cc, and a read position
 * per subscriber.
 *
 * Emitting a record costs the same whatever the number of subscribers: it
 * is written once into the ring and one wait queue is woken, which holds
 * only the subscribers actually waiting in read(), poll() or epoll.  An
 * idle open file costs a small structure and nothing per record.
 *
 * A subscriber that falls more than queue_len records behind loses the
 * oldest ones; its next read returns an R2CC_EV_OVERFLOW record with the
 * count first, exactly where the gap is.  A read position moves only once
 * its record has reached userspace, so a failed copy (-EFAULT) loses
 * nothing and a snapshot moves it only once the snapshot is out.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/math64.h>
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
	struct mutex read_lock;		/* one reader at a time per file */
	struct r2cc_user *user;

	/* Under r2cc_ring_lock (and read_lock when it moves). */
	u64 next;			/* seq of the next record to read */
	u64 kinds;			/* 0: all */
	u32 ndevs;
	u32 devs[R2CC_FILTER_MAX_DEVS];
};

/* Open files per user, for the max_user_subscribers limit. */
struct r2cc_user {
	struct list_head list;
	kuid_t uid;
	unsigned int subs;
};

static struct r2cc_event *r2cc_ring;	/* r2cc_queue_len records */
static DEFINE_SPINLOCK(r2cc_ring_lock);
static u64 r2cc_seq;			/* last emitted, under r2cc_ring_lock */
static DECLARE_WAIT_QUEUE_HEAD(r2cc_wait);

static DEFINE_MUTEX(r2cc_users_lock);
static LIST_HEAD(r2cc_users);		/* under r2cc_users_lock */
static atomic_t r2cc_nsubs = ATOMIC_INIT(0);
static atomic64_t r2cc_delivered = ATOMIC64_INIT(0);
static atomic64_t r2cc_dropped = ATOMIC64_INIT(0);
static atomic64_t r2cc_refused = ATOMIC64_INIT(0);

int r2cc_events_init(void)
{
	r2cc_ring = kvcalloc(r2cc_queue_len, sizeof(*r2cc_ring), GFP_KERNEL);
	return r2cc_ring ? 0 : -ENOMEM;
}

void r2cc_events_exit(void)
{
	kvfree(r2cc_ring);
}

static struct r2cc_event *r2cc_ring_at(u64 seq)
{
	u32 i;

	div_u64_rem(seq - 1, r2cc_queue_len, &i);
	return &r2cc_ring[i];
}

/*
 * Count an open by the caller's user; -EMFILE past the limit.  An
 * administrator's (@exempt) is neither limited nor counted, so that it
 * takes nothing from the same user's unprivileged processes.
 */
static int r2cc_user_get(struct r2cc_sub *sub, bool exempt)
{
	kuid_t uid = current_euid();
	struct r2cc_user *u;
	int ret = 0;

	if (exempt)
		return 0;
	mutex_lock(&r2cc_users_lock);
	list_for_each_entry(u, &r2cc_users, list)
		if (uid_eq(u->uid, uid))
			goto found;
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u) {
		ret = -ENOMEM;
		goto out;
	}
	u->uid = uid;
	list_add(&u->list, &r2cc_users);
found:
	if (u->subs >= READ_ONCE(r2cc_max_user_subscribers)) {
		atomic64_inc(&r2cc_refused);
		ret = -EMFILE;
		if (!u->subs) {
			list_del(&u->list);
			kfree(u);
		}
		goto out;
	}
	u->subs++;
	sub->user = u;
out:
	mutex_unlock(&r2cc_users_lock);
	return ret;
}

static void r2cc_user_put(struct r2cc_user *u)
{
	if (!u)
		return;		/* an administrator's, not counted */
	mutex_lock(&r2cc_users_lock);
	if (!--u->subs) {
		list_del(&u->list);
		kfree(u);
	}
	mutex_unlock(&r2cc_users_lock);
}

/*
 * A new subscriber reads from the next record emitted.  @exempt (an
 * administrator) is neither limited by nor counted in
 * max_user_subscribers.
 */
struct r2cc_sub *r2cc_sub_alloc(bool exempt)
{
	struct r2cc_sub *sub = kzalloc(sizeof(*sub), GFP_KERNEL_ACCOUNT);
	int ret;

	if (!sub)
		return ERR_PTR(-ENOMEM);
	ret = r2cc_user_get(sub, exempt);
	if (ret) {
		kfree(sub);
		return ERR_PTR(ret);
	}
	mutex_init(&sub->read_lock);
	spin_lock(&r2cc_ring_lock);
	sub->next = r2cc_seq + 1;
	spin_unlock(&r2cc_ring_lock);
	atomic_inc(&r2cc_nsubs);
	return sub;
}

void r2cc_sub_free(struct r2cc_sub *sub)
{
	atomic_dec(&r2cc_nsubs);
	r2cc_user_put(sub->user);
	mutex_destroy(&sub->read_lock);
	kfree(sub);
}

/* Whether @sub's filter passes @ev; a NULL @sub (a dump) takes all. */
static bool r2cc_sub_wants(const struct r2cc_sub *sub,
			   const struct r2cc_event *ev)
{
	u32 i;

	if (!sub)
		return true;
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

/*
 * The next record for @sub at or after @next, under r2cc_ring_lock: copied
 * to @rec (if not NULL), with the position after it in *@after.  Returns
 * true if there is one; false with *@after past the records @sub does not
 * want.  Records overwritten before @sub read them make an overflow
 * record.
 */
static bool r2cc_sub_peek(const struct r2cc_sub *sub, u64 next,
			  struct r2cc_event *rec, u64 *after)
{
	u64 oldest = r2cc_seq >= r2cc_queue_len ?
		     r2cc_seq - r2cc_queue_len + 1 : 1;

	lockdep_assert_held(&r2cc_ring_lock);
	if (next < oldest) {
		if (rec)
			r2cc_overflow_record(rec, oldest - next, oldest - 1);
		*after = oldest;
		return true;
	}
	for (; next <= r2cc_seq; next++) {
		const struct r2cc_event *ev = r2cc_ring_at(next);

		if (!r2cc_sub_wants(sub, ev))
			continue;
		if (rec)
			*rec = *ev;
		*after = next + 1;
		return true;
	}
	*after = next;
	return false;
}

/*
 * The record at @next, or the overflow record for those after @next - 1
 * that the ring no longer holds, for a reader with no position of its own
 * (the generic netlink dump): in @rec, with the position after it in
 * *@after.  False once @next is past the last record emitted.
 */
bool r2cc_ring_peek(u64 next, struct r2cc_event *rec, u64 *after)
{
	bool got;

	spin_lock(&r2cc_ring_lock);
	got = r2cc_sub_peek(NULL, next, rec, after);
	spin_unlock(&r2cc_ring_lock);
	return got;
}

/* Moves a read position forward (a reader and poll may both move it). */
static void r2cc_sub_advance(struct r2cc_sub *sub, u64 after)
{
	lockdep_assert_held(&r2cc_ring_lock);
	if (after > sub->next)
		sub->next = after;
}

/*
 * Stamp @ev with the next sequence number (and the time, unless set) and
 * put it in the ring.  Callers hold r2cc_lock, which orders records with
 * the state they describe.
 */
void r2cc_emit(struct r2cc_event *ev)
{
	lockdep_assert_held(&r2cc_lock);
	ev->size = sizeof(*ev);
	ev->version = R2CC_ABI_VERSION;
	if (!ev->time_ns)	/* transitions carry their own, see sysfs */
		ev->time_ns = ktime_get_ns();

	spin_lock(&r2cc_ring_lock);
	ev->seq = ++r2cc_seq;
	*r2cc_ring_at(ev->seq) = *ev;
	spin_unlock(&r2cc_ring_lock);
	trace_r2cc_transition(ev);
	trace_r2cc_deliver(ev->seq, atomic_read(&r2cc_nsubs));
	wake_up_interruptible_poll(&r2cc_wait, EPOLLIN | EPOLLRDNORM);
	r2cc_genl_notify(ev);
}

u64 r2cc_last_seq(void)
{
	u64 seq;

	spin_lock(&r2cc_ring_lock);
	seq = r2cc_seq;
	spin_unlock(&r2cc_ring_lock);
	return seq;
}

/*
 * Start @sub's reading after @seq (a snapshot taken at @seq is out), unless
 * it is past it already.  Records overwritten after @seq still make an
 * overflow record; those up to @seq are in the snapshot.
 */
int r2cc_sub_skip_to(struct r2cc_sub *sub, u64 seq)
{
	if (mutex_lock_interruptible(&sub->read_lock))
		return -ERESTARTSYS;
	spin_lock(&r2cc_ring_lock);
	r2cc_sub_advance(sub, seq + 1);
	spin_unlock(&r2cc_ring_lock);
	mutex_unlock(&sub->read_lock);
	return 0;
}

void r2cc_sub_set_filter(struct r2cc_sub *sub, u64 kinds, u32 ndevs,
			 const u32 *devs)
{
	spin_lock(&r2cc_ring_lock);
	sub->kinds = kinds;
	sub->ndevs = ndevs;
	memcpy(sub->devs, devs, ndevs * sizeof(*devs));
	spin_unlock(&r2cc_ring_lock);
}

/* Whether a read would return a record; skips records not wanted. */
static bool r2cc_sub_ready(struct r2cc_sub *sub)
{
	bool ready;
	u64 after;

	spin_lock(&r2cc_ring_lock);
	ready = r2cc_sub_peek(sub, sub->next, NULL, &after);
	if (!ready)
		r2cc_sub_advance(sub, after);
	spin_unlock(&r2cc_ring_lock);
	return ready;
}

/*
 * Copy up to @want records to @buf; returns how many, or -EFAULT if the
 * first could not be copied.  Under @sub's read_lock.
 */
static ssize_t r2cc_sub_copy(struct r2cc_sub *sub, char __user *buf,
			     u32 want)
{
	struct r2cc_event rec;
	u32 n = 0;
	bool got;
	u64 after;

	while (n < want) {
		spin_lock(&r2cc_ring_lock);
		got = r2cc_sub_peek(sub, sub->next, &rec, &after);
		if (!got)	/* skip what the filter does not want */
			r2cc_sub_advance(sub, after);
		spin_unlock(&r2cc_ring_lock);
		if (!got)
			break;
		if (copy_to_user(buf + n * sizeof(rec), &rec, sizeof(rec)))
			return n ? (ssize_t)n : -EFAULT;
		spin_lock(&r2cc_ring_lock);
		r2cc_sub_advance(sub, after);
		spin_unlock(&r2cc_ring_lock);
		if (rec.kind == R2CC_EV_OVERFLOW) {
			atomic64_add(rec.lost, &r2cc_dropped);
			trace_r2cc_overflow(rec.seq, rec.lost);
		} else {
			atomic64_inc(&r2cc_delivered);
		}
		n++;
	}
	return n;
}

ssize_t r2cc_sub_read(struct r2cc_sub *sub, char __user *buf, size_t len,
		      bool nonblock)
{
	size_t rec = sizeof(struct r2cc_event);
	ssize_t n;
	u32 want;
	int ret;

	if (len < rec)
		return -EINVAL;
	want = min_t(size_t, len / rec, R2CC_READ_BATCH);

	for (;;) {
		if (mutex_lock_interruptible(&sub->read_lock))
			return -ERESTARTSYS;
		n = r2cc_sub_copy(sub, buf, want);
		mutex_unlock(&sub->read_lock);
		if (n)
			return n < 0 ? n : n * (ssize_t)rec;
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(r2cc_wait, r2cc_sub_ready(sub));
		if (ret)
			return ret;
	}
}

__poll_t r2cc_sub_poll(struct r2cc_sub *sub, struct file *file,
		       poll_table *wait)
{
	poll_wait(file, &r2cc_wait, wait);
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

u64 r2cc_stat_refused(void)
{
	return atomic64_read(&r2cc_refused);
}

u64 r2cc_stat_emitted(void)
{
	return r2cc_last_seq();
}

unsigned int r2cc_stat_subscribers(void)
{
	return atomic_read(&r2cc_nsubs);
}
