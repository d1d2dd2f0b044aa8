#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Documentation/netlink/specs/r2cc.yaml, the YNL spec of r2cc.ko's generic
netlink family, against what it describes: every attribute, command and
enum value the same as in include/uapi/linux/r2cc.h (none missing on
either side), every attribute of the same type as kmod/r2cc_genl.c puts
it and policies it, every reply and event listing exactly the attributes
the module sends; and, with the kernel's YNL library and schemas in
$BUILD/cache/ynl (make deps), the spec valid against the schema and
loaded by YNL.  tests/testbed/kmod_ynl.sh drives the module with it."""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.join(here, "..", "..")
sys.path.insert(0, os.path.join(here, "..", "lib"))
from tap import TAP  # noqa: E402

t = TAP()
try:
    import yaml
except ImportError:
    t.skip_all("no PyYAML (python3-yaml; make deps installs it)")

SPEC = os.path.join(repo, "Documentation", "netlink", "specs", "r2cc.yaml")
with open(SPEC) as f:
    spec = yaml.safe_load(f)
with open(os.path.join(repo, "include", "uapi", "linux", "r2cc.h")) as f:
    header = f.read()
with open(os.path.join(repo, "kmod", "r2cc_genl.c")) as f:
    genl = f.read()


def c_name(prefix, name):
    return (prefix + name).upper().replace("-", "_")


def header_enum(name):
    """{NAME: value} of `enum NAME { ... }` in the uapi header."""
    body = re.search(r"enum %s \{(.*?)\};" % name, header, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    out, v = {}, -1
    for item in body.split(","):
        item = item.strip()
        if not item:
            continue
        m = re.fullmatch(r"(\w+)(?:\s*=\s*(\w+))?", item)
        if not m:
            continue
        if m.group(2) is None:
            v += 1
        elif m.group(2).isdigit():
            v = int(m.group(2))
        else:
            v = out[m.group(2)]
        out[m.group(1)] = v
    return {k: v for k, v in out.items()
            if not k.startswith("__") and not k.endswith("_UNSPEC")
            and not k.endswith("_MAX")}


def spec_values(entries, start=0, flags=False):
    out, v = {}, start - 1
    for i, e in enumerate(entries):
        e = e if isinstance(e, dict) else {"name": e}
        v = e.get("value", v + 1)
        out[e["name"]] = (1 << i) if flags else v
    return out


def same(what, want, got):
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    wrong = sorted(k for k in set(want) & set(got) if want[k] != got[k])
    t.ok(not (missing or extra or wrong),
         f"{what}: the spec and the header agree"
         f"{f'; missing from the spec {missing}' if missing else ''}"
         f"{f'; not in the header {extra}' if extra else ''}"
         f"{f'; other values {wrong}' if wrong else ''}")


# The family itself.
t.ok(spec["name"] == re.search(r'R2CC_GENL_NAME\s+"(\w+)"', header).group(1)
     and spec.get("version", 1) ==
     int(re.search(r"R2CC_GENL_VERSION\s+(\d+)", header).group(1))
     and [g["name"] for g in spec["mcast-groups"]["list"]] ==
     [re.search(r'R2CC_GENL_MCGRP_EVENTS\s+"(\w+)"', header).group(1)],
     "family name, version and multicast group as the header defines them")

# Attributes, commands and enums, value by value.
aset = spec["attribute-sets"][0]
attrs = {a["name"]: a for a in aset["attributes"]}
same("attributes",
     header_enum("r2cc_genl_attr"),
     {c_name(aset["name-prefix"], k): v
      for k, v in spec_values(aset["attributes"], 1).items()})
ops = spec["operations"]
same("commands",
     header_enum("r2cc_genl_cmd"),
     {c_name(ops["name-prefix"], k): v
      for k, v in spec_values(ops["list"], 1).items()})
defs = {d["name"]: d for d in spec["definitions"]}
for d, enum in (("port-state", "r2cc_port_state"),
                ("event-kind", "r2cc_event_kind"),
                ("reason", "r2cc_reason")):
    same(f"enum {enum}", header_enum(enum),
         {c_name(defs[d]["name-prefix"], k): v for k, v in
          spec_values(defs[d]["entries"], defs[d].get("value-start", 0)).items()})
evf = {m.group(1): 1 << int(m.group(2)) for m in
       re.finditer(r"#define (R2CC_EVF_\w+)\s+\(1U << (\d+)\)", header)}
same("R2CC_EVF_* flags", evf,
     {c_name("r2cc-evf-", k): v for k, v in
      spec_values(defs["event-flags"]["entries"], flags=True).items()})

# Types: as the module puts each attribute, and as its policy checks it.
PUT = {"u8": "u8", "u16": "u16", "u32": "u32", "u64_64bit": "u64",
       "string": "string", "": "binary"}
put = {}
for m in re.finditer(r"nla_put_?(\w*)\(\w+, (R2CC_ATTR_\w+)", genl):
    put.setdefault(m.group(2), set()).add(PUT.get(m.group(1), m.group(1)))
bad = [f"{a}: spec {attrs[n]['type']}, module {sorted(put[a])}"
       for n in attrs for a in [c_name("r2cc-attr-", n)]
       if a in put and put[a] != {attrs[n]["type"]}]
t.ok(not bad and put, f"every attribute the module puts ({len(put)}) has the "
     f"spec's type{f': {bad}' if bad else ''}")
POL = {"NLA_U8": "u8", "NLA_U16": "u16", "NLA_U32": "u32", "NLA_U64": "u64"}
pol = {m.group(1): POL[m.group(2) or m.group(3)] for m in re.finditer(
    r"\[(R2CC_ATTR_\w+)\] = (?:\{ \.type = (NLA_\w+) \}|NLA_POLICY_\w+\((NLA_\w+))",
    genl)}
bad = [f"{a}: {v}" for a, v in pol.items()
       if attrs[a[len("R2CC_ATTR_"):].lower().replace("_", "-")]["type"] != v]
t.ok(pol and not bad,
     f"the policy's types ({len(pol)} attributes) are the spec's{f': {bad}' if bad else ''}")


def body(fn):
    return re.search(r"\n[^\n]*%s\([^)]*\)\n\{(.*?)\n\}" % fn, genl, re.S).group(1)


def sent(fn):
    return {m.group(1) for m in re.finditer(r"nla_put\w*\(\w+, (R2CC_ATTR_\w+)",
                                            body(fn))}


def listed(op, kind, part):
    o = next(o for o in ops["list"] if o["name"] == op)
    return {c_name("r2cc-attr-", a) for a in o[kind][part]["attributes"]} \
        if part else {c_name("r2cc-attr-", a) for a in o[kind]["attributes"]}


for op, kind, part, fn in (("get-port", "dump", "reply", "r2cc_genl_put_port"),
                           ("get-stats", "do", "reply", "r2cc_genl_get_stats"),
                           ("event", "event", None, "r2cc_genl_put_event"),
                           ("get-events", "dump", "reply",
                            "r2cc_genl_put_event")):
    want, got = sent(fn), listed(op, kind, part)
    t.ok(want == got, f"{op}: the spec lists what {fn}() sends"
         f"{f' (missing {sorted(want - got)})' if want - got else ''}"
         f"{f' (never sent {sorted(got - want)})' if got - want else ''}")
req = {m.group(1) for m in re.finditer(r"GENL_REQ_ATTR_CHECK\(info, (R2CC_ATTR_\w+)\)",
                                       body("r2cc_genl_inject"))}
t.ok(req == listed("inject", "do", "request"),
     "inject: the spec's request attributes are the ones the module requires")
t.ok(listed("get-events", "dump", "request") == {"R2CC_ATTR_SEQ"} and
     "nlmsg_find_attr(cb->nlh, GENL_HDRLEN,\n\t\t\t\t\t\t\t R2CC_ATTR_SEQ)"
     in body("r2cc_genl_dump_events"),
     "get-events: the spec's request attribute is the one the module reads")
t.ok("GENL_ADMIN_PERM" in genl and
     next(o for o in ops["list"] if o["name"] == "inject").get("flags") ==
     ["admin-perm"], "inject: admin-perm in the spec, GENL_ADMIN_PERM in the module")

# The kernel's own YNL library: the schema and the spec's loading.
build = os.environ.get("BUILD", os.path.join(repo, "build"))
ynl = os.path.join(build, "cache", "ynl")
if os.path.isfile(os.path.join(ynl, "tools", "net", "ynl", "lib", "nlspec.py")):
    sys.path.insert(0, os.path.join(ynl, "tools", "net", "ynl"))
    try:
        import jsonschema  # noqa: F401  (nlspec validates with it)
        from lib import SpecFamily
        fam = SpecFamily(SPEC, os.path.join(ynl, "Documentation", "netlink",
                                            "genetlink-legacy.yaml"))
        err = None
    except Exception as e:  # what YNL says is the point
        fam, err = None, e
    t.ok(fam is not None, f"YNL validates the spec against genetlink-legacy.yaml"
         f" and loads it{f': {err}' if err else ''}")
    if fam:
        t.ok(sorted(fam.msgs) == ["event", "get-events", "get-port",
                                  "get-stats", "inject"]
             and fam.attr_sets["r2cc"]["degraded"].value ==
             header_enum("r2cc_genl_attr")["R2CC_ATTR_DEGRADED"],
             "YNL sees five operations and the header's attribute values")
    # Bad specs are refused: the check above can fail.
    bad_spec = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                            f"r2cc-bad-spec-{os.getpid()}.yaml")
    with open(bad_spec, "w") as f:
        broken = dict(spec)
        broken["operations"] = {"list": [{"name": "get-port", "value": 1,
                                          "attribute-set": "r2cc",
                                          "bogus-key": 1}]}
        f.write("# SPDX-License-Identifier: GPL-2.0-only\n")
        yaml.safe_dump(broken, f)
    try:
        import jsonschema
        SpecFamily(bad_spec, os.path.join(ynl, "Documentation", "netlink",
                                          "genetlink-legacy.yaml"))
        refused = "accepted"
    except ImportError as e:
        refused = str(e)
    except jsonschema.exceptions.ValidationError as e:
        refused = e.message if "bogus-key" in e.message else str(e)
    except Exception as e:
        refused = f"{type(e).__name__}: {e}"
    os.unlink(bad_spec)
    t.ok("bogus-key" in refused,
         f"YNL refuses a spec the schema does not allow ({refused})")
else:
    t.diag(f"no YNL library in {ynl} (make deps): schema checks not run")
t.done()
