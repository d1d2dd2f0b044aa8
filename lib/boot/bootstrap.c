// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Bootstrap: a TCP rendezvous at rank 0 and an allgather relayed by it.
 *
 * Rank 0 listens; every other rank connects, says who it is (HELLO) and
 * waits for the root to say that everyone is there (WELCOME).  An allgather
 * is one DATA message from each rank to the root and one DATA message
 * with the whole array back.  Every message starts with the same 32-byte
 * header, little-endian, see boot_pack().  On the connection of rank r
 * every header carries r, whichever side sent it.  A header from the root
 * with a non-zero status ends the step on that rank with that error.
 *
 * All sockets are non-blocking; every transfer waits in poll() for at most
 * what is left of the step's timeout.  A step that fails leaves the
 * streams in an unknown state, so its error sticks to the handle.
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <r2cc/bootstrap.h>

#include "base/base.h"

#define BOOT_MAGIC		0x42433252u	/* "R2CB" on the wire */
#define BOOT_VERSION		1
#define BOOT_HDR_LEN		32
#define BOOT_MAX_LEN		65536
#define BOOT_MAX_WORLD		65536
#define BOOT_DEF_TIMEOUT_MS	60000
#define BOOT_PENDING		128	/* accepted, HELLO not read yet */
#define BOOT_RETRY_MAX_MS	100	/* connect retry back-off, at most */

enum boot_type {
	BOOT_HELLO = 1,		/* rank -> root: I am rank r of world n */
	BOOT_WELCOME = 2,	/* root -> rank: everyone has joined */
	BOOT_DATA = 3,		/* allgather, both ways */
};

/* Wire status: what ended the step, mapped to an errno by the receiver. */
enum boot_status {
	BOOT_OK = 0,
	BOOT_S_PROTO = 1,	/* -EPROTO */
	BOOT_S_TIMEDOUT = 2,	/* -ETIMEDOUT */
	BOOT_S_GONE = 3,	/* -ECONNRESET: a rank or the root failed */
};

struct boot_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t rank;
	uint32_t world;
	uint32_t seq;		/* allgather number, from 0 */
	uint32_t len;		/* bytes per rank that follow (DATA) */
	uint32_t status;	/* enum boot_status, root -> rank only */
	uint32_t reserved;
};

struct r2cc_boot {
	int rank;
	int size;
	uint32_t timeout_ms;
	uint32_t seq;
	int err;		/* sticky: the first step that failed */
	int fd;			/* rank > 0: the connection to the root */
	int *fds;		/* rank 0: fds[r], r = 1..size - 1 */
};

struct boot_cfg {
	char host[256];
	uint16_t port;
	int rank;
	int size;
	uint32_t timeout_ms;
};

/* ------------------------------------------------------------ helpers */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint16_t get16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Offset  Size  Field
 *      0     4  magic     0x42433252
 *      4     2  version   1
 *      6     2  type      enum boot_type
 *      8     4  rank      the non-root rank this connection belongs to
 *     12     4  world     world size
 *     16     4  seq       allgather sequence number (0 in HELLO/WELCOME)
 *     20     4  len       bytes per rank (DATA), else 0
 *     24     4  status    enum boot_status (0 from non-root ranks)
 *     28     4  reserved  0
 */
static void boot_pack(uint8_t *p, uint16_t type, uint32_t rank,
		      uint32_t world, uint32_t seq, uint32_t len,
		      uint32_t status)
{
	put32(p, BOOT_MAGIC);
	put16(p + 4, BOOT_VERSION);
	put16(p + 6, type);
	put32(p + 8, rank);
	put32(p + 12, world);
	put32(p + 16, seq);
	put32(p + 20, len);
	put32(p + 24, status);
	put32(p + 28, 0);
}

static void boot_unpack(const uint8_t *p, struct boot_hdr *h)
{
	h->magic = get32(p);
	h->version = get16(p + 4);
	h->type = get16(p + 6);
	h->rank = get32(p + 8);
	h->world = get32(p + 12);
	h->seq = get32(p + 16);
	h->len = get32(p + 20);
	h->status = get32(p + 24);
	h->reserved = get32(p + 28);
}

static uint32_t status_of(int err)
{
	switch (err) {
	case 0:
		return BOOT_OK;
	case -EPROTO:
		return BOOT_S_PROTO;
	case -ETIMEDOUT:
		return BOOT_S_TIMEDOUT;
	default:
		return BOOT_S_GONE;
	}
}

