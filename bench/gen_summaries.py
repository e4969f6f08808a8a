#!/usr/bin/env python3
"""Write the summaries (schema gprof-train.summary/1, README "Summaries") of a synthetic job of
many ranks, without their traces: the input of `job` at a scale no machine holds the traces of.
Each rank has --steps steps and --colls all-reduces a step on process group "0" (stream 20);
every rank leaves a collective at the same instant, once the last has arrived, and arrives
within a few us of the others, except --straggler, which arrives --lag-ms late at every one.

usage: gen_summaries.py OUT_DIR [--ranks N] [--steps N] [--colls N] [--straggler R] [--lag-ms MS]
"""
import argparse
import json
import os
import random

BASE = 1700000000000000000
STEP_NS = 50_000_000


def rank_summary(a, r, arrive, ends):
    steps, calls, compute = [], [], []
    for s in range(a.steps):
        t0 = BASE + s * STEP_NS
        busy = 0
        for c in range(a.colls):
            ts, end = arrive[s][c][r], ends[s][c]
            calls.append({"step": s + 1, "op": "AllReduce", "name": "allreduce", "pg": "0",
                          "stream": 20, "seq": s * a.colls + c, "size": 1 << 22,
                          "ts_ns": ts, "end_ns": end})
            compute.append([ts - 200_000, ts + 100_000])  # the backward kernels beside it
            busy += end - ts
        late = r == a.straggler
        steps.append({"step": s + 1, "dur_ns": STEP_NS, "compute_ns": 30_000_000,
                      "comm_ns": busy, "exposed_ns": busy // 2,
                      "idle_ns": 2_000_000 + (int(a.lag_ms * 1e6) if late else 0),
                      "dataloader_ns": 1_000_000 + (int(a.lag_ms * 1e6) if late else 0)})
    return {"schema": "gprof-train.summary/1",
            "trace": "/traces/node%04d_%d.1.pt.trace.json.gz" % (r // 8, 4000 + r),
            "rank": r, "rank_from": "distributedInfo", "world_size": a.ranks,
            "host": "node%04d" % (r // 8), "base_time_ns": BASE, "lost": [],
            "steps": steps, "collectives": calls, "compute_ns": compute}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=16384)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--colls", type=int, default=3)
    ap.add_argument("--straggler", type=int, default=-1)
    ap.add_argument("--lag-ms", type=float, default=2.0)
    a = ap.parse_args()
    rnd = random.Random(29)
    os.makedirs(a.out, exist_ok=True)
    arrive, ends = [], []
    for s in range(a.steps):
        arrive.append([]), ends.append([])
        for c in range(a.colls):
            t = BASE + s * STEP_NS + (c + 1) * 10_000_000
            v = [t + rnd.randrange(0, 20_000) for _ in range(a.ranks)]
            if 0 <= a.straggler < a.ranks:
                v[a.straggler] += int(a.lag_ms * 1e6)
            arrive[-1].append(v)
            ends[-1].append(max(v) + 3_000_000)
    for r in range(a.ranks):
        doc = rank_summary(a, r, arrive, ends)
        path = os.path.join(a.out, "node%04d_%d.1.pt.trace.gprof-summary.json" % (r // 8, 4000 + r))
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
