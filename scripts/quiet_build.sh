#!/bin/sh
# Build quietly for `make run`: the build's output goes to LOG and the terminal sees one progress
# line ("build: 42%", rewritten in place), then "build: done in 95 s"; a failed build prints LOG
# in full and exits with its status. VERBOSE=1 passes everything through, as does a LOG that
# cannot be written.
# Usage: quiet_build.sh LOG CMD [ARGS...]
log=$1
shift
if [ -n "$VERBOSE" ] || ! : 2>/dev/null >"$log"; then
    exec "$@"
fi
start=$(date +%s)
"$@" >"$log" 2>&1 &
pid=$!
if [ -t 2 ]; then
    while kill -0 "$pid" 2>/dev/null; do
        pct=$(tail -c 4096 "$log" | grep -o '^\[ *[0-9]*%\]' | tail -n 1 | tr -d '[] ')
        printf '\rbuild: %s ' "${pct:-starting}" >&2
        sleep 1
    done
    printf '\r' >&2
fi
wait "$pid"
code=$?
if [ "$code" -ne 0 ]; then
    echo "build: failed (exit $code); its output ($log):" >&2
    cat "$log" >&2
    exit "$code"
fi
echo "build: done in $(($(date +%s) - start)) s (its output is in $log; VERBOSE=1 shows it)" >&2
