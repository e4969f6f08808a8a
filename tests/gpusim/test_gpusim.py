#!/usr/bin/env python3
"""test_gpusim.py: runs a scenario of sim_app over the simulated driver and CUPTI, with libprof
injected (or linked), and checks the trace it leaves: every GPU activity linked to its launch by
a flow and launched inside its NVTX range, pageable vs pinned copies, memory totals, drop
counts, gpu_status, and the failure modes of fake_cupti.h.
usage: test_gpusim.py CASE FAKE_DIR LIBGP_PROF"""
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

FAILS = []
THREADS, STEPS = 4, 5


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def ns(us):
    """Trace times are microseconds with three decimals: compare them as integer ns."""
    return round(us * 1000)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


class Run:
    def __init__(self, case_dir, scenario, args=(), fake="", linked=False, extra_env=None,
                 expect_rc=0):
        self.dir = case_dir
        env = dict(os.environ)
        env.pop("GP_PROF_NVTX_LINKED", None)
        env["GP_PROF_CUPTI"] = os.path.join(FAKE_DIR, "libcupti.so.13")
        env["FAKE_CUPTI"] = fake
        env["FAKE_CUPTI_STATS"] = os.path.join(case_dir, "fake_stats.json")
        if linked:
            env["SIM_TRACE"] = os.path.join(case_dir, "trace.json")
        else:
            env["CUDA_INJECTION64_PATH"] = LIB
            env["NVTX_INJECTION64_PATH"] = LIB
            env["GP_PROF_OUT"] = case_dir
        if "thread" in os.environ.get("GP_SANITIZE", ""):
            supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tsan_nvtx.supp")
            env["TSAN_OPTIONS"] = env.get("TSAN_OPTIONS", "") + " suppressions=" + supp
        env.update(extra_env or {})
        app = os.path.join(FAKE_DIR, "sim_app_linked" if linked else "sim_app")
        t0 = time.monotonic()
        self.proc = subprocess.run([app, scenario] + list(args), env=env, capture_output=True,
                                   text=True, timeout=90)
        self.seconds = time.monotonic() - t0
        sys.stdout.write(self.proc.stdout)
        sys.stderr.write(self.proc.stderr)
        check(self.proc.returncode == expect_rc,
              "%s exit %d, expected %d" % (scenario, self.proc.returncode, expect_rc))
        stats = os.path.join(case_dir, "fake_stats.json")
        self.stats = json.load(open(stats)) if os.path.exists(stats) else None
        self.tmp = glob.glob(os.path.join(case_dir, "*.tmp"))
        paths = sorted(p for p in glob.glob(os.path.join(case_dir, "*.json*"))
                       if "fake_stats" not in p and not p.endswith(".tmp"))
        self.paths = paths
        self.traces = [load(p) for p in paths]

    def trace(self):
        check(len(self.traces) >= 1, "a finished trace was written (%s)" % self.tmp)
        return self.traces[-1] if self.traces else {"traceEvents": [], "gprof": {}}


def events(t, cat=None, ph="X"):
    return [e for e in t["traceEvents"] if e.get("ph") == ph and (cat is None or e.get("cat") == cat)]


def gpu_work(t):
    return [e for e in events(t) if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]


def check_links(t, launch_cat):
    """Each GPU activity: a launch call with its correlation id on some thread, started before
    the work; a flow from the call to the work; the call inside an NVTX range of its thread."""
    calls = {e["args"]["correlation"]: e for e in events(t, launch_cat)}
    starts = {e["id"]: e for e in events(t, "ac2g", "s")}
    ends = {e["id"]: e for e in events(t, "ac2g", "f")}
    ranges = {}
    for r in events(t, "user_annotation"):
        ranges.setdefault(r["tid"], []).append((ns(r["ts"]), ns(r["ts"]) + ns(r["dur"])))
    work = gpu_work(t)
    check(len(work) > 0, "GPU work in the trace")
    unlinked = unnested = early = 0
    for w in work:
        corr = w["args"]["correlation"]
        call = calls.get(corr)
        if call is None or corr not in starts or corr not in ends:
            unlinked += 1
            continue
        check(starts[corr]["tid"] == call["tid"] and ends[corr]["tid"] == w["tid"],
              "flow %d runs from the call's thread to the work's stream" % corr)
        if ns(w["ts"]) < ns(call["ts"]):
            early += 1
        c0, c1 = ns(call["ts"]), ns(call["ts"]) + ns(call["dur"])
        if not any(a <= c0 and c1 <= b for a, b in ranges.get(call["tid"], [])):
            unnested += 1
    check(unlinked == 0, "%d of %d GPU activities have no launch call and flow" % (unlinked, len(work)))
    check(early == 0, "%d GPU activities start before their launch call" % early)
    check(unnested == 0, "%d launch calls are outside every NVTX range of their thread" % unnested)


