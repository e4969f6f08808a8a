"""Export a trace with `gprof-train export --perfetto OUT.pftrace` and `--perfetto OUT.json`, decode
the protobuf with Perfetto's own schema (perfetto_trace_pb2 from the `perfetto` PyPI package) and
check that it says what the JSON says: the same slices (track, name, category, start, duration,
arguments), instants, launch flows, counters and findings; typed TrackEvents on described tracks
(no legacy JSON events), interned names resolved through the sequence's incremental state, a
clock snapshot giving the JSON's baseTimeNanoseconds, each track's events in time order, and a
file at most half the JSON's size.
TRACE may be prof:WRITER (a program that writes a libprof trace with counters to its argument;
its counters must all come back), or a folder ending in '/': each *.json.gz in it is checked (skip, 77, when there is
none or the folder is absent).
usage: test_perfetto_proto.py GPROF_TRAIN TRACE WORK_DIR [MIN_FLOWS]"""
import collections
import gzip
import json
import math
import os
import shutil
import subprocess
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

TE = pb.TrackEvent
BOOTTIME, REALTIME = 6, 1


def ns(v):
    return round(float(v) * 1000)


# ---- the JSON export ----

def json_side(path):
    doc = json.load(open(path))
    evs = doc["traceEvents"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs
               if e["ph"] == "M" and e["name"] == "thread_name"}
    pmeta = [(e["pid"], e["args"]["name"]) for e in evs
             if e["ph"] == "M" and e["name"] == "process_name"]
    procs = dict(pmeta)
    sort = {(e["pid"], e["tid"]): e["args"]["sort_index"] for e in evs
            if e["ph"] == "M" and e["name"] == "thread_sort_index"}
    # process name -> {thread name: its sort index}, for names that one process has alone (a GPU
    # whose pid, its device id, is also a CPU process's shares that process in the JSON)
    unique = {n for n, k in collections.Counter(n for _, n in pmeta).items() if k == 1}
    unique -= {procs[p] for p, k in collections.Counter(p for p, _ in pmeta).items() if k > 1}
    order = collections.defaultdict(dict)
    for (pid, tid), name in threads.items():
        if "(overlap " not in name and procs[pid] in unique:
            order[procs[pid]][name] = sort[(pid, tid)]
    slices, instants, flows, counters = [], [], {}, collections.defaultdict(list)
    ends = {}
    for e in evs:
        ph = e["ph"]
        if ph == "X":
            slices.append((threads[(e["pid"], e["tid"])], e["name"], e["cat"], ns(e["ts"]),
                           ns(e["dur"]), norm_args(e.get("args", {}))))
        elif ph == "i":
            instants.append((threads[(e["pid"], e["tid"])], e["name"], e["cat"], ns(e["ts"]),
                             norm_args(e.get("args", {}))))
        elif ph in "sf" and e["cat"] == "ac2g":
            ends.setdefault(e["id"], {})[ph] = (threads[(e["pid"], e["tid"])], ns(e["ts"]))
        elif ph == "C" and list(e["args"]) == ["value"]:  # the trace's own (libprof's)
            counters[e["name"]].append((ns(e["ts"]), e["args"]["value"]))
        elif ph == "C":
            for k, v in e["args"].items():
                counters[f'{e["name"]} {k}'].append((ns(e["ts"]), v))
    for fid, se in ends.items():
        flows[fid] = (se["s"], se["f"])
    return doc, set(threads.values()), slices, instants, flows, dict(counters), order


def norm_args(args):
    return {k: v for k, v in args.items()}


# ---- the protobuf export, decoded ----

