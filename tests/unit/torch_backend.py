#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The r2cc torch backend on the host, where no collective can run (no RDMA
device): registration, the argument checks every collective makes, and
clean errors from a group that cannot be made.  The collectives themselves
run in tests/testbed/torch_ddp.sh.

Run by Debian's /usr/bin/python3 (python3-torch is built for it), with the
package from $R2CC_BUILD/lib/torch; skips where torch or the package is
missing."""
import datetime
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
from tap import TAP  # noqa: E402

PY = "/usr/bin/python3"
build = os.environ.get("BUILD", os.path.join(here, "..", "..", "build"))
pkg = os.path.join(build, "lib", "torch")

if os.path.realpath(sys.executable) != os.path.realpath(PY):
    # torch is Debian's interpreter's: run again under it
    if not os.path.exists(PY):
        TAP().skip_all("no " + PY)
    sys.exit(subprocess.call([PY] + sys.argv))

t = TAP()
if not os.path.exists(os.path.join(pkg, "r2cc_torch", "__init__.py")):
    t.skip_all("r2cc_torch not built (needs python3-torch, libtorch-dev, "
               "pybind11-dev)")
sys.path.insert(0, pkg)
os.environ["LD_LIBRARY_PATH"] = os.path.join(build, "lib")
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import r2cc_torch  # noqa: E402
from r2cc_torch import _C  # noqa: E402


def raises(fn, *want):
    """The RuntimeError's text if fn() raises one containing every @want,
    else None."""
    try:
        fn()
    except RuntimeError as e:
        return str(e) if all(w in str(e) for w in want) else None
    return None


t.ok(dist.Backend("r2cc") == "r2cc" and hasattr(dist.Backend, "R2CC"),
     "importing r2cc_torch registers the backend \"r2cc\"")

# r2cc's enum values (include/r2cc/coll.h)
dtypes = [(torch.int8, 0), (torch.uint8, 1), (torch.int32, 2),
          (torch.int64, 4), (torch.float16, 6), (torch.bfloat16, 7),
          (torch.float32, 8), (torch.float64, 9)]
ops = [(dist.ReduceOp.SUM, 0), (dist.ReduceOp.PRODUCT, 1),
       (dist.ReduceOp.MIN, 2), (dist.ReduceOp.MAX, 3),
       (dist.ReduceOp.AVG, 4)]
bad = [(dt, code, _C._check_reduce(torch.zeros(3, dtype=dt), op), want)
       for dt, code in dtypes for op, want in ops
       if _C._check_reduce(torch.zeros(3, dtype=dt), op) != (code, want)]
t.ok(not bad, "8 dtypes x 5 ops map to r2cc's dtype and op%s"
     % (": wrong " + repr(bad) if bad else ""))

x = torch.zeros(4)
for desc, fn, want in [
        ("bool", lambda: _C._check_reduce(torch.zeros(2, dtype=torch.bool),
                                          dist.ReduceOp.SUM),
         ("r2cc allreduce", "not supported")),
        ("int16", lambda: _C._check_reduce(torch.zeros(2, dtype=torch.int16),
                                           dist.ReduceOp.SUM),
         ("r2cc allreduce", "not supported")),
        ("complex64", lambda: _C._check_reduce(
            torch.zeros(2, dtype=torch.complex64), dist.ReduceOp.SUM),
         ("not supported",)),
        ("reduce op BOR", lambda: _C._check_reduce(x, dist.ReduceOp.BOR),
         ("reduce op", "not supported")),
        ("a strided view", lambda: _C._check_reduce(
            torch.zeros(4, 4)[:, 1], dist.ReduceOp.SUM),
         ("contiguous tensors only",)),
        ("a sparse tensor", lambda: _C._check_reduce(
            torch.zeros(4).to_sparse(), dist.ReduceOp.SUM),
         ("dense tensors only",)),
        ("a tensor on the meta device", lambda: _C._check_reduce(
            torch.zeros(4, device="meta"), dist.ReduceOp.SUM),
         ("CPU tensors only",))]:
    msg = raises(fn, *want)
    t.ok(msg is not None, "allreduce of %s: RuntimeError (%s)" % (desc, msg))

td = datetime.timedelta(seconds=2)
for k in ("R2CC_ROOT", "MASTER_ADDR", "MASTER_PORT"):
    os.environ.pop(k, None)
msg = raises(lambda: _C.ProcessGroupR2cc(dist.HashStore(), 0, 2, td),
             "set R2CC_ROOT, or MASTER_ADDR and MASTER_PORT")
t.ok(msg is not None, "no rendezvous in the environment: %s" % msg)
for port in ("65535", "0", "-1", "http", "99999999999999999999"):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    msg = raises(lambda: _C.ProcessGroupR2cc(dist.HashStore(), 0, 2, td),
                 "MASTER_PORT", "not a port")
    t.ok(msg is not None, "MASTER_PORT=%s: %s" % (port, msg))
os.environ.pop("MASTER_ADDR")
os.environ.pop("MASTER_PORT")
for root in ("nohost", "127.0.0.1:0", "127.0.0.1:99999", ":1"):
    msg = raises(lambda: _C.ProcessGroupR2cc(dist.HashStore(), 0, 2, td,
                                             root), "r2cc_boot_init")
    t.ok(msg is not None, "rendezvous %r: %s" % (root, msg))

# One rank, a good rendezvous: on this host it fails at the context (no
# RDMA device), and must say so, not crash or hang.
msg = raises(lambda: dist.init_process_group(
    "r2cc", rank=0, world_size=1, init_method="tcp://127.0.0.1:%d"
    % (20000 + os.getpid() % 20000)), "r2cc_")
t.ok(msg is not None and not dist.is_initialized(),
     "a group that cannot be made raises, and none is left behind: %s" % msg)

try:
    r2cc_torch.stats(object())
    t.ok(False, "stats() of something else raises TypeError")
except TypeError as e:
    t.ok(True, "stats() of something else raises TypeError (%s)" % e)
t.done()
