/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The NCCL network plugin ABI, versions 8 to 12, as NCCL lays it out: the
 * tables NCCL looks up by the symbols ncclNetPlugin_v8 .. _v12 in the
 * library NCCL_NET_PLUGIN names, and the structs passed through them.
 * Written from NCCL's documented layouts (src/include/plugin/net/net_v*.h,
 * nccl_common.h and nccl_device/net_device.h in NCCL's sources); the
 * names are ours.  tests/unit/nccl_layout.c pins every offset.
 *
 * What changed between versions, as far as this plugin is concerned:
 *   v8 (NCCL 2.20)  int sizes on isend/irecv;
 *   v9 (2.24)       size_t sizes, forceFlush, vProps (4 devices), maxP2pBytes,
 *                   maxCollBytes, makeVDevice;
 *   v10 (2.26)      init takes a profiler callback, connect a comm config
 *                   (traffic class), isend/irecv profiler handles;
 *   v11 (2.28)      init once per communicator with a context, listen and
 *                   connect take it, finalize and setNetAttr,
 *                   maxMultiRequestSize;
 *   v12 (2.30)      vProps of 8 devices, railId and planeId.
 */
#ifndef R2CC_NCCL_ABI_H
#define R2CC_NCCL_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ncclResult_t */
typedef enum {
	NN_SUCCESS = 0,
	NN_UNHANDLED_CUDA_ERROR = 1,
	NN_SYSTEM_ERROR = 2,
	NN_INTERNAL_ERROR = 3,
	NN_INVALID_ARGUMENT = 4,
	NN_INVALID_USAGE = 5,
	NN_REMOTE_ERROR = 6,
	NN_IN_PROGRESS = 7,
} nn_result_t;

/* ncclDebugLogLevel, and the NCCL_NET subsystem flag of the logger */
enum nn_log_level {
	NN_LOG_NONE = 0,
	NN_LOG_VERSION = 1,
	NN_LOG_WARN = 2,
	NN_LOG_INFO = 3,
	NN_LOG_ABORT = 4,
	NN_LOG_TRACE = 5,
};
#define NN_SUBSYS_INIT	0x1ul
#define NN_SUBSYS_NET	0x10ul

typedef void (*nn_logger_t)(enum nn_log_level level, unsigned long flags,
			    const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
typedef nn_result_t (*nn_profiler_t)(void **handle, int type, void *phandle,
				     int64_t plugin_id, void *ext);

#define NN_PTR_HOST	0x1
#define NN_PTR_CUDA	0x2
#define NN_PTR_DMABUF	0x4

#define NN_HANDLE_MAXSIZE	128	/* NCCL_NET_HANDLE_MAXSIZE */
#define NN_MAX_REQUESTS		32	/* NCCL_NET_MAX_REQUESTS, per comm */
#define NN_DEVICE_HOST		0	/* ncclNetDeviceType: no offload */

/* ncclNetDeviceHandle_v7_t, the same through v12; unused (no offload). */
struct nn_dev_handle {
	int type;
	int version;
	void *handle;
	size_t size;
	int needs_proxy_progress;
};

struct nn_props_v8 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;		/* NN_PTR_* */
	int reg_is_global;
	int speed;			/* Mbit/s */
	int port;
	float latency;			/* us */
	int max_comms;
	int max_recvs;
	int net_device_type;
	int net_device_version;
};

#define NN_VDEV_MAX_V9	4
#define NN_VDEV_MAX_V12	8

struct nn_vprops_v9 {			/* also v10, v11 */
	int ndevs;
	int devs[NN_VDEV_MAX_V9];
};

struct nn_vprops_v12 {
	int ndevs;
	int devs[NN_VDEV_MAX_V12];
};

struct nn_props_v9 {			/* also v10 */
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int net_device_type;
	int net_device_version;
	struct nn_vprops_v9 vprops;
	size_t max_p2p_bytes;
	size_t max_coll_bytes;
};

struct nn_props_v11 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int net_device_type;
	int net_device_version;
	struct nn_vprops_v9 vprops;
	size_t max_p2p_bytes;
	size_t max_coll_bytes;
	int max_multi_request_size;
};

struct nn_props_v12 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int net_device_type;
	int net_device_version;
	struct nn_vprops_v12 vprops;
	size_t max_p2p_bytes;
	size_t max_coll_bytes;
	int max_multi_request_size;
	int16_t rail_id;
	int16_t plane_id;
};