class Decoder:
    def __init__(self):
        self.tracks = {}   # uuid -> descriptor
        self.names, self.cats, self.anames, self.strings = {}, {}, {}, {}
        self.cleared = False
        self.open = collections.defaultdict(list)
        self.last_ts = {}
        self.slices, self.instants = [], []
        self.flow_src, self.flow_dst = {}, {}
        self.counters = collections.defaultdict(list)
        self.clock = None

    def track_name(self, uuid):
        d = self.tracks[uuid]
        if d.HasField("thread"):
            return d.thread.thread_name
        if d.HasField("process"):
            return d.process.process_name
        return d.name

    def ordered_children(self):
        """{parent name: its children's names by rank} for parents that order them."""
        out = {}
        for u, d in self.tracks.items():
            if d.child_ordering == pb.TrackDescriptor.EXPLICIT:
                kids = [c for c in self.tracks.values()
                        if c.parent_uuid == u and not c.HasField("counter")]
                kids.sort(key=lambda c: c.sibling_order_rank)
                out[self.track_name(u)] = ([self.track_name(c.uuid) for c in kids],
                                           [c.sibling_order_rank for c in kids])
        return out

    def intern(self, d):
        for table, entries in ((self.cats, d.event_categories), (self.names, d.event_names),
                               (self.anames, d.debug_annotation_names),
                               (self.strings, d.debug_annotation_string_values)):
            for x in entries:
                v = x.str.decode() if hasattr(x, "str") else x.name
                assert x.iid not in table or table[x.iid] == v, f"iid {x.iid} redefined"
                table[x.iid] = v

    def annotation_value(self, a):
        which = a.WhichOneof("value")
        if which in ("int_value", "uint_value", "double_value", "string_value"):
            return getattr(a, which)
        if which == "string_value_iid":
            return self.strings[a.string_value_iid]
        if a.array_values:
            return [self.annotation_value(x) for x in a.array_values]
        raise AssertionError(f"unexpected debug annotation {a}")

    def packet(self, p):
        if p.HasField("clock_snapshot"):
            self.clock = {c.clock_id: c.timestamp for c in p.clock_snapshot.clocks}
            assert p.clock_snapshot.primary_trace_clock == BOOTTIME
        if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            self.cleared = True
        if p.HasField("interned_data"):
            assert self.cleared, "interned data before the incremental state was cleared"
            self.intern(p.interned_data)
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            assert d.uuid not in self.tracks, f"track {d.uuid} described twice"
            assert not d.parent_uuid or d.parent_uuid in self.tracks, "parent described later"
            self.tracks[d.uuid] = d
        if p.HasField("track_event"):
            assert p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
            self.event(p.timestamp, p.track_event)

    def event(self, ts, e):
        assert not e.HasField("legacy_event"), "a legacy (JSON-style) event"
        assert e.track_uuid in self.tracks, f"event on undescribed track {e.track_uuid}"
        assert ts >= self.last_ts.get(e.track_uuid, 0), f"track {e.track_uuid} goes back in time"
        self.last_ts[e.track_uuid] = ts
        track = self.track_name(e.track_uuid)
        if e.type == TE.TYPE_COUNTER:
            which = e.WhichOneof("counter_value_field")
            self.counters[track].append((ts, getattr(e, which)))
            return
        if e.type == TE.TYPE_SLICE_END:
            b = self.open[e.track_uuid].pop()
            self.slices.append((track, b[0], b[1], b[2], ts - b[2], b[3]))
            return
        name = self.names[e.name_iid] if e.HasField("name_iid") else e.name
        assert len(e.category_iids) == 1, e
        cat = self.cats[e.category_iids[0]]
        args = {self.anames[a.name_iid]: self.annotation_value(a) for a in e.debug_annotations}
        for f in e.flow_ids:
            self.flow_src[f] = (track, ts)
        for f in e.terminating_flow_ids:
            self.flow_dst[f] = (track, ts)
        if e.type == TE.TYPE_SLICE_BEGIN:
            if e.HasField("name_iid") is False:
                assert cat == "gprof_finding", f"{name}: a name not interned"
            self.open[e.track_uuid].append((name, cat, ts, args))
        else:
            assert e.type == TE.TYPE_INSTANT, e
            self.instants.append((track, name, cat, ts, args))


def proto_side(path):
    trace = pb.Trace()
    trace.ParseFromString(open(path, "rb").read())
    seqs = {p.trusted_packet_sequence_id for p in trace.packet}
    assert seqs == {1}, f"sequences {seqs}"
    d = Decoder()
    for p in trace.packet:
        d.packet(p)
    left = {u: v for u, v in d.open.items() if v}
    assert not left, f"slices never ended: {left}"
    return d


# ---- comparison ----

def same_value(j, p):
    if isinstance(j, float) or isinstance(p, float):
        return math.isclose(float(j), float(p), rel_tol=1e-5, abs_tol=1e-9)
    if isinstance(p, str) and not isinstance(j, str):
        return json.loads(p) == j  # "Input Dims" the JSON writes as the list it is
    return j == p


def same_args(j, p):
    return j.keys() == p.keys() and all(same_value(j[k], p[k]) for k in j)


def compare_events(kind, js, ps, n_key):
    jmap, pmap = collections.defaultdict(list), collections.defaultdict(list)
    for x in js:
        jmap[x[:n_key]].append(x[n_key])
    for x in ps:
        pmap[x[:n_key]].append(x[n_key])
    missing = set(jmap) - set(pmap)
    extra = set(pmap) - set(jmap)
    assert not missing, f"{len(missing)} {kind} of the JSON missing, e.g. {sorted(missing)[:3]}"
    assert not extra, f"{len(extra)} {kind} not in the JSON, e.g. {sorted(extra)[:3]}"
    for k in jmap:
        assert len(jmap[k]) == len(pmap[k]), f"{kind} {k}: {len(jmap[k])} vs {len(pmap[k])}"
        for ja in jmap[k]:
            assert any(same_args(ja, pa) for pa in pmap[k]), f"{kind} {k}: args {ja} vs {pmap[k]}"


