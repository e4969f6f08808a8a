#!/bin/sh
# --amp bf16 on the CPU (torch.autocast("cpu", dtype=torch.bfloat16)) against fp32: samples/s of
# the mlp and the cnn, the best of 3 alternating runs each (--no-profile; the best, since other
# work on the machine only ever slows a run), and the bf16/fp32 ratio. Where
# OpenBLAS has no cblas_sbgemm the bf16 GEMMs are fp32 GEMMs of rounded inputs, so the ratio is
# below 1 (the rounding passes cost, no faster GEMM runs); the line says which GEMM ran.
# usage: bench_amp_cpu.sh BUILD_DIR   (a Release build; Fashion-MNIST installed)
build=${1:-build-release}
bin=$build/bin/gprof-train
tmp=${TMPDIR:-/tmp}/gp_bench_amp_cpu.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
[ -x "$bin" ] || { echo "bench_amp_cpu: build $bin first"; exit 1; }

rate() {
    "$bin" run --device cpu --no-report --no-profile --out "$tmp/runs" "$@" > "$tmp/out" \
        2> "$tmp/err" || { cat "$tmp/err" >&2; echo 0; return; }
    sed -n 's/^trained.*(\([0-9]*\) samples\/s.*/\1/p' "$tmp/out"
}
best() { echo "$1 $2" | awk '{ print ($2 > $1 ? $2 : $1) }'; }
ratio() { echo "$1 $2" | awk '{ printf "%.2fx", ($2 > 0 ? $1 / $2 : 0) }'; }

lib=$(ldconfig -p 2>/dev/null | sed -n 's/.*libopenblas.so.0 .*=> //p' | head -1)
gemm="fp32 sgemm of bf16-rounded inputs (no cblas_sbgemm in ${lib:-libopenblas.so.0})"
if [ -n "$lib" ] && nm -D "$(readlink -f "$lib")" 2>/dev/null | grep -q ' T cblas_sbgemm$'; then
    gemm="cblas_sbgemm"
fi
echo "bf16 GEMM: $gemm; load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores"
for spec in "mlp 600" "cnn 40"; do
    set -- $spec
    f32=0 b16=0
    for i in 1 2 3; do
        f32=$(best "$f32" "$(rate --model "$1" --steps "$2")")
        b16=$(best "$b16" "$(rate --model "$1" --steps "$2" --amp bf16)")
    done
    echo "cpu $1, $2 steps: bf16 $b16 vs fp32 $f32 samples/s = $(ratio "$b16" "$f32")"
done