def check_work(t, threads=THREADS, steps=STEPS, launch_cat="cuda_runtime", rounds=1):
    g = t.get("gprof", {})
    check(g.get("gpu_status") == "recorded", "gpu_status recorded: %r" % g.get("gpu_status"))
    check(g.get("dropped_gpu_records") == 0, "no GPU record dropped: %r" % g.get("dropped_gpu_records"))
    names = [e["name"] for e in gpu_work(t)]
    n = threads * steps
    check(names.count("relu_kernel") == n, "%d relu kernels: %d" % (n, names.count("relu_kernel")))
    # demangled where the program has the C++ runtime (sim_app is C: it keeps the mangled name)
    gemm = [x for x in names if "sgemm_nn" in x]
    check(len(gemm) == n, "%d sgemm kernels: %d %s" % (n, len(gemm), gemm[:1]))
    for name in ("Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pinned -> Device)",
                 "Memcpy DtoH (Device -> Pinned)", "Memset (Device)"):
        check(names.count(name) == n, "%d x %s: %d" % (n, name, names.count(name)))
    check_links(t, launch_cat)
    mem = [e for e in events(t, None, "i") if e["name"] == "[memory]"]
    dev = [e for e in mem if e["args"]["Device Type"] == 1]
    pinned = [e for e in mem if e["args"]["Device Type"] == 0]
    check(len(dev) == 2 * n, "device alloc+free records: %d of %d" % (len(dev), 2 * n))
    check(len(pinned) == 2 * threads * rounds, "pinned alloc+free records: %d" % len(pinned))
    check(sum(e["args"]["Bytes"] for e in dev) == 0, "device bytes allocated and freed balance")
    peak = max((e["args"]["Total Allocated"] for e in dev), default=0)
    check(peak >= (1 << 16) * 4, "peak device memory at least one buffer: %d" % peak)
    check(ns(max(e["ts"] for e in dev)) > 0, "memory records on the trace clock")


def check_external_ids(t):
    """Every range has an External id, and each kernel carries its range's (\"forward\")."""
    ranges = {e["args"]["External id"]: e["name"] for e in events(t, "user_annotation")
              if "External id" in e.get("args", {})}
    check(len(ranges) == len(events(t, "user_annotation")), "every range has an External id")
    kernels = [e for e in gpu_work(t) if e["cat"] == "kernel"]
    bad = [k for k in kernels if ranges.get(k["args"].get("External id")) != "forward"]
    check(kernels and not bad, "%d of %d kernels carry their range's External id"
          % (len(kernels) - len(bad), len(kernels)))


def check_stats_delivered(run, t):
    s = run.stats
    check(s is not None, "the fake wrote its statistics")
    if s:
        check(s["dropped"] == 0, "the fake dropped nothing: %r" % s)


def check_detached(run):
    """After the session: kinds disabled, a last forced flush, unsubscribed, cuptiFinalize."""
    s = run.stats or {}
    check(s.get("finalized", 0) >= 1, "cuptiFinalize called: %r" % s)
    check(s.get("attached") == 0, "nothing of libprof's left attached to CUPTI: %r" % s)
    check(s.get("held") == 0, "no buffer left with CUPTI: %r" % s)
    check(s.get("ext_open") == 0, "every external correlation id pushed was popped: %r" % s)


def check_left_at_exit(run):
    """A session ended by the exit handler: everything flushed and written, and CUPTI left as it
    is (CUDA's exit handler ran first; detaching then crashed on a real H200: exit 139). Every
    injected run here also exits 0 only because of this (the fake crashes as the real one did)."""
    s = run.stats or {}
    check(s.get("finalized", 1) == 0, "no cuptiFinalize at exit: %r" % s)
    check(s.get("held") == 0, "no buffer left with CUPTI: %r" % s)
    check(s.get("ext_open") == 0, "every external correlation id pushed was popped: %r" % s)


