// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NCCL net plugin as NCCL sees it: dlopen()ed by the name NCCL asks
 * for, each of the tables ncclNetPlugin_v8 .. _v12 taken by its symbol and
 * called through abi.h's layouts only (the forged handles alone copy a
 * layout from comm.c).
 *
 * Per version, misuse gets a clear error and never a crash: NULL for every
 * pointer, device indices out of range, garbage handles and one forged
 * with the plugin's magic but a stage pointer of nothing, a registration
 * type NCCL never passes, receive counts of 0 and 9, virtual devices of
 * no, too many, unknown or repeated devices, finalize twice.  Where init
 * finds an RDMA device (the testbed), also: the properties NCCL sizes its
 * buffers and topology from, a virtual device fusing devices 0 and 1, and
 * one process connected to itself on device 0 carrying messages of 1 B to
 * 1 MiB, a grouped receive matched by tag, the 32 request slots of a
 * receive comm, and a close with receives in flight (deregMr first, as
 * NCCL's teardown does, which closes the comm's connection).  Where init
 * finds no device (a host without RDMA), it must fail cleanly and the rest
 * is skipped.
 *
 * The plugin is R2CC_NCCL_PLUGIN when that is set, else whatever the
 * dynamic loader finds as libnccl-net-r2cc.so (LD_LIBRARY_PATH), which is
 * what NCCL_NET_PLUGIN=r2cc makes NCCL open.  Exit 4 (skip) when it cannot
 * be loaded.  The plugin's log goes to stderr through an NCCL-style logger
 * (NCCL_DEBUG, default INFO here).
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <r2cc/r2cc.h>

#include "abi.h"
#include "tap.h"
#include "xorshift.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define TIMEOUT_S	20.0
#define BUF_SIZE	(2u << 20)

/*
 * comm.c's struct nn_handle, what listen writes into NCCL's handle: the
 * magic, the device, libr2cc's handle, then the connector's stage (its
 * comm in progress, as a pointer).  Only the forged-handle checks use it.
 */
#define HANDLE_MAGIC		0x6e326363u
#define HANDLE_STAGE_OFF	(8 + R2CC_HANDLE_SIZE)

static int ver;				/* the table under test */
static const struct nn_net_v8 *n8;
static const struct nn_net_v9 *n9;
static const struct nn_net_v10 *n10;
static const struct nn_net_v11 *n11;
static const struct nn_net_v12 *n12;
static void *nctx;			/* v11+: what init gave */
static int nphys = -1;			/* before any virtual device */
static int log_max = NN_LOG_INFO;
static unsigned int nwarn;		/* WARN lines the plugin logged */
static uint64_t rng;
static uint8_t *sbuf, *rbuf;

/* ------------------------------------------------------------ TAP */

static const char *rname(nn_result_t r)
{
	static const char *const n[] = {
		"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError",
		"ncclInternalError", "ncclInvalidArgument",
		"ncclInvalidUsage", "ncclRemoteError", "ncclInProgress",
	};

	return (unsigned int)r < ARRAY_SIZE(n) ? n[r] : "(not an ncclResult_t)";
}

static void __attribute__((format(printf, 2, 3)))
check(int cond, const char *fmt, ...)
{
	char d[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d, sizeof(d), fmt, ap);
	va_end(ap);
	tap_ok(cond, "v%d %s", ver, d);
}

/* @got is @want; the description names @want. */
static void __attribute__((format(printf, 3, 4)))
is(nn_result_t got, nn_result_t want, const char *fmt, ...)
{
	char d[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d, sizeof(d), fmt, ap);
	va_end(ap);
	tap_ok(got == want, "v%d %s: %s", ver, d, rname(want));
	if (got != want)
		tap_diag("returned %s (%d)", rname(got), (int)got);
}

static void __attribute__((format(printf, 2, 3)))
skip(const char *why, const char *fmt, ...)
{
	char d[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d, sizeof(d), fmt, ap);
	va_end(ap);
	tap_run++;
	printf("ok %u - v%d %s # SKIP %s\n", tap_run, ver, d, why);
}

/* ------------------------------------------------------------ NCCL's side */

static void __attribute__((format(printf, 5, 6)))
nccl_log(enum nn_log_level level, unsigned long flags, const char *file,
	 int line, const char *fmt, ...)
{
	static const char *const names[] = {
		"NONE", "VERSION", "WARN", "INFO", "ABORT", "TRACE",
	};
	char msg[1024];
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	if (level == NN_LOG_WARN)
		nwarn++;
	if ((int)level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "NCCL %s %s\n",
		(unsigned int)level < ARRAY_SIZE(names) ? names[level] : "?",
		msg);
}

static nn_result_t prof(void **h, int type, void *ph, int64_t id, void *ext)
{
	(void)type;
	(void)ph;
	(void)id;
	(void)ext;
	if (h)
		*h = NULL;
	return NN_SUCCESS;
}

/* NCCL_DEBUG as NCCL reads it; INFO when unset, so the plugin's log shows. */
static void log_from_env(void)
{
	static const char *const names[] = {
		"NONE", "VERSION", "WARN", "INFO", "ABORT", "TRACE",
	};
	const char *v;
	unsigned int i;

	setenv("NCCL_DEBUG", "INFO", 0);
	v = getenv("NCCL_DEBUG");
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcasecmp(v, names[i]))
			log_max = (int)i;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rnd(void)
{
	return xorshift64(&rng);
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

static bool filled(const uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed * 131u + i * 7u + (i >> 8)))
			return false;
	return true;
}

