// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2ccctl jobs: the stats files libr2cc keeps per context (<r2cc/job.h>).
 * The directory is writable by every user (mode 1777, like /tmp), so a
 * file is read as hostile input: no link followed, every size and count
 * checked against the file's length before use, strings cut at their
 * field.  A file whose process is gone (no process with its PID and start
 * time) is removed, when the caller may.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "r2ccctl.h"
#include "base/proc_start.h"

#define JOB_FILE_MAX	(16u << 20)

static uint32_t seq_of(const uint8_t *buf)
{
	uint32_t s;

	memcpy(&s, buf + offsetof(struct r2cc_job_header, seq), sizeof(s));
	return s;
}

/* The file's bytes, read under its sequence counter; NULL if unstable. */
static uint8_t *read_stable(int fd, size_t size)
{
	uint8_t *a = malloc(size), *b = malloc(size);
	int tries;

	if (!a || !b)
		goto fail;
	for (tries = 0; tries < 50; tries++) {
		if (pread(fd, a, size, 0) != (ssize_t)size ||
		    pread(fd, b, sizeof(struct r2cc_job_header), 0) !=
		    (ssize_t)sizeof(struct r2cc_job_header))
			goto fail;
		if (!(seq_of(a) & 1) && seq_of(a) == seq_of(b)) {
			free(b);
			return a;
		}
		usleep(1000);
	}
fail:
	free(a);
	free(b);
	return NULL;
}

/* 0 if @h describes a layout that fits in @size bytes, else -EBADMSG. */
static int job_check(const struct r2cc_job_header *h, size_t size)
{
	uint64_t conn_min = sizeof(struct r2cc_job_conn);

	if (h->magic != R2CC_JOB_MAGIC || h->version != R2CC_JOB_VERSION ||
	    h->header_size < sizeof(*h) || h->rail_size <
	    sizeof(struct r2cc_job_rail) || h->max_rails > 1024 ||
	    h->max_conns > 65536 || h->nconns > h->max_conns ||
	    h->nnics > R2CC_JOB_MAX_NICS)
		return -EBADMSG;
	conn_min += (uint64_t)h->max_rails * h->rail_size;
	if (h->conn_size < conn_min ||
	    h->header_size + (uint64_t)h->max_conns * h->conn_size > size)
		return -EBADMSG;
	return 0;
}

static void cut(char *s, size_t len)
{
	s[len - 1] = 0;
}

/* One job from @buf (checked): its fields copied into @j. */
static int job_parse(const uint8_t *buf, size_t size, struct ctl_job *j)
{
	const struct r2cc_job_header *h = (const void *)buf;
	uint32_t i, k;

	if (size < sizeof(*h) || job_check(h, size))
		return -EBADMSG;
	memset(j, 0, sizeof(*j));
	memcpy(&j->h, h, sizeof(*h));
	cut(j->h.comm, sizeof(j->h.comm));
	for (i = 0; i < j->h.nnics; i++)
		cut(j->h.nics[i].dev_name, sizeof(j->h.nics[i].dev_name));
	j->nconns = (int)h->nconns;
	j->conns = calloc(h->nconns ? h->nconns : 1, sizeof(*j->conns));
	if (!j->conns)
		return -ENOMEM;
	for (i = 0; i < h->nconns; i++) {
		const uint8_t *e = buf + h->header_size +
				   (size_t)i * h->conn_size;
		struct ctl_job_conn *c = &j->conns[i];

		memcpy(&c->c, e, sizeof(c->c));
		cut(c->c.peer, sizeof(c->c.peer));
		c->nrails = c->c.nrails < h->max_rails ? c->c.nrails :
							  h->max_rails;
		if (c->nrails > R2CC_JOB_MAX_RAILS)
			c->nrails = R2CC_JOB_MAX_RAILS;
		for (k = 0; k < c->nrails; k++)
			memcpy(&c->rails[k], e + sizeof(struct r2cc_job_conn) +
			       (size_t)k * h->rail_size, sizeof(c->rails[k]));
	}
	return 0;
}

void ctl_jobs_free(struct ctl_job *j, int n)
{
	for (int i = 0; i < n; i++)
		free(j[i].conns);
	free(j);
}

int ctl_jobs_read(const char *dir, struct ctl_job **out, int *removed)
{
	struct ctl_job *jobs = NULL;
	struct dirent *d;
	int n = 0, cap = 0, dfd;
	DIR *dp;

	*out = NULL;
	*removed = 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return -errno;
	}
	while ((d = readdir(dp))) {
		size_t len = strlen(d->d_name), sl = strlen(R2CC_JOB_SUFFIX);
		struct ctl_job j;
		struct stat st;
		uint8_t *buf;
		int fd, ret;

		if (len <= sl || strcmp(d->d_name + len - sl, R2CC_JOB_SUFFIX))
			continue;
		fd = openat(dfd, d->d_name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
		    st.st_size < (off_t)sizeof(struct r2cc_job_header) ||
		    st.st_size > JOB_FILE_MAX) {
			close(fd);
			continue;
		}
		buf = read_stable(fd, (size_t)st.st_size);
		close(fd);
		if (!buf)
			continue;
		ret = job_parse(buf, (size_t)st.st_size, &j);
		free(buf);
		if (ret)
			continue;
		if (j.h.pid <= 0 || !j.h.proc_start ||
		    proc_start_of(j.h.pid) != j.h.proc_start) {
			/* Its process is gone: a crash, or a kill -9. */
			if (!unlinkat(dfd, d->d_name, 0))
				(*removed)++;
			free(j.conns);
			continue;
		}
		if (n == cap) {
			struct ctl_job *m;

			cap = cap ? 2 * cap : 8;
			m = realloc(jobs, (size_t)cap * sizeof(*jobs));
			if (!m) {
				free(j.conns);
				ctl_jobs_free(jobs, n);
				closedir(dp);
				return -ENOMEM;
			}
			jobs = m;
		}
		jobs[n++] = j;
	}
	closedir(dp);
	*out = jobs;
	return n;
}

/* A process's totals: its open connections plus its closed ones. */
void ctl_job_totals(const struct ctl_job *j, struct r2cc_job_counters *t)
{
	*t = j->h.closed;
	for (int i = 0; i < j->nconns; i++) {
		const struct r2cc_job_counters *c = &j->conns[i].c.c;

		t->msgs += c->msgs;
		t->bytes += c->bytes;
		t->resent_bytes += c->resent_bytes;
		t->tcp_bytes += c->tcp_bytes;
		t->failovers += c->failovers;
		t->repairs += c->repairs;
		if (c->repairs)
			t->repair_ns_last = c->repair_ns_last;
		if (c->repair_ns_max > t->repair_ns_max)
			t->repair_ns_max = c->repair_ns_max;
	}
}

/* Rails up and in all, over the open connections. */
void ctl_job_rails(const struct ctl_job *j, int *up, int *all)
{
	*up = *all = 0;
	for (int i = 0; i < j->nconns; i++)
		for (uint32_t k = 0; k < j->conns[i].nrails; k++) {
			(*all)++;
			*up += j->conns[i].rails[k].state == R2CC_RAIL_UP;
		}
}