def case_threads(d):
    r = Run(d, "work")
    t = r.trace()
    check_work(t)
    check_stats_delivered(r, t)
    check_left_at_exit(r)
    check(r.stats and r.stats["misaligned"] == 0, "every buffer 8-byte aligned: %r" % r.stats)
    queued = {e["args"].get("queued") for e in gpu_work(t) if e["cat"] == "kernel"}
    check(queued == {0}, "queued 0 without latency timestamps (CUPTI 13): %s" % queued)
    syncs = [e for e in events(t, "cuda_sync") if e["name"] == "Stream Sync"]
    check(len(syncs) == THREADS * STEPS, "a Stream Sync per step: %d" % len(syncs))


def case_runtime_flows(d):
    r = Run(d, "work", ["--threads", "1", "--steps", "20"])
    t = r.trace()
    check_work(t, 1, 20)
    drv = events(t, "cuda_driver")
    check(not drv, "a runtime program gets no driver events: %d" % len(drv))


def case_driver_launch(d):
    """Kernels launched with cuLaunchKernel (Triton, NVRTC) are linked to their launch by
    default; other driver calls are not recorded unless asked for."""
    r = Run(d, "work", ["--driver"])
    t = r.trace()
    calls = {e["name"] for e in events(t, "cuda_driver")}
    check("cuLaunchKernel" in calls, "cuLaunchKernel recorded by default: %s" % sorted(calls))
    check(not (calls - {"cuLaunchKernel"}) - {"cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync",
                                              "cuMemsetD8Async"},
          "only launches of work by default: %s" % sorted(calls))
    kernels = [e for e in gpu_work(t) if e["cat"] == "kernel"]
    calls_by_corr = {e["args"]["correlation"]: e for e in events(t, "cuda_driver")}
    check(kernels and all(k["args"]["correlation"] in calls_by_corr for k in kernels),
          "every kernel has its cuLaunchKernel")
    r2 = Run(os.path.join(d, "all"), "work", ["--driver", "--threads", "1", "--steps", "1"],
             extra_env={"GP_PROF_DRIVER": "1"})
    all_calls = {e["name"] for e in events(r2.trace(), "cuda_driver")}
    check("cuMemAlloc" in all_calls, "GP_PROF_DRIVER=1 records every driver call: %s" % sorted(all_calls))


def case_linked(d):
    r = Run(d, "work", linked=True)
    t = r.trace()
    check_work(t)
    check(t["gprof"].get("producer") == "api", "linked session: %r" % t["gprof"].get("producer"))
    check_detached(r)


def case_device_props(d):
    """The device records CUPTI replays when libprof enables them reach the trace every time:
    libprof once marked itself started only after setting the flush period, which wakes CUPTI's
    worker, and freed the buffer holding them as a late one (lost in 12 of 30 runs)."""
    missing = 0
    for i in range(12):
        run_dir = os.path.join(d, "run%d" % i)
        os.makedirs(run_dir)
        t = Run(run_dir, "work", ["--threads", "1", "--steps", "1"], linked=True).trace()
        missing += not t.get("deviceProperties")
    check(missing == 0, "deviceProperties missing in %d of 12 traces" % missing)


def case_fork(d):
    r = Run(d, "fork")
    t = r.trace()
    check_work(t, THREADS, 2 * STEPS, rounds=2)
    child = [e for e in events(t, "user_annotation") if e["name"] == "child"]
    check(not child, "the forked child's ranges are not in the parent's trace")
    calls = os.path.join(d, "fake_stats.json.child")
    check(not os.path.exists(calls), "the forked child never called CUPTI: %s"
          % (open(calls).read().split() if os.path.exists(calls) else ""))


def case_sigterm(d):
    r = Run(d, "sigterm", expect_rc=-15)
    t = r.trace()
    check(not r.tmp, "no .tmp left: %s" % r.tmp)
    check(len([e for e in gpu_work(t) if e["cat"] == "kernel"]) == 2 * THREADS * STEPS,
          "the kernels before SIGTERM are in the trace")


def case_signal_in_launch(d):
    """SIGTERM arrives while the launching thread holds CUPTI's lock: the trace is finished
    from what is queued, without calling CUPTI (which would wait for that lock)."""
    r = Run(d, "work", ["--threads", "1"], extra_env={"FAKE_CUDA_SIGNAL_AT": "3"}, expect_rc=-15)
    t = r.trace()
    check(not r.tmp, "no .tmp left: %s" % r.tmp)
    check(r.seconds < 5, "finished in %.1f s (the writer's timeout is 10 s)" % r.seconds)
    check(t["gprof"].get("complete") is True, "the trace says it is complete")