static bool zero(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* ------------------------------------------------------------ the tables */

/* A member every version has, with the same arguments. */
#define SAME(m, ...)							\
	(ver == 8 ? n8->m(__VA_ARGS__) :				\
	 ver == 9 ? n9->m(__VA_ARGS__) :				\
	 ver == 10 ? n10->m(__VA_ARGS__) :				\
	 ver == 11 ? n11->m(__VA_ARGS__) : n12->m(__VA_ARGS__))

static const char *net_name(void)
{
	switch (ver) {
	case 8: return n8->name;
	case 9: return n9->name;
	case 10: return n10->name;
	case 11: return n11->name;
	default: return n12->name;
	}
}

static const void *table(void)
{
	switch (ver) {
	case 8: return n8;
	case 9: return n9;
	case 10: return n10;
	case 11: return n11;
	default: return n12;
	}
}

static size_t table_size(void)
{
	switch (ver) {
	case 8: return sizeof(*n8);
	case 9: return sizeof(*n9);
	case 10: return sizeof(*n10);
	case 11: return sizeof(*n11);
	default: return sizeof(*n12);
	}
}

/* v11+ init with @ctx (NULL for the misuse check); earlier ones ignore it. */
static nn_result_t net_init(void **ctx)
{
	struct nn_comm_config cfg = { .traffic_class = -1 };

	switch (ver) {
	case 8: return n8->init(nccl_log);
	case 9: return n9->init(nccl_log);
	case 10: return n10->init(nccl_log, prof);
	case 11: return n11->init(ctx, 0x5eed, &cfg, nccl_log, prof);
	default: return n12->init(ctx, 0x5eed, &cfg, nccl_log, prof);
	}
}

static nn_result_t net_listen(int dev, void *handle, void **lc)
{
	switch (ver) {
	case 8: return n8->listen(dev, handle, lc);
	case 9: return n9->listen(dev, handle, lc);
	case 10: return n10->listen(dev, handle, lc);
	case 11: return n11->listen(nctx, dev, handle, lc);
	default: return n12->listen(nctx, dev, handle, lc);
	}
}

static nn_result_t net_connect(int dev, void *handle, void **sc)
{
	struct nn_comm_config cfg = { .traffic_class = -1 };
	struct nn_dev_handle *sdev = NULL;	/* no offload asked for */

	switch (ver) {
	case 8: return n8->connect(dev, handle, sc, &sdev);
	case 9: return n9->connect(dev, handle, sc, &sdev);
	case 10: return n10->connect(dev, &cfg, handle, sc, &sdev);
	case 11: return n11->connect(nctx, dev, handle, sc, &sdev);
	default: return n12->connect(nctx, dev, handle, sc, &sdev);
	}
}

static nn_result_t net_accept(void *lc, void **rc)
{
	struct nn_dev_handle *rdev = NULL;

	return SAME(accept, lc, rc, &rdev);
}

static nn_result_t net_isend(void *sc, void *data, size_t size, int tag,
			     void *mh, void **req)
{
	switch (ver) {
	case 8: return n8->isend(sc, data, (int)size, tag, mh, req);
	case 9: return n9->isend(sc, data, size, tag, mh, req);
	case 10: return n10->isend(sc, data, size, tag, mh, NULL, req);
	case 11: return n11->isend(sc, data, size, tag, mh, NULL, req);
	default: return n12->isend(sc, data, size, tag, mh, NULL, req);
	}
}

/* @n may be up to 16, past what the plugin takes, for the misuse checks. */
static nn_result_t net_irecv(void *rc, int n, void **data,
			     const size_t *sizes, int *tags, void **mhs,
			     void **req)
{
	void *ph[16] = { NULL };
	size_t s[16] = { 0 };
	int is[16] = { 0 }, i;

	for (i = 0; i < n && i < 16; i++) {
		s[i] = sizes[i];
		is[i] = (int)sizes[i];
	}
	switch (ver) {
	case 8: return n8->irecv(rc, n, data, is, tags, mhs, req);
	case 9: return n9->irecv(rc, n, data, s, tags, mhs, req);
	case 10: return n10->irecv(rc, n, data, s, tags, mhs, ph, req);
	case 11: return n11->irecv(rc, n, data, s, tags, mhs, ph, req);
	default: return n12->irecv(rc, n, data, s, tags, mhs, ph, req);
	}
}

static nn_result_t net_irecv1(void *rc, void *data, size_t size, int tag,
			      void *mh, void **req)
{
	return net_irecv(rc, 1, &data, &size, &tag, &mh, req);
}

static nn_result_t net_test(void *req, int *done, int *sizes)
{
	return SAME(test, req, done, sizes);
}

/* v9+: a virtual device of @n devices (@n may exceed what the table holds). */
static nn_result_t net_vdev(int *d, int n, const int *list)
{
	struct nn_vprops_v12 v12 = { .ndevs = n };
	struct nn_vprops_v9 v9 = { .ndevs = n };
	int i;

	for (i = 0; i < NN_VDEV_MAX_V12 && i < n; i++) {
		v12.devs[i] = list[i];
		if (i < NN_VDEV_MAX_V9)
			v9.devs[i] = list[i];
	}
	switch (ver) {
	case 9: return n9->make_vdevice(d, &v9);
	case 10: return n10->make_vdevice(d, &v9);
	case 11: return n11->make_vdevice(d, &v9);
	default: return n12->make_vdevice(d, &v12);
	}
}

static int vdev_max(void)
{
	return ver == 12 ? NN_VDEV_MAX_V12 : NN_VDEV_MAX_V9;
}

static nn_result_t net_finalize(void *ctx)
{
	return ver == 11 ? n11->finalize(ctx) : n12->finalize(ctx);
}

/* ------------------------------------------------------------ properties */

/* Every version's properties, in one shape; -1 where a version has none. */
struct props {
	const char *name, *pci;
	uint64_t guid;
	int ptr, glob, flush, speed, port, comms, recvs, dtype;
	int vndevs, vdevs[NN_VDEV_MAX_V12];
	size_t p2p, coll;
	int multi, rail, plane;
};

#define PROPS_COMMON(p, q)						\
	do {								\
		(p)->name = (q)->name;					\
		(p)->pci = (q)->pci_path;				\
		(p)->guid = (q)->guid;					\
		(p)->ptr = (q)->ptr_support;				\
		(p)->glob = (q)->reg_is_global;				\
		(p)->speed = (q)->speed;				\
		(p)->port = (q)->port;					\
		(p)->comms = (q)->max_comms;				\
		(p)->recvs = (q)->max_recvs;				\
		(p)->dtype = (q)->net_device_type;			\
	} while (0)

#define PROPS_V9(p, q)							\
	do {								\
		(p)->flush = (q)->force_flush;				\
		(p)->vndevs = (q)->vprops.ndevs;			\
		memcpy((p)->vdevs, (q)->vprops.devs,			\
		       sizeof((q)->vprops.devs));			\
		(p)->p2p = (q)->max_p2p_bytes;				\
		(p)->coll = (q)->max_coll_bytes;			\
	} while (0)

/* getProperties through the table; @null passes NULL for the struct. */
static nn_result_t get_props(int dev, struct props *p, bool null)
{
	union {
		struct nn_props_v8 v8;
		struct nn_props_v9 v9;
		struct nn_props_v11 v11;
		struct nn_props_v12 v12;
	} u;
	nn_result_t r;

	/* What the plugin leaves unwritten shows as 0xa5. */
	memset(&u, 0xa5, sizeof(u));
	memset(p, 0, sizeof(*p));
	p->flush = p->vndevs = p->multi = p->rail = p->plane = -1;
	switch (ver) {
	case 8:
		r = n8->get_properties(dev, null ? NULL : &u.v8);
		if (!r && !null)
			PROPS_COMMON(p, &u.v8);
		break;
	case 9:
	case 10:
		r = ver == 9 ? n9->get_properties(dev, null ? NULL : &u.v9) :
			       n10->get_properties(dev, null ? NULL : &u.v9);
		if (!r && !null) {
			PROPS_COMMON(p, &u.v9);
			PROPS_V9(p, &u.v9);
		}
		break;
	case 11:
		r = n11->get_properties(dev, null ? NULL : &u.v11);
		if (!r && !null) {
			PROPS_COMMON(p, &u.v11);
			PROPS_V9(p, &u.v11);
			p->multi = u.v11.max_multi_request_size;
		}
		break;
	default:
		r = n12->get_properties(dev, null ? NULL : &u.v12);
		if (!r && !null) {
			PROPS_COMMON(p, &u.v12);
			PROPS_V9(p, &u.v12);
			p->multi = u.v12.max_multi_request_size;
			p->rail = u.v12.rail_id;
			p->plane = u.v12.plane_id;
		}
		break;
	}
	return r;
}

static void __attribute__((format(printf, 2, 3)))
add(char *bad, const char *fmt, ...)
{
	size_t len = strlen(bad);
	va_list ap;

	if (len + 2 >= 512)
		return;
	if (len)
		strcat(bad, "; ");
	va_start(ap, fmt);
	vsnprintf(bad + strlen(bad), 512 - strlen(bad), fmt, ap);
	va_end(ap);
}

/*
 * What NCCL builds on: a name for its logs, a speed for its topology, the
 * grouped-receive depth and pointer kinds for its protocols, and (v9+)
 * the physical devices behind it.  @ndevs/@devs: what vProps must say.
 */
static void check_props(int dev, int ndevs, const int *devs, int speed)
{
	struct props p;
	char bad[512] = "";
	nn_result_t r = get_props(dev, &p, false);
	int i;

	if (r) {
		is(r, NN_SUCCESS, "getProperties(%d)", dev);
		return;
	}
	if (!p.name || !p.name[0])
		add(bad, "name empty");
	/* NCCL's topology walks it: "" (none) or a device, resolved. */
	if (!p.pci)
		add(bad, "pciPath NULL");
	else if (p.pci[0] && strncmp(p.pci, "/sys/devices/", 13))
		add(bad, "pciPath %s is not a device under /sys/devices",
		    p.pci);
	if (p.speed <= 0 || (speed && p.speed != speed))
		add(bad, "speed %d, want %s%d", p.speed,
		    speed ? "" : "> ", speed);
	if (p.port < 1)
		add(bad, "port %d", p.port);
	if (p.recvs != R2CC_MAX_RECVS)
		add(bad, "maxRecvs %d, want %d", p.recvs, R2CC_MAX_RECVS);
	if (!(p.ptr & NN_PTR_HOST))
		add(bad, "ptrSupport %#x lacks NCCL_PTR_HOST", p.ptr);
	if (p.glob)
		add(bad, "regIsGlobal %d", p.glob);
	if (p.comms <= 0)
		add(bad, "maxComms %d", p.comms);
	if (p.dtype != NN_DEVICE_HOST)
		add(bad, "netDeviceType %d", p.dtype);
	if (ver >= 9) {
		if (p.flush)
			add(bad, "forceFlush %d", p.flush);
		if (p.vndevs != ndevs)
			add(bad, "vProps.ndevs %d, want %d", p.vndevs, ndevs);
		for (i = 0; i < ndevs && i < p.vndevs; i++)
			if (p.vdevs[i] != devs[i])
				add(bad, "vProps.devs[%d] %d, want %d", i,
				    p.vdevs[i], devs[i]);
		if (!p.p2p || !p.coll)
			add(bad, "maxP2pBytes %zu maxCollBytes %zu", p.p2p,
			    p.coll);
	}
	if (ver >= 11 && p.multi < 1)
		add(bad, "maxMultiRequestSize %d", p.multi);
	if (ver >= 12 && (p.rail != -1 || p.plane != -1))
		add(bad, "railId %d planeId %d, want -1 (undefined)", p.rail,
		    p.plane);
	check(!bad[0],
	      "getProperties(%d): %s, %s, %d Mbit/s, port %d, maxRecvs %d, ptrSupport %#x, regIsGlobal 0%s",
	      dev, p.name ? p.name : "(null)",
	      p.pci && p.pci[0] ? p.pci : "no PCI path", p.speed, p.port,
	      p.recvs, p.ptr,
	      ver >= 12 ? ", vProps, maxP2pBytes, railId/planeId -1" :
	      ver >= 9 ? ", vProps, maxP2pBytes" : "");
	if (bad[0])
		tap_diag("%s", bad);
}

/* ------------------------------------------------------------ misuse */

static void misuse_props(int ndev)
{
	struct props p;
	unsigned int w = nwarn;

	is(SAME(devices, NULL), NN_INVALID_ARGUMENT, "devices(NULL)");
	is(get_props(-1, &p, false), NN_INVALID_ARGUMENT, "getProperties(-1)");
	check(nwarn > w, "getProperties(-1) says why (a WARN line)");
	is(get_props(ndev, &p, false), NN_INVALID_ARGUMENT,
	   "getProperties(%d), one past the last device", ndev);
	is(get_props(1000, &p, false), NN_INVALID_ARGUMENT,
	   "getProperties(1000)");
	is(get_props(0, &p, true), NN_INVALID_ARGUMENT,
	   "getProperties(0, NULL)");
}

/* A handle with the plugin's magic and a stage pointing at @stage. */
static void forge(uint8_t *h, uint64_t stage)
{
	uint32_t magic = HANDLE_MAGIC;

	memcpy(h, &magic, sizeof(magic));
	memcpy(h + HANDLE_STAGE_OFF, &stage, sizeof(stage));
}

static void connect_fails(uint8_t *h, bool warns, const char *what)
{
	void *sc = &sc;
	unsigned int w = nwarn;
	nn_result_t r = net_connect(0, h, &sc);

	is(r, NN_INVALID_ARGUMENT, "connect with %s", what);
	check(!sc, "connect with %s leaves no send comm", what);
	if (warns)
		check(nwarn > w, "connect with %s says why (a WARN line)",
		      what);
}

static void misuse_comms(bool inited)
{
	uint8_t h[NN_HANDLE_MAXSIZE] = { 0 };
	void *p = &p, *req = &req, *mh = &mh;
	void *data[16] = { NULL }, *mhs[16] = { NULL };
	size_t sizes[16] = { 0 };
	int tags[16] = { 0 }, done = 0, isz[16] = { 0 };
	unsigned int i;

	is(net_listen(0, NULL, &p), NN_INVALID_ARGUMENT,
	   "listen with a NULL handle");
	is(net_listen(0, h, NULL), NN_INVALID_ARGUMENT,
	   "listen with a NULL listenComm");
	if (!inited) {
		p = &p;
		is(net_listen(0, h, &p), NN_INVALID_ARGUMENT,
		   "listen on device 0 with no device");
		check(!p, "listen with no device leaves no listen comm");
	}

	{
		void *sc = &sc;

		is(net_connect(0, NULL, &sc), NN_INVALID_ARGUMENT,
		   "connect with a NULL handle");
		check(!sc, "connect with a NULL handle leaves no send comm");
	}
	for (i = 0; i < sizeof(h); i++)
		h[i] = (uint8_t)rnd();
	if (h[0] == (HANDLE_MAGIC & 0xff))
		h[0] ^= 0xff;		/* garbage, not a lucky forgery */
	connect_fails(h, true, "a 128-byte handle of random bytes");
	memset(h, 0, sizeof(h));
	connect_fails(h, true, "a 128-byte handle of zeros");
	memset(h, 0, sizeof(h));
	forge(h, 0x5eed0000dead0ull);
	connect_fails(h, true,
		      "the plugin's magic and a garbage stage pointer");
	forge(h, (uintptr_t)&h);
	connect_fails(h, true,
		      "the plugin's magic and a stage pointing at the stack");
	memset(h, 0, sizeof(h));
	forge(h, 0);
	connect_fails(h, true,
		      "the plugin's magic, no stage, a zeroed libr2cc handle");

	p = &p;
	is(net_accept(NULL, &p), NN_INVALID_ARGUMENT, "accept(NULL)");
	check(!p, "accept(NULL) leaves no receive comm");
	is(SAME(close_listen, NULL), NN_INVALID_ARGUMENT, "closeListen(NULL)");
	is(SAME(close_send, NULL), NN_INVALID_ARGUMENT, "closeSend(NULL)");
	is(SAME(close_recv, NULL), NN_INVALID_ARGUMENT, "closeRecv(NULL)");

	is(net_isend(NULL, sbuf, 1, 0, NULL, &req), NN_INVALID_ARGUMENT,
	   "isend(NULL comm)");
	check(!req, "isend(NULL comm) leaves no request");
	req = &req;
	data[0] = rbuf;
	sizes[0] = 1;
	is(net_irecv(NULL, 1, data, sizes, tags, mhs, &req),
	   NN_INVALID_ARGUMENT, "irecv(NULL comm)");
	check(!req, "irecv(NULL comm) leaves no request");
	is(net_irecv(NULL, 0, data, sizes, tags, mhs, &req),
	   NN_INVALID_ARGUMENT, "irecv(NULL comm, n 0)");
	is(net_irecv(NULL, 9, data, sizes, tags, mhs, &req),
	   NN_INVALID_ARGUMENT, "irecv(NULL comm, n 9)");
	is(net_test(NULL, &done, isz), NN_INVALID_ARGUMENT, "test(NULL)");
	is(SAME(iflush, NULL, 1, data, isz, mhs, &req), NN_INVALID_ARGUMENT,
	   "iflush(NULL comm)");

	is(SAME(reg_mr, NULL, sbuf, 4096, NN_PTR_HOST, &mh),
	   NN_INVALID_ARGUMENT, "regMr(NULL comm)");
	check(!mh, "regMr(NULL comm) leaves no handle");
	is(SAME(reg_mr, NULL, sbuf, 4096, 8, &mh), NN_INVALID_ARGUMENT,
	   "regMr(NULL comm, type 8)");
	is(SAME(reg_mr_dmabuf, NULL, sbuf, 4096, NN_PTR_HOST, 0, -1, &mh),
	   NN_INVALID_ARGUMENT, "regMrDmaBuf(NULL comm, fd -1)");
	is(SAME(dereg_mr, NULL, NULL), NN_INVALID_ARGUMENT,
	   "deregMr(NULL, NULL)");
	p = &p;
	is(SAME(get_device_mr, NULL, NULL, &p), NN_SUCCESS,
	   "getDeviceMr: no device offload");
	check(!p, "getDeviceMr gives a NULL device handle");
}

static void misuse_vdev(void)
{
	int list[NN_VDEV_MAX_V12 + 1], d = -7, i, max = vdev_max();
	unsigned int w;

	for (i = 0; i < (int)ARRAY_SIZE(list); i++)
		list[i] = i;
	is(net_vdev(&d, 0, list), NN_INVALID_ARGUMENT,
	   "makeVDevice of 0 devices");
	is(net_vdev(&d, max + 1, list), NN_INVALID_ARGUMENT,
	   "makeVDevice of %d devices, one more than vProps holds", max + 1);
	w = nwarn;
	list[1] = 1000;
	is(net_vdev(&d, 2, list), NN_INVALID_ARGUMENT,
	   "makeVDevice of devices {0, 1000}");
	check(nwarn > w,
	      "makeVDevice of an unknown device says why (a WARN line)");
	list[1] = -1;
	is(net_vdev(&d, 2, list), NN_INVALID_ARGUMENT,
	   "makeVDevice of devices {0, -1}");
	list[1] = 0;
	is(net_vdev(&d, 2, list), NN_INVALID_ARGUMENT,
	   "makeVDevice of devices {0, 0}");
	is(net_vdev(NULL, 1, list), NN_INVALID_ARGUMENT,
	   "makeVDevice with a NULL index");
	is(ver == 12 ? n12->make_vdevice(&d, NULL) :
	   ver == 11 ? n11->make_vdevice(&d, NULL) :
	   ver == 10 ? n10->make_vdevice(&d, NULL) :
	   n9->make_vdevice(&d, NULL), NN_INVALID_ARGUMENT,
	   "makeVDevice with NULL vProps");
	check(d == -7, "no failed makeVDevice wrote an index");
}

/* v11+: contexts; @inited: init works here, so a second one can be made. */
static void misuse_ctx(bool inited)
{
	void *ctx2 = &ctx2;
	unsigned int w;

	is(net_finalize(NULL), NN_INVALID_ARGUMENT, "finalize(NULL)");
	if (!inited) {
		skip("init fails here (no RDMA device)",
		     "finalize of a context twice");
		return;
	}
	is(net_init(&ctx2), NN_SUCCESS,
	   "a second init (a second communicator)");
	check(ctx2 && ctx2 != nctx, "each init gives its own context");
	is(net_finalize(ctx2), NN_SUCCESS, "finalize of the second context");
	w = nwarn;
	is(net_finalize(ctx2), NN_INVALID_ARGUMENT,
	   "finalize of the second context again");
	check(nwarn > w, "a second finalize says why (a WARN line)");
}

/* ------------------------------------------------------------ messages */

struct op {
	void *req;
	int done;		/* 1 done, -1 failed */
	int sizes[R2CC_MAX_RECVS];
};

/* Drive @ops to their end: true when all completed within the timeout. */
static bool finish(struct op *ops, int n)
{
	double t0 = now_s();
	int left = n, i, d;
	nn_result_t r;

	for (i = 0; i < n; i++)
		ops[i].done = 0;
	while (left && now_s() - t0 < TIMEOUT_S) {
		for (i = 0; i < n; i++) {
			if (ops[i].done)
				continue;
			d = 0;
			r = net_test(ops[i].req, &d, ops[i].sizes);
			if (r) {
				tap_diag("test of request %d of %d: %s", i, n,
					 rname(r));
				ops[i].done = -1;
				return false;
			}
			if (d) {
				ops[i].done = 1;
				left--;
			}
		}
	}
	if (left)
		tap_diag("%d of %d requests still open after %.0f s", left, n,
			 TIMEOUT_S);
	return !left;
}

struct conn {
	void *lc, *sc, *rc;
	void *smh, *rmh;
	uint8_t handle[NN_HANDLE_MAXSIZE];
};

static bool connect_self(struct conn *c)
{
	double t0 = now_s();
	nn_result_t rs = NN_SUCCESS, ra = NN_SUCCESS;
	int calls = 0;

	while ((!c->sc || !c->rc) && now_s() - t0 < TIMEOUT_S) {
		if (!c->sc) {
			rs = net_connect(0, c->handle, &c->sc);
			calls++;
			if (rs)
				break;
		}
		if (!c->rc) {
			ra = net_accept(c->lc, &c->rc);
			calls++;
			if (ra)
				break;
		}
		if (!c->sc || !c->rc)
			usleep(50);
	}
	check(!rs && !ra && c->sc && c->rc,
	      "connect and accept on device 0, polled in turn: a send and a receive comm in %d calls, each ncclSuccess (a NULL comm until ready)",
	      calls);
	if (rs || ra)
		tap_diag("connect %s, accept %s", rname(rs), rname(ra));
	else if (!c->sc || !c->rc)
		tap_diag("not ready after %.0f s: send comm %p, recv comm %p",
			 TIMEOUT_S, c->sc, c->rc);
	return c->sc && c->rc;
}

/* Wrong kinds of comm: each one's magic is checked before use. */
static void wrong_kinds(struct conn *c)
{
	void *p = &p;

	is(net_isend(c->rc, sbuf, 1, 0, NULL, &p), NN_INVALID_ARGUMENT,
	   "isend on a receive comm");
	p = &p;
	is(net_irecv1(c->sc, rbuf, 1, 0, NULL, &p), NN_INVALID_ARGUMENT,
	   "irecv on a send comm");
	is(SAME(close_send, c->rc), NN_INVALID_ARGUMENT,
	   "closeSend of a receive comm");
	is(SAME(close_recv, c->sc), NN_INVALID_ARGUMENT,
	   "closeRecv of a send comm");
	is(SAME(close_listen, c->sc), NN_INVALID_ARGUMENT,
	   "closeListen of a send comm");
	p = &p;
	is(net_accept(c->sc, &p), NN_INVALID_ARGUMENT,
	   "accept on a send comm");
}

static void reg_memory(struct conn *c)
{
	void *mh = &mh;
	nn_result_t r;

	is(SAME(reg_mr, c->sc, sbuf, BUF_SIZE, NN_PTR_HOST, &c->smh),
	   NN_SUCCESS, "regMr of %u MiB of host memory on the send comm",
	   BUF_SIZE >> 20);
	is(SAME(reg_mr, c->rc, rbuf, BUF_SIZE, NN_PTR_HOST, &c->rmh),
	   NN_SUCCESS, "regMr of %u MiB of host memory on the receive comm",
	   BUF_SIZE >> 20);
	is(SAME(reg_mr, c->rc, rbuf, 4096, 8, &mh), NN_INVALID_ARGUMENT,
	   "regMr with type 8");
	check(!mh, "regMr with type 8 leaves no handle");
	is(SAME(reg_mr, c->rc, rbuf, 4096, NN_PTR_HOST, NULL),
	   NN_INVALID_ARGUMENT, "regMr with a NULL mhandle");
	mh = &mh;
	r = SAME(reg_mr, c->rc, rbuf, 4096, NN_PTR_CUDA, &mh);
	check(r != NN_SUCCESS && !mh,
	      "regMr of host memory as NCCL_PTR_CUDA: refused (%s), no handle",
	      rname(r));
	if (r == NN_SUCCESS && mh)
		SAME(dereg_mr, c->rc, mh);
	is(SAME(dereg_mr, c->rc, NULL), NN_INVALID_ARGUMENT,
	   "deregMr of a NULL mhandle");
}

static void bad_posts(struct conn *c)
{
	void *data[16], *mhs[16], *req = &req;
	size_t sizes[16];
	int tags[16], isz[16], i;

	for (i = 0; i < 16; i++) {
		data[i] = rbuf + i * 4096;
		sizes[i] = 4096;
		tags[i] = i;
		isz[i] = 4096;
		mhs[i] = c->rmh;
	}
	is(net_irecv(c->rc, 0, data, sizes, tags, mhs, &req),
	   NN_INVALID_ARGUMENT, "irecv of n 0");
	check(!req, "irecv of n 0 leaves no request");
	req = &req;
	is(net_irecv(c->rc, 9, data, sizes, tags, mhs, &req),
	   NN_INVALID_ARGUMENT, "irecv of n 9 (maxRecvs is 8)");
	check(!req, "irecv of n 9 leaves no request");
	req = &req;
	is(net_isend(c->sc, sbuf + BUF_SIZE - 10, 4096, 0, c->smh, &req),
	   NN_INVALID_ARGUMENT, "isend of bytes past its registration");
	check(!req, "that isend leaves no request");
	if (ver == 8) {
		req = &req;
		is(n8->isend(c->sc, sbuf, -1, 0, c->smh, &req),
		   NN_INVALID_ARGUMENT, "isend of size -1");
		check(!req, "isend of size -1 leaves no request");
	}
	req = &req;
	is(SAME(iflush, c->rc, 1, data, isz, mhs, &req), NN_SUCCESS,
	   "iflush of host memory");
	check(!req, "iflush of host memory: no request (nothing to flush)");
	is(SAME(irecv_consumed, c->rc, 1, NULL), NN_SUCCESS,
	   "irecvConsumed (no device offload)");
}

/* Single messages of 1 B to 1 MiB, each into a receive 64 B larger. */
static void singles(struct conn *c)
{
	static const size_t lens[] = { 1, 4096, 1u << 20 };
	struct op ops[2];
	unsigned int i;
	nn_result_t rr, rs;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		size_t len = lens[i], room = len + 64;
		int tag = 7 + (int)i;
		bool ok;

		fill(sbuf, len, 11 + i);
		memset(rbuf, 0, room);
		ops[0].req = ops[1].req = NULL;
		rr = net_irecv1(c->rc, rbuf, room, tag, c->rmh, &ops[1].req);
		rs = net_isend(c->sc, sbuf, len, tag, c->smh, &ops[0].req);
		if (rr || rs || !ops[0].req || !ops[1].req) {
			check(0, "%zu B: isend and irecv posted", len);
			tap_diag("irecv %s %p, isend %s %p", rname(rr),
				 ops[1].req, rname(rs), ops[0].req);
			return;
		}
		ok = finish(ops, 2);
		check(ok && ops[0].sizes[0] == (int)len &&
		      ops[1].sizes[0] == (int)len &&
		      filled(rbuf, len, 11 + i) && zero(rbuf + len, 64),
		      "%zu B into a %zu B receive: test() gives %zu for both, the bytes arrive, nothing past them",
		      len, room, len);
		if (ok && (ops[0].sizes[0] != (int)len ||
			   ops[1].sizes[0] != (int)len))
			tap_diag("test sizes: send %d, receive %d",
				 ops[0].sizes[0], ops[1].sizes[0]);
		if (!ok)
			return;
		if (!i) {
			int d = 0;

			is(net_test(ops[1].req, &d, NULL), NN_INVALID_ARGUMENT,
			   "test() of a request already completed");
		}
	}
}

