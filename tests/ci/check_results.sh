#!/bin/sh
# analyze/'s one results convention (analyze/src/README.md): a fallible function returns gp_status
# (gp/status.h), a "none" or "not found" has a named constant. Fails on a bare `return -1` and on
# a name of the vocabularies gp_status replaced (LEX_*, ANALYSIS_OK/NOMEM/BROKEN, BUILD_ID_*).
# Usage: check_results.sh ANALYZE_SRC_DIR
src=${1:?usage: check_results.sh ANALYZE_SRC_DIR}
[ -d "$src" ] || { echo "error: no folder $src"; exit 2; }
status=0
if grep -rnE --include='*.[ch]' 'return[[:space:]]*\(?[[:space:]]*-[[:space:]]*1[[:space:]]*\)?[[:space:]]*;' "$src"; then
    echo "error: a bare 'return -1' in analyze/: return a gp_status (GP_ENOMEM, GP_EPARSE, ...),"
    echo "       or a named constant where -1 means 'none' (analyze/src/README.md, Results)"
    status=1
fi
if grep -rnE --include='*.[ch]' '\b(LEX_[A-Z_]+|ANALYSIS_(OK|NOMEM|BROKEN)|BUILD_ID_[A-Z_]+)\b' "$src"; then
    echo "error: a status name of a replaced vocabulary: use gp_status (GP_OK, GP_MORE, GP_DECLINED,"
    echo "       GP_EPARSE, GP_ENOMEM, ...)"
    status=1
fi
[ $status -eq 0 ] && echo "results ok"
exit $status
