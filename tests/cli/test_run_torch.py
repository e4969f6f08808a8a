"""`gprof-train run -- python3 SCRIPT` on real PyTorch scripts (tests/cli/torch/), with the venv
that scripts/torch_venv.sh makes first on PATH.

usage: test_run_torch.py CASE GPROF_TRAIN
  plain     an unmodified script (MLP, DataLoader with 2 workers, SGD, 30 steps): one trace, of
            ProfilerStep steps at optimizer steps, aten:: operators in the report, a diagnosis
  own       a script with its own torch.profiler (or the legacy torch.autograd.profiler): not
            profiled twice, its trace is used
  torchrun  torchrun --nproc-per-node 2 with gloo: rank0 and rank1 traces, then the job view
  sigterm   a script killed by SIGTERM while the profiler records: its trace is still written
  detect    which commands get torch.profiler (--torch, --no-torch, no import of torch), and a
            sitecustomize already on PYTHONPATH still runs
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch")


def fail(msg, out="", err=""):
    print("FAIL: %s\n--- stdout\n%s\n--- stderr\n%s" % (msg, out[-6000:], err[-6000:]))
    sys.exit(1)


def launch(gt, tmp, cmd):
    return subprocess.run([gt, "run", "-o", os.path.join(tmp, "runs"), "--"] + cmd, cwd=tmp,
                          capture_output=True, text=True, timeout=900)


def one_run(p, tmp):
    """The run's output and its one run folder; fail on a non-zero exit or another count."""
    runs = glob.glob(os.path.join(tmp, "runs", "*"))
    if p.returncode != 0 or len(runs) != 1:
        fail("exit %d, %d run folders" % (p.returncode, len(runs)), p.stdout, p.stderr)
    return p.stdout, p.stderr, runs[0]


def run(gt, tmp, cmd):
    return one_run(launch(gt, tmp, cmd), tmp)


def steps_in(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    return sorted(int(e["name"].split("#")[1]) for e in events
                  if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))


def expect(cond, msg, out, err):
    if not cond:
        fail(msg, out, err)


def case_plain(gt, tmp):
    out, err, run_dir = run(gt, tmp, ["python3", os.path.join(HERE, "plain_train.py")])
    traces = sorted(os.listdir(run_dir))
    # one trace: the main process only, not the two DataLoader workers
    expect(len(traces) == 1 and re.match(r"python-\d+\.pt\.trace\.json$", traces[0]),
           "traces %s: want one python-PID.pt.trace.json" % traces, out, err)
    steps = steps_in(os.path.join(run_dir, traces[0]))
    # default schedule wait=2,warmup=1,active=20 over 30 optimizer steps: steps 3..22
    expect(steps == list(range(3, 23)), "ProfilerStep numbers %s, want 3..22" % steps, out, err)
    expect("steps: 20 (ProfilerStep#3..#22)" in out, "no step summary in the report", out, err)
    # the printed table is the top 20 rows by time, whose order moves with the machine's load:
    # the operators are checked in the trace's full report
    rep = subprocess.run([gt, "report", os.path.join(run_dir, traces[0]), "--row-limit", "0"],
                         capture_output=True, text=True, timeout=300)
    expect(rep.returncode == 0 and "aten::addmm" in rep.stdout and "aten::mm" in rep.stdout,
           "no aten:: operators in the trace's report", rep.stdout, rep.stderr)
    expect(re.search(r"^ *aten::\S+ ", out, re.M), "no aten:: operators in run's table", out, err)
    expect(re.search(r"^\[(ok|info|warn|crit)\] +GT01 ", out, re.M), "no diagnosis", out, err)
    expect("Kineto owns CUPTI" in err, "the run does not say libprof stays out", out, err)


def case_own(gt, tmp):
    own = os.path.join(tmp, "own.json")
    out, err, run_dir = run(gt, tmp, ["python3", os.path.join(HERE, "own_profiler.py"), own])
    expect("not profiling it a second time" in err, "the second profiler is not said", out, err)
    traces = os.listdir(run_dir)
    expect(traces == ["own.0.pt.trace.json"], "traces %s: want the script's own" % traces, out, err)
    expect(os.path.realpath(os.path.join(run_dir, traces[0])) == os.path.realpath(own),
           "the run folder's trace is not the script's", out, err)
    expect(steps_in(own) == [2, 3, 4, 5, 6], "the script's own schedule was disturbed", out, err)
    expect("steps: 5 (ProfilerStep#2..#6)" in out, "the script's trace is not reported", out, err)
    # the legacy API, its trace gzipped: linked as such, once
    shutil.rmtree(os.path.join(tmp, "runs"))
    own = os.path.join(tmp, "legacy.json.gz")
    out, err, run_dir = run(gt, tmp, ["python3", os.path.join(HERE, "own_profiler.py"), own,
                                      "legacy"])
    expect("not profiling it a second time" in err, "the legacy profiler is not noticed", out, err)
    traces = os.listdir(run_dir)
    expect(traces == ["legacy.0.pt.trace.json.gz"], "traces %s: want the script's" % traces,
           out, err)
    expect("no ProfilerStep#N; one step spans the trace" in out, "not reported", out, err)