static int status_err(uint32_t status)
{
	switch (status) {
	case BOOT_OK:
		return 0;
	case BOOT_S_TIMEDOUT:
		return -ETIMEDOUT;
	case BOOT_S_GONE:
		return -ECONNRESET;
	default:
		return -EPROTO;
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds to @deadline for poll(), 0 once it has passed. */
static int left_ms(int64_t deadline)
{
	int64_t left = deadline - now_ms();

	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/* Wait for @events on @fd: revents, or -ETIMEDOUT once @deadline passed. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int left, ret;

	for (;;) {
		left = left_ms(deadline);
		if (!left)
			return -ETIMEDOUT;
		ret = poll(&pfd, 1, left);
		if (ret > 0)
			return pfd.revents;
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * Send all of @buf.  With @watch, stop and return 1 as soon as the peer
 * has sent something: the root only talks before it has read everything
 * when it aborts the step, and then waits for nothing more from us.
 */
static int send_all(int fd, const void *buf, size_t len, int64_t deadline,
		    bool watch)
{
	const uint8_t *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		ret = wait_fd(fd, watch ? POLLOUT | POLLIN : POLLOUT, deadline);
		if (ret < 0)
			return ret;
		if (watch && (ret & POLLIN))
			return 1;
	}
	return 0;
}

/* Receive exactly @len bytes; a peer that closes is -ECONNRESET. */
static int recv_all(int fd, void *buf, size_t len, int64_t deadline)
{
	uint8_t *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		n = recv(fd, p, len, MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		ret = wait_fd(fd, POLLIN, deadline);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static void set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/*
 * Check a header received on rank @rank's connection; a status (only the
 * root may send one) becomes the step's error.
 */
static int boot_check(const struct r2cc_boot *b, const uint8_t *buf,
		      int rank, uint16_t type, struct boot_hdr *h)
{
	boot_unpack(buf, h);
	if (h->magic != BOOT_MAGIC || h->version != BOOT_VERSION ||
	    h->type != type || h->rank != (uint32_t)rank ||
	    h->world != (uint32_t)b->size || h->seq != b->seq ||
	    h->reserved || (h->status && !b->rank))
		return -EPROTO;
	return status_err(h->status);
}

/* ------------------------------------------------------------ options */

/* A decimal number in [0, @max], digits only, nothing around them. */
static int parse_num(const char *s, long long max, long long *out)
{
	long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* $@a if set, else $@b, as a number in [0, @max]. */
static int env_num(const char *a, const char *b, long long max,
		   long long *out)
{
	const char *s = getenv(a);

	if (!s)
		s = getenv(b);
	return parse_num(s, max, out);
}

static int set_root(struct boot_cfg *c, const char *host, size_t hlen,
		    const char *port)
{
	long long v;

	if (!hlen || hlen >= sizeof(c->host))
		return -EINVAL;
	if (parse_num(port, 65535, &v) || !v)
		return -EINVAL;
	memcpy(c->host, host, hlen);
	c->host[hlen] = '\0';
	c->port = v;
	return 0;
}

/* "host:port", "[v6addr]:port". */
static int parse_root(struct boot_cfg *c, const char *s)
{
	const char *colon, *end;

	if (*s == '[') {
		end = strchr(s, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		return set_root(c, s + 1, end - s - 1, end + 2);
	}
	colon = strrchr(s, ':');
	if (!colon || memchr(s, ':', colon - s))
		return -EINVAL;		/* none, or a bare IPv6 address */
	return set_root(c, s, colon - s, colon + 1);
}

static int env_root(struct boot_cfg *c)
{
	const char *root = getenv("R2CC_ROOT");
	const char *addr, *port;
	size_t len;

	if (root)
		return parse_root(c, root);
	addr = getenv("MASTER_ADDR");
	port = getenv("MASTER_PORT");
	if (!addr || !port)
		return -EINVAL;
	len = strlen(addr);
	if (len >= 2 && addr[0] == '[' && addr[len - 1] == ']')
		return set_root(c, addr + 1, len - 2, port);
	return set_root(c, addr, len, port);
}

static int boot_config(const struct r2cc_boot_opts *uo, struct boot_cfg *c)
{
	struct r2cc_boot_opts opts, *o = &opts;
	long long v;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = r2cc_opts_in(o, sizeof(*o), uo);
	if (ret)
		return ret;
	if (o->reserved)
		return -EINVAL;

	if (o->world_size < 0 || o->world_size > BOOT_MAX_WORLD)
		return -EINVAL;
	if (o->world_size) {
		c->size = o->world_size;
	} else {
		ret = env_num("R2CC_WORLD_SIZE", "WORLD_SIZE", BOOT_MAX_WORLD,
			      &v);
		if (ret || !v)
			return -EINVAL;
		c->size = v;
	}

	if (o->rank < -1)
		return -EINVAL;
	if (o->rank >= 0) {
		c->rank = o->rank;
	} else {
		ret = env_num("R2CC_RANK", "RANK", INT_MAX, &v);
		if (ret)
			return ret;
		c->rank = v;
	}
	if (c->rank >= c->size)
		return -EINVAL;

	if (o->timeout_ms) {
		c->timeout_ms = o->timeout_ms;
	} else if (getenv("R2CC_BOOT_TIMEOUT_MS")) {
		ret = env_num("R2CC_BOOT_TIMEOUT_MS", "", UINT32_MAX, &v);
		if (ret || !v)
			return -EINVAL;
		c->timeout_ms = v;
	} else {
		c->timeout_ms = BOOT_DEF_TIMEOUT_MS;
	}

	/* A world of one needs no root; one given is still checked. */
	if (o->root)
		return parse_root(c, o->root);
	return c->size == 1 ? 0 : env_root(c);
}

/* ------------------------------------------------------------ rendezvous */

static int boot_resolve(const struct boot_cfg *c, int64_t deadline,
			struct addrinfo **ai)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_protocol = IPPROTO_TCP,
		.ai_flags = AI_NUMERICSERV,
	};
	char port[8];
	int ret;

	snprintf(port, sizeof(port), "%u", c->port);
	for (;;) {
		ret = getaddrinfo(c->host, port, &hints, ai);
		if (!ret)
			return 0;
		if (ret == EAI_MEMORY)
			return -ENOMEM;
		if (ret != EAI_AGAIN)
			return -EINVAL;
		/* The name service is not answering yet. */
		if (left_ms(deadline) <= BOOT_RETRY_MAX_MS)
			return -ETIMEDOUT;
		poll(NULL, 0, BOOT_RETRY_MAX_MS);
	}
}

static int listen_on(int family, const struct sockaddr *sa, socklen_t len)
{
	int one = 1, fd, ret;

	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    IPPROTO_TCP);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, sa, len) || listen(fd, SOMAXCONN)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * Listen at the root's address; when the name is not an address of this
 * host (a service address, NAT), on every address at the root's port.
 */
static int root_listen(const struct addrinfo *ai, uint16_t port)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in in = { .sin_family = AF_INET };
	const struct addrinfo *a;
	int family = 0, fd;

	for (a = ai; a; a = a->ai_next) {
		if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
			continue;
		if (!family)
			family = a->ai_family;
		fd = listen_on(a->ai_family, a->ai_addr, a->ai_addrlen);
		if (fd >= 0 || (fd != -EADDRNOTAVAIL && fd != -EAFNOSUPPORT))
			return fd;
	}
	if (family == AF_INET6) {
		in6.sin6_port = htons(port);
		in6.sin6_addr = in6addr_any;
		return listen_on(AF_INET6, (struct sockaddr *)&in6,
				 sizeof(in6));
	}
	if (family == AF_INET) {
		in.sin_port = htons(port);
		in.sin_addr.s_addr = htonl(INADDR_ANY);
		return listen_on(AF_INET, (struct sockaddr *)&in, sizeof(in));
	}
	return -EINVAL;
}

struct boot_pending {
	int fd;
	unsigned int got;
	uint64_t order;
	uint8_t buf[BOOT_HDR_LEN];
};

enum { HELLO_MORE, HELLO_JOINED, HELLO_DROP };

/*
 * Read what a new connection has sent.  Something that is not this
 * protocol (wrong magic, nothing, a close) is dropped; a HELLO that does
 * not fit this world fails the rendezvous with -EPROTO.
 */
static int root_hello(struct r2cc_boot *b, struct boot_pending *p)
{
	struct boot_hdr h;
	ssize_t n;

	n = recv(p->fd, p->buf + p->got, BOOT_HDR_LEN - p->got, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		      errno == EINTR))
		return HELLO_MORE;
	if (n <= 0)
		return HELLO_DROP;
	p->got += n;
	if (p->got >= 4 && get32(p->buf) != BOOT_MAGIC)
		return HELLO_DROP;
	if (p->got < BOOT_HDR_LEN)
		return HELLO_MORE;
	boot_unpack(p->buf, &h);
	if (h.version != BOOT_VERSION || h.type != BOOT_HELLO ||
	    h.world != (uint32_t)b->size || !h.rank ||
	    h.rank >= (uint32_t)b->size || b->fds[h.rank] >= 0 ||
	    h.seq || h.len || h.status || h.reserved)
		return -EPROTO;
	set_nodelay(p->fd);
	b->fds[h.rank] = p->fd;
	p->fd = -1;
	return HELLO_JOINED;
}

/* Best effort: tell rank @rank on @fd that the step failed with @err. */
static void tell_failed(const struct r2cc_boot *b, int fd, uint16_t type,
			uint32_t rank, int err)
{
	uint8_t buf[BOOT_HDR_LEN];

	boot_pack(buf, type, rank, b->size, b->seq, 0, status_of(err));
	send(fd, buf, sizeof(buf), MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(fd, SHUT_WR);
}

static void root_abort(const struct r2cc_boot *b, uint16_t type, int err)
{
	int r;

	for (r = 1; r < b->size; r++)
		if (b->fds[r] >= 0)
			tell_failed(b, b->fds[r], type, r, err);
}

static int root_accept(int lfd, struct boot_pending *pend, int *npend,
		       uint64_t *order)
{
	int fd, i, old;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				return -errno;
			return 0;	/* none left, or one that went away */
		}
		if (*npend == BOOT_PENDING) {
			/* Make room: the one silent for longest goes. */
			for (i = 1, old = 0; i < *npend; i++)
				if (pend[i].order < pend[old].order)
					old = i;
			close(pend[old].fd);
			pend[old] = pend[--*npend];
		}
		pend[*npend].fd = fd;
		pend[*npend].got = 0;
		pend[*npend].order = (*order)++;
		++*npend;
	}
}

