// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The plugin's devices.  NCCL sees one device per NIC port, with the
 * NIC's own PCI path, so its topology search still pairs each GPU with
 * its nearest NIC; makeVDevice adds fused devices after them.  Behind
 * device d is a libr2cc context whose NICs are d's own (the primaries,
 * carrying everything while one is up) followed by the node's other NICs
 * nearest first (the standbys: connected and registered up front, idle
 * until every primary has failed).  R2CC_NCCL_STANDBY bounds the
 * standbys, and so the QPs, per connection; R2CC_NCCL_MODE=stripe makes
 * every NIC a primary.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

nn_logger_t nn_log_fn;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static bool ready;			/* devices discovered */
static bool stripe;			/* R2CC_NCCL_MODE=stripe */
static int max_standby;			/* R2CC_NCCL_STANDBY */
static int gdr;				/* R2CC_NCCL_GDR=1: GPU memory */
static int log_level;			/* libr2cc's, from NCCL_DEBUG */
static char ctrl_ifname[16];		/* from NCCL_SOCKET_IFNAME */
static int nphys, ndev;
static struct r2cc_nic_info phys[NN_MAX_DEVS];
static char pci_path[NN_MAX_DEVS][PATH_MAX];
static uint64_t guid[NN_MAX_DEVS];
static struct nn_dev devs[NN_MAX_DEVS];

/* A v11+ init: one per NCCL communicator. */
struct nn_nctx {
	uint32_t magic;
	int traffic_class;
	struct nn_nctx *next;
};
#define NCTX_MAGIC 0x72326e63u
static struct nn_nctx *nctxs;

/* comms open on any device (comm.c), under mu */
static int ncomms;

void nn_dev_comm_opened(void)
{
	pthread_mutex_lock(&mu);
	ncomms++;
	pthread_mutex_unlock(&mu);
}

void nn_dev_comm_closed(void)
{
	pthread_mutex_lock(&mu);
	ncomms--;
	pthread_mutex_unlock(&mu);
}

nn_result_t nn_errno(int err)
{
	switch (err) {
	case 0:
		return NN_SUCCESS;
	case -ECONNRESET: case -EPIPE: case -ECONNREFUSED: case -ETIMEDOUT:
	case -EHOSTUNREACH: case -EPROTO:
		return NN_REMOTE_ERROR;
	case -EINVAL: case -EBADF: case -E2BIG:
		return NN_INVALID_ARGUMENT;
	case -EBUSY:
		return NN_INVALID_USAGE;
	default:
		return err < 0 ? NN_SYSTEM_ERROR : NN_INTERNAL_ERROR;
	}
}

static void lib_log(void *arg, enum r2cc_log_level level, const char *msg)
{
	(void)arg;
	NN_LOG(level <= R2CC_LOG_WARN ? NN_LOG_WARN :
	       level == R2CC_LOG_INFO ? NN_LOG_INFO : NN_LOG_TRACE,
	       "NET/r2cc : %s", msg);
}

/* NCCL_DEBUG decides how much libr2cc says (NCCL's logger filters too). */
static int level_from_env(void)
{
	const char *v = getenv("NCCL_DEBUG");

	if (!v)
		return R2CC_LOG_WARN;
	if (!strcasecmp(v, "TRACE"))
		return R2CC_LOG_DEBUG;
	if (!strcasecmp(v, "INFO"))
		return R2CC_LOG_INFO;
	return R2CC_LOG_WARN;
}

/*
 * NCCL_SOCKET_IFNAME for the control channel when R2CC_SOCKET_IFNAME is
 * not set: its first prefix ("=" exact is taken as a prefix too); an
 * exclusion list ("^...") leaves the library's own choice.
 */
static void ifname_from_env(void)
{
	const char *v = getenv("NCCL_SOCKET_IFNAME");
	size_t n;

	ctrl_ifname[0] = '\0';
	if (getenv("R2CC_SOCKET_IFNAME") || !v || *v == '^')
		return;
	if (*v == '=')
		v++;
	n = strcspn(v, ",");
	if (n && n < sizeof(ctrl_ifname)) {
		memcpy(ctrl_ifname, v, n);
		ctrl_ifname[n] = '\0';
	}
}

