"""scripts/job_dask.py maps `summarize` over a job's traces on Dask and runs `job` on the summaries:
its output equals `gprof-train job` on the traces, on a LocalCluster it starts itself (text, a
straggler job with a rank's clock skewed and a collective lost) and on a scheduler given by
address (NDJSON with --per-op, --per-collective and --job; JSON on a folder of summaries, taken
as they are). A failing trace is named, exit 2.
Runs in the job venv (tests/export/run_py.sh --job: dask[distributed], duckdb).
usage: test_job_dask.py GPROF_TRAIN"""
import logging
import os
import subprocess
import sys
import tempfile

from job_util import ROOT, check, finish, gen

BIN = sys.argv[1]
SCRIPT = os.path.join(ROOT, "scripts", "job_dask.py")


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def same(tag, d, dask_args, job_args):
    want = run([BIN, "job", d] + job_args)
    got = run([sys.executable, SCRIPT, "job", d, "--gprof-train", BIN, "--workers", "2"] + dask_args)
    check(want.returncode == 0 and got.returncode == 0,
          "%s: exits %d %d: %s" % (tag, want.returncode, got.returncode, got.stderr[-2000:]))
    check(got.stdout == want.stdout and want.stdout,
          "%s: same output\n--- job\n%s\n--- job_dask\n%s" % (tag, want.stdout, got.stdout))


def main():
    from dask.distributed import LocalCluster
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "j")
        gen(d, "--ranks", 5, "--steps", 4, "--straggler", 3, "--skew", "1:7", "--drop", "2:2:0")
        same("LocalCluster, text", d, [], [])
        bad = os.path.join(tmp, "bad")
        os.makedirs(bad)
        with open(os.path.join(bad, "rank0.pt.trace.json"), "w") as f:
            f.write("this is no trace")
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                          silence_logs=logging.ERROR) as cluster:
            nd = ["--per-op", "--per-collective", "--job", "r1"]
            at = ["--scheduler", cluster.scheduler_address]
            same("--scheduler, ndjson", d, at + ["--format", "ndjson"] + nd,
                 ["--format", "ndjson"] + nd)
            s = os.path.join(tmp, "s")
            check(run([BIN, "summarize", "-o", s, d]).returncode == 0, "summarize")
            same("--scheduler, a folder of summaries", s, at + ["--format", "json"],
                 ["--format", "json"])
            p = run([sys.executable, SCRIPT, "job", bad, "--gprof-train", BIN] + at)
            check(p.returncode == 2 and "rank0.pt.trace.json" in p.stderr,
                  "a failing trace: exit %d, %s" % (p.returncode, p.stderr[-500:]))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
