#!/bin/sh
# The OPT_* macros are typed (cli/opt.h): opt_types.c compiles with each option's variable of the
# type its parser writes, and fails to compile with each WRONG_* case (another type).
# Usage: opt_types.sh CC CLI_DIR
cc=${1:?usage: opt_types.sh CC CLI_DIR}
cli=${2:?usage: opt_types.sh CC CLI_DIR}
src="$(cd "$(dirname "$0")" && pwd)/opt_types.c"
fails=0
if ! "$cc" -std=c11 -fsyntax-only -I"$cli" "$src"; then
    echo "FAIL: the right types do not compile"
    fails=$((fails + 1))
fi
for case in BOOL STR INT DOUBLE LIST; do
    if "$cc" -std=c11 -fsyntax-only -I"$cli" -DWRONG_$case "$src" 2>/dev/null; then
        echo "FAIL: OPT_$case with a variable of another type compiles"
        fails=$((fails + 1))
    else
        echo "ok   OPT_$case rejects another type"
    fi
done
exit $((fails > 0))
