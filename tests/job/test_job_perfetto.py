"""`gprof-train job --perfetto OUT.pftrace` (issue 27 §2): a generated job (bench/gen_job.py) with a
straggler and a rank whose clock runs 5 ms ahead, written on one Perfetto timeline and decoded
with Perfetto's own schema (perfetto_trace_pb2). Checks: a process per rank named with its clock
offset and uncertainty, each rank on its own packet sequence with its own interning, the skewed
rank's collectives ending where the others' do (aligned), a "collective waits" track on every
rank but the straggler with one slice per late collective, from the rank's arrival to the
straggler's, and a rank that shares no collective with rank 0 refused with exit 2 and no file.
The JSON variant (--perfetto OUT.json) has the same processes, slices, time 0 and waits.
usage: test_job_perfetto.py GPROF_TRAIN WORK_DIR SAMPLE_TRACE"""
import collections
import json
import os
import shutil
import subprocess
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "export"))
from check_perfetto import check_flows, check_ids, check_nesting, ns  # noqa: E402
from job_util import check, finish, gen, run_job  # noqa: E402

TE = pb.TrackEvent
US = 1000


class Seq:
    """One packet sequence: its interned event names."""

    def __init__(self):
        self.names, self.cleared = {}, False


def decode(path):
    """(tracks {uuid: descriptor}, slices [(track uuid, name, ts, dur, args)], clock, seqs)."""
    trace = pb.Trace()
    trace.ParseFromString(open(path, "rb").read())
    seqs, tracks, opened, slices, clock = collections.defaultdict(Seq), {}, {}, [], None
    for p in trace.packet:
        s = seqs[p.trusted_packet_sequence_id]
        if p.HasField("clock_snapshot"):
            clock = {c.clock_id: c.timestamp for c in p.clock_snapshot.clocks}
        if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            s.cleared, s.names = True, {}
        for x in p.interned_data.event_names:
            s.names[x.iid] = x.name
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        if not p.HasField("track_event"):
            continue
        e = p.track_event
        check(s.cleared, "an event before its sequence's state was cleared")
        if e.type == TE.TYPE_SLICE_BEGIN:
            name = s.names[e.name_iid] if e.HasField("name_iid") else e.name
            args = {a.name: a.int_value for a in e.debug_annotations if a.name}
            opened.setdefault(e.track_uuid, []).append((name, p.timestamp, args))
        elif e.type == TE.TYPE_SLICE_END:
            name, ts, args = opened[e.track_uuid].pop()
            slices.append((e.track_uuid, name, ts, p.timestamp - ts, args))
    return tracks, slices, clock, seqs


def name_of(d):
    return d.process.process_name if d.HasField("process") else d.name


def rank_of(tracks, uuid):
    """The rank whose process holds track `uuid` ("rank N (...)"), or None."""
    while uuid:
        d = tracks[uuid]
        if d.HasField("process") and d.process.process_name.startswith("rank "):
            return int(d.process.process_name.split()[1])
        uuid = d.parent_uuid
    return None


def aligned_job(binary, work):
    d = os.path.join(work, "job")
    gen(d, "--ranks", 3, "--steps", 4, "--straggler", 1, "--lag-ms", 3, "--skew", "2:5")
    out = os.path.join(work, "job.pftrace")
    run_job(binary, d, "--perfetto", out, "--format", "json")
    run_job(binary, d, "--perfetto", os.path.join(work, "job.json"))
    tracks, slices, clock, seqs = decode(out)
    n_flows = sum(1 for f in os.listdir(d) for e in json.load(open(os.path.join(d, f)))
                  ["traceEvents"] if e.get("ph") == "s")
    json_job(work, clock, len(slices), n_flows)
    procs = {name_of(t): t.process.pid for t in tracks.values() if t.HasField("process")}
    check(sorted(n.split(" (")[0] for n in procs) == ["rank 0", "rank 1", "rank 2"],
          "a process per rank, and no other: %s" % sorted(procs))
    check(len(set(procs.values())) == 3, "each rank its own pid: %s" % procs)
    check(any(n.startswith("rank 2 (clock +5.000 ms") for n in procs),
          "rank 2's name gives its 5 ms clock offset: %s" % sorted(procs))
    check(all("us)" in n and "\u00b1" in n for n in procs), "uncertainty in names: %s" % procs)
    check(len(seqs) == 3, "a packet sequence per rank: %d" % len(seqs))
    check(clock is not None and clock.get(1, 0) > 1.6e18, "a clock snapshot with wall time")
    # every rank leaves a collective at the same instant: aligned, rank 2's ends are rank 0's
    ends = collections.defaultdict(list)
    for uuid, name, ts, dur, _ in slices:
        if name.startswith("ncclDevKernel"):
            ends[rank_of(tracks, uuid)].append(ts + dur)
    check(len(ends[0]) == 8 and all(len(ends[r]) == 8 for r in (1, 2)),
          "8 all-reduces a rank: %s" % {r: len(v) for r, v in ends.items()})
    for r in (1, 2):
        off = max(abs(a - b) for a, b in zip(sorted(ends[0]), sorted(ends[r])))
        check(off <= 1 * US, "rank %d's collectives end with rank 0's: %d ns apart" % (r, off))
    waits = collections.defaultdict(list)
    for uuid, name, ts, dur, args in slices:
        if tracks[uuid].name.startswith("collective waits"):
            waits[rank_of(tracks, uuid)].append((name, ts, dur, args))
    check(sorted(waits) == [0, 2], "waits on ranks 0 and 2, none on the straggler: %s"
          % sorted(waits))
    starts1 = sorted(ts for uuid, name, ts, dur, _ in slices
                     if name.startswith("ncclDevKernel") and rank_of(tracks, uuid) == 1)
    for r in (0, 2):
        w = waits[r]
        check(len(w) == 8 and all(n == "wait for rank 1 (AllReduce)" for n, _, _, _ in w),
              "rank %d: a wait for rank 1 at each of the 8 collectives: %s" % (r, w[:2]))
        check(all(a["waited for rank"] == 1 and a["wait ns"] == d for _, _, d, a in w),
              "rank %d: each wait's args name rank 1 and its length" % r)
        big = sum(1 for _, _, d, _ in w if abs(d - 3000 * US) <= 10 * US)
        check(big == 4, "rank %d: the exposed all-reduce waits the 3 ms lag each step: %d" % (r, big))
        off = max(min(abs(ts + d - s) for s in starts1) for _, ts, d, _ in w)
        check(off <= 1 * US, "rank %d: each wait ends where rank 1's collective starts (%d ns)"
              % (r, off))


