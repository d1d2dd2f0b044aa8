/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libnccl-net-r2cc: the one implementation behind every version's table
 * (entry.c).  It stands on libr2cc's public API only.
 *
 * dev.c: the plugin's state, devices, properties, virtual devices and one
 * libr2cc context per device; comm.c: listen, connect, accept, memory,
 * isend/irecv/test and close.  Calls arrive on NCCL's threads (init and
 * properties on the application's, setup on the proxy's service thread,
 * data on its progress thread); libr2cc's per-context lock orders them.
 */
#ifndef R2CC_NCCL_PLUGIN_H
#define R2CC_NCCL_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <r2cc/r2cc.h>

#include "abi.h"

#define NN_NAME		"r2cc"
#define NN_MAX_DEVS	64	/* physical NICs and virtual devices */
#define NN_VDEV_MAX	NN_VDEV_MAX_V12

extern nn_logger_t nn_log_fn;

#define NN_LOG(lvl, ...)						\
	do {								\
		if (nn_log_fn)						\
			nn_log_fn(lvl, NN_SUBSYS_NET, __FILE__, __LINE__,	\
				  __VA_ARGS__);				\
	} while (0)
#define NN_WARN(...)	NN_LOG(NN_LOG_WARN, "NET/r2cc : " __VA_ARGS__)
#define NN_INFO(...)	NN_LOG(NN_LOG_INFO, "NET/r2cc : " __VA_ARGS__)

/* Properties, whatever the version asking. */
struct nn_props {
	const char *name;
	const char *pci_path;
	uint64_t guid;
	int ptr_support;
	int speed;		/* Mbit/s */
	int port;
	int max_comms;
	int max_recvs;
	int ndevs;		/* physical devices fused into it */
	int devs[NN_VDEV_MAX];
	size_t max_p2p_bytes;
};

/* A device NCCL sees: one NIC, or several fused by makeVDevice. */
struct nn_dev {
	int ndevs;
	int devs[NN_VDEV_MAX];		/* physical NIC indices, primaries */
	char name[128];
	struct r2cc_ctx *ctx;		/* NICs: primaries, then standbys */
	int nrails;			/* NICs in ctx */
};

/* dev.c */
nn_result_t nn_init(nn_logger_t log);
nn_result_t nn_devices(int *ndev);
nn_result_t nn_get_props(int dev, struct nn_props *p);
nn_result_t nn_make_vdevice(int *d, int ndevs, const int *devs, int max);
/* The device's context, created on first use; NULL after a logged error. */
struct nn_dev *nn_dev_get(int dev);
/* Primary rails of a connection on @d (struct r2cc_conn_opts.primary). */
uint64_t nn_dev_primary(const struct nn_dev *d);
nn_result_t nn_ctx_new(void **ctx, const struct nn_comm_config *config);
nn_result_t nn_finalize(void *ctx);
nn_result_t nn_errno(int err);

/* comm.c */
nn_result_t nn_listen(int dev, void *handle, void **listen_comm);
nn_result_t nn_connect(int dev, void *handle, void **send_comm);
nn_result_t nn_accept(void *listen_comm, void **recv_comm);
nn_result_t nn_reg_mr(void *comm, void *data, size_t size, int type,
		      void **mhandle);
nn_result_t nn_reg_mr_dmabuf(void *comm, void *data, size_t size, int type,
			     uint64_t offset, int fd, void **mhandle);
nn_result_t nn_dereg_mr(void *comm, void *mhandle);
nn_result_t nn_isend(void *send_comm, void *data, size_t size, int tag,
		     void *mhandle, void **request);
nn_result_t nn_irecv(void *recv_comm, int n, void **data,
		     const size_t *sizes, const int *tags, void **mhandles,
		     void **request);
nn_result_t nn_iflush(void *recv_comm, int n, void **data, int *sizes,
		      void **mhandles, void **request);
nn_result_t nn_test(void *request, int *done, int *sizes);
nn_result_t nn_close_send(void *send_comm);
nn_result_t nn_close_recv(void *recv_comm);
nn_result_t nn_close_listen(void *listen_comm);
/*
 * dev.c counts the comms open (comm.c tells it of each one made and
 * closed): finalize leaves the contexts while there are some.
 */
void nn_dev_comm_opened(void);
void nn_dev_comm_closed(void);

#endif /* R2CC_NCCL_PLUGIN_H */
