#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""r2cc-tb-hub, the rail switch, driven on the host over its unix sockets:
flooding, MAC learning, black-holing, counters, and bad input."""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from tap import TAP  # noqa: E402

BUILD = os.environ.get("BUILD", os.path.join(os.path.dirname(__file__),
                                             "..", "..", "build"))
HUB = os.path.join(BUILD, "tools", "r2cc-tb-hub")
t = TAP()
if not os.access(HUB, os.X_OK):
    t.skip_all("r2cc-tb-hub not built")

d = tempfile.mkdtemp(prefix="r2cc-hub-test.")
ctl = os.path.join(d, "ctl")
names = ["a", "b", "c"]
hub = subprocess.Popen([HUB, "--ctl", ctl] +
                       [f"{n}={d}/{n}.sock" for n in names])


def wait_path(p):
    for _ in range(100):
        if os.path.exists(p):
            return True
        time.sleep(0.02)
    return False


def control(line):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(ctl)
    s.sendall(line.encode() + b"\n")
    out = b""
    while True:
        c = s.recv(4096)
        if not c:
            break
        out += c
    s.close()
    return out.decode()


MAC = {n: bytes([0x52, 0x54, 0, 0x2c, 0, i]) for i, n in enumerate(names)}
BCAST = b"\xff" * 6


def eth(dst, src, payload):
    f = dst + src + b"\x88\xb5" + payload
    return struct.pack(">I", len(f)) + f


def recv_frames(s, wait=0.3):
    s.settimeout(wait)
    buf = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            buf += c
    except socket.timeout:
        pass
    out = []
    while len(buf) >= 4:
        n = struct.unpack(">I", buf[:4])[0]
        out.append(buf[4:4 + n][14:])
        buf = buf[4 + n:]
    return out


try:
    t.ok(all(wait_path(f"{d}/{n}.sock") for n in names) and wait_path(ctl),
         "hub listens on a socket per port and a control socket")
    port = {}
    for n in names:
        port[n] = socket.socket(socket.AF_UNIX)
        port[n].connect(f"{d}/{n}.sock")
    time.sleep(0.1)

    port["a"].sendall(eth(BCAST, MAC["a"], b"hello"))
    got = {n: recv_frames(port[n]) for n in names}
    t.ok(got["b"] == [b"hello"] and got["c"] == [b"hello"] and got["a"] == [],
         "a broadcast floods every other port")
    port["b"].sendall(eth(MAC["a"], MAC["b"], b"to-a"))
    got = {n: recv_frames(port[n]) for n in names}
    t.ok(got["a"] == [b"to-a"] and got["c"] == [],
         "a learned unicast goes to one port only")
    port["c"].sendall(eth(MAC["b"], MAC["c"], b"x" * 1500))
    t.ok(recv_frames(port["b"]) == [b"x" * 1500], "a full-size frame arrives")

    t.ok(control("blackhole b on").strip() == "ok", "blackhole b on")
    port["a"].sendall(eth(MAC["b"], MAC["a"], b"lost"))
    port["b"].sendall(eth(MAC["a"], MAC["b"], b"lost-too"))
    t.ok(recv_frames(port["b"]) == [] and recv_frames(port["a"]) == [],
         "a black-holed port neither receives nor sends")
    stats = control("stats")
    line = [ln.split() for ln in stats.splitlines() if ln.startswith("b ")]
    t.ok(line and int(line[0][4]) == 2 and line[0][5] == "1",
         "stats count 2 black-holed frames on b")
    t.ok(control("blackhole b off").strip() == "ok", "blackhole b off")
    port["a"].sendall(eth(MAC["b"], MAC["a"], b"back"))
    t.ok(recv_frames(port["b"]) == [b"back"], "b receives again")

    for bad, want in [("blackhole z on", "no port z"),
                      ("blackhole a maybe", "want on or off"),
                      ("frobnicate", "unknown command"),
                      ("", "unknown command"),
                      ("blackhole " + "x" * 200 + " on", "no port")]:
        r = control(bad)
        t.ok(r.startswith("error:") and want in r,
             f"control '{bad[:20]}': {r.strip()[:40]}")

    # A port that sends garbage is cut off; the others keep working.
    port["c"].sendall(struct.pack(">I", 0x7fffffff) + b"junk")
    time.sleep(0.2)
    port["a"].sendall(eth(MAC["b"], MAC["a"], b"still"))
    t.ok(recv_frames(port["b"]) == [b"still"] and hub.poll() is None,
         "an oversized length cuts that port off, the hub goes on")
    port["c"].close()
    port["c"] = socket.socket(socket.AF_UNIX)
    port["c"].connect(f"{d}/c.sock")
    time.sleep(0.1)
    port["c"].sendall(eth(BCAST, MAC["c"], b"again"))
    t.ok(recv_frames(port["a"]) == [b"again"], "the port can reconnect")

    hub.terminate()
    hub.wait(5)
    t.ok(not any(os.path.exists(f"{d}/{n}.sock") for n in names) and
         not os.path.exists(ctl), "SIGTERM removes every socket")
finally:
    if hub.poll() is None:
        hub.kill()
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    os.rmdir(d)
t.done()