/* ncclNetCommConfig_v10_t .. v12 */
struct nn_comm_config {
	int traffic_class;		/* -1: undefined */
};

/* ncclNetAttr_v11_t, v12: hints from NCCL's tuner (ignored here) */
struct nn_comm_attr {
	int32_t max_concurrent_peers;
	int32_t min_concurrent_peers;
	int32_t max_flows_per_peer;
	int32_t min_flows_per_peer;
};

struct nn_net_attr {
	struct nn_comm_attr send;
	struct nn_comm_attr recv;
	uint32_t op;
	uint32_t algo;
	uint32_t proto;
};

struct nn_net_v8 {
	const char *name;
	nn_result_t (*init)(nn_logger_t log);
	nn_result_t (*devices)(int *ndev);
	nn_result_t (*get_properties)(int dev, struct nn_props_v8 *props);
	nn_result_t (*listen)(int dev, void *handle, void **listen_comm);
	nn_result_t (*connect)(int dev, void *handle, void **send_comm,
			       struct nn_dev_handle **send_dev);
	nn_result_t (*accept)(void *listen_comm, void **recv_comm,
			      struct nn_dev_handle **recv_dev);
	nn_result_t (*reg_mr)(void *comm, void *data, size_t size, int type,
			      void **mhandle);
	nn_result_t (*reg_mr_dmabuf)(void *comm, void *data, size_t size,
				     int type, uint64_t offset, int fd,
				     void **mhandle);
	nn_result_t (*dereg_mr)(void *comm, void *mhandle);
	nn_result_t (*isend)(void *send_comm, void *data, int size, int tag,
			     void *mhandle, void **request);
	nn_result_t (*irecv)(void *recv_comm, int n, void **data, int *sizes,
			     int *tags, void **mhandles, void **request);
	nn_result_t (*iflush)(void *recv_comm, int n, void **data, int *sizes,
			      void **mhandles, void **request);
	nn_result_t (*test)(void *request, int *done, int *sizes);
	nn_result_t (*close_send)(void *send_comm);
	nn_result_t (*close_recv)(void *recv_comm);
	nn_result_t (*close_listen)(void *listen_comm);
	nn_result_t (*get_device_mr)(void *comm, void *mhandle, void **dptr);
	nn_result_t (*irecv_consumed)(void *recv_comm, int n, void *request);
};

struct nn_net_v9 {
	const char *name;
	nn_result_t (*init)(nn_logger_t log);
	nn_result_t (*devices)(int *ndev);
	nn_result_t (*get_properties)(int dev, struct nn_props_v9 *props);
	nn_result_t (*listen)(int dev, void *handle, void **listen_comm);
	nn_result_t (*connect)(int dev, void *handle, void **send_comm,
			       struct nn_dev_handle **send_dev);
	nn_result_t (*accept)(void *listen_comm, void **recv_comm,
			      struct nn_dev_handle **recv_dev);
	nn_result_t (*reg_mr)(void *comm, void *data, size_t size, int type,
			      void **mhandle);
	nn_result_t (*reg_mr_dmabuf)(void *comm, void *data, size_t size,
				     int type, uint64_t offset, int fd,
				     void **mhandle);
	nn_result_t (*dereg_mr)(void *comm, void *mhandle);
	nn_result_t (*isend)(void *send_comm, void *data, size_t size, int tag,
			     void *mhandle, void **request);
	nn_result_t (*irecv)(void *recv_comm, int n, void **data,
			     size_t *sizes, int *tags, void **mhandles,
			     void **request);
	nn_result_t (*iflush)(void *recv_comm, int n, void **data, int *sizes,
			      void **mhandles, void **request);
	nn_result_t (*test)(void *request, int *done, int *sizes);
	nn_result_t (*close_send)(void *send_comm);
	nn_result_t (*close_recv)(void *recv_comm);
	nn_result_t (*close_listen)(void *listen_comm);
	nn_result_t (*get_device_mr)(void *comm, void *mhandle, void **dptr);
	nn_result_t (*irecv_consumed)(void *recv_comm, int n, void *request);
	nn_result_t (*make_vdevice)(int *d, struct nn_vprops_v9 *props);
};

