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


# ------------------------------------------------------------ fuzz_wire

W_F_RECV, W_F_HS, W_F_FALLBACK, W_F_IB = 0x01, 0x02, 0x04, 0x08
W_F_RAW, W_F_NOEOF = 0x40, 0x80
K_MSG, K_HDR, K_RAW, K_STEPS, K_TICK, K_LINK, K_APP, K_PROG = range(8)
(W_HELLO, W_HELLO_ACK, W_CTS, W_RAIL_DOWN, W_FENCED, W_NIC, W_RAIL_REQ,
 W_RAIL_ACK, W_DATA, W_MSG_ERR, W_CREDIT, W_STAGE, W_STAGE_FREE, W_RAIL_ASK,
 W_RAIL_SEEN) = range(1, 16)
WIRE_MAGIC, WIRE_VERSION = 0x63633272, 2


def wstart(flags, rails=2, seed=5, traffic=0, gpu=False):
    """Flags, rails and seed; traffic 0, 1, 4 or 12 messages."""
    t = {0: 0, 1: 1, 4: 2, 12: 3}[traffic]
    return bytes([flags | t << 4,
                  (seed >> 8) << 3 | (4 if gpu else 0) | (rails - 1),
                  seed & 0xff])


def wop(kind, arg=0):
    return bytes([arg << 3 | kind])


def wmsg(typ, m=0, fields=b""):
    """A built message: what a peer in step would send, m's fields aside."""
    return wop(K_MSG, typ - 1) + bytes([m]) + fields


