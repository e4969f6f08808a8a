"""What the job tests share: the list of failed checks, bench/gen_job.py, and `gprof-train job`."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(ROOT, "bench", "gen_job.py")
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def gen(d, *args):
    subprocess.run([sys.executable, GEN, d] + [str(a) for a in args], check=True)


def run_job(binary, *args):
    """`BINARY job ARGS...`: (stdout, stderr); a non-zero exit is a failed check."""
    p = subprocess.run([binary, "job"] + list(args), capture_output=True, text=True)
    check(p.returncode == 0, "job %s exited %d: %s" % (args, p.returncode, p.stderr))
    return p.stdout, p.stderr


def finish():
    """Print the count of failed checks. @return the exit status."""
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0
