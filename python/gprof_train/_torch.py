"""torch.profiler with gprof-train's defaults, for a script that imports gprof_train:
`profile()` around a training loop, `on_trace_ready(dir)` for a profiler of one's own. The
traces are then read by the C tool (report, diagnose), as after `gprof-train run -- python3 ...`."""
import glob
import os
import socket
import sys
import time

from gprof_train._tool import run_print

# `gprof-train run -- python3 train.py`'s --schedule defaults (cli/run_torch.c): skip two steps,
# warm up one, record twenty.
SCHEDULE = {"wait": 2, "warmup": 1, "active": 20, "repeat": 1}
REPORT_ROWS = "15"  # as many operators as `run` prints


def parse_schedule(spec):
    """"wait=W,warmup=U,active=A,repeat=R" (any of them) or a dict -> the four, defaults filled."""
    items = spec if isinstance(spec, dict) else dict(
        kv.split("=", 1) for kv in (spec or "").split(",") if kv)
    out = dict(SCHEDULE)
    for k, v in items.items():
        if k not in out:
            raise ValueError("schedule: unknown key %r (wait, warmup, active, repeat)" % k)
        out[k] = int(v)
        if out[k] < 0:
            raise ValueError("schedule: %s=%d is negative" % (k, out[k]))
    if out["active"] < 1:
        raise ValueError("schedule: active must be at least 1")
    return out


def on_trace_ready(dir, verbose=True):
    """A handler for torch.profiler.profile(on_trace_ready=...): writes each trace into `dir` as
    <host>_<pid>.<ms>.pt.trace.json (torch's tensorboard naming) and says where, with the
    commands that read it. The paths written are in handler.traces."""
    dir = os.path.abspath(os.fspath(dir))
    os.makedirs(dir, exist_ok=True)

    def handler(prof):
        name = "%s_%d.%d.pt.trace.json" % (socket.gethostname(), os.getpid(), time.time() * 1000)
        path = os.path.join(dir, name)
        prof.export_chrome_trace(path)
        handler.traces.append(path)
        if verbose:
            sys.stderr.write("gprof-train: trace '%s' (gprof-train report|diagnose %s)\n"
                             % (path, path))

    handler.traces = []
    return handler


def _run_dir(out):
    """<out>/<script>-<YYYYmmdd-HHMMSS>[-N], as `run -o OUT` names its run folders."""
    script = os.path.splitext(os.path.basename(sys.argv[0] or "python"))[0] or "python"
    base = os.path.join(out, "%s-%s" % (script, time.strftime("%Y%m%d-%H%M%S")))
    path, n = base, 1
    while os.path.exists(path):
        n += 1
        path = "%s-%d" % (base, n)
    return path


class profile:
    """with gprof_train.profile(): TRAINING LOOP -- torch.profiler over the loop, a profiler step
    at every optimizer step, CPU activity (and CUDA where available), the traces written into a
    new run folder under `out`; at exit the report and the diagnosis are printed (quiet=True:
    not). The folder is .dir, the traces .traces, the optimizer steps seen .steps."""

    def __init__(self, out="runs", schedule=None, record_shapes=False, profile_memory=False,
                 with_stack=False, quiet=False):
        self.out, self.quiet = os.fspath(out), quiet
        self.schedule = parse_schedule(schedule)
        self.options = dict(record_shapes=record_shapes, profile_memory=profile_memory,
                            with_stack=with_stack)
        self.dir, self.traces, self.steps = None, [], 0
        self._prof = self._hook = None

    def __enter__(self):
        import torch
        import torch.optim.optimizer as optimizer

        tp = torch.profiler
        acts = [tp.ProfilerActivity.CPU]
        if torch.cuda.is_available():
            acts.append(tp.ProfilerActivity.CUDA)
        self.dir = os.path.abspath(_run_dir(self.out))
        self._prof = tp.profile(activities=acts, schedule=tp.schedule(**self.schedule),
                                on_trace_ready=on_trace_ready(self.dir, verbose=False),
                                **self.options)
        self._prof.start()
        self._hook = optimizer.register_optimizer_step_post_hook(self._step)
        return self

    def _step(self, *_):
        self.steps += 1
        self._prof.step()

    def __exit__(self, *exc):
        self._hook.remove()
        self._prof.stop()
        self.traces = sorted(glob.glob(os.path.join(self.dir, "*.pt.trace.json")))
        if not self.quiet:
            self._print()
        return False

    def _print(self):
        if not self.traces:
            sys.stderr.write("gprof-train: %d optimizer steps, none recorded by the schedule %s: "
                             "nothing was profiled (schedule='wait=0,warmup=0,active=1' records "
                             "the whole loop as one step)\n" % (self.steps, self.schedule))
            return
        run_print(["report", self.dir, "--row-limit", REPORT_ROWS])
        run_print(["diagnose", self.dir])
        sys.stderr.write("gprof-train: traces in '%s'\n" % self.dir)
