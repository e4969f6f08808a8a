#!/bin/sh
# CLI checks of `gprof-train run` (trainer) and `gprof-train prepare` on the small IDX fixture:
# exit codes, the messages of bad input, the run folder, the trace and the PNG pipeline.
# Usage: cli_train.sh BIN FIXTURE_DIR
bin=$1
fixture=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # check NAME COND...
    name=$1
    shift
    if ! "$@"; then
        echo "FAIL: $name"
        fail=1
    fi
}

"$bin" run --data "$fixture" --batch-size 16 --steps 3 --no-report --out "$tmp/runs" >"$tmp/out" 2>"$tmp/err"
check "run exits 0" test $? -eq 0
check "epoch line" grep -q "^epoch 1/1: loss" "$tmp/out"
check "run folder" grep -q "^run: $tmp/runs/mlp-" "$tmp/out"
run_dir=$(sed -n 's/^run: //p' "$tmp/out")
check "summary.json" grep -q '"steps": 3' "$run_dir/summary.json"
if grep -q "^trace: " "$tmp/out"; then
    trace=$(sed -n 's/^trace: //p' "$tmp/out")
    check "trace name" sh -c "echo '$trace' | grep -q '/[^/]*_[0-9]*\.[0-9]*\.pt\.trace\.json\.gz$'"
    check "trace gzip" gzip -t "$trace"
    check "trace steps" sh -c "gzip -dc '$trace' | grep -q 'ProfilerStep#2'"
    check "trace loader" sh -c "gzip -dc '$trace' | grep -q '_SingleProcessDataLoaderIter.__next__'"
    check "trace config" sh -c "gzip -dc '$trace' | grep -q '\"batch_size\": *16'"
    # summary.json's config and the trace's "gprof" header say the same, by the list's names
    check "summary config = trace header" python3 "$(dirname "$0")/check_summary_config.py" \
        "$(dirname "$0")/../../libprof/include/gp/trace_schema.h" "$run_dir/summary.json" "$trace"
    # The profiler runs while the backend opens (its device memory is allocated then).
    check "trace setup range" sh -c "gzip -dc '$trace' | grep -q '\"name\":\"setup\"'"
fi

# each step's batch_size counter (GT14 reads a new batch size's first-time work from it): 96
# samples in batches of 40 end with 16; --drop-last leaves that batch out
batches() { # batches TRACE: the counter's values in order
    gzip -dc "$1" | python3 -c 'import json, sys
print(" ".join(str(int(e["args"]["value"])) for e in json.load(sys.stdin)["traceEvents"]
               if e.get("ph") == "C" and e.get("name") == "batch_size"))'
}
for drop in "" --drop-last; do
    "$bin" run --device cpu --data "$fixture" --batch-size 40 --epochs 1 $drop --no-report \
        --out "$tmp/batches$drop" >"$tmp/out" 2>"$tmp/err"
    check "batches$drop exit 0" test $? -eq 0
    t=$(ls "$tmp/batches$drop"/*/*.pt.trace.json.gz 2>/dev/null | head -1)
    if [ -n "$t" ]; then
        want="40 40 16" && [ -n "$drop" ] && want="40 40"
        check "batch_size counters$drop: $(batches "$t")" test "$(batches "$t")" = "$want"
        check "drop_last config$drop" sh -c "gzip -dc '$t' | head -c 20000 |
            grep -q '\"drop_last\": *$([ -n "$drop" ] && echo true || echo false)'"
    fi
done

"$bin" run --device cpu --amp fp16 --data "$fixture" --out "$tmp/runs" >"$tmp/out" 2>"$tmp/err"
check "amp on cpu exits 2" test $? -eq 2
check "amp on cpu message" grep -q "error: --amp fp16 needs a CUDA device" "$tmp/err"
check "amp on cpu hint" grep -q "^hint: " "$tmp/err"

# the techniques' knobs (issue 31): on the CPU, recorded in the trace's run configuration
"$bin" run --device cpu --model cnn --amp bf16 --checkpoint-activations --zero-grad none \
    --data "$fixture" --batch-size 16 --steps 2 --no-report --out "$tmp/knobs" >"$tmp/out" 2>"$tmp/err"
check "knobs exit 0" test $? -eq 0
knob_trace=$(ls "$tmp"/knobs/*/*.pt.trace.json.gz 2>/dev/null | head -1)
check "knobs trace" test -n "$knob_trace"
for key in '"amp": *"bf16"' '"bf16_gemm": *"[a-z-]*"' '"checkpoint_activations": *true' \
    '"zero_grad": *"none"' '"activation_bytes": *[1-9]'; do
    check "knobs config $key" sh -c "gzip -dc '$knob_trace' | head -c 20000 | grep -q '$key'"
