#!/usr/bin/env bash
# Query latency and throughput (BENCHMARKS.md, "Query latency", "Throughput").
#   scripts/bench_queries.sh TANDEM QUERYLOG WORKDIR OUTDIR [DOCS]
# Generates DOCS documents (default 1000000) with --vocab-from QUERYLOG and
# builds them with --stemmer none (both skipped when WORKDIR already holds the
# index: a second run on a warm machine goes straight to the benchmark), then
# runs `tandem bench queries` on the first NQ queries of QUERYLOG (default
# 5000) with the oracle on ORACLE_THREADS threads (16), on the devices DEVICES
# (default gpu,cpu: the GPU and PoCL in one run), each series stopped after
# BUDGET seconds of timed queries (default 8); table, CSV and plots in OUTDIR.
# Optional: ALGORITHMS (default: all six exact ones), K (default 10,1000),
# WARMUP (100), THREADS (single-query series with T threads each, e.g. 1,16;
# default 1), BATCH (a batch sweep, e.g. 1,8,64,512,4096: a series of
# tdm_search_batch calls per size, and the throughput plot), BATCH_THREADS
# (threads sending batches, 1). Output names carry DOCS, the devices and TAG.
# ORACLE_CACHE=FILE keeps the oracle's answers in FILE (--oracle-cache: a later
# run on the same index, queries and k reads them instead of running the
# oracle); ORACLE_ONLY=1 runs (or reads) the oracle only, no device series.
# PERQ=1 also writes each timed query's latency and list features
# (--per-query OUTDIR/...-perq.csv).
# BUILD_ONLY=1 stops after the index (the 10M collection takes ~140 s on 16
# cores: one device command for it, the benchmark in the next on the same
# warm machine, WORKDIR inside an ignored directory such as build/).
# On the GPU machine the query log does not travel with the tree: copy it into
# an ignored directory and carry that.
set -u
T=${1:?tandem binary}; Q=${2:?query log}; W=${3:?work directory}; O=${4:?output directory}
n=${5:-1000000}; nq=${NQ:-5000}; dev=${DEVICES:-gpu,cpu}; budget=${BUDGET:-8}
mkdir -p "$W" "$O"
if [ ! -s "$W/c$n.idx" ]; then
  start=$(date +%s)
  "$T" gen collection --docs "$n" --seed 1 --vocab-from "$Q" --quiet -o "$W/c$n.txt" || exit 1
  "$T" build --quiet --stemmer none -o "$W/c$n.idx" "$W/c$n.txt" || exit 1
  rm -f "$W/c$n.txt" # the text is 1.4 GB a million documents; the index is what is used
  echo "collection and index of $n documents in $(( $(date +%s) - start )) s"
fi
"$T" stats "$W/c$n.idx" | head -6
[ "${BUILD_ONLY:-0}" = 0 ] || exit 0
tag=$(echo "$dev" | tr ',' '-')${TAG:+-$TAG}
base=$O/queries-$n-$tag
opts=(--queries "$Q" --limit "$nq" --oracle-threads "${ORACLE_THREADS:-16}" --devices "$dev"
      --budget "$budget" --warmup "${WARMUP:-100}" --csv "$base.csv" --plot "$base.svg")
[ -z "${ALGORITHMS:-}" ] || opts+=(--algorithms "$ALGORITHMS")
[ -z "${ORACLE_CACHE:-}" ] || opts+=(--oracle-cache "$ORACLE_CACHE")
[ "${ORACLE_ONLY:-0}" = 0 ] || opts+=(--oracle-only)
[ -z "${K:-}" ] || opts+=(-k "$K")
[ "${PERQ:-0}" = 0 ] || opts+=(--per-query "$base-perq.csv")
[ -z "${THREADS:-}" ] || opts+=(--threads "$THREADS")
[ -z "${BATCH:-}" ] || opts+=(--batch "$BATCH" --batch-threads "${BATCH_THREADS:-1}"
                              --throughput-plot "$base-throughput.svg")
start=$(date +%s)
"$T" bench queries "$W/c$n.idx" "${opts[@]}" > "$base.txt" 2> "$base.err"
rc=$?
cat "$base.txt"
grep -v '^MISMATCH' "$base.err" | tail -5
echo "bench queries: $(( $(date +%s) - start )) s; outputs $base.{txt,err,csv,svg}${BATCH:+ and $base-throughput.svg}"
exit $rc
