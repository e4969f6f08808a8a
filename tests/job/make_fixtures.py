"""Write (or with --check, compare) the committed job fixtures in tests/data/job/ from
bench/gen_job.py: straggler (rank 2's loader 3 ms slow), healthy, and mixed (NCCL name variants
per rank, no distributedInfo, ranks 2 and 3 with clocks 5 ms ahead and 7 ms behind, rank 1's
kernels slow). usage: make_fixtures.py [--check]"""
import filecmp
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(ROOT, "bench", "gen_job.py")
DATA = os.path.join(ROOT, "tests", "data", "job")
CASES = {
    "straggler": ["--steps", "4", "--kernels", "4", "--straggler", "2", "--cause", "loader"],
    "healthy": ["--steps", "4", "--kernels", "4"],
    "mixed": ["--steps", "4", "--kernels", "4", "--names", "mixed", "--no-dist", "--ranks", "5",
              "--skew", "2:5", "--skew", "3:-7", "--straggler", "1", "--cause", "kernels"],
}


def write(dst):
    for name, args in CASES.items():
        subprocess.run([sys.executable, GEN, os.path.join(dst, name)] + args, check=True)


def main():
    if "--check" not in sys.argv:
        write(DATA)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        write(tmp)
        for name in CASES:
            c = filecmp.dircmp(os.path.join(tmp, name), os.path.join(DATA, name))
            if c.left_only or c.right_only or c.diff_files:
                print("tests/data/job/%s differs from bench/gen_job.py: %s; run %s" %
                      (name, c.left_only + c.right_only + c.diff_files, __file__))
                return 1
    print("job fixtures fresh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