def case_reset(d):
    r = Run(d, "reset", ["--threads", "2"])
    t = r.trace()
    check_work(t, 2, STEPS)


def case_running_at_exit(d):
    r = Run(d, "running_at_exit")
    t = r.trace()
    k = [e for e in gpu_work(t) if e["cat"] == "kernel"]
    check(len(k) == 1 and ns(k[0]["dur"]) >= 300_000_000,
          "the 300 ms kernel still running at exit has its timestamps: %s" % k)
    warn = " ".join(t["gprof"].get("warnings", []))
    check("no timestamps" not in warn, "no missing-timestamp warning: %s" % warn)


def case_wsl_clock(d):
    """CUPTI stamps with CLOCK_MONOTONIC_RAW on WSL: libprof's clock must be registered."""
    r = Run(d, "work", fake="wsl")
    t = r.trace()
    check_work(t)
    check(r.stats and r.stats["timestamp_callback"] == 1, "libprof registered its clock")


def case_drops(d):
    """A consumer too slow for CUPTI: libprof refuses buffers past its cap, CUPTI drops and
    counts; the trace's count must be CUPTI's, not twice it."""
    r = Run(d, "work", ["--threads", "2", "--steps", "40"], fake="hoard=2")
    t = r.trace()
    s = r.stats or {}
    check(s.get("refused", 0) > 0, "libprof refused buffers: %r" % s)
    got = t["gprof"].get("dropped_gpu_records")
    check(got == s.get("dropped"), "trace says %r dropped, CUPTI dropped %r" % (got, s.get("dropped")))
    warn = " ".join(t["gprof"].get("warnings", []))
    check("dropped" in warn, "a warning says GPU records were dropped: %s" % warn)


def case_busy(d):
    r = Run(d, "work", fake="busy")
    t = r.trace()
    st = t["gprof"].get("gpu_status", "")
    check("another tool" in st, "gpu_status names another tool: %r" % st)
    check(len(events(t, "user_annotation")) == THREADS * STEPS * 3, "NVTX ranges still recorded")
    check(not gpu_work(t), "no GPU work without CUPTI")


def case_old(d):
    r = Run(d, "work", ["--threads", "1"], fake="old")
    st = r.trace()["gprof"].get("gpu_status", "")
    check("too old" in st and "120000" in st, "gpu_status says CUPTI is too old: %r" % st)


def case_kind_fails(d):
    r = Run(d, "work", ["--threads", "1"], fake="fail_kind=49")  # CUPTI_ACTIVITY_KIND_MEMORY2
    t = r.trace()
    st = t["gprof"].get("gpu_status", "")
    check(st.startswith("recorded") and "memory" in st and "NOT_COMPATIBLE" in st,
          "gpu_status names the kind that failed: %r" % st)
    check(len([e for e in gpu_work(t) if e["cat"] == "kernel"]) == 2 * STEPS, "kernels recorded")


def case_stall(d):
    r = Run(d, "work", fake="stall")
    check_work(r.trace())


def case_late(d):
    r = Run(d, "late", ["--threads", "2", "--steps", "2"], fake="late", linked=True)
    second = [t for p, t in zip(r.paths, r.traces) if p.endswith("trace.json")]
    check(len(second) == 1 and len(r.traces) == 2, "two sessions, two traces: %s" % r.paths)
    t = second[0] if second else r.trace()
    check_work(t, 2, 2)
    check(r.stats and r.stats["late_buffers"] >= 1, "a late buffer reached libprof: %r" % r.stats)
    late = [e for e in gpu_work(t) if e["name"] == "late_kernel"]
    check(not late, "a buffer that arrived after the first session ended is not in the second")


def case_takeover(d):
    r = Run(d, "takeover", ["--threads", "1"])
    t = r.trace()
    st = t["gprof"].get("gpu_status", "")
    check("took over" in st, "gpu_status says another profiler took over CUPTI: %r" % st)
    check(r.stats and r.stats["finalized"] == 0, "CUPTI not finalized under the other profiler: %r"
          % r.stats)


