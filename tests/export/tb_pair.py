"""A real torch.profiler trace and `gprof-train export --tensorboard` of it, each loaded with
torch-tb-profiler 0.4.3's own loader (RunLoader, the code TensorBoard runs): the profile of the
original file and of the export, for tests that compare what the plugin shows."""
import os
import shutil
import subprocess

from torch_tb_profiler import io
from torch_tb_profiler.profiler.loader import RunLoader


def load(run_dir, work, name):
    run = RunLoader(name, run_dir, io.Cache(os.path.join(work, "cache-" + name))).load()
    (worker,) = run.workers
    return run.get_profile(worker, run.get_spans(worker)[0])


def original_and_export(gprof, trace, work):
    """(profile of the original, profile of the export), working under `work` (emptied)."""
    shutil.rmtree(work, ignore_errors=True)
    orig_dir = os.path.join(work, "orig")
    os.makedirs(orig_dir)
    worker = os.path.basename(trace).split(".")[0]
    shutil.copy(trace, os.path.join(orig_dir, worker + ".1.pt.trace.json.gz"))
    logdir = os.path.join(work, "tb")
    subprocess.run([gprof, "export", trace, "--tensorboard", logdir, "--run", "exported"],
                   check=True, capture_output=True)
    return load(orig_dir, work, "orig"), load(os.path.join(logdir, "exported"), work, "exported")
