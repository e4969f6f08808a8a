#!/bin/sh
# Run one golden CLI case: BIN CASE_DIR. CASE_DIR/args holds one argument per line (run from
# CASE_DIR, so inputs are relative); expected.stdout, expected.stderr and expected.exit hold what
# must come back (stderr exactly: its errors, warnings and hints are part of the interface).
# GP_UPDATE_GOLDEN=1 rewrites the expected files instead of comparing (review the diff).
# Where stderr holds what changes from run to run (a path outside the case, a time), an optional
# CASE_DIR/stderr.sed holds sed expressions that stand it in, applied before both (e.g.
# `s/ in [0-9.]* s$/ in <T> s/`); the case's own absolute path always reads <case>.
# A case with expected.glob instead of expected.stdout is a glob golden: `...` lines stand for
# quiet findings (glob_match.py), so a new rule that stays quiet leaves it unchanged.
bin=$1
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
cd "$dir" || exit 2
# optional CASE_DIR/requires: input paths (one a line, relative to CASE_DIR); skip (77) if absent
if [ -f requires ]; then
    while IFS= read -r need || [ -n "$need" ]; do
        [ -e "$need" ] || { echo "skipped: $need is absent"; exit 77; }
    done < requires
fi
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err" "$err.n"' EXIT
# read args one per line into the positional parameters
set --
while IFS= read -r line || [ -n "$line" ]; do
    set -- "$@" "$line"
done < args
"$bin" "$@" > "$out" 2> "$err"
code=$?
case_abs=$(pwd)
# stderr with the case's absolute path as <case> and the case's own stand-ins (stderr.sed)
sed -e "s|$case_abs|<case>|g" "$err" > "$err.n"
if [ -f stderr.sed ]; then
    sed -f stderr.sed "$err.n" > "$err" && cp "$err" "$err.n"
fi
if [ -n "$GP_UPDATE_GOLDEN" ]; then
    if [ -f expected.glob ]; then
        python3 "$here/glob_match.py" "$out" expected.glob --update
    else
        cp "$out" expected.stdout
    fi
    cp "$err.n" expected.stderr
    echo "$code" > expected.exit
    echo "updated $dir"
    exit 0
fi
status=0
want=$(cat expected.exit)
if [ "$code" != "$want" ]; then
    echo "exit code: got $code, expected $want"
    status=1
fi
if [ -f expected.glob ]; then
    if ! python3 "$here/glob_match.py" "$out" expected.glob; then
        echo "stdout does not match $dir/expected.glob (GP_UPDATE_GOLDEN=1 to regenerate)"
        status=1
    fi
elif ! diff -u expected.stdout "$out"; then
    echo "stdout differs from $dir/expected.stdout (GP_UPDATE_GOLDEN=1 to regenerate)"
    status=1
fi
if [ ! -f expected.stderr ]; then
    echo "no $dir/expected.stderr (GP_UPDATE_GOLDEN=1 to write it); stderr was:"
    cat "$err.n"
    status=1
elif ! diff -u expected.stderr "$err.n"; then
    echo "stderr differs from $dir/expected.stderr (GP_UPDATE_GOLDEN=1 to regenerate)"
    status=1
fi
exit $status
