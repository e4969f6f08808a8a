#!/bin/sh
# shellcheck disable=SC2086 # the option lists ($T, $DATA, $knobs) are split into words on purpose
# The checks only a real GPU can do, in one short run (about 6 minutes on an H200): the GPU tests,
# the bundled trainer with each CUDA knob, the profiler's own cost on it (runs with and without
# the profiler alternated), PyTorch loops with one fault each beside their fixes
# (gpu_torch_cases.py, judged by gpu_torch_judge.py), `run -- python3` on a plain script, and
# PyTorch loops profiled from their start without markers (gpu_startup_cases.py, 15 processes,
# about 3 minutes; check them with tests/rules/check_h200_startup.py BINARY OUT/startup).
# Each step's output goes to OUT/<step>.txt; a step that fails does not stop the others.
#
#   sh bench/gpu_check.sh BUILD_DIR OUT_DIR [DATA_DIR]
# DATA_DIR: Fashion-MNIST as IDX files (default: the trainer's own default). Needs a CUDA build
# (GP_WITH_CUDA) and, for the PyTorch steps, a python3 with torch and CUDA. Exit 77 without a GPU.
set -u
BUILD=${1:?usage: gpu_check.sh BUILD_DIR OUT_DIR [DATA_DIR]}
OUT=${2:?usage: gpu_check.sh BUILD_DIR OUT_DIR [DATA_DIR]}
HERE=$(cd "$(dirname "$0")" && pwd)
G=$(cd "$BUILD" && pwd)/bin/gprof-train
DATA=${3:+--data $3}
mkdir -p "$OUT"
if ! "$G" doctor > "$OUT/doctor.txt" 2>&1; then
    echo "gpu_check: no usable GPU here (see $OUT/doctor.txt): skipped"
    exit 77
fi
step() { # step NAME CMD...
    name=$1
    shift
    printf '%-28s' "$name"
    start=$(date +%s)
    "$@" > "$OUT/$name.txt" 2>&1
    rc=$?
    echo "exit $rc, $(($(date +%s) - start)) s"
}
trained() { # the trainer's training time, from a run's output
    grep -E '^trained' "$OUT/$1.txt" | head -1
}

step ctest_cuda sh -c "cd '$BUILD' && ctest -L cuda --output-on-failure"
T="--device cuda $DATA --no-report -o $OUT/runs"
for knobs in "" "--workers 4 --pin-memory --non-blocking" "-m cnn" "-m cnn --channels-last" \
    "-m cnn --amp bf16 --channels-last" "-m cnn --amp fp16 --cudnn-benchmark" \
    "-m cnn --amp bf16 --cuda-graphs"; do
    step "train$(echo "$knobs" | tr -d ' -')" "$G" run $T --steps 300 $knobs
done
for i in 1 2 3; do
    step "cost_mlp_unprofiled_$i" "$G" run $T --steps 3000 --no-profile
    step "cost_mlp_profiled_$i" "$G" run --device cuda $DATA -o "$OUT/runs" --steps 3000
done
echo "profiler's cost on the mlp (training time, 3000 steps):"
for i in 1 2 3; do
    echo "  without: $(trained cost_mlp_unprofiled_$i)"
    echo "  with:    $(trained cost_mlp_profiled_$i)"
done
grep -h "profiler's own cost" "$OUT"/cost_mlp_profiled_*.txt | sed 's/^ */  estimated: /'
if python3 -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2> /dev/null; then
    step torch_cases python3 "$HERE/gpu_torch_cases.py" "$OUT/torch"
    python3 "$HERE/gpu_torch_judge.py" "$G" "$OUT/torch" | tee "$OUT/torch_judge.txt"
    step torch_hook "$G" run -o "$OUT/hook" -- python3 "$HERE/gpu_torch_cases.py" \
        "$OUT/plain" --plain sync --steps 80
    step startup_cases python3 "$HERE/gpu_startup_cases.py" "$OUT/startup"
    python3 "$HERE/../tests/rules/check_h200_startup.py" "$G" "$OUT/startup" |
        tee "$OUT/startup_check.txt"
else
    echo "no python3 with torch and CUDA: the PyTorch steps are skipped"
fi
grep -l "FAIL\|error" "$OUT"/*.txt 2> /dev/null | sed 's/^/look at: /'
exit 0