struct nn_net_v10 {
	const char *name;
	nn_result_t (*init)(nn_logger_t log, nn_profiler_t prof);
	nn_result_t (*devices)(int *ndev);
	nn_result_t (*get_properties)(int dev, struct nn_props_v9 *props);
	nn_result_t (*listen)(int dev, void *handle, void **listen_comm);
	nn_result_t (*connect)(int dev, struct nn_comm_config *config,
			       void *handle, void **send_comm,
			       struct nn_dev_handle **send_dev);
	nn_result_t (*accept)(void *listen_comm, void **recv_comm,
			      struct nn_dev_handle **recv_dev);
	nn_result_t (*reg_mr)(void *comm, void *data, size_t size, int type,
			      void **mhandle);
	nn_result_t (*reg_mr_dmabuf)(void *comm, void *data, size_t size,
				     int type, uint64_t offset, int fd,
				     void **mhandle);
	nn_result_t (*dereg_mr)(void *comm, void *mhandle);
	nn_result_t (*isend)(void *send_comm, void *data, size_t size, int tag,
			     void *mhandle, void *phandle, void **request);
	nn_result_t (*irecv)(void *recv_comm, int n, void **data,
			     size_t *sizes, int *tags, void **mhandles,
			     void **phandles, void **request);
	nn_result_t (*iflush)(void *recv_comm, int n, void **data, int *sizes,
			      void **mhandles, void **request);
	nn_result_t (*test)(void *request, int *done, int *sizes);
	nn_result_t (*close_send)(void *send_comm);
	nn_result_t (*close_recv)(void *recv_comm);
	nn_result_t (*close_listen)(void *listen_comm);
	nn_result_t (*get_device_mr)(void *comm, void *mhandle, void **dptr);
	nn_result_t (*irecv_consumed)(void *recv_comm, int n, void *request);
	nn_result_t (*make_vdevice)(int *d, struct nn_vprops_v9 *props);
};

/* v11 and v12 differ only in the props and vprops they pass. */
#define NN_NET_V11_LIKE(props_t, vprops_t)				\
	const char *name;						\
	nn_result_t (*init)(void **ctx, uint64_t comm_id,		\
			    struct nn_comm_config *config,		\
			    nn_logger_t log, nn_profiler_t prof);	\
	nn_result_t (*devices)(int *ndev);				\
	nn_result_t (*get_properties)(int dev, props_t *props);		\
	nn_result_t (*listen)(void *ctx, int dev, void *handle,		\
			      void **listen_comm);			\
	nn_result_t (*connect)(void *ctx, int dev, void *handle,	\
			       void **send_comm,			\
			       struct nn_dev_handle **send_dev);	\
	nn_result_t (*accept)(void *listen_comm, void **recv_comm,	\
			      struct nn_dev_handle **recv_dev);		\
	nn_result_t (*reg_mr)(void *comm, void *data, size_t size,	\
			      int type, void **mhandle);		\
	nn_result_t (*reg_mr_dmabuf)(void *comm, void *data,		\
				     size_t size, int type,		\
				     uint64_t offset, int fd,		\
				     void **mhandle);			\
	nn_result_t (*dereg_mr)(void *comm, void *mhandle);		\
	nn_result_t (*isend)(void *send_comm, void *data, size_t size,	\
			     int tag, void *mhandle, void *phandle,	\
			     void **request);				\
	nn_result_t (*irecv)(void *recv_comm, int n, void **data,	\
			     size_t *sizes, int *tags, void **mhandles,	\
			     void **phandles, void **request);		\
	nn_result_t (*iflush)(void *recv_comm, int n, void **data,	\
			      int *sizes, void **mhandles,		\
			      void **request);				\
	nn_result_t (*test)(void *request, int *done, int *sizes);	\
	nn_result_t (*close_send)(void *send_comm);			\
	nn_result_t (*close_recv)(void *recv_comm);			\
	nn_result_t (*close_listen)(void *listen_comm);			\
	nn_result_t (*get_device_mr)(void *comm, void *mhandle,		\
				     void **dptr);			\
	nn_result_t (*irecv_consumed)(void *recv_comm, int n,		\
				      void *request);			\
	nn_result_t (*make_vdevice)(int *d, vprops_t *props);		\
	nn_result_t (*finalize)(void *ctx);				\
	nn_result_t (*set_net_attr)(void *ctx, struct nn_net_attr *attr)

struct nn_net_v11 {
	NN_NET_V11_LIKE(struct nn_props_v11, struct nn_vprops_v9);
};

struct nn_net_v12 {
	NN_NET_V11_LIKE(struct nn_props_v12, struct nn_vprops_v12);
};

#endif /* R2CC_NCCL_ABI_H */
