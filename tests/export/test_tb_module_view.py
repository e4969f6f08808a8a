"""A real torch.profiler trace made with with_stack=True (tests/data/torch/with_stack.json.gz):
torch-tb-profiler 0.4.3's own loader shows the same Module view (nn.Module tree, forward and
backward, with its counts and times) for `gprof-train export --tensorboard` of it as for the
original file, and the same operator tree (modules, operators, their nesting); the export keeps
the Python tracer ids and PyTorch's fwdbwd flows the plugin reads. Times agree within 0.01 us:
the original's absolute timestamps (~4.7e12 us) lose ~0.5 ns to float parsing, ours are rebased.
usage: test_tb_module_view.py GPROF_TRAIN TRACE WORK_DIR"""
import sys

from tb_pair import original_and_export


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
    want, got = original_and_export(gprof, trace, work)
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
