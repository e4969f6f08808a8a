#!/usr/bin/env python3
"""How right is the diagnosis on GPU faults? (issue 24 §1; a benchmark, with a fast verdict-only
subset for ctest.)

Each case runs tests/gpusim/fault_app (a training loop on the simulated driver and CUPTI, libprof
linked) with one fault switched on, or none, and diagnoses the trace it leaves with `gprof-train
diagnose --format json`. A case names the rules that must fire (warn or crit) and the rules
that may (consequences of its fault that are fair to report, e.g. a sync per kernel leaves the
GPU waiting for the host, GT04); every other rule must stay quiet. Per rule it prints true/false
positives and negatives, precision and recall. Every rule whose evidence is GPU activity
(GT01-GT15) has at least 3 cases with its fault and, among those without it, the healthy loop,
other faults, and a near miss just under its threshold (rules/*.c, rules_anchors.md §8).

The host side of the loop is timed on this machine's CPU (--host-us spins): under load the host
runs slower and host-bound verdicts (GT01, GT02, GT04) move with it; the device side is the
fake's clock and does not.

usage: accuracy_gpu.py GPROF_TRAIN FAULT_APP_DIR [--fast | --gains [CASE...]] [--keep DIR]
                       [--json FILE] [--no-isolate] [--only CASE...] [--tolerance F]
                       [--unmarked]
FAULT_APP_DIR: the build's tests/gpusim (fault_app, libcupti.so.13). --fast: only the cases
marked for ctest; exit 1 if one of them is wrong. --gains: only the cases with a timed fix (or
the CASEs named), predicted beside measured gain; exit 1 if a prediction is off by more than
GAIN_TOLERANCE of the measured gain (--tolerance F: F instead of 0.25). --no-isolate: run the cases as plain children, where the
machine's other load competes with them (see ISOLATE). --only: just these cases. --json: the per-case results for
bench_accuracy.py's merged table. --unmarked: each case's loop marks no steps and no optimizer
ranges (cases(): its steps are then cut where its launches repeat), the same verdicts expected;
exit 1 if one is wrong."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# name, fault_app args, rules that must fire, rules that may, in the fast subset
SYNC_MAY = ["GT02", "GT04", "GT14"]  # a drained queue: the GPU then waits for the host
CKPT = ["--kernels", "24", "--kernel-us", "100"]  # 12 forward layers
CASES = [
    ("healthy", [], [], [], True),
    ("healthy_long_kernels", ["--kernels", "6", "--kernel-us", "500"], [], [], False),
    ("healthy_comm_overlapped", ["--comm-us", "600"], [], [], False),
    # GT01 data-loader starvation: the loader takes longer than the GPU's step
    # (4 ms of loader and 2.5 ms of GPU leave the GPU busy ~57%, under GT02's 50% only when
    # this machine's load stretches the host's side)
    ("loader_4ms", ["--loader-us", "4000"], ["GT01"], ["GT02", "GT04", "GT14"], True),
    ("loader_6ms", ["--loader-us", "6000"], ["GT01", "GT02"], ["GT04", "GT14"], False),
    ("loader_3500us", ["--loader-us", "3500"], ["GT01"], ["GT02", "GT04", "GT14"], False),
    ("loader_hidden_near_miss", ["--loader-us", "800"], [], [], False),
    # GT02 low utilisation and GT04 launch-bound: host time per kernel above its duration
    # (launch_bound's batch copy, on its own stream, takes ~5% of a 2.2 ms step while the GPU
    # idles for the host: GT09 calls it exposed about half the time)
    ("launch_bound", ["--host-us", "150", "--kernel-us", "20"], ["GT02", "GT04"], ["GT14"],
     False),
    ("launch_bound_many", ["--host-us", "100", "--kernel-us", "10", "--kernels", "40"],
     ["GT02", "GT04"], ["GT14"], True),
    ("launch_bound_mild", ["--host-us", "150", "--kernel-us", "90"], ["GT04"],
     ["GT02", "GT14"], False),
    ("launch_near_miss", ["--host-us", "60", "--kernel-us", "120"], [], [], False),
    # GT03 long idle gaps (>= 500 ms) and GT14 step outliers: a pause every N steps
    ("idle_600ms", ["--idle-every", "8", "--idle-ms", "600"], ["GT02", "GT03", "GT14"],
     ["GT04"], True),
    ("idle_550ms", ["--idle-every", "10", "--idle-ms", "550"], ["GT02", "GT03", "GT14"],
     ["GT04"], False),
    ("idle_700ms", ["--steps", "12", "--idle-every", "6", "--idle-ms", "700"],
     ["GT02", "GT03", "GT14"], ["GT04"], False),
    ("idle_near_miss_400ms", ["--idle-every", "8", "--idle-ms", "400"], ["GT02", "GT14"],
     ["GT04"], False),
    # GT05 small kernels: thousands of sub-microsecond kernels a step
    ("tiny_1500", ["--tiny", "1500"], ["GT05"], SYNC_MAY, True),
    ("tiny_2000", ["--tiny", "2000", "--kernels", "4", "--steps", "12"], ["GT05"], SYNC_MAY,
     False),
    ("tiny_1200", ["--tiny", "1200", "--tiny-ns", "400"], ["GT05"], SYNC_MAY, False),
    # ...and its near miss, under GT05's 1000 kernels a step, with its kernels queued behind the
    # step's other work (12 x 800 us against at most 800 x 5 us of launches), so that no gap
    # opens between them whatever the host's speed. With 200 us kernels the host and the GPU
    # took about as long (800 launches of 2 us plus this machine's cost of a call against
    # 2.4 ms of kernels): on a quiet host the GPU drained and waited on each tiny launch, a
    # kernel-wait idle over GT05's 5% (quiet machine, 2026-11-26 14:40), on a loaded one the
    # same gaps were host wait (GT04). The slow-host copy costs each launch 4 us.
    ("tiny_near_miss_800", ["--tiny", "800", "--kernel-us", "800"], [], SYNC_MAY, True),
    ("tiny_near_miss_800_slow_host", ["--tiny", "800", "--kernel-us", "800", "--launch-ns",
                                      "4000"], [], SYNC_MAY, True),
    # GT06 pageable async copies: the batch from pageable memory
    ("pageable", ["--pageable-every", "1"], ["GT06"], [], True),
    ("pageable_4mib", ["--pageable-every", "1", "--batch-kib", "4096"], ["GT06"], [], False),
    ("pageable_256kib", ["--pageable-every", "1", "--batch-kib", "256"], ["GT06"], [], False),
    # (every other step: without markers the launches repeat every two iterations, so a step
    # cut where they repeat holds a pageable copy each, and the near miss is not one; --unmarked
    # leaves it out, as blocking_near_miss)
    ("pageable_near_miss", ["--pageable-every", "2"], [], [], False, {"marked_only": True}),
    # GT07 blocking copies and memsets each step
    ("blocking_copy", ["--blocking-copies", "1"], ["GT07"], SYNC_MAY, True),
    ("blocking_memsets", ["--blocking-memsets", "2"], ["GT07"], SYNC_MAY, False),
    ("blocking_copies_3", ["--blocking-copies", "3"], ["GT07"], SYNC_MAY, False),
    ("blocking_near_miss", ["--blocking-copies", "1", "--blocking-every", "2"], [], SYNC_MAY,
     False, {"marked_only": True}),
    # GT08 excessive synchronisation
    ("sync_every_kernel", ["--sync-every-kernel"], ["GT08"], SYNC_MAY, True),
    ("sync_every_kernel_long", ["--sync-every-kernel", "--kernels", "4", "--kernel-us", "600"],
     ["GT08"], SYNC_MAY, False),
    ("sync_every_kernel_many", ["--sync-every-kernel", "--kernels", "30", "--kernel-us", "60"],
     ["GT08"], SYNC_MAY, False),
    ("sync_copy_stream_near_miss", ["--sync-copy-stream", "--batch-kib", "128"], [], SYNC_MAY,
     False),
    # GT09 exposed transfers: the batch copied on the compute stream
    ("exposed_4mib", ["--same-stream", "--batch-kib", "4096"], ["GT09"], [], True),
    ("exposed_8mib", ["--same-stream", "--batch-kib", "8192"], ["GT09"], [], False),
    ("exposed_2mib", ["--same-stream", "--batch-kib", "2048"], ["GT09"], [], False),
    ("exposed_near_miss", ["--same-stream", "--batch-kib", "1024"], [], [], True),
    ("copy_stream_8mib", ["--batch-kib", "8192"], [], [], False),
    # GT10 near out of memory
    ("oom_97", ["--peak-pct", "97"], ["GT10"], [], True),
    ("oom_93", ["--peak-pct", "93"], ["GT10"], [], False),
    ("oom_99", ["--peak-pct", "99"], ["GT10"], [], False),
    ("oom_near_miss_88", ["--peak-pct", "88"], [], [], True),
    # GT11 allocator churn: cudaMalloc/cudaFree inside steps
    ("churn_every_step", ["--churn-every", "1"], ["GT11"], [], True),
    ("churn_every_2", ["--churn-every", "2"], ["GT11"], [], False),
    ("churn_every_3", ["--churn-every", "3", "--steps", "30"], ["GT11"], [], False),
    ("churn_near_miss", ["--churn-every", "20"], [], [], False),
    # GT12 memory growth: a tensor kept every step (5% of 80 GiB over 19 steps = 216 MiB/step).
    # Each step's cudaMalloc may fire GT11 too: it is an allocation call in every step, and where
    # the host is slow (an ASan build: 1% of the step in that call) it is churn by GT11's measure.
    ("growth_400mib", ["--grow-mib", "400"], ["GT12"], ["GT11"], True),
    ("growth_1gib", ["--grow-mib", "1024"], ["GT12"], ["GT11"], False),
    ("growth_600mib", ["--grow-mib", "600"], ["GT12"], ["GT11"], False),
    ("growth_near_miss", ["--grow-mib", "170"], [], ["GT11"], True),
    # GT13 no Tensor Core kernels: every GEMM fp32 (with some on Tensor Cores the rule is not
    # about the run: it fires only without any)
    ("fp32_gemms_all", ["--fp32-gemms", "6"], ["GT13"], [], True),
    ("fp32_gemms_all_few", ["--kernels", "8", "--fp32-gemms", "4", "--kernel-us", "300"],
     ["GT13"], [], False),
    ("fp32_gemms_all_many", ["--kernels", "20", "--fp32-gemms", "10", "--kernel-us", "100"],
     ["GT13"], [], False),
    ("fp32_gemms_mixed", ["--fp32-gemms", "3"], [], [], False),
    ("fp32_gemm_near_miss", ["--fp32-gemms", "1"], [], [], False),
    # GT15 exposed communication: the all-reduce on the compute stream
    ("comm_exposed_600us", ["--comm-us", "600", "--comm-same-stream"], ["GT15"], [], True),
    ("comm_exposed_400us", ["--comm-us", "400", "--comm-same-stream"], ["GT15"], [], False),
    ("comm_exposed_1ms", ["--comm-us", "1000", "--comm-same-stream"], ["GT15"], [], False),
    ("comm_near_miss", ["--comm-us", "220", "--comm-same-stream"], [], [], False),
    # GT00 trace quality: records lost for real. The simulated CUPTI holds each buffer after N
    # records until a flush (FAKE_CUPTI=hoard=N): libprof's cap on held buffers then drops GPU
    # records; the smallest record memory (GP_PROF_BUFFER_LIMIT=64K) under 2,500 launches a step
    # drops CPU ranges. What else fires on a trace missing records is not judged (ANY).
    ("drops_gpu_hoard8", ["--host-us", "100", "--kernel-us", "10", "--kernels", "40"],
     ["GT00"], "ANY", False, {"env": {"FAKE_CUPTI": "hoard=8"}}),
    ("drops_cpu_64k", ["--loader-us", "60000", "--kernels", "2500", "--host-us", "10",
                       "--kernel-us", "1"], ["GT00"], "ANY", False,
     {"env": {"GP_PROF_BUFFER_LIMIT": "64K"}}),
    # ...and its near misses: a trace with too few steps, and one whose program was killed
    # (SIGKILL after 0.4 s: the periodic flushes kept all but its last moments), GT00 info
    ("few_steps_near_miss", ["--steps", "6"], [], [], False),
    ("killed_near_miss", ["--steps", "100000"], [], ["GT14"], True, {"kill_after": 0.4}),
    # GT00 start-up: a `with profile():` block (no ProfilerStep markers) around a program's first
    # iteration, whose first call of each operator waits (--first-call-ms, as the CUDA context,
    # library handles and lazy module loading make it), in a program that marks nothing else
    # either (--no-optimizer-range: inference, a C program under libprof). The trace is mostly
    # start-up: GT00 warns and the findings that judge time are info (before: GT04 and GT02 crit
    # on the GPU idle in the first calls). The weights' pageable load then lies in the only step:
    # GT06 may fire. Near misses: the same first calls in a marked run (its warm-up step is left
    # out), and unmarked runs of 100 and 200 iterations whose first calls are 30% and 1% of them.
    # Where such a program runs 3 iterations or more, its launches repeat: the steps are cut
    # where they do (analysis_period.c), the first, with the first calls, is left out, and the
    # verdict is the steady state's: quiet, or GT04 on a launch-bound loop (before: GT00 warned
    # and demoted GT04 at 3 and 4 iterations, and GT04 and GT02 read the first calls at 20).
    ("startup_1_iter", ["--no-steps", "--no-optimizer-range", "--steps", "1", "--first-call-ms",
                        "200"], ["GT00"], ["GT06"], True),
    ("startup_marked_near_miss", ["--steps", "20", "--first-call-ms", "200"], [], [], True),
    ("startup_30pct_near_miss", ["--no-steps", "--no-optimizer-range", "--steps", "100",
                                 "--first-call-ms", "30"], [], ["GT06"], True),
    ("startup_small_near_miss", ["--no-steps", "--no-optimizer-range", "--steps", "200",
                                 "--first-call-ms", "2"], [], ["GT06"], False),
    ("launches_3_iters", ["--no-steps", "--no-optimizer-range", "--steps", "3", "--first-call-ms",
                          "200"], [], ["GT06"], True),
    ("launches_launch_bound", ["--no-steps", "--no-optimizer-range", "--steps", "4",
                               "--first-call-ms", "200", "--host-us", "150", "--kernel-us", "20"],
     ["GT04"], ["GT02", "GT06"], True),
    ("launches_20_iters", ["--no-steps", "--no-optimizer-range", "--steps", "20",
                           "--first-call-ms", "30", "--kernels", "6"], [], ["GT06"], False),
    # The same start-up without markers in a program whose optimizer marks its steps
    # (Optimizer.step#Adam.step, as torch's does): the steps end where those end, the first,
    # with every first call, is left out, and the verdict is the steady state's: quiet, or GT04
    # on a launch-bound loop (before: GT00 warned and demoted GT04 at 3 steps; at 20, GT04 and
    # GT02 crit were read off the first calls too).
    ("inferred_3_iters", ["--no-steps", "--steps", "3", "--first-call-ms", "200"], [], [], True),
    ("inferred_launch_bound", ["--no-steps", "--steps", "20", "--first-call-ms", "200",
                               "--host-us", "150", "--kernel-us", "20"], ["GT04"], ["GT02"],
     True),
    ("inferred_20_iters", ["--no-steps", "--steps", "20", "--first-call-ms", "30", "--kernels",
                           "6"], [], [], False),
    # GT19 CPU contention: the loop pinned to one core beside a busy loop pinned there too
    # (fault_app records its thread's run-queue wait). The host-timed rules that the wait
    # inflates must defer to GT19 (rules_explain.c); their faults elsewhere still show.
    # None of these is in the fast subset: whether the busy loop beside the case really takes
    # the core depends on the machine's other load (CI's main stage at load 6.9 missed GT09 on
    # contended_exposed_4mib; at load 17 here one run in 3 of it waited 0.1%, GT19 quiet).
    # ctest's rules_step_waits_* check GT19 and GT14 beside a busy loop with their own retries.
    ("contended_launch_near_miss", ["--host-us", "60", "--kernel-us", "120"], ["GT19"],
     ["GT02"], False, {"hog": True}),
    ("contended_launch_bound", ["--host-us", "150", "--kernel-us", "20"], ["GT04", "GT19"],
     ["GT02"], False, {"hog": True}),
    ("contended_loader_hidden", ["--loader-us", "800"], ["GT19"], ["GT02"], False,
     {"hog": True}),
    # (the exposed copy's loop with 80 us of host work per op: with 40 its thread slept in the
    # launch queue most of the step, and its wait for a core, only on each wake-up, was 8.6-34.5%
    # of the loop over 9 runs (under GT19's 10% on the quiet machine, 2026-11-26 14:40); with 80
    # it runs about 40% of the loop and waited 45-51% over 5)
    ("contended_exposed_4mib", ["--same-stream", "--batch-kib", "4096", "--host-us", "80"],
     ["GT09", "GT19"], ["GT02"], False, {"hog": True}),
    ("drops_gpu_tiny", ["--tiny", "1500"], ["GT00"], "ANY", True,
     {"env": {"FAKE_CUPTI": "hoard=8"}}),
    # GT10 -> activation checkpointing (T-ckpt): a step's activations (--activations-mib a layer,
    # 12 or 20 forward layers) push the peak past 90%. Each activation is a cudaMalloc here (no
    # caching allocator), so GT11 may fire. Near misses: activations under 10% of the peak (the
    # weights hold the memory), checkpointing already on, activations without memory pressure;
    # the weights-only cases above (oom_*) and growth (a leak) must not get it either.
    ("ckpt_95", CKPT + ["--activations-mib", "1024", "--peak-pct", "80"], ["GT10", "T-ckpt"],
     ["GT11"], True),
    ("ckpt_93", CKPT + ["--activations-mib", "768", "--peak-pct", "82"], ["GT10", "T-ckpt"],
     ["GT11"], False),
    ("ckpt_96_deep", ["--kernels", "40", "--kernel-us", "60", "--activations-mib", "512",
                      "--peak-pct", "83"], ["GT10", "T-ckpt"], ["GT11"], False),
    ("ckpt_near_miss_small_act", CKPT + ["--activations-mib", "256", "--peak-pct", "93"],
     ["GT10"], ["GT11"], True),
    ("ckpt_applied_near_miss", CKPT + ["--activations-mib", "1024", "--peak-pct", "80",
                                       "--checkpoint"], [], ["GT11"], True),
    ("ckpt_no_pressure", CKPT + ["--activations-mib", "1024", "--peak-pct", "40"], [],
     ["GT11"], False),
    # GT20 channels-last: cuDNN's NCHW<->NHWC transposes around Tensor Core convolutions (the
    # fake device is compute capability 9); near misses: short transposes (2% of kernel time),
    # the same convolutions in channels-last, and NCHW on a device without Tensor Cores
    ("nchw_convs_3", ["--nchw-convs", "3"], ["GT20"], [], True),
    ("nchw_convs_6", ["--nchw-convs", "6"], ["GT20"], [], False),
    ("nchw_convs_2_long", ["--nchw-convs", "2", "--transpose-us", "100"], ["GT20"], [], False),
    ("nchw_near_miss", ["--nchw-convs", "3", "--transpose-us", "10"], [], [], True),
    ("channels_last_convs", ["--nchw-convs", "6", "--channels-last"], [], [], True),
    ("nchw_no_tensor_cores", ["--nchw-convs", "3"], [], [], False,
     {"env": {"FAKE_CUPTI": "cc=6"}}),
    # GT04 -> CUDA graphs (T-graphs) is not advised where the step waits for the device: a
    # graph cannot capture a blocking copy (GT07's fault, with the launch-bound loop). The copy
    # idles the GPU 1.9% of a step GT04 bounds at 83%: GT07 is info there ("worth little now",
    # rules_worth.c), so it may fire but need not
    ("launch_bound_blocking", ["--host-us", "150", "--kernel-us", "20", "--blocking-copies",
                               "1"], ["GT04"], ["GT02", "GT07", "GT14"], False,
     {"no_graphs": True}),
]
# The techniques a diagnosis points to, judged like rules from the fired findings' knobs:
# activation checkpointing (GT10) and CUDA graphs (GT04, GT05). GT20 is channels-last's rule.
TECHNIQUES = {"T-ckpt": ("--checkpoint-activations", "torch.utils.checkpoint"),
              "T-graphs": ("--cuda-graphs", "torch.cuda.graphs")}
# A case with the GT04/GT05 fault must be advised CUDA graphs unless its step waits for the
# device (no_graphs, and the sync faults: GT07, GT08); where GT04/GT05 may fire, graphs may too.
GRAPH_RULES, SYNC_FAULTS = ("GT04", "GT05"), ("GT07", "GT08")
RULES = ["GT%02d" % i for i in range(0, 16)] + ["GT17", "GT18", "GT19", "GT20"] + \
    sorted(TECHNIQUES)
# The fix of a fault case, timed on the simulated device: case -> (rule, fault_app args without
# the fault). The gain measured is the drop in mean step time; the one predicted is the finding's
# share of the step. Not here: GT06 and GT11 (the fake's pageable copies and allocations cost
# what pinned ones and none do), GT13 (its kernels run as long with Tensor Core names).
FIXES = {
    "loader_4ms": ("GT01", []),
    "launch_bound": ("GT04", ["--host-us", "5", "--kernel-us", "20"]),
    "idle_600ms": ("GT14", []),
    "tiny_1500": ("GT05", ["--tiny", "1500", "--fuse-tiny"]),
    "blocking_copy": ("GT07", []),
    "blocking_memsets": ("GT07", []),
    "sync_every_kernel": ("GT08", []),
    "sync_every_kernel_long": ("GT08", ["--kernels", "4", "--kernel-us", "600"]),
    "exposed_4mib": ("GT09", ["--batch-kib", "4096"]),
    "exposed_8mib": ("GT09", ["--batch-kib", "8192"]),
    "comm_exposed_600us": ("GT15", ["--comm-us", "600"]),
    "comm_exposed_1ms": ("GT15", ["--comm-us", "1000"]),
    "nchw_convs_3": ("GT20", ["--nchw-convs", "3", "--channels-last"]),
    "nchw_convs_6": ("GT20", ["--nchw-convs", "6", "--channels-last"]),
}
# The memory fixes: case -> fault_app args with checkpointing on. Measured: the drop of peak
# allocated device memory; predicted: GT10's "checkpointing saves" (GiB).
MEM_FIXES = {"ckpt_95": CKPT + ["--activations-mib", "1024", "--peak-pct", "80", "--checkpoint"],
             "ckpt_93": CKPT + ["--activations-mib", "768", "--peak-pct", "82", "--checkpoint"],
             "ckpt_96_deep": ["--kernels", "40", "--kernel-us", "60", "--activations-mib", "512",
                              "--peak-pct", "83", "--checkpoint"]}

ISOLATED = [True]  # main() sets it from --no-isolate
GAIN_TOLERANCE = [0.25]  # a predicted gain within 25% of the measured one (issue 24);
# main() sets it from --tolerance


def gain_ok(g):
    """Is the predicted gain within GAIN_TOLERANCE of the measured one?"""
    if not g or g["predicted"] is None or g["measured"] is None or g["measured"] <= 0:
        return False
    return abs(g["predicted"] - g["measured"]) <= GAIN_TOLERANCE[0] * g["measured"]


# Verdicts that depend on how fast this machine's CPU runs the host side (spins, wake-ups):
# --fast checks them only where a case's fault must make them fire.
# GT19 is what the load itself looks like: threads of the simulated loop waiting for a core.
HOST_TIMED = ["GT01", "GT02", "GT04", "GT14", "GT17", "GT18", "GT19"]


UNMARKED = ["--no-steps", "--no-optimizer-range"]


def cases(fast=False, unmarked=False):
    """The cases as dicts: name, args (fault_app's), must (rules), may (rules, "ANY": every rule
    but those it must fire), and the run's setting: env, hog (a busy loop on its core),
    kill_after (seconds). unmarked: each case's loop marking nothing (UNMARKED: the steps are
    then cut where its launches repeat), the same verdict expected; left out are the cases
    without markers already, a killed run's, and those marked_only."""
    out = []
    for n, a, m, y, f, *run in CASES:
        extra = run[0] if run else {}
        if unmarked and ("--no-steps" in a or extra.get("kill_after") or extra.get("marked_only")):
            continue
        if f or not fast:
            may = [x for x in RULES if x not in m] if y == "ANY" else y
            m, may = with_graphs(m, may, extra.get("no_graphs"))
            out.append(dict(extra, name=n, args=a + (UNMARKED if unmarked else []), must=m,
                            may=may))
    return out


