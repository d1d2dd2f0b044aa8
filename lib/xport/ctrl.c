// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The out-of-band control channel: framed messages over a non-blocking TCP
 * socket, buffered both ways so that nothing in the library ever blocks on
 * it, and the choice of the interface it runs on.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xport/ctrl.h"

void ctrl_init(struct ctrl *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
}

void ctrl_close(struct ctrl *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->out);
	free(c->in);
	c->out = c->in = NULL;
	c->out_len = c->out_cap = c->out_off = 0;
	c->in_len = c->in_cap = 0;
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	uint8_t *p;

	while (n < need)
		n *= 2;
	if (n == *cap)
		return 0;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

/* Queue one message made of @a then @b; written out by ctrl_flush(). */
int ctrl_send(struct ctrl *c, uint16_t type, const void *a, size_t alen,
	      const void *b, size_t blen)
{
	struct wire_hdr h = { .len = (uint32_t)(alen + blen), .type = type };
	size_t need;

	if (c->err)
		return c->err;
	if (alen + blen > WIRE_MAX_MSG)
		return -EMSGSIZE;
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
	} else if (c->out_off >= c->out_len / 2) {
		/* Slide the unsent tail down rather than grow for ever. */
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	need = c->out_len + sizeof(h) + alen + blen;
	if (grow(&c->out, &c->out_cap, need))
		return -ENOMEM;
	memcpy(c->out + c->out_len, &h, sizeof(h));
	if (alen)
		memcpy(c->out + c->out_len + sizeof(h), a, alen);
	if (blen)
		memcpy(c->out + c->out_len + sizeof(h) + alen, b, blen);
	c->out_len = need;
	return ctrl_flush(c);
}

/* Write what the socket takes now.  Returns bytes still queued, or -errno. */
int ctrl_flush(struct ctrl *c)
{
	while (!c->err && c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			/*
			 * Writing after the peer closed is the close a read
			 * reports as -ECONNRESET: one error for a peer gone.
			 */
			c->err = errno == EPIPE ? -ECONNRESET : -errno;
			break;
		}
		c->out_off += (size_t)n;
	}
	if (c->err)
		return c->err;
	return (int)(c->out_len - c->out_off > (1u << 30) ?
		     1u << 30 : c->out_len - c->out_off);
}

static int fill(struct ctrl *c, size_t want)
{
	while (c->in_len < want) {
		ssize_t n = recv(c->fd, c->in + c->in_len, want - c->in_len,
				 MSG_DONTWAIT);

		if (n == 0) {
			c->err = -ECONNRESET;
			return c->err;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			c->err = -errno;
			return c->err;
		}
		c->in_len += (size_t)n;
	}
	return 1;
}

int ctrl_recv(struct ctrl *c)
{
	const struct wire_hdr *h;
	int ret;

	if (c->err)
		return c->err;
	if (grow(&c->in, &c->in_cap, sizeof(*h)))
		return -ENOMEM;
	ret = fill(c, sizeof(*h));
	if (ret <= 0)
		return ret;
	h = (const void *)c->in;
	if (h->len > WIRE_MAX_MSG || !h->type || h->type >= W_TYPE_MAX ||
	    h->reserved) {
		c->err = -EPROTO;
		return c->err;
	}
	if (grow(&c->in, &c->in_cap, sizeof(*h) + h->len))
		return -ENOMEM;
	h = (const void *)c->in;
	return fill(c, sizeof(*h) + h->len);
}

void ctrl_consumed(struct ctrl *c)
{
	c->in_len = 0;
}

/*
 * A peer that vanishes (power off, cable) must fail the connection in
 * bounded time, not after TCP's default of many minutes.
 */
void ctrl_keepalive(int fd, uint32_t timeout_ms)
{
	int one = 1, idle = 1, cnt = (int)(timeout_ms / 1000);
	unsigned int ut = timeout_ms;

	if (cnt < 1)
		cnt = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
}

static bool under_nic(const struct r2cc_ctx *ctx, const char *ifname)
{
	int i;

	for (i = 0; i < ctx->nnics; i++)
		if (!strcmp(ctx->nics[i].info.netdev, ifname))
			return true;
	return false;
}

/*
 * The IPv4 address to listen on: the first interface matching the
 * configured prefix, else the first that is up, not loopback and not a NIC
 * in use (a rail must not carry the channel that reports its failure),
 * else loopback.  Returns 0 with a sockaddr_in, or -ENODEV.
 */
int ctrl_addr(struct r2cc_ctx *ctx, void *sa, unsigned int *salen)
{
	const char *want = ctx->tune.ctrl_ifname;
	struct ifaddrs *ifa, *i;
	struct sockaddr_in *best = NULL, lo = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    !(i->ifa_flags & IFF_UP))
			continue;
		if (*want) {
			if (!strncmp(i->ifa_name, want, strlen(want))) {
				best = (void *)i->ifa_addr;
				break;
			}
			continue;
		}
		if (i->ifa_flags & IFF_LOOPBACK || under_nic(ctx, i->ifa_name))
			continue;
		best = (void *)i->ifa_addr;
		break;
	}
	if (!best && *want) {
		freeifaddrs(ifa);
		log_msg(ctx, R2CC_LOG_ERROR,
			"no IPv4 interface up matching '%s'", want);
		return -ENODEV;
	}
	memcpy(sa, best ? best : &lo, sizeof(lo));
	((struct sockaddr_in *)sa)->sin_port = 0;
	*salen = sizeof(lo);
	freeifaddrs(ifa);
	return 0;
}