done
"$bin" run --device cpu --model cnn --fused --channels-last --data "$fixture" --batch-size 16 \
    --steps 2 --no-report --out "$tmp/fused" >"$tmp/out" 2>"$tmp/err"
check "fused channels-last exit 0" test $? -eq 0
fused_trace=$(ls "$tmp"/fused/*/*.pt.trace.json.gz 2>/dev/null | head -1)
for key in '"fused": *true' '"channels_last": *true' '"elementwise_passes": *[1-9]'; do
    check "fused config $key" sh -c "gzip -dc '$fused_trace' | grep -q '$key'"
done
# sweep varies --fused; the fused run's trace counts fewer elementwise passes a step
"$bin" sweep --vary device=cpu --vary fused=off,on --vary "data=$fixture" --steps 2 \
    -o "$tmp/sweep" >"$tmp/out" 2>"$tmp/err"
check "sweep fused exit 0" test $? -eq 0
passes() { gzip -dc "$1" | grep -o '"elementwise_passes": *[0-9]*' | grep -o '[0-9]*$'; }
off=$(passes "$(ls "$tmp"/sweep/*fused=off/profiled/*/*.gz | head -1)")
on=$(passes "$(ls "$tmp"/sweep/*fused=on/profiled/*/*.gz | head -1)")
check "sweep fused: fewer passes ($off -> $on)" test "${on:-99}" -lt "${off:-0}"
"$bin" report "$tmp/fused" >"$tmp/out" 2>"$tmp/err"
check "report shows the passes" grep -q "^elementwise passes: [1-9][0-9]* per optimizer step (fused on, channels-last on)" "$tmp/out"
"$bin" run --device cpu --zero-grad sometimes --data "$fixture" --out "$tmp/runs" >"$tmp/out" 2>"$tmp/err"
check "bad zero-grad exits 2" test $? -eq 2
check "bad zero-grad message" grep -q "unknown --zero-grad mode 'sometimes'" "$tmp/err"

"$bin" run --data "$tmp/nowhere" --out "$tmp/runs" >"$tmp/out" 2>"$tmp/err"
check "bad data exits 2" test $? -eq 2
check "bad data names it" grep -q "'$tmp/nowhere'" "$tmp/err"

"$bin" run --workers many --out "$tmp/runs" >"$tmp/out" 2>"$tmp/err"
check "bad workers exits 2" test $? -eq 2

"$bin" prepare --data "$fixture" "$tmp/png" >"$tmp/out" 2>"$tmp/err"
check "prepare exits 0" test $? -eq 0
check "prepare count" grep -q "^wrote 136 PNG files" "$tmp/out"
"$bin" run --data "$tmp/png" --steps 2 --workers auto --no-report --out "$tmp/runs" \
    >"$tmp/out" 2>"$tmp/err"
check "png run exits 0" test $? -eq 0
run_dir=$(sed -n 's/^run: //p' "$tmp/out")
check "png format" grep -q '"dataset_format": "png"' "$run_dir/summary.json"

"$bin" prepare --format png >"$tmp/out" 2>"$tmp/err"
check "prepare without OUT exits 2" test $? -eq 2
"$bin" prepare --format jpeg "$tmp/x" >"$tmp/out" 2>"$tmp/err"
check "prepare bad format exits 2" test $? -eq 2

[ $fail -eq 0 ] && echo "cli_train: all checks passed"
exit $fail