static int env_int(const char *name, int dflt, int lo, int hi, int *out)
{
	const char *v = getenv(name);
	char *end;
	long x;

	*out = dflt;
	if (!v)
		return 0;
	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi) {
		NN_WARN("%s=%s: not a number from %d to %d", name, v, lo, hi);
		return -EINVAL;
	}
	*out = (int)x;
	return 0;
}

static struct r2cc_ctx *ctx_for(const char *nics)
{
	struct r2cc_ctx_opts o = {
		.size = sizeof(o), .log = lib_log, .log_level = log_level,
		.nics = nics, .ctrl_ifname = ctrl_ifname[0] ? ctrl_ifname : NULL,
	};
	struct r2cc_ctx *ctx;
	int ret = r2cc_ctx_create(&o, &ctx);

	if (ret) {
		NN_WARN("no libr2cc context for NICs %s: %s", nics ? nics : "(all)",
			strerror(-ret));
		return NULL;
	}
	return ctx;
}

/*
 * NCCL's topology wants the PCI function's /sys path, resolved: the RDMA
 * device's parent, else its netdev's, else the PCI address's.  Each try
 * resolves into its own buffer, as realpath() leaves a partial path behind
 * when it fails.
 */
static void find_pci_path(int i)
{
	const struct r2cc_nic_info *in = &phys[i];
	char p[PATH_MAX], r[PATH_MAX];
	int k;

	pci_path[i][0] = '\0';
	for (k = 0; k < 3; k++) {
		if (k == 0)
			snprintf(p, sizeof(p), "/sys/class/infiniband/%s/device",
				 in->dev_name);
		else if (k == 1 && in->netdev[0])
			snprintf(p, sizeof(p), "/sys/class/net/%s/device",
				 in->netdev);
		else if (k == 2 && in->pci_addr[0])
			snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s",
				 in->pci_addr);
		else
			continue;
		if (realpath(p, r)) {
			memcpy(pci_path[i], r, sizeof(r));
			return;
		}
	}
}

static uint64_t read_guid(const struct r2cc_nic_info *in)
{
	char p[PATH_MAX], buf[64];
	unsigned int a, b, c, d;
	uint64_t h = 1469598103934665603ull;
	const char *s;
	FILE *f;

	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/node_guid",
		 in->dev_name);
	f = fopen(p, "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f) &&
		    sscanf(buf, "%x:%x:%x:%x", &a, &b, &c, &d) == 4) {
			fclose(f);
			return (uint64_t)a << 48 | (uint64_t)b << 32 |
			       (uint64_t)c << 16 | d;
		}
		fclose(f);
	}
	for (s = in->dev_name; *s; s++)		/* FNV-1a of the name */
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int discover(void)
{
	struct r2cc_ctx *ctx;
	int i, mode_ok = 1;
	const char *mode = getenv("R2CC_NCCL_MODE");

	stripe = mode && !strcmp(mode, "stripe");
	if (mode && !stripe && strcmp(mode, "standby")) {
		NN_WARN("R2CC_NCCL_MODE=%s: use standby or stripe", mode);
		mode_ok = 0;
	}
	if (!mode_ok || env_int("R2CC_NCCL_STANDBY", NN_MAX_DEVS, 0,
				NN_MAX_DEVS, &max_standby) ||
	    env_int("R2CC_NCCL_GDR", 0, 0, 1, &gdr))
		return -EINVAL;
	log_level = level_from_env();
	ifname_from_env();
	ctx = ctx_for(NULL);
	if (!ctx)
		return -ENODEV;
	nphys = r2cc_nic_count(ctx);
	if (nphys > NN_MAX_DEVS / 2)
		nphys = NN_MAX_DEVS / 2;	/* the rest for virtual devices */
	for (i = 0; i < nphys; i++) {
		phys[i].size = sizeof(phys[i]);
		r2cc_nic_info(ctx, i, &phys[i]);
		find_pci_path(i);
		guid[i] = read_guid(&phys[i]);
		memset(&devs[i], 0, sizeof(devs[i]));
		devs[i].ndevs = 1;
		devs[i].devs[0] = i;
		snprintf(devs[i].name, sizeof(devs[i].name), "%s:%u",
			 phys[i].dev_name, phys[i].port);
		NN_INFO("device %d: %s, %llu Mbit/s, %s, %s", i, devs[i].name,
			(unsigned long long)phys[i].bandwidth_mbps,
			pci_path[i][0] ? pci_path[i] : "no PCI path",
			phys[i].netdev[0] ? phys[i].netdev : "InfiniBand");
	}
	ndev = nphys;
	r2cc_ctx_destroy(ctx);
	NN_INFO("%d devices, mode %s, standbys per connection %d%s", nphys,
		stripe ? "stripe" : "standby",
		max_standby < nphys - 1 ? max_standby : nphys - 1,
		gdr ? ", GPU memory" : "");
	return 0;
}

