// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc-tb-agent: runs commands inside a testbed node for the host.
 *
 * It is PID 1 of the guest once the node is set up, so besides accepting
 * connections it reaps every orphan.  Each connection is served by its own
 * forked session process (see tb_proto.h for the frames), so a crash or a
 * slow command never takes the agent down and several commands run at once.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tb_proto.h"

#define MAX_ARGS 1024

struct session {
	int sock;
	char *argv[MAX_ARGS + 1];
	char *argbuf;
	char *cwd;
	int in_fd;	/* our end of the command's stdin, -1 once closed */
	pid_t pid;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_frame(int sock, uint8_t type, const void *data, uint32_t len)
{
	uint8_t hdr[TB_HDR_LEN];
	uint32_t be = htonl(len);
	int ret;

	hdr[0] = type;
	memcpy(hdr + 1, &be, sizeof(be));
	ret = write_all(sock, hdr, sizeof(hdr));
	if (!ret && len)
		ret = write_all(sock, data, len);
	return ret;
}

static void send_exit(int sock, uint32_t code)
{
	uint32_t be = htonl(code);

	send_frame(sock, TB_EXIT, &be, sizeof(be));
}

static void __attribute__((noreturn, format(printf, 2, 3)))
session_fail(int sock, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	send_frame(sock, TB_ERROR, msg, (uint32_t)n);
	send_exit(sock, 255);
	_exit(1);
}

/* Read one frame; the payload is malloc'ed and NUL-terminated. */
static int recv_frame(int sock, uint8_t *type, char **data, uint32_t *len)
{
	uint8_t hdr[TB_HDR_LEN];
	uint32_t be;
	int ret;

	ret = read_all(sock, hdr, sizeof(hdr));
	if (ret)
		return ret;
	memcpy(&be, hdr + 1, sizeof(be));
	*type = hdr[0];
	*len = ntohl(be);
	if (*len > TB_MAX_FRAME)
		return -EMSGSIZE;
	*data = malloc(*len + 1);
	if (!*data)
		return -ENOMEM;
	ret = read_all(sock, *data, *len);
	if (ret) {
		free(*data);
		return ret;
	}
	(*data)[*len] = '\0';
	return 0;
}

static void parse_argv(struct session *s, char *buf, uint32_t len)
{
	uint32_t off = 0;
	int argc = 0;

	if (!len || buf[len - 1] != '\0')
		session_fail(s->sock, "argv frame is not NUL-terminated");
	while (off < len) {
		if (argc == MAX_ARGS)
			session_fail(s->sock, "more than %d arguments", MAX_ARGS);
		s->argv[argc++] = buf + off;
		off += (uint32_t)strlen(buf + off) + 1;
	}
	s->argv[argc] = NULL;
	s->argbuf = buf;
}

static void start_command(struct session *s, int *out_fd, int *err_fd)
{
	int in[2], out[2], err[2];
	sigset_t none;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) ||
	    pipe2(err, O_CLOEXEC))
		session_fail(s->sock, "pipe: %s", strerror(errno));

	s->pid = fork();
	if (s->pid < 0)
		session_fail(s->sock, "fork: %s", strerror(errno));
	if (s->pid == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		setsid();
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		if (!s->cwd || chdir(s->cwd))
			if (chdir("/"))
				_exit(126);
		execvp(s->argv[0], s->argv);
		dprintf(2, "r2cc-tb-agent: %s: %s\n", s->argv[0],
			strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	s->in_fd = in[1];
	*out_fd = out[0];
	*err_fd = err[0];
}

/* Handle one host frame once the command runs; returns false on EOF. */
static int host_frame(struct session *s)
{
	uint32_t len;
	uint8_t type;
	char *data;

	if (recv_frame(s->sock, &type, &data, &len))
		return 0;
	if (type == TB_STDIN && s->in_fd >= 0) {
		if (write_all(s->in_fd, data, len)) {
			close(s->in_fd);
			s->in_fd = -1;
		}
	} else if (type == TB_STDIN_EOF && s->in_fd >= 0) {
		close(s->in_fd);
		s->in_fd = -1;
	}
	free(data);
	return 1;
}

static int forward(int sock, int fd, uint8_t type)
{
	char buf[16384];
	ssize_t n;

	n = read(fd, buf, sizeof(buf));
	if (n < 0 && errno == EINTR)
		return 1;
	if (n <= 0)
		return 0;
	return send_frame(sock, type, buf, (uint32_t)n) == 0;
}

static void __attribute__((noreturn)) session_run(int sock)
{
	struct session s = { .sock = sock, .in_fd = -1, .pid = -1 };
	int out_fd = -1, err_fd = -1, sfd, status = 0, exited = 0;
	struct timeval setup_timeout = { .tv_sec = 30 }, no_timeout = { 0 };
	struct pollfd pfd[4];
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC);
	if (sfd < 0)
		session_fail(sock, "signalfd: %s", strerror(errno));

	/*
	 * Setup phase: argv, cwd, then the first stdin frame starts it.  A
	 * client that stalls in the middle of it is dropped.
	 */
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &setup_timeout,
		   sizeof(setup_timeout));
	for (;;) {
		uint32_t len;
		uint8_t type;
		char *data;

		if (recv_frame(sock, &type, &data, &len))
			_exit(1);
		if (type == TB_ARGV) {
			parse_argv(&s, data, len);
		} else if (type == TB_CWD) {
			s.cwd = data;
		} else if (type == TB_STDIN || type == TB_STDIN_EOF) {
			if (!s.argbuf)
				session_fail(sock, "no command given");
			start_command(&s, &out_fd, &err_fd);
			if (type == TB_STDIN_EOF) {
				close(s.in_fd);
				s.in_fd = -1;
			} else if (write_all(s.in_fd, data, len)) {
				close(s.in_fd);
				s.in_fd = -1;
			}
			free(data);
			setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &no_timeout,
				   sizeof(no_timeout));
			break;
		} else {
			session_fail(sock, "unexpected frame type 0x%02x",
				     type);
		}
	}

	/*
	 * Forward output until both pipes close.  Once the command itself has
	 * exited, stop waiting for descendants that still hold the pipes
	 * (a daemon started with '&'): drain what is there and report.
	 */
	while (out_fd >= 0 || err_fd >= 0) {
		int n = 0, i_sock, i_out = -1, i_err = -1, i_sig, ret;

		i_sock = n;
		pfd[n++] = (struct pollfd){ .fd = sock, .events = POLLIN };
		if (out_fd >= 0) {
			i_out = n;
			pfd[n++] = (struct pollfd){ .fd = out_fd,
						    .events = POLLIN };
		}
		if (err_fd >= 0) {
			i_err = n;
			pfd[n++] = (struct pollfd){ .fd = err_fd,
						    .events = POLLIN };
		}
		i_sig = n;
		pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };

		ret = poll(pfd, (nfds_t)n, exited ? 100 : -1);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			break;
		if (ret == 0)	/* exited and nothing more within 100 ms */
			break;
		if (pfd[i_sock].revents && !host_frame(&s)) {
			/* The host went away: take the command down too. */
			kill(-s.pid, SIGKILL);
			_exit(0);
		}
		if (i_out >= 0 && pfd[i_out].revents &&
		    !forward(sock, out_fd, TB_STDOUT)) {
			close(out_fd);
			out_fd = -1;
		}
		if (i_err >= 0 && pfd[i_err].revents &&
		    !forward(sock, err_fd, TB_STDERR)) {
			close(err_fd);
			err_fd = -1;
		}
		if (pfd[i_sig].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) < 0 && errno != EAGAIN)
				break;
			if (!exited && waitpid(s.pid, &status, WNOHANG) > 0)
				exited = 1;
		}
	}
	if (!exited && waitpid(s.pid, &status, 0) < 0)
		status = 0xff00;
	if (WIFSIGNALED(status))
		send_exit(sock, 128 + (uint32_t)WTERMSIG(status));
	else
		send_exit(sock, (uint32_t)WEXITSTATUS(status));
	_exit(0);
}

