"""A real torch.profiler trace made with with_stack=True (tests/data/torch/with_stack.json.gz):
torch-tb-profiler 0.4.3's own loader shows the same Module view (nn.Module tree, forward and
backward, with its counts and times) for `gprof-train export --tensorboard` of it as for the
original file, and the same operator tree (modules, operators, their nesting); the export keeps
the Python tracer ids and PyTorch's fwdbwd flows the plugin reads. Times agree within 0.01 us:
the original's absolute timestamps (~4.7e12 us) lose ~0.5 ns to float parsing, ours are rebased.
usage: test_tb_module_view.py GPROF_TRAIN TRACE WORK_DIR"""
import gzip
import json
import re
import subprocess
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


def tree_shape(n, spliced=frozenset()):
    """(name, type, children), with the nodes named in `spliced` replaced by their children."""
    kids = []
    for c in n["children"]:
        kids += list(tree_shape(c, spliced)[2]) if c["name"] in spliced else [tree_shape(c, spliced)]
    return (n["name"], n["type"], tuple(kids))


def annotations(trace):
    """The record_function ranges of a trace (user_annotation, ProfilerStep#N aside): the plugin
    leaves them out of its tree; the export shows them as operators (Operator view, breakdown)."""
    with gzip.open(trace, "rt") as f:
        evs = json.load(f)["traceEvents"]
    return frozenset(e["name"] for e in evs if e.get("cat") == "user_annotation"
                     and not e["name"].startswith("ProfilerStep#"))


def main():
    gprof, trace, work = sys.argv[1:4]
    want, got = original_and_export(gprof, trace, work)
    assert "Module" in [v.display_name for v in want.views], "the original has no Module view"
    assert "Module" in [v.display_name for v in got.views], [v.display_name for v in got.views]
    w, g = want.get_module_view(), got.get_module_view()
    assert list(module_names(g["data"])) == list(module_names(w["data"])), (
        list(module_names(g["data"])), list(module_names(w["data"])))
    assert same(g, w), (g, w)
    # the operator tree is the original's, but for the record_function ranges that the export
    # shows as operators: with the Python frames that cut across them on another lane, they stay
    # on their thread (issue 27 §4) and become the parents of their ops
    spliced = annotations(trace)
    assert tree_shape(got.get_operator_tree(), spliced) == tree_shape(want.get_operator_tree())
    names = list(module_names(w["data"]))
    # the HTML report's Modules table: the same tree, names and calls (issue 27 §3)
    html = subprocess.run([gprof, "export", trace, "--html", "-"], check=True,
                          capture_output=True, text=True).stdout
    rows = re.findall(r'<td class="name" style="padding-left:(\d+)px">([^<]*)</td><td>(\d+)</td>',
                      html)
    got_html = [((int(pad) - 8) // 16, name.split(": ", 1)[-1], int(calls))
                for pad, name, calls in rows]
    assert got_html == names, (got_html, names)
    print(f"ok: the exported trace's Module view equals the original's: {names}")


if __name__ == "__main__":
    main()
