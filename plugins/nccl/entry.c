// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The versioned entry points NCCL looks up, newest first: ncclNetPlugin_v12
 * (NCCL 2.30) down to _v8 (2.20).  Each is a thin table over plugin.h:
 * it converts the version's properties and sizes and passes the rest on.
 */
#include <string.h>

#include "plugin.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * The fields every version has, then those v9 added (v10 .. v12 keep
 * them).  Registrations belong to one device's libr2cc context, so
 * regIsGlobal is 0.
 */
#define PROPS_V8(q, p)							\
	do {								\
		(q)->name = (char *)(p).name;				\
		(q)->pci_path = (char *)(p).pci_path;			\
		(q)->guid = (p).guid;					\
		(q)->ptr_support = (p).ptr_support;			\
		(q)->reg_is_global = 0;					\
		(q)->speed = (p).speed;					\
		(q)->port = (p).port;					\
		(q)->latency = 0;					\
		(q)->max_comms = (p).max_comms;				\
		(q)->max_recvs = (p).max_recvs;				\
		(q)->net_device_type = NN_DEVICE_HOST;			\
	} while (0)

#define PROPS_V9(q, p, max)						\
	do {								\
		int i_;							\
		PROPS_V8(q, p);						\
		(q)->vprops.ndevs = (p).ndevs < (max) ? (p).ndevs : (max); \
		for (i_ = 0; i_ < (q)->vprops.ndevs; i_++)		\
			(q)->vprops.devs[i_] = (p).devs[i_];		\
		(q)->max_p2p_bytes = (p).max_p2p_bytes;			\
		(q)->max_coll_bytes = (p).max_p2p_bytes;		\
	} while (0)

/* The device's properties into a zeroed @q, or the error. */
static nn_result_t props_of(int dev, struct nn_props *p, void *q, size_t size)
{
	nn_result_t r = q ? nn_get_props(dev, p) : NN_INVALID_ARGUMENT;

	if (!r)
		memset(q, 0, size);
	return r;
}

static nn_result_t props_v8(int dev, struct nn_props_v8 *q)
{
	struct nn_props p;
	nn_result_t r = props_of(dev, &p, q, sizeof(*q));

	if (!r)
		PROPS_V8(q, p);
	return r;
}

static nn_result_t props_v9(int dev, struct nn_props_v9 *q)
{
	struct nn_props p;
	nn_result_t r = props_of(dev, &p, q, sizeof(*q));

	if (!r)
		PROPS_V9(q, p, NN_VDEV_MAX_V9);
	return r;
}

static nn_result_t props_v11(int dev, struct nn_props_v11 *q)
{
	struct nn_props p;
	nn_result_t r = props_of(dev, &p, q, sizeof(*q));

	if (!r) {
		PROPS_V9(q, p, NN_VDEV_MAX_V9);
		q->max_multi_request_size = 1;
	}
	return r;
}

static nn_result_t props_v12(int dev, struct nn_props_v12 *q)
{
	struct nn_props p;
	nn_result_t r = props_of(dev, &p, q, sizeof(*q));

	if (!r) {
		PROPS_V9(q, p, NN_VDEV_MAX_V12);
		q->max_multi_request_size = 1;
		q->rail_id = -1;		/* NCCL_NET_ID_UNDEF */
		q->plane_id = -1;
	}
	return r;
}

static nn_result_t vdev_v9(int *d, struct nn_vprops_v9 *v)
{
	return v ? nn_make_vdevice(d, v->ndevs, v->devs, NN_VDEV_MAX_V9) :
		   NN_INVALID_ARGUMENT;
}

static nn_result_t vdev_v12(int *d, struct nn_vprops_v12 *v)
{
	return v ? nn_make_vdevice(d, v->ndevs, v->devs, NN_VDEV_MAX_V12) :
		   NN_INVALID_ARGUMENT;
}

/* Device offload (NCCL's unpack) is not offered: a NULL device handle. */
static nn_result_t connect_any(int dev, void *handle, void **sc,
			       struct nn_dev_handle **sdev)
{
	(void)sdev;
	return nn_connect(dev, handle, sc);
}

static nn_result_t accept_any(void *lc, void **rc, struct nn_dev_handle **rdev)
{
	(void)rdev;
	return nn_accept(lc, rc);
}

static nn_result_t get_device_mr(void *comm, void *mh, void **dptr)
{
	(void)comm;
	(void)mh;
	if (dptr)
		*dptr = NULL;
	return NN_SUCCESS;
}

static nn_result_t irecv_consumed(void *rc, int n, void *request)
{
	(void)rc;
	(void)n;
	(void)request;
	return NN_SUCCESS;
}

/* v8's sizes are int. */
static nn_result_t isend_v8(void *sc, void *data, int size, int tag,
			    void *mh, void **request)
{
	if (size < 0) {
		if (request)
			*request = NULL;
		return NN_INVALID_ARGUMENT;
	}
	return nn_isend(sc, data, (size_t)size, tag, mh, request);
}

static nn_result_t irecv_v8(void *rc, int n, void **data, int *sizes,
			    int *tags, void **mhs, void **request)
{
	size_t s[R2CC_MAX_RECVS];
	int i;

	if (request)
		*request = NULL;
	if (!sizes || n < 1 || n > R2CC_MAX_RECVS)
		return NN_INVALID_ARGUMENT;
	for (i = 0; i < n; i++) {
		if (sizes[i] < 0)
			return NN_INVALID_ARGUMENT;
		s[i] = (size_t)sizes[i];
	}
	return nn_irecv(rc, n, data, s, tags, mhs, request);
}

