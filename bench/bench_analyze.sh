#!/bin/sh
# Trace reader speed, side by side in one run on a generated Kineto-style trace of >= 800 MB:
# `gprof-train report` vs Python's json.load (target >= 30x), its peak RSS vs the file size
# (target <= 0.25x), and on .json.gz vs `gzip -dc F > /dev/null` (target <= 1.5x).
# `report` runs 3 times and its median counts: one ~2 s sample swings +-20% on a shared VM,
# where Python's ~50 s run averages that out. The new files are synced first, so that writeback
# of the ~1 GB just written does not run during the timings.
# usage: bench_analyze.sh BUILD_DIR [MEGABYTES]   (the trace goes to /tmp and is removed)
build=${1:-build-release}
mb=${2:-820}
bin=$build/bin/gprof-train
gen=$build/bench/gen_kineto_trace
[ -x "$gen" ] || gen=$(find "$build" -name gen_kineto_trace -type f | head -1)
tmp=${TMPDIR:-/tmp}/gp_bench_analyze.$$
trap 'rm -f "$tmp.json" "$tmp.json.gz"' EXIT
"$gen" "$tmp.json" "$mb" || exit 1
gzip -1 -c "$tmp.json" > "$tmp.json.gz"
sync
size=$(stat -c %s "$tmp.json")
now() { date +%s.%N; }
cat "$tmp.json" > /dev/null   # warm the page cache
runs=""
rss_kb=0
for i in 1 2 3; do
    t0=$(now); /usr/bin/time -f %M -o "$tmp.rss" "$bin" report "$tmp.json" > /dev/null || exit 1; t1=$(now)
    runs="$runs $(echo "$t1 - $t0" | bc -l)"
    r=$(cat "$tmp.rss"); [ "$r" -gt "$rss_kb" ] && rss_kb=$r
done
rm -f "$tmp.rss"
t_report=$(echo $runs | tr ' ' '\n' | sort -n | sed -n 2p)
t0=$(now); python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp.json"; t1=$(now)
t_py=$(echo "$t1 - $t0" | bc -l)
t0=$(now); gzip -dc "$tmp.json.gz" > /dev/null; t1=$(now)
t_gz=$(echo "$t1 - $t0" | bc -l)
t0=$(now); "$bin" report "$tmp.json.gz" > /dev/null || exit 1; t1=$(now)
t_rgz=$(echo "$t1 - $t0" | bc -l)
printf 'trace: %d MB (%d MB gzip), %d cores\n' $((size >> 20)) $(($(stat -c %s "$tmp.json.gz") >> 20)) "$(nproc)"
printf 'report .json runs:%s s\n' "$(printf ' %.2f' $runs)"
printf 'report .json:    %.2f s (%.0f MB/s, median of 3)   python json.load: %.2f s   speedup %.1fx (target >= 30x)\n' \
    "$t_report" "$(echo "$size / 1048576 / $t_report" | bc -l)" "$t_py" "$(echo "$t_py / $t_report" | bc -l)"
printf 'report peak RSS: %d MB = %.3fx the file (target <= 0.25x)\n' $((rss_kb / 1024)) \
    "$(echo "$rss_kb * 1024 / $size" | bc -l)"
printf 'report .json.gz: %.2f s   gzip -dc: %.2f s   ratio %.2fx (target <= 1.5x)\n' \
    "$t_rgz" "$t_gz" "$(echo "$t_rgz / $t_gz" | bc -l)"
