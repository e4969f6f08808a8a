#!/bin/sh
# The end-to-end check: the bundled trainer on the CPU with --workers 0 on a PNG
# image-folder dataset (per-sample libpng decoding in the training thread) must be diagnosed as
# starved (GT01 fires and names --workers), and the same run with enough workers must not.
# usage: trainer_starved.sh GPROF_TRAIN WORKDIR   (exit 77 when the dataset or trainer is absent)
bin=$1
work=$2
mkdir -p "$work" || exit 2
if [ ! -f "$work/png/.done" ]; then
    rm -rf "$work/png"
    if ! "$bin" prepare --format png "$work/png" > "$work/prepare.log" 2>&1; then
        echo "skipped: 'gprof-train prepare' failed (no Fashion-MNIST or no trainer):"
        cat "$work/prepare.log"
        exit 77
    fi
    touch "$work/png/.done"
fi
status=0
# run_and_diagnose NAME ARGS...: train 40 steps on the PNG folder, then diagnose GT01 only,
# failing on warn.
run_and_diagnose() {
    name=$1
    shift
    rm -rf "$work/$name"
    "$bin" run --device cpu --data "$work/png" --steps 40 --out "$work/$name" --no-report "$@" \
        > "$work/$name.log" 2>&1 || { cat "$work/$name.log"; exit 2; }
    "$bin" diagnose --rule GT01 --fail-on warn "$work/$name"/*/ > "$work/$name.diag"
}
# The mlp trains a batch ~3x faster than one thread decodes it: starved in the training thread.
# Batches of 256 keep the per-step decode well above GT01's 1 ms floor on a fast CPU too.
run_and_diagnose starved --batch-size 256 --workers 0
rc=$?
cat "$work/starved.diag"
# On a machine whose cores other processes keep busy, GT01 asks to free them first (GT19), and
# where they leave no core for a worker (ctest beside other suites, load 5-15 on 2 cores) it says
# info: --workers alone could gain little there.
if [ $rc -eq 0 ] && grep -q '^\[info\] GT01' "$work/starved.diag" &&
    grep -Eq 'knob: free the cores first \(GT19\), then --workers [1-9]' "$work/starved.diag"; then
    echo "GT01 info: other load holds the core a loader worker needs (GT19 first)"
elif [ $rc -ne 1 ] || ! grep -Eq 'knob: (free the cores first \(GT19\), then )?--workers [1-9]' \
    "$work/starved.diag"; then
    echo "FAIL: --workers 0 on PNG files was not diagnosed as starved (exit $rc)"
    status=1
fi
# Fed: the cnn's step outlasts a batch's decode many times over, and one loader thread decodes
# ahead. (The mlp cannot be fed from PNG files on 2 cores: it would need ~3 loader threads with a
# core each, and GT01 rightly still fires with --workers 4 there.)
run_and_diagnose fed --model cnn --workers 1 --prefetch 4
rc=$?
cat "$work/fed.diag"
if [ $rc -ne 0 ]; then
    echo "FAIL: the cnn with a loader thread was diagnosed as starved (exit $rc)"
    status=1
fi
exit $status
