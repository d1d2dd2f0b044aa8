// SPDX-License-Identifier: GPL-2.0-only
/*
 * libr2cc's TCP bootstrap (lib/boot/bootstrap.c) on 127.0.0.1: allgather across
 * forked ranks for worlds of 1, 2, 4 and 8; options from the environment;
 * hostile options; raw TCP clients that do not speak the protocol, or
 * speak it wrongly, against the root; a root that is not there; ranks that
 * vanish or stall in the middle of an allgather.  Nothing may hang: every
 * child is killed after a few seconds and counts as a failure then.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <r2cc/bootstrap.h>

#include "tap.h"

/* The wire format, as Documentation/bootstrap.rst describes it. */
#define W_MAGIC		0x42433252u
#define W_VERSION	1
#define W_HDR		32
#define W_HELLO		1
#define W_WELCOME	2
#define W_DATA		3

/* Child exit codes besides a positive errno. */
#define C_BADDATA	200	/* allgather returned wrong bytes */
#define C_UNEXPECTED	201	/* success, or another call disagreed */
#define C_HUNG		-1	/* killed by the parent: it hung */

#define LIMIT_MS	5000	/* how long a child may take */

static char root[80];
static int port;

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A port nobody uses right now, for a root on @addr. */
static int free_port(int family)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd, p = -1;

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	in6.sin6_addr = in6addr_loopback;
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (family == AF_INET ?
	    bind(fd, (struct sockaddr *)&in, sizeof(in)) :
	    bind(fd, (struct sockaddr *)&in6, sizeof(in6))) {
		close(fd);
		return -1;
	}
	if (!getsockname(fd, (struct sockaddr *)&ss, &len))
		p = ntohs(family == AF_INET ?
			  ((struct sockaddr_in *)&ss)->sin_port :
			  ((struct sockaddr_in6 *)&ss)->sin6_port);
	close(fd);
	return p;
}

static void new_root(void)
{
	port = free_port(AF_INET);
	snprintf(root, sizeof(root), "127.0.0.1:%d", port);
}

static int boot_open(int rank, int world, uint32_t timeout_ms,
		     struct r2cc_boot **b)
{
	struct r2cc_boot_opts o = {
		.size = sizeof(o),
		.root = root,
		.rank = rank,
		.world_size = world,
		.timeout_ms = timeout_ms,
	};

	return r2cc_boot_init(&o, b);
}

/* ------------------------------------------------------------ processes */

typedef int (*rank_fn)(int rank, int world, int arg);

static pid_t spawn(rank_fn fn, int rank, int world, int arg)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		exit(fn(rank, world, arg));	/* LeakSanitizer looks, too */
	return pid;
}

/* Wait for @n children; codes[i] is the exit code, C_HUNG if killed. */
static void reap(pid_t *pids, int n, int *codes)
{
	int64_t deadline = mono_ms() + LIMIT_MS;
	int i, left = n, st;

	for (i = 0; i < n; i++) {
		codes[i] = C_HUNG;
		if (pids[i] <= 0)
			left--;
	}
	while (left) {
		for (i = 0; i < n; i++) {
			if (pids[i] <= 0 || waitpid(pids[i], &st, WNOHANG) !=
					     pids[i])
				continue;
			codes[i] = WIFEXITED(st) ? WEXITSTATUS(st) :
						   300 + WTERMSIG(st);
			pids[i] = 0;
			left--;
		}
		if (left && mono_ms() > deadline) {
			for (i = 0; i < n; i++) {
				if (pids[i] <= 0)
					continue;
				kill(pids[i], SIGKILL);
				waitpid(pids[i], &st, 0);
			}
			break;
		}
		usleep(1000);
	}
}

/* Run @fn as every rank of @world; return the elapsed milliseconds. */
static int64_t run_world(rank_fn fn, int world, int arg, int *codes)
{
	int64_t t0 = mono_ms();
	pid_t pids[16];
	int r;

	for (r = 0; r < world; r++)
		pids[r] = spawn(fn, r, world, arg);
	reap(pids, world, codes);
	return mono_ms() - t0;
}

static int all_are(const int *codes, int n, int want)
{
	int i;

	for (i = 0; i < n; i++)
		if (codes[i] != want)
			return 0;
	return 1;
}

static const char *show(const int *codes, int n)
{
	static char buf[128];
	int i, off = 0;

	for (i = 0; i < n && off < (int)sizeof(buf) - 8; i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%s%d",
				i ? "," : "", codes[i]);
	return buf;
}

/* ------------------------------------------------------------ ranks */

static uint8_t pattern(int rank, int round, size_t i)
{
	return (rank * 131 + round * 17 + i * 7 + (i >> 8)) & 0xff;
}

