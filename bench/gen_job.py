#!/usr/bin/env python3
"""Write a synthetic multi-rank job: one Kineto-style trace per rank (ProfilerStep#N ranges, a
DataLoader range, cpu_ops launching kernels on stream 7 through cudaLaunchKernel with correlation
ids and ac2g flows, and two NCCL all-reduces a step on stream 20: a gradient bucket that overlaps
the backward kernels and a last one that is exposed). Every rank leaves a collective at the same
instant, once the last rank has arrived, as NCCL does.

usage: gen_job.py OUT_DIR [--ranks N] [--steps N] [--straggler R] [--cause loader|kernels|host]
                  [--lag-ms MS] [--skew RANK:MS]... [--names ncclKernel|ncclDevKernel|old|rccl|
                  msccl|mixed] [--no-dist] [--gzip] [--kernels N] [--buckets N] [--comm-args]
                  [--seq] [--side-groups] [--drop RANK:STEP:K]... [--world N]

--straggler R makes rank R late at every collective by about --lag-ms through --cause: a slower
DataLoader, a busier host (a gap before its kernels) or slower kernels. --skew 2:5 writes rank
2's clock 5 ms ahead. --no-dist leaves distributedInfo out (the rank is then in the file name).
--buckets N: all-reduces a step (gradient buckets; the last one after the backward kernels).
--comm-args writes what PyTorch records of a collective on its kernels ("Collective name",
"Process Group Name", "Process Group Ranks", "In msg nelems", "Out msg nelems", "dtype",
"Group size"), --seq also "Seq" (the collective's number in its group).
--side-groups adds an all_to_all a step on stream 21 in a process group of the ranks of one
parity (as expert-parallel groups of a larger job): even ranks issue it before the backward
kernels, odd ranks once the first bucket has ended, so each rank runs its collectives
in another order, and ranks of different parity never share that collective.
--drop 1:3:0 leaves rank 1's first all-reduce of step 3 out of its trace (a record the
profiler lost). --world N writes distributedInfo.world_size N (default: --ranks).
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
A2A = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"
A2A_US = 1500.0
CPU_OPS = ["nccl:all_reduce", "c10d::allreduce_", "nccl:all_reduce", "c10d::allreduce_", "nccl:all_reduce"]
BASE_NS = 1700000000000000000
STREAM, COMM_STREAM, SIDE_STREAM = 7, 20, 21
BUCKET_NELEMS = 1 << 22


class Rank:
    def __init__(self, r, pid, skew_us, kname, cpu_op):
        self.r, self.pid, self.skew, self.kname, self.cpu_op = r, pid, skew_us, kname, cpu_op
        self.ev = [
            {"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0, "args": {"name": "python"}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": pid, "args": {"name": "thread %d (python)" % pid}},
        ]
        self.corr = 100
        self.ext = 1
        self.seq = {}

    def x(self, cat, name, pid, tid, ts, dur, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
             "ts": round(ts + self.skew, 3), "dur": round(dur, 3)}
        if args is not None:
            e["args"] = args
        self.ev.append(e)

    def launch(self, op, kname, ts, kts, kdur, stream, kargs=None, drop=False):
        """A cpu_op at ts launching kernel kname at kts on stream (with kargs in its args; left
        out of the trace when drop)."""
        self.ext += 1
        self.corr += 1
        e, c = self.ext, self.corr
        self.x("cpu_op", op, self.pid, self.pid, ts, 12, {"External id": e})
        self.x("cuda_runtime", "cudaLaunchKernel", self.pid, self.pid, ts + 2, 8,
               {"External id": e, "cbid": 211, "correlation": c})
        self.ev.append({"ph": "s", "id": c, "pid": self.pid, "tid": self.pid, "ts": round(ts + 2 + self.skew, 3),
                        "cat": "ac2g", "name": "ac2g"})
        if drop:
            return
        self.x("kernel", kname, 0, stream, kts, kdur,
               {"External id": e, "device": 0, "stream": stream, "correlation": c,
                "grid": [132, 1, 1], "block": [256, 1, 1], "registers per thread": 64, **(kargs or {})})
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


def comm_args(a, rk, coll, pg, ranks, nelems):
    """What PyTorch records of a collective, as its kernels carry it (--comm-args)."""
    if not a.comm_args:
        return None
    args = {"Collective name": coll, "In msg nelems": nelems, "Out msg nelems": nelems,
            "Group size": len(ranks), "dtype": "Float", "Process Group Name": pg,
            "Process Group Description": "undefined", "Process Group Ranks": str(ranks)}
    if a.seq:
        rk.seq[pg] = rk.seq.get(pg, 0) + 1
        args["Seq"] = rk.seq[pg]
    return args


def bucket_times(a, allt, t):
    """Arrival of every rank at each all-reduce bucket, and the buckets' ends (every rank leaves
    a collective once the last one has arrived)."""
    arr, ends = [], []
    for b in range(a.buckets):
        last = b == a.buckets - 1
        at = []
        for k0, kd, kend in allt:
            if last:
                at.append(max([kend] + ends[-1:]) + 10)
            else:
                ready = k0 + ((b + 1) * a.kernels // a.buckets) * (kd + 5)
                at.append(max(ready, ends[-1] + 10) if ends else ready)
        arr.append(at)
        ends.append(max(at) + (400.0 if last else 300.0))
    return arr, ends


def side_times(a, allt, ends):
    """--side-groups: each rank's all_to_all issue time and its group's end."""
    issue = [allt[r][0] if r % 2 == 0 else ends[0] + 10 for r in range(a.ranks)]
    end = {}
    for r in range(a.ranks):
        end[r % 2] = max(end.get(r % 2, 0.0), issue[r] + A2A_US)
    return issue, [end[r % 2] for r in range(a.ranks)]


def step(a, ranks, num, t):
    """Emit step `num` starting at t on `ranks` (a block of the job); return the next start.
    Collective ends come from every rank's plan, so blocks written apart agree."""

    def times(r):
        lo, ho, kd = plan(a, r)
        k0 = t + lo + ho
        return k0, kd, k0 + a.kernels * (kd + 5)

    allt = [times(r) for r in range(a.ranks)]
    arr, ends = bucket_times(a, allt, t)
    stop = ends[-1] + 150.0
    if a.side_groups:
        s_issue, s_end = side_times(a, allt, ends)
        stop = max(stop, max(s_end) + 20.0)
    world = list(range(a.ranks))
    at_k = {((b + 1) * a.kernels // a.buckets) - 1: b for b in range(a.buckets - 1)}
    for rk in ranks:
        lo, ho, kd = plan(a, rk.r)
        k0 = allt[rk.r][0]

        def bucket(b):
            kargs = comm_args(a, rk, "allreduce", "0", world, BUCKET_NELEMS)
            drop = (rk.r, num, b) in a.drops
            rk.launch(rk.cpu_op, rk.kname, arr[b][rk.r] - 15, arr[b][rk.r], ends[b] - arr[b][rk.r],
                      COMM_STREAM, kargs, drop)
            if a.side_groups and rk.r % 2 == 1 and b == 0:
                side()

        def side():
            grp = [r for r in world if r % 2 == rk.r % 2]
            kargs = comm_args(a, rk, "all_to_all", str(1 + rk.r % 2), grp, 1 << 20)
            rk.launch("nccl:all_to_all", A2A, s_issue[rk.r] - 15, s_issue[rk.r],
                      s_end[rk.r] - s_issue[rk.r], SIDE_STREAM, kargs)

        rk.x("user_annotation", "ProfilerStep#%d" % num, rk.pid, rk.pid, t, stop - t, {"External id": 0})
        rk.x("user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
             rk.pid, rk.pid, t + 1, lo - 2)
        if a.side_groups and rk.r % 2 == 0:
            side()
        for k in range(a.kernels):
            kts = k0 + k * (kd + 5)
            rk.launch("aten::mm", "sm90_xmma_gemm_f32f32_tn_n", min(kts - 20, t + lo + 2 + k * 15), kts, kd, STREAM)
            if k in at_k:
                bucket(at_k[k])
        bucket(a.buckets - 1)
        rk.launch("Optimizer.step#Adam.step", "multi_tensor_apply_kernel", ends[-1] + 5, ends[-1] + 20, 100, STREAM)
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
    ap.add_argument("--buckets", type=int, default=2)
    ap.add_argument("--comm-args", action="store_true")
    ap.add_argument("--seq", action="store_true")
    ap.add_argument("--side-groups", action="store_true")
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--world", type=int, default=0)
    a = ap.parse_args()
    a.drops = {tuple(int(x) for x in d.split(":")) for d in a.drop}
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
            write(a, rk, a.world or a.ranks)


if __name__ == "__main__":
    main()
