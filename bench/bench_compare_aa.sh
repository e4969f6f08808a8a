#!/bin/sh
# compare with runs as the unit (issue 24 §3): bench_compare_aa.py on this build's gprof-train.
# Real runs of the bundled trainer on the CPU, two settings interleaved; prints the A/A
# false-verdict rate (target <= 5%) and the detection rate of a ~10% change with 5 runs a side
# (target >= 90%), with the machine's load. About 5-8 minutes on 2 cores. The runs are kept as
# BUILD_DIR/bench-compare-aa/pool.json: `bench_compare_aa.py GPROF_TRAIN --pool that.json`
# evaluates them again without training.
# usage: bench_compare_aa.sh BUILD_DIR   (Fashion-MNIST installed)
build=${1:-build-release}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bin/gprof-train
[ -x "$bin" ] || { echo "bench_compare_aa: build $bin first"; exit 1; }
exec python3 "$here/bench_compare_aa.py" "$bin" --out "$build/bench-compare-aa"
