#!/bin/sh
# Trainer throughput, side by side in one run: mlp samples/s for the loader settings on the IDX
# and the PNG pipeline (CPU), the seconds of one mlp epoch (target < 30 s on the CPU), and on a
# GPU both models under each loader and AMP setting next to the same model and loop in PyTorch
# eager (bench/train_torch.py; target >= 5x for the mlp).
# usage: bench_train.sh BUILD_DIR   (a Release build; Fashion-MNIST installed)
build=${1:-build-release}
bin=$build/bin/gprof-train
here=$(cd "$(dirname "$0")" && pwd)
tmp=${TMPDIR:-/tmp}/gp_bench_train.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
[ -x "$bin" ] || { echo "bench_train: build $bin first"; exit 1; }

# samples/s of one run: ARGS...
rate() {
    "$bin" run --no-report --out "$tmp/runs" "$@" > "$tmp/out" 2> "$tmp/err" || {
        cat "$tmp/err" >&2
        echo 0
        return
    }
    sed -n 's/.*(\([0-9]*\) samples\/s[;)].*/\1/p' "$tmp/out" # "(N samples/s; ...)"
}
ratio() { echo "$1 $2" | awk '{ printf "%.2fx", ($2 > 0 ? $1 / $2 : 0) }'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
t0=$(date +%s.%N)
epoch=$(rate --device cpu --model mlp --epochs 1)
t1=$(date +%s.%N)
printf 'cpu mlp, 1 epoch: %.1f s wall with evaluation (target < 30 s), %s samples/s\n' \
    "$(echo "$t1 - $t0" | bc -l)" "$epoch"
cpu_w0=$(rate --device cpu --model mlp --steps 400)
cpu_w2=$(rate --device cpu --model mlp --steps 400 --workers 2)
echo "cpu mlp idx: workers 2 vs 0: $cpu_w2 vs $cpu_w0 samples/s = $(ratio "$cpu_w2" "$cpu_w0")"
"$bin" prepare --format png "$tmp/png" > /dev/null || exit 1
png_w0=$(rate --device cpu --model mlp --steps 200 --data "$tmp/png")
png_w2=$(rate --device cpu --model mlp --steps 200 --data "$tmp/png" --workers 2)
echo "cpu mlp png: workers 2 vs 0: $png_w2 vs $png_w0 samples/s = $(ratio "$png_w2" "$png_w0");" \
    "png vs idx (workers 0): $(ratio "$png_w0" "$cpu_w0")"

if ! "$bin" run --device cuda --steps 1 --no-report --out "$tmp/runs" > /dev/null 2>&1; then
    echo "no usable GPU: CUDA rows skipped"
    exit 0
fi
fast="--workers 4 --pin-memory --non-blocking"
for model in mlp cnn; do
    base=$(rate --device cuda --model $model --epochs 1)
    tuned=$(rate --device cuda --model $model --epochs 1 $fast)
    fp16=$(rate --device cuda --model $model --epochs 1 $fast --amp fp16 --cudnn-benchmark)
    bf16=$(rate --device cuda --model $model --epochs 1 $fast --amp bf16 --cudnn-benchmark)
    echo "cuda $model: baseline $base, loader tuned $tuned ($(ratio "$tuned" "$base")), fp16 $fp16," \
        "bf16 $bf16 samples/s"
    if python3 -c 'import torch; assert torch.cuda.is_available()' 2> /dev/null; then
        torch=$(python3 "$here/train_torch.py" --model $model --workers 4)
        echo "cuda $model vs PyTorch eager (same loop, loader tuned): $tuned vs $torch samples/s" \
            "= $(ratio "$tuned" "$torch") (target >= 5x for the mlp)"
    else
        echo "cuda $model: PyTorch with CUDA not installed: comparison skipped"
    fi
done
