// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer: what a user configures the library with, from the
 * environment and the size-versioned option structs.
 *
 *  - The bootstrap's boot_config() (lib/boot/bootstrap.c, compiled into this
 *    target for its static functions): struct r2cc_boot_opts of any size
 *    the caller may claim (r2cc_opts_in()), the root as "host:port" or
 *    "[v6]:port" from the options, $R2CC_ROOT or $MASTER_ADDR and
 *    $MASTER_PORT, the rank, world size and step timeout from the options
 *    or $R2CC_RANK/$RANK, $R2CC_WORLD_SIZE/$WORLD_SIZE and
 *    $R2CC_BOOT_TIMEOUT_MS; and parse_root() on its own.
 *  - The transport tuning, tune_resolve() (lib/base/tune.c): $R2CC_CHUNK_SIZE,
 *    $R2CC_STALL_MS, $R2CC_RAIL_DEPTH, $R2CC_PEER_TIMEOUT_MS,
 *    $R2CC_IB_TIMEOUT, $R2CC_TCP_FALLBACK, $R2CC_SOCKET_IFNAME.
 *
 * Input: a 16-bit mask of the string slots that are set (slot 0 is
 * opts.root, the others the variables in names[] below, which are unset
 * when their bit is clear), a flags byte, the rank, world size and timeout
 * (32 bits each), a 16-bit struct size and the fallback byte (then, with
 * F_RESERVED, opts.reserved, and with F_TUNE_OPTS, four 32-bit tuning
 * values for struct r2cc_ctx_opts); then one
 * NUL-terminated string per slot that is set, in slot order; what is left
 * is the caller's struct past the library's own (for a larger size).
 * Checked besides the sanitizers: only documented errors, and what an
 * accepted configuration must satisfy.
 */
#include "../../lib/boot/bootstrap.c"	/* boot_config(), parse_root() */

#include <stddef.h>

#include "fuzz.h"

#define F_USIZE		0x01	/* the struct size from the input */
#define F_DEFAULT	0x02	/* r2cc_boot_init(NULL): the default options */
#define F_LIAR		0x04	/* a huge size, and only the size field */
#define F_ZERO_TAIL	0x08	/* a larger struct, all zero past ours */
#define F_IFNAME_OPT	0x10	/* slot 15 is opts.ctrl_ifname, not the env */
#define F_RESERVED	0x20	/* opts.reserved from the input */
#define F_TUNE_OPTS	0x40	/* tuning fields set in r2cc_ctx_opts */

#define NSLOT		16
#define MAXVAL		8192

static const char *const names[NSLOT] = {
	NULL,			/* opts.root */
	"R2CC_ROOT", "MASTER_ADDR", "MASTER_PORT",
	"R2CC_WORLD_SIZE", "WORLD_SIZE", "R2CC_RANK", "RANK",
	"R2CC_BOOT_TIMEOUT_MS",
	"R2CC_CHUNK_SIZE", "R2CC_STALL_MS", "R2CC_RAIL_DEPTH",
	"R2CC_PEER_TIMEOUT_MS", "R2CC_IB_TIMEOUT", "R2CC_TCP_FALLBACK",
	"R2CC_SOCKET_IFNAME",
};

/* putenv() buffers, reused: setenv() would keep every value it was given. */
static char envbuf[NSLOT][32 + MAXVAL + 1];

/* The next string: up to a NUL (dropped) or the end, at most MAXVAL. */
static char *take_str(struct in *in)
{
	const uint8_t *nul = memchr(in->p, 0, in->n);
	size_t len = nul ? (size_t)(nul - in->p) : in->n;
	char *s = malloc(len + 1);

	CHECK(s);
	memcpy(s, in->p, len);
	s[len] = '\0';
	if (len > MAXVAL)
		s[MAXVAL] = '\0';
	in->p += len + !!nul;
	in->n -= len + !!nul;
	return s;
}

static void log_cb(void *arg, enum r2cc_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	CHECK(strlen(msg) < 512);
}

static void check_cfg(const struct boot_cfg *c)
{
	CHECK(c->size >= 1 && c->size <= BOOT_MAX_WORLD);
	CHECK(c->rank >= 0 && c->rank < c->size);
	CHECK(c->timeout_ms >= 1);
	CHECK(memchr(c->host, 0, sizeof(c->host)));
	if (c->size > 1)
		CHECK(c->host[0]);
	if (c->host[0])
		CHECK(c->port >= 1);
}

