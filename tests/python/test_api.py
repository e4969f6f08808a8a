"""The gprof_train module (python/) against the gprof-train binary it runs.

usage: test_api.py cli GPROF_TRAIN     report/diagnose/compare/job return what the command's
                                       --format json says; errors raise gprof_train.Error
       test_api.py torch GPROF_TRAIN   (the torch venv's python) profile() around a real
                                       training loop gives run's steps, aten:: operators and a
                                       diagnosis; on_trace_ready writes a trace report reads
The module is imported from the checkout, the binary found on PATH (its folder put first).
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(SRC, "tests", "data")
sys.path.insert(0, os.path.join(SRC, "python"))
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: %s" % msg)


def cli_json(*args):
    p = subprocess.run(["gprof-train"] + list(args) + ["--format", "json"],
                       stdout=subprocess.PIPE, check=True)
    return json.loads(p.stdout)


def case_cli(gt):
    import gprof_train as g

    check(os.path.samefile(g.executable(), gt), "executable() is %s, not %s" % (g.executable(), gt))
    trace = os.path.join(DATA, "torch", "mlp_step.json.gz")
    other = os.path.join(DATA, "torch", "optimizer_bound.json.gz")
    ranks = os.path.join(DATA, "job", "healthy")
    check(g.report(trace) == cli_json("report", trace), "report(trace) differs from the CLI's")
    r = g.report([trace, other], sort="self_cpu_time_total", row_limit=3)
    check(r == cli_json("report", trace, other, "--sort", "self_cpu_time_total", "-n", "3"),
          "report(two traces, sort, row_limit) differs from the CLI's")
    check(len(r["traces"]) == 2 and all(len(t["rows"]) == 3 for t in r["traces"]),
          "report(row_limit=3) does not give two traces of 3 rows")
    d = g.diagnose(other)
    check(d == cli_json("diagnose", other), "diagnose(trace) differs from the CLI's")
    check(d["schema"] == "gprof-train.diagnose/1" and d["traces"][0]["findings"],
          "diagnose gives no findings")
    check(g.compare(trace, other) == cli_json("compare", trace, other),
          "compare(base, new) differs from the CLI's")
    files = sorted(glob.glob(os.path.join(ranks, "*.json")))
    check(g.job(ranks) == cli_json("job", ranks), "job(folder) differs from the CLI's")
    check(g.job(files)["n_ranks"] == 4, "job(list of files) does not see 4 ranks")
    missing = os.path.join(DATA, "no-such-trace.json")
    try:
        g.report(missing)
        check(False, "report(missing file) raised nothing")
    except g.Error as e:
        check(e.code == 2 and missing in e.message, "report(missing): %s" % e)
    check(g._torch.parse_schedule("active=5,wait=0") ==
          {"wait": 0, "warmup": 1, "active": 5, "repeat": 1}, "parse_schedule keeps no defaults")
    for bad in ("activ=5", "active=0", "wait=-1"):
        try:
            g._torch.parse_schedule(bad)
            check(False, "parse_schedule(%r) raised nothing" % bad)
        except ValueError:
            pass


def child(tmp, mode):
    out = os.path.join(tmp, mode)
    env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "python"))
    p = subprocess.run([sys.executable, os.path.join(HERE, "torch_api_train.py"), mode, out],
                       cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=600)
    if p.returncode != 0:
        print("--- stdout\n%s\n--- stderr\n%s" % (p.stdout[-6000:], p.stderr[-6000:]))
        check(False, "torch_api_train.py %s exited %d" % (mode, p.returncode))
    return p.stdout, p.stderr, out


def op_names(rep):
    return {r["name"] for t in rep["traces"] for r in t["rows"]}


def case_profile(g, tmp):
    out, err, runs = child(tmp, "profile")
    dirs = glob.glob(os.path.join(runs, "*"))
    check(len(dirs) == 1, "profile(): %d run folders under %s" % (len(dirs), runs))
    traces = glob.glob(os.path.join(dirs[0], "*.pt.trace.json")) if dirs else []
    check(len(traces) == 1, "profile(): traces %s, want one" % traces)
    # run's default schedule (wait=2,warmup=1,active=20) over 30 optimizer steps: steps 3..22
    check("steps: 20 (ProfilerStep#3..#22)" in out, "profile() printed no report of 20 steps")
    check(re.search(r"^\[(ok|info|warn|crit)\] +GT01 ", out, re.M), "profile() printed no diagnosis")
    if len(traces) != 1:
        return
    rep = g.report(dirs[0])
    check(rep == cli_json("report", dirs[0]), "report(run folder) differs from the CLI's")
    check(rep["traces"][0]["summary"]["steps"] == 20, "report: not 20 steps")
    check({"aten::addmm", "aten::mm"} <= op_names(rep), "no aten:: operators in report()")
    diag = g.diagnose(dirs[0])
    check(diag == cli_json("diagnose", dirs[0]), "diagnose(run folder) differs from the CLI's")
    check("GT01" in {f["id"] for f in diag["traces"][0]["findings"]}, "diagnose(): no GT01")
    if failures:
        print("--- stdout\n%s\n--- stderr\n%s" % (out[-6000:], err[-6000:]))


def case_handler(g, tmp):
    out, err, traces_dir = child(tmp, "handler")
    traces = glob.glob(os.path.join(traces_dir, "*"))
    check(len(traces) == 1 and re.search(r"/[^/]+_\d+\.\d+\.pt\.trace\.json$", traces[0]),
          "on_trace_ready: traces %s, want one HOST_PID.MS.pt.trace.json" % traces)
    if len(traces) != 1:
        return
    check(traces[0] in err, "on_trace_ready does not say where the trace is")
    rep = g.report(traces[0])
    check(rep["traces"][0]["summary"]["steps"] == 3, "on_trace_ready's trace: not 3 steps")
    check("aten::addmm" in op_names(rep), "on_trace_ready's trace: no aten::addmm")


def case_torch(gt):
    import gprof_train as g

    with tempfile.TemporaryDirectory() as tmp:
        case_profile(g, tmp)
        case_handler(g, tmp)


def main():
    mode, gt = sys.argv[1], os.path.abspath(sys.argv[2])
    os.environ["PATH"] = os.path.dirname(gt) + os.pathsep + os.environ.get("PATH", "")
    {"cli": case_cli, "torch": case_torch}[mode](gt)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