static int root_init(struct r2cc_boot *b, const struct addrinfo *ai,
		     uint16_t port, int64_t deadline)
{
	struct boot_pending pend[BOOT_PENDING];
	struct pollfd pfd[1 + BOOT_PENDING];
	uint8_t buf[BOOT_HDR_LEN];
	int npend = 0, joined = 1;
	uint64_t order = 0;
	int lfd, i, n, r, ret;

	b->fds = malloc(b->size * sizeof(*b->fds));
	if (!b->fds)
		return -ENOMEM;
	for (r = 0; r < b->size; r++)
		b->fds[r] = -1;
	lfd = root_listen(ai, port);
	if (lfd < 0)
		return lfd;

	ret = 0;
	while (joined < b->size) {
		n = left_ms(deadline);
		if (!n) {
			ret = -ETIMEDOUT;
			break;
		}
		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		for (i = 0; i < npend; i++) {
			pfd[1 + i].fd = pend[i].fd;
			pfd[1 + i].events = POLLIN;
		}
		n = poll(pfd, 1 + npend, n);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		/* Backwards: the last entry moves into a slot already seen. */
		for (i = npend - 1; i >= 0; i--) {
			if (!pfd[1 + i].revents)
				continue;
			ret = root_hello(b, &pend[i]);
			if (ret == HELLO_MORE)
				continue;
			if (ret < 0) {
				tell_failed(b, pend[i].fd, BOOT_WELCOME,
					    get32(pend[i].buf + 8), ret);
				break;
			}
			if (ret == HELLO_JOINED)
				joined++;
			else
				close(pend[i].fd);
			pend[i] = pend[--npend];
		}
		if (ret < 0)
			break;
		ret = 0;
		if (pfd[0].revents) {
			ret = root_accept(lfd, pend, &npend, &order);
			if (ret < 0)
				break;
		}
	}
	for (i = 0; i < npend; i++)
		close(pend[i].fd);
	close(lfd);
	if (ret < 0) {
		root_abort(b, BOOT_WELCOME, ret);
		return ret;
	}
	for (r = 1; r < b->size; r++) {
		boot_pack(buf, BOOT_WELCOME, r, b->size, 0, 0, BOOT_OK);
		ret = send_all(b->fds[r], buf, sizeof(buf), deadline, false);
		if (ret < 0) {
			root_abort(b, BOOT_WELCOME, ret);
			return ret;
		}
	}
	return 0;
}

