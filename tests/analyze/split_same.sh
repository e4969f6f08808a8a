#!/bin/sh
# A plain trace read on several threads (traceEvents cut at event boundaries, parts merged) must
# give byte-identical report, report --format json and diagnose output to the one-thread read
# (and the mapped read to the streaming one),
# and the split must really happen on a generated trace. usage: split_same.sh BIN GEN TRACE...
bin=$1
gen=$2
shift 2
tmp=${TMPDIR:-/tmp}/gp_split_same.$$
trap 'rm -f "$tmp".*' EXIT
fail=0
"$gen" "$tmp.gen.json" 3 > /dev/null || { echo "cannot generate a trace"; exit 1; }
run() { # THREADS OUT CMD ARGS...
    th=$1 out=$2
    shift 2
    nomap=
    [ "$th" = read ] && th=1 nomap=1 # the streaming read(2) path instead of mmap
    GP_TRACE_NO_MMAP=$nomap GP_TRACE_THREADS=$th GP_TRACE_SPLIT_MIN=0 "$bin" "$@" > "$out" 2> "$out.err"
    echo "exit $?" >> "$out"
    cat "$out.err" >> "$out"
}
for f in "$@" "$tmp.gen.json"; do
    for cmd in "report -n 0" "report --format json" "diagnose"; do
        run 1 "$tmp.ref" $cmd "$f"
        for th in 2 3 8 read; do
            run $th "$tmp.out" $cmd "$f"
            if ! cmp -s "$tmp.ref" "$tmp.out"; then
                echo "FAIL: '$cmd $f' differs with $th threads:"
                diff "$tmp.ref" "$tmp.out" | head -20
                fail=1
            fi
        done
    done
done
GP_LOG=debug GP_TRACE_THREADS=2 GP_TRACE_SPLIT_MIN=0 "$bin" report "$tmp.gen.json" 2>&1 > /dev/null |
    grep -Eq "traceEvents read in ([3-9]|1[0-7]) parts on 2 threads, all merged" || { echo "FAIL: no split"; fail=1; }
[ $fail = 0 ] && echo "ok: split and one-thread reads agree on $# fixtures and a generated trace"
exit $fail