/* Rounds of allgather of several sizes, in place and not, and barriers. */
static int rank_gather(int rank, int world, int arg)
{
	static const size_t lens[] = { 1, 7, 4096, 65536, 0, 3 };
	static uint8_t all[8 * 65536 + 1], mine[65536];
	struct r2cc_boot *b;
	size_t len, i;
	unsigned int k;
	int round, r, ret;
	uint8_t *src;

	(void)arg;
	ret = boot_open(rank, world, 4000, &b);
	if (ret)
		return -ret;
	if (r2cc_boot_rank(b) != rank || r2cc_boot_size(b) != world) {
		ret = C_UNEXPECTED;
		goto out;
	}
	for (round = 0; round < 12; round++) {
		k = round % (sizeof(lens) / sizeof(lens[0]));
		len = lens[k];
		/* Odd rounds: in place, mine inside all. */
		src = round & 1 ? all + rank * len : mine;
		memset(all, 0xee, sizeof(all));
		for (i = 0; i < len; i++)
			src[i] = pattern(rank, round, i);
		ret = -r2cc_boot_allgather(b, src, len, all);
		if (ret)
			goto out;
		for (r = 0; r < world; r++)
			for (i = 0; i < len; i++)
				if (all[r * len + i] != pattern(r, round, i))
					ret = C_BADDATA;
		if (all[world * len] != 0xee)
			ret = C_BADDATA;	/* wrote past the end */
		if (!ret)
			ret = -r2cc_boot_barrier(b);
		if (ret)
			goto out;
	}
out:
	r2cc_boot_destroy(b);
	return ret;
}

/* Everything from the environment: arg 0 R2CC_*, arg 1 torchrun's. */
static int rank_env(int rank, int world, int arg)
{
	struct r2cc_boot_opts o = { .size = sizeof(o), .rank = -1 };
	char num[16];
	int all[8], r, ret;
	struct r2cc_boot *b;

	snprintf(num, sizeof(num), "%d", rank);
	if (arg == 0) {
		setenv("R2CC_ROOT", root, 1);
		setenv("R2CC_RANK", num, 1);
		snprintf(num, sizeof(num), "%d", world);
		setenv("R2CC_WORLD_SIZE", num, 1);
		/* The R2CC_ variables win over these. */
		setenv("RANK", "77", 1);
		setenv("WORLD_SIZE", "1", 1);
		setenv("MASTER_ADDR", "bogus:", 1);
		setenv("MASTER_PORT", "x", 1);
	} else {
		setenv("RANK", num, 1);
		snprintf(num, sizeof(num), "%d", world);
		setenv("WORLD_SIZE", num, 1);
		setenv("MASTER_ADDR", "127.0.0.1", 1);
		snprintf(num, sizeof(num), "%d", port);
		setenv("MASTER_PORT", num, 1);
		setenv("R2CC_BOOT_TIMEOUT_MS", "4000", 1);
	}
	ret = r2cc_boot_init(arg == 0 ? NULL : &o, &b);
	if (ret)
		return -ret;
	ret = -r2cc_boot_allgather(b, &rank, sizeof(rank), all);
	if (!ret && (r2cc_boot_rank(b) != rank || r2cc_boot_size(b) != world))
		ret = C_UNEXPECTED;
	for (r = 0; r < world && !ret; r++)
		if (all[r] != r)
			ret = C_BADDATA;
	r2cc_boot_destroy(b);
	return ret;
}

/*
 * Join, then allgather 16 bytes; return what that gave (0 would be a
 * surprise in the tests that use it) once a second call agrees: the error
 * must stick.  @arg: the timeout.
 */
static int rank_fail(int rank, int world, int arg)
{
	uint8_t mine[16] = { 0 }, all[16 * 16];
	struct r2cc_boot *b;
	int ret;

	ret = boot_open(rank, world, arg, &b);
	if (ret)
		return -ret;
	ret = r2cc_boot_allgather(b, mine, sizeof(mine), all);
	if (!ret || r2cc_boot_allgather(b, mine, sizeof(mine), all) != ret)
		ret = -C_UNEXPECTED;
	r2cc_boot_destroy(b);
	return -ret;
}

/* Rank 1 gives 8 bytes where the others give 16. */
static int rank_lenmis(int rank, int world, int arg)
{
	uint8_t mine[16] = { 0 }, all[16 * 16];
	struct r2cc_boot *b;
	int ret;

	(void)arg;
	ret = boot_open(rank, world, 3000, &b);
	if (ret)
		return -ret;
	ret = r2cc_boot_allgather(b, mine, rank == 1 ? 8 : 16, all);
	r2cc_boot_destroy(b);
	return ret ? -ret : C_UNEXPECTED;
}

