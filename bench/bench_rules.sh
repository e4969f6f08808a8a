#!/bin/sh
# Cost of the rules engine, side by side in one run on the same generated Kineto-style trace:
# `gprof-train diagnose` vs `gprof-train report` (target: diagnose <= 1.2x report). Both read and
# analyse the trace; diagnose then runs the 16 rules, report the key-averages table. Best of 5.
# usage: bench_rules.sh BUILD_DIR [MEGABYTES]   (the trace goes to /tmp and is removed)
build=${1:-build-release}
mb=${2:-200}
bin=$build/bin/gprof-train
gen=$build/bench/gen_kineto_trace
[ -x "$gen" ] || gen=$(find "$build" -name gen_kineto_trace -type f | head -1)
[ -x "$gen" ] || { echo "bench_rules: gen_kineto_trace not built in $build"; exit 1; }
tmp=${TMPDIR:-/tmp}/gp_bench_rules.$$
trap 'rm -f "$tmp.json" "$tmp.t"' EXIT
"$gen" "$tmp.json" "$mb" > /dev/null || exit 1
cat "$tmp.json" > /dev/null # warm the page cache
# Interleaved rounds; the best wall and user-CPU time of each command (user time is what a busy
# machine disturbs least). run CMD...: prints "wall user" in seconds.
run() {
    /usr/bin/time -f '%e %U' -o "$tmp.t" "$@" > /dev/null || return 1
    cat "$tmp.t"
}
min() { if [ -z "$1" ] || [ "$(echo "$2 < $1" | bc -l)" = 1 ]; then echo "$2"; else echo "$1"; fi; }
rw= ru= dw= du= jw= ju=
for i in 1 2 3 4 5; do
    set -- $(run "$bin" report "$tmp.json") || exit 1; rw=$(min "$rw" $1); ru=$(min "$ru" $2)
    set -- $(run "$bin" diagnose "$tmp.json") || exit 1; dw=$(min "$dw" $1); du=$(min "$du" $2)
    set -- $(run "$bin" diagnose --format json "$tmp.json") || exit 1; jw=$(min "$jw" $1); ju=$(min "$ju" $2)
done
rm -f "$tmp.t"
printf 'trace: %d MB, %d cores, load %s\n' $(($(stat -c %s "$tmp.json") >> 20)) "$(nproc)" \
    "$(cut -d' ' -f1 /proc/loadavg)"
printf 'wall: report %.2f s, diagnose %.2f s (%.2fx), diagnose --format json %.2f s (%.2fx)\n' \
    "$rw" "$dw" "$(echo "$dw / $rw" | bc -l)" "$jw" "$(echo "$jw / $rw" | bc -l)"
printf 'user: report %.2f s, diagnose %.2f s (%.2fx), diagnose --format json %.2f s (%.2fx)   target <= 1.2x\n' \
    "$ru" "$du" "$(echo "$du / $ru" | bc -l)" "$ju" "$(echo "$ju / $ru" | bc -l)"
