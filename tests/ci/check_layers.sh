#!/bin/sh
# analyze/'s layers depend one way (analyze/src/README.md): reader -> model -> rules -> compare, job.
# A file may include only headers of its own layer or of lower ones; compare and job are siblings
# and include neither each other. Layers are read from the includes: a private header by its folder
# ("reader/trace_int.h"), a public one (gp/<name>.h of analyze/include) by the table below. A folder
# of analyze/src or a public header that has no layer here fails the check, so a new one is placed.
# Usage: check_layers.sh [ANALYZE_DIR] (default analyze).
dir=${1:-analyze}
[ -d "$dir/src" ] && [ -d "$dir/include/gp" ] || { echo "error: no $dir/src or $dir/include/gp"; exit 2; }
# layer rank: lower layers first; equal ranks are siblings
layers="reader:1 model:2 rules:3 compare:4 job:4"
# analyze's public headers and the layer that owns each
public="trace:reader run_config:reader analysis:model report:model rules:rules compare:compare job:job"
status=0
for d in "$dir"/src/*/; do
    case " $layers" in *" $(basename "$d"):"*) ;; *)
        echo "error: $d is no layer of analyze: give it a rank in tests/ci/check_layers.sh"
        status=1 ;;
    esac
done
for h in "$dir"/include/gp/*.h; do
    case " $public" in *" $(basename "$h" .h):"*) ;; *)
        echo "error: $h has no layer: name its owner in tests/ci/check_layers.sh"
        status=1 ;;
    esac
done
for f in "$dir"/src/*/*.[ch] "$dir"/include/gp/*.h; do
    [ -e "$f" ] && grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f"
done | awk -v layers="$layers" -v public="$public" '
BEGIN {
    n = split(layers, l, " ")
    for (i = 1; i <= n; i++) { split(l[i], kv, ":"); rank[kv[1]] = kv[2] }
    n = split(public, p, " ")
    for (i = 1; i <= n; i++) { split(p[i], kv, ":"); pub[kv[1]] = kv[2] }
    status = 0
}
function fail(msg) { print "error: " msg; status = 1 }
# the layer of a source or header file by its path
function layer_of_file(path,    parts, k, name) {
    k = split(path, parts, "/")
    name = parts[k]; sub(/\.h$/, "", name)
    if (parts[k - 1] == "gp" && parts[k - 2] == "include") return name in pub ? pub[name] : ""
    return parts[k - 1] in rank ? parts[k - 1] : ""
}
{
    file = $0; sub(/:.*/, "", file)
    line = $0; sub(/^[^:]*:/, "", line); lineno = line; sub(/:.*/, "", lineno); sub(/^[^:]*:/, "", line)
    hdr = line; sub(/^[^"]*"/, "", hdr); sub(/".*/, "", hdr)
    from = layer_of_file(file)
    if (from == "") next
    to = ""
    if (hdr ~ /^gp\//) {
        name = substr(hdr, 4); sub(/\.h$/, "", name)
        if (name in pub) to = pub[name] # else common/ or the schema: below every layer
    } else if (hdr ~ /\//) {
        folder = hdr; sub(/\/.*/, "", folder)
        if (!(folder in rank)) { fail(file ":" lineno ": includes \"" hdr "\": " folder "/ is no layer"); next }
        to = folder
    }
    if (to == "" || to == from) next
    if (rank[to] < rank[from]) next
    fail(file ":" lineno ": " from "/ includes \"" hdr "\" of " to "/, " \
         (rank[to] == rank[from] ? "a sibling layer" : "a higher layer") \
         " (layers: reader -> model -> rules -> compare, job)")
}
END { exit status }' || status=1
[ $status -eq 0 ] && echo "layers ok"
exit $status