/* Rank @arg joins and dies (exits at once) before the first allgather. */
static int rank_vanish(int rank, int world, int arg)
{
	struct r2cc_boot *b;
	int ret;

	if (rank != arg)
		return rank_fail(rank, world, 4000);
	ret = boot_open(rank, world, 4000, &b);
	_exit(ret ? -ret : 0);
}

/* Rank @arg joins, then sits out the allgather for longer than it lasts. */
static int rank_stall(int rank, int world, int arg)
{
	struct r2cc_boot *b;
	int ret;

	if (rank != arg)
		return rank_fail(rank, world, 500);
	ret = boot_open(rank, world, 4000, &b);
	if (ret)
		return -ret;
	usleep(800 * 1000);
	r2cc_boot_destroy(b);
	return 0;
}

/* A root whose world disagrees with its ranks': arg is rank 1's world. */
static int rank_world(int rank, int world, int arg)
{
	struct r2cc_boot *b;
	int ret;

	ret = boot_open(rank, rank ? arg : world, 3000, &b);
	if (!ret)
		r2cc_boot_destroy(b);
	return ret ? -ret : 0;
}

/* ------------------------------------------------------------ raw peers */

static void pack(uint8_t *p, uint32_t magic, uint16_t version, uint16_t type,
		 uint32_t rank, uint32_t world, uint32_t len)
{
	uint32_t v[8] = { magic, version | (uint32_t)type << 16, rank, world,
			  0, len, 0, 0 };
	int i;

	for (i = 0; i < 8; i++) {
		p[4 * i] = v[i];
		p[4 * i + 1] = v[i] >> 8;
		p[4 * i + 2] = v[i] >> 16;
		p[4 * i + 3] = v[i] >> 24;
	}
}

