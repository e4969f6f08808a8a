"""gprof-train from Python: profile a PyTorch training loop, and read traces with the C tool.

    import gprof_train
    with gprof_train.profile():          # torch.profiler, a step per optimizer step
        train()                          # report and diagnosis printed at exit
    prof = torch.profiler.profile(..., on_trace_ready=gprof_train.on_trace_ready("traces"))
    gprof_train.report(path)             # {"schema": "gprof-train.report/1", "traces": [...]}
    gprof_train.diagnose(path), gprof_train.compare(base, new), gprof_train.job(paths)

The work is done by the gprof-train binary installed with this package; each call returns its
--format json output as a dict.
"""
from gprof_train._api import compare, diagnose, job, report
from gprof_train._tool import Error, executable
from gprof_train._torch import on_trace_ready, profile

__all__ = ["profile", "on_trace_ready", "report", "diagnose", "compare", "job", "Error",
           "executable"]
