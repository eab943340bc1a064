#!/usr/bin/env bash
# Generation and build throughput (BENCHMARKS.md, "Building on every core").
#   scripts/bench_build.sh TANDEM QUERYLOG WORKDIR [DOCS...]
# For each DOCS (default 10000000 1000000): gen collection --vocab-from QUERYLOG,
# then build --stemmer none with 16, 2 and 1 threads (the 10M collection with
# 16 only), each under /usr/bin/time (wall, CPU, peak RSS); the indexes of one
# collection must be the same file. On the GPU machine the query log does not
# travel with the tree: copy it into an ignored directory (build-q/, say) and
# carry that.
set -u
T=${1:?tandem binary}; Q=${2:?query log}; W=${3:?work directory}; shift 3
docs=("$@"); [ ${#docs[@]} -eq 0 ] && docs=(10000000 1000000)
mkdir -p "$W"
step() {
  local name=$1; shift
  echo "-- $name: $*"
  /usr/bin/time -f "$name: %e s wall, %U s user, %S s sys, %M KB peak RSS" "$@" 2>&1 | tail -3
}
for n in "${docs[@]}"; do
  step "gen$n" "$T" gen collection --docs "$n" --vocab-from "$Q" --quiet -o "$W/c$n.txt"
  threads="16 2 1"; [ "$n" -gt 1000000 ] && threads=16
  ref=
  for t in $threads; do
    step "build${n}_t$t" "$T" build --stemmer none --quiet --threads "$t" -o "$W/c$n.t$t.idx" "$W/c$n.txt"
    if [ -z "$ref" ]; then ref=$W/c$n.t$t.idx
    else cmp "$ref" "$W/c$n.t$t.idx" && echo "$n: threads $t gives the same index"; fi
  done
  ls -l "$W/c$n.txt" "$ref"
  rm -f "$W/c$n".*
done
