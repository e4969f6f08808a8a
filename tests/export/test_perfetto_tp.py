"""Load `gprof-train export --perfetto` output, the JSON and the native protobuf (.pftrace), in
Perfetto's own trace_processor and assert that the importer dropped nothing: no error stats,
every X slice kept, flows linked, the GT01 annotation present, and the same slice, flow and
counter counts from both files. PyPI's perfetto package fetches the trace_processor
binary from outside PyPI at first use, so this runs only when one is at hand: $GP_TRACE_PROCESSOR
or trace_processor_shell on PATH; otherwise it skips (77).
usage: test_perfetto_tp.py GPROF_TRAIN TRACE WORK_DIR"""
import json
import os
import shutil
import subprocess
import sys


def load(binary, path, n_x):
    """Load one export; assert no error stats, n_x slices, flows and the GT01 slices."""
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig
    tp = TraceProcessor(trace=path, config=TraceProcessorConfig(bin_path=binary))
    bad = [(r.name, r.value) for r in tp.query(
        "select name, value from stats where value > 0 and severity in ('error', 'data_loss')")]
    assert not bad, (path, bad)
    n_slices = next(iter(tp.query("select count(*) as n from slice"))).n
    assert n_slices == n_x, f"{path}: {n_x} X events written, {n_slices} slices imported"
    n_flows = next(iter(tp.query("select count(*) as n from flow"))).n
    assert n_flows > 0, f"{path}: no flows imported"
    gt01 = next(iter(tp.query("select count(*) as n from slice where name like 'GT01 %'"))).n
    assert gt01 > 0, f"{path}: no GT01 annotation slices"
    n_counters = next(iter(tp.query("select count(*) as n from counter"))).n
    tp.close()
    return n_slices, n_flows, n_counters


def main():
    gprof, trace, work = sys.argv[1:4]
    binary = os.environ.get("GP_TRACE_PROCESSOR") or shutil.which("trace_processor_shell")
    if not binary:
        print("SKIP: no trace_processor binary ($GP_TRACE_PROCESSOR or trace_processor_shell); "
              "the perfetto wheel downloads it from outside PyPI")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out, proto = os.path.join(work, "out.json"), os.path.join(work, "out.pftrace")
    for path in (out, proto):
        subprocess.run([gprof, "export", trace, "--perfetto", path], check=True,
                       capture_output=True)
    n_x = sum(1 for e in json.load(open(out))["traceEvents"] if e["ph"] == "X")
    from_json = load(binary, out, n_x)
    from_proto = load(binary, proto, n_x)  # the native protobuf: the same slices, flows, counters
    assert from_proto == from_json, f"protobuf {from_proto} vs JSON {from_json}"
    print(f"ok: trace_processor imported {from_json[0]} slices, {from_json[1]} flows and "
          f"{from_json[2]} counter values from each of the JSON and the protobuf, no error stats")
    return 0


if __name__ == "__main__":
    sys.exit(main())