static uint32_t word(const uint8_t *p, int i)
{
	p += 4 * i;
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Connect to the root, waiting for it to listen. */
static int raw_connect(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	int64_t deadline = mono_ms() + 2000;
	int fd;

	in.sin_port = htons(port);
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	do {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (!connect(fd, (struct sockaddr *)&in, sizeof(in)))
			return fd;
		close(fd);
		usleep(5000);
	} while (mono_ms() < deadline);
	return -1;
}

/* Read up to @len bytes within @ms: how many came before EOF or the end. */
static int raw_read(int fd, void *buf, size_t len, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int64_t deadline = mono_ms() + ms;
	size_t got = 0;
	ssize_t n;

	while (got < len && poll(&pfd, 1, deadline - mono_ms()) > 0) {
		n = recv(fd, (uint8_t *)buf + got, len - got, 0);
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/* EOF (or a reset) within @ms. */
static int raw_closed(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&pfd, 1, ms) == 1 && recv(fd, &c, 1, 0) <= 0;
}

static int raw_send(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len;
}

/* A raw client that joins as rank 1 of 2; 1 if the root welcomed it. */
static int raw_join(int fd)
{
	uint8_t h[W_HDR];

	pack(h, W_MAGIC, W_VERSION, W_HELLO, 1, 2, 0);
	return raw_send(fd, h, sizeof(h)) &&
	       raw_read(fd, h, sizeof(h), 3000) == W_HDR &&
	       word(h, 0) == W_MAGIC && word(h, 1) >> 16 == W_WELCOME &&
	       word(h, 2) == 1 && word(h, 6) == 0;
}

/* ------------------------------------------------------------ tests */

static void test_world1(void)
{
	struct r2cc_boot_opts o = { .size = sizeof(o), .world_size = 1 };
	uint8_t mine[4] = { 1, 2, 3, 4 }, all[5] = { 0 };
	struct r2cc_boot *b = NULL;
	int ret;

	ret = r2cc_boot_init(&o, &b);
	tap_ok(ret == 0 && b && r2cc_boot_rank(b) == 0 &&
	       r2cc_boot_size(b) == 1, "world 1: no root needed (%d)", ret);
	if (ret)
		return;
	tap_ok(r2cc_boot_allgather(b, mine, 4, all) == 0 &&
	       !memcmp(all, mine, 4) && all[4] == 0 &&
	       r2cc_boot_barrier(b) == 0, "world 1: allgather copies, barrier");
	r2cc_boot_destroy(b);
}

static void test_worlds(void)
{
	static const int worlds[] = { 2, 4, 8 };
	int codes[16], i;
	int64_t ms;

	for (i = 0; i < 3; i++) {
		new_root();
		ms = run_world(rank_gather, worlds[i], 0, codes);
		tap_ok(all_are(codes, worlds[i], 0),
		       "world %d: 12 allgathers of 0..64 KiB and barriers (%s; %lld ms)",
		       worlds[i], show(codes, worlds[i]), (long long)ms);
	}
}

static void test_env(void)
{
	int codes[4];

	new_root();
	run_world(rank_env, 3, 0, codes);
	tap_ok(all_are(codes, 3, 0),
	       "env: R2CC_ROOT/R2CC_RANK/R2CC_WORLD_SIZE win (%s)",
	       show(codes, 3));
	new_root();
	run_world(rank_env, 2, 1, codes);
	tap_ok(all_are(codes, 2, 0),
	       "env: MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE (%s)",
	       show(codes, 2));
}

static void clear_env(void)
{
	static const char *const vars[] = {
		"R2CC_ROOT", "R2CC_RANK", "R2CC_WORLD_SIZE",
		"R2CC_BOOT_TIMEOUT_MS", "MASTER_ADDR", "MASTER_PORT", "RANK",
		"WORLD_SIZE",
	};
	unsigned int i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/*
 * Rank 1 of 2 with a 100 ms timeout and nothing listening: an option that
 * slipped through validation would end in -ETIMEDOUT, not -EINVAL.
 */
static int bad_root(const char *r)
{
	struct r2cc_boot_opts o = {
		.size = sizeof(o), .root = r, .rank = 1, .world_size = 2,
		.timeout_ms = 100,
	};
	struct r2cc_boot *b = (struct r2cc_boot *)&o;
	int ret;

	ret = r2cc_boot_init(&o, &b);
	return ret == -EINVAL && b == NULL;
}

/* The same with options from the environment: @var=@val on top of good ones. */
static int bad_env(const char *var, const char *val)
{
	struct r2cc_boot_opts o = { .size = sizeof(o), .rank = -1 };
	struct r2cc_boot *b = NULL;
	int ret;

	clear_env();
	setenv("R2CC_BOOT_TIMEOUT_MS", "100", 1);
	setenv("MASTER_ADDR", "127.0.0.1", 1);
	setenv("MASTER_PORT", "1", 1);
	setenv("RANK", "1", 1);
	setenv("WORLD_SIZE", "2", 1);
	if (val)
		setenv(var, val, 1);
	else
		unsetenv(var);
	ret = r2cc_boot_init(&o, &b);
	clear_env();
	if (b)
		r2cc_boot_destroy(b);
	return ret == -EINVAL;
}

static void test_bad_opts(void)
{
	struct r2cc_boot_opts o = {
		.size = sizeof(o), .root = "127.0.0.1:1", .rank = 1,
		.world_size = 2, .timeout_ms = 100,
	};
	struct r2cc_boot *b = (struct r2cc_boot *)&o;
	uint8_t buf[16], all[16];
	char longhost[400];

	tap_ok(r2cc_boot_init(&o, NULL) == -EINVAL, "NULL result: EINVAL");
	tap_ok(r2cc_boot_init(NULL, &b) == -EINVAL && b == NULL,
	       "no options, no environment: EINVAL, *boot cleared");
	o.size = sizeof(o) - 1;
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL,
	       "opts size not size_t-aligned: EINVAL");
	o.size = sizeof(o);
	o.reserved = 1;
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL, "reserved != 0: EINVAL");
	o.reserved = 0;
	o.rank = 2;
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL, "rank == world: EINVAL");
	o.rank = -2;
	setenv("R2CC_RANK", "1", 1);	/* -2 is not -1 */
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL, "rank -2: EINVAL");
	clear_env();
	o.rank = -1;
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL,
	       "rank -1 without R2CC_RANK or RANK: EINVAL");
	o.rank = 0;
	o.world_size = 0;
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL,
	       "world 0 without R2CC_WORLD_SIZE or WORLD_SIZE: EINVAL");
	o.world_size = -1;
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL, "world -1: EINVAL");
	o.world_size = 65537;
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL, "world 65537: EINVAL");
	o.world_size = 1;
	o.root = "x";
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL,
	       "world 1 with a bad root given: EINVAL");

	tap_ok(bad_root("") && bad_root("x") && bad_root("127.0.0.1"),
	       "root \"\", \"x\", no port: EINVAL");
	tap_ok(bad_root("127.0.0.1:70000") && bad_root("127.0.0.1:0") &&
	       bad_root("127.0.0.1:99999999999999999999999"),
	       "root port 70000, 0, 10^23: EINVAL");
	tap_ok(bad_root("127.0.0.1:") && bad_root("host:") &&
	       bad_root(":1234"), "root \"127.0.0.1:\", \"host:\", \":1234\": EINVAL");
	tap_ok(bad_root("127.0.0.1:12x") && bad_root("127.0.0.1:+80") &&
	       bad_root("127.0.0.1: 80") && bad_root("127.0.0.1:-1") &&
	       bad_root("127.0.0.1:80:80"), "root port junk, sign, space: EINVAL");
	tap_ok(bad_root("[::1") && bad_root("[::1]80") && bad_root("::1:80") &&
	       bad_root("[]:80"), "root IPv6 without or with broken []: EINVAL");
	memset(longhost, 'a', sizeof(longhost));
	strcpy(longhost + 300, ":80");
	tap_ok(bad_root(longhost), "root with a 300-character host: EINVAL");

	tap_ok(!bad_env("R2CC_RANK", NULL), "(good environment passes checks)");
	tap_ok(bad_env("R2CC_RANK", "1x") && bad_env("R2CC_RANK", "") &&
	       bad_env("RANK", "-1") && bad_env("RANK", " 1"),
	       "env rank \"1x\", \"\", \"-1\", \" 1\": EINVAL");
	tap_ok(bad_env("R2CC_WORLD_SIZE", "0") &&
	       bad_env("WORLD_SIZE", "65537") && bad_env("WORLD_SIZE", "two") &&
	       bad_env("WORLD_SIZE", "1"),
	       "env world 0, 65537, \"two\", or not above rank: EINVAL");
	tap_ok(bad_env("MASTER_PORT", "x") && bad_env("MASTER_PORT", "") &&
	       bad_env("MASTER_PORT", NULL) && bad_env("MASTER_ADDR", NULL) &&
	       bad_env("MASTER_ADDR", ""),
	       "env MASTER_PORT/MASTER_ADDR bad or missing: EINVAL");
	tap_ok(bad_env("R2CC_ROOT", "127.0.0.1:99999") &&
	       bad_env("R2CC_ROOT", ""), "env R2CC_ROOT bad: EINVAL");
	tap_ok(bad_env("R2CC_BOOT_TIMEOUT_MS", "abc") &&
	       bad_env("R2CC_BOOT_TIMEOUT_MS", "0") &&
	       bad_env("R2CC_BOOT_TIMEOUT_MS", "4294967296"),
	       "env R2CC_BOOT_TIMEOUT_MS \"abc\", 0, 2^32: EINVAL");

	o.root = NULL;
	o.rank = 0;
	o.world_size = 1;
	b = NULL;
	r2cc_boot_init(&o, &b);
	memset(buf, 0, sizeof(buf));
	tap_ok(b && r2cc_boot_allgather(NULL, buf, 4, all) == -EINVAL &&
	       r2cc_boot_allgather(b, buf, 65537, all) == -EINVAL &&
	       r2cc_boot_allgather(b, NULL, 4, all) == -EINVAL &&
	       r2cc_boot_allgather(b, buf, 4, NULL) == -EINVAL &&
	       r2cc_boot_allgather(b, NULL, 0, NULL) == 0 &&
	       r2cc_boot_barrier(NULL) == -EINVAL,
	       "allgather: NULL, 65537 bytes: EINVAL; 0 bytes of NULL: fine");
	r2cc_boot_destroy(b);
	r2cc_boot_destroy(NULL);
	tap_ok(r2cc_boot_rank(NULL) == -EINVAL && r2cc_boot_size(NULL) == -EINVAL,
	       "rank(NULL), size(NULL): EINVAL; destroy(NULL) is a no-op");
}

