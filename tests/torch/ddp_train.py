#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A small DDP training run, one rank per node, for the r2cc backend's tests.

A two-layer perceptron learns a fixed random linear map from synthetic
data.  Every rank draws its own batches (seed 1000 + rank), so the ranks'
gradients differ and DDP's allreduce has real work; the model starts from
the same seed everywhere (and DDP broadcasts rank 0's parameters anyway).
With a deterministic reduction a run is a function of the seeds: the same
losses, step for step, whether or not a NIC failed underneath.

One process runs several trainings (--runs r2cc,r2cc,gloo), each on a
process group of its own, because importing torch is the slow part in an
emulated node.  The default group (gloo, on $CTL_IFNAME) only keeps the
runs in step; a gloo run uses $GLOO_RUN_IFNAME.

Prints, for the harness:
  started                       once the default group is up
  run: K BACKEND                as run K starts
  step: K I LOSS SECONDS        per step (LOSS with repr(), every bit)
  params: K SHA256              of every parameter's bytes after run K
  ops: K ok|bad WHAT            with --check-ops, after an r2cc run
  result: K steps=N backend=B [r2cc stats as key=value]
Environment: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE (torchrun's).
"""
import argparse
import hashlib
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def check_ops(pg, rank, world):
    """The backend's other collectives against values computed here: the
    paths through its flattening (coalesced allreduce, allgather into a
    list, reduce-scatter from a list) and the rooted ones.  Returns, for
    each that came out wrong, its name and what it gave."""
    bad = []
    tri = world * (world + 1) / 2  # sum of rank + 1 over the ranks

    def expect(name, got, want):
        if not torch.equal(got, want):
            bad.append(f"{name} {got.tolist()} != {want.tolist()}")

    a = torch.full((3,), rank + 1.0)
    b = torch.arange(5.0) * (rank + 1)  # coalesced: one dtype
    dist.all_reduce_coalesced([a, b], group=pg)
    expect("allreduce_coalesced[0]", a, torch.full((3,), tri))
    expect("allreduce_coalesced[1]", b, torch.arange(5.0) * tri)
    outs = [torch.empty(4, dtype=torch.int32) for _ in range(world)]
    dist.all_gather(outs, torch.full((4,), rank, dtype=torch.int32), group=pg)
    for i in range(world):
        expect(f"allgather[{i}]", outs[i],
               torch.full((4,), i, dtype=torch.int32))
    flat = torch.empty(world * 2, dtype=torch.int64)
    dist._all_gather_base(flat, torch.full((2,), rank * 10), group=pg)
    expect("_allgather_base", flat,
           torch.arange(world).repeat_interleave(2) * 10)
    out = torch.empty(2, dtype=torch.int64)
    dist.reduce_scatter(out, [torch.full((2,), rank + i) for i in range(world)],
                        group=pg)
    # sum over r of (r + rank): world * rank + world * (world - 1) / 2
    expect("reduce_scatter", out,
           torch.full((2,), world * rank + world * (world - 1) // 2))
    t = torch.full((3,), float(rank))
    dist.broadcast(t, src=world - 1, group=pg)
    expect("broadcast", t, torch.full((3,), float(world - 1)))
    t = torch.full((2,), rank + 1.0)
    dist.reduce(t, dst=0, group=pg)
    expect("reduce", t, torch.full((2,), tri if rank == 0 else rank + 1.0))
    return bad


def train(k, backend, a, rank):
    if backend == "gloo":
        os.environ["GLOO_SOCKET_IFNAME"] = os.environ.get("GLOO_RUN_IFNAME",
                                                          "eth0")
    pg = dist.new_group(backend=backend)
    print(f"run: {k} {backend}", flush=True)
    torch.manual_seed(0)
    din, dout = 64, 16
    target = torch.randn(din, dout)
    model = torch.nn.Sequential(torch.nn.Linear(din, a.hidden),
                                torch.nn.Tanh(),
                                torch.nn.Linear(a.hidden, dout))
    ddp = DDP(model, process_group=pg)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1000 + rank)

    for i in range(a.steps):
        t0 = time.monotonic()
        x = torch.randn(a.batch, din, generator=gen)
        loss = torch.nn.functional.mse_loss(ddp(x), x @ target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step: {k} {i} {loss.item()!r} {time.monotonic() - t0:.4f}",
              flush=True)
        if a.step_ms:
            time.sleep(a.step_ms / 1000)

    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    print(f"params: {k} {h.hexdigest()}", flush=True)
    if backend == "r2cc" and a.check_ops:
        bad = check_ops(pg, rank, dist.get_world_size())
        print(f"ops: {k} {'bad ' + '; '.join(bad) if bad else 'ok'}",
              flush=True)
    extra = ""
    if backend == "r2cc":
        import r2cc_torch
        s = r2cc_torch.stats(pg)
        extra = " " + " ".join(f"{key}={v}" for key, v in sorted(s.items()))
    print(f"result: {k} steps={a.steps} backend={backend}{extra}", flush=True)
    del ddp
    dist.destroy_process_group(pg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default="r2cc",
                    help="comma-separated backends, one training each")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--step-ms", type=int, default=0,
                    help="sleep between steps, so a fault lands mid-run")
    ap.add_argument("--check-ops", action="store_true",
                    help="after each r2cc training, check the backend's "
                    "other collectives (prints ops: K ok|bad ...)")
    a = ap.parse_args()
    runs = a.runs.split(",")
    if a.steps < 1 or a.hidden < 1 or a.batch < 1 or a.step_ms < 0:
        ap.error("--steps, --hidden, --batch must be >= 1, --step-ms >= 0")
    if any(b not in ("r2cc", "gloo") for b in runs):
        ap.error("--runs: r2cc or gloo, comma-separated")

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    if "r2cc" in runs:
        import r2cc_torch  # noqa: F401  (registers the backend)
    os.environ["GLOO_SOCKET_IFNAME"] = os.environ.get("CTL_IFNAME", "lo")
    dist.init_process_group("gloo", init_method="env://")
    rank = dist.get_rank()
    print("started", flush=True)
    for k, backend in enumerate(runs):
        dist.barrier()
        train(k, backend, a, rank)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
