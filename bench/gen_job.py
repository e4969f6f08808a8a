#!/usr/bin/env python3
"""Write a synthetic multi-rank job: one Kineto-style trace per rank (ProfilerStep#N ranges, a
DataLoader range, cpu_ops launching kernels on stream 7 through cudaLaunchKernel with correlation
ids and ac2g flows, and two NCCL all-reduces a step on stream 20: a gradient bucket that overlaps
the backward kernels and a last one that is exposed). Every rank leaves a collective at the same
instant, once the last rank has arrived, as NCCL does.

usage: gen_job.py OUT_DIR [--ranks N] [--steps N] [--straggler R] [--cause loader|kernels|host]
                  [--lag-ms MS] [--skew RANK:MS]... [--names ncclKernel|ncclDevKernel|old|rccl|
                  msccl|mixed] [--no-dist] [--gzip] [--kernels N]

--straggler R makes rank R late at every collective by about --lag-ms through --cause: a slower
DataLoader, a busier host (a gap before its kernels) or slower kernels. --skew 2:5 writes rank
2's clock 5 ms ahead. --no-dist leaves distributedInfo out (the rank is then in the file name).
"""
import argparse
import gzip
import json
import os

NAMES = {
    "ncclKernel": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "old": "void ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)",
    "rccl": "ncclDevKernel_Generic_4(ncclDevComm*, unsigned long, ncclWork*)",
    "msccl": "mscclKernel_Sum_float_Simple_false(ncclDevComm*, mscclAlgo*, mscclWork*)",
}
CPU_OPS = ["nccl:all_reduce", "c10d::allreduce_", "nccl:all_reduce", "c10d::allreduce_", "nccl:all_reduce"]
BASE_NS = 1700000000000000000
STREAM, COMM_STREAM = 7, 20


class Rank:
    def __init__(self, r, pid, skew_us, kname, cpu_op):
        self.r, self.pid, self.skew, self.kname, self.cpu_op = r, pid, skew_us, kname, cpu_op
        self.ev = [
            {"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0, "args": {"name": "python"}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": pid, "args": {"name": "thread %d (python)" % pid}},
        ]
        self.corr = 100
        self.ext = 1

    def x(self, cat, name, pid, tid, ts, dur, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
             "ts": round(ts + self.skew, 3), "dur": round(dur, 3)}
        if args is not None:
            e["args"] = args
        self.ev.append(e)

    def launch(self, op, kname, ts, kts, kdur, stream):
        """A cpu_op at ts launching kernel kname at kts on stream."""
        self.ext += 1
        self.corr += 1
        e, c = self.ext, self.corr
        self.x("cpu_op", op, self.pid, self.pid, ts, 12, {"External id": e})
        self.x("cuda_runtime", "cudaLaunchKernel", self.pid, self.pid, ts + 2, 8,
               {"External id": e, "cbid": 211, "correlation": c})
        self.ev.append({"ph": "s", "id": c, "pid": self.pid, "tid": self.pid, "ts": round(ts + 2 + self.skew, 3),
                        "cat": "ac2g", "name": "ac2g"})
        self.x("kernel", kname, 0, stream, kts, kdur,
               {"External id": e, "device": 0, "stream": stream, "correlation": c,
                "grid": [132, 1, 1], "block": [256, 1, 1], "registers per thread": 64})
        self.ev.append({"ph": "f", "id": c, "pid": 0, "tid": stream, "ts": round(kts + self.skew, 3),
                        "cat": "ac2g", "name": "ac2g", "bp": "e"})


def plan(a, r):
    """(loader us, host gap us, kernel us) of rank r."""
    loader, host, kern = 1000.0, 50.0, 200.0
    if r == a.straggler:
        extra = a.lag_ms * 1000.0
        if a.cause == "loader":
            loader += extra
        elif a.cause == "host":
            host += extra
        else:
            kern += extra / a.kernels
    return loader, host, kern


