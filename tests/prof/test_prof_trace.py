#!/usr/bin/env python3
"""test_prof_trace.py: runs libprof's scenario programs (prof_app, nvtx_app) and checks the traces
they leave with Python's strict json module: the trace contract, nesting per thread, names,
durations, signals, a full disk and the profiling window.
usage: test_prof_trace.py CASE BIN_DIR LIB_DIR   (CASE: threads, atexit, gzip, sigint, sigterm,
fsize, unwritable, schedule, nvtx, nvtx_linked; with GPROF after LIB_DIR: run_exec, run_orphan,
early_death)"""
import gzip
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read()
    trace = json.loads(text)  # strict: invalid escapes or UTF-8 fail here
    keys = list(trace.keys())
    check(keys[-1] == "traceEvents", "traceEvents is the last key: %s" % keys)
    check(trace.get("schemaVersion") == 1, "schemaVersion 1")
    check(isinstance(trace.get("baseTimeNanoseconds"), int), "baseTimeNanoseconds")
    check(isinstance(trace.get("deviceProperties"), list), "deviceProperties list")
    check(isinstance(trace.get("gprof"), dict), "gprof object")
    for e in trace["traceEvents"]:
        check("name" in e and "ph" in e, "every event has name and ph: %r" % e)
        if e["ph"] == "X":
            check(isinstance(e.get("cat"), str) and e["dur"] >= 0, "X has cat and dur: %r" % e)
    return trace


def ns(us):
    """Trace times are microseconds with three decimals: exact integer ns (no float sums, which
    make touching ranges overlap by 1e-10)."""
    return round(us * 1000)


def check_nesting(events):
    """X events on one (pid, tid) must nest; returns {id(event): depth}."""
    depth = {}
    by_thread = {}
    for e in events:
        if e["ph"] == "X":
            by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, evs in by_thread.items():
        evs.sort(key=lambda e: (ns(e["ts"]), -ns(e["dur"])))
        stack = []
        for e in evs:
            start, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            while stack and stack[-1] <= start:
                stack.pop()
            if stack:
                check(end <= stack[-1], "partial overlap on %s: %r" % (key, e))
            depth[id(e)] = len(stack)
            stack.append(end)
    return depth


def x_events(trace, name=None):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and (name is None or e["name"] == name)]


def thread_names(trace):
    return {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}


def run(cmd, env=None, **kw):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, **kw)


