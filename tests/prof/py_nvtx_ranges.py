#!/usr/bin/env python3
"""py_nvtx_ranges.py: NVTX ranges from Python (NVIDIA's `nvtx` package, as PyTorch users emit
them), captured by injection with default options: 2,000,000 push/pop pairs in a tight loop are
all in the trace (they lost 44% with fixed 4 MiB rings).
usage: py_nvtx_ranges.py LIB_DIR   (run in the test venv that has `nvtx`)"""
import gzip
import os
import re
import subprocess
import sys
import tempfile

N = 2_000_000
CHILD = """
import nvtx
push, pop = nvtx.push_range, nvtx.pop_range
for i in range(%d):
    push("py")
    pop()
""" % N


def main():
    lib = os.path.join(sys.argv[1], "libgp_prof.so")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NVTX_INJECTION64_PATH=lib, GP_PROF_OUT=tmp)
        r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                           timeout=600)
        if r.returncode != 0:
            print("FAIL: the python child exited %d: %s" % (r.returncode, r.stderr))
            return 1
        traces = [f for f in os.listdir(tmp) if f.endswith(".pt.trace.json.gz")]
        if len(traces) != 1:
            print("FAIL: one trace expected, found %s" % traces)
            return 1
        n, dropped = 0, None
        with gzip.open(os.path.join(tmp, traces[0]), "rt", encoding="utf-8") as f:
            for line in f:
                if '"name":"py"' in line:
                    n += 1
                m = re.search(r'"dropped_records":(\d+)', line)
                if m and dropped is None:
                    dropped = int(m.group(1))
        ok = n == N and dropped == 0
        print("%s: %d of %d ranges, %s dropped" % ("ok" if ok else "FAIL", n, N, dropped))
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
