#!/bin/sh
# mlp test accuracy after 5 epochs, ours vs PyTorch on the CPU with the same settings (Adam 1e-3,
# batch 64, normalise (0.5, 0.5), default Linear init, reshuffle each epoch, last partial batch
# kept), over the same seeds; prints mean/std/min/max of both. Needs torch in $PYTHON (skipped
# otherwise). usage: bench_train_acc.sh BUILD_DIR [SEED...]   (default seeds 0 1 2 3 4 42)
build=${1:-build-release}
[ $# -gt 0 ] && shift
# Training 2 x 6 models for 5 epochs takes minutes: part of `make bench` only when asked for.
if [ -z "$GP_BENCH_ACCURACY" ] && [ $# -eq 0 ]; then
    echo "bench_train_acc: skipped (GP_BENCH_ACCURACY=1 make bench runs it: several minutes)"
    exit 0
fi
seeds=${*:-0 1 2 3 4 42}
bin=$build/bin/gprof-train
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
tmp=${TMPDIR:-/tmp}/gp_bench_train_acc.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
[ -x "$bin" ] || { echo "bench_train_acc: build $bin first"; exit 1; }

# mean std(n-1) min max of the numbers on stdin
stats() {
    awk '{ x[NR] = $1; s += $1 } END {
        m = s / NR; for (i = 1; i <= NR; i++) v += (x[i] - m) ^ 2
        min = max = x[1]; for (i = 1; i <= NR; i++) { if (x[i] < min) min = x[i]; if (x[i] > max) max = x[i] }
        printf "n %d mean %.4f std %.4f min %.4f max %.4f\n", NR, m, (NR > 1 ? sqrt(v / (NR - 1)) : 0), min, max }'
}

for s in $seeds; do
    "$bin" run --epochs 5 --seed "$s" --no-report --device cpu --out "$tmp/runs/$s" \
        > "$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
    acc=$(sed -n 's/.*"test_accuracy": *\([0-9.]*\).*/\1/p' "$tmp"/runs/"$s"/*/summary.json | head -1)
    echo "ours  seed $s: $acc"
    echo "$acc" >> "$tmp/ours"
done
echo "ours  final: $(stats < "$tmp/ours")"
if ! "$py" -c "import torch" 2> /dev/null; then
    echo "torch: skipped (no torch in $py; set PYTHON=...)"
    exit 0
fi
# shellcheck disable=SC2086
"$py" "$here/train_torch_mlp_acc.py" --seeds $seeds | tee "$tmp/torch.log" | grep 'epoch 5 '
awk '/epoch 5 /{ print $6 }' "$tmp/torch.log" > "$tmp/torch"
echo "torch final: $(stats < "$tmp/torch")"