static bool retry_connect(int err)
{
	switch (err) {
	case -ECONNREFUSED:	/* the root is not listening yet */
	case -ECONNRESET:
	case -ECONNABORTED:
	case -EHOSTUNREACH:	/* its host or network is not up yet */
	case -ENETUNREACH:
	case -EHOSTDOWN:
	case -EADDRNOTAVAIL:
	case -EAFNOSUPPORT:
	case -EAGAIN:
		return true;
	default:
		return false;
	}
}

/* On loopback, a socket whose port is the root's can connect to itself. */
static bool self_connected(int fd)
{
	struct sockaddr_storage a, b;
	socklen_t al = sizeof(a), bl = sizeof(b);

	if (getsockname(fd, (struct sockaddr *)&a, &al) ||
	    getpeername(fd, (struct sockaddr *)&b, &bl))
		return false;
	return al == bl && !memcmp(&a, &b, al);
}

static int connect_one(const struct addrinfo *a, int64_t deadline)
{
	socklen_t len = sizeof(int);
	int fd, ret, soerr;

	fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    IPPROTO_TCP);
	if (fd < 0)
		return -errno;
	ret = connect(fd, a->ai_addr, a->ai_addrlen) ? -errno : 0;
	if (ret == -EINPROGRESS || ret == -EINTR) {
		ret = wait_fd(fd, POLLOUT, deadline);
		if (ret >= 0) {
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
				ret = -errno;
			else
				ret = -soerr;
		}
	}
	if (!ret && self_connected(fd))
		ret = -ECONNREFUSED;
	if (ret) {
		close(fd);
		return ret;
	}
	set_nodelay(fd);
	return fd;
}

