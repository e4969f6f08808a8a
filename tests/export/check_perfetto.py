"""Export the sample trace with `gprof-train export --perfetto` and check it against the rules of
Perfetto's JSON importer (ref/trace_formats.md §1.3-1.4, §4) that would make it drop or merge
events: X slices nested per (pid, tid), non-negative durations, ids Perfetto keeps apart, v1
flows whose s and f share cat and name and sit on slices, counters with numeric args, names for
every process and thread; then that nothing was lost and the findings track covers idle gaps.
usage: check_perfetto.py GPROF_TRAIN TRACE WORK_DIR"""
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys


def ns(v):
    return round(float(v) * 1000)


def check_ids(e):
    for k in ("pid", "tid"):
        v = e.get(k)  # counters have no tid
        if isinstance(v, int):
            assert 0 <= v <= 0xFFFFFFFF, f"{k} {v} would become 0 in Perfetto: {e}"
    if isinstance(e["pid"], int) and e["pid"] != 0 and "tid" in e:
        assert e["tid"] != 0, f"tid 0 under pid {e['pid']} would become the pid: {e}"


def check_nesting(slices):
    """slices: {(pid, tid): [(ts, end, name)]}; Perfetto drops partially overlapping ones."""
    for key, lst in slices.items():
        lst.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        stack = []
        for ts, end, name in lst:
            while stack and stack[-1] <= ts:
                stack.pop()
            assert not stack or end <= stack[-1], f"{name} [{ts},{end}) overlaps its parent on {key}"
            stack.append(end)


def enclosing(slices, key, t):
    return any(ts <= t <= end for ts, end, _ in slices.get(key, []))


def check_flows(flows, slices):
    by_id = collections.defaultdict(list)
    for e in flows:
        by_id[e["id"]].append(e)
    for fid, pair in by_id.items():
        phs = sorted(e["ph"] for e in pair)
        assert phs == ["f", "s"], f"flow {fid}: {phs}"
        assert len({(e["cat"], e["name"]) for e in pair}) == 1, f"flow {fid} cat/name differ"
        for e in pair:
            assert enclosing(slices, (e["pid"], e["tid"]), ns(e["ts"])), f"flow end off a slice: {e}"
            if e["ph"] == "f":
                assert e.get("bp") == "e", e
    return len(by_id)


def idle_gaps(gpu, min_ns=1000000):
    """Gaps of at least min_ns between the union of GPU slices."""
    gaps, end = [], None
    for s, e, _ in gpu:
        if end is not None and s - end >= min_ns:
            gaps.append((end, s))
        end = e if end is None else max(end, e)
    return gaps


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def main():
    gprof, trace, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "out.json.gz")
    subprocess.run([gprof, "export", trace, "--perfetto", out], check=True, capture_output=True)
    doc = load(out)
    assert isinstance(doc, dict) and list(doc)[-1] == "traceEvents", list(doc)
    events = doc["traceEvents"]
    slices, flows, names, procs = collections.defaultdict(list), [], {}, {}
    counters = 0
    for e in events:
        assert "ph" in e and "pid" in e, e
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                names[(e["pid"], e["tid"])] = e["args"]["name"]
            elif e["name"] == "process_name":
                procs[e["pid"]] = e["args"]["name"]
            continue
        check_ids(e)
        if e["ph"] == "X":
            assert e.get("name") and isinstance(e.get("cat"), str) and float(e["dur"]) >= 0, e
            slices[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
        elif e["ph"] in "sf":
            flows.append(e)
        elif e["ph"] == "C":
            assert e["args"] and all(isinstance(v, (int, float)) for v in e["args"].values()), e
            counters += 1
    check_nesting(slices)
    n_flows = check_flows(flows, slices)
    for key in slices:
        assert key in names, f"thread {key} has no thread_name"
        assert key[0] in procs, f"process {key[0]} has no process_name"

    src = load(trace)["traceEvents"]
    n_x = sum(1 for e in src if e.get("ph") == "X")
    n_mem = sum(1 for e in src if e.get("name") == "[memory]")
    n_src_flows = sum(1 for e in src if e.get("ph") == "s")
    fpid = [p for p, n in procs.items() if n == "gprof-train findings"]
    assert len(fpid) == 1, procs
    finding_slices = {k: v for k, v in slices.items() if k[0] == fpid[0]}
    n_out_x = sum(len(v) for v in slices.values()) - sum(len(v) for v in finding_slices.values())
    assert n_out_x == n_x, f"{n_x} X events in, {n_out_x} out"
    assert counters == n_mem, f"{n_mem} [memory] events in, {counters} counter samples out"
    assert n_flows == n_src_flows, f"{n_src_flows} flows in, {n_flows} out"
    overflow = [n for n in names.values() if "(overlap" in n]
    assert overflow, "the sample's overlapping kernel did not move to an overflow thread"

    gt01 = [k for k in finding_slices if names.get(k, "").startswith("GT01 data-loader starvation")]
    assert gt01, f"no GT01 track: {[names.get(k) for k in finding_slices]}"
    gaps = idle_gaps(sorted(s for k, v in slices.items() if k[0] == 0 for s in v))
    marks = finding_slices[gt01[0]]

    def overlap(a, b):
        return sum(max(0, min(b, e) - max(a, s)) for s, e, _ in marks)

    covered = [g for g in gaps if overlap(*g) >= 0.5 * (g[1] - g[0])]
    assert gaps and len(covered) >= 0.8 * len(gaps), f"GT01 over {len(covered)} of {len(gaps)} gaps"
    for ts, end, _ in marks:
        assert any(min(end, g[1]) - max(ts, g[0]) >= 1000000 for g in gaps), \
            f"GT01 [{ts},{end}) is over no idle gap"
    print(f"ok: {len(events)} events, {n_out_x} slices nested, {n_flows} flows, {counters} "
          f"counter samples, GT01 over {len(covered)} of {len(gaps)} idle gaps")


if __name__ == "__main__":
    main()
