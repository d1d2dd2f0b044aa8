// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer: what a hostile peer can send the bootstrap (lib/boot/bootstrap.c).
 *
 * The file is compiled into this target, so that its static readers are
 * driven directly: the library's end of every connection is one end of an
 * AF_UNIX socketpair and the fuzzer plays the peers on the other ends.
 * Everything a peer sends is queued before the library reads it and every
 * peer has shut its side down before the library waits on it, so a run is
 * deterministic and never waits: a step that takes long is a failure.
 *
 *  - Root mode: the library is rank 0.  Its connections are pending ones,
 *    fed chunk by chunk to root_hello() as root_init() does it (polling
 *    after every chunk); a HELLO that fails the rendezvous is answered
 *    with tell_failed() and root_abort(), as there.  Once every rank has
 *    joined, the WELCOMEs go out and the rest of each stream is read by up
 *    to three r2cc_boot_allgather() rounds.
 *  - Rank mode: the library is rank r of the world; the fuzzer's stream is
 *    the root's side: the WELCOME (read as rank_init() reads it after it
 *    has connected) and the answers to up to three allgathers.
 *
 * Input: flags (F_*), world size - 2, extra (root mode: connections
 * beyond one per rank; rank mode: which rank), rounds, one 16-bit length
 * per round, with F_SEQ the first allgather's 32-bit sequence number;
 * then operations, each one byte (low 3 bits: which connection, in root
 * mode; the rest, modulo 4: what) and its arguments:
 *   raw      n, then n bytes as they are
 *   header   a header as boot_pack() writes it, each field either what
 *            this connection's peer should send or a value from the input
 *   payload  the payload the last DATA header announced, one byte repeated
 *   close    shut the peer's side down, or close it outright, now or
 *            once the rendezvous is over
 * Checked besides the sanitizers: every error is one the API documents;
 * a failed step's error sticks; a successful WELCOME or allgather put
 * exactly the right bytes on every connection.
 */
#include "../../lib/boot/bootstrap.c"	/* its static readers and state */

#include "fuzz.h"

#define F_ROOT		0x01	/* the library is rank 0 */
#define F_SMALLBUF	0x02	/* rank mode: a tiny send buffer */
#define F_SEQ		0x04	/* allgathers start at a sequence number */

#define MAX_WORLD	8
#define MAX_CONNS	(MAX_WORLD - 1 + 2)
#define MAX_ROUNDS	3
#define MAX_LEN		2048	/* per rank and round */
#define MAX_PAYLOAD	(MAX_WORLD * MAX_LEN)
#define STEP_MS		2000	/* the library's timeout: never reached */
#define SLOW_MS		500	/* a step this long waited for something */

enum { P_PENDING, P_JOINED, P_DROPPED };

struct peer {
	int fd;			/* the fuzzer's end, -1 once closed */
	bool eof;		/* shut down (or closed): nothing more comes */
	bool full;		/* a write did not fit: the stream ends there */
	bool close_later;	/* close once the rendezvous is over */
	uint32_t rank;		/* the rank this peer says it is */
	uint32_t seq;		/* DATA headers written so far */
	uint32_t last_len;	/* the len of the last one */
	int state;		/* root mode */
	int joined;		/* root mode: b->fds[joined] is ours */
	struct boot_pending pend; /* root mode: the library's end */
};

struct sim {
	struct r2cc_boot *b;
	bool root;
	int world;
	uint32_t seq0;
	int nrounds;
	uint32_t round_len[MAX_ROUNDS];
	int npeers;
	int njoined;
	int failed;		/* root mode: the rendezvous failed */
	struct peer peer[MAX_CONNS];
};

/* ------------------------------------------------------------ peers */