/* Connect to the root, trying again until @deadline while it is not up. */
static int rank_connect(const struct addrinfo *ai, int64_t deadline)
{
	const struct addrinfo *a;
	int delay = 5, fd, left;

	for (;;) {
		for (a = ai; a; a = a->ai_next) {
			if (a->ai_family != AF_INET &&
			    a->ai_family != AF_INET6)
				continue;
			fd = connect_one(a, deadline);
			if (fd >= 0)
				return fd;
			if (!retry_connect(fd))
				return fd;
		}
		left = left_ms(deadline);
		if (!left)
			return -ETIMEDOUT;
		poll(NULL, 0, delay < left ? delay : left);
		delay = delay * 2 > BOOT_RETRY_MAX_MS ? BOOT_RETRY_MAX_MS :
							delay * 2;
	}
}

static int rank_init(struct r2cc_boot *b, const struct addrinfo *ai,
		     int64_t deadline)
{
	uint8_t buf[BOOT_HDR_LEN];
	struct boot_hdr h;
	int ret;

	ret = rank_connect(ai, deadline);
	if (ret < 0)
		return ret;
	b->fd = ret;
	boot_pack(buf, BOOT_HELLO, b->rank, b->size, 0, 0, BOOT_OK);
	ret = send_all(b->fd, buf, sizeof(buf), deadline, false);
	if (!ret)
		ret = recv_all(b->fd, buf, sizeof(buf), deadline);
	if (!ret)
		ret = boot_check(b, buf, b->rank, BOOT_WELCOME, &h);
	if (!ret && h.len)
		ret = -EPROTO;
	return ret;
}

static void boot_free(struct r2cc_boot *b)
{
	int r;

	if (b->fds) {
		for (r = 1; r < b->size; r++)
			if (b->fds[r] >= 0)
				close(b->fds[r]);
		free(b->fds);
	}
	if (b->fd >= 0)
		close(b->fd);
	free(b);
}

R2CC_EXPORT int r2cc_boot_init(const struct r2cc_boot_opts *opts,
			       struct r2cc_boot **out)
{
	struct r2cc_boot_opts def = { .size = sizeof(def), .rank = -1 };
	struct addrinfo *ai;
	struct r2cc_boot *b;
	struct boot_cfg cfg;
	int64_t deadline;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!opts)
		opts = &def;
	ret = boot_config(opts, &cfg);
	if (ret)
		return ret;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->rank = cfg.rank;
	b->size = cfg.size;
	b->timeout_ms = cfg.timeout_ms;
	b->fd = -1;
	if (b->size > 1) {
		deadline = now_ms() + cfg.timeout_ms;
		ret = boot_resolve(&cfg, deadline, &ai);
		if (ret) {
			boot_free(b);
			return ret;
		}
		if (b->rank)
			ret = rank_init(b, ai, deadline);
		else
			ret = root_init(b, ai, cfg.port, deadline);
		freeaddrinfo(ai);
		if (ret) {
			boot_free(b);
			return ret;
		}
	}
	*out = b;
	return 0;
}