def with_graphs(must, may, no_graphs):
    """`must` and `may` with CUDA graphs' advice (T-graphs) where GT04/GT05 go."""
    synced = no_graphs or any(x in must for x in SYNC_FAULTS)
    if any(x in must for x in GRAPH_RULES) and not synced and "T-graphs" not in may:
        return must + ["T-graphs"], may
    if any(x in may for x in GRAPH_RULES) and not synced and "T-graphs" not in may:
        return must, may + ["T-graphs"]
    return must, may


# Each case runs in a session of its own whose autogroup has nice -20 and, where it may (root),
# as SCHED_FIFO (chrt -f 10: other processes cannot take its core mid-step; its runs are far
# shorter than the kernel's 0.95 s real-time budget), so the machine's other load takes little
# from it: the cases' verdicts are for a quiet host, as they are labelled (at load 13 with nice
# -20 alone the healthy launch loop still waited for a core 10-15% of the time), unless a case
# puts a busy loop beside it on purpose (GT19's): the loop and the busy loop are then pinned to
# one core, at normal priority. --no-isolate runs them as plain children.
ISOLATE = """echo -20 >/proc/self/autogroup 2>/dev/null || true
hog="" mode=$1
shift
if [ "$mode" = hog ]; then
    taskset -c 0 timeout 300 sh -c 'while :; do :; done' & hog=$!
    set -- taskset -c 0 "$@"
elif chrt -f 10 true 2>/dev/null; then
    set -- chrt -f 10 "$@"
fi
"$@" & app=$!
if [ -n "$KILL_AFTER" ]; then sleep "$KILL_AFTER"; kill -KILL $app; fi
wait $app; rc=$?
if [ -n "$hog" ]; then kill $hog; wait $hog; fi
[ -n "$KILL_AFTER" ] && [ $rc = 137 ] && rc=0
exit $rc"""


