#!/bin/sh
# How right is the diagnosis (issue 14 item 4): bench_accuracy.py on this build's gprof-train,
# with the PNG folder it needs prepared once under the build directory. Prints each rule's
# precision and recall over the suite and the error of each predicted gain against the one
# sweep measures (see the script's docstring).
# usage: bench_accuracy.sh BUILD_DIR   (Fashion-MNIST installed)
build=${1:-build-release}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bin/gprof-train
[ -x "$bin" ] || { echo "bench_accuracy: build $bin first"; exit 1; }
exec python3 "$here/bench_accuracy.py" "$bin" --png "$build/bench-png" --out "$build/bench-accuracy"
