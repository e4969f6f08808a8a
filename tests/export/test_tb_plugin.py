"""Export tests/export/data's sample trace with `gprof-train export --tensorboard` and load the run
with torch-tb-profiler 0.4.3's own loader (RunLoader, the code TensorBoard runs), then assert the
Overview (steps, step-time breakdown), Operator (device time reached through Runtime links),
Kernel, Trace and Memory views.
usage: test_tb_plugin.py GPROF_TRAIN TRACE WORK_DIR"""
import os
import shutil
import subprocess
import sys

from torch_tb_profiler import consts, io
from torch_tb_profiler.profiler.loader import RunLoader

GEMM = "sm90_xmma_gemm_f32f32_tn_n"
RELU = "void relu_kernel<float>(float*, int)"


def col(table, name):
    return [c.get("name") for c in table["columns"]].index(name)


def check_overview(p):
    steps = p.overview["steps"]
    names = [r[0] for r in steps["rows"]]
    assert names == [str(i) for i in range(1, 7)], names  # 6 steps, CPU side only
    perf = {c["name"]: c["value"] for c in p.overview["performance"][0]["children"]}
    # the sample, per step: loader 7990 us, 10 kernels of 180 us (in step 3 one runs 80 us
    # longer, 60 of them under the next: +20 us), a 60 us copy
    assert abs(perf["DataLoader"] - 7990) <= 1, perf
    assert abs(perf["Kernel"] - (1800 * 5 + 1820) / 6) <= 1, perf
    assert abs(perf["Memcpy"] - 60) <= 1, perf
    assert perf["Runtime"] > 0, perf  # 0.4.3 sees runtime calls only under cat "Runtime"
    total = p.overview["performance"][0]["value"]
    assert abs(sum(perf.values()) - total) <= 8, (perf, total)  # parts add up (rounded)
    row1 = steps["rows"][0]
    assert abs(row1[col(steps, "DataLoader")] - 7990) <= 1, row1


def check_ops_and_kernels(p):
    ops = {r["name"]: r for r in p.operation_table_by_name["data"]}
    assert ops["aten::mm"]["calls"] == 30, ops["aten::mm"]
    # device time reached op -> Runtime (External id) -> kernel (correlation); one runs 260 us
    assert ops["aten::mm"]["device_total_duration"] == 29 * 180 + 260, ops["aten::mm"]
    kt = p.kernel_table
    rows = {r[0]: r for r in kt["data"]["rows"]} if "data" in kt else {r[0]: r for r in kt["rows"]}
    cols = kt["data"]["columns"] if "data" in kt else kt["columns"]
    calls = [c["name"] for c in cols].index("Calls")
    assert rows[GEMM][calls] == 30 and rows[RELU][calls] == 30, rows
    assert rows[GEMM][1] == "Yes", rows[GEMM]  # xmma_gemm: a Tensor Core kernel name


def check_trace_view(p, path):
    """The Trace tab serves the file with GPU-metric counters spliced in before its last ']'."""
    import gzip
    import json
    raw = gzip.open(path, "rb").read()
    served = json.loads(gzip.decompress(p.append_gpu_metrics(raw)))
    assert p.gpu_metrics, "no GPU utilisation counters computed"
    names = {e["name"] for e in served["traceEvents"]}
    assert "GPU 0 Utilization" in names, sorted(names)[:20]
    assert len(served["traceEvents"]) == len(json.loads(raw)["traceEvents"]) + len(p.gpu_metrics)


def check_memory(p):
    stats = p.get_memory_stats()
    assert stats, "no memory stats"
    curve = p.get_memory_curve()
    assert curve["rows"], curve


def main():
    gprof, trace, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    logdir = os.path.join(work, "tb")
    out = subprocess.run([gprof, "export", trace, "--tensorboard", logdir, "--run", "sample"],
                         check=True, capture_output=True, text=True).stdout
    run_dir = os.path.join(logdir, "sample")
    files = os.listdir(run_dir)
    assert len(files) == 1 and consts.WORKER_PATTERN.match(files[0]), files
    assert out.strip() == "tensorboard: " + os.path.join(run_dir, files[0]), out

    run = RunLoader("sample", run_dir, io.Cache(os.path.join(work, "cache"))).load()
    workers = run.workers
    assert workers == ["starved_worker"], f"the plugin dropped the worker: {workers}"
    p = run.get_profile("starved_worker", run.get_spans("starved_worker")[0])
    views = [v.display_name for v in p.views]
    for v in ("Overview", "Operator", "Kernel", "Trace", "Memory"):
        assert v in views, views
    check_overview(p)
    check_ops_and_kernels(p)
    check_trace_view(p, os.path.join(run_dir, files[0]))
    check_memory(p)
    print(f"ok: torch-tb-profiler loaded {files[0]} with views {views}")


if __name__ == "__main__":
    main()