def command(case, app, isolate):
    if not isolate and not case.get("hog") and not case.get("kill_after"):
        return [app] + case["args"]
    return (["setsid", "-w"] if isolate else []) + \
        ["sh", "-c", ISOLATE, "sh", "hog" if case.get("hog") else "-", app] + case["args"]


def make(case, out_dir, app_dir):
    """Run fault_app for `case`; @return the trace's path."""
    os.makedirs(out_dir, exist_ok=True)
    trace = os.path.join(out_dir, "trace.json")
    env = dict(os.environ, FAULT_TRACE=trace,
               GP_PROF_CUPTI=os.path.join(app_dir, "libcupti.so.13"), **case.get("env", {}))
    if case.get("kill_after"):
        env["KILL_AFTER"] = str(case["kill_after"])
    sanitize = os.environ.get("GP_SANITIZE", "")
    if "address" in sanitize:  # a leak check would scan the untouched device memory (GiBs)
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    if "thread" in sanitize:  # NVTX's lazy init, as test_gpusim.py suppresses it
        supp = os.path.join(HERE, "..", "tests", "gpusim", "tsan_nvtx.supp")
        env["TSAN_OPTIONS"] = env.get("TSAN_OPTIONS", "") + " suppressions=" + supp
    p = subprocess.run(command(case, os.path.join(app_dir, "fault_app"), ISOLATED[0]), env=env,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit("fault_app %s: exit %d: %s" % (case["args"], p.returncode, p.stderr))
    if case.get("kill_after") and not os.path.exists(trace):
        return trace + ".tmp"  # what a killed run leaves: the file being written
    return trace


def diagnose(binary, trace):
    """`gprof-train diagnose --format json` of `trace`: its one trace object."""
    p = subprocess.run([binary, "diagnose", "--format", "json", trace], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise SystemExit("gprof-train diagnose %s: exit %d: %s" % (trace, p.returncode, p.stderr))
    return json.loads(p.stdout)["traces"][0]


def fired(doc):
    """The rules that fired (warn or crit) in a diagnosed trace, and the techniques (TECHNIQUES)
    their knobs name."""
    hot = [f for f in doc["findings"] if f["severity"] in ("warn", "crit")]
    techs = {t for t, words in TECHNIQUES.items() for f in hot
             if any(w in (f.get("knob") or "") for w in words)}
    return sorted({f["id"] for f in hot} | techs)


def ckpt_saving(doc):
    """GT10's "checkpointing saves" cell (bytes), or None."""
    for f in doc["findings"]:
        ev = f.get("evidence") or {}
        names = [c["name"] for c in ev.get("columns", [])]
        if f["id"] == "GT10" and "checkpointing saves" in names and ev.get("rows"):
            return ev["rows"][0][names.index("checkpointing saves")]
    return None


def memory_peak(doc):
    """Peak device memory (bytes) of a diagnosed trace: GT10's share of the fake's 80 GiB."""
    for f in doc["findings"]:
        if f["id"] == "GT10" and (f.get("metric") or {}).get("value") is not None:
            return f["metric"]["value"] / 100.0 * (80 << 30)
    return None


def mem_gain(binary, case, doc, out_dir, app_dir):
    """{rule T-ckpt, predicted GiB, measured GiB} for a case with a memory fix, or None."""
    if case["name"] not in MEM_FIXES:
        return None
    fixed = diagnose(binary, make(dict(case, args=MEM_FIXES[case["name"]]), out_dir + "-ckpt",
                                  app_dir))
    before, after = memory_peak(doc), memory_peak(fixed)
    pred = ckpt_saving(doc)
    gib = float(1 << 30)
    return {"rule": "T-ckpt", "case": case["name"], "unit": " GiB",
            "predicted": None if pred is None else pred / gib,
            "measured": None if before is None or after is None else (before - after) / gib}


def timed_gain(binary, case, doc, out_dir, app_dir):
    """{rule, case, predicted %, measured %} for a case with a fix, or None."""
    if case["name"] not in FIXES:
        return None
    rule, fix_args = FIXES[case["name"]]
    f = [x for x in doc["findings"] if x["id"] == rule and x["severity"] in ("warn", "crit")]
    pred = ((f[0].get("estimated_gain") or {}).get("share_of_step_pct")) if f else None
    fixed = diagnose(binary, make(dict(case, args=fix_args), out_dir + "-fixed", app_dir))
    before, after = doc["mean_step_us"], fixed["mean_step_us"]
    return {"rule": rule, "case": case["name"], "predicted": pred,
            "measured": 100.0 * (before - after) / before if before else None}


def score(results, rules):
    """Per rule: (rule, tp, fp, fn, tn); a rule a case allows is not counted for it."""
    rows = []
    for rule in rules:
        tp = fp = fn = tn = 0
        for r in results:
            if rule not in r.get("rules", rules) or (rule in r["may"] and rule not in r["must"]):
                continue
            must, got = rule in r["must"], rule in r["fired"]
            tp += must and got
            fn += must and not got
            fp += got and not must
            tn += not must and not got
        rows.append((rule, tp, fp, fn, tn))
    return rows


def wrong(r, fast=False):
    """The rules `r` got wrong: missing, or fired and not allowed (with `fast`, host-timed
    rules firing are not counted)."""
    # with `fast`, a host-timed rule that GT19 explains (the loop's threads waiting for a core:
    # rules_explain defers it to GT19) is not counted as missed either
    # (a case with a busy loop beside it on purpose is judged on every rule: there the
    # host-timed rules must defer to GT19 themselves)
    fast = fast and not r.get("hog")
    deferred = fast and "GT19" in r["fired"]
    miss = [x for x in r["must"] if x not in r["fired"] and not (deferred and x in HOST_TIMED)]
    extra = [x for x in r["fired"] if x not in r["must"] and x not in r["may"] and
             not (fast and host_timed(x, r["fired"]))]
    return miss, extra


def host_timed(rule, fired):
    """Whether `rule`'s verdict moves with the host's speed: the HOST_TIMED rules, and CUDA
    graphs' advice where only GT04 (launch-bound, host-timed) gave it, not GT05 (the ckpt cases
    under TSan: the host slowed by the sanitizer made GT04 fire, and with it T-graphs)."""
    if rule in HOST_TIMED:
        return True
    return rule == "T-graphs" and "GT04" in fired and "GT05" not in fired


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


def repeated_gain(binary, case, out, app_dir, trials):
    """timed_gain over `trials` runs of the case and its fix, each side's median: a step of the
    loop's host side preempted by this machine's other work moves one run's mean, not the
    median's."""
    runs = []
    for t in range(trials):
        doc = diagnose(binary, make(case, "%s-%d" % (out, t), app_dir))
        runs.append((doc, timed_gain(binary, case, doc, "%s-%d" % (out, t), app_dir)))
    g = dict(runs[0][1], predicted=median([r["predicted"] for _, r in runs]))
    before = median([d["mean_step_us"] for d, _ in runs])
    after = median([d["mean_step_us"] * (1 - r["measured"] / 100.0) for d, r in runs
                    if r["measured"] is not None])  # each fixed run's mean step
    g["measured"] = 100.0 * (before - after) / before if before and after is not None else None
    return g


def run_gains(binary, app_dir, names, keep, trials=5):
    """Time each fix; print predicted beside measured gain. @return the cases off target."""
    bad = []
    print("%-24s %-5s %10s %9s  (median of %d runs each)" % ("case", "rule", "predicted",
                                                             "measured", trials))
    for case in [c for c in cases() if c["name"] in FIXES and (not names or c["name"] in names)]:
        g = repeated_gain(binary, case, os.path.join(keep, case["name"]), app_dir, trials)
        ok = gain_ok(g)
        bad += [] if ok else [case["name"]]
        print("%-24s %-5s %9s%% %8.1f%%  %s" % (
            case["name"], g["rule"], "-" if g["predicted"] is None else "%.1f" % g["predicted"],
            g["measured"] or 0, "ok" if ok else "OFF"))
    return bad


def run(binary, app_dir, fast, keep, only=None, unmarked=False):
    results = []
    for case in [c for c in cases(fast, unmarked) if not only or c["name"] in only]:
        out = os.path.join(keep, case["name"])
        doc = diagnose(binary, make(case, out, app_dir))
        r = dict(case, source="gpu", rules=RULES, fired=fired(doc))
        if not fast and not unmarked:
            r["gain"] = timed_gain(binary, case, doc, out, app_dir) or \
                mem_gain(binary, case, doc, out, app_dir)
        results.append(r)
        miss, extra = wrong(r, fast)
        print("%-28s must %-16s fired %-24s %s" % (
            case["name"], ",".join(case["must"]) or "-", ",".join(r["fired"]) or "-",
            "ok" if not miss and not extra else
            "WRONG (missed %s; extra %s)" % (",".join(miss) or "-", ",".join(extra) or "-")))
    return results


def print_table(rows):
    print("\nrule  TP FP FN TN  precision  recall")
    for rule, tp, fp, fn, tn in rows:
        prec = "%8.0f%%" % (100.0 * tp / (tp + fp)) if tp + fp else "       - "
        rec = "%5.0f%%" % (100.0 * tp / (tp + fn)) if tp + fn else "    - "
        print("%-5s %2d %2d %2d %2d  %s  %s" % (rule, tp, fp, fn, tn, prec, rec))


def main():
    args = sys.argv[1:]
    if len(args) < 2 or args[0].startswith("-"):
        print(__doc__)
        return 2
    binary, app_dir, fast = args[0], args[1], "--fast" in args
    ISOLATED[0] = "--no-isolate" not in args
    if "--tolerance" in args:
        GAIN_TOLERANCE[0] = float(args[args.index("--tolerance") + 1])
    keep = args[args.index("--keep") + 1] if "--keep" in args else None
    out = args[args.index("--json") + 1] if "--json" in args else None
    if hasattr(os, "getloadavg"):
        print("load average %.1f on %d CPUs (the host side is timed on them)"
              % (os.getloadavg()[0], os.cpu_count() or 1))
    if "--gains" in args:
        names = []
        for a in args[args.index("--gains") + 1:]:
            if a.startswith("-"):
                break
            names.append(a)
        with tempfile.TemporaryDirectory() as tmp:
            return 1 if run_gains(binary, app_dir, names, keep or tmp) else 0
    only = [a for a in args[args.index("--only") + 1:] if not a.startswith("-")] \
        if "--only" in args else None
    with tempfile.TemporaryDirectory() as tmp:
        results = run(binary, app_dir, fast, keep or tmp, only, "--unmarked" in args)
    print_table(score(results, RULES))
    if out:
        with open(out, "w") as f:
            json.dump(results, f, indent=1)
    bad = [r["name"] for r in results if any(wrong(r, fast))]
    return 1 if (fast or "--unmarked" in args) and bad else 0


if __name__ == "__main__":
    sys.exit(main())
