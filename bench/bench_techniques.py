#!/usr/bin/env python3
"""The training-speed guides' table on the CPU (issue 31 §5): `gprof-train sweep` times each
technique against the baseline of the same sweep (one sweep per technique, baseline first), and
this prints time per epoch, speedup, the activation memory (checkpointing's column) and the gain
predicted beside the one measured: the diagnosis's predicted gain of the finding whose knob is
the technique where one fired, and for checkpointing the memory saving the baseline's trace
predicts from the layers' activation sizes (checkpoint_saving_bytes); for --fused the elementwise
passes a step each trace counts (elementwise_passes) beside the speed.

On the simulated device (--sim BUILD_DIR: the build's tests/simdev module and tests/gpusim
doubles), the same table for the knobs the CUDA backend has now (bf16/fp16 autocast,
checkpointing, zero_grad), labelled simulated: its times are the simulator's, not a GPU's.

usage: bench_techniques.py GPROF_TRAIN OUT_DIR [--model cnn] [--steps N] [--repeat N]
                           [--sim BUILD_DIR]"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys

EPOCH_SAMPLES = 60000
TECHNIQUES = [  # (row label, sweep key, baseline value, technique value, flag words in a knob)
    ("bf16 autocast", "amp", "off", "bf16", "--amp"),
    ("activation checkpointing", "checkpoint-activations", "off", "on", "--checkpoint-activations"),
    ("zero_grad(set_to_none)", "zero-grad", "zero", "none", "--zero-grad"),
    ("fused bias+ReLU, step", "fused", "off", "on", "--fused"),
    ("channels-last (NHWC)", "channels-last", "off", "on", "--channels-last"),
    ("loader workers", "workers", "0", "1", "--workers"),
    ("bigger batch (x4)", "batch-size", "64", "256", "--batch-size"),
]


# the knobs the CUDA backend has now (the simulated device runs the CUDA backend)
CUDA_KNOBS = ("amp", "checkpoint-activations", "zero-grad")
SIM_ENV = {}  # main() fills it from --sim


def header_value(trace, key):
    """An integer from the trace's "gprof" header (it precedes traceEvents)."""
    if not trace or not os.path.exists(trace):
        return None
    with gzip.open(trace, "rt") as f:
        head = f.read(16384)
    m = re.search(r'"%s":\s*(\d+)' % re.escape(key), head)
    return int(m.group(1)) if m else None


def run_sweep(args, key, values, out, device="cpu"):
    cmd = [args.bin, "sweep", "--vary", "model=" + args.model, "--vary", "device=" + device,
           "--vary", "%s=%s" % (key, ",".join(values)), "--steps", str(args.steps),
           "--repeat", str(args.repeat), "--profile-steps", "5", "-o", out]
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, **SIM_ENV) if device == "cuda" else None)
    path = os.path.join(out, "sweep.json")
    if not os.path.exists(path):
        sys.stderr.write("sweep %s failed (%d): %s\n" % (key, p.returncode, p.stderr[-2000:]))
        return None
    return json.load(open(path))


def per_epoch(setting, steps):
    batch = int(setting["values"].get("batch-size", 64))
    return setting["time_s"] / steps * (EPOCH_SAMPLES / batch)


def predicted_for(doc, flag):
    for p in doc.get("predictions", []):
        if flag in (p.get("knob") or ""):
            return "%s %.0f%%" % (p["id"], p["predicted_gain_pct"])
    return "not diagnosed"


def mib(b):
    return "-" if b is None else "%.1f MiB" % (b / 1048576.0)


def row(label, base, tech, doc, args, flag):
    tb, tt = per_epoch(base, args.steps), per_epoch(tech, args.steps)
    mem_b = header_value(base.get("profiled_trace"), "activation_bytes")
    mem_t = header_value(tech.get("profiled_trace"), "activation_bytes")
    pred, meas = predicted_for(doc, flag), "%+.0f%% speed" % ((tb / tt - 1) * 100)
    if flag == "--checkpoint-activations":
        saving = header_value(base.get("profiled_trace"), "checkpoint_saving_bytes")
        pred = "-%s memory" % mib(saving)  # what GT10 reads (the trainer's layer sizes)
        if mem_b is not None and mem_t is not None:
            meas = "-%s memory, %s" % (mib(mem_b - mem_t), meas)
    if flag == "--fused":
        pb = header_value(base.get("profiled_trace"), "elementwise_passes")
        pt = header_value(tech.get("profiled_trace"), "elementwise_passes")
        if pb is not None and pt is not None:
            meas = "%d -> %d passes, %s" % (pb, pt, meas)
    print("%-26s %9.1f s %9.1f s %7.2fx %10s %10s  %-18s %s" % (
        label, tb, tt, tb / tt, mib(mem_b), mib(mem_t), pred, meas))


def table(args, device, label):
    print("%s, %s, %d timed steps a run (time per epoch = 60000 samples at the run's rate); "
          "load %s on %d cores" % (label, args.model, args.steps,
                                   open("/proc/loadavg").read().split()[0], os.cpu_count()))
    print("%-26s %11s %11s %8s %10s %10s  %-18s %s" % (
        "technique", "base/epoch", "with/epoch", "speedup", "act. mem", "with", "predicted",
        "measured"))
    status = 0
    for label, key, base_v, tech_v, flag in TECHNIQUES:
        if device == "cuda" and key not in CUDA_KNOBS:
            continue
        doc = run_sweep(args, key, [base_v, tech_v], os.path.join(args.out, device, key), device)
        if not doc or len(doc["settings"]) != 2 or any(s["exit"] for s in doc["settings"]):
            print("%-26s sweep failed" % label)
            status = 1
            continue
        row(label, doc["settings"][0], doc["settings"][1], doc, args, flag)
    return status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("out")
    ap.add_argument("--model", default="cnn")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--sim", help="build dir with tests/simdev and tests/gpusim")
    args = ap.parse_args()
    status = table(args, "cpu", "CPU")
    module = args.sim and os.path.join(args.sim, "tests", "simdev", "libgp_train_cuda_sim.so")
    if module and os.path.exists(module):
        fake = os.path.join(args.sim, "tests", "gpusim")
        SIM_ENV.update(GP_TRAIN_CUDA_LIB=module,
                       GP_PROF_CUPTI=os.path.join(fake, "libcupti.so.13"),
                       LD_LIBRARY_PATH=fake + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
        print()
        status |= table(args, "cuda", "simulated device (the simulator's clock, not a GPU's)")
    elif args.sim:
        print("\nsimulated device: skipped (no %s)" % module)
    return status


if __name__ == "__main__":
    sys.exit(main())