def co_report(r):
    """What the other tool of sim_app's co_subscriber got: subscribe's result, callbacks,
    kernel records."""
    for line in r.proc.stdout.splitlines():
        if line.startswith("co_subscriber: "):
            words = line.replace(",", "").split()
            return int(words[2]), int(words[4]), int(words[6])
    check(False, "co_subscriber printed what the other tool got")
    return None, 0, 0


def case_co_subscriber(d):
    """CUPTI 13.3+: another tool subscribes beside libprof. No takeover, no record lost, and
    libprof's exit leaves CUPTI to the other tool (no cuptiFinalize under it)."""
    r = Run(d, "co_subscriber", ["--threads", "1"], fake="multi")
    t = r.trace()
    check_work(t, 1, 2 * STEPS, rounds=2)  # gpu_status "recorded": no takeover reported
    rc, callbacks, kernels = co_report(r)
    check(rc == 0, "the other tool's cuptiSubscribe succeeded: %r" % rc)
    check(callbacks >= 1, "the other tool got its context callback: %d" % callbacks)
    check(kernels >= 2 * STEPS, "the other tool got the kernels after it subscribed: %d" % kernels)
    check(r.stats and r.stats["co_lost"] == 0 and r.stats["co_detached"] == 0,
          "libprof did not tear CUPTI down under the other tool: %r" % r.stats)


def case_co_subscriber_single(d):
    """CUPTI before 13.3: the other tool cannot subscribe (MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    taking the buffer callbacks anyway takes libprof's over, which libprof reports."""
    r = Run(d, "co_subscriber", ["--threads", "1"])
    rc, _, _ = co_report(r)
    check(rc == 39, "the other tool's cuptiSubscribe failed with "
          "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: %r" % rc)
    st = r.trace()["gprof"].get("gpu_status", "")
    check("took over" in st, "gpu_status says another profiler took over CUPTI: %r" % st)
    check(r.stats and r.stats["finalized"] == 0, "CUPTI not finalized under the other tool: %r"
          % r.stats)


def case_exit_race(d):
    """A buffer asked for by a thread still launching during the exit flush, still empty at
    the next flush, is not another profiler taking over."""
    r = Run(d, "work", ["--threads", "2"], fake="exit_race")
    t = r.trace()
    check_work(t, 2)
    check(r.stats and r.stats["requests"] >= 2, "buffers were requested: %r" % r.stats)


def case_per_thread(d):
    """CUPTI 13's per-thread buffers: 40 threads each hold a buffer of libprof's at once (its
    cap must not make CUPTI drop), and kernels come back before the API records that launched
    them (still linked, still on their range's External id)."""
    r = Run(d, "work", ["--threads", "40", "--steps", "2"], fake="per_thread")
    t = r.trace()
    check_work(t, 40, 2)
    check_stats_delivered(r, t)
    check(r.stats and r.stats["refused"] == 0, "no buffer refused: %r" % r.stats)
    check_external_ids(t)


def case_external_id(d):
    """Ranges are linked to their GPU work with CUPTI's external correlation (as Kineto links
    ops): each launch and its kernel carry the External id of the innermost range."""
    r = Run(d, "work", ["--threads", "2"])
    t = r.trace()
    check_external_ids(t)


def case_memory_threads(d):
    """[memory] events are on the thread that allocated: CUPTI makes the memory record before
    the API record of the call (its thread comes from that record)."""
    r = Run(d, "work")
    t = r.trace()
    mem = [e for e in events(t, None, "i") if e["name"] == "[memory]"]
    allocating = {e["tid"] for e in events(t, "cuda_runtime") if e["name"] in
                  ("cudaMalloc", "cudaFree", "cudaMallocHost", "cudaFreeHost")}
    on = {e["tid"] for e in mem}
    check(len(allocating) == THREADS, "%d allocating threads: %s" % (THREADS, allocating))
    check(mem and on == allocating, "[memory] on the allocating threads %s: on %s"
          % (sorted(allocating), sorted(on)))


def case_work_first(d):
    """Kernels, copies and sets before their API and external-correlation records: still linked
    to their launch, still carrying their range's External id."""
    r = Run(d, "work", ["--threads", "2"], fake="work_first")
    t = r.trace()
    check_work(t, 2)
    check_external_ids(t)


