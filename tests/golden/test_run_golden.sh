#!/bin/sh
# run_golden.sh compares stderr: a case whose command's stderr matches expected.stderr passes;
# another message, a missing expected.stderr, or a changed exit code fails; the case's absolute
# path reads <case>; stderr.sed stands in what changes from run to run; GP_UPDATE_GOLDEN=1
# writes expected.stderr. The command is a stand-in script, so this needs no build.
unset GP_UPDATE_GOLDEN # `GP_UPDATE_GOLDEN=1 ctest -R golden` runs this too: it updates only its own case
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fails=0
bin="$tmp/cmd"
cat >"$bin" <<'CMD'
#!/bin/sh
echo "out $1"
echo "gprof-train: error: '$(pwd)/x.json': took $2 s" >&2
exit 2
CMD
chmod +x "$bin"
case_dir="$tmp/case"
mkdir "$case_dir"
printf 'a\n0.25\n' >"$case_dir/args"
printf 's/took [0-9.]* s/took <T> s/\n' >"$case_dir/stderr.sed"
run() { sh "$here/run_golden.sh" "$bin" "$case_dir" >"$tmp/log" 2>&1; }
expect() { # WANT_RC NAME
    run
    rc=$?
    if [ "$rc" -ne "$1" ]; then
        echo "FAIL $2: run_golden.sh returned $rc, want $1:"
        cat "$tmp/log"
        fails=$((fails + 1))
    else
        echo "ok   $2"
    fi
}
printf 'out a\n' >"$case_dir/expected.stdout"
echo 2 >"$case_dir/expected.exit"
expect 1 "no expected.stderr fails"
GP_UPDATE_GOLDEN=1 run
want="gprof-train: error: '<case>/x.json': took <T> s"
[ "$(cat "$case_dir/expected.stderr")" = "$want" ] || {
    echo "FAIL update wrote: $(cat "$case_dir/expected.stderr"), want: $want"
    fails=$((fails + 1))
}
expect 0 "stderr as expected"
printf 'a\n0.5\n' >"$case_dir/args"
expect 0 "a time stderr.sed stands in"
echo "gprof-train: error: another message" >"$case_dir/expected.stderr"
expect 1 "another stderr message fails"
grep -q "stderr differs from" "$tmp/log" || { echo "FAIL no 'stderr differs' line"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "run_golden.sh checks stderr"
exit $((fails > 0))
