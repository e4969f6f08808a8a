#!/bin/sh
# The guides' table of training techniques on the CPU and, where the build has it, the simulated
# device (bench_techniques.py --sim, labelled simulated): one sweep each,
# time per epoch, speedup, activation memory and predicted beside measured gains.
# usage: bench_techniques.sh BUILD_DIR   (Fashion-MNIST installed)
build=${1:-build-release}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bin/gprof-train
[ -x "$bin" ] || { echo "bench_techniques: build $bin first"; exit 1; }
out=$build/bench-techniques
rm -rf "$out"
mkdir -p "$out"
python3 "$here/bench_techniques.py" "$bin" "$out" --sim "$build"