static void peer_write(struct peer *p, const void *buf, size_t len)
{
	if (p->eof || p->full || !len)
		return;
	if (send(p->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len)
		p->full = true;
}

static void peer_shut(struct peer *p, bool close_it)
{
	if (p->fd < 0)
		return;
	if (close_it) {
		close(p->fd);
		p->fd = -1;
	} else if (!p->eof) {
		shutdown(p->fd, SHUT_WR);
	}
	p->eof = true;
}

/* What the library has sent this peer so far: bytes read, at most @cap. */
static size_t peer_drain(struct peer *p, uint8_t *buf, size_t cap)
{
	size_t got = 0;
	ssize_t n;

	if (p->fd < 0)
		return 0;
	while (got < cap) {
		n = recv(p->fd, buf + got, cap - got, MSG_DONTWAIT);
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/* A header with these fields, then exactly @plen bytes of @payload. */
static void expect_msg(struct peer *p, uint16_t type, uint32_t rank,
		       uint32_t world, uint32_t seq, uint32_t len,
		       uint32_t status, const void *payload, size_t plen)
{
	static uint8_t buf[BOOT_HDR_LEN + MAX_PAYLOAD + 1];
	struct boot_hdr h;
	size_t got;

	if (p->fd < 0)
		return;
	got = peer_drain(p, buf, sizeof(buf));
	CHECK(got == BOOT_HDR_LEN + plen);
	boot_unpack(buf, &h);
	CHECK(h.magic == BOOT_MAGIC && h.version == BOOT_VERSION);
	CHECK(h.type == type && h.rank == rank && h.world == world);
	CHECK(h.seq == seq && h.len == len && h.status == status);
	CHECK(!h.reserved);
	CHECK(!plen || !memcmp(buf + BOOT_HDR_LEN, payload, plen));
}

/* ------------------------------------------------------------ operations */

static void op_raw(struct peer *p, struct in *in)
{
	size_t n = take8(in);

	if (n > in->n)
		n = in->n;
	peer_write(p, in->p, n);
	in->p += n;
	in->n -= n;
}

static void op_header(struct sim *s, struct peer *p, struct in *in)
{
	static const uint16_t types[] = { BOOT_HELLO, BOOT_WELCOME, BOOT_DATA };
	uint8_t t = take8(in), m = take8(in), buf[BOOT_HDR_LEN];
	uint32_t rank, world, seq, len, status;
	uint16_t type;

	type = (t & 3) < 3 ? types[t & 3] : take16(in);
	rank = m & 0x01 ? take32(in) : p->rank;
	world = m & 0x02 ? take32(in) : (uint32_t)s->world;
	if (m & 0x04)
		seq = take32(in);
	else
		seq = type == BOOT_DATA ? s->seq0 + p->seq : 0;
	if (m & 0x08)
		len = take32(in);
	else if (type == BOOT_DATA && p->seq < (uint32_t)s->nrounds)
		len = s->round_len[p->seq];
	else
		len = 0;
	status = m & 0x10 ? take8(in) : BOOT_OK;
	boot_pack(buf, type, rank, world, seq, len, status);
	if (m & 0x20)
		put32(buf, take32(in));		/* magic */
	if (m & 0x40)
		put16(buf + 4, take16(in));	/* version */
	if (m & 0x80)
		put32(buf + 28, take32(in));	/* reserved */
	if (type == BOOT_DATA) {
		p->seq++;
		p->last_len = len;
	}
	peer_write(p, buf, sizeof(buf));
}

static void op_payload(struct sim *s, struct peer *p, struct in *in)
{
	static uint8_t buf[MAX_PAYLOAD];
	uint64_t n = (uint64_t)p->last_len * (s->root ? 1 : s->world);

	if (n > sizeof(buf))
		n = sizeof(buf);
	memset(buf, take8(in), n);
	peer_write(p, buf, n);
}

/* ------------------------------------------------------------ root mode */

/*
 * Poll the library's end of @p the way root_init() does, which stops
 * reading pending connections once every rank has joined.
 */
static void root_poll(struct sim *s, struct peer *p)
{
	struct r2cc_boot *b = s->b;
	struct pollfd pfd;
	int ret, r, fd;

	while (p->state == P_PENDING && !s->failed &&
	       s->njoined < b->size - 1) {
		fd = p->pend.fd;
		ret = root_hello(b, &p->pend);
		if (ret == HELLO_MORE) {
			pfd.fd = fd;
			pfd.events = POLLIN;
			if (poll(&pfd, 1, 0) <= 0)
				return;
			continue;
		}
		if (ret == HELLO_DROP) {
			CHECK(p->pend.got <= BOOT_HDR_LEN);
			close(fd);
			p->state = P_DROPPED;
			return;
		}
		if (ret == HELLO_JOINED) {
			CHECK(p->pend.fd == -1 && p->pend.got == BOOT_HDR_LEN);
			for (r = 1, p->joined = 0; r < b->size; r++)
				if (b->fds[r] == fd) {
					CHECK(!p->joined);
					p->joined = r;
				}
			CHECK(p->joined == (int)get32(p->pend.buf + 8));
			p->state = P_JOINED;
			s->njoined++;
			return;
		}
		/* A HELLO that does not fit this world fails the rendezvous. */
		CHECK(ret == -EPROTO && p->pend.got == BOOT_HDR_LEN);
		tell_failed(b, fd, BOOT_WELCOME, get32(p->pend.buf + 8), ret);
		expect_msg(p, BOOT_WELCOME, get32(p->pend.buf + 8), b->size,
			   b->seq, 0, BOOT_S_PROTO, NULL, 0);
		TRACE("hello: %d\n", ret);
		s->failed = ret;
	}
}

/* The rest of root_init() once the operations are done. */
static void root_finish(struct sim *s)
{
	struct r2cc_boot *b = s->b;
	int64_t deadline = now_ms() + STEP_MS;
	uint8_t buf[BOOT_HDR_LEN];
	int i, r, ret = s->failed;

	for (i = 0; i < s->npeers; i++)
		if (s->peer[i].state == P_PENDING) {
			close(s->peer[i].pend.fd);
			s->peer[i].state = P_DROPPED;
		}
	if (!ret && s->njoined < b->size - 1)
		ret = -ETIMEDOUT;	/* the ranks that never came */
	for (r = 1; !ret && r < b->size; r++) {
		boot_pack(buf, BOOT_WELCOME, r, b->size, 0, 0, BOOT_OK);
		ret = send_all(b->fds[r], buf, sizeof(buf), deadline, false);
		CHECK(ret <= 0);
	}
	TRACE("rendezvous: %d joined, %d\n", s->njoined, ret);
	if (ret) {
		root_abort(b, BOOT_WELCOME, ret);
		s->failed = ret;
		return;
	}
	for (i = 0; i < s->npeers; i++)
		if (s->peer[i].state == P_JOINED)
			expect_msg(&s->peer[i], BOOT_WELCOME,
				   s->peer[i].joined, b->size, 0, 0, BOOT_OK,
				   NULL, 0);
}

/* ------------------------------------------------------------ rank mode */

/* rank_init() after rank_connect(): HELLO out, WELCOME in. */
static int rank_welcome(struct sim *s)
{
	struct r2cc_boot *b = s->b;
	int64_t deadline = now_ms() + STEP_MS;
	uint8_t buf[BOOT_HDR_LEN];
	struct boot_hdr h;
	int ret;

	boot_pack(buf, BOOT_HELLO, b->rank, b->size, 0, 0, BOOT_OK);
	ret = send_all(b->fd, buf, sizeof(buf), deadline, false);
	if (!ret)
		ret = recv_all(b->fd, buf, sizeof(buf), deadline);
	if (!ret)
		ret = boot_check(b, buf, b->rank, BOOT_WELCOME, &h);
	if (!ret && h.len)
		ret = -EPROTO;
	CHECK(ret <= 0);
	TRACE("welcome: %d\n", ret);
	if (!ret)
		expect_msg(&s->peer[0], BOOT_HELLO, b->rank, b->size, 0, 0,
			   BOOT_OK, NULL, 0);
	return ret;
}

/* ------------------------------------------------------------ allgathers */

static bool documented(int err)
{
	return err == -EPROTO || err == -ETIMEDOUT || err == -ECONNRESET ||
	       err == -EPIPE;
}

/*
 * A barrier, r2cc_boot_barrier(), passes NULL buffers: rounds of 0 bytes
 * do the same (regress/fuzz_bootstrap/barrier-null-all once made the root
 * compute NULL + 0).
 */
static void rounds(struct sim *s)
{
	struct r2cc_boot *b = s->b;
	uint8_t *mine, *all;
	int64_t t0;
	int k, i, ret;

	b->seq = s->seq0;
	/* Bad arguments change nothing. */
	CHECK(r2cc_boot_allgather(b, NULL, 1, s) == -EINVAL);
	CHECK(r2cc_boot_allgather(b, s, BOOT_MAX_LEN + 1, s) == -EINVAL);
	CHECK(b->seq == s->seq0 && !b->err);
	for (k = 0; k < s->nrounds; k++) {
		size_t len = s->round_len[k];
		bool null = !len;

		mine = null ? NULL : malloc(len ?: 1);
		all = null ? NULL : malloc(len * b->size ?: 1);
		CHECK(null || (mine && all));
		if (len)
			memset(mine, 0xa0 + b->rank + k, len);
		t0 = now_ms();
		ret = r2cc_boot_allgather(b, mine, len, all);
		TRACE("round %d of %zu bytes: %d\n", k, len, ret);
		CHECK(now_ms() - t0 < SLOW_MS);
		CHECK(b->seq == s->seq0 + k + 1);
		if (ret) {
			CHECK(documented(ret));
			CHECK(r2cc_boot_barrier(b) == ret);
			CHECK(r2cc_boot_allgather(b, mine, len, all) == ret);
		} else if (s->root) {
			CHECK(!len || !memcmp(all, mine, len));
			for (i = 0; i < s->npeers; i++)
				if (s->peer[i].state == P_JOINED)
					expect_msg(&s->peer[i], BOOT_DATA,
						   s->peer[i].joined, b->size,
						   s->seq0 + k, len, BOOT_OK,
						   all, len * b->size);
		} else {
			expect_msg(&s->peer[0], BOOT_DATA, b->rank, b->size,
				   s->seq0 + k, len, BOOT_OK, mine, len);
		}
		free(mine);
		free(all);
		if (ret)
			break;
	}
}

/* ------------------------------------------------------------ driver */

/* Peers that go away between the rendezvous and the first allgather. */
static void close_later(struct sim *s)
{
	int i;

	for (i = 0; i < s->npeers; i++)
		if (s->peer[i].close_later)
			peer_shut(&s->peer[i], true);
}

static int sim_setup(struct sim *s, struct in *in)
{
	uint8_t flags = take8(in), w = take8(in), extra = take8(in);
	struct r2cc_boot *b;
	int sv[2], i, r, n;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < MAX_CONNS; i++)
		s->peer[i].fd = s->peer[i].pend.fd = -1;
	s->root = flags & F_ROOT;
	s->world = 2 + w % (MAX_WORLD - 1);
	s->nrounds = take8(in) % (MAX_ROUNDS + 1);
	for (i = 0; i < s->nrounds; i++)
		s->round_len[i] = take16(in) % (MAX_LEN + 1);
	if (flags & F_SEQ)
		s->seq0 = take32(in);

	b = s->b = calloc(1, sizeof(*b));
	CHECK(b);
	b->size = s->world;
	b->timeout_ms = STEP_MS;
	b->fd = -1;
	if (s->root) {
		b->rank = 0;
		b->fds = malloc(b->size * sizeof(*b->fds));
		CHECK(b->fds);
		for (r = 0; r < b->size; r++)
			b->fds[r] = -1;
		n = s->world - 1 + extra % 3;
	} else {
		b->rank = 1 + extra % (s->world - 1);
		n = 1;
	}
	for (i = 0; i < n; i++) {
		struct peer *p = &s->peer[i];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
			       SOCK_CLOEXEC, 0, sv))
			return -errno;
		s->npeers++;
		p->fd = sv[1];
		if (s->root) {
			p->rank = 1 + i % (s->world - 1);
			p->pend.fd = sv[0];
			p->pend.order = i;
			p->state = P_PENDING;
		} else {
			p->rank = b->rank;
			b->fd = sv[0];
			if (flags & F_SMALLBUF)
				setsockopt(b->fd, SOL_SOCKET, SO_SNDBUF,
					   &(int){ 1 }, sizeof(int));
		}
	}
	return 0;
}

