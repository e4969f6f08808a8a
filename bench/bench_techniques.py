#!/usr/bin/env python3
"""The training-speed guides' table on the CPU (issue 31 §5): `gprof-train sweep` times each
technique against the baseline of the same sweep (one sweep per technique, baseline first), and
this prints time per epoch, speedup, the activation memory (checkpointing's column) and the gain
predicted beside the one measured: the diagnosis's predicted gain of the finding whose knob is
the technique where one fired, and for checkpointing the memory saving the baseline's trace
predicts from the layers' activation sizes (checkpoint_saving_bytes); for --fused the elementwise
passes a step each trace counts (elementwise_passes) beside the speed.

On the simulated device (--sim BUILD_DIR: the build's tests/simdev module and tests/gpusim
doubles), the same table for the knobs the CUDA backend has (bf16 autocast, checkpointing,
zero_grad, fused, channels-last on the cnn, CUDA graphs), every row labelled simulated: its times
are the simulator's model of the device, not a GPU's. The simulator computes each kernel on the
host, so its table runs the mlp for 20 steps, 3 repeats by default (77 s at load 7) (--sim-model, --sim-steps); its memory
columns are the peak device memory allocated in the profiled window (`report --format json`).

usage: bench_techniques.py GPROF_TRAIN OUT_DIR [--model cnn] [--steps N] [--repeat N]
                           [--sim BUILD_DIR] [--sim-model mlp] [--sim-steps N] [--data DIR]
                           [--only cpu|sim]"""
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
    ("CUDA graphs (step replay)", "cuda-graphs", "off", "on", "--cuda-graphs"),
    ("loader workers", "workers", "0", "1", "--workers"),
    ("bigger batch (x4)", "batch-size", "64", "256", "--batch-size"),
]


# the knobs the CUDA backend has (the simulated device runs the CUDA backend); the loader's and
# the batch's rows are left to the CPU table to keep the simulated one within a few minutes
CUDA_KNOBS = ("amp", "checkpoint-activations", "zero-grad", "fused", "channels-last",
              "cuda-graphs")
CPU_REFUSED = ("cuda-graphs",)  # the CPU backend has no launches to capture
CNN_ONLY = ("channels-last",)
SIM_ENV = {}  # main() fills it from --sim


def header_value(trace, key):
    """An integer from the trace's "gprof" header (it precedes traceEvents)."""
    if not trace or not os.path.exists(trace):
        return None
    with gzip.open(trace, "rt") as f:
        head = f.read(16384)
    m = re.search(r'"%s":\s*(\d+)' % re.escape(key), head)
    return int(m.group(1)) if m else None


def run_sweep(t, key, values, out):
    """One sweep of the table t (its bin, model, steps, repeats, device) over key's values."""
    cmd = [t.bin, "sweep", "--vary", "model=" + t.model, "--vary", "device=" + t.device,
           "--vary", "%s=%s" % (key, ",".join(values)), "--steps", str(t.steps),
           "--repeat", str(t.repeat), "--warmup", str(t.warmup),
           "--profile-steps", str(t.profile_steps), "-o", out]
    if t.data:
        cmd[2:2] = ["--vary", "data=" + t.data]
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, **SIM_ENV) if t.device == "cuda" else None)
    path = os.path.join(out, "sweep.json")
    if not os.path.exists(path):
        sys.stderr.write("sweep %s failed (%d): %s\n" % (key, p.returncode, p.stderr[-2000:]))
        return None
    return json.load(open(path))


def json_of(t, command, trace):
    """report's or diagnose's --format json on one trace: its one entry of "traces"."""
    if not trace or not os.path.exists(trace):
        return {}
    p = subprocess.run([t.bin, command, trace, "--format", "json"], capture_output=True,
                       text=True)
    try:
        return (json.loads(p.stdout).get("traces") or [{}])[0]
    except ValueError:
        return {}


def peak_device_bytes(t, trace):
    """The peak device memory allocated in a profiled trace (report's memory series)."""
    series = json_of(t, "report", trace).get("summary", {}).get("memory", [])
    peaks = [m["peak_allocated"] for m in series if m.get("device_type") != 0]
    return max(peaks) if peaks else None


def device_us_per_step(t, trace):
    """The simulator's modelled device time a step: kernels, copies and memsets (report's
    breakdown, mean per step); the host's time to compute them is not in it."""
    b = json_of(t, "report", trace).get("summary", {}).get("breakdown_us")
    return sum(b.get(k, 0.0) for k in ("Kernel", "Memcpy", "Memset")) if b else None


def predicted_in_fix(t, trace, flag):
    """A fired finding of the baseline's diagnosis whose advice (not its knob) names the
    technique: its estimated gain, marked as such."""
    for f in json_of(t, "diagnose", trace).get("findings", []):
        if f.get("fired") and flag in (f.get("recommendation") or ""):
            gain = (f.get("estimated_gain") or {}).get("share_of_step_pct")
            return "%s %s (fix)" % (f["id"], "?" if gain is None else "%.0f%%" % gain)
    return "not diagnosed"


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


def memory(t, setting):
    trace = setting.get("profiled_trace")
    if t.device == "cuda":
        return peak_device_bytes(t, trace)
    return header_value(trace, "activation_bytes")


