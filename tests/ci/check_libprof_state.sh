#!/bin/sh
# libprof's process-global state lives in session.c only (style guide 3.1): every other object
# file of gp_prof has nothing in .bss or .data (constant tables go to .rodata/.data.rel.ro, the
# thread-local `self` to .tbss). NVTX3's own header-defined globals (nvtx*, InitializeInjection*)
# are exempt: they come from NVIDIA's header, not from us.
dir=${1:?usage: check_libprof_state.sh OBJECT_DIR}
n=0
status=0
for o in "$dir"/*.o; do
    [ -e "$o" ] || continue
    n=$((n + 1))
    case $(basename "$o") in session.c.o) continue ;; esac
    found=$(objdump -t "$o" | awk '$3 == "O" && $4 ~ /^\.(bss|data)(\.|$)/ && $4 !~ /rel\.ro/ {print $NF}' |
        grep -vE '^(nvtx|InitializeInjectionNvtx)')
    if [ -n "$found" ]; then
        echo "error: $(basename "$o" .o) keeps process-global state outside session.c:" $found
        status=1
    fi
done
[ "$n" -gt 0 ] || { echo "error: no object files in $dir"; exit 2; }
[ $status -eq 0 ] && echo "libprof state ok: $n objects"
exit $status