/*
 * A grouped receive of 8 with tags 100..107, sent to in reverse tag order:
 * each send lands in the buffer of its tag, with its own size.
 */
static void grouped_recv(struct conn *c)
{
	enum { N = 8, SLOT = 64 << 10 };
	struct op ops[N + 1];
	void *data[N], *mhs[N];
	size_t sizes[N];
	int tags[N], i;
	nn_result_t r;
	char bad[512] = "";

	memset(rbuf, 0, N * SLOT);
	for (i = 0; i < N; i++) {
		data[i] = rbuf + i * SLOT;
		sizes[i] = SLOT;
		tags[i] = 100 + i;
		mhs[i] = c->rmh;
	}
	ops[0].req = NULL;
	r = net_irecv(c->rc, N, data, sizes, tags, mhs, &ops[0].req);
	check(!r && ops[0].req, "grouped irecv of 8, tags 100..107: posted");
	if (r || !ops[0].req)
		return;
	for (i = 0; i < N; i++) {
		int t = N - 1 - i;
		size_t len = 1000u * (unsigned int)(t + 1) + (unsigned int)t;

		fill(sbuf + i * SLOT, len, 100u + (unsigned int)t);
		ops[i + 1].req = NULL;
		r = net_isend(c->sc, sbuf + i * SLOT, len, 100 + t, c->smh,
			      &ops[i + 1].req);
		if (r || !ops[i + 1].req) {
			check(0, "isend with tag %d posted", 100 + t);
			tap_diag("%s, request %p", rname(r), ops[i + 1].req);
			/* The receive stays open: the close frees it. */
			return;
		}
	}
	if (!finish(ops, N + 1)) {
		check(0, "8 isends, tags 107 to 100, fill the grouped receive");
		return;
	}
	for (i = 0; i < N; i++) {
		size_t len = 1000u * (unsigned int)(i + 1) + (unsigned int)i;

		if (ops[0].sizes[i] != (int)len)
			add(bad, "buffer %d (tag %d): size %d, want %zu", i,
			    100 + i, ops[0].sizes[i], len);
		else if (!filled(rbuf + i * SLOT, len, 100u + (unsigned int)i))
			add(bad, "buffer %d (tag %d): wrong bytes", i, 100 + i);
		if (ops[N - i].sizes[0] != (int)len)
			add(bad, "send of tag %d: size %d, want %zu", 100 + i,
			    ops[N - i].sizes[0], len);
	}
	check(!bad[0],
	      "8 isends, tags 107 down to 100: each lands in its tag's buffer, test() sizes per buffer and per send");
	if (bad[0])
		tap_diag("%s", bad);
}

