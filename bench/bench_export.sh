#!/bin/sh
# Perfetto export speed and size, side by side in one run on a generated Kineto-style trace
# (default 200 MB): the native protobuf writer against the Chrome JSON writer on the same
# analysed trace (bench_export times the exporters alone, median of 5 each; target: protobuf
# no slower, at most half the size), then the whole `gprof-train export` command for each
# format with its peak RSS (protobuf streams: no more memory than the JSON export).
# usage: bench_export.sh BUILD_DIR [MEGABYTES]   (files go to /tmp and are removed)
build=${1:-build-release}
mb=${2:-200}
bin=$build/bin/gprof-train
gen=$(find "$build" -name gen_kineto_trace -type f | head -1)
bex=$(find "$build" -name bench_export -type f | head -1)
[ -x "$gen" ] && [ -x "$bex" ] || { echo "build gen_kineto_trace and bench_export first" >&2; exit 1; }
tmp=${TMPDIR:-/tmp}/gp_bench_export.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp/trace.json" "$mb" > /dev/null || exit 1
sync
printf 'trace: %d MB, %d cores\n' $(($(stat -c %s "$tmp/trace.json") >> 20)) "$(nproc)"
"$bex" "$tmp/trace.json" "$tmp" 5 || exit 1
for out in out.json out.pftrace; do
    /usr/bin/time -f '%e s %M' -o "$tmp/time" "$bin" export "$tmp/trace.json" --perfetto "$tmp/$out" \
        > /dev/null || exit 1
    read -r secs _ kb < "$tmp/time"
    printf 'export --perfetto %-12s %6.2f s in all (read, analyse, diagnose, write), peak RSS %d MB\n' \
        "$out" "$secs" $((kb / 1024))
done
