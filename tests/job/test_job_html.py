"""`gprof-train job --html OUT.html` (issue 27 §3, the Distributed view): on a generated job with a
straggler and a skewed clock, the page's numbers are `job --format json`'s: each rank's row (step
mean and p95, compute, comm, exposed comm, GPU idle, DataLoader, late at, held, waited, clock
offset; time cells compared by their exact ns in data-v), who waited for whom (each waiting rank's
wait per step for the straggler is its waited_us, all its waits being at late collectives), the
collectives that waited longest (the JSON's, by waited), GT16's summary with a pointer to the
waits in the Perfetto timeline, and the command that writes that timeline for the job's folder.
usage: test_job_html.py GPROF_TRAIN WORK_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from job_util import check, finish, gen, run_job  # noqa: E402


class Page(HTMLParser):
    """The tables after each <h2>: rows of cells, a cell as (data-v or None, text)."""

    def __init__(self):
        super().__init__()
        self.h2, self.in_h2, self.tables, self.cell = "", False, {}, None

    def handle_starttag(self, tag, attrs):
        if tag == "h2":
            self.h2, self.in_h2 = "", True
        elif tag == "tr":
            self.tables.setdefault(self.h2, []).append([])
        elif tag in ("td", "th"):
            self.cell = [dict(attrs).get("data-v"), ""]
            self.tables[self.h2][-1].append(self.cell)

    def handle_endtag(self, tag):
        if tag == "h2":
            self.in_h2 = False
        elif tag in ("td", "th"):
            self.cell = None

    def handle_data(self, d):
        if self.in_h2:
            self.h2 += d
        if self.cell is not None:
            self.cell[1] += d


def ns(cell):
    return int(cell[0])


def same_us(cell, us, what):
    check(abs(ns(cell) - us * 1000) <= 1, "%s: %s ns in the page, %s us in the JSON"
          % (what, cell[0], us))


def ranks(page, doc):
    rows = page.tables["Ranks"][1:]
    check(len(rows) == len(doc["ranks"]), "a row per rank: %d" % len(rows))
    fields = ["step_mean_us", "step_p95_us", "compute_us", "comm_us", "exposed_comm_us",
              "idle_us", "dataloader_us"]
    for cells, r in zip(rows, doc["ranks"]):
        check(int(cells[0][1]) == r["rank"], "rank %s, want %d" % (cells[0][1], r["rank"]))
        for k, f in enumerate(fields):
            same_us(cells[1 + k], r[f], "rank %d %s" % (r["rank"], f))
        check(int(cells[8][1]) == r["late_at"], "rank %d late at" % r["rank"])
        same_us(cells[9], r["held_us"], "rank %d held" % r["rank"])
        same_us(cells[10], r["waited_us"], "rank %d waited" % r["rank"])
        same_us(cells[11], r["clock_offset_us"], "rank %d clock offset" % r["rank"])
        check(cells[13][1] == os.path.basename(r["trace"]), "rank %d trace" % r["rank"])


def pairs(page, doc, straggler):
    rows = page.tables["Who waited for whom"][1:]
    want = {r["rank"]: r["waited_us"] for r in doc["ranks"] if r["rank"] != straggler}
    got = {int(c[0][1]): c for c in rows}
    check(sorted(got) == sorted(want), "each other rank waited for the straggler: %s" % sorted(got))
    for rank, c in got.items():
        check(int(c[1][1]) == straggler, "rank %d waited for rank %s" % (rank, c[1][1]))
        same_us(c[4], want.get(rank, -1), "rank %d's wait per step" % rank)


def collectives(page, doc):
    rows = page.tables["Collectives that waited longest"][1:]
    want = sorted(doc["collectives"], key=lambda c: (-c["waited_us"], c["step"], c["index"]))
    check(len(rows) == min(20, len(want)), "collective rows: %d" % len(rows))
    for cells, c in zip(rows, want):
        check((int(cells[0][1]), int(cells[1][1]), cells[2][1], int(cells[4][1])) ==
              (c["step"], c["index"], c["op"], c["last_rank"]), "collective %s" % c)
        same_us(cells[5], c["lag_us"], "lag of %s" % c)
        same_us(cells[6], c["waited_us"], "waited of %s" % c)


def main():
    binary, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    d, html = os.path.join(work, "job"), os.path.join(work, "job.html")
    gen(d, "--ranks", 4, "--steps", 5, "--straggler", 2, "--lag-ms", 2, "--skew", "3:4")
    doc = json.loads(run_job(binary, d, "--format", "json", "--html", html)[0])
    text = open(html).read()
    page = Page()
    page.feed(text)
    ranks(page, doc)
    pairs(page, doc, 2)
    collectives(page, doc)
    gt16 = doc["diagnose"]["traces"][0]["findings"][0]["summary"]
    check(gt16 in text.replace("&#39;", "'"), "GT16's summary on the page: %s" % gt16)
    check(re.search(r"<b>rank 2</b><span>the others wait most for", text) is not None,
          "the card names the straggler")
    check("<code>gprof-train job %s --perfetto job.pftrace</code>" % d in text,
          "the command for the job's timeline names its folder")
    check("track <i>collective waits</i>" in text, "GT16 points at the waits' tracks")
    p = subprocess.run([binary, "job", d, "--html", "-"], capture_output=True, text=True)
    check(p.returncode == 2 and "stdout" in p.stderr, "--html -: refused (stdout is the report)")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