/* Opts from an older or a newer header (lib/base/opts.h); a world of 1. */
static void test_opts_sizes(void)
{
	struct r2cc_boot_opts o;
	size_t old = offsetof(struct r2cc_boot_opts, timeout_ms), big;
	struct r2cc_boot *b;
	unsigned char *buf;
	int ret;

	memset(&o, 0, sizeof(o));
	o.size = old;
	o.world_size = 1;
	o.reserved = 1;			/* invalid if it were read */
	b = NULL;
	ret = r2cc_boot_init(&o, &b);
	tap_ok(ret == 0 && b && r2cc_boot_size(b) == 1,
	       "opts: older size %zu, junk past it ignored (%d)", old, ret);
	r2cc_boot_destroy(b);
	buf = malloc(old);		/* ASan: nothing past it is read */
	o.reserved = 0;
	memcpy(buf, &o, old);
	b = NULL;
	ret = r2cc_boot_init((void *)buf, &b);
	tap_ok(ret == 0 && b && r2cc_boot_size(b) == 1,
	       "opts: older size in a buffer of exactly that size (%d)", ret);
	r2cc_boot_destroy(b);
	free(buf);

	big = sizeof(o) + 16;
	buf = calloc(1, big);
	o.size = big;
	memcpy(buf, &o, sizeof(o));
	b = NULL;
	ret = r2cc_boot_init((void *)buf, &b);
	tap_ok(ret == 0 && b && r2cc_boot_size(b) == 1,
	       "opts: newer size, zero tail (%d)", ret);
	r2cc_boot_destroy(b);
	buf[sizeof(o)] = 1;
	b = (struct r2cc_boot *)buf;
	tap_ok(r2cc_boot_init((void *)buf, &b) == -E2BIG && !b,
	       "opts: newer size, first tail byte set: E2BIG, *boot cleared");
	buf[sizeof(o)] = 0;
	buf[big - 1] = 0x80;
	tap_ok(r2cc_boot_init((void *)buf, &b) == -E2BIG,
	       "opts: newer size, last tail byte set: E2BIG");
	free(buf);
	o.size = 1u << 20;		/* ASan: not read past @o */
	tap_ok(r2cc_boot_init(&o, &b) == -E2BIG,
	       "opts: size 1 MiB: E2BIG without reading it");
	o.size = 0;
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL, "opts: size 0: EINVAL");
	o.size = 1;
	tap_ok(r2cc_boot_init(&o, &b) == -EINVAL, "opts: size 1: EINVAL");
}

