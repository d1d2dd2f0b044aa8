#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""r2cc-tb-agent, run on the host on loopback: the frame protocol works, and
wrong, short, oversized and hostile frames get an error, never a crash."""
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from tap import TAP  # noqa: E402

BUILD = os.environ.get("BUILD", os.path.join(os.path.dirname(__file__),
                                             "..", "..", "build"))
AGENT = os.path.join(BUILD, "tools", "r2cc-tb-agent")
t = TAP()
if not os.access(AGENT, os.X_OK):
    t.skip_all("r2cc-tb-agent not built")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


PORT = free_port()
agent = subprocess.Popen([AGENT, "--addr", "127.0.0.1", "--port", str(PORT)],
                         stderr=subprocess.DEVNULL)
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)


def frame(typ, data=b""):
    return struct.pack(">cI", typ, len(data)) + data


def talk(raw, timeout=10, half_close=False):
    """Send raw bytes; return the frames received until EXIT or close."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
    s.sendall(raw)
    if half_close:
        s.shutdown(socket.SHUT_WR)
    buf, frames = b"", []
    try:
        while True:
            try:
                d = s.recv(65536)
            except ConnectionResetError:
                break
            if not d:
                break
            buf += d
            while len(buf) >= 5:
                typ, n = struct.unpack(">cI", buf[:5])
                if len(buf) < 5 + n:
                    break
                frames.append((typ, buf[5:5 + n]))
                buf = buf[5 + n:]
                if typ == b"X":
                    return frames
    finally:
        s.close()
    return frames


def run(argv, stdin=None, cwd=None):
    raw = frame(b"A", b"".join(a.encode() + b"\0" for a in argv))
    if cwd:
        raw += frame(b"D", cwd.encode())
    if stdin is not None:
        raw += frame(b"I", stdin)
    raw += frame(b"i")
    fr = talk(raw)
    out = b"".join(d for ty, d in fr if ty == b"O")
    err = b"".join(d for ty, d in fr if ty == b"E")
    code = [struct.unpack(">I", d)[0] for ty, d in fr if ty == b"X"]
    return (code[0] if code else None), out, err, fr


def exit_code(fr):
    c = [struct.unpack(">I", d)[0] for ty, d in fr if ty == b"X"]
    return c[0] if c else None


def error_text(fr):
    return b"".join(d for ty, d in fr if ty == b"F").decode()


try:
    code, out, err, _ = run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    t.ok(code == 3 and out == b"out\n" and err == b"err\n",
         "stdout, stderr and exit status come back apart")
    code, out, _, _ = run(["cat"], stdin=b"x" * 100000)
    t.ok(code == 0 and out == b"x" * 100000, "stdin is forwarded whole")
    code, out, _, _ = run(["pwd"], cwd="/nonexistent/dir")
    t.ok(code == 0 and out == b"/\n", "a missing cwd falls back to /")
    code, _, err, _ = run(["/nonexistent"])
    t.ok(code == 127 and b"No such file" in err, "missing command: 127")
    code, _, _, _ = run(["sh", "-c", "kill -KILL $$"])
    t.ok(code == 137, "killed by SIGKILL: 137")
    t0 = time.monotonic()
    code, _, _, _ = run(["sh", "-c", "sleep 3 & echo started"])
    t.ok(code == 0 and time.monotonic() - t0 < 5,
         "a background child holding stdout does not hold the reply")

    fr = talk(frame(b"i"))
    t.ok(exit_code(fr) == 255 and "no command" in error_text(fr),
         "start without argv: error, exit 255")
    fr = talk(frame(b"Z", b"junk"))
    t.ok(exit_code(fr) == 255 and "unexpected frame" in error_text(fr),
         "unknown frame type: error, exit 255")
    fr = talk(frame(b"A", b"true") + frame(b"i"))
    t.ok(exit_code(fr) == 255 and "NUL" in error_text(fr),
         "argv not NUL-terminated: error")
    fr = talk(frame(b"A", b"") + frame(b"i"))
    t.ok(exit_code(fr) == 255, "empty argv: error")
    fr = talk(frame(b"A", b"x\0" * 2000) + frame(b"i"))
    t.ok(exit_code(fr) == 255 and "arguments" in error_text(fr),
         "2000 arguments: error")
    fr = talk(struct.pack(">cI", b"A", 0xFFFFFFF0) + b"abc")
    t.ok(fr == [], "a 4 GiB length closes the connection")
    fr = talk(b"A\0\0", half_close=True)
    t.ok(fr == [], "a short header then EOF closes the connection")
    fr = talk(frame(b"A", b"true\0")[:-2], half_close=True)
    t.ok(fr == [], "a short payload then EOF closes the connection")

    # A client that goes away takes its command (and children) down.
    s = socket.create_connection(("127.0.0.1", PORT))
    marker = f"r2cc-agent-test-{os.getpid()}"
    s.sendall(frame(b"A", b"bash\0-c\0" + f"exec -a {marker} sleep 60".encode()
                    + b"\0") + frame(b"i"))
    time.sleep(0.5)
    before = subprocess.run(["pgrep", "-f", marker],
                            capture_output=True).stdout
    s.close()
    time.sleep(0.5)
    after = subprocess.run(["pgrep", "-f", marker],
                           capture_output=True).stdout
    t.ok(before and not after, "disconnect kills the running command")
    t.ok(agent.poll() is None, "the agent survived all of it")
finally:
    agent.kill()
    agent.wait()
t.done()
