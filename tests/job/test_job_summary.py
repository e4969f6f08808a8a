"""`gprof-train summarize` + `job` on the summaries gives what `job` on the traces gives (issue 29),
on jobs written by bench/gen_job.py: a straggler (loader, host, kernels), no straggler, collectives
in other orders on two streams (--side-groups), a collective lost on one rank (--drop), clock skew
with ranks from the file names, PyTorch's Seq and collective args, and a trace cut short (its
warning travels in the summary). Each case compares text, JSON and NDJSON (--per-op
--per-collective) output on the traces, on the summaries and on a mix of both, byte for byte,
and stderr with the summary's path put back to its trace's. Also: the summary's schema tag and
size, a folder of summaries, a broken summary named with its position (exit 2), and 150
mutated summaries (exit 0 or 2, nothing a sanitizer reports).
usage: test_job_summary.py GPROF_TRAIN"""
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

from job_util import check, finish, gen

BIN = sys.argv[1]
FORMATS = [["--format", "text"], ["--format", "json"],
           ["--format", "ndjson", "--per-op", "--per-collective", "--job", "j"]]
CASES = {
    "straggler_loader": ["--ranks", 4, "--steps", 5, "--straggler", 2, "--cause", "loader"],
    "straggler_host": ["--ranks", 3, "--steps", 4, "--straggler", 0, "--cause", "host", "--gzip"],
    "straggler_kernels": ["--ranks", 5, "--steps", 4, "--straggler", 4, "--cause", "kernels",
                          "--buckets", 4, "--names", "mixed"],
    "no_straggler": ["--ranks", 4, "--steps", 5],
    "reordered": ["--ranks", 4, "--steps", 4, "--side-groups", "--comm-args", "--straggler", 1],
    "missing": ["--ranks", 4, "--steps", 5, "--drop", "1:3:0", "--straggler", 3],
    "skew": ["--ranks", 4, "--steps", 4, "--skew", "1:12.5", "--skew", "3:-4", "--no-dist"],
    "seq": ["--ranks", 3, "--steps", 4, "--comm-args", "--seq", "--straggler", 1,
            "--world", 8],
}


def run(*args):
    p = subprocess.run([BIN] + [str(a) for a in args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def traces_of(d):
    return sorted(glob.glob(os.path.join(d, "*.json")) + glob.glob(os.path.join(d, "*.json.gz")))


def summarize(traces, out):
    rc, so, se = run("summarize", "-o", out, *traces)
    check(rc == 0, "summarize exited %d: %s" % (rc, se))
    written = so.split()
    check(len(written) == len(traces), "one summary a trace: %s" % written)
    return written


def same_job(tag, traces, inputs, to_trace):
    """job on `inputs` equals job on `traces`; stderr too, the summaries' paths put back."""
    for fmt in FORMATS:
        want = run("job", *(traces + fmt))
        got = run("job", *(inputs + fmt))
        check(want[0] == 0 and got[0] == want[0], "%s %s: exit %d vs %d (%s)" %
              (tag, fmt[1], got[0], want[0], got[2] or want[2]))
        check(got[1] == want[1], "%s %s: same output\n--- traces\n%s\n--- given\n%s" %
              (tag, fmt[1], want[1][:3000], got[1][:3000]))
        err = got[2]
        for s, t in to_trace.items():
            err = err.replace(s, t)
        check(err == want[2], "%s %s: same warnings\n%s\nvs\n%s" % (tag, fmt[1], want[2], err))


def cut_tail(path):
    """Leave out the last 3% of an uncompressed trace: a run that died while writing."""
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(data[: len(data) * 97 // 100])


def test_case(tmp, name, args):
    d = os.path.join(tmp, name)
    gen(d, *args)
    traces = traces_of(d)
    if name == "no_straggler":
        cut_tail(traces[1])
    sums = summarize(traces, os.path.join(tmp, name + "_s"))
    to_trace = dict(zip(sums, traces))
    same_job(name + " summaries", traces, sums, to_trace)
    mixed = [s if i % 2 else t for i, (t, s) in enumerate(zip(traces, sums))]
    same_job(name + " mixed", traces, mixed, to_trace)
    return traces, sums


def test_summary_file(traces, sums, d):
    doc = json.load(open(sums[0]))
    check(doc["schema"] == "gprof-train.summary/1", "schema tag: %s" % doc["schema"])
    check(doc["trace"] == traces[0], "the summary names its trace")
    for k in ("rank", "rank_from", "world_size", "host", "base_time_ns", "lost", "steps",
              "collectives", "compute_ns"):
        check(k in doc, "summary field %s" % k)
    c = doc["collectives"][0]
    for k in ("step", "op", "stream", "seq", "size", "ts_ns", "end_ns"):
        check(k in c, "collective field %s" % k)
    size, trace_size = os.path.getsize(sums[0]), os.path.getsize(traces[0])
    check(size < trace_size / 4, "summary %d bytes vs trace %d" % (size, trace_size))
    rc, out, _ = run("job", os.path.dirname(sums[0]), "--format", "json")
    want = run("job", *(traces + ["--format", "json"]))[1]
    check(rc == 0 and out == want, "job on a folder of summaries")


def test_broken(tmp, sums):
    bad = os.path.join(tmp, "bad.gprof-summary.json")
    text = open(sums[0]).read()
    with open(bad, "w") as f:
        f.write(text.replace('"steps":[', '"steps":[{"step":"x"},', 1))
    rc, _, err = run("job", bad, *sums[1:])
    check(rc == 2 and "bad.gprof-summary.json" in err and "line 3" in err and "integer" in err,
          "broken summary: exit 2 naming file and line: %d %s" % (rc, err))
    with open(bad, "w") as f:
        f.write(text.replace("gprof-train.summary/1", "gprof-train.summary/9", 1))
    rc, _, err = run("job", bad, *sums[1:])
    check(rc == 2 and "summary/9" in err, "another schema refused: %d %s" % (rc, err))


def test_mutations(tmp, sums):
    """Summaries cut short or with a byte changed: job exits 0 or 2, never dies of a signal."""
    rnd = random.Random(29)
    text = open(sums[0]).read()
    bad = os.path.join(tmp, "m.gprof-summary.json")
    for i in range(150):
        k = rnd.randrange(len(text))
        t = [text[:k], text[:k] + text[k + 1:],
             text[:k] + rnd.choice('{}[],:"-0x9 n') + text[k + 1:]][i % 3]
        if not t.startswith('{"schema":"gprof-train.summary/'):
            continue
        with open(bad, "w") as f:
            f.write(t)
        rc, _, err = run("job", bad, sums[1])
        check(rc in (0, 2) and "Sanitizer" not in err and "runtime error" not in err,
              "mutation %d at %d: exit %d %s" % (i, k, rc, err[-300:]))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        kept = None
        for name, args in CASES.items():
            r = test_case(tmp, name, args)
            kept = kept or r
        test_summary_file(kept[0], kept[1], tmp)
        test_broken(tmp, kept[1])
        test_mutations(tmp, kept[1])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