def step(a, ranks, num, t):
    """Emit step `num` starting at t on `ranks` (a block of the job); return the next start.
    Collective ends come from every rank's plan, so blocks written apart agree."""
    half = a.kernels // 2

    def times(r):
        lo, ho, kd = plan(a, r)
        k0 = t + lo + ho
        return k0, k0 + half * (kd + 5), k0 + a.kernels * (kd + 5)

    allt = [times(r) for r in range(a.ranks)]
    end0 = max(x[1] for x in allt) + 300.0
    end1 = max(max(x[2], end0) + 10 for x in allt) + 400.0
    p = [plan(a, rk.r) for rk in ranks]
    k0 = [allt[rk.r][0] for rk in ranks]
    arr0 = [allt[rk.r][1] for rk in ranks]
    arr1 = [max(allt[rk.r][2], end0) + 10 for rk in ranks]
    stop = end1 + 150.0
    for i, rk in enumerate(ranks):
        lo, ho, kd = p[i]
        rk.x("user_annotation", "ProfilerStep#%d" % num, rk.pid, rk.pid, t, stop - t, {"External id": 0})
        rk.x("user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
             rk.pid, rk.pid, t + 1, lo - 2)
        for k in range(a.kernels):
            kts = k0[i] + k * (kd + 5)
            rk.launch("aten::mm", "sm90_xmma_gemm_f32f32_tn_n", min(kts - 20, t + lo + 2 + k * 15), kts, kd, STREAM)
            if k == half - 1:
                rk.launch(rk.cpu_op, rk.kname, arr0[i] - 15, arr0[i], end0 - arr0[i], COMM_STREAM)
        rk.launch(rk.cpu_op, rk.kname, arr1[i] - 15, arr1[i], end1 - arr1[i], COMM_STREAM)
        rk.launch("Optimizer.step#Adam.step", "multi_tensor_apply_kernel", end1 + 5, end1 + 20, 100, STREAM)
    return stop + 20


def write(a, rk, world):
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936,
                                 "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
           "baseTimeNanoseconds": BASE_NS, "displayTimeUnit": "ms", "traceEvents": rk.ev}
    if not a.no_dist:
        doc = {"distributedInfo": {"backend": "nccl", "rank": rk.r, "world_size": world}, **doc}
        name = "node%d_%d.1700000000000.pt.trace.json" % (rk.r // 8, rk.pid)
    else:
        name = "job_rank%d.pt.trace.json" % rk.r
    text = json.dumps(doc, separators=(",", ":")) + "\n"
    path = os.path.join(a.out, name + (".gz" if a.gzip else ""))
    if a.gzip:
        with gzip.open(path, "wt", compresslevel=1) as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--kernels", type=int, default=8)
    ap.add_argument("--straggler", type=int, default=-1)
    ap.add_argument("--cause", choices=["loader", "kernels", "host"], default="loader")
    ap.add_argument("--lag-ms", type=float, default=3.0)
    ap.add_argument("--skew", action="append", default=[])
    ap.add_argument("--names", choices=list(NAMES) + ["mixed"], default="ncclDevKernel")
    ap.add_argument("--no-dist", action="store_true")
    ap.add_argument("--gzip", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    skew = {int(s.split(":")[0]): float(s.split(":")[1]) * 1000.0 for s in a.skew}
    variants = list(NAMES)
    for lo in range(0, a.ranks, 64):  # a block of ranks at a time: memory stays small
        ranks = []
        for r in range(lo, min(a.ranks, lo + 64)):
            v = variants[r % len(variants)] if a.names == "mixed" else a.names
            ranks.append(Rank(r, 1000 + r, skew.get(r, 0.0), NAMES[v], CPU_OPS[r % len(CPU_OPS)]))
        t = 50000.0  # clock skews stay positive
        for s in range(1, a.steps + 1):
            t = step(a, ranks, s, t)
        for rk in ranks:
            write(a, rk, a.ranks)


if __name__ == "__main__":
    main()
