"""A real torch.profiler trace made with with_stack=True (tests/data/torch/with_stack.json.gz):
torch-tb-profiler 0.4.3's own loader shows the same Module view (nn.Module tree, forward and
backward, with its counts and times) for `gprof-train export --tensorboard` of it as for the
original file, and the same operator tree (modules, operators, their nesting); the export keeps
the Python tracer ids and PyTorch's fwdbwd flows the plugin reads. Times agree within 0.01 us:
the original's absolute timestamps (~4.7e12 us) lose ~0.5 ns to float parsing, ours are rebased.
usage: test_tb_module_view.py GPROF_TRAIN TRACE WORK_DIR"""
import os
import shutil
import subprocess
import sys

from torch_tb_profiler import io
from torch_tb_profiler.profiler.loader import RunLoader

WORKER = "with_stack"


def load(run_dir, work, name):
    run = RunLoader(name, run_dir, io.Cache(os.path.join(work, "cache-" + name))).load()
    assert run.workers == [WORKER], run.workers
    return run.get_profile(WORKER, run.get_spans(WORKER)[0])


def module_names(rows, depth=0):
    for r in rows:
        yield depth, r["name"], r["occurences"]
        yield from module_names(r["children"], depth + 1)


def same(got, want):
    """Equal, numbers within 0.01 us."""
    if isinstance(want, dict):
        return got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    if isinstance(want, list):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if isinstance(want, float) or isinstance(got, float):
        return abs(got - want) <= 0.01
    return got == want


def tree_shape(n):
    return (n["name"], n["type"], tuple(tree_shape(c) for c in n["children"]))


def main():
    gprof, trace, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    orig_dir = os.path.join(work, "orig")
    os.makedirs(orig_dir)
    shutil.copy(trace, os.path.join(orig_dir, WORKER + ".1.pt.trace.json.gz"))
    logdir = os.path.join(work, "tb")
    subprocess.run([gprof, "export", trace, "--tensorboard", logdir, "--run", "exported"],
                   check=True, capture_output=True)
    want = load(orig_dir, work, "orig")
    got = load(os.path.join(logdir, "exported"), work, "exported")
    assert "Module" in [v.display_name for v in want.views], "the original has no Module view"
    assert "Module" in [v.display_name for v in got.views], [v.display_name for v in got.views]
    w, g = want.get_module_view(), got.get_module_view()
    assert list(module_names(g["data"])) == list(module_names(w["data"])), (
        list(module_names(g["data"])), list(module_names(w["data"])))
    assert same(g, w), (g, w)
    assert tree_shape(got.get_operator_tree()) == tree_shape(want.get_operator_tree())
    names = list(module_names(w["data"]))
    print(f"ok: the exported trace's Module view equals the original's: {names}")


if __name__ == "__main__":
    main()