R2CC_EXPORT int r2cc_boot_rank(const struct r2cc_boot *boot)
{
	return boot ? boot->rank : -EINVAL;
}

R2CC_EXPORT int r2cc_boot_size(const struct r2cc_boot *boot)
{
	return boot ? boot->size : -EINVAL;
}

/* ------------------------------------------------------------ allgather */

static int root_allgather(struct r2cc_boot *b, size_t len, uint8_t *all,
			  int64_t deadline)
{
	uint8_t buf[BOOT_HDR_LEN];
	struct boot_hdr h;
	int r, ret = 0;

	for (r = 1; r < b->size && !ret; r++) {
		ret = recv_all(b->fds[r], buf, sizeof(buf), deadline);
		if (!ret)
			ret = boot_check(b, buf, r, BOOT_DATA, &h);
		/* Never read a length from the wire: it must be ours. */
		if (!ret && h.len != len)
			ret = -EPROTO;
		if (!ret && len)
			ret = recv_all(b->fds[r], all + r * len, len, deadline);
	}
	for (r = 1; r < b->size && !ret; r++) {
		boot_pack(buf, BOOT_DATA, r, b->size, b->seq, len, BOOT_OK);
		ret = send_all(b->fds[r], buf, sizeof(buf), deadline, false);
		if (!ret)
			ret = send_all(b->fds[r], all, b->size * len, deadline,
				       false);
	}
	if (ret)
		root_abort(b, BOOT_DATA, ret);
	return ret;
}

/*
 * Sending failed: the root may have aborted the step and gone.  What it
 * said before it went is the better answer.
 */
static int rank_why(struct r2cc_boot *b, int err)
{
	uint8_t buf[BOOT_HDR_LEN];
	struct boot_hdr h;
	int ret;

	if (recv(b->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_WAITALL) !=
	    sizeof(buf))
		return err;
	ret = boot_check(b, buf, b->rank, BOOT_DATA, &h);
	return ret && h.status ? ret : err;
}

static int rank_allgather(struct r2cc_boot *b, const void *mine, size_t len,
			  void *all, int64_t deadline)
{
	uint8_t buf[BOOT_HDR_LEN];
	struct boot_hdr h;
	int ret, cut;

	boot_pack(buf, BOOT_DATA, b->rank, b->size, b->seq, len, BOOT_OK);
	ret = send_all(b->fd, buf, sizeof(buf), deadline, true);
	if (!ret)
		ret = send_all(b->fd, mine, len, deadline, true);
	if (ret < 0) {
		if (ret != -ETIMEDOUT)
			ret = rank_why(b, ret);
		goto out;
	}
	cut = ret;		/* the root spoke before it had our data */
	ret = recv_all(b->fd, buf, sizeof(buf), deadline);
	if (!ret)
		ret = boot_check(b, buf, b->rank, BOOT_DATA, &h);
	if (!ret && (cut || h.len != len))
		ret = -EPROTO;
	if (!ret)
		ret = recv_all(b->fd, all, b->size * len, deadline);
out:
	if (ret)
		shutdown(b->fd, SHUT_RDWR);	/* so the root hears at once */
	return ret;
}

R2CC_EXPORT int r2cc_boot_allgather(struct r2cc_boot *boot, const void *mine,
				    size_t len, void *all)
{
	int64_t deadline;
	int ret;

	if (!boot || len > BOOT_MAX_LEN || (len && (!mine || !all)) ||
	    len > SIZE_MAX / boot->size)
		return -EINVAL;
	if (boot->err)
		return boot->err;
	if (boot->size == 1) {
		if (len)
			memmove(all, mine, len);
		return 0;
	}
	deadline = now_ms() + boot->timeout_ms;
	if (boot->rank) {
		ret = rank_allgather(boot, mine, len, all, deadline);
	} else {
		if (len)
			memmove(all, mine, len);
		ret = root_allgather(boot, len, all, deadline);
	}
	boot->seq++;
	boot->err = ret;
	return ret;
}

R2CC_EXPORT int r2cc_boot_barrier(struct r2cc_boot *boot)
{
	return r2cc_boot_allgather(boot, NULL, 0, NULL);
}

R2CC_EXPORT void r2cc_boot_destroy(struct r2cc_boot *boot)
{
	if (boot)
		boot_free(boot);
}
