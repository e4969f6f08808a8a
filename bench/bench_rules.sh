#!/bin/sh
# Cost of the rules engine, side by side in one run on the same generated Kineto-style trace:
# `gprof-train diagnose` vs `gprof-train report` (target: diagnose <= 1.2x report). Both read and
# analyse the trace; diagnose then runs the 16 rules, report the key-averages table. Best of 3.
# usage: bench_rules.sh BUILD_DIR [MEGABYTES]   (the trace goes to /tmp and is removed)
build=${1:-build-release}
mb=${2:-200}
bin=$build/bin/gprof-train
gen=$build/bench/gen_kineto_trace
[ -x "$gen" ] || gen=$(find "$build" -name gen_kineto_trace -type f | head -1)
[ -x "$gen" ] || { echo "bench_rules: gen_kineto_trace not built in $build"; exit 1; }
tmp=${TMPDIR:-/tmp}/gp_bench_rules.$$
trap 'rm -f "$tmp.json"' EXIT
"$gen" "$tmp.json" "$mb" > /dev/null || exit 1
cat "$tmp.json" > /dev/null # warm the page cache
now() { date +%s.%N; }
# best CMD...: the fastest of 3 runs, in seconds
best() {
    b=
    for i in 1 2 3; do
        t0=$(now)
        "$@" > /dev/null || return 1
        t=$(echo "$(now) - $t0" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
    done
    echo "$b"
}
t_report=$(best "$bin" report "$tmp.json") || exit 1
t_diag=$(best "$bin" diagnose "$tmp.json") || exit 1
t_json=$(best "$bin" diagnose --format json "$tmp.json") || exit 1
printf 'trace: %d MB, %d cores\n' $(($(stat -c %s "$tmp.json") >> 20)) "$(nproc)"
printf 'report: %.3f s   diagnose: %.3f s (%.2fx)   diagnose --format json: %.3f s (%.2fx)   target <= 1.2x\n' \
    "$t_report" "$t_diag" "$(echo "$t_diag / $t_report" | bc -l)" "$t_json" \
    "$(echo "$t_json / $t_report" | bc -l)"