nn_result_t nn_init(nn_logger_t log)
{
	int ret = 0;

	pthread_mutex_lock(&mu);
	nn_log_fn = log;
	if (!ready) {
		ret = discover();
		ready = !ret;
	}
	pthread_mutex_unlock(&mu);
	return ret == -EINVAL ? NN_INVALID_ARGUMENT :
	       ret ? NN_SYSTEM_ERROR : NN_SUCCESS;
}

nn_result_t nn_devices(int *n)
{
	if (!n)
		return NN_INVALID_ARGUMENT;
	pthread_mutex_lock(&mu);
	*n = ready ? ndev : 0;
	pthread_mutex_unlock(&mu);
	return ready ? NN_SUCCESS : NN_INVALID_USAGE;
}

nn_result_t nn_get_props(int dev, struct nn_props *p)
{
	const struct nn_dev *d;
	uint64_t mbps = 0;
	int i;

	if (!p)
		return NN_INVALID_ARGUMENT;
	pthread_mutex_lock(&mu);
	if (!ready || dev < 0 || dev >= ndev) {
		pthread_mutex_unlock(&mu);
		NN_WARN("getProperties: no device %d (%d devices)", dev, ndev);
		return NN_INVALID_ARGUMENT;
	}
	d = &devs[dev];
	memset(p, 0, sizeof(*p));
	for (i = 0; i < d->ndevs; i++)
		mbps += phys[d->devs[i]].bandwidth_mbps;
	p->name = d->name;
	p->pci_path = pci_path[d->devs[0]];
	p->guid = guid[d->devs[0]];
	p->ptr_support = NN_PTR_HOST | (gdr ? NN_PTR_CUDA | NN_PTR_DMABUF : 0);
	p->speed = mbps > INT32_MAX ? INT32_MAX : (int)mbps;
	p->port = (int)phys[d->devs[0]].port;
	p->max_comms = 65536;
	p->max_recvs = R2CC_MAX_RECVS;
	p->ndevs = d->ndevs;
	memcpy(p->devs, d->devs, sizeof(p->devs));
	p->max_p2p_bytes = 1ul << 30;
	pthread_mutex_unlock(&mu);
	return NN_SUCCESS;
}

nn_result_t nn_make_vdevice(int *out, int n, const int *list, int max)
{
	struct nn_dev *d;
	size_t len = 0;
	int i, j;

	if (!out || !list || n < 1 || n > max || n > NN_VDEV_MAX)
		return NN_INVALID_ARGUMENT;
	pthread_mutex_lock(&mu);
	for (i = 0; i < n; i++)
		for (j = -1; j < i; j++)
			if (list[i] < 0 || list[i] >= nphys ||
			    (j >= 0 && list[j] == list[i])) {
				pthread_mutex_unlock(&mu);
				NN_WARN("makeVDevice: device %d unknown or twice",
					list[i]);
				return NN_INVALID_ARGUMENT;
			}
	if (!ready || ndev == NN_MAX_DEVS) {
		pthread_mutex_unlock(&mu);
		return NN_INVALID_USAGE;
	}
	d = &devs[ndev];
	memset(d, 0, sizeof(*d));
	d->ndevs = n;
	for (i = 0; i < n; i++) {
		d->devs[i] = list[i];
		len += (size_t)snprintf(d->name + len, sizeof(d->name) - len,
					"%s%s:%u", i ? "+" : "",
					phys[list[i]].dev_name,
					phys[list[i]].port);
		if (len >= sizeof(d->name))
			len = sizeof(d->name) - 1;
	}
	*out = ndev++;
	pthread_mutex_unlock(&mu);
	NN_INFO("virtual device %d: %s", *out, d->name);
	return NN_SUCCESS;
}

