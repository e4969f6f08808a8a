#!/bin/sh
# The diagnosis-accuracy suite (issue 14 item 4, issue 24 §1) on this build's gprof-train, in one
# table: the bundled trainer's CPU cases (bench_accuracy.py, with the PNG folder it needs
# prepared once under the build directory; each fix timed with `sweep`), the simulated GPU's
# fault cases (accuracy_gpu.py, on the build's tests/gpusim/fault_app; each fix timed on the
# simulated device), PyTorch loops of tiny ops and of Adam (accuracy_torch.py, with the torch
# venv), the trainer and a PyTorch CNN beside busy loops (accuracy_contention.sh: GT19) and the
# multi-rank jobs (accuracy_job.py). Each part prints its own cases;
# accuracy_table.py then prints per rule TP/FP/FN/TN, precision, recall and predicted vs
# measured gains over all of them.
# usage: bench_accuracy.sh BUILD_DIR   (Fashion-MNIST installed for the CPU part)
build=${1:-build-release}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bin/gprof-train
out=$build/bench-accuracy
[ -x "$bin" ] || { echo "bench_accuracy: build $bin first"; exit 1; }
mkdir -p "$out"
status=0
rm -f "$out/cpu.json" "$out/gpu.json" "$out/torch.json" "$out/contention.json"
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "== CPU: the bundled trainer"
python3 "$here/bench_accuracy.py" "$bin" --png "$build/bench-png" --out "$out/cpu" \
    --json "$out/cpu.json" || status=1
if [ -x "$build/tests/gpusim/fault_app" ]; then
    echo "== GPU: fault_app on the simulated driver and CUPTI"
    python3 "$here/accuracy_gpu.py" "$bin" "$build/tests/gpusim" --keep "$out/gpu" \
        --json "$out/gpu.json" || status=1
else
    echo "== GPU: skipped (no $build/tests/gpusim/fault_app: a build with CUDA's headers makes it)"
fi
echo "== PyTorch: LSTMCell loops and Adam under torch.profiler (the torch venv)"
python3 "$here/accuracy_torch.py" "$bin" --json "$out/torch.json" --keep "$out/torch" || status=1
echo "== contention: the trainer and a PyTorch CNN beside busy loops"
# the traces kept (a verdict that flips between runs is read from them)
GP_CONTENTION_JSON=$out/contention.json sh "$here/accuracy_contention.sh" "$build" \
    "$out/contention" || status=1
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/accuracy_table.py" "$bin" --cpu "$out/cpu.json" --gpu "$out/gpu.json" \
    --torch "$out/torch.json" --contention "$out/contention.json" --cases || status=1
exit $status
