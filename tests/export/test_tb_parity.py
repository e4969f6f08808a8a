"""torch-tb-profiler 0.4.3's own loader sees `gprof-train export --tensorboard` of a real
torch.profiler trace as it sees the original file (issue 27 §4): its Operator view grouped by
name + input shape has the same groups with the same call counts. A tensor list input (aten::cat's
[[[2, 1], [2, 1]], []] in a DataLoader's collate) stays the list it was in the export, not the
[] of key_averages' shape text, which merged groups.
usage: test_tb_parity.py GPROF_TRAIN WORK_DIR TRACE..."""
import os
import shutil
import subprocess
import sys
from collections import Counter

from torch_tb_profiler import io
from torch_tb_profiler.profiler.loader import RunLoader


def load(run_dir, work, name):
    run = RunLoader(name, run_dir, io.Cache(os.path.join(work, "cache-" + name))).load()
    (worker,) = run.workers
    return run.get_profile(worker, run.get_spans(worker)[0])


def by_shape(p):
    groups = Counter()
    for r in p.operation_table_by_name_input["data"]:
        groups[(r["name"], r["input_shape"])] += r["calls"]
    return groups


def check(gprof, trace, work):
    worker = os.path.basename(trace).split(".")[0]
    orig_dir = os.path.join(work, "orig")
    os.makedirs(orig_dir)
    shutil.copy(trace, os.path.join(orig_dir, worker + ".1.pt.trace.json.gz"))
    logdir = os.path.join(work, "tb")
    subprocess.run([gprof, "export", trace, "--tensorboard", logdir, "--run", "exported"],
                   check=True, capture_output=True)
    want = load(orig_dir, work, "orig")
    got = load(os.path.join(logdir, "exported"), work, "exported")
    errors = []
    w, g = by_shape(want), by_shape(got)
    if g != w:
        errors.append(f"operators by shape: {len(g)} groups, the original {len(w)}; only ours "
                      f"{sorted(set(g) - set(w))[:4]}, only the original's "
                      f"{sorted(set(w) - set(g))[:4]}")
    return len(w), errors


def main():
    gprof, work = sys.argv[1:3]
    failed = 0
    for trace in sys.argv[3:]:
        sub = os.path.join(work, os.path.basename(trace))
        shutil.rmtree(sub, ignore_errors=True)
        groups, errors = check(gprof, trace, sub)
        print(f"{os.path.basename(trace)}: {groups} operator groups by shape, "
              f"{'ok' if not errors else 'FAIL'}")
        for e in errors:
            print("   ", e)
        failed += bool(errors)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
