#!/bin/sh
# libprof: range push+pop cost next to a clock-only loop (linked API and NVTX, steady and in
# bursts of 10 K / 100 K / 1 M after idle; timed in the thread's CPU time), and the writer's
# throughput (plain and gzip) on 10 M and 20 M events: wall rate, the writer thread's CPU an
# event (independent of other load) next to the floor (the same bytes through write(2) / zlib
# alone), and peak memory (must not grow with N); and a step boundary's cost beside a range's
# (its scheduler read, which analyze counts as the profiler's cost: rules_cost.c STEP_SCHED_NS).
# usage: bench_prof.sh BUILD_DIR   (a Release build)
build=${1:-build-release}
bin=$build/bench
[ -x "$bin/bench_prof_range" ] || { echo "bench_prof: build $bin/bench_prof_range first"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin/bench_prof_range" 1000000 || exit 1
[ -x "$bin/bench_prof_step" ] && { "$bin/bench_prof_step" || exit 1; }
for fmt in plain gzip; do
    for n in 10000000 20000000; do
        "$bin/bench_prof_writer" $fmt $n "$out/t.json" || exit 1
        rm -f "$out/t.json"
    done
done
echo "default options (no waiting: record buffers grow while the writer is behind, limit"
echo "min(1 GiB, RAM/8)): 10 M ranges in a tight loop, gzip"
"$bin/bench_prof_writer" gzip 10000000 "$out/t.json" default || exit 1
rm -f "$out/t.json"
echo "targets: push+pop <= 40 ns, <= 1.6x the clock loop linked and <= 2.5x through NVTX, bursts"
echo "included; writer >= 5 M events/s plain, >= 1 M events/s gzip (wall; the"
echo "CPU-second rate is the ceiling when the writer has a core); same peak RSS for 10 M and 20 M"
