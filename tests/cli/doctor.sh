#!/bin/sh
# `gprof-train doctor`: every line a verdict (ok / note / problem, hints under them), the exit code
# agreeing with the verdicts, and on a machine without the NVIDIA driver a plain "no NVIDIA
# driver". LD_LIBRARY_PATH may point at a simulated driver (gpu-sim); the checks hold for both.
# With FAKE_LIB_DIR (issue 26), against a fake libcuda.so.1 (tests/cli/fake_libcuda.c) instead: a
# driver whose cuInit crashes is a problem line, with the lines before and after it kept (doctor
# died with exit 139); a GPU name that fills the buffer with no NUL is printed cut, not read past.
# Usage: doctor.sh BIN [FAKE_LIB_DIR]
bin=$1
lib=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # check NAME COND...
    name=$1
    shift
    if ! "$@"; then
        echo "FAIL: $name"
        fail=1
    fi
}

fake_driver() {
    [ -e "$lib/libcuda.so.1" ] || { echo "skipped: no $lib/libcuda.so.1 (build gp_fake_cuda)"; exit 77; }

    # handle_segv=0: under ASan the probe child dies of the signal, as it does in a plain build
    LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_CUDA=crash \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" "$bin" doctor \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    cat "$tmp/out" "$tmp/err"
    check "a crashing driver: exit 2 (was 139)" test $rc -eq 2
    check "the build line kept" grep -Eq '^(ok|note)  *build ' "$tmp/out"
    check "the crash named" grep -q '^problem  *driver  *the driver (cuInit or a device query) crashed while it was probed (signal 11, SIGSEGV)' "$tmp/out"
    check "the checks after it" grep -q '^ok  *libprof ' "$tmp/out"
    check "the summary" grep -q '^GPU profiling is not possible here' "$tmp/out"

    LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_CUDA=longname "$bin" doctor \
        >"$tmp/out" 2>"$tmp/err"
    cat "$tmp/out" "$tmp/err"
    x255=$(printf '%255s' '' | tr ' ' X)
    check "a name with no NUL is cut at the buffer" grep -q "^[a-z]*  *gpu 0  *$x255, compute capability 9.0" "$tmp/out"
    check "nothing on stderr" test ! -s "$tmp/err"
    exit $fail
}
[ -n "$lib" ] && fake_driver

"$bin" doctor >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
check "exit 0 or 2" test $rc -eq 0 -o $rc -eq 2
check "nothing on stderr" test ! -s "$tmp/err"
check "every line is a verdict, a hint or the summary" sh -c \
    "grep -v -E '^(ok|note|problem) +[a-z0-9 ]+ +[^ ]|^ +hint: |^(GPU profiling is not possible|ready to profile)' '$tmp/out' | grep -q . && exit 1 || exit 0"
problems=$(grep -c '^problem ' "$tmp/out")
if [ $rc -eq 2 ]; then
    check "exit 2 names a problem" test "$problems" -gt 0
else
    check "exit 0 has no problem" test "$problems" -eq 0
fi
check "the build line" grep -q '^ok  *build  *gprof-train \|^note  *build ' "$tmp/out"
check "the profiler library" grep -q '^ok  *libprof .*libgp_prof.so' "$tmp/out"
# Without a loadable libcuda.so.1 the driver line says so plainly.
if ! python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
    check "no driver said plainly" grep -q '^problem  *driver  *no NVIDIA driver' "$tmp/out"
    check "no driver exits 2" test $rc -eq 2
fi

"$bin" doctor extra >"$tmp/out" 2>"$tmp/err"
check "an argument exits 2" test $? -eq 2
check "an argument is named" grep -q "unexpected argument 'extra'" "$tmp/err"
"$bin" doctor --help >"$tmp/out" 2>&1
check "--help exits 0" test $? -eq 0
check "--help says the exit codes" grep -q "Exit 0 when nothing blocks" "$tmp/out"

[ $fail -eq 0 ] && echo "doctor: all checks passed"
exit $fail