static void fuzz_root(const char *s)
{
	struct boot_cfg c;
	int ret;

	memset(&c, 0, sizeof(c));
	ret = parse_root(&c, s);
	CHECK(ret == 0 || ret == -EINVAL);
	if (ret)
		return;
	CHECK(c.host[0] && memchr(c.host, 0, sizeof(c.host)) && c.port >= 1);
	/* A bare IPv6 address is ambiguous; only "[v6]:port" says it. */
	if (strchr(c.host, ':'))
		CHECK(s[0] == '[');
	if (s[0] != '[')
		CHECK(!strncmp(s, c.host, strlen(c.host)) &&
		      s[strlen(c.host)] == ':');
}

/*
 * A world of one needs no network: the public r2cc_boot_init() takes the
 * same options and the allgathers copy.  (Larger worlds would connect.)
 */
static void world_of_one(const struct r2cc_boot_opts *o, uint32_t timeout)
{
	struct r2cc_boot *b;
	uint8_t mine[4] = { 1, 2, 3, 4 }, all[4] = { 0 };

	CHECK(r2cc_boot_init(o, &b) == 0);
	CHECK(r2cc_boot_rank(b) == 0 && r2cc_boot_size(b) == 1);
	CHECK(b->timeout_ms == timeout);
	CHECK(r2cc_boot_allgather(b, mine, sizeof(mine), all) == 0 &&
	      !memcmp(all, mine, sizeof(all)));
	CHECK(r2cc_boot_allgather(b, mine, sizeof(mine), mine) == 0);
	CHECK(r2cc_boot_barrier(b) == 0);
	CHECK(r2cc_boot_allgather(b, NULL, 1, all) == -EINVAL);
	CHECK(r2cc_boot_allgather(b, mine, BOOT_MAX_LEN + 1, all) == -EINVAL);
	CHECK(r2cc_boot_allgather(NULL, mine, 1, all) == -EINVAL);
	r2cc_boot_destroy(b);
}

static void fuzz_boot(uint8_t flags, const struct r2cc_boot_opts *o,
		      size_t usize, struct in *tail)
{
	struct r2cc_boot_opts def = { .size = sizeof(def), .rank = -1 };
	size_t alloc, n;
	struct boot_cfg c;
	uint8_t *buf;
	void *uo;
	int ret;

	if (flags & F_DEFAULT) {
		ret = boot_config(&def, &c);
	} else {
		/* Exactly the bytes the caller says it has, on the heap. */
		alloc = flags & F_LIAR ? sizeof(size_t) : usize;
		if (alloc < sizeof(size_t))
			alloc = sizeof(size_t);
		buf = malloc(alloc);
		CHECK(buf);
		memset(buf, 0, alloc);
		n = alloc < sizeof(*o) ? alloc : sizeof(*o);
		memcpy(buf, o, n);
		if (alloc > sizeof(*o) && !(flags & F_ZERO_TAIL)) {
			n = alloc - sizeof(*o);
			if (n > tail->n)
				n = tail->n;
			memcpy(buf + sizeof(*o), tail->p, n);
		}
		memcpy(buf, &usize, sizeof(usize));
		uo = buf;
		ret = boot_config(uo, &c);
		free(buf);
	}
	CHECK(ret == 0 || ret == -EINVAL || ret == -E2BIG);
	if (!ret)
		check_cfg(&c);
	if (!ret && c.size == 1 && (flags & F_DEFAULT || usize == sizeof(*o)))
		world_of_one(flags & F_DEFAULT ? NULL : o, c.timeout_ms);
}

