# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
"""r2cc, the fault-tolerant RDMA collectives, as a torch.distributed backend.

Importing this package registers the backend "r2cc":

    import torch.distributed as dist
    import r2cc_torch

    dist.init_process_group("r2cc")   # under torchrun, or with init_method
    dist.all_reduce(t)                # t: a contiguous CPU tensor
    print(r2cc_torch.stats())         # the communicator's counters

r2cc rendezvouses on its own (its bootstrap, a TCP listener at the
group's rank 0): at $R2CC_ROOT ("host:port") if set; else rank 0 of the
group takes a free port on its address towards $MASTER_ADDR and tells the
others through torch's store, so that every group gets its own.  Supported:
all_reduce (SUM, AVG, PRODUCT, MIN, MAX on int8, uint8, int32, int64,
float16, bfloat16, float32, float64), all_reduce_coalesced, reduce,
broadcast, all_gather, _all_gather_base, reduce_scatter,
_reduce_scatter_base and barrier, which is what DistributedDataParallel
needs.  Other collectives raise RuntimeError.

Dropping a group is collective (r2cc_comm_destroy() waits up to 30 s for
every rank), so drop it at the same point on every rank.
"""

import os
import socket

import torch.distributed as dist

from ._C import ProcessGroupR2cc

__all__ = ["ProcessGroupR2cc", "stats"]


def _local_addr(peer):
    """This host's address on the route to @peer (no packet is sent)."""
    family = socket.AF_INET6 if ":" in peer else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.connect((peer, 9))
        return s.getsockname()[0]


def _free_port(addr):
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def _root(store, rank):
    """The group's rendezvous, agreed through @store (prefixed per group
    by torch): "" to let the library read $R2CC_ROOT or $MASTER_ADDR."""
    master = os.environ.get("MASTER_ADDR")
    if os.environ.get("R2CC_ROOT") or not master:
        return ""
    if rank == 0:
        addr = _local_addr(master)
        host = "[%s]" % addr if ":" in addr else addr
        store.set("r2cc_root", "%s:%d" % (host, _free_port(addr)))
    return store.get("r2cc_root").decode()


def _create(store, rank, world_size, timeout):
    # torch 1.13 calls a plugin's creator with (prefix_store, group_rank,
    # group_size, timeout: timedelta).
    return ProcessGroupR2cc(store, rank, world_size, timeout,
                            _root(store, rank))


# Backend.register_backend() refuses a name twice (importlib.reload).
if not hasattr(dist.Backend, "R2CC"):
    dist.Backend.register_backend("r2cc", _create)


def stats(pg=None):
    """The r2cc counters of @pg (default: the default process group), a
    dict: colls, bytes_sent, bytes_received, failovers, resent_bytes,
    tcp_bytes, colls_rd, rd_max, colls_weighted, colls_optimal."""
    if pg is None:
        pg = dist.distributed_c10d._get_default_group()
    if not isinstance(pg, ProcessGroupR2cc):
        raise TypeError("r2cc: %r is not an r2cc process group" % (pg,))
    return pg.stats()