def importer_rules(evs, n_flows):
    """What Perfetto's JSON importer needs (check_perfetto.py): ids it keeps apart, slices nested
    per thread, each flow id one s and one f on slices (ids unique across the ranks), a name for
    every thread and process."""
    slices, flows = collections.defaultdict(list), []
    names = {(e["pid"], e["tid"]) for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    procs = {e["pid"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
    try:
        for e in evs:
            if e["ph"] != "M":
                check_ids(e)
            if e["ph"] == "X":
                slices[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"] + e["dur"]),
                                                     e["name"]))
            elif e["ph"] in "sf":
                flows.append(e)
        check_nesting(slices)
        got = check_flows(flows, slices)
        check(got == n_flows, "JSON: %d launch flows, the ranks' traces have %d" % (got, n_flows))
    except AssertionError as x:
        check(False, "JSON: %s" % x)
    check(all(k in names and k[0] in procs for k in slices), "JSON: every thread named")


def json_job(work, clock, n_slices, n_flows):
    """The JSON variant of the same job: the same processes, aligned times, waits and slices."""
    doc = json.load(open(os.path.join(work, "job.json")))
    evs = doc["traceEvents"]
    check(doc["baseTimeNanoseconds"] == clock.get(1), "JSON's time 0 is the protobuf's: %s, %s"
          % (doc["baseTimeNanoseconds"], clock.get(1)))
    procs = {e["pid"]: e["args"]["name"] for e in evs
             if e["ph"] == "M" and e["name"] == "process_name"}
    rank = {pid: int(n.split()[1]) for pid, n in procs.items() if n.startswith("rank ")}
    check(sorted(rank.values()) == [0, 1, 2] and len(procs) == 3,
          "JSON: a process per rank, and no other: %s" % sorted(procs.values()))
    xs = [e for e in evs if e["ph"] == "X"]
    check(len(xs) == n_slices, "JSON: %d slices, the protobuf %d" % (len(xs), n_slices))
    importer_rules(evs, n_flows)
    ends = collections.defaultdict(list)
    waits = collections.defaultdict(list)
    for e in xs:
        if e["name"].startswith("ncclDevKernel"):
            ends[rank[e["pid"]]].append(round((e["ts"] + e["dur"]) * 1000))
        if e["cat"] == "gprof_wait":
            waits[rank[e["pid"]]].append(e["name"])
    off = max(abs(a - b) for a, b in zip(sorted(ends[0]), sorted(ends[2])))
    check(off <= 1 * US, "JSON: rank 2's collectives end with rank 0's: %d ns apart" % off)
    check(sorted(waits) == [0, 2] and all(len(w) == 8 for w in waits.values()) and
          all(n == "wait for rank 1 (AllReduce)" for w in waits.values() for n in w),
          "JSON: 8 waits for rank 1 on ranks 0 and 2: %s" % dict(waits))


def refused(binary, work, sample):
    """Two ranks of a job and a third trace with no collective: its clock cannot be aligned."""
    d = os.path.join(work, "unaligned")
    gen(d, "--ranks", 2, "--steps", 3)
    doc = json.load(open(sample))
    doc["distributedInfo"] = {"rank": 2, "world_size": 3}
    lone = os.path.join(work, "lone_rank2.json")
    json.dump(doc, open(lone, "w"))
    out = os.path.join(work, "unaligned.pftrace")
    p = subprocess.run([binary, "job", d, lone, "--perfetto", out], capture_output=True,
                       text=True)
    check(p.returncode == 2, "an unaligned rank: exit %d, want 2" % p.returncode)
    check("cannot be aligned" in p.stderr and "lone_rank2.json" in p.stderr,
          "the error names the trace and why: %s" % p.stderr.strip())
    check(not os.path.exists(out), "no timeline written for an unaligned job")
    p = subprocess.run([binary, "job", d, lone, "--perfetto", out[:-8] + ".json"],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "cannot be aligned" in p.stderr, "JSON too: exit 2")
    p = subprocess.run([binary, "export", d, "--perfetto", out], capture_output=True, text=True)
    check(p.returncode == 2 and "gprof-train job" in p.stderr,
          "export of a job's folder: exit 2 and a hint at job --perfetto: %s" % p.stderr)


def main():
    binary, work, sample = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    aligned_job(binary, work)
    refused(binary, work, sample)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
