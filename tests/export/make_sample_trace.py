"""Write tests/export/data/starved_worker.1700000000000.pt.trace.json: a small, deterministic
Kineto-style trace of 6 training steps whose GPU sits idle while the data loader works (so the
diagnosis fires GT01), with cpu ops, cudaLaunchKernel/cudaMemcpyAsync runtime calls, kernels on
stream 7, one kernel that partially overlaps its neighbour (an overflow lane in the Perfetto
export), ac2g flows, [memory] samples, and a name that needs escaping.
usage: python3 make_sample_trace.py OUT.json"""
import json
import sys

PID, TID, DEV, STREAM = 4242, 4242, 0, 7
MIB = 1 << 20


def main(out):
    ev = [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": 0, "args": {"name": "python"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": TID, "args": {"name": "thread 4242 (python)"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": DEV, "tid": STREAM, "args": {"name": "stream 7 "}},
    ]
    ext, corr, addr, alloc = [1], [100], [0x7f0000000000], [0]

    def nxt(c):
        c[0] += 1
        return c[0]

    def mem(ts, nbytes, a):
        alloc[0] += nbytes
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": PID,
                   "tid": TID, "ts": ts, "args": {"Addr": a, "Bytes": nbytes,
                                                  "Total Allocated": alloc[0],
                                                  "Total Reserved": 64 * MIB,
                                                  "Device Type": 1, "Device Id": DEV}})

    def launch(ts, op_ext, kname, kts, kdur, rt="cudaLaunchKernel", cat="kernel", extra=None):
        c = nxt(corr)
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": rt, "pid": PID, "tid": TID, "ts": ts,
                   "dur": 10, "args": {"External id": op_ext, "cbid": 211, "correlation": c}})
        ev.append({"ph": "s", "id": c, "pid": PID, "tid": TID, "ts": ts, "cat": "ac2g", "name": "ac2g"})
        args = {"External id": op_ext, "queued": 0, "device": DEV, "context": 1, "stream": STREAM,
                "correlation": c}
        args.update(extra or {"registers per thread": 64, "shared memory": 8192,
                              "blocks per SM": 0.5, "warps per SM": 2.0, "grid": [66, 1, 1],
                              "block": [128, 1, 1], "est. achieved occupancy %": 12})
        ev.append({"ph": "X", "cat": cat, "name": kname, "pid": DEV, "tid": STREAM, "ts": kts,
                   "dur": kdur, "args": args})
        ev.append({"ph": "f", "id": c, "pid": DEV, "tid": STREAM, "ts": kts, "cat": "ac2g",
                   "name": "ac2g", "bp": "e"})

    t = 1000.0
    for step in range(1, 7):
        e = nxt(ext)
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": PID,
                   "tid": TID, "ts": t, "dur": 10200, "args": {"External id": e}})
        ev.append({"ph": "X", "cat": "user_annotation",
                   "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                   "pid": PID, "tid": TID, "ts": t + 10, "dur": 7990, "args": {"External id": nxt(ext)}})
        e = nxt(ext)
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": PID, "tid": TID,
                   "ts": t + 8005, "dur": 40, "args": {"External id": e, "Input Dims": [[64, 784], [64, 784]]}})
        launch(t + 8010, e, "Memcpy HtoD (Pageable -> Device)", t + 8030, 60, "cudaMemcpyAsync",
               "gpu_memcpy", {"bytes": 200704, "memory bandwidth (GB/s)": 0.67})
        for k in range(10):
            e = nxt(ext)
            ots = t + 8100 + k * 200
            name = "aten::mm" if k % 2 == 0 else "aten::relu <fused> & \"quoted\""
            ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": PID, "tid": TID, "ts": ots,
                       "dur": 150, "args": {"External id": e, "Input Dims": [[64, 128], [128, 64]]}})
            a = nxt(addr)
            mem(ots + 1, 4 * MIB, a)
            kname = "sm90_xmma_gemm_f32f32_tn_n" if k % 2 == 0 else "void relu_kernel<float>(float*, int)"
            kdur = 180 if not (step == 3 and k == 4) else 260  # overlaps the next kernel
            launch(ots + 20, e, kname, ots + 40, kdur)
            mem(ots + 140, -4 * MIB, a)
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": PID,
                   "tid": TID, "ts": t + 10100, "dur": 60, "args": {"cbid": 131, "correlation": nxt(corr)}})
        t += 10300
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936,
                                 "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                                 "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
                                 "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132}],
           "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
           "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000,
           "traceEvents": ev}
    with open(out, "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
