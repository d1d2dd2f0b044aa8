#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The ring engine's schedule (lib/coll/ring.c) as a timed graph.

lib/coll/model/weight.c sizes the weighted ring's chunks with a fluid model:
every link busy all the time, only the bytes per link count.  The engine
is not fluid.  Each link sends its messages in a fixed order (batch,
step, slice), and a message leaves only when

  - the sender has it (it received the slice the step before),
  - the receiver has a free slot for it: receive step k of a batch uses
    slot set k % sets, and a slot is free again once the receiver has
    forwarded what it held (R2CC_COLL_SETS),
  - with the batch barrier, the previous batch finished everywhere.

This script walks that graph: each message takes size / link bandwidth,
no latency, and prints the allreduce time of the ring and of the weighted
ring for the engine's settings, in units of D / B (the data over one
healthy node's bandwidth).  It is the model that explains why the
weighted ring measured slower than the ring (Documentation/coll.rst,
"The engine's schedule"); lib/coll/model/sched.c walks the same graph in the
library, where auto asks it whether to run an allreduce weighted
(tests/unit/coll_weight checks both give the figures coll.rst quotes).

  ring-schedule-model.py [--ranks N] [--beta B] [--degraded R...]
                         [--size KIB] [--slice KIB] [--depth N]
                         [--sets N] [--no-barrier] [--weights W...]

Without --weights the weighted ring's chunks are the fluid model's
optimum for one degraded rank at beta <= 1/2: the whole data in the
degraded rank's own chunk.
"""
import argparse
import sys


def chunk_sent(n, r, t):
    """The chunk rank r sends at step t of an allreduce (lib/coll/plan.c)."""
    if t < n - 1:
        return (r - 1 - t) % n
    return (r - (t - (n - 1))) % n


def allreduce_time(n, link_bw, weights, nslices, depth, sets=2,
                   barrier=True):
    """Finish time of the last message; link r is rank r -> r + 1."""
    steps = 2 * n - 2
    free = [0.0] * n
    done = {}
    end = 0.0
    for b in range((nslices + depth - 1) // depth):
        bn = min(depth, nslices - b * depth)
        start = end if barrier else 0.0
        for t in range(steps):
            for j in range(bn):
                for r in range(n):
                    at = max(free[r], start)
                    if t > 0:
                        at = max(at, done[((r - 1) % n, b, t - 1, j)])
                    prev = slot_previous(b, t, sets, steps)
                    if prev is not None:
                        pb, pt = prev
                        # freed by the receiver's forward, or, after the
                        # last step, once it was stored
                        key = ((r + 1) % n, pb, pt + 1, j) \
                            if pt + 1 < steps else (r, pb, pt, j)
                        at = max(at, done.get(key, 0.0))
                    size = weights[chunk_sent(n, r, t)] / nslices
                    done[(r, b, t, j)] = at + size / link_bw[r]
                    free[r] = done[(r, b, t, j)]
        end = max(free)
    return end


def slot_previous(b, t, sets, steps):
    """(batch, step) that last received into the slot step t uses."""
    if t >= sets:
        return (b, t - sets)
    if b == 0:
        return None
    same = [x for x in range(steps) if x % sets == t % sets]
    return (b - 1, max(same))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--beta", type=float, default=0.5)
    p.add_argument("--degraded", type=int, nargs="*", default=[1])
    p.add_argument("--size", type=int, default=4096, help="KiB")
    p.add_argument("--slice", type=int, default=256, help="KiB")
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--sets", type=int, default=2)
    p.add_argument("--no-barrier", action="store_true")
    p.add_argument("--weights", type=float, nargs="*")
    a = p.parse_args(argv)
    n = a.ranks
    if n < 2 or a.size < 1 or a.slice < 1 or a.depth < 1 or a.sets < 2 \
            or not 0 < a.beta <= 1 \
            or any(not 0 <= d < n for d in a.degraded):
        p.error("want --ranks >= 2, sizes >= 1, --sets >= 2, "
                "0 < --beta <= 1, degraded ranks in 0..N-1")
    node = [1.0] * n
    for d in a.degraded:
        node[d] = a.beta
    # a link runs at the slower of its two ends (rails in common)
    link = [min(node[r], node[(r + 1) % n]) for r in range(n)]
    equal = [1.0 / n] * n
    if a.weights:
        if len(a.weights) != n or min(a.weights) < 0 or sum(a.weights) <= 0:
            p.error("--weights wants N values >= 0, not all 0")
        weighted = [w / sum(a.weights) for w in a.weights]
    else:
        weighted = [0.0] * n
        weighted[a.degraded[0] if a.degraded else 0] = 1.0
    barrier = not a.no_barrier

    def slices(w):
        return max(1, -(-int(max(w) * a.size) // a.slice))

    tr = allreduce_time(n, link, equal, slices(equal), a.depth, a.sets,
                        barrier)
    tw = allreduce_time(n, link, weighted, slices(weighted), a.depth,
                        a.sets, barrier)
    print(f"ring {tr:.3f} weighted {tw:.3f} weighted/ring {tw / tr:.2f} "
          f"(D/B units; {n} ranks, {a.slice} KiB x {a.depth}, "
          f"{a.sets} sets, barrier {'on' if barrier else 'off'})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
