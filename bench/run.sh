#!/bin/sh
# Run every benchmark script bench/bench_*.sh with the build directory as $1.
build=${1:-build-release}
here=$(cd "$(dirname "$0")" && pwd)
status=0
found=0
for b in "$here"/bench_*.sh; do
    [ -e "$b" ] || continue
    found=1
    echo "== $(basename "$b" .sh)"
    sh "$b" "$build" || status=1
done
[ $found -eq 1 ] || echo "no benchmarks yet"
exit $status
