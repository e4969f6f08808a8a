#!/bin/sh
# Cost of the rules engine, side by side in one run on the same generated Kineto-style trace:
# `gprof-train diagnose` vs `gprof-train report` (target: diagnose <= 1.2x report). Both read and
# analyse the trace; diagnose then runs the 16 rules, report the key-averages table.
# 11 rounds, each running report, diagnose and diagnose --format json back to back; a round's
# ratios compare runs made seconds apart, so the medians of the ratios cancel the drift of a
# shared VM's speed (one 0.4 s run swings +-20% here; the best of each command picked from
# different moments did not cancel it).
# usage: bench_rules.sh BUILD_DIR [MEGABYTES]   (the trace goes to /tmp and is removed)
build=${1:-build-release}
mb=${2:-200}
bin=$build/bin/gprof-train
gen=$build/bench/gen_kineto_trace
[ -x "$gen" ] || gen=$(find "$build" -name gen_kineto_trace -type f | head -1)
[ -x "$gen" ] || { echo "bench_rules: gen_kineto_trace not built in $build"; exit 1; }
tmp=${TMPDIR:-/tmp}/gp_bench_rules.$$
trap 'rm -f "$tmp.json" "$tmp.t" "$tmp.rounds"' EXIT
"$gen" "$tmp.json" "$mb" > /dev/null || exit 1
sync
cat "$tmp.json" > /dev/null # warm the page cache
# run CMD...: prints "wall user" in seconds.
run() {
    /usr/bin/time -f '%e %U' -o "$tmp.t" "$@" > /dev/null || return 1
    cat "$tmp.t"
}
: > "$tmp.rounds"
for i in 1 2 3 4 5 6 7 8 9 10 11; do
    r=$(run "$bin" report "$tmp.json") || exit 1
    d=$(run "$bin" diagnose "$tmp.json") || exit 1
    j=$(run "$bin" diagnose --format json "$tmp.json") || exit 1
    echo "$r $d $j" >> "$tmp.rounds" # rw ru dw du jw ju
done
# median of column expression $1 over the rounds
med() { awk "{ print $1 }" "$tmp.rounds" | sort -g | sed -n 6p; }
printf 'trace: %d MB, %d cores, load %s, 11 rounds (medians)\n' \
    $(($(stat -c %s "$tmp.json") >> 20)) "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)"
printf 'wall: report %.2f s, diagnose %.2f s (%.2fx), diagnose --format json %.2f s (%.2fx)\n' \
    "$(med '$1')" "$(med '$3')" "$(med '$3 / $1')" "$(med '$5')" "$(med '$5 / $1')"
printf 'user: report %.2f s, diagnose %.2f s (%.2fx), diagnose --format json %.2f s (%.2fx)   target <= 1.2x\n' \
    "$(med '$2')" "$(med '$4')" "$(med '$4 / $2')" "$(med '$6')" "$(med '$6 / $2')"
