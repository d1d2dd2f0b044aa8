// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc-tb-hub: the Ethernet switch of one testbed rail.
 *
 * Each node's NIC k is a QEMU "-netdev stream" that connects to one unix
 * socket of rail k's hub; frames travel as a 4-byte big-endian length and the
 * frame.  The hub learns source MACs and forwards like a switch, so NIC k of
 * every node shares one L2 segment and no host interface is involved.
 *
 * Faults that must leave the guest's carrier up are made here: a black-holed
 * port silently loses every frame it sends or should receive.  A control
 * socket takes one text command per line:
 *
 *	blackhole PORT on|off	->  "ok" or "error: ..."
 *	stats			->  "PORT rx tx drop blackholed" lines, then "."
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_PORTS	16
#define MAX_FRAME	69632
#define TXQ_LIMIT	(1u << 20)	/* bytes queued per port before drops */
#define MAC_SLOTS	256

struct port {
	char name[32];
	char path[108];
	int lfd;		/* listening socket */
	int fd;			/* connected QEMU, or -1 */
	uint8_t rx[4 + MAX_FRAME];
	size_t rx_len;
	uint8_t *tx;
	size_t tx_len, tx_cap;
	int blackhole;
	uint64_t rx_frames, tx_frames, drops, holed;
};

struct mac_entry {
	uint8_t mac[6];
	int port;		/* -1: free */
};

