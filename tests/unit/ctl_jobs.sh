#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# r2ccctl jobs over stats files made here in libr2cc's layout
# (<r2cc/job.h>): a live process's file is shown in text and JSON with its
# totals (open plus closed connections); a file whose process is gone is
# removed; hostile files in the world-writable directory (bad magic or
# version, short, counts past the file, an odd sequence counter that never
# settles, a link, a directory, a FIFO, unterminated strings) are skipped
# without harm; bad arguments are usage errors.  The real library's files
# are read in tests/testbed/lib_jobs.sh.
. "$(dirname "$0")/../lib/tap.sh"
CTL=$R2CC_BUILD/tools/r2ccctl
[ -x "$CTL" ] || skip_all "r2ccctl is not built"
command -v python3 >/dev/null || skip_all "python3 not installed"
plan_later

dir=$(mktemp -d)
sleep 300 &
live=$!
sh -c 'exit 0' &
dead=$!
wait "$dead"
trap 'kill $live 2>/dev/null; rm -rf "$dir"' EXIT

# mkjob NAME PID [KEY=VALUE...]: a stats file; KEYs change the header,
# comm, nconns or the peer to make it hostile.
mkjob() {
	python3 - "$dir/$1" "$2" "${@:3}" <<'EOF'
import struct, sys
path, pid = sys.argv[1], int(sys.argv[2])
kw = dict(a.split('=', 1) for a in sys.argv[3:])
try:
    stat = open('/proc/%d/stat' % pid).read()
    start = int(stat[stat.rindex(')') + 2:].split()[19])
except OSError:
    start = 12345
MAX_CONNS, MAX_RAILS = 64, 16
RAIL = struct.Struct('<iBBBB5Q')                 # 48
CONN = struct.Struct('<BBBBI64s8Q')              # 136
NIC = struct.Struct('<64sIBB2xQ')                # 80
HEAD = struct.Struct('<QIIIIIIIIIiQQQ16sIIQ8Q')  # 168, then 16 NICs
hsize = HEAD.size + 16 * NIC.size
csize = CONN.size + MAX_RAILS * RAIL.size
size = hsize + MAX_CONNS * csize
g = lambda k, d: int(kw.get(k, d))
closed = [0, 0, 0, 0, 2, 2, 1000000, 3000000]    # 2 failovers closed
h = HEAD.pack(g('magic', 0x0a424f4a43433252), g('version', 1),
              g('header_size', hsize), size, g('conn_size', csize),
              RAIL.size, MAX_CONNS, MAX_RAILS, g('nconns', 1),
              g('seq', 4), pid, g('start', start), 1700000000 * 10**9,
              1700000000 * 10**9, kw.get('comm', 'trainer').encode(), 1, 2,
              3, *closed)
nics = NIC.pack(b'rxe0', 1, 4, 0, 2000) + NIC.pack(b'rxe1', 1, 4, 1, 2000)
nics += bytes(NIC.size * 14)
peer = kw.get('peer', '198.19.1.2:4000').encode()
conn = CONN.pack(1, 1, 0, 0, 2, peer, 10, 1048576, 65536, 0, 1, 1,
                 2500000, 2500000)
rails = RAIL.pack(0, 1, 0, 0, 0, 1000000, 0, 0, 0, 0) + \
        RAIL.pack(1, 2, 0, 1, g('reason', 2), 48576, 1, 1, 0, 1)
body = h + nics + conn + rails + bytes(csize - CONN.size - 2 * RAIL.size)
body += bytes(size - len(body))
if 'truncate' in kw:
    body = body[:int(kw['truncate'])]
if kw.get('unterminated'):
    body = body[:72] + b'X' * 16 + body[88:]
open(path, 'wb').write(body)
EOF
}

mkjob good.job "$live"
mkjob gone.job "$dead"
mkjob badmagic.job "$live" magic=1
mkjob badversion.job "$live" version=2
mkjob short.job "$live" truncate=1000
mkjob cut.job "$live" truncate=20000
mkjob nconns.job "$live" nconns=65
mkjob connsize.job "$live" conn_size=100
mkjob headsize.job "$live" header_size=4000000000
mkjob odd.job "$live" seq=5
mkjob reused.job "$live" start=1
mkjob badreason.job "$live" reason=200 comm=badreason
mkjob noterm.job "$live" unterminated=1 "peer=$(printf 'p%.0s' $(seq 64))"
ln -s /etc/passwd "$dir/link.job"
mkdir "$dir/dir.job"
mkfifo "$dir/fifo.job"
echo junk >"$dir/other.txt"

