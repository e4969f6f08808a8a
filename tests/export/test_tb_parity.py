"""torch-tb-profiler 0.4.3's own loader sees `gprof-train export --tensorboard` of a real
torch.profiler trace as it sees the original file (issue 27 §4): its Operator view grouped by
name + input shape has the same groups with the same call counts. A tensor list input (aten::cat's
[[[2, 1], [2, 1]], []] in a DataLoader's collate) stays the list it was in the export, not the
[] of key_averages' shape text, which merged groups. And no op or annotation leaves its thread
in the export: with_stack's Python frames that cut across ProfilerStep#N, Optimizer.* and
enumerate(DataLoader) go to the "(overlap 1)" thread instead of them.
usage: test_tb_parity.py GPROF_TRAIN WORK_DIR TRACE..."""
import gzip
import json
import os
import sys
from collections import Counter

from tb_pair import original_and_export


def by_shape(p):
    groups = Counter()
    for r in p.operation_table_by_name_input["data"]:
        groups[(r["name"], r["input_shape"])] += r["calls"]
    return groups


def moved_ops(logdir):
    """Ops and annotations of the export on an overflow "(overlap N)" thread."""
    (path,) = [os.path.join(d, f) for d, _, fs in os.walk(logdir) for f in fs
               if f.endswith(".pt.trace.json.gz")]
    with gzip.open(path, "rt") as f:
        evs = json.load(f)["traceEvents"]
    lanes = {(e["pid"], e["tid"]) for e in evs if e.get("ph") == "M" and
             e.get("name") == "thread_name" and "(overlap" in e["args"]["name"]}
    return sorted({e["name"] for e in evs if e.get("ph") == "X" and e.get("cat") != "python_function"
                   and (e["pid"], e["tid"]) in lanes})


def check(gprof, trace, work):
    want, got = original_and_export(gprof, trace, work)
    errors = []
    w, g = by_shape(want), by_shape(got)
    if g != w:
        errors.append(f"operators by shape: {len(g)} groups, the original {len(w)}; only ours "
                      f"{sorted(set(g) - set(w))[:4]}, only the original's "
                      f"{sorted(set(w) - set(g))[:4]}")
    moved = moved_ops(os.path.join(work, "tb"))
    if moved:
        errors.append(f"ops moved to an overflow thread: {moved[:4]}")
    return len(w), errors


def main():
    gprof, work = sys.argv[1:3]
    results = [(t, *check(gprof, t, os.path.join(work, os.path.basename(t))))
               for t in sys.argv[3:]]
    for trace, groups, errors in results:
        print(f"{os.path.basename(trace)}: {groups} operator groups by shape, "
              f"{'ok' if not errors else 'FAIL: ' + '; '.join(errors)}")
    sys.exit(1 if any(errors for _, _, errors in results) else 0)


if __name__ == "__main__":
    main()