static void test_timeouts(void)
{
	struct r2cc_boot_opts o = { .size = sizeof(o), .rank = 1,
				    .world_size = 2, .timeout_ms = 300 };
	struct r2cc_boot *b = NULL;
	int64_t t0, ms;
	int ret, lfd;
	struct sockaddr_in in = { .sin_family = AF_INET };

	new_root();
	o.root = root;
	t0 = mono_ms();
	ret = r2cc_boot_init(&o, &b);
	ms = mono_ms() - t0;
	tap_ok(ret == -ETIMEDOUT && ms >= 290 && ms < 1500,
	       "no root, 300 ms: ETIMEDOUT after %lld ms (%d)", (long long)ms,
	       ret);

	o.timeout_ms = 0;
	setenv("R2CC_BOOT_TIMEOUT_MS", "200", 1);
	t0 = mono_ms();
	ret = r2cc_boot_init(&o, &b);
	ms = mono_ms() - t0;
	clear_env();
	tap_ok(ret == -ETIMEDOUT && ms >= 190 && ms < 1500,
	       "no root, R2CC_BOOT_TIMEOUT_MS=200: ETIMEDOUT after %lld ms",
	       (long long)ms);

	o.rank = 0;
	o.timeout_ms = 300;
	t0 = mono_ms();
	ret = r2cc_boot_init(&o, &b);
	ms = mono_ms() - t0;
	tap_ok(ret == -ETIMEDOUT && ms >= 290 && ms < 1500,
	       "root, nobody joins, 300 ms: ETIMEDOUT after %lld ms (%d)",
	       (long long)ms, ret);

	/* Someone else listens at the root's port. */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	in.sin_port = htons(port);
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&in, sizeof(in)) ||
	    listen(lfd, 1)) {
		tap_ok(0, "cannot listen at %s", root);
	} else {
		ret = r2cc_boot_init(&o, &b);
		tap_ok(ret == -EADDRINUSE, "root port taken: EADDRINUSE (%d)",
		       ret);
	}
	if (lfd >= 0)
		close(lfd);
}

static void test_strays(void)
{
	static const char http[] = "GET / HTTP/1.0\r\n\r\n";
	uint8_t junk[W_HDR], h[W_HDR];
	int fds[4], codes[2], i, ok = 1;
	pid_t pids[2];

	new_root();
	pids[0] = spawn(rank_gather, 0, 2, 0);
	for (i = 0; i < 4; i++)
		fds[i] = raw_connect();
	memset(junk, 0xaa, sizeof(junk));
	pack(h, W_MAGIC, W_VERSION, W_HELLO, 1, 2, 0);
	ok = fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0 && fds[3] >= 0 &&
	     raw_send(fds[0], junk, sizeof(junk)) &&
	     raw_send(fds[1], h, 10) &&		/* truncated, kept open */
	     raw_send(fds[3], http, sizeof(http) - 1);
	if (fds[2] >= 0)
		close(fds[2]);			/* connects and goes */
	tap_ok(ok && raw_closed(fds[0], 2000) && raw_closed(fds[3], 2000),
	       "root drops a wrong magic and an HTTP request at once");
	pids[1] = spawn(rank_gather, 1, 2, 0);
	reap(pids, 2, codes);
	tap_ok(all_are(codes, 2, 0),
	       "strays (junk, truncated, closed, HTTP) do not stop world 2 (%s)",
	       show(codes, 2));
	tap_ok(fds[1] >= 0 && raw_closed(fds[1], 2000),
	       "the truncated one is closed when the root is done");
	for (i = 0; i < 4; i++)
		if (i != 2 && fds[i] >= 0)
			close(fds[i]);
}

/*
 * Root of @world (timeout 3000) meets a raw client that sends @n headers
 * @hello: the root must fail with -EPROTO at once, and say so.
 */