def wsteps(n=256):
    return wop(K_STEPS, min(n // 32, 32) - 1)


def wtick(ms=100):
    return wop(K_TICK, min(ms // 25, 32) - 1)


def wlink(rail, up, event=True):
    return wop(K_LINK, rail | (4 if up else 0) | (8 if event else 0))


def whdr(length, typ, reserved=None, data=b""):
    arg = (1 if length > 0xffff else 0) | (2 if reserved is not None else 0)
    b = wop(K_HDR, arg) + struct.pack("<I" if arg & 1 else "<H", length)
    b += struct.pack("<H", typ)
    if reserved is not None:
        b += struct.pack("<H", reserved)
    return b + bytes([len(data)]) + data


def wraw(data):
    out = b""
    while data:
        n = min(len(data), 31 << 8 | 255)
        out += wop(K_RAW, n >> 8) + bytes([n & 0xff]) + data[:n]
        data = data[n:]
    return out


def wwrite(rail=0, pick=0, chunk=0, m=0, extra=b""):
    """An RDMA write from the frozen sender (LINK with arg & 16)."""
    return wop(K_LINK, 16 | rail) + bytes([m, pick, chunk]) + extra


def wsend(length, tag=0):
    return wop(K_APP, 0) + struct.pack("<HB", length, tag)


def wrecv(lens, tag=0):
    b = wop(K_APP, (len(lens) - 1) << 1)
    for n in lens:
        b += struct.pack("<HB", n, tag)
    return b


def wtest():
    return wop(K_APP, 1)


def wprog(n=4):
    return wop(K_PROG, n - 1)


def fenced(rail=0, entries=((0, 0),), bits=b"\xff" * 8, m=0):
    """Entries (pick, first) with 8 bitmap bytes each (up to 512 chunks)."""
    b = bytes([rail, len(entries)])
    for pick, first in entries:
        b += bytes([pick, first]) + bits
    return wmsg(W_FENCED, m, b)


def rail_msg(typ, rail=0, m=0, extra=b""):
    return wmsg(typ, m, bytes([rail]) + extra)


def credit(rail=0, less=0, m=0, extra=b""):
    """Receives posted: the sender's used + RQ_DEPTH - less."""
    return wmsg(W_CREDIT, m, bytes([rail]) + extra + bytes([less]))


def data(pick=0, chunk=0, m=0):
    return wmsg(W_DATA, m, bytes([pick, chunk]))


def cts(count=1, m=0, entries=None):
    entries = entries or [(0, 0)] * count
    b = b"".join(bytes([em, slot]) for em, slot in entries)
    return wmsg(W_CTS, (count - 1) & 3 | m, b)


def hello(typ, m=0, fields=b""):
    return wmsg(typ, m, fields)


def raw_hello(typ, nrails=2, nonce=0x1234567 | 1, chunk=4096, magic=None,
              version=None, qps=None, length=None):
    qps = qps if qps is not None else [
        struct.pack("<II16sBBH", 100 + i, 0,
                    bytes(15) + bytes([16 + i + 1]), 5, 1, 0)
        for i in range(nrails)]
    b = struct.pack("<IIQII", WIRE_MAGIC if magic is None else magic,
                    WIRE_VERSION if version is None else version, nonce,
                    chunk, nrails) + b"".join(qps)
    return struct.pack("<IHH", len(b) if length is None else length, typ,
                       0) + b


def wire():
    s = {}
    tx, rx = 0, W_F_RECV
    cut_all = b"".join(wlink(k, False) for k in range(2))
    back_all = b"".join(wlink(k, True) for k in range(2))
    # The sender: announcements, fence reports, rails coming back.
    s["tx-cts"] = wstart(tx) + cts(1) + wsteps() + cts(3) + wsteps(1024)
    s["tx-cts-traffic"] = (wstart(tx, traffic=4) + cts(2) + wsteps(512) +
                           cts(4) + wsteps(1024))
    s["tx-cts-bad-id"] = wstart(tx) + cts(1, entries=[(0x01, 0)]) + \
        struct.pack("<I", 7) + wsteps()
    s["tx-cts-too-many"] = wstart(tx) + wmsg(W_CTS, 0x04, struct.pack(
        "<I", 9) + bytes(18)) + wsteps()
    s["tx-fallback"] = (wstart(tx | W_F_FALLBACK, traffic=1) + cut_all +
                        wsteps(512) + wtick(200) + cts(4) + wsteps(1024) +
                        cts(4) + wsteps(1024))
    s["tx-fence"] = (wstart(tx, traffic=4) + wlink(0, False) + wsteps(512) +
                     fenced(0, [(0, 0), (1, 0)]) + wsteps(512) +
                     wlink(0, True) + wtick(300) + wsteps(256) +
                     rail_msg(W_RAIL_ACK) + wsteps(1024))
    s["tx-fence-parts"] = (wstart(tx, traffic=4) + rail_msg(W_RAIL_DOWN) +
                           wsteps(256) + fenced(0, [(0, 0)], m=0x10) +
                           fenced(0, [(1, 0)]) + wsteps(1024))
    s["tx-fence-bad"] = (wstart(tx, traffic=4) + rail_msg(W_RAIL_DOWN) +
                         wmsg(W_FENCED, 0x40, bytes([0, 1]) + struct.pack(
                             "<IIIIB", 0, 0, 0x7fffff, 0, 8) + bytes(8)) +
                         wsteps())
    s["tx-nic"] = (wstart(tx, traffic=1) + rail_msg(W_NIC) + wsteps() +
                   rail_msg(W_NIC, m=0x04) + wtick(300) + wsteps(512) +
                   rail_msg(W_RAIL_ACK) + wsteps(512))
    s["tx-ack-nak"] = (wstart(tx, 1) + rail_msg(W_RAIL_DOWN) + wsteps() +
                       fenced(0, []) + wtick(300) + wsteps() +
                       rail_msg(W_RAIL_ACK, m=0x20) + wtick(500) + wsteps() +
                       rail_msg(W_RAIL_ACK) + wsteps(1024))
    s["tx-ack-bad-mtu"] = (wstart(tx, 1) + rail_msg(W_RAIL_DOWN) + wsteps() +
                           fenced(0, []) + wtick(300) + wsteps() +
                           rail_msg(W_RAIL_ACK, m=0x04, extra=b"\x02\0") +
                           wtick(500) + wsteps(1024))
    s["tx-msg-err"] = (wstart(tx, traffic=4) + wmsg(W_MSG_ERR, 0, b"\0") +
                       wsteps() + wmsg(W_MSG_ERR, 0x08, b"\0\x05") + wsteps())
    s["tx-credit"] = (wstart(tx, traffic=12) + wsteps(1024) +
                      credit(0) + credit(1) + wsteps(2048) + credit(0, 3) +
                      credit(1, 3) + wsteps(2048))
    s["tx-credit-stale"] = (wstart(tx, traffic=4) + credit(0, 0, 0x02,
                                                         b"\7\0\0\0") +
                            wsteps())
    s["tx-credit-beyond"] = (wstart(tx) + wmsg(W_CREDIT, 0x04, b"\0" +
                                               struct.pack("<Q", 1 << 40)) +
                             wsteps())
    s["rx-credit"] = wstart(rx) + credit(0) + wsteps()
    # R2CC_STALL_ASK: questions to a receiver, answers to a sender (seed 5
    # draws the switch on or off; an answer to no question is stale)
    s["rx-ask"] = (wstart(rx, traffic=4) + wsteps(512) + rail_msg(W_RAIL_ASK) +
                   wsteps() + rail_msg(W_RAIL_ASK, 1, 0x02, b"\7\0\0\0") +
                   wsteps())
    s["rx-ask-reserved"] = (wstart(rx) + rail_msg(W_RAIL_ASK, m=0x08,
                                                  extra=b"\1\0\0\0") +
                            wsteps())
    s["tx-ask"] = wstart(tx) + rail_msg(W_RAIL_ASK) + wsteps()
    s["tx-seen"] = (wstart(tx, traffic=12) + wsteps(1024) +
                    rail_msg(W_RAIL_SEEN, 0, 0, b"\5") + wsteps() +
                    rail_msg(W_RAIL_SEEN, 1, 0x10, b"\0") + wtick(300) +
                    wsteps(1024) + rail_msg(W_RAIL_SEEN, 0, 0x04,
                                            b"\1\0\0\0\0") + wsteps())
    s["rx-seen"] = wstart(rx) + rail_msg(W_RAIL_SEEN, 0, 0, b"\0") + wsteps()
    s["tx-hello-again"] = wstart(tx) + hello(W_HELLO_ACK) + wsteps()
    s["tx-bad-type"] = wstart(tx) + whdr(0, 0) + wsteps()
    s["tx-bad-reserved"] = wstart(tx) + whdr(8, W_NIC, 1, bytes(8)) + wsteps()
    s["tx-too-long"] = wstart(tx) + whdr((1 << 20) + 1, W_CTS) + wsteps()
    s["tx-short"] = wstart(tx) + whdr(4, W_RAIL_DOWN, None, bytes(4)) + \
        wsteps()
    s["tx-raw"] = wstart(tx | W_F_RAW) + struct.pack(
        "<IHHII", 8, W_RAIL_DOWN, 0, 0, 0) + b"\xff" * 20
    s["tx-rail-range"] = wstart(tx) + rail_msg(W_RAIL_DOWN, 5, 0x01) + \
        b"\0\0\0" + wsteps()
    # The receiver: fallback data, rails failing and rebuilt.
    s["rx-data"] = (wstart(rx | W_F_FALLBACK, seed=9) + cut_all +
                    b"".join(data(0, k) for k in range(8)) + wsteps(1024) +
                    b"".join(data(0, k, 0x01) for k in range(8)) +
                    wsteps(1024))
    s["rx-data-traffic"] = (wstart(rx | W_F_FALLBACK, traffic=4) +
                            b"".join(data(k % 3, k // 3) for k in range(24)) +
                            wsteps(2048))
    s["rx-data-bad"] = (wstart(rx | W_F_FALLBACK) + data(0, 0, 0x08) +
                        struct.pack("<I", 4000) + wsteps())
    s["rx-data-garbage"] = (wstart(rx | W_F_FALLBACK) + data(0, 0, 0x40) +
                            struct.pack("<IB", 0, 0x33) + wsteps())
    s["rx-rail-down"] = (wstart(rx, traffic=4) + rail_msg(W_RAIL_DOWN) +
                         wsteps(512) + wtick(300) + wsteps(512))
    s["rx-rail-req"] = (wstart(rx, traffic=1) + rail_msg(W_RAIL_DOWN) +
                        wsteps(512) + wtick(300) + rail_msg(W_RAIL_REQ) +
                        wsteps(1024))
    s["rx-rail-req-up"] = (wstart(rx, 3) + rail_msg(W_RAIL_REQ, 1) +
                           wsteps(512) + rail_msg(W_RAIL_REQ, 1) + wsteps())
    s["rx-nic"] = (wstart(rx, traffic=1) + rail_msg(W_NIC) + wsteps(512) +
                   rail_msg(W_NIC, m=0x04) + wsteps())
    s["rx-msg-err"] = (wstart(rx, traffic=4) + wmsg(W_MSG_ERR, 0, b"\0") +
                       wsteps(512) + wmsg(W_MSG_ERR, 0x02, b"\1" +
                                          struct.pack("<i", -5)) + wsteps())
    s["rx-cts"] = wstart(rx) + cts(1) + wsteps()
    s["rx-fenced"] = wstart(rx) + fenced(0, []) + wsteps()
    s["rx-ack"] = wstart(rx) + rail_msg(W_RAIL_ACK) + wsteps()
    s["rx-no-rail"] = (wstart(rx, 1) + rail_msg(W_RAIL_DOWN) + wsteps(512) +
                       wtick(500) + wsteps(512))
    s["rx-write"] = (wstart(rx, seed=9) + b"".join(
        wwrite(k % 2, 0, k) for k in range(8)) + wsteps(512) +
        b"".join(wwrite(k % 2, 1, k) for k in range(8)) + wsteps(512))
    s["rx-write-traffic"] = (wstart(rx, traffic=4) + b"".join(
        wwrite(0, k % 4, k // 4) for k in range(16)) + wsteps(1024))
    s["rx-write-imm"] = (wstart(rx) + wwrite(0, 0, 0, 0x02,
                                             struct.pack(">I", 0x05800000)) +
                         wsteps())
    s["rx-write-overrun"] = (wstart(rx) + wwrite(0, 0, 0, 0x05,
                                                 struct.pack("<H", 8192)) +
                             wsteps())
    s["rx-write-last-long"] = (wstart(rx) + wwrite(0, 0, 0, 0x06, struct.pack(
        ">I", 30 << 24 | 0x00800007) + struct.pack("<H", 8192)) + wsteps())
    s["rx-write-key"] = (wstart(rx) + wwrite(0, 0, 0, 0x10,
                                             struct.pack("<I", 7)) + wsteps())
    s["rx-write-probe"] = wstart(rx) + wwrite(1, 0, 0, 0x20) + wsteps()
    s["rx-write-fenced"] = (wstart(rx, traffic=1) + rail_msg(W_RAIL_DOWN) +
                            wwrite(0, 0, 0) + wsteps(512) + wwrite(0, 0, 1) +
                            wsteps())
    s["rx-gpu-data"] = (wstart(rx | W_F_FALLBACK, gpu=True) + data(0, 0) +
                        wsteps())
    s["tx-gpu-cts"] = (wstart(tx | W_F_FALLBACK, gpu=True) + cut_all +
                       cts(1, entries=[(0x20, 0)]) + b"\1\0\0\0" +
                       wsteps(1024))
    s["rx-raw"] = wstart(rx | W_F_RAW | W_F_FALLBACK) + struct.pack(
        "<IHHIIIIII", 24 + 4, W_DATA, 0, 0, 0, 0, 4, 3, 0) + b"abcd"
    # The handshake, both ways, then traffic on the new connection.
    s["hs-rx"] = (wstart(rx | W_F_HS) + hello(W_HELLO) + wprog() +
                  wrecv([4096, 0]) + wprog() + data(0, 0) + data(1, 0) +
                  wprog() + wtest())
    s["hs-rx-fallback-null"] = (wstart(rx | W_F_HS | W_F_FALLBACK) +
                                hello(W_HELLO) + wprog() + wrecv([0]) +
                                data(0, 0) + wprog() + wtest())
    s["hs-tx"] = (wstart(tx | W_F_HS) + hello(W_HELLO_ACK) + wprog() +
                  wsend(100) + cts(1) + wsteps(512) + wtest())
    s["hs-tx-null"] = (wstart(tx | W_F_HS | W_F_FALLBACK) +
                       hello(W_HELLO_ACK, 0x20, b"\x04\0" * 2) + wprog() +
                       wsend(0) + cts(1) + wprog(8) + wtest())
    s["hs-tx-wrong-type"] = wstart(tx | W_F_HS) + hello(W_HELLO) + wprog()
    s["hs-rx-magic"] = wstart(rx | W_F_HS) + hello(W_HELLO, 0x01, b"RIFF") + \
        wprog()
    s["hs-rx-version"] = wstart(rx | W_F_HS) + hello(
        W_HELLO, 0x02, struct.pack("<I", 1)) + wprog()
    s["hs-rx-nonce"] = wstart(rx | W_F_HS) + hello(
        W_HELLO, 0x04, struct.pack("<Q", 2)) + wprog()
    s["hs-rx-chunk"] = wstart(rx | W_F_HS) + hello(
        W_HELLO, 0x08, struct.pack("<I", 4095)) + wprog()
    s["hs-rx-chunk-max"] = (wstart(rx | W_F_HS) + hello(
        W_HELLO, 0x08, struct.pack("<I", 64 << 20)) + wprog() +
        wrecv([100]) + data(0, 0) + wprog() + wtest())
    s["hs-rx-rails-0"] = wstart(rx | W_F_HS) + hello(W_HELLO, 0x10, b"\0") + \
        wprog()
    s["hs-rx-rails-17"] = wstart(rx | W_F_HS) + hello(
        W_HELLO, 0x10, b"\x11") + wprog()
    s["hs-rx-rails-1"] = (wstart(rx | W_F_HS, 3) +
                          hello(W_HELLO, 0x10, b"\x01") + wprog() +
                          rail_msg(W_RAIL_REQ, 2, 0x01, bytes(3)) + wprog())
    s["hs-rx-rails-liar"] = wstart(rx | W_F_HS) + hello(
        W_HELLO, 0x50, b"\x03") + wprog()
    s["hs-rx-mtu"] = wstart(rx | W_F_HS) + hello(
        W_HELLO, 0x20, b"\x02\x06\0") + wprog()
    s["hs-rx-active"] = wstart(rx | W_F_HS) + hello(
        W_HELLO, 0x20, b"\x04\x02\0") + wprog()
    s["hs-rx-qpn-0"] = (wstart(rx | W_F_HS) + hello(
        W_HELLO, 0x20, b"\x20\0") + wprog() + rail_msg(W_RAIL_REQ) + wprog())
    s["hs-rx-ib-no-lid"] = wstart(rx | W_F_HS | W_F_IB) + hello(
        W_HELLO, 0x20, b"\x08\0\0\0") + wprog()
    s["hs-rx-long"] = wstart(rx | W_F_HS) + hello(W_HELLO, 0x80, b"\x04\0") + \
        wprog()
    s["hs-rx-raw"] = wstart(rx | W_F_HS | W_F_RAW) + raw_hello(W_HELLO)
    s["hs-rx-raw-split"] = (wstart(rx | W_F_HS) +
                            wraw(raw_hello(W_HELLO)[:11]) + wprog() +
                            wraw(raw_hello(W_HELLO)[11:]) + wprog())
    s["hs-rx-raw-len"] = wstart(rx | W_F_HS | W_F_RAW) + raw_hello(
        W_HELLO, length=200)
    s["hs-tx-raw"] = wstart(tx | W_F_HS | W_F_RAW) + raw_hello(
        W_HELLO_ACK, nrails=1)
    s["hs-rx-open"] = wstart(rx | W_F_HS | W_F_NOEOF) + wraw(
        raw_hello(W_HELLO)[:20])
    write("fuzz_wire", s)


if __name__ == "__main__":
    nics()
    bootstrap()
    envs()
    wire()
    sys.exit(0)