/* How near NIC @b is to NIC @a: same NUMA node, then a longer shared PCI path. */
static int nearness(int a, int b)
{
	const char *p = pci_path[a], *q = pci_path[b];
	int k = 0;

	while (*p && *p == *q) {
		p++;
		q++;
		k++;
	}
	return (phys[a].numa_node == phys[b].numa_node) * 100000 + k;
}

/*
 * "dev:port,..." of @d's primaries, then its standbys, nearest first and
 * at most R2CC_NCCL_STANDBY of them (stripe: every NIC, all primaries).
 */
static void nic_list(const struct nn_dev *d, char *buf, size_t size,
		     int *nrails)
{
	int order[NN_MAX_DEVS], n = 0, i, j, t, first = d->devs[0];
	bool used[NN_MAX_DEVS] = { false };
	size_t len = 0;

	for (i = 0; i < d->ndevs; i++) {
		order[n++] = d->devs[i];
		used[d->devs[i]] = true;
	}
	for (i = 0; i < nphys; i++)
		if (!used[i])
			order[n++] = i;
	for (i = d->ndevs + 1; i < n; i++)	/* stable: index breaks ties */
		for (j = i; j > d->ndevs && nearness(first, order[j - 1]) <
					    nearness(first, order[j]); j--) {
			t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	if (!stripe && n > d->ndevs + max_standby)
		n = d->ndevs + max_standby;
	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s:%u",
					i ? "," : "", phys[order[i]].dev_name,
					phys[order[i]].port);
	*nrails = n;
}

struct nn_dev *nn_dev_get(int dev)
{
	char nics[NN_MAX_DEVS * 72];
	struct nn_dev *d;

	pthread_mutex_lock(&mu);
	if (!ready || dev < 0 || dev >= ndev) {
		pthread_mutex_unlock(&mu);
		NN_WARN("no device %d (%d devices)", dev, ready ? ndev : 0);
		return NULL;
	}
	d = &devs[dev];
	if (!d->ctx) {
		nic_list(d, nics, sizeof(nics), &d->nrails);
		d->ctx = ctx_for(nics);
		if (d->ctx)
			NN_INFO("device %d (%s): rails %s, %s", dev, d->name,
				nics, stripe ? "all primaries" :
				"primaries first, then standbys");
	}
	pthread_mutex_unlock(&mu);
	return d->ctx ? d : NULL;
}

uint64_t nn_dev_primary(const struct nn_dev *d)
{
	return stripe ? 0 : (1ull << d->ndevs) - 1;
}

nn_result_t nn_ctx_new(void **out, const struct nn_comm_config *config)
{
	struct nn_nctx *x;

	if (!out)
		return NN_INVALID_ARGUMENT;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NN_SYSTEM_ERROR;
	x->magic = NCTX_MAGIC;
	x->traffic_class = config ? config->traffic_class : -1;
	pthread_mutex_lock(&mu);
	x->next = nctxs;
	nctxs = x;
	pthread_mutex_unlock(&mu);
	*out = x;
	return NN_SUCCESS;
}

/*
 * The last communicator's finalize closes the device contexts, once no
 * comm and no registration is left on them (else they stay, and a later
 * init finds them).
 */
nn_result_t nn_finalize(void *ctx)
{
	struct nn_nctx **pp, *x = NULL;
	int i;

	pthread_mutex_lock(&mu);
	for (pp = &nctxs; *pp; pp = &(*pp)->next)
		if (*pp == ctx) {
			x = *pp;
			*pp = x->next;
			break;
		}
	if (!x) {
		pthread_mutex_unlock(&mu);
		NN_WARN("finalize: %p is no context of this plugin (finalized twice?)",
			ctx);
		return NN_INVALID_ARGUMENT;
	}
	x->magic = 0;
	free(x);
	if (!nctxs && !ncomms) {
		for (i = 0; i < ndev; i++)
			if (devs[i].ctx && !r2cc_ctx_destroy(devs[i].ctx))
				devs[i].ctx = NULL;
	}
	pthread_mutex_unlock(&mu);
	return NN_SUCCESS;
}