/*
 * 32 receives in flight fill a receive comm; the 33rd is NCCL's "cannot
 * post now" (success, NULL request); 32 sends then complete them all.
 */
static void full(struct conn *c)
{
	enum { N = NN_MAX_REQUESTS, SLOT = 4096 };
	struct op ops[2 * N];
	void *req = &req;
	nn_result_t r = NN_SUCCESS;
	int i, posted = 0;
	char bad[512] = "";

	memset(rbuf, 0, N * SLOT);
	for (i = 0; i < N; i++) {
		ops[i].req = NULL;
		r = net_irecv1(c->rc, rbuf + i * SLOT, SLOT, 200 + i, c->rmh,
			       &ops[i].req);
		if (r || !ops[i].req)
			break;
		posted++;
	}
	check(posted == N, "%d irecvs in flight on one receive comm", N);
	if (posted != N) {
		tap_diag("irecv %d: %s, request %p", i, rname(r), ops[i].req);
		return;
	}
	r = net_irecv1(c->rc, rbuf + N * SLOT, SLOT, 200 + N, c->rmh, &req);
	check(!r && !req,
	      "irecv number %d: ncclSuccess with a NULL request (cannot post now)",
	      N + 1);
	if (r || req) {
		tap_diag("%s, request %p", rname(r), req);
		return;	/* a stray request: the close frees it */
	}
	for (i = 0; i < N; i++) {
		fill(sbuf + i * SLOT, 64u + (unsigned int)i,
		     200u + (unsigned int)i);
		ops[N + i].req = NULL;
		r = net_isend(c->sc, sbuf + i * SLOT, 64u + (unsigned int)i,
			      200 + i, c->smh, &ops[N + i].req);
		if (r || !ops[N + i].req) {
			check(0, "isend %d of %d posted", i + 1, N);
			tap_diag("%s, request %p", rname(r), ops[N + i].req);
			return;
		}
	}
	if (!finish(ops, 2 * N)) {
		check(0, "%d isends complete the %d receives", N, N);
		return;
	}
	for (i = 0; i < N; i++) {
		bool bytes = filled(rbuf + i * SLOT, 64u + (unsigned int)i,
				    200u + (unsigned int)i);

		if (ops[i].sizes[0] != 64 + i ||
		    ops[N + i].sizes[0] != 64 + i || !bytes)
			add(bad, "message %d: received %d, sent %d%s", i,
			    ops[i].sizes[0], ops[N + i].sizes[0],
			    bytes ? "" : ", wrong bytes");
	}
	check(!bad[0], "%d isends complete the %d receives, sizes and bytes",
	      N, N);
	if (bad[0])
		tap_diag("%s", bad);
}

