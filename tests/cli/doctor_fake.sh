#!/bin/sh
# `gprof-train doctor` against a fake libcuda.so.1 (tests/cli/fake_libcuda.c, issue 26): a driver
# whose cuInit crashes is a problem line, with the lines before and after it kept (doctor died
# with exit 139); a GPU name that fills the buffer with no NUL is printed cut, not read past.
# Usage: doctor_fake.sh BIN FAKE_LIB_DIR
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
[ -e "$lib/libcuda.so.1" ] || { echo "skipped: no $lib/libcuda.so.1 (build gp_fake_cuda)"; exit 77; }

LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_CUDA=crash "$bin" doctor \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
check "a crashing driver: exit 2 (was 139)" test $rc -eq 2
check "the build line kept" grep -q '^ok  *build ' "$tmp/out"
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
