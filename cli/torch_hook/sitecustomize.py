"""gprof-train's start-up hook for `gprof-train run -- python3 train.py` on a PyTorch script.

`run` puts this folder first on PYTHONPATH, so Python imports this module at start-up in every
process of the job. In the one process that trains (the command itself, or each rank under
torchrun; never a launcher, never a DataLoader worker) it runs torch.profiler over the script:
the schedule and options come from GP_TORCH_* variables, a profiler step is taken at every
optimizer step (a global step hook), and each trace is written into the run folder
(GP_TORCH_OUT). At exit the profiler is stopped and what it recorded is written. If the script
starts a torch.profiler of its own, this one stands aside and that trace is used instead.
Any sitecustomize found further along sys.path is then imported as if this one were not here.
"""
import atexit
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_OUT = os.environ.get("GP_TORCH_OUT", "")
_LAUNCHERS = ("torchrun", "torch.distributed.run", "torch.distributed.launch")


def _say(msg):
    sys.stderr.write("gprof-train: %s\n" % msg)
    sys.stderr.flush()


def _is_launcher():
    argv = getattr(sys, "orig_argv", sys.argv)
    for i, a in enumerate(argv):
        if os.path.basename(a) == "torchrun" and i <= 1:
            return True
        if a == "-m" and i + 1 < len(argv) and argv[i + 1] in _LAUNCHERS:
            return True
    return False


def _claims():
    """This process profiles: no ancestor did, and it is not a launcher."""
    if not _OUT or os.environ.get("GP_TORCH_PID"):
        return False
    return not _is_launcher()


class _Hook:
    def __init__(self, torch):
        self.torch = torch
        self.prof = None
        self.steps = 0  # optimizer steps
        self.traces = 0  # traces written
        self.user = False  # the script started its own torch.profiler
        self.user_traces = []
        self.exporting = False  # inside a profiler's export_chrome_trace
        self.rank = os.environ.get("RANK") if os.environ.get("WORLD_SIZE") else None

    def trace_name(self):
        return "rank%s" % self.rank if self.rank is not None else "python-%d" % os.getpid()

    def on_trace_ready(self, prof):
        step = ".step%d" % prof.step_num if self.repeat != 1 else ""
        name = "%s%s.pt.trace.json" % (self.trace_name(), step)
        prof.export_chrome_trace(os.path.join(_OUT, name))
        self.traces += 1

    def options(self):
        tp = self.torch.profiler
        w, u, a, r = (int(x) for x in os.environ.get("GP_TORCH_SCHEDULE", "2,1,20,1").split(","))
        self.repeat = r
        acts = [tp.ProfilerActivity.CPU]
        if self.torch.cuda.is_available():
            acts.append(tp.ProfilerActivity.CUDA)
        flag = lambda k: os.environ.get(k) == "1"
        return dict(activities=acts, schedule=tp.schedule(wait=w, warmup=u, active=a, repeat=r),
                    on_trace_ready=self.on_trace_ready, record_shapes=flag("GP_TORCH_SHAPES"),
                    profile_memory=flag("GP_TORCH_MEMORY"), with_stack=flag("GP_TORCH_STACK"))

    def start(self):
        self.prof = self.torch.profiler.profile(**self.options())
        self.prof.start()

    def step(self, *_):
        if self.prof is not None:
            self.steps += 1
            self.prof.step()
            if 0 < self.repeat <= self.traces:
                # the schedule is done: stop now, in the script's own time, rather than in
                # atexit, when torch is shutting down (a DDP rank under torchrun aborted there
                # once, at load, after its trace was written: "terminate called without an
                # active exception")
                prof, self.prof = self.prof, None
                prof.stop()

    def stand_aside(self):
        if self.user:
            return
        self.user = True
        _say("the script starts its own torch.profiler: not profiling it a second time "
             "(its trace is used when it writes one)")
        prof, self.prof = self.prof, None
        if prof is not None:
            prof.stop()

    def user_trace(self, path):
        path = os.path.abspath(str(path))
        if os.path.dirname(path) == _OUT:
            return
        base = os.path.basename(path)
        gz = ".gz" if base.endswith(".gz") else ""
        for suffix in (".json.gz", ".json", ".gz"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        if base.endswith(".pt.trace"):
            base = base[: -len(".pt.trace")]
        name = "%s.%d.pt.trace.json%s" % (base, len(self.user_traces), gz)
        link = os.path.join(_OUT, name)
        try:
            os.symlink(path, link)
            self.user_traces.append(path)
            _say("the script's trace '%s' is linked into the run folder" % path)
        except OSError as e:
            _say("the script's trace is '%s' (cannot link it into '%s': %s)" % (path, _OUT, e))

    def finish(self):
        if os.getpid() != int(os.environ.get("GP_TORCH_PID", "0")):
            return  # a forked child that inherited the hook
        prof, self.prof = self.prof, None
        if prof is not None:
            prof.stop()
        if self.user or self.traces:
            return
        ran = ("only %d optimizer steps ran, all before the schedule records" % self.steps
               if self.steps else "no optimizer step ran (torch.optim)")
        _say("%s: nothing was profiled; --schedule wait=0,warmup=0,active=1 records the whole "
             "run as one step" % ran)


def _wrap(hook, cls, start_name):
    """Notice the script's own profilers of class `cls`: when one starts (cls.<start_name>), and
    where it writes its trace. Ours writes into the run folder only, so is never taken for one."""
    start, export = getattr(cls, start_name), cls.export_chrome_trace

    def start_wrapped(self, *a, **k):
        if self is not hook.prof:
            hook.stand_aside()
        return start(self, *a, **k)

    def export_wrapped(self, path, *a, **k):
        outer = not hook.exporting  # torch.profiler's export calls the legacy one (on a .tmp)
        hook.exporting = True
        try:
            r = export(self, path, *a, **k)
        finally:
            hook.exporting = not outer
        if outer:
            hook.user_trace(path)
        return r

    setattr(cls, start_name, start_wrapped)
    cls.export_chrome_trace = export_wrapped


def _flush_on(hook, sig):
    """A stop signal that would kill the process at once (default action) first stops the
    profiler, so that what it recorded is written, then kills the process as before."""
    import signal

    def handler(signum, frame):
        hook.finish()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    if signal.getsignal(sig) == signal.SIG_DFL:
        signal.signal(sig, handler)


def _install():
    os.environ["GP_TORCH_PID"] = str(os.getpid())
    import torch
    import torch.optim.optimizer as opt

    hook = _Hook(torch)
    _wrap(hook, torch.profiler.profile, "start")
    _wrap(hook, torch.autograd.profiler.profile, "__enter__")  # the legacy API, emit_nvtx's too
    opt.register_optimizer_step_post_hook(hook.step)
    atexit.register(hook.finish)
    import signal

    for sig in (signal.SIGTERM, signal.SIGHUP):
        _flush_on(hook, sig)
    hook.start()


def _chain():
    """Import the sitecustomize that this one hides, if any."""
    path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)


if _claims():
    try:
        _install()
    except Exception as e:  # never stop the user's script
        _say("cannot start torch.profiler in this process: %s: %s" % (type(e).__name__, e))
_chain()