/*
 * NCCL tears down in this order, also after an abort with receives still
 * posted: deregMr of each buffer, then closeRecv.  Two receives stay in
 * flight here, one of 0 bytes (no memory) and one into registered memory.
 */
static void close_in_flight(struct conn *c)
{
	void *rq0 = NULL, *rq1 = NULL;
	nn_result_t r0, r1, r;
	bool rmh_left = true;

	r0 = net_irecv1(c->rc, NULL, 0, 300, NULL, &rq0);
	r1 = net_irecv1(c->rc, rbuf, 4096, 301, c->rmh, &rq1);
	check(!r0 && rq0 && !r1 && rq1,
	      "two irecvs with no matching send in flight (0 B, 4 KiB)");
	if (r0 || r1)
		tap_diag("irecv of 0 B: %s, of 4 KiB: %s", rname(r0),
			 rname(r1));
	is(SAME(dereg_mr, c->sc, c->smh), NN_SUCCESS,
	   "deregMr on the send comm (nothing in flight)");
	r = SAME(dereg_mr, c->rc, c->rmh);
	is(r, NN_SUCCESS,
	   "deregMr of memory a receive in flight uses, before closeRecv as NCCL does");
	rmh_left = r != NN_SUCCESS;
	is(SAME(close_recv, c->rc), NN_SUCCESS,
	   "closeRecv with receives in flight");
	c->rc = NULL;
	/*
	 * Outside NCCL's contract (regIsGlobal 0: through the comm it was
	 * registered on), but the plugin registers with the device's
	 * context, which the send comm shares: the buffer does not leak.
	 */
	if (rmh_left)
		is(SAME(dereg_mr, c->sc, c->rmh), NN_SUCCESS,
		   "deregMr of the receive buffer once its comm is closed");
	is(SAME(close_send, c->sc), NN_SUCCESS,
	   "closeSend after its peer closed");
	c->sc = NULL;
}