static void sim_free(struct sim *s)
{
	int i;

	for (i = 0; i < s->npeers; i++) {
		if (s->root && s->peer[i].state == P_PENDING)
			close(s->peer[i].pend.fd);
		if (s->peer[i].fd >= 0)
			close(s->peer[i].fd);
	}
	boot_free(s->b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sim s;
	struct in in = { data, size };
	struct peer *p;
	uint8_t op, arg;
	int i;

	if (sim_setup(&s, &in)) {
		sim_free(&s);
		return 0;
	}
	while (in.n && !s.failed) {
		op = take8(&in);
		p = &s.peer[(op & 7) % s.npeers];
		switch ((op >> 3) % 4) {
		case 0:
			op_raw(p, &in);
			break;
		case 1:
			op_header(&s, p, &in);
			break;
		case 2:
			op_payload(&s, p, &in);
			break;
		default:
			arg = take8(&in);
			if (arg & 2)
				p->close_later = true;
			else
				peer_shut(p, arg & 1);
			break;
		}
		if (s.root)
			root_poll(&s, p);
	}
	/* Nothing more comes from any peer: the library never waits. */
	for (i = 0; i < s.npeers; i++)
		peer_shut(&s.peer[i], false);
	if (s.root) {
		for (i = 0; i < s.npeers && !s.failed; i++)
			root_poll(&s, &s.peer[i]);
		root_finish(&s);
		if (!s.failed) {
			close_later(&s);
			rounds(&s);
		}
	} else if (!rank_welcome(&s)) {
		close_later(&s);
		rounds(&s);
	}
	CHECK(r2cc_boot_rank(s.b) == s.b->rank &&
	      r2cc_boot_size(s.b) == s.world);
	sim_free(&s);
	return 0;
}
