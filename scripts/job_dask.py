#!/usr/bin/env python3
"""job_dask.py: `gprof-train job` with the map step on a Dask cluster (issue 29).

usage: python3 scripts/job_dask.py job PATHS... [--scheduler ADDRESS] [--gprof-train BIN]
                                   [--format text|json|ndjson] [--workers N] [JOB OPTIONS...]

Each trace becomes one task that runs `gprof-train summarize` on a worker (where the traces are:
the workers read them, the client does not) and returns the summary's bytes; the client writes
the summaries to a temporary folder and runs `gprof-train job` on them, in the order of the
traces, so the output equals `gprof-train job PATHS...`. PATHS are trace files or folders (a
folder's *.pt.trace.json[.gz] and *.gprof-summary.json files, else its *.json[.gz] files, in
name order, as `job` reads a folder; a worker must see the same paths; a summary is taken as
it is). Without --scheduler a LocalCluster runs the tasks.
--per-op, --per-collective, --job NAME and --set GT16.PARAM=VALUE go to `job`.
The same pattern without Dask: `gprof-train summarize TRACE -o DIR` per rank (a Slurm array
task each), then `gprof-train job DIR`.
"""
import argparse
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile


def expand(paths):
    """Trace paths as `gprof-train job` expands them."""
    out = []
    for p in paths:
        if not os.path.isdir(p):
            out.append(p)
            continue
        names = sorted(os.listdir(p))
        for suffixes in ((".pt.trace.json", ".pt.trace.json.gz", ".gprof-summary.json"),
                         (".json", ".json.gz")):
            found = [n for n in names if not n.startswith(".") and n.endswith(suffixes)]
            if found:
                out += [os.path.join(p.rstrip("/") or "/", n) for n in found]
                break
        else:
            sys.exit("job_dask: no trace files (*.json, *.json.gz) in '%s'" % p)
    return out


def is_summary(path):
    """Does the file begin as a summary ({"schema": "gprof-train.summary/...)?"""
    try:
        with open(path, "rb") as f:
            head = f.read(128)
    except OSError:
        return False
    return re.match(rb'\s*\{\s*"schema"\s*:\s*"gprof-train\.summary/', head) is not None


def summarize_one(path, binary):
    """On a worker: `binary summarize -o TMP path` (a summary as it is); returns (exit code,
    summary bytes, stderr)."""
    if is_summary(path):
        with open(path, "rb") as f:
            return 0, f.read(), ""
    with tempfile.TemporaryDirectory(prefix="gprof-summary-") as out:
        p = subprocess.run([binary, "summarize", "-j", "1", "-o", out, path],
                           capture_output=True, text=True)
        written = p.stdout.split()
        if p.returncode != 0 or len(written) != 1:
            return p.returncode or 2, b"", p.stderr
        with open(written[0], "rb") as f:
            return 0, f.read(), ""


def client_for(scheduler, workers):
    from dask.distributed import Client, LocalCluster
    if scheduler:
        return Client(scheduler), None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None,
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def run(a, job_args):
    binary = shutil.which(a.gprof_train) or a.gprof_train
    binary = os.path.abspath(binary) if os.path.exists(binary) else binary
    traces = expand(a.paths)
    client, cluster = client_for(a.scheduler, a.workers)
    try:
        futures = client.map(summarize_one, traces, binary=binary, pure=False)
        results = client.gather(futures)
    finally:
        client.close()
        if cluster:
            cluster.close()
    with tempfile.TemporaryDirectory(prefix="gprof-job-") as tmp:
        sums = []
        for i, (trace, (rc, data, err)) in enumerate(zip(traces, results)):
            if rc != 0:
                sys.stderr.write(err)
                print("job_dask: summarize '%s' failed (exit %d)" % (trace, rc), file=sys.stderr)
                return rc
            sums.append(os.path.join(tmp, "%06d.gprof-summary.json" % i))
            with open(sums[-1], "wb") as f:
                f.write(data)
        return subprocess.run([binary, "job", "--format", a.format] + job_args + sums).returncode


def main(argv):
    ap = argparse.ArgumentParser(prog="job_dask.py", description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["job"])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--scheduler", help="a Dask scheduler's address (default: a LocalCluster)")
    ap.add_argument("--gprof-train", default="gprof-train", help="the binary, on every worker")
    ap.add_argument("--format", default="text", choices=["text", "json", "ndjson"])
    ap.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1),
                    help="LocalCluster workers (default: up to 4)")
    ap.add_argument("--per-op", action="store_true", help="job: ndjson line per rank x op")
    ap.add_argument("--per-collective", action="store_true", help="job: ndjson line per collective")
    ap.add_argument("--job", help="job: the job's name in ndjson lines")
    ap.add_argument("--set", action="append", default=[], help="job: GT16.PARAM=VALUE")
    a = ap.parse_args(argv)
    job_args = (["--per-op"] if a.per_op else []) + (["--per-collective"] if a.per_collective else [])
    job_args += (["--job", a.job] if a.job is not None else []) + ["--set=" + x for x in a.set]
    return run(a, job_args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