static void device_checks(void)
{
	struct conn c = { NULL };
	uint8_t forged[NN_HANDLE_MAXSIZE];
	nn_result_t r;
	int i, ndev = 0;

	SAME(devices, &ndev);
	for (i = 0; i < nphys; i++)
		check_props(i, 1, &i, 0);

	/* A virtual device of devices 0 and 1. */
	if (ver < 9) {
		skip("no makeVDevice before v9",
		     "makeVDevice of devices {0, 1}");
	} else if (nphys < 2) {
		skip("fewer than 2 devices", "makeVDevice of devices {0, 1}");
	} else {
		struct props p0, p1;
		int list[2] = { 0, 1 }, d = -1, d2 = -1, n2 = 0;

		get_props(0, &p0, false);
		get_props(1, &p1, false);
		is(net_vdev(&d, 2, list), NN_SUCCESS,
		   "makeVDevice of devices {0, 1}");
		check(d == ndev,
		      "the virtual device is index %d (was %d devices)", d,
		      ndev);
		SAME(devices, &n2);
		check(n2 == ndev + 1, "devices() counts it: %d", n2);
		if (d >= 0) {
			check_props(d, 2, list, p0.speed + p1.speed);
			list[1] = d;
			is(net_vdev(&d2, 2, list), NN_INVALID_ARGUMENT,
			   "makeVDevice of {0, %d}, a virtual device", d);
		}
	}

	/* One process connected to itself on device 0. */
	r = net_listen(0, c.handle, &c.lc);
	is(r, NN_SUCCESS, "listen on device 0");
	if (r || !c.lc) {
		skip("listen failed", "everything on a connection");
		return;
	}
	memcpy(forged, c.handle, sizeof(forged));
	forge(forged, 0x5eed0000dead0ull);
	connect_fails(forged, true,
		      "a real listen handle whose stage pointer is garbage");
	forge(forged, (uintptr_t)c.lc);
	connect_fails(forged, true,
		      "a real listen handle whose stage is the listen comm");
	if (connect_self(&c)) {
		void *p = &p;

		is(net_accept(c.lc, &p), NN_SUCCESS,
		   "accept with nothing pending");
		check(!p, "accept with nothing pending gives a NULL comm");
	}
	is(SAME(close_listen, c.lc), NN_SUCCESS, "closeListen");
	c.lc = NULL;
	if (!c.sc || !c.rc) {
		if (c.sc)
			SAME(close_send, c.sc);
		if (c.rc)
			SAME(close_recv, c.rc);
		skip("no connection", "messages on device 0");
		return;
	}
	wrong_kinds(&c);
	reg_memory(&c);
	if (!c.smh || !c.rmh) {
		if (c.smh)
			SAME(dereg_mr, c.sc, c.smh);
		if (c.rmh)
			SAME(dereg_mr, c.rc, c.rmh);
		SAME(close_send, c.sc);
		SAME(close_recv, c.rc);
		skip("no registration", "messages on device 0");
		return;
	}
	bad_posts(&c);
	singles(&c);
	grouped_recv(&c);
	full(&c);
	close_in_flight(&c);
}

