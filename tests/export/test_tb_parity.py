"""torch-tb-profiler 0.4.3's own loader sees `gprof-train export --tensorboard` of a real
torch.profiler trace as it sees the original file (issue 27 §4): its Operator view grouped by
name + input shape has the same groups with the same call counts. A tensor list input (aten::cat's
[[[2, 1], [2, 1]], []] in a DataLoader's collate) stays the list it was in the export, not the
[] of key_averages' shape text, which merged groups.
usage: test_tb_parity.py GPROF_TRAIN WORK_DIR TRACE..."""
import os
import sys
from collections import Counter

from tb_pair import original_and_export


def by_shape(p):
    groups = Counter()
    for r in p.operation_table_by_name_input["data"]:
        groups[(r["name"], r["input_shape"])] += r["calls"]
    return groups


def check(gprof, trace, work):
    want, got = original_and_export(gprof, trace, work)
    errors = []
    w, g = by_shape(want), by_shape(got)
    if g != w:
        errors.append(f"operators by shape: {len(g)} groups, the original {len(w)}; only ours "
                      f"{sorted(set(g) - set(w))[:4]}, only the original's "
                      f"{sorted(set(w) - set(g))[:4]}")
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
