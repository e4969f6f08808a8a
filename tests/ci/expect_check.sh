# Sourced by the planted-violation tests (test_check_*.sh). expect_run WANT PATTERN NAME CMD...:
# run CMD; WANT 0: it must pass; WANT 1: it must fail with output matching PATTERN. Counts
# failures in $fails and prints one ok/FAIL line.
expect_run() {
    want=$1 pattern=$2 name=$3
    shift 3
    out=$("$@" 2>&1)
    rc=$?
    if [ "$want" -eq 0 ] && [ $rc -ne 0 ]; then
        echo "FAIL $name: the check failed: $out"
        fails=$((fails + 1))
    elif [ "$want" -ne 0 ] && { [ $rc -eq 0 ] || ! printf '%s\n' "$out" | grep -q "$pattern"; }; then
        echo "FAIL $name: want an error matching '$pattern', got rc $rc: $out"
        fails=$((fails + 1))
    else
        echo "ok   $name"
    fi
}