def case_two_devices(d):
    """Threads on two devices: peak device memory is the fullest device's (device 1 allocates
    4x as much), and each device has its GPU row."""
    r = Run(d, "work", ["--devices", "2"])
    t = r.trace()
    check_work(t)
    mem = [e for e in events(t, None, "i") if e["name"] == "[memory]"
           and e["args"]["Device Type"] == 1]
    peaks = {}
    for e in mem:
        dev = e["args"]["Device Id"]
        peaks[dev] = max(peaks.get(dev, 0), e["args"]["Total Allocated"])
    check(sorted(peaks) == [0, 1], "memory on devices 0 and 1: %s" % sorted(peaks))
    got = t["gprof"].get("peak_device_memory_allocated")
    check(got == max(peaks.values(), default=-1), "peak_device_memory_allocated %r is the "
          "fullest device's: %s" % (got, peaks))
    check({e["pid"] for e in gpu_work(t)} == {0, 1}, "GPU work on both devices")


def case_running_elsewhere_at_exit(d):
    """A kernel still running at exit on another thread's context (device 1): the exit sync
    waits for every context, not the exiting thread's only."""
    r = Run(d, "running_elsewhere_at_exit", ["--devices", "2"])
    t = r.trace()
    k = [e for e in gpu_work(t) if e["cat"] == "kernel"]
    check(len(k) == 1 and ns(k[0]["dur"]) >= 300_000_000 and k[0]["pid"] == 1,
          "the 300 ms kernel on device 1 has its timestamps: %s" % k)
    warn = " ".join(t["gprof"].get("warnings", []))
    check("no timestamps" not in warn, "no missing-timestamp warning: %s" % warn)


def case_created_context_at_exit(d):
    """A kernel still running at exit in a context another thread created (cuCtxCreate, not a
    primary context): the exit sync waits for the contexts created during the session too."""
    r = Run(d, "created_context_at_exit")
    t = r.trace()
    k = [e for e in gpu_work(t) if e["cat"] == "kernel"]
    check(len(k) == 1 and ns(k[0]["dur"]) >= 300_000_000 and k[0]["args"]["context"] == 3,
          "the 300 ms kernel in the created context has its timestamps: %s" % k)


def case_reload(d):
    """A module reloaded: its new kernel reuses the old one's name address; each keeps its name."""
    r = Run(d, "reload")
    names = sorted(e["name"] for e in gpu_work(r.trace()) if e["cat"] == "kernel")
    # mangled, or demangled where the process has the C++ runtime (the sanitizer builds)
    check(len(names) == 2 and "kernel_v1" in names[0] and "kernel_v2" in names[1],
          "both kernels by their names: %s" % names)


def case_window(d):
    """A profiling window whose edges cut launches from their work (work runs into the next
    step): every flow has both ends, and no [memory] instant is outside the window's steps."""
    r = Run(d, "window", ["--threads", "1", "--steps", "8"], linked=True,
            extra_env={"SIM_SCHEDULE": "2,1,3"})
    t = r.trace()
    starts = {e["id"] for e in events(t, "ac2g", "s")}
    ends = {e["id"] for e in events(t, "ac2g", "f")}
    check(starts and starts == ends, "flows with one end: %d starts without an end, %d ends "
          "without a start" % (len(starts - ends), len(ends - starts)))
    steps = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events(t)
             if e["name"].startswith("ProfilerStep#")]
    check(len(steps) == 3, "3 active steps: %d" % len(steps))
    mem = [e for e in events(t, None, "i") if e["name"] == "[memory]"]
    outside = [e for e in mem if not any(a <= ns(e["ts"]) < b for a, b in steps)]
    check(mem and not outside, "%d of %d [memory] instants outside the window's steps"
          % (len(outside), len(mem)))
    # The window runs from the first active step's start to the last one's end, the gaps
    # between its steps included: work launched in one step may start before the next step's
    # range opens (a slow host, e.g. under TSan, widens that gap), and it is inside the window.
    work = gpu_work(t)
    t0, t1 = (steps[0][0], steps[-1][1]) if steps else (0, 0)
    late = [e for e in work if not t0 <= ns(e["ts"]) < t1]
    check(work and not late, "%d of %d kernels start outside the window (%d..%d ns)"
          % (len(late), len(work), t0, t1))


def main():
    global FAKE_DIR, LIB
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    case, FAKE_DIR, LIB = sys.argv[1], sys.argv[2], sys.argv[3]
    fn = globals().get("case_" + case)
    if fn is None:
        print("unknown case", case)
        return 2
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "all"))
        fn(d)
    print("%s: %s" % (case, "FAIL (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