static struct port ports[MAX_PORTS];
static int nports;
static struct mac_entry macs[MAC_SLOTS];
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "r2cc-tb-hub: socket path too long: %s\n",
			path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 4)) {
		fprintf(stderr, "r2cc-tb-hub: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int mac_lookup(const uint8_t *mac)
{
	for (int i = 0; i < MAC_SLOTS; i++)
		if (macs[i].port >= 0 && !memcmp(macs[i].mac, mac, 6))
			return macs[i].port;
	return -1;
}

static void mac_learn(const uint8_t *mac, int port)
{
	int free_slot = -1;

	if (mac[0] & 1)		/* never learn a group address */
		return;
	for (int i = 0; i < MAC_SLOTS; i++) {
		if (macs[i].port >= 0 && !memcmp(macs[i].mac, mac, 6)) {
			macs[i].port = port;
			return;
		}
		if (macs[i].port < 0 && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		free_slot = mac[5] % MAC_SLOTS;	/* full: evict one */
	memcpy(macs[free_slot].mac, mac, 6);
	macs[free_slot].port = port;
}

static void mac_forget_port(int port)
{
	for (int i = 0; i < MAC_SLOTS; i++)
		if (macs[i].port == port)
			macs[i].port = -1;
}

static void port_disconnect(int p)
{
	close(ports[p].fd);
	ports[p].fd = -1;
	ports[p].rx_len = 0;
	ports[p].tx_len = 0;
	mac_forget_port(p);
}

/* Flush as much of the queue as the socket takes without blocking. */
static void port_flush(int p)
{
	struct port *pt = &ports[p];

	while (pt->tx_len) {
		ssize_t n = send(pt->fd, pt->tx, pt->tx_len,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				port_disconnect(p);
			return;
		}
		memmove(pt->tx, pt->tx + n, pt->tx_len - (size_t)n);
		pt->tx_len -= (size_t)n;
	}
}

/* Queue one length-prefixed frame; a full queue drops it, as a switch would. */
static void port_send(int p, const uint8_t *msg, size_t len)
{
	struct port *pt = &ports[p];

	if (pt->fd < 0)
		return;
	if (pt->blackhole) {
		pt->holed++;
		return;
	}
	if (pt->tx_len + len > TXQ_LIMIT) {
		pt->drops++;
		return;
	}
	if (pt->tx_len + len > pt->tx_cap) {
		size_t cap = pt->tx_cap ? pt->tx_cap : 65536;
		uint8_t *nb;

		while (cap < pt->tx_len + len)
			cap *= 2;
		nb = realloc(pt->tx, cap);
		if (!nb) {
			pt->drops++;
			return;
		}
		pt->tx = nb;
		pt->tx_cap = cap;
	}
	memcpy(pt->tx + pt->tx_len, msg, len);
	pt->tx_len += len;
	pt->tx_frames++;
	port_flush(p);
}

static void switch_frame(int in, const uint8_t *msg, size_t len)
{
	const uint8_t *eth = msg + 4;
	int out;

	if (ports[in].blackhole) {
		ports[in].holed++;
		return;
	}
	if (len < 4 + 14)
		return;
	mac_learn(eth + 6, in);
	out = (eth[0] & 1) ? -1 : mac_lookup(eth);
	if (out == in)
		return;
	if (out >= 0) {
		port_send(out, msg, len);
		return;
	}
	for (int p = 0; p < nports; p++)
		if (p != in)
			port_send(p, msg, len);
}

static void port_receive(int p)
{
	struct port *pt = &ports[p];

	for (;;) {
		ssize_t n = recv(pt->fd, pt->rx + pt->rx_len,
				 sizeof(pt->rx) - pt->rx_len, MSG_DONTWAIT);
		size_t off = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			port_disconnect(p);
			return;
		}
		pt->rx_len += (size_t)n;
		while (pt->rx_len - off >= 4) {
			uint32_t flen;

			memcpy(&flen, pt->rx + off, 4);
			flen = ntohl(flen);
			if (flen > MAX_FRAME) {
				fprintf(stderr,
					"r2cc-tb-hub: %s: bad frame length %u\n",
					pt->name, flen);
				port_disconnect(p);
				return;
			}
			if (pt->rx_len - off < 4 + (size_t)flen)
				break;
			pt->rx_frames++;
			switch_frame(p, pt->rx + off, 4 + (size_t)flen);
			if (pt->fd < 0)
				return;
			off += 4 + flen;
		}
		memmove(pt->rx, pt->rx + off, pt->rx_len - off);
		pt->rx_len -= off;
	}
}

static void control(int cfd)
{
	char line[256], reply[4096], name[64], onoff[8];
	ssize_t n = recv(cfd, line, sizeof(line) - 1, 0);
	size_t len = 0;
	int p;

	if (n <= 0)
		return;
	line[n] = '\0';
	line[strcspn(line, "\r\n")] = '\0';

	if (sscanf(line, "blackhole %63s %7s", name, onoff) == 2) {
		for (p = 0; p < nports; p++)
			if (!strcmp(ports[p].name, name))
				break;
		if (p == nports)
			len = (size_t)snprintf(reply, sizeof(reply),
					       "error: no port %s\n", name);
		else if (strcmp(onoff, "on") && strcmp(onoff, "off"))
			len = (size_t)snprintf(reply, sizeof(reply),
					       "error: want on or off\n");
		else {
			ports[p].blackhole = !strcmp(onoff, "on");
			len = (size_t)snprintf(reply, sizeof(reply), "ok\n");
		}
	} else if (!strcmp(line, "stats")) {
		for (p = 0; p < nports && len < sizeof(reply) - 128; p++)
			len += (size_t)snprintf(reply + len, sizeof(reply) - len,
				"%s %llu %llu %llu %llu %d\n", ports[p].name,
				(unsigned long long)ports[p].rx_frames,
				(unsigned long long)ports[p].tx_frames,
				(unsigned long long)ports[p].drops,
				(unsigned long long)ports[p].holed,
				ports[p].blackhole);
		len += (size_t)snprintf(reply + len, sizeof(reply) - len,
					".\n");
	} else {
		len = (size_t)snprintf(reply, sizeof(reply),
				       "error: unknown command\n");
	}
	if (send(cfd, reply, len, MSG_NOSIGNAL) < 0)
		return;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: r2cc-tb-hub --ctl PATH NAME=SOCKET_PATH...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *ctl_path = NULL;
	int ctl_fd, i;

	for (i = 1; i < argc; i++) {
		char *eq;

		if (!strcmp(argv[i], "--ctl") && i + 1 < argc) {
			ctl_path = argv[++i];
			continue;
		}
		eq = strchr(argv[i], '=');
		if (!eq || eq == argv[i] || (size_t)(eq - argv[i]) >= 32 ||
		    nports == MAX_PORTS)
			usage();
		memcpy(ports[nports].name, argv[i], (size_t)(eq - argv[i]));
		snprintf(ports[nports].path, sizeof(ports[nports].path), "%s",
			 eq + 1);
		ports[nports].fd = -1;
		nports++;
	}
	if (!ctl_path || !nports)
		usage();
	for (i = 0; i < MAC_SLOTS; i++)
		macs[i].port = -1;

	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);

	/*
	 * Ports first, the control socket last: once it answers, every port
	 * is listening (a path exists from bind(), before listen()).
	 */
	for (i = 0; i < nports; i++) {
		ports[i].lfd = listen_unix(ports[i].path);
		if (ports[i].lfd < 0)
			return 1;
	}
	ctl_fd = listen_unix(ctl_path);
	if (ctl_fd < 0)
		return 1;

	while (!stop) {
		struct pollfd pfd[1 + 2 * MAX_PORTS];
		int n = 0;

		pfd[n++] = (struct pollfd){ .fd = ctl_fd, .events = POLLIN };
		for (i = 0; i < nports; i++) {
			short ev = POLLIN;

			pfd[n++] = (struct pollfd){ .fd = ports[i].lfd,
						    .events = POLLIN };
			if (ports[i].tx_len)
				ev |= POLLOUT;
			pfd[n++] = (struct pollfd){ .fd = ports[i].fd,
						    .events = ev };
		}
		if (poll(pfd, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents & POLLIN) {
			int c = accept4(ctl_fd, NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0) {
				control(c);
				close(c);
			}
		}
		for (i = 0; i < nports; i++) {
			struct pollfd *l = &pfd[1 + 2 * i], *c = l + 1;

			if (c->fd >= 0 && (c->revents & POLLOUT))
				port_flush(i);
			if (c->fd >= 0 && ports[i].fd == c->fd &&
			    (c->revents & (POLLIN | POLLHUP | POLLERR)))
				port_receive(i);
			if (l->revents & POLLIN) {
				int fd = accept4(ports[i].lfd, NULL, NULL,
						 SOCK_CLOEXEC | SOCK_NONBLOCK);

				if (fd < 0)
					continue;
				/* A reconnecting node replaces its old link. */
				if (ports[i].fd >= 0)
					port_disconnect(i);
				ports[i].fd = fd;
			}
		}
	}

	unlink(ctl_path);
	for (i = 0; i < nports; i++)
		unlink(ports[i].path);
	return 0;
}