def check(gprof, trace, work, min_flows):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    jpath, ppath = os.path.join(work, "out.json"), os.path.join(work, "out.pftrace")
    for out in (jpath, ppath):
        subprocess.run([gprof, "export", trace, "--perfetto", out], check=True,
                       capture_output=True)
    doc, thread_names, jslices, jinst, jflows, jcount, jorder = json_side(jpath)
    d = proto_side(ppath)

    assert d.clock == {BOOTTIME: 0, REALTIME: doc["baseTimeNanoseconds"]}, d.clock
    ptracks = {d.track_name(u) for u in d.tracks}
    assert thread_names <= ptracks, f"threads without a track: {thread_names - ptracks}"
    compare_events("slices", jslices, d.slices, 5)
    compare_events("instants", jinst, d.instants, 4)
    assert len(jflows) >= min_flows, f"the JSON has {len(jflows)} launch flows to compare"
    pflows = {f: (d.flow_src.get(f), d.flow_dst.get(f)) for f in set(d.flow_src) | set(d.flow_dst)}
    assert pflows == jflows, f"flows differ: {len(pflows)} vs {len(jflows)}"
    for values in jcount.values():  # the JSON's in file order, a protobuf track's in time order
        values.sort(key=lambda tv: tv[0])
    assert dict(d.counters) == jcount, f"counters differ: {sorted(d.counters)} vs {sorted(jcount)}"
    ordered = d.ordered_children()
    if "gprof-train findings" in ptracks:
        assert "gprof-train findings" in ordered, "the findings' order is not given"
    for parent, (kids, pranks) in ordered.items():
        if parent in jorder and (parent.startswith("GPU ") or parent == "gprof-train findings"):
            js = jorder[parent]
            assert sorted(kids) == sorted(js), f"{parent}: {kids} vs the JSON's {js}"
            ranks = [js[k] for k in kids]
            assert ranks == sorted(ranks), f"{parent}: {kids} out of the JSON's order {js}"
            assert len(set(pranks)) == len(set(ranks)), f"{parent}: ranks {pranks} vs {ranks}"
    findings = [s for s in d.slices if s[2] == "gprof_finding"]
    jsize, psize = os.path.getsize(jpath), os.path.getsize(ppath)
    assert psize * 2 <= jsize, f"{psize} bytes of protobuf against {jsize} of JSON"
    print(f"ok {os.path.basename(trace)}: {len(d.slices)} slices ({len(findings)} findings), "
          f"{len(d.instants)} instants, {len(pflows)} flows, "
          f"{sum(map(len, d.counters.values()))} counter values; "
          f"{psize} bytes against {jsize} of JSON ({psize / jsize:.2f})")
    return sum(len(v) for k, v in d.counters.items() if " memory " not in k)


def export(gprof, trace, out, *more):
    return subprocess.run([gprof, "export", trace, "--perfetto", out, *more], capture_output=True,
                          text=True)


def check_split_same(gprof, trace, work):
    """The trace read in parts on several threads (its counters merged) exports the same bytes."""
    outs = []
    for threads in ("1", "8"):
        out = os.path.join(work, f"split{threads}.pftrace")
        env = dict(os.environ, GP_TRACE_THREADS=threads, GP_TRACE_SPLIT_MIN="0")
        subprocess.run([gprof, "export", trace, "--perfetto", out], check=True, env=env,
                       capture_output=True)
        outs.append(open(out, "rb").read())
    assert outs[0] == outs[1], "the split read exports another trace"


def check_format_choice(gprof, trace, work):
    """The name picks the format (.pftrace, .perfetto-trace, with .gz too) unless --format
    says; a bad --format is refused by name (exit 2)."""
    cases = [("a.perfetto-trace", [], True), ("b.pftrace.gz", [], True), ("c.json", [], False),
             ("d.json", ["--format", "proto"], True), ("e.pftrace", ["--format", "json"], False)]
    for name, more, proto in cases:
        out = os.path.join(work, name)
        r = export(gprof, trace, out, *more)
        assert r.returncode == 0, r.stderr
        data = open(out, "rb").read()
        if name.endswith(".gz"):
            data = gzip.decompress(data)
        assert data[:1] == (b"\x0a" if proto else b"{"), f"{name} {more}: {data[:20]!r}"
        if proto:
            pb.Trace().ParseFromString(data)
    r = export(gprof, trace, os.path.join(work, "f.pftrace"), "--format", "xml")
    assert r.returncode == 2 and "--format" in r.stderr and "xml" in r.stderr, (r.returncode,
                                                                                 r.stderr)
    assert not os.path.exists(os.path.join(work, "f.pftrace")), "written despite the bad --format"


def main():
    gprof, trace, work = sys.argv[1:4]
    min_flows = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    if trace.startswith("prof:"):
        os.makedirs(work, exist_ok=True)
        path = os.path.join(work, "libprof.json")
        subprocess.run([trace[5:], path], check=True)
        n = check(gprof, path, work + "/out", min_flows)
        assert n >= 5 + 20 + 4, f"{n} of libprof's counter values came back"
        check_split_same(gprof, path, work)
        return 0
    if not trace.endswith("/"):
        check(gprof, trace, work, min_flows)
        check_format_choice(gprof, trace, work)
        return 0
    traces = os.listdir(trace) if os.path.isdir(trace) else []
    traces = sorted(f for f in traces if f.endswith(".json.gz"))
    if not traces:
        print(f"SKIP: no *.json.gz traces in {trace}")
        return 77
    for name in traces:
        check(gprof, os.path.join(trace, name), work, min_flows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
