#!/bin/sh
# analyze/'s layers depend one way at link time too (check_layers.sh reads the includes; this reads
# the library, so a function declared in the wrong layer's header is caught as well): an object of
# analyze/src/<layer>/ may use only symbols defined in its own layer or lower ones.
# Usage: check_layer_symbols.sh ANALYZE_SRC_DIR LIBGP_ANALYZE_A
src=${1:?usage: check_layer_symbols.sh ANALYZE_SRC_DIR LIBGP_ANALYZE_A}
lib=${2:?usage: check_layer_symbols.sh ANALYZE_SRC_DIR LIBGP_ANALYZE_A}
layers="reader:1 model:2 rules:3 compare:4 job:4" # as in check_layers.sh
[ -f "$lib" ] || { echo "error: no library $lib"; exit 2; }
# each source's layer by its folder ("trace.c reader"), then the library's symbols
{
    for c in "$src"/*/*.c; do
        [ -e "$c" ] && echo "L $(basename "$c").o $(basename "$(dirname "$c")")"
    done
    nm -A "$lib" | awk '{n = split($1, p, ":"); o = p[n - 1]}
        $2 == "U" {print "U", o, $3; next}
        NF == 3 && $2 ~ /^[TDRBC]$/ {print "D", o, $3}'
} | awk -v layers="$layers" -v lib="$lib" '
BEGIN { k = split(layers, a, " "); for (i = 1; i <= k; i++) { split(a[i], kv, ":"); rank[kv[1]] = kv[2] } }
$1 == "L" { layer[$2] = $3; next }
$1 == "D" { def[$3] = $2; objs[$2] = 1; next }
{ use[++u] = $2 " " $3; objs[$2] = 1 }
END {
    status = 0
    for (o in objs)
        if (!(o in layer)) { print "error: " o " has no source in a layer folder"; status = 1 }
    for (i = 1; i <= u; i++) {
        split(use[i], x, " ")
        if (!(x[2] in def)) continue
        from = layer[x[1]]; to = layer[def[x[2]]]
        if (from == to || rank[to] < rank[from]) continue
        print "error: " from "/" x[1] " uses " x[2] " of " to "/" def[x[2]] \
              " (layers: reader -> model -> rules -> compare, job)"
        status = 1
    }
    if (!length(objs)) { print "error: no objects in " lib; status = 2 }
    if (status == 0) print "layer symbols ok: " length(objs) " objects"
    exit status
}'
