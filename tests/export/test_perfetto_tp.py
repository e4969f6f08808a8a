"""Load `gprof-train export --perfetto` output in Perfetto's own trace_processor and assert that
the importer dropped nothing: no json/slice/flow error stats, every X slice kept, every flow
linked, and the GT01 annotation present. PyPI's perfetto package fetches the trace_processor
binary from outside PyPI at first use, so this runs only when one is at hand: $GP_TRACE_PROCESSOR
or trace_processor_shell on PATH; otherwise it skips (77).
usage: test_perfetto_tp.py GPROF_TRAIN TRACE WORK_DIR"""
import json
import os
import shutil
import subprocess
import sys


def main():
    gprof, trace, work = sys.argv[1:4]
    binary = os.environ.get("GP_TRACE_PROCESSOR") or shutil.which("trace_processor_shell")
    if not binary:
        print("SKIP: no trace_processor binary ($GP_TRACE_PROCESSOR or trace_processor_shell); "
              "the perfetto wheel downloads it from outside PyPI")
        return 77
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "out.json")
    subprocess.run([gprof, "export", trace, "--perfetto", out], check=True, capture_output=True)
    n_x = sum(1 for e in json.load(open(out))["traceEvents"] if e["ph"] == "X")
    tp = TraceProcessor(trace=out, config=TraceProcessorConfig(bin_path=binary))
    bad = [(r.name, r.value) for r in tp.query(
        "select name, value from stats where value > 0 and severity in ('error', 'data_loss')")]
    assert not bad, bad
    n_slices = next(iter(tp.query("select count(*) as n from slice"))).n
    assert n_slices == n_x, f"{n_x} X events written, {n_slices} slices imported"
    n_flows = next(iter(tp.query("select count(*) as n from flow"))).n
    assert n_flows > 0, "no flows imported"
    gt01 = next(iter(tp.query("select count(*) as n from slice where name like 'GT01 %'"))).n
    assert gt01 > 0, "no GT01 annotation slices"
    print(f"ok: trace_processor imported {n_slices} slices and {n_flows} flows, no error stats")
    return 0


if __name__ == "__main__":
    sys.exit(main())
