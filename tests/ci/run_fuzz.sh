#!/bin/sh
# Run each libFuzzer target in BUILD for SECONDS, starting from (and growing) its seed corpus.
build=$1
secs=${2:-60}
status=0
for f in "$build"/tests/fuzz_*; do
    [ -x "$f" ] || continue
    name=$(basename "$f")
    corpus=tests/fuzz/corpus/${name#fuzz_}
    work=$(mktemp -d)
    echo "== $name for ${secs}s (seeds: $corpus)"
    "$f" -max_total_time="$secs" -rss_limit_mb=4096 "$work" "$corpus" || status=1
    rm -rf "$work"
done
exit $status
