"""The README's DuckDB queries over `job --format ndjson --per-op --per-collective` tables
(issue 29): per-rank exposed communication, and the slowest collectives, on a generated job with
a known straggler; each query's answer is checked against the NDJSON read with python's json.
Runs in the job venv (tests/export/run_py.sh --job: duckdb from PyPI).
usage: test_job_sql.py GPROF_TRAIN"""
import json
import os
import re
import sys
import tempfile

import duckdb

from job_util import ROOT, check, finish, gen, run_job

BIN = sys.argv[1]


def readme_queries():
    """The ```sql blocks of the README's "Tables for SQL engines" part, by their first comment."""
    readme = open(os.path.join(ROOT, "README.md")).read()
    part = readme[readme.index("### Tables for SQL engines"):]
    part = part[: part.index("\n## ")]
    blocks = re.findall(r"```sql\n(.*?)```", part, re.S)
    return {b.splitlines()[0].strip("- ").strip(): b for b in blocks}


def main():
    q = readme_queries()
    check(len(q) >= 2, "README: two SQL queries, found %s" % list(q))
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "j")
        gen(d, "--ranks", 6, "--steps", 5, "--straggler", 4, "--buckets", 3)
        out, _ = run_job(BIN, d, "--format", "ndjson", "--per-op", "--per-collective",
                         "--job", "run42")
        os.makedirs(os.path.join(tmp, "jobs"))
        with open(os.path.join(tmp, "jobs", "run42.ndjson"), "w") as f:
            f.write(out)
        rows = [json.loads(line) for line in out.splitlines()]
        ranks = [r for r in rows if r["kind"] == "rank"]
        colls = [r for r in rows if r["kind"] == "collective"]
        check(len(ranks) == 6 and len(colls) == 5 * 3, "6 rank and 15 collective lines")
        os.chdir(tmp)
        exposed = duckdb.sql(q["per-rank exposed communication"]).fetchall()
        want = sorted(ranks, key=lambda r: -r["exposed_comm_us"])
        check([r[1] for r in exposed] == [r["rank"] for r in want],
              "exposed communication by rank: %s" % exposed)
        check(abs(exposed[0][3] - want[0]["exposed_comm_us"] / 1e3) < 1e-6, "exposed ms")
        slow = duckdb.sql(q["the slowest collectives"]).fetchall()
        top = max(colls, key=lambda c: c["waited_us"])
        check(slow and slow[0][4] == 4 and abs(slow[0][6] - top["waited_us"] / 1e3) < 1e-6,
              "slowest collective: last rank 4, waited %s ms: %s" % (top["waited_us"] / 1e3, slow[:2]))
        check(len(slow) == 10, "ten collectives listed")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