def case_threads(bindir, tmp, mode="threads", out_name="t.json"):
    out = os.path.join(tmp, out_name)
    r = run([os.path.join(bindir, "prof_app"), mode, out])
    check(r.returncode == 0, "prof_app exits 0: %s" % r.stderr)
    check(not os.path.exists(out + ".tmp"), "no .tmp left behind")
    t = load(out)
    depth = check_nesting(t["traceEvents"])
    n = 3 * 4 * 500
    outer, mm = x_events(t, "outer"), x_events(t, "aten::mm")
    leaf = x_events(t, 'leaf "q" \\ \x01\t\ufffd\u00e9')
    check(len(outer) == n and len(mm) == n and len(leaf) == n,
          "range counts %d %d %d (want %d)" % (len(outer), len(mm), len(leaf), n))
    check(all(e["cat"] == "cpu_op" for e in mm), "aten::mm is cpu_op")
    check(all(e["cat"] == "user_annotation" for e in outer), "outer is user_annotation")
    check(all(depth[id(e)] == 0 for e in outer), "outer at depth 0")
    check(all(depth[id(e)] == 1 for e in mm), "aten::mm at depth 1")
    check(all(depth[id(e)] == 2 for e in leaf), "leaf at depth 2")
    steps = sorted(e["name"] for e in x_events(t) if e["name"].startswith("ProfilerStep#"))
    check(steps == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"], "steps %s" % steps)
    g = t["gprof"]
    check(g.get("model") == "mlp" and g.get("batch_size") == 64 and g.get("pin_memory") is True
          and g.get("lr") == 0.001 and g.get("command") == ["prof_app", '--x="y"'], "gprof config %r" % g)
    check(g.get("complete") is True and g.get("dropped_records") == 0, "complete, nothing dropped")
    check(any("unbalanced pop" in w for w in g.get("warnings", [])), "unbalanced pop warning")
    names = thread_names(t).values()
    check(any("(main)" in v for v in names) and any("(worker-0)" in v for v in names),
          "thread names %s" % list(names)[:6])
    check(any(e["ph"] == "i" and e["name"] == "mark" for e in t["traceEvents"]), "mark event")
    check(any(e["ph"] == "C" and e["name"] == "loss" for e in t["traceEvents"]), "counter event")
    if mode == "threads":
        check(("trace " + out) in r.stdout, "gp_prof_trace_path: %s" % r.stdout)


def case_signal(bindir, tmp, sig):
    out = os.path.join(tmp, "spin.json.gz")
    p = subprocess.Popen([os.path.join(bindir, "prof_app"), "spin", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    check(p.stdout.readline().strip() == "ready", "spin app started")
    time.sleep(0.4)
    p.send_signal(sig)
    p.wait(timeout=30)
    check(p.returncode == -sig, "died by the signal (%s)" % p.returncode)
    check(os.path.exists(out) and not os.path.exists(out + ".tmp"), "trace renamed after signal")
    t = load(out)
    check(len(x_events(t, "spin")) > 10, "spin ranges recorded")
    check(t["gprof"].get("complete") is True, "trace complete after signal")
    check_nesting(t["traceEvents"])


def case_fsize(bindir, tmp):
    out = os.path.join(tmp, "full.json")
    r = run([os.path.join(bindir, "prof_app"), "fsize", out])
    check(r.returncode == 0 and "host alive" in r.stdout, "host keeps running: %r" % r.stdout)
    check("shutdown I/O error" in r.stdout.replace("i/o", "I/O"), "shutdown reports I/O: %r" % r.stdout)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(len(lines) == 1 and "cannot write trace" in lines[0] and out in lines[0],
          "exactly one clear message: %r" % r.stderr)
    check(not os.path.exists(out + ".tmp") and not os.path.exists(out), "partial file removed")


def case_unwritable(bindir, tmp):
    r = run([os.path.join(bindir, "prof_app"), "unwritable", "/nonexistent-dir/x/t.json"])
    check(r.returncode == 0, "exit 0")
    check("init failed" in r.stdout and "cannot create trace file" in r.stdout, "clear error: %r" % r.stdout)


def case_schedule(bindir, tmp):
    out = os.path.join(tmp, "sched.json")
    r = run([os.path.join(bindir, "prof_app"), "schedule", out])
    check(r.returncode == 0, "exit 0")
    t = load(out)
    steps = sorted(e["name"] for e in x_events(t) if e["name"].startswith("ProfilerStep#"))
    work = sorted(e["name"] for e in x_events(t) if e["name"].startswith("work#"))
    check(steps == ["ProfilerStep#3", "ProfilerStep#4"], "active steps %s" % steps)
    check(work == ["work#3", "work#4"], "ranges in active steps only %s" % work)


def case_nvtx(bindir, libdir, tmp, linked):
    env = dict(os.environ)
    env.pop("NVTX_INJECTION64_PATH", None)
    env.pop("GP_PROF_NVTX_LINKED", None)
    env["GP_PROF_OUT"] = tmp
    if linked:
        r = run([os.path.join(bindir, "nvtx_app_linked")], env=env)
    else:
        env["NVTX_INJECTION64_PATH"] = os.path.join(libdir, "libgp_prof.so")
        r = run([os.path.join(bindir, "nvtx_app")], env=env)
    check(r.returncode == 0, "nvtx app exit 0: %s" % r.stderr)
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    traces = [f for f in os.listdir(tmp) if f.endswith(".pt.trace.json.gz")]
    check(len(traces) == 1, "one trace per process: %s" % traces)
    if not traces:
        return
    t = load(os.path.join(tmp, traces[0]))
    depth = check_nesting(t["traceEvents"])
    want = [l for l in lines if "name" in l]
    check(len(x_events(t)) == len(want), "exactly the NVTX ranges: %s" % [e["name"] for e in x_events(t)])
    for w in want:
        name = w["name"]
        evs = x_events(t, name)
        check(len(evs) == 1, "one %r" % name)
        if len(evs) != 1:
            continue
        e = evs[0]
        real_tid = e["tid"] if e["tid"] < (1 << 30) else (e["tid"] - (1 << 30)) & ((1 << 22) - 1)
        check(real_tid == w["tid"], "%r on thread %d (got %d)" % (name, w["tid"], e["tid"]))
        check(w["min_us"] <= e["dur"] < w["min_us"] + 500000, "%r lasts %.1f us >= %d" % (name, e["dur"], w["min_us"]))
        if w["depth"] >= 0:
            check(depth[id(e)] == w["depth"] and e["tid"] == w["tid"], "%r at depth %d" % (name, w["depth"]))
        else:
            check(e["tid"] >= (1 << 30), "%r on a start/end lane" % name)
    mark = [l for l in lines if "mark" in l][0]
    check(any(e["ph"] == "i" and e["name"] == "checkpoint" and e["tid"] == mark["tid"]
              for e in t["traceEvents"]), "nvtxMarkA recorded")
    names = thread_names(t)
    check(any("nvtx-main" in v for v in names.values()) and
          any("nvtx-worker" in v for v in names.values()), "nvtxNameOsThreadA: %s" % names)
    check(t["gprof"].get("producer") == ("api" if linked else "inject"), "producer")


def case_run_exec(bindir, tmp, gprof):
    """gprof-train run -- CMD: injection, one trace per process, exit status, signals."""
    r = run([gprof, "run", "--no-report", "-o", tmp, "--", os.path.join(bindir, "nvtx_app")])
    check(r.returncode == 0, "run exits with CMD's status 0: %s" % r.stderr)
    dirs = [d for d in os.listdir(tmp) if d.startswith("nvtx_app-")]
    check(len(dirs) == 1, "one run folder: %s" % dirs)
    traces = os.listdir(os.path.join(tmp, dirs[0])) if dirs else []
    check(len(traces) == 1 and traces[0].endswith(".pt.trace.json.gz"), "one trace: %s" % traces)
    if traces:
        t = load(os.path.join(tmp, dirs[0], traces[0]))
        check(len(x_events(t, "outer")) == 1 and t["gprof"].get("producer") == "inject", "NVTX captured")
        check(t["gprof"].get("command", [""])[0].endswith("nvtx_app"), "command recorded")
        if not os.path.exists("/dev/nvidia0"):
            check("no GPU activity could be recorded" in r.stderr, "says no GPU: %r" % r.stderr)
            check(t["gprof"]["gpu_status"].startswith("no GPU activity could be recorded"), "gpu_status")
    r = run([gprof, "run", "-o", tmp, "--", "sh", "-c", "exit 3"])
    check(r.returncode == 3, "exit status passed through (%d)" % r.returncode)
    r = run([gprof, "run", "-o", tmp, "--", "/nonexistent/prog"])
    check(r.returncode == 127 and "cannot run '/nonexistent/prog'" in r.stderr, "missing CMD: %r" % r.stderr)
    r = run([gprof, "run", "-o", tmp, "--"])
    check(r.returncode == 2 and "no command to run" in r.stderr, "nothing after '--': %r" % r.stderr)
    sdir = os.path.join(tmp, "sig")
    p = subprocess.Popen([gprof, "run", "--no-report", "-o", sdir, "--", os.path.join(bindir, "nvtx_app"), "spin"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.stdout.readline().strip() == "ready", "spinning child started")
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    check(p.returncode == 128 + signal.SIGINT, "128+SIGINT after forwarding (%s)" % p.returncode)
    runs = os.listdir(sdir)
    files = os.listdir(os.path.join(sdir, runs[0])) if runs else []
    check(len(files) == 1 and files[0].endswith(".gz"), "trace left by the interrupted child: %s" % files)
    if files:
        t = load(os.path.join(sdir, runs[0], files[0]))
        check(len(x_events(t, "spin")) > 10 and t["gprof"]["complete"] is True, "interrupted trace complete")


def gone(pid):
    """The process has exited (absent, or a zombie nobody reaped yet)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def case_run_orphan(bindir, tmp, gprof):
    """gprof-train run SIGKILLed: CMD dies with it (SIGTERM, so its trace is finished)."""
    p = subprocess.Popen([gprof, "run", "--no-report", "-o", tmp, "--", os.path.join(bindir, "nvtx_app"), "spin"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    check(p.stdout.readline().strip() == "ready", "spinning child started")
    with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
        kids = [int(x) for x in f.read().split()]
    check(len(kids) == 1, "one child: %s" % kids)
    time.sleep(0.3)  # "ready" comes before its first NVTX call, which starts the session
    p.kill()
    p.wait(timeout=60)
    deadline = time.time() + 20
    while kids and not gone(kids[0]) and time.time() < deadline:
        time.sleep(0.05)
    check(kids and gone(kids[0]), "the child died with gprof-train run")
    if kids and not gone(kids[0]):
        os.kill(kids[0], signal.SIGKILL)
    runs = os.listdir(tmp)
    files = os.listdir(os.path.join(tmp, runs[0])) if runs else []
    check(len(files) == 1 and files[0].endswith(".gz"), "the child finished its trace: %s %s" % (runs, files))


def case_early_death(bindir, libdir, tmp, gprof):
    """A program that dies right after its first NVTX push: its .tmp (no event yet) reads as an
    incomplete trace, for report and for run."""
    # The program dies by the signal, not by a sanitizer's report of it.
    os.environ["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0"
    env = dict(os.environ, GP_PROF_OUT=tmp, NVTX_INJECTION64_PATH=os.path.join(libdir, "libgp_prof.so"))
    env.pop("GP_PROF_NVTX_LINKED", None)
    r = run([os.path.join(bindir, "nvtx_race"), "1", "1", "segv"], env=env)
    check(r.returncode == -signal.SIGSEGV, "died by SIGSEGV (%d)" % r.returncode)
    tmps = [f for f in os.listdir(tmp) if f.endswith(".tmp")]
    check(len(tmps) == 1, "the .tmp is left: %s" % os.listdir(tmp))
    for target in [os.path.join(tmp, f) for f in tmps] + [tmp]:
        r = run([gprof, "report", target])
        check(r.returncode == 0, "report %s: exit 0 (%d): %s" % (target, r.returncode, r.stderr))
        check("unexpected end of file" not in r.stderr and "incomplete last one" not in r.stderr and
              "incomplete: the program ended before any event" in r.stderr,
              "report %s: an incomplete trace: %r" % (target, r.stderr))
    out = os.path.join(tmp, "run")
    r = run([gprof, "run", "-o", out, "--", os.path.join(bindir, "nvtx_race"), "1", "1", "segv"])
    check(r.returncode == 128 + signal.SIGSEGV, "run: CMD's status (%d)" % r.returncode)
    check("cannot report" not in r.stderr and "unexpected end of file" not in r.stderr and
          "incomplete trace" in r.stderr and "incomplete: the program ended" in r.stderr,
          "run: an incomplete trace: %r" % r.stderr)


def case_cuda(bindir, libdir, tmp):
    """A CUDA program with known work must yield exactly those events (needs a GPU)."""
    app = os.path.join(bindir, "cuda_app")
    if not os.path.exists("/dev/nvidia0") or not os.path.exists(app):
        print("no GPU (or no CUDA build): skipped")
        return 77
    env = dict(os.environ, GP_PROF_OUT=tmp, CUDA_INJECTION64_PATH=os.path.join(libdir, "libgp_prof.so"),
               NVTX_INJECTION64_PATH=os.path.join(libdir, "libgp_prof.so"))
    r = run([app], env=env)
    if r.returncode == 77:
        print("cudaGetDeviceCount failed: skipped")
        return 77
    check(r.returncode == 0, "cuda_app exit 0: %s" % r.stderr)
    want = json.loads(r.stdout.strip().splitlines()[-1])
    traces = [f for f in os.listdir(tmp) if f.endswith(".gz")]
    check(len(traces) == 1, "one trace")
    if not traces:
        return 0
    t = load(os.path.join(tmp, traces[0]))
    ev = t["traceEvents"]
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    check(len(kernels) == want["kernels"] and all("scale_kernel" in e["name"] for e in kernels),
          "kernels %d want %d" % (len(kernels), want["kernels"]))
    copies = sorted(e["name"] for e in ev if e.get("cat") == "gpu_memcpy")
    check(copies == sorted(want["copies"]), "copies %s want %s" % (copies, want["copies"]))
    mem = [e for e in ev if e.get("name") == "[memory]" and e["args"]["Device Type"] == 1]
    check([e["args"]["Bytes"] for e in mem] == [want["alloc"], -want["alloc"]], "cudaMalloc/cudaFree %s" % mem)
    corr = {e["args"]["correlation"] for e in ev if e.get("cat") == "cuda_runtime"}
    check(all(e["args"]["correlation"] in corr for e in kernels), "every kernel links to its launch")
    starts = {e["id"] for e in ev if e["ph"] == "s"}
    check(all(e["args"]["correlation"] in starts for e in kernels), "ac2g flow for every kernel")
    check(t["gprof"]["gpu_status"] == "recorded" and t["deviceProperties"], "gpu recorded, devices")
    return 0


def main():
    case, bindir, libdir = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        if case == "run_exec":
            case_run_exec(bindir, tmp, sys.argv[4])
        elif case == "run_orphan":
            case_run_orphan(bindir, tmp, sys.argv[4])
        elif case == "early_death":
            case_early_death(bindir, libdir, tmp, sys.argv[4])
        if case == "cuda" and case_cuda(bindir, libdir, tmp) == 77:
            return 77
        if case in ("threads", "atexit"):
            case_threads(bindir, tmp, case)
        elif case == "gzip":
            case_threads(bindir, tmp, "threads", "t.pt.trace.json.gz")
        elif case == "sigint":
            case_signal(bindir, tmp, signal.SIGINT)
        elif case == "sigterm":
            case_signal(bindir, tmp, signal.SIGTERM)
        elif case == "fsize":
            case_fsize(bindir, tmp)
        elif case == "unwritable":
            case_unwritable(bindir, tmp)
        elif case == "schedule":
            case_schedule(bindir, tmp)
        elif case in ("nvtx", "nvtx_linked"):
            case_nvtx(bindir, libdir, tmp, case == "nvtx_linked")
        elif case not in ("run_exec", "run_orphan", "early_death", "cuda"):
            print("unknown case", case)
            return 2
    print("%s: %s" % (case, "FAILED (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
