#!/bin/sh
# Run each libFuzzer target in BUILD for SECONDS, starting from (and growing) its seed corpus.
build=$1
secs=${2:-60}
status=0
for f in "$build"/tests/fuzz_*; do
    [ -x "$f" ] || continue
    name=$(basename "$f")
    corpus=tests/fuzz/corpus/${name#fuzz_}
    seeds=$corpus
    # the reader's test traces seed it too, from where the tests keep them (not a copy)
    [ "$name" = fuzz_trace_read ] && seeds="$corpus tests/data/traces"
    work=$(mktemp -d)
    echo "== $name for ${secs}s (seeds: $seeds)"
    # shellcheck disable=SC2086
    "$f" -max_total_time="$secs" -rss_limit_mb=4096 "$work" $seeds || status=1
    rm -rf "$work"
done
exit $status
