#!/usr/bin/env bash
# Query latency (BENCHMARKS.md, "Query latency").
#   scripts/bench_queries.sh TANDEM QUERYLOG WORKDIR OUTDIR [DOCS]
# Generates DOCS documents (default 1000000) with --vocab-from QUERYLOG, builds
# them with --stemmer none, and runs `tandem bench queries` on the first NQ
# queries of QUERYLOG (default 5000) with the oracle on 16 threads, on the
# devices DEVICES (default gpu,cpu: the GPU and PoCL in one run), each series
# stopped after BUDGET seconds of timed queries (default 8); table, CSV and plot
# in OUTDIR. On the GPU machine the query log does not travel with the tree:
# copy it into an ignored directory and carry that.
set -u
T=${1:?tandem binary}; Q=${2:?query log}; W=${3:?work directory}; O=${4:?output directory}
n=${5:-1000000}; nq=${NQ:-5000}; dev=${DEVICES:-gpu,cpu}; budget=${BUDGET:-8}
mkdir -p "$W" "$O"
"$T" gen collection --docs "$n" --seed 1 --vocab-from "$Q" --quiet -o "$W/c$n.txt" || exit 1
"$T" build --quiet --stemmer none -o "$W/c$n.idx" "$W/c$n.txt" || exit 1
"$T" stats "$W/c$n.idx" | head -6
tag=$(echo "$dev" | tr ',' '-')
"$T" bench queries "$W/c$n.idx" --queries "$Q" --limit "$nq" --oracle-threads 16 \
  --devices "$dev" --budget "$budget" --csv "$O/queries-$n-$tag.csv" \
  --plot "$O/queries-$n-$tag.svg" > "$O/queries-$n-$tag.txt" 2> "$O/queries-$n-$tag.err"
rc=$?
cat "$O/queries-$n-$tag.txt"
grep -v '^MISMATCH' "$O/queries-$n-$tag.err" | tail -5
exit $rc
