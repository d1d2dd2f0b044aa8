# SPDX-License-Identifier: GPL-2.0-only
"""TAP 13 for Python tests, kselftest exit codes (0 pass, 1 fail, 4 skip)."""
import sys


class TAP:
    def __init__(self):
        self.n = 0
        self.failed = 0
        print("TAP version 13", flush=True)

    def ok(self, cond, desc):
        self.n += 1
        if not cond:
            self.failed += 1
        print(f"{'' if cond else 'not '}ok {self.n} - {desc}", flush=True)
        return cond

    def diag(self, msg):
        for line in str(msg).splitlines():
            print(f"# {line}", flush=True)

    def skip_all(self, why):
        print(f"1..0 # SKIP {why}", flush=True)
        sys.exit(4)

    def done(self):
        print(f"1..{self.n}", flush=True)
        sys.exit(1 if self.failed else 0)
