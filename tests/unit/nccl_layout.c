// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NCCL plugin's ABI (plugins/nccl/abi.h) against NCCL's own layouts on
 * x86-64: the size of every struct, the offset and size of every member,
 * the argument types that tell one version's table from the next, and the
 * constants NCCL and the plugin must agree on.  NCCL finds the tables by
 * symbol and reads them by offset, so a member one slot off is a call
 * through the wrong pointer, and nothing else would catch it.
 *
 * The expected numbers are not derived from abi.h: they were printed by a
 * throwaway program compiled against NCCL's headers (NVIDIA/nccl master,
 * commit 5067397c2676, June 2026: src/include/plugin/nccl_net.h,
 * plugin/net/net_v8.h .. net_v12.h, nccl_common.h and
 * nccl_device/net_device.h, with CUDA 12's nccl.h for ncclResult_t) with
 * g++ on x86-64, and are kept here as literals.  NCCL's type and member
 * names are given with each check so a failure says where to look.
 */
#include <stddef.h>
#include <stdint.h>

#include "../../plugins/nccl/abi.h"

#include "tap.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct field {
	const char *nccl;		/* NCCL's member */
	const char *ours;
	size_t off, size;		/* abi.h's */
	size_t want_off, want_size;	/* NCCL's */
};

struct layout {
	const char *what;		/* the versions it serves */
	const char *nccl;		/* NCCL's type */
	const char *ours;
	size_t size, want_size;
	const struct field *f;
	size_t n;
};

