"""gprof-train job on jobs written by bench/gen_job.py with known stragglers: GT16 fires on the
injected rank and names its cause (loader, host, kernels) for several ranks counts, straggler
ranks and causes, and stays quiet on a healthy job; every NCCL/RCCL name variant is matched
across ranks; clock skews are recovered; NDJSON lines (one a rank, one a rank x op) and the JSON
document parse with python's json. usage: test_job.py GPROF_TRAIN"""
import json
import os
import random
import sys
import tempfile

from job_util import ROOT, check, finish, gen, run_job

BIN = sys.argv[1]


def job(*args):
    return run_job(BIN, *args)[0]


def finding(doc):
    return doc["diagnose"]["traces"][0]["findings"][0]


def test_stragglers(tmp):
    rnd = random.Random(15)
    knob = {"loader": "DataLoader", "host": "host", "kernels": "kernels"}
    for i, cause in enumerate(["loader", "host", "kernels", "loader", "kernels"]):
        n = rnd.randint(2, 9)
        r = rnd.randrange(n)
        lag = rnd.choice([1.0, 2.5, 6.0])
        d = os.path.join(tmp, "s%d" % i)
        extra = ["--gzip"] if i % 2 else ["--kernels", 4]
        gen(d, "--ranks", n, "--steps", rnd.randint(3, 7), "--straggler", r, "--cause", cause,
            "--lag-ms", lag, *extra)
        doc = json.loads(job(d, "--format", "json"))
        f = finding(doc)
        tag = "%d ranks, rank %d, %s, %g ms" % (n, r, cause, lag)
        check(f["id"] == "GT16" and f["fired"], "GT16 fires: " + tag)
        check(f["evidence"]["rows"] and f["evidence"]["rows"][0][0] == r, "evidence names rank: " + tag)
        check(knob[cause] in (f["knob"] or ""), "knob names the %s: %s (%s)" % (cause, tag, f["knob"]))
        late = [x["rank"] for x in doc["ranks"] if x["late_at"] > 0]
        check(late == [r], "only rank %d late: %s (%s)" % (r, tag, late))
        check(all(c["last_rank"] == r for c in doc["collectives"]), "last at every collective: " + tag)


def test_healthy(tmp):
    for n in (2, 5):
        d = os.path.join(tmp, "h%d" % n)
        gen(d, "--ranks", n, "--steps", 4)
        f = finding(json.loads(job(d, "--format", "json")))
        check(not f["fired"] and f["severity"] == "ok", "GT16 quiet on a healthy %d-rank job" % n)


def test_names(tmp):
    for v in ["ncclKernel", "ncclDevKernel", "old", "rccl", "msccl", "mixed"]:
        d = os.path.join(tmp, "n_" + v)
        gen(d, "--ranks", 3, "--steps", 3, "--names", v, "--straggler", 1)
        doc = json.loads(job(d, "--format", "json"))
        check(len(doc["collectives"]) == 6, "%s: 6 collectives matched, got %d" % (v, len(doc["collectives"])))
        check(all(x["comm_us"] > 0 for x in doc["ranks"]), "%s: communication measured" % v)
        check(finding(doc)["fired"], "%s: GT16 fires" % v)


def test_skew(tmp):
    d = os.path.join(tmp, "skew")
    gen(d, "--ranks", 4, "--steps", 4, "--skew", "1:12.5", "--skew", "3:-4", "--no-dist")
    doc = json.loads(job(d, "--format", "json"))
    off = {x["rank"]: x["clock_offset_us"] for x in doc["ranks"]}
    check(doc["clocks_aligned"], "clocks aligned")
    check(abs(off[1] - 12500) < 1 and abs(off[3] + 4000) < 1 and off[2] == 0, "offsets %s" % off)
    check(not finding(doc)["fired"], "no straggler once clocks are aligned")
    check(all(x["rank_from"] == "file name" for x in doc["ranks"]), "ranks from the file names")


def test_ndjson(tmp):
    d = os.path.join(tmp, "nd")
    gen(d, "--ranks", 6, "--steps", 3, "--straggler", 4)
    out = job(d, "--format", "ndjson", "--per-op", "--job", "j1")
    rows = [json.loads(line) for line in out.splitlines()]
    ranks = [x for x in rows if x["kind"] == "rank"]
    ops = [x for x in rows if x["kind"] == "rank_op"]
    check(len(ranks) == 6 and len(ops) == 6, "6 rank lines and 6 rank x op lines")
    check(all(x["job"] == "j1" for x in rows), "job name on every line")
    slow = max(ranks, key=lambda x: x["held_us"])
    check(slow["rank"] == 4, "slowest rank by held_us is 4")
    check(all(x["op"] == "AllReduce" and x["calls"] == 6 for x in ops), "ops: AllReduce x6")
    plain = job(d, "--format", "ndjson")
    check(len(plain.splitlines()) == 6, "without --per-op, a line per rank")
    readme_query(tmp, out)


def readme_query(tmp, ndjson):
    """The README's DuckDB query finds the straggler (only where duckdb is installed)."""
    try:
        import duckdb
    except ImportError:
        print("duckdb absent: README query not run")
        return
    import re
    readme = open(os.path.join(ROOT, "README.md")).read()
    m = re.search(r"```sql\n(.*?)```", readme[readme.index("## Multi-rank jobs"):], re.S)
    os.makedirs(os.path.join(tmp, "q", "jobs"))
    with open(os.path.join(tmp, "q", "jobs", "a.ndjson"), "w") as f:
        f.write(ndjson)
    cwd = os.getcwd()
    os.chdir(os.path.join(tmp, "q"))
    try:
        rows = duckdb.sql(m.group(1).replace("run42", "j1")).fetchall()
    finally:
        os.chdir(cwd)
    check(rows and rows[0][1] == 4, "README query: slowest rank 4, got %s" % rows[:1])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for t in (test_stragglers, test_healthy, test_names, test_skew, test_ndjson):
            t(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
