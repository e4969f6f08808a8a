#!/bin/sh
# test_html_chromium.sh GPROF_TRAIN TRACE WORK_DIR [BASE]: export TRACE as HTML (with BASE, the
# page of `compare BASE TRACE --format html` instead; TRACE a folder of rank traces: the page of
# `job TRACE --html`), check the file is self-contained, load it in headless Chromium with
# console logging on, and fail on any console message (errors, CSP
# refusals) or a blank screenshot; then check that a click on a sortable table's header sorts
# it (--dump-dom). A canary page proves console messages are captured. Skips (77) only when
# chromium is not installed.
bin=$1
trace=$2
work=$3
base=$4
here=$(cd "$(dirname "$0")" && pwd)
chromium=$(command -v chromium || command -v chromium-browser)
if [ -z "$chromium" ]; then
    echo "SKIP: chromium is not installed (scripts/deps.sh installs Debian's chromium)"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 2
html="$work/report.html"
if [ -d "$trace" ]; then # a job's rank traces: its Distributed view
    "$bin" job "$trace" --html "$html" >/dev/null || { echo "FAIL: job --html failed"; exit 1; }
elif [ -n "$base" ]; then
    "$bin" compare "$base" "$trace" --format html >"$html" || {
        echo "FAIL: compare --format html failed"
        exit 1
    }
else
    "$bin" export "$trace" --html "$html" || { echo "FAIL: export --html failed"; exit 1; }
fi

# self-contained: no external references of any kind, inline scripts only, each allowed by its
# hash in the Content-Security-Policy
python3 "$here/html_sort_check.py" self "$html" || {
    echo "FAIL: the report references something outside itself, or a script the CSP refuses"
    exit 1
}

shot() { # shot PAGE PNG LOG
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$work/profile" --enable-logging=stderr --v=0 --hide-scrollbars \
        --window-size=1200,2000 --virtual-time-budget=3000 --screenshot="$2" "file://$1" \
        >/dev/null 2>"$3"
}

printf '<html><body><script>console.error("gp-canary")</script></body></html>' >"$work/canary.html"
shot "$work/canary.html" "$work/canary.png" "$work/canary.log"
if ! grep -q 'CONSOLE.*gp-canary' "$work/canary.log"; then
    echo "FAIL: chromium console messages are not captured; this test would see nothing"
    exit 1
fi

shot "$html" "$work/report.png" "$work/report.log" || { echo "FAIL: chromium failed"; exit 1; }
if grep -nE 'CONSOLE|Uncaught|Refused to' "$work/report.log"; then
    echo "FAIL: console messages while loading the report"
    exit 1
fi
[ -s "$work/report.png" ] || { echo "FAIL: no screenshot"; exit 1; }
python3 "$here/png_variety.py" "$work/report.png" 12 3 || exit 1
# a click on a sortable table's header sorts it (the page's script, run by Chromium)
if grep -q 'table class="sortable"' "$html"; then
    python3 "$here/html_sort_check.py" click "$html" "$work/click.html" || exit 1
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$work/profile" --virtual-time-budget=3000 --dump-dom \
        "file://$work/click.html" >"$work/click.dom" 2>"$work/click.log" || {
        echo "FAIL: chromium --dump-dom failed"
        exit 1
    }
    python3 "$here/html_sort_check.py" sorted "$html" "$work/click.dom" || exit 1
fi
echo "ok: $html loads with no console messages; screenshot $work/report.png"