#define F(type, m, nccl, o, s)						\
	{ nccl, #m, offsetof(type, m), sizeof(((type *)0)->m), o, s }

#define LAYOUT(what, nccl, type, want, arr)				\
	{ what, nccl, #type, sizeof(type), want, arr, ARRAY_SIZE(arr) }

/* ncclNetProperties_v8_t: sizeof 64 */
#define T struct nn_props_v8
static const struct field props_v8[] = {
	F(T, name, "name", 0, 8),
	F(T, pci_path, "pciPath", 8, 8),
	F(T, guid, "guid", 16, 8),
	F(T, ptr_support, "ptrSupport", 24, 4),
	F(T, reg_is_global, "regIsGlobal", 28, 4),
	F(T, speed, "speed", 32, 4),
	F(T, port, "port", 36, 4),
	F(T, latency, "latency", 40, 4),
	F(T, max_comms, "maxComms", 44, 4),
	F(T, max_recvs, "maxRecvs", 48, 4),
	F(T, net_device_type, "netDeviceType", 52, 4),
	F(T, net_device_version, "netDeviceVersion", 56, 4),
};
#undef T

/*
 * ncclNetProperties_v9_t and _v10_t: sizeof 104 each, member for member
 * the same (both printed); abi.h serves both with one struct.
 */
#define T struct nn_props_v9
static const struct field props_v9[] = {
	F(T, name, "name", 0, 8),
	F(T, pci_path, "pciPath", 8, 8),
	F(T, guid, "guid", 16, 8),
	F(T, ptr_support, "ptrSupport", 24, 4),
	F(T, reg_is_global, "regIsGlobal", 28, 4),
	F(T, force_flush, "forceFlush", 32, 4),
	F(T, speed, "speed", 36, 4),
	F(T, port, "port", 40, 4),
	F(T, latency, "latency", 44, 4),
	F(T, max_comms, "maxComms", 48, 4),
	F(T, max_recvs, "maxRecvs", 52, 4),
	F(T, net_device_type, "netDeviceType", 56, 4),
	F(T, net_device_version, "netDeviceVersion", 60, 4),
	F(T, vprops, "vProps", 64, 20),
	F(T, max_p2p_bytes, "maxP2pBytes", 88, 8),
	F(T, max_coll_bytes, "maxCollBytes", 96, 8),
};
#undef T

/* ncclNetProperties_v11_t: sizeof 112 */
#define T struct nn_props_v11
static const struct field props_v11[] = {
	F(T, name, "name", 0, 8),
	F(T, pci_path, "pciPath", 8, 8),
	F(T, guid, "guid", 16, 8),
	F(T, ptr_support, "ptrSupport", 24, 4),
	F(T, reg_is_global, "regIsGlobal", 28, 4),
	F(T, force_flush, "forceFlush", 32, 4),
	F(T, speed, "speed", 36, 4),
	F(T, port, "port", 40, 4),
	F(T, latency, "latency", 44, 4),
	F(T, max_comms, "maxComms", 48, 4),
	F(T, max_recvs, "maxRecvs", 52, 4),
	F(T, net_device_type, "netDeviceType", 56, 4),
	F(T, net_device_version, "netDeviceVersion", 60, 4),
	F(T, vprops, "vProps", 64, 20),
	F(T, max_p2p_bytes, "maxP2pBytes", 88, 8),
	F(T, max_coll_bytes, "maxCollBytes", 96, 8),
	F(T, max_multi_request_size, "maxMultiRequestSize", 104, 4),
};
#undef T

/* ncclNetProperties_v12_t: sizeof 128 (vProps of 8 moves the tail) */
#define T struct nn_props_v12
static const struct field props_v12[] = {
	F(T, name, "name", 0, 8),
	F(T, pci_path, "pciPath", 8, 8),
	F(T, guid, "guid", 16, 8),
	F(T, ptr_support, "ptrSupport", 24, 4),
	F(T, reg_is_global, "regIsGlobal", 28, 4),
	F(T, force_flush, "forceFlush", 32, 4),
	F(T, speed, "speed", 36, 4),
	F(T, port, "port", 40, 4),
	F(T, latency, "latency", 44, 4),
	F(T, max_comms, "maxComms", 48, 4),
	F(T, max_recvs, "maxRecvs", 52, 4),
	F(T, net_device_type, "netDeviceType", 56, 4),
	F(T, net_device_version, "netDeviceVersion", 60, 4),
	F(T, vprops, "vProps", 64, 36),
	F(T, max_p2p_bytes, "maxP2pBytes", 104, 8),
	F(T, max_coll_bytes, "maxCollBytes", 112, 8),
	F(T, max_multi_request_size, "maxMultiRequestSize", 120, 4),
	F(T, rail_id, "railId", 124, 2),
	F(T, plane_id, "planeId", 126, 2),
};
#undef T

/* ncclNetVDeviceProps_v9_t, _v10_t, _v11_t: sizeof 20 each */
#define T struct nn_vprops_v9
static const struct field vprops_v9[] = {
	F(T, ndevs, "ndevs", 0, 4),
	F(T, devs, "devs", 4, 16),
};
#undef T

/* ncclNetVDeviceProps_v12_t: sizeof 36 */
#define T struct nn_vprops_v12
static const struct field vprops_v12[] = {
	F(T, ndevs, "ndevs", 0, 4),
	F(T, devs, "devs", 4, 32),
};
#undef T

/* ncclNetDeviceHandle_v8_t (= _v7_t, and _v9_t .. _v12_t): sizeof 32 */
#define T struct nn_dev_handle
static const struct field dev_handle[] = {
	F(T, type, "netDeviceType", 0, 4),
	F(T, version, "netDeviceVersion", 4, 4),
	F(T, handle, "handle", 8, 8),
	F(T, size, "size", 16, 8),
	F(T, needs_proxy_progress, "needsProxyProgress", 24, 4),
};
#undef T

/* ncclNetCommConfig_v10_t, _v11_t, _v12_t: sizeof 4 each */
#define T struct nn_comm_config
static const struct field comm_config[] = {
	F(T, traffic_class, "trafficClass", 0, 4),
};
#undef T

/* ncclNetCommAttr_v11_t, _v12_t: sizeof 16 each */
#define T struct nn_comm_attr
static const struct field comm_attr[] = {
	F(T, max_concurrent_peers, "maxConcurrentPeers", 0, 4),
	F(T, min_concurrent_peers, "minConcurrentPeers", 4, 4),
	F(T, max_flows_per_peer, "maxFlowsPerPeer", 8, 4),
	F(T, min_flows_per_peer, "minFlowsPerPeer", 12, 4),
};
#undef T

/* ncclNetAttr_v11_t, _v12_t: sizeof 44 each */
#define T struct nn_net_attr
static const struct field net_attr[] = {
	F(T, send, "sendCommAttr", 0, 16),
	F(T, recv, "recvCommAttr", 16, 16),
	F(T, op, "op", 32, 4),
	F(T, algo, "algo", 36, 4),
	F(T, proto, "proto", 40, 4),
};
#undef T

/*
 * The members every table has, at the offsets NCCL printed for each of
 * ncclNet_v8_t .. ncclNet_v12_t (the same in all five).
 */
#define NET_COMMON(T)							\
	F(T, name, "name", 0, 8),					\
	F(T, init, "init", 8, 8),					\
	F(T, devices, "devices", 16, 8),				\
	F(T, get_properties, "getProperties", 24, 8),			\
	F(T, listen, "listen", 32, 8),					\
	F(T, connect, "connect", 40, 8),				\
	F(T, accept, "accept", 48, 8),					\
	F(T, reg_mr, "regMr", 56, 8),					\
	F(T, reg_mr_dmabuf, "regMrDmaBuf", 64, 8),			\
	F(T, dereg_mr, "deregMr", 72, 8),				\
	F(T, isend, "isend", 80, 8),					\
	F(T, irecv, "irecv", 88, 8),					\
	F(T, iflush, "iflush", 96, 8),					\
	F(T, test, "test", 104, 8),					\
	F(T, close_send, "closeSend", 112, 8),				\
	F(T, close_recv, "closeRecv", 120, 8),				\
	F(T, close_listen, "closeListen", 128, 8),			\
	F(T, get_device_mr, "getDeviceMr", 136, 8),			\
	F(T, irecv_consumed, "irecvConsumed", 144, 8)

/* ncclNet_v8_t: sizeof 152 */
static const struct field net_v8[] = {
	NET_COMMON(struct nn_net_v8),
};

/* ncclNet_v9_t: sizeof 160 */
static const struct field net_v9[] = {
	NET_COMMON(struct nn_net_v9),
	F(struct nn_net_v9, make_vdevice, "makeVDevice", 152, 8),
};

/* ncclNet_v10_t: sizeof 160 */
static const struct field net_v10[] = {
	NET_COMMON(struct nn_net_v10),
	F(struct nn_net_v10, make_vdevice, "makeVDevice", 152, 8),
};

/* ncclNet_v11_t: sizeof 176 */
static const struct field net_v11[] = {
	NET_COMMON(struct nn_net_v11),
	F(struct nn_net_v11, make_vdevice, "makeVDevice", 152, 8),
	F(struct nn_net_v11, finalize, "finalize", 160, 8),
	F(struct nn_net_v11, set_net_attr, "setNetAttr", 168, 8),
};

/* ncclNet_v12_t: sizeof 176 */
static const struct field net_v12[] = {
	NET_COMMON(struct nn_net_v12),
	F(struct nn_net_v12, make_vdevice, "makeVDevice", 152, 8),
	F(struct nn_net_v12, finalize, "finalize", 160, 8),
	F(struct nn_net_v12, set_net_attr, "setNetAttr", 168, 8),
};

static const struct layout layouts[] = {
	LAYOUT("v8", "ncclNetProperties_v8_t", struct nn_props_v8, 64,
	       props_v8),
	LAYOUT("v9/v10", "ncclNetProperties_v9_t", struct nn_props_v9, 104,
	       props_v9),
	LAYOUT("v11", "ncclNetProperties_v11_t", struct nn_props_v11, 112,
	       props_v11),
	LAYOUT("v12", "ncclNetProperties_v12_t", struct nn_props_v12, 128,
	       props_v12),
	LAYOUT("v9/v10/v11", "ncclNetVDeviceProps_v9_t", struct nn_vprops_v9,
	       20, vprops_v9),
	LAYOUT("v12", "ncclNetVDeviceProps_v12_t", struct nn_vprops_v12, 36,
	       vprops_v12),
	LAYOUT("v8..v12", "ncclNetDeviceHandle_v8_t", struct nn_dev_handle,
	       32, dev_handle),
	LAYOUT("v10..v12", "ncclNetCommConfig_v10_t", struct nn_comm_config,
	       4, comm_config),
	LAYOUT("v11/v12", "ncclNetCommAttr_v11_t", struct nn_comm_attr, 16,
	       comm_attr),
	LAYOUT("v11/v12", "ncclNetAttr_v11_t", struct nn_net_attr, 44,
	       net_attr),
	LAYOUT("v8", "ncclNet_v8_t", struct nn_net_v8, 152, net_v8),
	LAYOUT("v9", "ncclNet_v9_t", struct nn_net_v9, 160, net_v9),
	LAYOUT("v10", "ncclNet_v10_t", struct nn_net_v10, 160, net_v10),
	LAYOUT("v11", "ncclNet_v11_t", struct nn_net_v11, 176, net_v11),
	LAYOUT("v12", "ncclNet_v12_t", struct nn_net_v12, 176, net_v12),
};

#define NLAYOUTS ARRAY_SIZE(layouts)

/*
 * Offsets alone would not catch an isend that takes an int where NCCL
 * passes a size_t, or a v11 getProperties handed v9's struct: these are
 * the argument lists that differ between versions, as NCCL declares them
 * (in our types, whose layouts are pinned above).
 */
struct sig {
	const char *what;
	int ok;
};

#define SIG(ver, T, m, proto)						\
	{ ver " " #m ": " #proto,					\
	  __builtin_types_compatible_p(__typeof__(((T *)0)->m), proto) }

#define SIGT(type, proto)						\
	{ #type ": " #proto, __builtin_types_compatible_p(type, proto) }

static const struct sig sigs[] = {
	SIG("v8", struct nn_net_v8, init, nn_result_t (*)(nn_logger_t)),
	SIG("v8", struct nn_net_v8, get_properties,
	    nn_result_t (*)(int, struct nn_props_v8 *)),
	SIG("v8", struct nn_net_v8, listen,
	    nn_result_t (*)(int, void *, void **)),
	SIG("v8", struct nn_net_v8, connect,
	    nn_result_t (*)(int, void *, void **, struct nn_dev_handle **)),
	SIG("v8", struct nn_net_v8, isend,
	    nn_result_t (*)(void *, void *, int, int, void *, void **)),
	SIG("v8", struct nn_net_v8, irecv,
	    nn_result_t (*)(void *, int, void **, int *, int *, void **,
			    void **)),
	SIG("v8", struct nn_net_v8, iflush,
	    nn_result_t (*)(void *, int, void **, int *, void **, void **)),
	SIG("v8", struct nn_net_v8, test,
	    nn_result_t (*)(void *, int *, int *)),

	SIG("v9", struct nn_net_v9, init, nn_result_t (*)(nn_logger_t)),
	SIG("v9", struct nn_net_v9, get_properties,
	    nn_result_t (*)(int, struct nn_props_v9 *)),
	SIG("v9", struct nn_net_v9, connect,
	    nn_result_t (*)(int, void *, void **, struct nn_dev_handle **)),
	SIG("v9", struct nn_net_v9, isend,
	    nn_result_t (*)(void *, void *, size_t, int, void *, void **)),
	SIG("v9", struct nn_net_v9, irecv,
	    nn_result_t (*)(void *, int, void **, size_t *, int *, void **,
			    void **)),
	SIG("v9", struct nn_net_v9, iflush,
	    nn_result_t (*)(void *, int, void **, int *, void **, void **)),
	SIG("v9", struct nn_net_v9, make_vdevice,
	    nn_result_t (*)(int *, struct nn_vprops_v9 *)),

	SIG("v10", struct nn_net_v10, init,
	    nn_result_t (*)(nn_logger_t, nn_profiler_t)),
	SIG("v10", struct nn_net_v10, get_properties,
	    nn_result_t (*)(int, struct nn_props_v9 *)),
	SIG("v10", struct nn_net_v10, listen,
	    nn_result_t (*)(int, void *, void **)),
	SIG("v10", struct nn_net_v10, connect,
	    nn_result_t (*)(int, struct nn_comm_config *, void *, void **,
			    struct nn_dev_handle **)),
	SIG("v10", struct nn_net_v10, isend,
	    nn_result_t (*)(void *, void *, size_t, int, void *, void *,
			    void **)),
	SIG("v10", struct nn_net_v10, irecv,
	    nn_result_t (*)(void *, int, void **, size_t *, int *, void **,
			    void **, void **)),
	SIG("v10", struct nn_net_v10, make_vdevice,
	    nn_result_t (*)(int *, struct nn_vprops_v9 *)),

	SIG("v11", struct nn_net_v11, init,
	    nn_result_t (*)(void **, uint64_t, struct nn_comm_config *,
			    nn_logger_t, nn_profiler_t)),
	SIG("v11", struct nn_net_v11, get_properties,
	    nn_result_t (*)(int, struct nn_props_v11 *)),
	SIG("v11", struct nn_net_v11, listen,
	    nn_result_t (*)(void *, int, void *, void **)),
	SIG("v11", struct nn_net_v11, connect,
	    nn_result_t (*)(void *, int, void *, void **,
			    struct nn_dev_handle **)),
	SIG("v11", struct nn_net_v11, isend,
	    nn_result_t (*)(void *, void *, size_t, int, void *, void *,
			    void **)),
	SIG("v11", struct nn_net_v11, irecv,
	    nn_result_t (*)(void *, int, void **, size_t *, int *, void **,
			    void **, void **)),
	SIG("v11", struct nn_net_v11, make_vdevice,
	    nn_result_t (*)(int *, struct nn_vprops_v9 *)),
	SIG("v11", struct nn_net_v11, finalize, nn_result_t (*)(void *)),
	SIG("v11", struct nn_net_v11, set_net_attr,
	    nn_result_t (*)(void *, struct nn_net_attr *)),

	SIG("v12", struct nn_net_v12, init,
	    nn_result_t (*)(void **, uint64_t, struct nn_comm_config *,
			    nn_logger_t, nn_profiler_t)),
	SIG("v12", struct nn_net_v12, get_properties,
	    nn_result_t (*)(int, struct nn_props_v12 *)),
	SIG("v12", struct nn_net_v12, listen,
	    nn_result_t (*)(void *, int, void *, void **)),
	SIG("v12", struct nn_net_v12, connect,
	    nn_result_t (*)(void *, int, void *, void **,
			    struct nn_dev_handle **)),
	SIG("v12", struct nn_net_v12, make_vdevice,
	    nn_result_t (*)(int *, struct nn_vprops_v12 *)),
	SIG("v12", struct nn_net_v12, finalize, nn_result_t (*)(void *)),
	SIG("v12", struct nn_net_v12, set_net_attr,
	    nn_result_t (*)(void *, struct nn_net_attr *)),

	/* ncclDebugLogger_t and ncclProfilerCallback_t */
	SIGT(nn_logger_t,
	     void (*)(enum nn_log_level, unsigned long, const char *, int,
		      const char *, ...)),
	SIGT(nn_profiler_t,
	     nn_result_t (*)(void **, int, void *, int64_t, void *)),
};

#define NSIGS ARRAY_SIZE(sigs)

/* Constants and enum values NCCL's headers define (printed likewise). */
struct konst {
	const char *what;
	long got, want;
};

#define K(ours, nccl, want) { #ours " = " nccl, (long)(ours), want }

static const struct konst konsts[] = {
	K(NN_SUCCESS, "ncclSuccess", 0),
	K(NN_UNHANDLED_CUDA_ERROR, "ncclUnhandledCudaError", 1),
	K(NN_SYSTEM_ERROR, "ncclSystemError", 2),
	K(NN_INTERNAL_ERROR, "ncclInternalError", 3),
	K(NN_INVALID_ARGUMENT, "ncclInvalidArgument", 4),
	K(NN_INVALID_USAGE, "ncclInvalidUsage", 5),
	K(NN_REMOTE_ERROR, "ncclRemoteError", 6),
	K(NN_IN_PROGRESS, "ncclInProgress", 7),
	K(sizeof(nn_result_t), "sizeof(ncclResult_t)", 4),
	K(NN_LOG_NONE, "NCCL_LOG_NONE", 0),
	K(NN_LOG_VERSION, "NCCL_LOG_VERSION", 1),
	K(NN_LOG_WARN, "NCCL_LOG_WARN", 2),
	K(NN_LOG_INFO, "NCCL_LOG_INFO", 3),
	K(NN_LOG_ABORT, "NCCL_LOG_ABORT", 4),
	K(NN_LOG_TRACE, "NCCL_LOG_TRACE", 5),
	K(sizeof(enum nn_log_level), "sizeof(ncclDebugLogLevel)", 4),
	K(NN_SUBSYS_INIT, "NCCL_INIT", 0x1),
	K(NN_SUBSYS_NET, "NCCL_NET", 0x10),
	K(NN_PTR_HOST, "NCCL_PTR_HOST", 0x1),
	K(NN_PTR_CUDA, "NCCL_PTR_CUDA", 0x2),
	K(NN_PTR_DMABUF, "NCCL_PTR_DMABUF", 0x4),
	K(NN_HANDLE_MAXSIZE, "NCCL_NET_HANDLE_MAXSIZE", 128),
	K(NN_MAX_REQUESTS, "NCCL_NET_MAX_REQUESTS", 32),
	K(NN_DEVICE_HOST, "NCCL_NET_DEVICE_HOST", 0),
	K(NN_VDEV_MAX_V9, "NCCL_NET_MAX_DEVS_PER_NIC_V11", 4),
	K(NN_VDEV_MAX_V12, "NCCL_NET_MAX_DEVS_PER_NIC_V12", 8),
};

#define NKONSTS ARRAY_SIZE(konsts)

static void check_layout(const struct layout *l)
{
	size_t i;

	tap_ok(l->size == l->want_size, "%s %s: sizeof %zu (abi.h %s)",
	       l->what, l->nccl, l->want_size, l->ours);
	if (l->size != l->want_size)
		tap_diag("%s is %zu bytes", l->ours, l->size);
	for (i = 0; i < l->n; i++) {
		const struct field *f = &l->f[i];
		int good = f->off == f->want_off && f->size == f->want_size;

		tap_ok(good, "%s %s.%s: offset %zu, size %zu (abi.h %s)",
		       l->what, l->nccl, f->nccl, f->want_off, f->want_size,
		       f->ours);
		if (!good)
			tap_diag("%s.%s is at %zu, %zu bytes", l->ours,
				 f->ours, f->off, f->size);
	}
}

int main(void)
{
	unsigned int n = NSIGS + NKONSTS;
	size_t i;

#if !defined(__x86_64__) || !defined(__LP64__)
	tap_skip_all("the numbers pinned here are NCCL's on x86-64");
#endif
	for (i = 0; i < NLAYOUTS; i++)
		n += 1 + (unsigned int)layouts[i].n;
	tap_plan(n);
	for (i = 0; i < NLAYOUTS; i++)
		check_layout(&layouts[i]);
	for (i = 0; i < NSIGS; i++)
		tap_ok(sigs[i].ok, "%s", sigs[i].what);
	for (i = 0; i < NKONSTS; i++) {
		tap_ok(konsts[i].got == konsts[i].want, "%s (%ld)",
		       konsts[i].what, konsts[i].want);
		if (konsts[i].got != konsts[i].want)
			tap_diag("abi.h has %ld", konsts[i].got);
	}
	return tap_done();
}