out=$("$CTL" jobs --dir "$dir" 2>&1)
rc=$?
is "$rc" 0 "jobs: exit 0"
diag "$out"
is "$(grep -c '^[0-9]' <<<"$out")" 3 \
	"three live jobs: the good file, the unterminated one, a bad reason"
ok "$(grep -A3 ' badreason ' <<<"$out" | grep -q 'fault invalid$' && echo 1)" \
	"a reason out of range is shown as invalid"
ok "$(grep -Eq "^$live +trainer +1 +1/2 +3 +3 +2.5/3.0 +ms +65536 B +0 B" <<<"$out" && echo 1)" \
	"the good job: 1 connection, 1/2 rails up, 3 failovers (1 open + 2 closed), repair last/max"
ok "$(grep -q '  conn 0 to 198.19.1.2:4000 ready: 10 msgs, 1048576 bytes, 1 failovers' <<<"$out" && echo 1)" \
	"its connection"
ok "$(grep -Eq '    rail 1 rxe1 +down +bytes 48576 failures 1 rollbacks 1 failbacks 0 degraded local fault local-port' <<<"$out" && echo 1)" \
	"its rail 1: down, degraded here, its fault at the local port"
ok "$(grep -q '(2 stats files of exited processes removed)' <<<"$out" && echo 1)" \
	"the dead process's files removed (a gone PID, a reused PID)"
for f in gone reused; do
	ok "$([ ! -e "$dir/$f.job" ] && echo 1)" "$f.job removed"
done
for f in badmagic badversion short cut nconns connsize headsize odd; do
	ok "$([ -e "$dir/$f.job" ] && echo 1)" "$f.job skipped, left in place"
done
ok "$([ -L "$dir/link.job" ] && [ -s /etc/passwd ] && echo 1)" \
	"a link is not followed, nor removed"
ok "$(grep -Eq "^$live +X{15} " <<<"$out" && grep -q ' to p\{63\} ' <<<"$out" &&
	! grep -q 'p\{64\}' <<<"$out" && echo 1)" \
	"unterminated name and peer are cut at their fields"

json=$("$CTL" --json jobs --dir "$dir")
ok "$(python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
j = [x for x in d["jobs"] if x["comm"] == "trainer"][0]
c = j["connections"][0]
assert j["failovers"] == 3 and j["repair_ms_max"] == 3.0
assert j["nics"][1] == {"name": "rxe1", "port": 1, "active": True, "degraded": True}
assert c["peer"] == "198.19.1.2:4000" and c["state"] == "ready"
assert c["rails"][1]["degraded"] == "local" and c["rails"][1]["drains"] == 1
assert c["rails"][1]["fault"] == "local-port" and c["rails"][0]["fault"] == "-"
assert d["removed_stale"] == 0
print(1)' <<<"$json")" "--json: one document with the same figures"

run_fails "no such directory: exit 1, says so" "no-such-dir: No such file" \
	"$CTL" jobs --dir "$dir/no-such-dir"
out=$("$CTL" jobs --dir "$dir/no-such-dir" 2>&1)
is "$?" 1 "no such directory: exit 1"
for bad in "--dir" "--dir ''" "--frob" "extra"; do
	eval "set -- $bad"
	out=$("$CTL" jobs "$@" 2>&1)
	rc=$?
	ok "$([ $rc = 2 ] && grep -q '^usage: r2ccctl jobs' <<<"$out" && echo 1)" \
		"jobs $bad: usage error (exit $rc)"
done
empty=$(mktemp -d)
out=$(R2CC_STATS_DIR=$empty "$CTL" jobs)
ok "$([ $? = 0 ] && [ "$(wc -l <<<"$out")" = 1 ] && echo 1)" \
	"R2CC_STATS_DIR with no files: the header alone"
rmdir "$empty"
done_testing
