// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Live objects.  Every object the API hands out is recorded here with its
 * kind until it is closed, so a call with a closed, double-closed or
 * foreign pointer returns -EBADF instead of touching freed memory.  Like a
 * file descriptor, a pointer that malloc reuses for a new object of the
 * same kind is valid again; that cannot be told apart.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/base.h"

struct slot {
	const void *p;		/* NULL: empty; &tomb: deleted */
	int kind;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *tab;
static size_t cap, used;	/* used counts live and deleted slots */
static const char tomb;

static size_t hash(const void *p)
{
	uint64_t x = (uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

static struct slot *find(const void *p)
{
	size_t i;

	if (!cap)
		return NULL;
	for (i = hash(p) & (cap - 1); tab[i].p; i = (i + 1) & (cap - 1))
		if (tab[i].p == p)
			return &tab[i];
	return NULL;
}

static int rehash(size_t ncap)
{
	struct slot *old = tab, *n = calloc(ncap, sizeof(*n));
	size_t i, j, ocap = cap;

	if (!n)
		return -ENOMEM;
	tab = n;
	cap = ncap;
	used = 0;
	for (i = 0; i < ocap; i++) {
		if (!old[i].p || old[i].p == &tomb)
			continue;
		for (j = hash(old[i].p) & (cap - 1); tab[j].p;
		     j = (j + 1) & (cap - 1))
			;
		tab[j] = old[i];
		used++;
	}
	free(old);
	return 0;
}

int handle_add(const void *p, int kind)
{
	size_t i;
	int ret = 0;

	pthread_mutex_lock(&lock);
	if ((used + 1) * 2 > cap)
		ret = rehash(cap ? cap * 2 : 64);
	if (!ret) {
		for (i = hash(p) & (cap - 1); tab[i].p && tab[i].p != &tomb;
		     i = (i + 1) & (cap - 1))
			;
		if (!tab[i].p)
			used++;
		tab[i].p = p;
		tab[i].kind = kind;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

void handle_del(const void *p)
{
	struct slot *s;

	pthread_mutex_lock(&lock);
	s = find(p);
	if (s)
		s->p = &tomb;
	pthread_mutex_unlock(&lock);
}

/* 0 for a live object of @kind, -EINVAL for NULL, -EBADF otherwise. */
int handle_check(const void *p, int kind)
{
	if (!p)
		return -EINVAL;
	return handle_ok(p, kind) ? 0 : -EBADF;
}

bool handle_ok(const void *p, int kind)
{
	struct slot *s;
	bool ok;

	if (!p)
		return false;
	pthread_mutex_lock(&lock);
	s = find(p);
	ok = s && s->kind == kind;
	pthread_mutex_unlock(&lock);
	return ok;
}
