#!/bin/sh
# Lists the circles of calls between the library's source files: groups of
# files of host/ (and of the harness, tools/harness) that reach each other through their symbols (file A uses a
# symbol that B defines, and B, perhaps through others, one that A defines).
# Read from `nm` of the area object files of a configured and built tree, so
# it sees calls through headers and macros as the linker does.
#
#   scripts/circles.sh [build-dir]          circles, with the symbols of each edge
#   scripts/circles.sh [build-dir] --edges  every file-to-file edge ("a -> b: sym")
#
# build-dir defaults to build. Exits 1 when a circle is found (0 otherwise),
# so a check can run it (CTest test_circles). Needs nm and python3.
#
# One exception, by design (issue 28 item 5): the codec ops table. codec.c
# lists every codec's ops (tdm_codec_<name>_ops, tdm_codec_by_id) and the
# codecs use codec.c's shared helpers; a codec is one file plus its row in
# the table. Those references, codec.c to a tdm_codec_*_ops symbol, are not
# counted as calls (--edges still prints them).
set -eu
dir=${1:-build}
mode=${2:-}
[ -d "$dir/CMakeFiles" ] || { echo "circles.sh: $dir is not a built tree" >&2; exit 2; }
src_root=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$dir/CMakeCache.txt")
objs=$(find "$dir/CMakeFiles" \( -path '*/tdm_*.dir/host/*' -o -path '*/tdm_harness.dir/tools/*' \) \
            -name '*.o' | grep -v '/tdm_layer_' | sort)
[ -n "$objs" ] || { echo "circles.sh: no area objects under $dir" >&2; exit 2; }
for o in $objs; do
    src=${o#*.dir/}
    src=${src%.o}
    # an object left behind by a source since moved or removed
    [ -z "$src_root" ] || [ -f "$src_root/$src" ] || continue
    nm "$o" | awk -v f="$src" '$1 == "U" {print f, "U", $2; next}
                               NF == 3 && $2 ~ /[TDBR]/ {print f, "D", $3}'
done | python3 -c '
import sys
mode = sys.argv[1]
defs, uses = {}, {}
for line in sys.stdin:
    f, kind, sym = line.split()
    if kind == "D":
        defs[sym] = f
    else:
        uses.setdefault(f, set()).add(sym)
import re
def excepted(f, s):  # the codec ops table (see the header)
    return f == "host/codec/codec.c" and re.fullmatch(r"tdm_codec_\w+_ops", s) is not None
edges = {}
for f, syms in uses.items():
    for s in syms:
        g = defs.get(s)
        if g and g != f and (mode == "--edges" or not excepted(f, s)):
            edges.setdefault(f, {}).setdefault(g, []).append(s)
if mode == "--edges":
    for f in sorted(edges):
        for g in sorted(edges[f]):
            print("%s -> %s: %s" % (f, g, " ".join(sorted(edges[f][g]))))
    sys.exit(0)
# Tarjan, iterative: the strongly connected components of more than one file.
index, low, on, stack, sccs, n = {}, {}, set(), [], [], [0]
nodes = sorted(set(edges) | {g for e in edges.values() for g in e})
for root in nodes:
    if root in index:
        continue
    work = [(root, iter(sorted(edges.get(root, {}))))]
    index[root] = low[root] = n[0]; n[0] += 1; stack.append(root); on.add(root)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                work.append((w, iter(sorted(edges.get(w, {})))))
            elif w in on:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))
for comp in sorted(sccs):
    print("circle: " + " ".join(comp))
    for f in comp:
        for g in sorted(edges.get(f, {})):
            if g in comp:
                print("    %s -> %s: %s" % (f, g, " ".join(sorted(edges[f][g]))))
print("%d circle(s)" % len(sccs))
sys.exit(1 if sccs else 0)
' "$mode"
