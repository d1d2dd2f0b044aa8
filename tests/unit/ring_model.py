#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""scripts/ring-schedule-model.py against closed forms, the figures
Documentation/coll.rst quotes from it, and bad arguments."""
import importlib.util
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
from tap import TAP  # noqa: E402

SCRIPT = os.path.join(here, "..", "..", "scripts", "ring-schedule-model.py")
spec = importlib.util.spec_from_file_location("model", SCRIPT)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
t = TAP()


def near(a, b):
    return abs(a - b) < 1e-9


# The equal ring on equal links, one slice a chunk: 2 (n - 1) / n.
bad = [n for n in range(2, 10)
       if not near(m.allreduce_time(n, [1.0] * n, [1.0 / n] * n, 1, 1),
                   2 * (n - 1) / n)]
t.ok(not bad, f"equal ring, equal links: 2(n-1)/n D/B (wrong for {bad})")

# Every link but two carries a lone chunk twice: 2 D/B, plus the fill of
# a chain of k slices, (n - 3) / k, when the receiver may run ahead.
bad = []
for n in range(3, 9):
    w = [0.0] * n
    w[1] = 1.0
    if not near(m.allreduce_time(n, [1.0] * n, w, 16, 16, sets=8),
                2 + (n - 3) / 16):
        bad.append(n)
t.ok(not bad, f"one chunk, equal links: 2 + (n-3)/k D/B (wrong for {bad})")

# More sets or no barrier never make it slower; the ring is not
# sensitive to either on equal links.
link = [0.5, 0.5, 1.0, 1.0]
w = [0.0, 1.0, 0.0, 0.0]
times = [m.allreduce_time(4, link, w, 64, 16, sets=k) for k in range(2, 9)]
t.ok(all(b <= a + 1e-9 for a, b in zip(times, times[1:])),
     f"weighted ring: more sets, never slower ({times})")
t.ok(m.allreduce_time(4, link, w, 16, 4, barrier=False)
     <= m.allreduce_time(4, link, w, 16, 4) + 1e-9,
     "weighted ring: no barrier, never slower")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args],
                          capture_output=True, text=True)


# The figures of Documentation/coll.rst ("The engine's schedule").
for args, want in ((["--slice", "256", "--depth", "4"], "1.17"),
                   (["--slice", "64", "--depth", "16"], "1.04"),
                   (["--slice", "64", "--depth", "16", "--sets", "4"],
                    "0.79")):
    r = run(*args)
    t.ok(r.returncode == 0 and f"weighted/ring {want} " in r.stdout,
         f"{' '.join(args)}: weighted/ring {want} ({r.stdout.strip()})")

for args in (["--ranks", "1"], ["--sets", "1"], ["--beta", "0"],
             ["--beta", "1.5"], ["--degraded", "4"], ["--slice", "0"],
             ["--weights", "1", "2"], ["--weights", "0", "0", "0", "0"],
             ["--weights", "-1", "1", "1", "1"], ["--depth", "x"],
             ["--bogus"]):
    r = run(*args)
    t.ok(r.returncode == 2 and "error" in r.stderr,
         f"{' '.join(args)}: exit 2 with a message")
t.done()
