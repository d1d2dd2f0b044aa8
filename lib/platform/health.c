// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Early warning without r2cc.ko: the library reads each NIC's error
 * counters itself, from the files the RDMA core exports for every port
 * (/sys/class/infiniband/DEV/ports/PORT/hw_counters, the counters `rdma
 * statistic` shows; rxe and mlx5 both have them), and judges the port as
 * the module does (Documentation/kmod.rst, "Early warning"): the mean rate
 * of sequence errors over HEALTH_POLLS polls at or above R2CC_DEGRADE_RATE
 * makes it degraded, HEALTH_RECOVER polls in a row at or under 1 a second
 * bring it back.  Only sequence errors count: they take a lost packet,
 * where retries, duplicates and ACK timeouts come from a link that is
 * merely shaped or congested.
 *
 * With r2cc.ko the module judges and this is off: one judge per port.
 * What it finds travels the way the module's verdict does: an event with
 * @degraded (notify.c), on which the transport drains the NIC's rails and
 * tells each peer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "platform/platform.h"

#define HEALTH_POLLS	3	/* the mean that degrades */
#define HEALTH_RECOVER	5	/* polls in a row under 1/s that recover */

/* Sequence errors, by the names drivers give them: rxe's, then mlx5's. */
static const char *const seq_counters[] = {
	"out_of_seq_request", "rcvd_seq_err",
	"out_of_sequence", "packet_seq_err", "implied_nak_seq_err",
};

#define NSEQ	(int)(sizeof(seq_counters) / sizeof(seq_counters[0]))

/* Open @nic's sequence-error counters; none found leaves it unjudged. */
static void health_open_nic(struct r2cc_ctx *ctx, struct r2cc_nic *nic)
{
	struct nic_health *h = &nic->health;
	char path[512];
	int i;

	h->nfd = 0;
	for (i = 0; i < NSEQ && h->nfd < NIC_HEALTH_FDS; i++) {
		int fd;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%u/hw_counters/%s",
			 nic->info.dev_name, nic->info.port, seq_counters[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			h->fd[h->nfd++] = fd;
	}
	log_msg(ctx, R2CC_LOG_DEBUG, "health: %s port %u: %d sequence-error counter%s",
		nic->info.dev_name, nic->info.port, h->nfd,
		h->nfd == 1 ? "" : "s");
}

void health_open(struct r2cc_ctx *ctx)
{
	int i;

	for (i = 0; i < ctx->nnics; i++) {
		ctx->nics[i].health.nfd = 0;
		if (ctx->tune.health_ms && ctx->tune.degrade_rate)
			health_open_nic(ctx, &ctx->nics[i]);
	}
	ctx->health_next_ns = 0;
}

void health_close(struct r2cc_ctx *ctx)
{
	int i, k;

	for (i = 0; i < ctx->nnics; i++) {
		struct nic_health *h = &ctx->nics[i].health;

		for (k = 0; k < h->nfd; k++)
			close(h->fd[k]);
		h->nfd = 0;
	}
}

/* The sum of @h's counters now; false if one could not be read. */
static bool health_read(const struct nic_health *h, uint64_t *sum)
{
	char buf[32];
	int k;

	*sum = 0;
	for (k = 0; k < h->nfd; k++) {
		/* sysfs makes the value anew for each read at offset 0 */
		ssize_t n = pread(h->fd[k], buf, sizeof(buf) - 1, 0);
		char *end;

		if (n <= 0)
			return false;
		buf[n] = '\0';
		*sum += strtoull(buf, &end, 10);
		if (end == buf)
			return false;
	}
	return true;
}

/*
 * A new reading of @nic at @now; true when its verdict changed.  A port
 * that is not ACTIVE starts again: its DOWN says more.
 */
static bool health_judge(struct r2cc_ctx *ctx, struct r2cc_nic *nic,
			 uint64_t sum, uint64_t now)
{
	struct nic_health *h = &nic->health;
	uint64_t delta = sum >= h->last ? sum - h->last : 0;
	uint64_t elapsed = now - h->last_ns, mean = 0;
	bool first = !h->last_ns;
	int i;

	h->last = sum;
	h->last_ns = now;
	if (first || !elapsed)
		return false;
	h->rate = (uint32_t)(delta * 1000000000ull / elapsed > UINT32_MAX ?
			     UINT32_MAX : delta * 1000000000ull / elapsed);
	if (nic->state != R2CC_NIC_ACTIVE) {
		h->win_n = 0;
		h->under = 0;
		nic->degraded = 0;	/* as its DOWN told the transport */
		return false;
	}
	h->win[h->win_at] = h->rate;
	h->win_at = (uint8_t)((h->win_at + 1) % HEALTH_POLLS);
	if (h->win_n < HEALTH_POLLS)
		h->win_n++;
	for (i = 0; h->win_n == HEALTH_POLLS && i < HEALTH_POLLS; i++)
		mean += h->win[i];
	if (h->win_n == HEALTH_POLLS &&
	    mean >= (uint64_t)ctx->tune.degrade_rate * HEALTH_POLLS) {
		h->under = 0;
		if (!nic->degraded) {
			nic->degraded = 1;
			return true;
		}
	} else if (h->rate <= 1) {
		if (h->under < UINT8_MAX)
			h->under++;
		if (nic->degraded && h->under >= HEALTH_RECOVER) {
			nic->degraded = 0;
			return true;
		}
	} else {
		h->under = 0;
	}
	return false;
}

int health_poll(struct r2cc_ctx *ctx, struct r2cc_nic_event *ev)
{
	uint64_t now = clock_now_ns(), sum;
	int i;

	if (!ctx->tune.health_ms || !ctx->tune.degrade_rate)
		return 0;
	/* a verdict found on the last pass, not handed out yet */
	for (i = 0; i < ctx->nnics; i++)
		if (ctx->nics[i].health.news)
			goto news;
	if (now < ctx->health_next_ns)
		return 0;
	ctx->health_next_ns = now + (uint64_t)ctx->tune.health_ms * 1000000;
	for (i = 0; i < ctx->nnics; i++) {
		struct r2cc_nic *nic = &ctx->nics[i];

		if (nic->health.nfd && health_read(&nic->health, &sum) &&
		    health_judge(ctx, nic, sum, now))
			nic->health.news = true;
	}
	for (i = 0; i < ctx->nnics; i++)
		if (ctx->nics[i].health.news)
			goto news;
	return 0;
news:
	ctx->nics[i].health.news = false;
	memset(ev, 0, sizeof(*ev));
	ev->nic = i;
	ev->old_state = ctx->nics[i].state;
	ev->new_state = ctx->nics[i].state;
	ev->source = R2CC_NOTIFY_VERBS;
	ev->time_ns = now;
	ev->degraded = ctx->nics[i].degraded;
	ev->error_rate = ctx->nics[i].health.rate;
	log_msg(ctx, R2CC_LOG_WARN,
		"%s port %u: %u sequence errors/s (hw_counters): %s",
		ctx->nics[i].info.dev_name, ctx->nics[i].info.port,
		ctx->nics[i].health.rate,
		ev->degraded ? "degraded" : "recovered");
	return 1;
}