static void fuzz_tune(uint8_t flags, uint8_t fallback, const char *ifname,
		      const uint32_t tune[4])
{
	struct r2cc_ctx_opts o = {
		.size = sizeof(o),
		.fallback = fallback % (R2CC_FALLBACK_NONE + 1),
	};
	struct r2cc_ctx *ctx = calloc(1, sizeof(*ctx));
	struct r2cc_tune *t;
	int ret;

	CHECK(ctx);
	ctx->log = log_cb;
	ctx->log_level = R2CC_LOG_DEBUG;
	/* What r2cc_opts_check() lets through. */
	if ((flags & F_IFNAME_OPT) && ifname && *ifname && strlen(ifname) < 16)
		o.ctrl_ifname = ifname;
	if (flags & F_TUNE_OPTS) {
		o.chunk_size = tune[0] % (R2CC_CHUNK_SIZE_MAX + 1);
		if (o.chunk_size && o.chunk_size < R2CC_CHUNK_SIZE_MIN)
			o.chunk_size = R2CC_CHUNK_SIZE_MIN;
		o.stall_ms = tune[1] % 60001;
		o.rail_depth = tune[2] % (R2CC_RAIL_DEPTH_MAX + 1);
		o.peer_timeout_ms = tune[3] % 600001;
	}
	ret = tune_resolve(ctx, &o);
	CHECK(ret == 0 || ret == -EINVAL);
	t = &ctx->tune;
	if (!ret) {
		/* A field given is taken as it is (r2cc_opts_check() checked
		 * it); else the variable, in its range, or the default. */
		CHECK(o.chunk_size ? t->chunk_size == o.chunk_size :
		      t->chunk_size >= R2CC_CHUNK_SIZE_MIN &&
		      t->chunk_size <= R2CC_CHUNK_SIZE_MAX);
		CHECK(o.stall_ms ? t->stall_ms == o.stall_ms :
		      t->stall_ms >= 1 && t->stall_ms <= 60000);
		CHECK(o.rail_depth ? t->rail_depth == o.rail_depth :
		      t->rail_depth >= 1 &&
		      t->rail_depth <= R2CC_RAIL_DEPTH_MAX);
		CHECK(o.peer_timeout_ms ?
		      t->peer_timeout_ms == o.peer_timeout_ms :
		      t->peer_timeout_ms >= 100 &&
		      t->peer_timeout_ms <= 600000);
		CHECK(!o.fallback ||
		      t->tcp_fallback == (o.fallback == R2CC_FALLBACK_TCP));
		CHECK(t->nic_window >= R2CC_CHUNK_SIZE_MIN);
		/* 0: unset, each NIC its own (lib/platform/fabric.c) */
		CHECK(t->ib_timeout <= 31);
		CHECK(memchr(t->ctrl_ifname, 0, sizeof(t->ctrl_ifname)));
		if (o.ctrl_ifname || (ifname && !(flags & F_IFNAME_OPT)))
			CHECK(!strcmp(t->ctrl_ifname, ifname));
	}
	free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct r2cc_boot_opts o = { .size = sizeof(o) };
	char *val[NSLOT] = { 0 };
	uint32_t tune[4] = { 0 };
	uint16_t mask;
	uint8_t flags, fallback;
	size_t usize;
	int i;

	mask = take8(&in);
	mask |= (uint16_t)take8(&in) << 8;
	flags = take8(&in);
	o.rank = (int32_t)take32(&in);
	o.world_size = (int32_t)take32(&in);
	o.timeout_ms = take32(&in);
	usize = take8(&in);
	usize |= (size_t)take8(&in) << 8;
	fallback = take8(&in);
	if (flags & F_RESERVED)
		o.reserved = take32(&in);
	if (flags & F_TUNE_OPTS)
		for (i = 0; i < 4; i++)
			tune[i] = take32(&in);
	if (flags & F_LIAR)
		usize = SIZE_MAX - usize;
	else if (!(flags & F_USIZE))
		usize = sizeof(o);

	for (i = 0; i < NSLOT; i++) {
		if (mask & (1u << i))
			val[i] = take_str(&in);
		if (!names[i])
			continue;
		if (val[i] && !(i == NSLOT - 1 && (flags & F_IFNAME_OPT))) {
			snprintf(envbuf[i], sizeof(envbuf[i]), "%s=%s",
				 names[i], val[i]);
			putenv(envbuf[i]);
		} else {
			unsetenv(names[i]);
		}
	}
	o.root = val[0];

	if (val[0])
		fuzz_root(val[0]);
	fuzz_boot(flags, &o, usize, &in);
	fuzz_tune(flags, fallback, val[NSLOT - 1], tune);

	for (i = 0; i < NSLOT; i++)
		free(val[i]);
	return 0;
}