/* ------------------------------------------------------------ per version */

static void run(void *lib, int v)
{
	char sym[32];
	const void *t;
	void *slots[32];
	size_t i, nslots;
	nn_result_t r;
	bool inited;
	int ndev = -1;

	ver = v;
	snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v);
	t = dlsym(lib, sym);
	check(t != NULL, "%s exported", sym);
	if (!t)
		return;
	n8 = v == 8 ? t : NULL;
	n9 = v == 9 ? t : NULL;
	n10 = v == 10 ? t : NULL;
	n11 = v == 11 ? t : NULL;
	n12 = v == 12 ? t : NULL;
	nctx = NULL;

	check(net_name() && !strcmp(net_name(), "r2cc"), "name is \"r2cc\"%s",
	      net_name() ? "" : " (NULL)");
	nslots = table_size() / sizeof(void *);
	memcpy(slots, table(), table_size());
	for (i = 1; i < nslots && slots[i]; i++)
		;
	check(i == nslots, "every one of the %zu entry points is set",
	      nslots - 1);

	if (v >= 11)
		is(net_init(NULL), NN_INVALID_ARGUMENT, "init with a NULL ctx");
	r = net_init(&nctx);
	inited = r == NN_SUCCESS;
	check(r == NN_SUCCESS || r == NN_SYSTEM_ERROR,
	      "init: %s (ncclSuccess with an RDMA device, ncclSystemError without)",
	      rname(r));
	if (v >= 11)
		check(inited ? nctx != NULL : nctx == NULL, "%s",
		      inited ? "init gives a context" :
		      "a failed init gives no context");
	r = SAME(devices, &ndev);
	if (inited) {
		check(!r && ndev >= 1, "devices(): %s, %d", rname(r), ndev);
		if (nphys < 0)
			nphys = ndev;
	} else {
		check(r != NN_SUCCESS || ndev == 0,
		      "devices() after a failed init: %s, %d devices",
		      rname(r), ndev);
		ndev = 0;
	}
	if (ndev < 0)
		ndev = 0;
	misuse_props(ndev);
	misuse_comms(inited);
	if (v >= 9)
		misuse_vdev();
	if (v >= 11)
		misuse_ctx(inited);

	if (inited && nphys >= 1) {
		device_checks();
	} else {
		const char *why = inited ? "no device" :
				  "init fails here (no RDMA device)";

		skip(why, "getProperties of every device: sane");
		if (v >= 9)
			skip(why, "makeVDevice of devices {0, 1}");
		skip(why, "listen, connect and accept on device 0");
		skip(why,
		     "messages, grouped receives, 32 in flight, close in flight");
	}
	if (v >= 11 && nctx) {
		struct nn_net_attr attr;

		/* NCCL_NET_ATTR_INIT: every hint undefined (-1) */
		memset(&attr, 0xff, sizeof(attr));
		is(v == 11 ? n11->set_net_attr(nctx, &attr) :
		   n12->set_net_attr(nctx, &attr), NN_SUCCESS, "setNetAttr");
		is(net_finalize(nctx), NN_SUCCESS, "finalize");
		nctx = NULL;
	}
}

int main(void)
{
	const char *path = getenv("R2CC_NCCL_PLUGIN");
	void *lib;
	int v;

	/* TAP lines in order with the plugin's log, none lost to a crash */
	setvbuf(stdout, NULL, _IOLBF, 0);
	log_from_env();
	if (!path || !*path)
		path = "libnccl-net-r2cc.so";
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		tap_skip_all("cannot load the plugin %s: %s", path, dlerror());
	rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^
	      0x9e3779b97f4a7c15ull;
	sbuf = aligned_alloc(4096, BUF_SIZE);
	rbuf = aligned_alloc(4096, BUF_SIZE);
	if (!sbuf || !rbuf)
		tap_skip_all("no memory for the buffers");

	printf("TAP version 13\n");
	tap_diag("plugin %s, random seed %#llx", path, (unsigned long long)rng);
	for (v = 8; v <= 12; v++)
		run(lib, v);
	/* The number of checks depends on the devices: the plan comes last. */
	tap_planned = tap_run;
	printf("1..%u\n", tap_planned);
	free(sbuf);
	free(rbuf);
	dlclose(lib);
	return tap_done();
}
