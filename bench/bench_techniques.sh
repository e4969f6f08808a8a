#!/bin/sh
# The guides' table of training techniques on the CPU and on the simulated device
# (bench_techniques.py --sim, every row labelled simulated): one sweep each, time per epoch,
# speedup, memory (activations on the CPU, peak device memory simulated) and predicted beside
# measured gains. The simulated device is a test double (tests/simdev), built only with tests:
# `make bench`'s build-release has none, so the table looks for it in GP_SIM_BUILD (default: this
# build, then build/) and prints a line saying it skipped that part when neither has it.
# usage: bench_techniques.sh BUILD_DIR   (Fashion-MNIST installed)
build=${1:-build-release}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bin/gprof-train
[ -x "$bin" ] || { echo "bench_techniques: build $bin first"; exit 1; }
sim=${GP_SIM_BUILD:-}
if [ -z "$sim" ]; then
    sim=$build
    for d in "$build" build; do
        if [ -e "$d/tests/simdev/libgp_train_cuda_sim.so" ]; then sim=$d; break; fi
    done
fi
out=$build/bench-techniques
rm -rf "$out"
mkdir -p "$out"
python3 "$here/bench_techniques.py" "$bin" "$out" --sim "$sim"
