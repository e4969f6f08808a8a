"""report, diagnose, compare, job: the CLI's --format json outputs as Python dicts (their
schemas are the CLI's: "gprof-train.report/1", ...). A path may be a trace (.json or .json.gz,
ours or torch.profiler's), a folder of traces, or a list of them."""
from gprof_train._tool import run_json


def report(path, sort=None, row_limit=None, group_by=None):
    """`gprof-train report PATH --format json`: key averages and steps, one entry a trace."""
    args = ["report"]
    if sort is not None:
        args += ["--sort", sort]
    if row_limit is not None:
        args += ["--row-limit", str(row_limit)]
    if group_by is not None:
        args += ["--group-by", group_by]
    return run_json(args, path)


def diagnose(path):
    """`gprof-train diagnose PATH --format json`: the findings of every rule."""
    return run_json(["diagnose"], path)


def compare(base, new):
    """`gprof-train compare BASE NEW --format json`: the new runs against the base runs."""
    return run_json(["compare"], base, new)


def job(paths):
    """`gprof-train job PATHS --format json`: one job across its ranks' traces or summaries."""
    return run_json(["job"], paths)
