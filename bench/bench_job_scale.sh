#!/bin/sh
# `job` at scale, and `summarize` at `report`'s speed (issue 29). 1) 16,384 rank summaries
# written by bench/gen_summaries.py (20 steps, 3 all-reduces a step, rank 9000 late by 2 ms):
# `job` on them, wall time and peak RSS (targets < 10 s, < 1 GB), GT16 naming rank 9000.
# 2) One generated Kineto-style trace (bench/analyze/gen_kineto_trace, 200 MB): `summarize`
# against `report`, interleaved, medians of 5 of wall and of CPU time (user + sys; on a loaded
# VM the wall time mostly measures the other processes).
# usage: bench_job_scale.sh BUILD_DIR [RANKS] [MEGABYTES]   (the files go to /tmp, removed)
build=${1:-build-release}
ranks=${2:-16384}
mb=${3:-200}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bin/gprof-train
gen=$build/bench/gen_kineto_trace
[ -x "$gen" ] || gen=$(find "$build" -name gen_kineto_trace -type f | head -1)
tmp=${TMPDIR:-/tmp}/gp_bench_job_scale.$$
trap 'rm -rf "$tmp" "$tmp.json" "$tmp.out" "$tmp.rss"' EXIT
now() { date +%s.%N; }

python3 "$here/gen_summaries.py" "$tmp/s" --ranks "$ranks" --straggler $((ranks * 9 / 16)) || exit 1
sync
du=$(du -sm "$tmp/s" | cut -f1)
cat "$tmp/s"/* > /dev/null   # warm the page cache
t0=$(now)
/usr/bin/time -f '%M %U %S' -o "$tmp.rss" "$bin" job "$tmp/s" --format json > "$tmp.out" || exit 1
t1=$(now)
python3 - "$tmp.out" $((ranks * 9 / 16)) <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
f = doc["diagnose"]["traces"][0]["findings"][0]
ok = f["fired"] and f["evidence"]["rows"][0][0] == int(sys.argv[2])
print("job: %d ranks, %d collectives matched, GT16 %s rank %s" % (
    doc["n_ranks"], len(doc["collectives"]), "names" if ok else "MISSED",
    f["evidence"]["rows"][0][0] if f["evidence"]["rows"] else "-"))
sys.exit(0 if ok else 1)
PY
printf 'job on %d summaries (%d MB): %.2f s wall, %.2f s CPU (target < 10 s), peak RSS %d MB (target < 1024 MB), load %s\n' \
    "$ranks" "$du" "$(echo "$t1 - $t0" | bc -l)" "$(awk '{print $2 + $3}' "$tmp.rss")" \
    $(($(cut -d' ' -f1 "$tmp.rss") / 1024)) "$(cut -d' ' -f1 /proc/loadavg)"

"$gen" "$tmp.json" "$mb" > /dev/null || exit 1
cat "$tmp.json" > /dev/null
# wall and CPU (user + sys) of one command, appended to the variables named $1 and $2
timed() {
    w=$1 c=$2
    shift 2
    t0=$(now)
    /usr/bin/time -f '%U %S' -o "$tmp.rss" "$@" > /dev/null || exit 1
    t1=$(now)
    eval "$w=\"\$$w $(echo "$t1 - $t0" | bc -l)\""
    eval "$c=\"\$$c $(awk '{print $1 + $2}' "$tmp.rss")\""
}
rw="" rc="" sw="" sc=""
for i in 1 2 3 4 5; do
    timed rw rc "$bin" report "$tmp.json"
    timed sw sc "$bin" summarize "$tmp.json" -o "$tmp/one"
done
median5() { echo "$@" | tr ' ' '\n' | grep . | sort -n | sed -n 3p; }
printf 'one %d MB trace, medians of 5 interleaved: summarize %.2f s wall %.2f s CPU, report %.2f s wall %.2f s CPU: %.2fx wall, %.2fx CPU (target: the same speed); summary %d KB, load %s\n' \
    "$(($(stat -c %s "$tmp.json") >> 20))" "$(median5 $sw)" "$(median5 $sc)" "$(median5 $rw)" \
    "$(median5 $rc)" "$(echo "$(median5 $sw) / $(median5 $rw)" | bc -l)" \
    "$(echo "$(median5 $sc) / $(median5 $rc)" | bc -l)" "$(($(du -k "$tmp/one"/*.json | cut -f1)))" \
    "$(cut -d' ' -f1 /proc/loadavg)"