static int listen_on(struct in_addr addr, int port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr = addr,
	};
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr, "usage: r2cc-tb-agent [--addr IPV4] [--port PORT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct in_addr addr = { .s_addr = htonl(INADDR_ANY) };
	int port = TB_AGENT_PORT, lfd, sfd, i;
	sigset_t chld;

	for (i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			port = (int)strtol(argv[++i], &end, 10);
			if (*end || port <= 0 || port > 65535)
				usage();
		} else if (!strcmp(argv[i], "--addr") && i + 1 < argc) {
			if (inet_pton(AF_INET, argv[++i], &addr) != 1)
				usage();
		} else {
			usage();
		}
	}

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);

	/* As PID 1 we must never exit: retry until the network is there. */
	while ((lfd = listen_on(addr, port)) < 0) {
		fprintf(stderr, "r2cc-tb-agent: listen: %s\n", strerror(errno));
		if (getpid() != 1)
			return 1;
		sleep(1);
	}
	fprintf(stderr, "r2cc-tb-agent: listening on port %d\n", port);

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = lfd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		int one = 1;

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			sleep(1);
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) > 0)
				;
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
		}
		if (pfd[0].revents) {
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			pid_t pid;

			if (c < 0)
				continue;
			setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			pid = fork();
			if (pid == 0) {
				close(lfd);
				close(sfd);
				session_run(c);
			}
			close(c);
		}
	}
}