static nn_result_t isend_v9(void *sc, void *data, size_t size, int tag,
			    void *mh, void **request)
{
	return nn_isend(sc, data, size, tag, mh, request);
}

static nn_result_t irecv_v9(void *rc, int n, void **data, size_t *sizes,
			    int *tags, void **mhs, void **request)
{
	return nn_irecv(rc, n, data, sizes, tags, mhs, request);
}

static nn_result_t isend_v10(void *sc, void *data, size_t size, int tag,
			     void *mh, void *ph, void **request)
{
	(void)ph;
	return nn_isend(sc, data, size, tag, mh, request);
}

static nn_result_t irecv_v10(void *rc, int n, void **data, size_t *sizes,
			     int *tags, void **mhs, void **phs, void **request)
{
	(void)phs;
	return nn_irecv(rc, n, data, sizes, tags, mhs, request);
}

static nn_result_t init_v10(nn_logger_t log, nn_profiler_t prof)
{
	(void)prof;
	return nn_init(log);
}

static nn_result_t connect_v10(int dev, struct nn_comm_config *config,
			       void *handle, void **sc,
			       struct nn_dev_handle **sdev)
{
	(void)config;
	return connect_any(dev, handle, sc, sdev);
}

/* v11+: init once per communicator, with a context for listen/connect. */
static nn_result_t init_v11(void **ctx, uint64_t comm_id,
			    struct nn_comm_config *config, nn_logger_t log,
			    nn_profiler_t prof)
{
	nn_result_t r;

	(void)comm_id;
	(void)prof;
	if (ctx)
		*ctx = NULL;
	if (!ctx)
		return NN_INVALID_ARGUMENT;
	r = nn_init(log);
	return r ? r : nn_ctx_new(ctx, config);
}

static nn_result_t listen_v11(void *ctx, int dev, void *handle, void **lc)
{
	(void)ctx;
	return nn_listen(dev, handle, lc);
}

static nn_result_t connect_v11(void *ctx, int dev, void *handle, void **sc,
			       struct nn_dev_handle **sdev)
{
	(void)ctx;
	return connect_any(dev, handle, sc, sdev);
}

static nn_result_t set_net_attr(void *ctx, struct nn_net_attr *attr)
{
	(void)ctx;
	(void)attr;
	return NN_SUCCESS;
}

#define COMMON_TAIL							\
	.reg_mr = nn_reg_mr,						\
	.reg_mr_dmabuf = nn_reg_mr_dmabuf,				\
	.dereg_mr = nn_dereg_mr,					\
	.iflush = nn_iflush,						\
	.test = nn_test,						\
	.close_send = nn_close_send,					\
	.close_recv = nn_close_recv,					\
	.close_listen = nn_close_listen,				\
	.get_device_mr = get_device_mr,					\
	.irecv_consumed = irecv_consumed

EXPORT const struct nn_net_v8 ncclNetPlugin_v8 = {
	.name = NN_NAME,
	.init = nn_init,
	.devices = nn_devices,
	.get_properties = props_v8,
	.listen = nn_listen,
	.connect = connect_any,
	.accept = accept_any,
	.isend = isend_v8,
	.irecv = irecv_v8,
	COMMON_TAIL,
};

EXPORT const struct nn_net_v9 ncclNetPlugin_v9 = {
	.name = NN_NAME,
	.init = nn_init,
	.devices = nn_devices,
	.get_properties = props_v9,
	.listen = nn_listen,
	.connect = connect_any,
	.accept = accept_any,
	.isend = isend_v9,
	.irecv = irecv_v9,
	COMMON_TAIL,
	.make_vdevice = vdev_v9,
};

EXPORT const struct nn_net_v10 ncclNetPlugin_v10 = {
	.name = NN_NAME,
	.init = init_v10,
	.devices = nn_devices,
	.get_properties = props_v9,
	.listen = nn_listen,
	.connect = connect_v10,
	.accept = accept_any,
	.isend = isend_v10,
	.irecv = irecv_v10,
	COMMON_TAIL,
	.make_vdevice = vdev_v9,
};

EXPORT const struct nn_net_v11 ncclNetPlugin_v11 = {
	.name = NN_NAME,
	.init = init_v11,
	.devices = nn_devices,
	.get_properties = props_v11,
	.listen = listen_v11,
	.connect = connect_v11,
	.accept = accept_any,
	.isend = isend_v10,
	.irecv = irecv_v10,
	COMMON_TAIL,
	.make_vdevice = vdev_v9,
	.finalize = nn_finalize,
	.set_net_attr = set_net_attr,
};

EXPORT const struct nn_net_v12 ncclNetPlugin_v12 = {
	.name = NN_NAME,
	.init = init_v11,
	.devices = nn_devices,
	.get_properties = props_v12,
	.listen = listen_v11,
	.connect = connect_v11,
	.accept = accept_any,
	.isend = isend_v10,
	.irecv = irecv_v10,
	COMMON_TAIL,
	.make_vdevice = vdev_v12,
	.finalize = nn_finalize,
	.set_net_attr = set_net_attr,
};
