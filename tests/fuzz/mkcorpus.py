#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes the seed corpora in tests/fuzz/corpus/<target>/: small valid and
edge inputs in each target's input format (see the comment at the top of
each tests/fuzz/fuzz_*.c).  Run it again after a format changes; the files
are committed, so the fuzzers never need it."""

import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, seeds):
    d = os.path.join(HERE, "corpus", target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


# ------------------------------------------------------------ fuzz_nics

def nics():
    s = {
        "two": b"mlx5_0,mlx5_1:2",
        "one": b"mlx5_0",
        "exclude": b"^rxe0",
        "exclude-match": b"^rxe0,rxe1:1\0rxe1\0\x01",
        "match-port": b"mlx5_0:1,mlx5_0:2\0mlx5_0\0\x02",
        "port-255": b"rxe0:1,rxe1:255",
        "port-256": b"a:256",
        "port-0": b"a:0",
        "port-zeros": b"a:007",
        "port-huge": b"a:99999999999999999999",
        "port-neg": b"a:-1",
        "port-junk": b"a:1x,b:1:2",
        "empty": b"",
        "caret": b"^",
        "empty-entry": b"a,,b",
        "trailing-comma": b"a,",
        "no-name": b":1",
        "ctrl": b"a\nb",
        "name-63": b"x" * 63,
        "name-64": b"x" * 64,
        "entries-64": b",".join([b"n"] * 64),
        "entries-65": b",".join([b"n"] * 65),
        "long-64": b",".join([b"%02d" % i + b"y" * 61 + b":%d" % (i + 1)
                              for i in range(64)]),
    }
    write("fuzz_nics", s)


# ------------------------------------------------------------ fuzz_bootstrap

MAGIC, VERSION = 0x42433252, 1
F_ROOT, F_SMALLBUF, F_SEQ = 1, 2, 4
RAW, HDR, PAY, CLOSE = 0, 1, 2, 3
T_HELLO, T_WELCOME, T_DATA = 0, 1, 2


def setup(flags, world, extra, lens, seq0=None):
    b = bytes([flags, world - 2, extra, len(lens)])
    for n in lens:
        b += struct.pack("<H", n)
    if seq0 is not None:
        b += struct.pack("<I", seq0)
    return b


def op(kind, conn=0):
    return bytes([kind << 3 | conn])


def hdr(t, conn=0, rank=None, world=None, seq=None, length=None,
        status=None, magic=None, version=None, reserved=None):
    m, args = 0, b""
    for bit, v, fmt in ((0x01, rank, "<I"), (0x02, world, "<I"),
                        (0x04, seq, "<I"), (0x08, length, "<I"),
                        (0x10, status, "<B"), (0x20, magic, "<I"),
                        (0x40, version, "<H"), (0x80, reserved, "<I")):
        if v is not None:
            m |= bit
            args += struct.pack(fmt, v)
    return op(HDR, conn) + bytes([t, m]) + args


def pay(conn=0, byte=0x55):
    return op(PAY, conn) + bytes([byte])


def raw(data, conn=0):
    out = b""
    while True:
        out += op(RAW, conn) + bytes([min(len(data), 255)]) + data[:255]
        data = data[255:]
        if not data:
            return out


def close(conn=0, full=False, later=False):
    return op(CLOSE, conn) + bytes([(1 if full else 0) | (2 if later else 0)])


def packed(typ, rank, world, seq=0, length=0, status=0):
    return struct.pack("<IHHIIIIII", MAGIC, VERSION, typ, rank, world, seq,
                       length, status, 0)


def bootstrap():
    s = {}
    # Root: the library is rank 0.
    s["root-one-round"] = (setup(F_ROOT, 2, 0, [16]) + hdr(T_HELLO) +
                           hdr(T_DATA) + pay())
    w4 = setup(F_ROOT, 4, 0, [8, 0])
    for c in range(3):
        w4 += hdr(T_HELLO, c)
    for c in range(3):
        w4 += hdr(T_DATA, c) + pay(c, 0x10 + c) + hdr(T_DATA, c)
    s["root-4-two-rounds"] = w4
    s["root-dup-rank"] = (setup(F_ROOT, 3, 1, [4]) + hdr(T_HELLO, 0) +
                          hdr(T_HELLO, 2))
    s["root-not-boot"] = (setup(F_ROOT, 2, 0, []) +
                          raw(b"GET / HTTP/1.0\r\n\r\n"))
    h = packed(1, 1, 2)
    s["root-split-hello"] = (setup(F_ROOT, 2, 0, [4]) + raw(h[:5]) +
                             raw(h[5:17]) + raw(h[17:]) + hdr(T_DATA) +
                             pay())
    s["root-bad-world"] = (setup(F_ROOT, 2, 0, []) +
                           hdr(T_HELLO, world=5))
    s["root-rank-0"] = setup(F_ROOT, 2, 0, []) + hdr(T_HELLO, rank=0)
    s["root-gone"] = (setup(F_ROOT, 2, 0, [4]) + hdr(T_HELLO) +
                      close(full=True))
    s["root-gone-later"] = (setup(F_ROOT, 3, 0, [4]) + hdr(T_HELLO, 0) +
                            hdr(T_HELLO, 1) + hdr(T_DATA, 0) + pay(0) +
                            hdr(T_DATA, 1) + pay(1) + close(1, later=True))
    s["root-short"] = (setup(F_ROOT, 2, 0, [4]) + hdr(T_HELLO) +
                       hdr(T_DATA) + raw(b"ab"))
    s["root-bad-len"] = (setup(F_ROOT, 2, 0, [4]) + hdr(T_HELLO) +
                         hdr(T_DATA, length=99) + pay())
    s["root-status-from-rank"] = (setup(F_ROOT, 2, 0, [0]) + hdr(T_HELLO) +
                                  hdr(T_DATA, status=1))
    s["root-seq-wrap"] = (setup(F_ROOT | F_SEQ, 2, 0, [4, 4], 0xffffffff) +
                          hdr(T_HELLO) + hdr(T_DATA) + pay() + hdr(T_DATA) +
                          pay(0, 0x66))
    w3 = setup(F_ROOT, 3, 0, [4]) + hdr(T_HELLO, 1) + hdr(T_HELLO, 0)
    s["root-half-data"] = w3 + hdr(T_DATA, 0) + pay(0)
    # Rank: the library is rank 1 (or 3 of 4).
    s["rank-one-round"] = (setup(0, 2, 0, [16]) + hdr(T_WELCOME) +
                           hdr(T_DATA) + pay())
    s["rank-4-three-rounds"] = (setup(0, 4, 2, [4, 0, 100]) +
                                hdr(T_WELCOME) + hdr(T_DATA) + pay() +
                                hdr(T_DATA) + hdr(T_DATA) + pay(0, 1))
    s["rank-welcome-gone"] = setup(0, 2, 0, []) + hdr(T_WELCOME, status=3)
    s["rank-welcome-len"] = setup(0, 2, 0, []) + hdr(T_WELCOME, length=4)
    s["rank-welcome-wrong-rank"] = (setup(0, 2, 0, []) +
                                    hdr(T_WELCOME, rank=2))
    s["rank-nothing"] = setup(0, 2, 0, [8])
    s["rank-status-proto"] = (setup(0, 2, 0, [8]) + hdr(T_WELCOME) +
                              hdr(T_DATA, status=1))
    s["rank-status-timeout"] = (setup(0, 2, 0, [8]) + hdr(T_WELCOME) +
                                hdr(T_DATA, status=2))
    s["rank-small-buf"] = (setup(F_SMALLBUF, 2, 0, [2048, 2048]) +
                           hdr(T_WELCOME) + hdr(T_DATA) + pay())
    s["rank-root-gone"] = (setup(0, 2, 0, [8]) + hdr(T_WELCOME) +
                           close(full=True))
    s["rank-root-said-why"] = (setup(0, 2, 0, [8]) + hdr(T_WELCOME) +
                               hdr(T_DATA, status=3) + close(later=True))
    s["rank-garbage"] = (setup(0, 2, 0, [8]) + hdr(T_WELCOME) +
                         raw(bytes(range(64))))
    s["rank-bad-magic"] = (setup(0, 2, 0, [8]) + hdr(T_WELCOME) +
                           hdr(T_DATA, magic=0x52324342))
    s["rank-bad-version"] = (setup(0, 2, 0, [8]) + hdr(T_WELCOME) +
                             hdr(T_DATA, version=2, reserved=1))
    s["rank-big-len"] = (setup(0, 8, 6, [2048]) + hdr(T_WELCOME) +
                         hdr(T_DATA) + pay(0, 0xee))
    write("fuzz_bootstrap", s)


# ------------------------------------------------------------ fuzz_env

SLOTS = ["opts.root", "R2CC_ROOT", "MASTER_ADDR", "MASTER_PORT",
         "R2CC_WORLD_SIZE", "WORLD_SIZE", "R2CC_RANK", "RANK",
         "R2CC_BOOT_TIMEOUT_MS", "R2CC_CHUNK_SIZE", "R2CC_STALL_MS",
         "R2CC_RAIL_DEPTH", "R2CC_PEER_TIMEOUT_MS", "R2CC_IB_TIMEOUT",
         "R2CC_TCP_FALLBACK", "R2CC_SOCKET_IFNAME"]
F_USIZE, F_DEFAULT, F_LIAR, F_ZERO_TAIL, F_IFNAME_OPT = 1, 2, 4, 8, 16
F_RESERVED, F_TUNE_OPTS = 32, 64
OPTS_SIZE = 32		# sizeof(struct r2cc_boot_opts) on x86-64


def env(vals, flags=0, rank=-1, world=0, timeout=0, usize=0, fallback=0,
        tail=b"", reserved=None, tune=None):
    mask, strs = 0, b""
    extra = b""
    if reserved is not None:
        flags |= F_RESERVED
        extra += struct.pack("<I", reserved)
    if tune is not None:
        flags |= F_TUNE_OPTS
        extra += struct.pack("<4I", *tune)
    for i, name in enumerate(SLOTS):
        if name in vals:
            mask |= 1 << i
            strs += vals[name] + b"\0"
    return (struct.pack("<HBiiIHB", mask, flags, rank, world, timeout,
                        usize, fallback) + extra + strs + tail)


def envs():
    s = {
        "opts-root": env({"opts.root": b"127.0.0.1:29500"}, rank=0,
                         world=2),
        "env-v6": env({"R2CC_ROOT": b"[::1]:1234",
                       "R2CC_WORLD_SIZE": b"4", "R2CC_RANK": b"3"}),
        "torchrun": env({"MASTER_ADDR": b"[fe80::1]",
                         "MASTER_PORT": b"29500", "WORLD_SIZE": b"8",
                         "RANK": b"7"}),
        "torchrun-name": env({"MASTER_ADDR": b"node-0.cluster",
                              "MASTER_PORT": b"1", "WORLD_SIZE": b"65536",
                              "RANK": b"65535"}),
        "world-1": env({}, rank=0, world=1),
        "world-1-env": env({"R2CC_WORLD_SIZE": b"1", "R2CC_RANK": b"0"}),
        "no-port": env({"opts.root": b"host"}, rank=0, world=2),
        "port-0": env({"opts.root": b"host:0"}, rank=0, world=2),
        "port-65536": env({"opts.root": b"host:65536"}, rank=1, world=2),
        "bare-v6": env({"opts.root": b"::1:80"}, rank=0, world=2),
        "v6-no-colon": env({"opts.root": b"[::1]80"}, rank=0, world=2),
        "v6-empty": env({"opts.root": b"[]:80"}, rank=0, world=2),
        "host-255": env({"opts.root": b"h" * 255 + b":1"}, rank=0, world=2),
        "host-256": env({"opts.root": b"h" * 256 + b":1"}, rank=0, world=2),
        "rank-big": env({"R2CC_ROOT": b"a:1", "R2CC_RANK": b"2",
                         "R2CC_WORLD_SIZE": b"2"}),
        "rank-spaces": env({"R2CC_ROOT": b"a:1", "RANK": b" 1",
                            "WORLD_SIZE": b"+2"}),
        "rank-overflow": env({"R2CC_ROOT": b"a:1",
                              "RANK": b"99999999999999999999",
                              "WORLD_SIZE": b"65537"}),
        "timeout-max": env({"R2CC_BOOT_TIMEOUT_MS": b"4294967295"},
                           rank=0, world=1),
        "timeout-over": env({"R2CC_BOOT_TIMEOUT_MS": b"4294967296"},
                            rank=0, world=1),
        "timeout-0": env({"R2CC_BOOT_TIMEOUT_MS": b"0"}, rank=0, world=1),
        "default-opts": env({"R2CC_ROOT": b"10.0.0.1:5",
                             "R2CC_RANK": b"1", "WORLD_SIZE": b"3"},
                            flags=F_DEFAULT),
        "size-16": env({"opts.root": b"a:1", "R2CC_RANK": b"0",
                        "R2CC_WORLD_SIZE": b"1"}, flags=F_USIZE, usize=16),
        "size-8": env({"R2CC_RANK": b"0", "R2CC_WORLD_SIZE": b"1"},
                      flags=F_USIZE, usize=8),
        "size-0": env({}, flags=F_USIZE, usize=0, rank=0, world=1),
        "size-12": env({}, flags=F_USIZE, usize=12, rank=0, world=1),
        "size-4096-zero": env({}, flags=F_USIZE | F_ZERO_TAIL, usize=4096,
                              rank=0, world=1),
        "size-4104": env({}, flags=F_USIZE | F_ZERO_TAIL, usize=4104,
                         rank=0, world=1),
        "size-48-tail": env({}, flags=F_USIZE, usize=OPTS_SIZE + 8,
                            rank=0, world=1, tail=b"\0\0\0\0\0\0\0\1"),
        "size-liar": env({}, flags=F_LIAR, usize=0, rank=0, world=1),
        "tune-ok": env({"R2CC_CHUNK_SIZE": b"0x10000",
                        "R2CC_STALL_MS": b"60000",
                        "R2CC_RAIL_DEPTH": b"128",
                        "R2CC_PEER_TIMEOUT_MS": b"100",
                        "R2CC_IB_TIMEOUT": b"31",
                        "R2CC_TCP_FALLBACK": b"0",
                        "R2CC_SOCKET_IFNAME": b"eth0"}, rank=0, world=1),
        "tune-bad": env({"R2CC_CHUNK_SIZE": b"67108865",
                         "R2CC_RAIL_DEPTH": b"-1",
                         "R2CC_IB_TIMEOUT": b"08"}, rank=0, world=1),
        "tune-ifname-16": env({"R2CC_SOCKET_IFNAME": b"i" * 16},
                              rank=0, world=1),
        "tune-ifname-opt": env({"R2CC_SOCKET_IFNAME": b"ib0"},
                               flags=F_IFNAME_OPT, fallback=2, rank=0,
                               world=1),
        "reserved": env({}, rank=0, world=1, reserved=1),
        "tune-opts": env({"R2CC_CHUNK_SIZE": b"x"}, rank=0, world=1,
                         tune=[1 << 20, 250, 16, 30000]),
        "timeout-opts": env({}, rank=0, world=1, timeout=1),
        "tune-empty": env({"R2CC_CHUNK_SIZE": b"", "R2CC_STALL_MS": b"0"},
                          rank=0, world=1),
    }
    write("fuzz_env", s)


if __name__ == "__main__":
    nics()
    bootstrap()
    envs()
    sys.exit(0)