static void hostile_hello(int world, const uint8_t *hello, int n,
			  const char *what)
{
	int fd[2] = { -1, -1 }, code, i, ok = 1;
	uint8_t h[W_HDR];
	int64_t t0;
	pid_t pid;

	new_root();
	t0 = mono_ms();
	pid = spawn(rank_fail, 0, world, 3000);
	for (i = 0; i < n; i++) {
		fd[i] = raw_connect();
		ok = ok && fd[i] >= 0 && raw_send(fd[i], hello, W_HDR);
	}
	reap(&pid, 1, &code);
	t0 = mono_ms() - t0;
	ok = ok && raw_read(fd[n - 1], h, W_HDR, 1000) == W_HDR &&
	     word(h, 0) == W_MAGIC && word(h, 1) >> 16 == W_WELCOME &&
	     word(h, 6) != 0;
	tap_ok(code == EPROTO && t0 < 2000 && ok,
	       "%s: root EPROTO in %lld ms, tells the peer (code %d)", what,
	       (long long)t0, code);
	for (i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

static void test_hostile_hello(void)
{
	uint8_t h[W_HDR];
	int codes[2];

	pack(h, W_MAGIC, 2, W_HELLO, 1, 2, 0);
	hostile_hello(2, h, 1, "HELLO version 2");
	pack(h, W_MAGIC, W_VERSION, W_HELLO, 5, 4, 0);
	hostile_hello(4, h, 1, "HELLO rank 5 of 4");
	pack(h, W_MAGIC, W_VERSION, W_HELLO, 0, 2, 0);
	hostile_hello(2, h, 1, "HELLO rank 0");
	pack(h, W_MAGIC, W_VERSION, W_HELLO, 1, 3, 0);
	hostile_hello(3, h, 2, "HELLO rank 1 twice");
	pack(h, W_MAGIC, W_VERSION, W_DATA, 1, 2, 0);
	hostile_hello(2, h, 1, "DATA before HELLO");

	new_root();
	run_world(rank_world, 2, 3, codes);
	tap_ok(all_are(codes, 2, EPROTO),
	       "root of 2, rank 1 of 3: EPROTO on both (%s)", show(codes, 2));
}

/*
 * Rank 1 of 2 is a raw client that joins and then sends @n bytes of @data
 * as its part of a 16-byte allgather, then closes unless @keep.  The root
 * must end the step with @want, before its 3 s timeout.
 */
static void hostile_data(const uint8_t *data, size_t n, int keep, int want,
			 const char *what)
{
	int fd, code, ok, told;
	uint8_t h[W_HDR];
	int64_t t0;
	pid_t pid;

	new_root();
	t0 = mono_ms();
	pid = spawn(rank_fail, 0, 2, 3000);
	fd = raw_connect();
	ok = fd >= 0 && raw_join(fd) && raw_send(fd, data, n);
	if (!keep && fd >= 0)
		shutdown(fd, SHUT_WR);
	told = fd >= 0 && raw_read(fd, h, W_HDR, 2000) == W_HDR &&
	       word(h, 0) == W_MAGIC && word(h, 1) >> 16 == W_DATA &&
	       word(h, 6) != 0 && raw_closed(fd, 2000);
	reap(&pid, 1, &code);
	t0 = mono_ms() - t0;
	tap_ok(ok && code == want && t0 < 2500 && (told || !keep),
	       "%s: root %s in %lld ms (code %d, told %d)", what,
	       strerror(want), (long long)t0, code, told);
	if (fd >= 0)
		close(fd);
}

static void test_hostile_data(void)
{
	uint8_t d[W_HDR + 16];

	memset(d, 0, sizeof(d));
	pack(d, W_MAGIC, W_VERSION, W_DATA, 1, 2, 0xfffffff0u);
	hostile_data(d, W_HDR, 1, EPROTO, "DATA of 4 GiB");
	pack(d, W_MAGIC, W_VERSION, W_DATA, 1, 2, 8);
	hostile_data(d, W_HDR + 8, 1, EPROTO, "DATA of 8 bytes for 16");
	pack(d, 0x12345678, W_VERSION, W_DATA, 1, 2, 16);
	hostile_data(d, W_HDR + 16, 1, EPROTO, "DATA with a wrong magic");
	pack(d, W_MAGIC, W_VERSION, W_DATA, 1, 2, 16);
	d[16] = 9;				/* seq 9, not 0 */
	hostile_data(d, W_HDR + 16, 1, EPROTO, "DATA out of sequence");
	d[16] = 0;
	hostile_data(d, 10, 0, ECONNRESET, "truncated DATA header, then close");
	hostile_data(d, W_HDR + 5, 0, ECONNRESET, "truncated DATA, then close");
}

static void test_peer_failures(void)
{
	int codes[4];
	int64_t ms;

	new_root();
	ms = run_world(rank_lenmis, 3, 0, codes);
	tap_ok(all_are(codes, 3, EPROTO) && ms < 2500,
	       "rank 1 gives 8 bytes, the others 16: EPROTO everywhere (%s; %lld ms)",
	       show(codes, 3), (long long)ms);

	new_root();
	ms = run_world(rank_vanish, 3, 2, codes);
	tap_ok(codes[0] == ECONNRESET && codes[1] == ECONNRESET &&
	       codes[2] == 0 && ms < 3000,
	       "rank 2 exits before the allgather: ECONNRESET on 0 and 1 (%s; %lld ms)",
	       show(codes, 3), (long long)ms);

	new_root();
	ms = run_world(rank_vanish, 3, 0, codes);
	tap_ok((codes[1] == ECONNRESET || codes[1] == EPIPE) &&
	       (codes[2] == ECONNRESET || codes[2] == EPIPE) && codes[0] == 0 &&
	       ms < 3000,
	       "the root exits before the allgather: ECONNRESET on 1 and 2 (%s; %lld ms)",
	       show(codes, 3), (long long)ms);

	new_root();
	ms = run_world(rank_stall, 3, 2, codes);
	tap_ok(codes[0] == ETIMEDOUT && codes[1] == ETIMEDOUT && codes[2] == 0,
	       "rank 2 stalls: ETIMEDOUT on 0 and 1 after 500 ms (%s; %lld ms)",
	       show(codes, 3), (long long)ms);
}

/* Rank 1 of 2 gives 64 KiB: the allgather's result.  @arg: the timeout. */
static int rank_big(int rank, int world, int arg)
{
	static uint8_t mine[65536], all[2 * 65536];
	struct r2cc_boot *b;
	int ret;

	ret = boot_open(rank, world, arg, &b);
	if (ret)
		return -ret;
	ret = r2cc_boot_allgather(b, mine, sizeof(mine), all);
	r2cc_boot_destroy(b);
	return ret ? -ret : C_UNEXPECTED;
}

/*
 * A fake root (with a small receive buffer, so that on a network with
 * small socket buffers the rank would still be sending) takes the HELLO,
 * reads only the DATA header of a 64 KiB allgather and aborts the step:
 * the rank must fail with -EPROTO at once, not wait for its timeout.
 * (Loopback buffers hold 64 KiB, so the rank has usually sent it all.)
 */
static void test_abort_while_sending(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	int lfd, fd = -1, code, small = 4096, ok;
	uint8_t h[W_HDR];
	int64_t t0;
	pid_t pid;

	new_root();
	in.sin_port = htons(port);
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ok = lfd >= 0 &&
	     !setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) &&
	     !bind(lfd, (struct sockaddr *)&in, sizeof(in)) && !listen(lfd, 1);
	t0 = mono_ms();
	pid = spawn(rank_big, 1, 2, 3000);
	if (ok)
		fd = accept(lfd, NULL, NULL);
	ok = fd >= 0 && raw_read(fd, h, W_HDR, 2000) == W_HDR &&
	     word(h, 1) >> 16 == W_HELLO;
	pack(h, W_MAGIC, W_VERSION, W_WELCOME, 1, 2, 0);
	ok = ok && raw_send(fd, h, W_HDR) &&
	     raw_read(fd, h, W_HDR, 2000) == W_HDR &&
	     word(h, 1) >> 16 == W_DATA && word(h, 5) == 65536;
	pack(h, W_MAGIC, W_VERSION, W_DATA, 1, 2, 0);
	h[24] = 1;				/* status: EPROTO */
	ok = ok && raw_send(fd, h, W_HDR);
	reap(&pid, 1, &code);
	t0 = mono_ms() - t0;
	tap_ok(ok && code == EPROTO && t0 < 2000,
	       "a root that aborts after the DATA header: rank 1 EPROTO in %lld ms (code %d)",
	       (long long)t0, code);
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
}

static int v6_root(void)
{
	int p = free_port(AF_INET6);

	if (p < 0)
		return 0;
	snprintf(root, sizeof(root), "[::1]:%d", p);
	return 1;
}

static void test_ipv6(void)
{
	int codes[2];

	if (!v6_root()) {
		tap_ok(1, "# SKIP no IPv6 loopback");
		return;
	}
	run_world(rank_gather, 2, 0, codes);
	tap_ok(all_are(codes, 2, 0), "world 2 at %s (%s)", root,
	       show(codes, 2));
}

int main(void)
{
	int64_t t0 = mono_ms();

	clear_env();
	tap_plan(65);
	test_world1();
	test_worlds();
	test_env();
	test_bad_opts();
	test_opts_sizes();
	test_timeouts();
	test_strays();
	test_hostile_hello();
	test_hostile_data();
	test_peer_failures();
	test_abort_while_sending();
	test_ipv6();
	tap_diag("%lld ms in all", (long long)(mono_ms() - t0));
	return tap_done();
}
