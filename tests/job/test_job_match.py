"""gprof-train job matches a collective across ranks only with itself (issue 24): jobs written by
bench/gen_job.py where pairing by order in the step goes wrong. Each rank runs its collectives
in another order on two streams (an all_to_all in a group of one parity, as expert-parallel
groups of a larger job); one rank's trace lost an NCCL kernel; clocks are skewed; and a real
straggler of known delay beside the side groups. GT16 must stay quiet on the first three and
name the straggler, at about its delay, on the last; unmatched calls are counted, the clock
line states how far matched collectives end apart, and a world_size above the ranks given is
warned about. usage: test_job_match.py GPROF_TRAIN"""
import json
import os
import sys
import tempfile

from job_util import check, finish, gen, run_job

BIN = sys.argv[1]


def job(*args):
    return run_job(BIN, *args)


def doc_of(d):
    out, _ = job(d, "--format", "json")
    try:
        return json.loads(out)
    except ValueError:
        check(False, "job %s: no JSON" % d)
        return {"diagnose": {"traces": [{"findings": [{}]}]}, "ranks": []}


def finding(doc):
    return doc["diagnose"]["traces"][0]["findings"][0]


def unmatched(doc):
    u = doc.get("unmatched", {})
    return u.get("alone", -1), u.get("ends_disagree", -1)


def test_order(tmp):
    """Ranks 0 and 1 of a 128-rank job: two all-reduces a step in the job's group on stream 20,
    and an all_to_all on stream 21 in a group of each rank's parity, so rank 0 runs [all_to_all,
    all-reduce, all-reduce] and rank 1 [all-reduce, all_to_all, all-reduce]."""
    for extra in (["--comm-args"], []):
        d = os.path.join(tmp, "order" + "".join(extra))
        gen(d, "--ranks", 2, "--steps", 6, "--side-groups", "--world", 128, *extra)
        doc = doc_of(d)
        f = finding(doc)
        tag = "order %s" % (extra or "(streams only)")
        check(not f.get("fired") and f.get("severity") == "ok",
              "%s: GT16 quiet, got %s: %s" % (tag, f.get("severity"), f.get("summary")))
        check(len(doc.get("collectives", [])) == 12, "%s: the 12 all-reduces matched, got %d" %
              (tag, len(doc.get("collectives", []))))
        check(all(c["op"] == "AllReduce" for c in doc.get("collectives", [])), tag + ": only all-reduces")
        alone, disagree = unmatched(doc)
        check(alone + disagree == 12, "%s: the 12 all_to_alls unmatched, got %s" % (tag, (alone, disagree)))
        check(doc.get("world_size") == 128, "%s: world_size 128 in JSON" % tag)
    text, err = job(d)
    check("2 traces of a job of 128 ranks" in err, "warning about world_size: %r" % err)
    check("2 of the 128 in distributedInfo.world_size" in text, "world_size line in the text")
    check("unmatched: 12 of 36 calls" in text, "unmatched line in the text")


def test_dropped_kernel(tmp):
    """Four gradient buckets a step; rank 1's trace lost its first all-reduce of step 3, so
    counting calls in the step pairs its next three with other buckets."""
    d = os.path.join(tmp, "drop")
    gen(d, "--ranks", 2, "--steps", 6, "--buckets", 4, "--drop", "1:3:0")
    doc = doc_of(d)
    f = finding(doc)
    check(not f.get("fired"), "dropped kernel: GT16 quiet, got %s: %s" % (f.get("severity"), f.get("summary")))
    alone, disagree = unmatched(doc)
    check(alone == 1 and disagree == 6, "dropped kernel: 1 alone, 3 pairs disagree, got %s" % ((alone, disagree),))
    check(doc.get("end_spread_us", 1e9) < 50, "matched ends agree: %s" % doc.get("end_spread_us"))
    text, _ = job(d)
    check("matched collectives end within 0.0 us" in text, "clock line states the spread:\n" + text[:300])
    d = os.path.join(tmp, "drop_seq")
    gen(d, "--ranks", 2, "--steps", 6, "--buckets", 4, "--drop", "1:3:0", "--comm-args", "--seq")
    doc = doc_of(d)
    check(not finding(doc).get("fired"), "dropped kernel (Seq): GT16 quiet")
    check(unmatched(doc) == (1, 0) and len(doc["collectives"]) == 23,
          "with Seq only the lost one is unmatched: %s, %d" % (unmatched(doc), len(doc["collectives"])))


def test_skew(tmp):
    for extra in (["--comm-args"], []):
        d = os.path.join(tmp, "skew" + "".join(extra))
        gen(d, "--ranks", 3, "--steps", 6, "--side-groups", "--skew", "1:7", "--skew", "2:-4", *extra)
        doc = doc_of(d)
        f = finding(doc)
        tag = "skew %s" % (extra or "(streams only)")
        check(not f.get("fired"), "%s: GT16 quiet, got %s: %s" % (tag, f.get("severity"), f.get("summary")))
        off = {x["rank"]: x["clock_offset_us"] for x in doc["ranks"]}
        check(doc.get("clocks_aligned") and abs(off.get(1, 0) - 7000) < 1 and abs(off.get(2, 0) + 4000) < 1,
              "%s: offsets recovered: %s" % (tag, off))


def test_straggler(tmp):
    """Rank 1's host is 2 ms slower a step; the side groups run beside it."""
    d = os.path.join(tmp, "strag")
    gen(d, "--ranks", 4, "--steps", 6, "--kernels", 4, "--side-groups", "--comm-args",
        "--straggler", 1, "--cause", "host", "--lag-ms", 2)
    doc = doc_of(d)
    f = finding(doc)
    check(f.get("fired") and f["evidence"]["rows"][0][0] == 1, "straggler: GT16 names rank 1: %s" % f.get("summary"))
    gain = (f.get("estimated_gain") or {}).get("per_step_us", 0)
    check(abs(gain - 2000) <= 0.25 * 2000, "straggler: cost %g us a step, injected 2000" % gain)
    check("host" in (f.get("knob") or ""), "straggler: the knob names its host: %s" % f.get("knob"))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for t in (test_order, test_dropped_kernel, test_skew, test_straggler):
            t(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
