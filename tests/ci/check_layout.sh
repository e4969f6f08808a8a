#!/bin/sh
# Layout rules (style guide 3.1): no reaching into another folder with "../" includes, analyze and
# viewer-export never include libprof's API or CUDA, and no library writes to stdout by printf.
root=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
cd "$root" || exit 2
status=0
if grep -rn --include='*.[ch]' --include='*.cu' '#include "\.\./' common libprof trainer analyze viewer-export cli 2>/dev/null; then
    echo "error: '#include \"../' crosses a module boundary; use the public include/gp/ headers"
    status=1
fi
if grep -rnE --include='*.[ch]' '#include [<"](gp/prof\.h|cuda|cupti|cudnn|cublas)' analyze viewer-export 2>/dev/null; then
    echo "error: analyze/ and viewer-export/ must not depend on libprof's API or CUDA"
    status=1
fi
# Libraries write only to streams they are handed (a FILE * parameter) or through the log sink.
if grep -rnE --include='*.[ch]' '(^|[^a-z_])(printf|puts|putchar)\(|[^a-z_]stdout[^a-z_]' common/src libprof/src analyze/src viewer-export/src 2>/dev/null; then
    echo "error: libraries never print to stdout (style guide 3.5)"
    status=1
fi
# The CLI reads every trace through one pipeline (trace_pipeline, cli/trace_jobs.c).
if grep -rnE --include='*.c' '(gp_trace_open|gp_analysis_run)\(' cli 2>/dev/null | grep -v '^cli/trace_jobs\.c:'; then
    echo "error: cli/ opens and analyses traces only through trace_pipeline (cli/trace_jobs.h)"
    status=1
fi
# analyze/'s layers depend one way: reader -> model -> rules -> compare, job (analyze/src/README.md)
sh "$here/check_layers.sh" analyze || status=1
[ $status -eq 0 ] && echo "layout ok"
exit $status