# A rank of this CPU-only torch build sometimes aborts with this line after its trace is written
# (2 of about 8 fresh-clone `make test` runs on 2026-11-27, none in 18 runs alone): std::terminate
# in torch's own threads, whether our hook stopped the profiler at exit or in the script's time.
# torchrun then exits 1. Such a run is tried again, twice at most; any other failure fails.
UPSTREAM_ABORT = "terminate called without an active exception"


def run_torchrun(gt, tmp, cmd):
    for attempt in range(3):
        shutil.rmtree(os.path.join(tmp, "runs"), ignore_errors=True)
        p = launch(gt, tmp, cmd)
        written = glob.glob(os.path.join(tmp, "runs", "*", "rank[01].pt.trace.json"))
        if p.returncode == 0 or UPSTREAM_ABORT not in p.stderr or len(written) != 2:
            break
        print("torchrun: a rank aborted at exit (%s), try %d of 3" % (UPSTREAM_ABORT, attempt + 1))
    return one_run(p, tmp)


def case_torchrun(gt, tmp):
    if not shutil.which("torchrun"):
        print("SKIP: no torchrun in the torch venv")
        sys.exit(77)
    cmd = ["torchrun", "--standalone", "--nproc-per-node", "2", os.path.join(HERE, "ddp_train.py")]
    out, err, run_dir = run_torchrun(gt, tmp, cmd)
    traces = sorted(os.listdir(run_dir))
    expect(traces == ["rank0.pt.trace.json", "rank1.pt.trace.json"],
           "traces %s: want rank0 and rank1" % traces, out, err)
    for t in traces:
        expect(steps_in(os.path.join(run_dir, t)) == list(range(3, 23)),
               "%s: steps are not 3..22" % t, out, err)
    expect(re.search(r"^job: 2 ranks, 20 steps every rank has, \d+ collectives matched", out, re.M),
           "no job view of the two ranks", out, err)
    expect(re.search(r"GT16 straggler rank", out), "no GT16 in the job view", out, err)


def case_sigterm(gt, tmp):
    cmd = [gt, "run", "-o", os.path.join(tmp, "runs"), "--", "python3",
           os.path.join(HERE, "sigterm_midway.py")]
    p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=300)
    out, err = p.stdout, p.stderr
    expect(p.returncode == 128 + 15 and "killed by signal 15 (SIGTERM)" in err,
           "exit %d: the script did not die of SIGTERM" % p.returncode, out, err)
    traces = glob.glob(os.path.join(tmp, "runs", "*", "python-*.pt.trace.json"))
    expect(len(traces) == 1, "no trace of the steps before SIGTERM", out, err)
    # steps 3..9 were recorded; the 10th (ProfilerStep#10) was open when the signal came
    expect(steps_in(traces[0])[:7] == list(range(3, 10)), "steps %s" % steps_in(traces[0]),
           out, err)


def said_torch(gt, tmp, opts, cmd, env=None):
    p = subprocess.run([gt, "run", "-o", os.path.join(tmp, "runs")] + opts + ["--"] + cmd, cwd=tmp,
                       capture_output=True, text=True, timeout=300, env=env)
    return "profiling it with torch.profiler" in p.stderr, p.stdout, p.stderr


def case_detect(gt, tmp):
    plain = os.path.join(HERE, "plain_train.py")
    no_import = ["python3", "-c", "import importlib; importlib.import_module('torch')"]
    on, out, err = said_torch(gt, tmp, ["--no-torch"], ["python3", plain])
    expect(not on, "--no-torch still uses torch.profiler", out, err)
    on, out, err = said_torch(gt, tmp, [], no_import)
    expect(not on, "a program that never says 'import torch' was taken for one", out, err)
    # forced: the hook runs, and says that no optimizer step ran
    site = os.path.join(tmp, "site")
    os.mkdir(site)
    with open(os.path.join(site, "sitecustomize.py"), "w") as f:
        f.write("import sys\nsys.stderr.write('user sitecustomize ran\\n')\n")
    env = dict(os.environ, PYTHONPATH=site)
    on, out, err = said_torch(gt, tmp, ["--torch"], no_import, env)
    expect(on and "no optimizer step ran" in err, "--torch does not start the hook", out, err)
    expect("torch.profiler wrote no trace" in err and "could not write" not in err,
           "no trace is not said as such", out, err)
    expect(err.count("user sitecustomize ran") == 1, "the user's sitecustomize did not run once",
           out, err)
    p = subprocess.run([gt, "run", "--schedule", "wait=2,actve=3", "--", "python3", plain],
                       capture_output=True, text=True, timeout=60, cwd=tmp)
    expect(p.returncode == 2 and "--schedule at 'actve=3'" in p.stderr,
           "a bad --schedule is not refused with exit 2 at its item", p.stdout, p.stderr)


def main():
    case, gt = sys.argv[1], os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="gp-run-torch-")
    try:
        cases = {"plain": case_plain, "own": case_own, "torchrun": case_torchrun,
                 "detect": case_detect, "sigterm": case_sigterm}
        cases[case](gt, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok: %s" % case)


if __name__ == "__main__":
    main()