def row(t, label, base, tech, doc, flag):
    tb, tt = per_epoch(base, t.steps), per_epoch(tech, t.steps)
    mem_b, mem_t = memory(t, base), memory(t, tech)
    pred, meas = predicted_for(doc, flag), "%+.0f%% speed" % ((tb / tt - 1) * 100)
    if pred == "not diagnosed":
        pred = predicted_in_fix(t, base.get("profiled_trace"), flag)
    if t.device == "cuda":
        db = device_us_per_step(t, base.get("profiled_trace"))
        dt = device_us_per_step(t, tech.get("profiled_trace"))
        if db and dt:
            meas += "; model %.0f -> %.0f us/step device (%.2fx)" % (db, dt, db / dt)
    if flag == "--checkpoint-activations":
        saving = header_value(base.get("profiled_trace"), "checkpoint_saving_bytes")
        pred = "-%s memory" % mib(saving)  # what GT10 reads (the trainer's layer sizes)
        if mem_b is not None and mem_t is not None:
            meas = "-%s %s, %s" % (mib(mem_b - mem_t),
                                   "peak" if t.device == "cuda" else "memory", meas)
    if flag == "--fused":
        pb = header_value(base.get("profiled_trace"), "elementwise_passes")
        pt = header_value(tech.get("profiled_trace"), "elementwise_passes")
        if pb is not None and pt is not None:
            meas = "%d -> %d passes, %s" % (pb, pt, meas)
    print("%-9s %-26s %9.1f s %9.1f s %7.2fx %10s %10s  %-18s %s" % (
        t.tag, label, tb, tt, tb / tt, mib(mem_b), mib(mem_t), pred, meas))


def runs_here(t, key):
    if key in CNN_ONLY and t.model != "cnn":
        return False
    if t.device == "cuda":
        return key in CUDA_KNOBS
    return key not in CPU_REFUSED


def table(t, label):
    print("%s, %s, %d timed steps a run, %d repeat(s) (time per epoch = 60000 samples at the "
          "run's rate); load %s on %d cores" % (label, t.model, t.steps, t.repeat,
                                              open("/proc/loadavg").read().split()[0],
                                              os.cpu_count()))
    print("%-9s %-26s %11s %11s %8s %10s %10s  %-18s %s" % (
        "on", "technique", "base/epoch", "with/epoch", "speedup", t.mem_column, "with",
        "predicted", "measured"))
    status = 0
    for label, key, base_v, tech_v, flag in TECHNIQUES:
        if not runs_here(t, key):
            continue
        doc = run_sweep(t, key, [base_v, tech_v], os.path.join(t.out, t.device, key))
        if not doc or len(doc["settings"]) != 2 or any(s["exit"] for s in doc["settings"]):
            print("%-9s %-26s sweep failed" % (t.tag, label))
            status = 1
            continue
        row(t, label, doc["settings"][0], doc["settings"][1], doc, flag)
        sys.stdout.flush()
    return status


def cpu_table(args):
    t = argparse.Namespace(bin=args.bin, out=args.out, model=args.model, steps=args.steps,
                           repeat=args.repeat, warmup=1, data=args.data, profile_steps=5, device="cpu",
                           tag="CPU", mem_column="act. mem")
    return table(t, "CPU")


def sim_table(args):
    """The simulated device's table, or a line saying why it is skipped (status 0 then)."""
    module = os.path.join(args.sim, "tests", "simdev", "libgp_train_cuda_sim.so")
    fake = os.path.join(args.sim, "tests", "gpusim")
    cupti = os.path.join(fake, "libcupti.so.13")
    missing = [f for f in (module, cupti) if not os.path.exists(f)]
    if missing:
        print("simulated device: skipped (no %s: configure a build with GP_BUILD_TESTS=ON, build "
              "its gp_train_cuda_sim target and pass that build)" % " or ".join(missing))
        return 0
    SIM_ENV.update(GP_TRAIN_CUDA_LIB=module, GP_PROF_CUPTI=cupti,
                   LD_LIBRARY_PATH=fake + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    own = os.path.join(args.sim, "bin", "gprof-train")  # the module's own build's binary
    t = argparse.Namespace(bin=own if os.path.exists(own) else args.bin, out=args.out,
                           model=args.sim_model,
                           steps=args.sim_steps, repeat=args.sim_repeat, warmup=0, data=args.data,
                           profile_steps=args.sim_steps, device="cuda", tag="simulated",
                           mem_column="peak dev")
    return table(t, "simulated device, not a GPU: per-epoch times are the host's wall time running "
                    "the simulator (it computes each kernel on the host); 'model' is its modelled "
                    "device time a step (an H100's data-sheet rates)")


def main():
    ap = argparse.ArgumentParser(description="The training-speed guides' table: one sweep per "
                                 "technique, predicted gain beside measured.")
    ap.add_argument("bin", help="the gprof-train binary")
    ap.add_argument("out", help="folder for the sweeps (must be empty)")
    ap.add_argument("--model", default="cnn", help="the CPU table's model (default cnn)")
    ap.add_argument("--steps", type=int, default=20, help="the CPU table's timed steps a run")
    ap.add_argument("--repeat", type=int, default=1, help="the CPU table's timed runs a setting")
    ap.add_argument("--sim", help="build dir with tests/simdev and tests/gpusim")
    ap.add_argument("--sim-model", default="mlp", help="the simulated table's model (mlp)")
    ap.add_argument("--sim-steps", type=int, default=20,
                    help="the simulated table's timed (and profiled) steps a run (20)")
    ap.add_argument("--sim-repeat", type=int, default=3,
                    help="the simulated table's timed runs a setting (3)")
    ap.add_argument("--data", help="the trainer's --data (default: the installed Fashion-MNIST)")
    ap.add_argument("--only", choices=("cpu", "sim"), help="print one of the two tables")
    args = ap.parse_args()
    status = 0
    if args.only != "sim":
        status |= cpu_table(args)
    if args.only != "cpu":
        if args.only != "sim":
            print()
        if args.sim:
            status |= sim_table(args)
        else:
            print("simulated device: skipped (no --sim BUILD_DIR)")
    return status


if __name__ == "__main__":
    sys.exit(main())
