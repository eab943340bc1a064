#!/usr/bin/env bash
# Issue 13 item 8 on the GPU machine: `tandem bench queries` on the 10M-document
# collection with the first 10,000 terabyte05 queries, k 10 and 1000, every
# exact algorithm (or, and, and_or, wand, bmw, maxscore), the H200 and PoCL,
# every answer checked against the oracle. Three device commands, each under
# the 10-minute limit, issued back to back on one warm machine (/tmp is kept
# while it is warm: the build, the index and the oracle's answers carry over):
#
#   scripts/gpu_bench10m.sh a   setup, build, gen + index 10M (~230 s), then the
#                               oracle's answers (OR and AND, top 1000, 16
#                               threads) into an --oracle-cache file, in chunks
#                               of 2,500 queries so that a cut-off run keeps
#                               what it did (part b computes the rest).
#   scripts/gpu_bench10m.sh b   the H200: 10,000 queries, every algorithm, k 10
#                               and 1000 (12 series, ~1-2 ms a query at 10M:
#                               ~3 minutes); the oracle's answers and times
#                               read from the cache.
#   scripts/gpu_bench10m.sh c   PoCL on the host's 16 cores: the first NQ_POCL
#                               queries (default 500), same series and cache.
#
# Run from the repository root with .device-debs and .effdata carried (the query
# log is .effdata/queries/terabyte05-efficiency.txt). Outputs under $OUT: the
# full table, CSV and latency plot of each part (queries-10000000-*.txt/.csv/.svg)
# and a compact table printed at the end of each part. Exit status: that of
# `tandem bench queries` (1 if any answer differs from the oracle's).
#
# PoCL query count (part c), by extrapolation: on the 2-core development VM
# (PoCL, 2 compute units, AMD EPYC, loaded), 1M collection, first 100 queries,
# the 12 series together take 359 ms a query (means, us: or 36,227 / 36,332,
# and 17,357 / 13,775, and_or 23,641 / 43,801, wand 31,170 / 34,597, bmw 29,142 /
# 32,088, maxscore 26,696 / 34,343 at k 10 / 1000). The 7 series BENCHMARKS.md
# has for PoCL on the GPU machine's 16 cores (1M, 2026-11-24) sum to 36.5 ms
# against 207 ms here: 5.7x, so the 12 series there take ~63 ms a query at 1M,
# and at 10M, whose lists are 10.35x longer (1,985M against 192M postings),
# ~650 ms a query. So: NQ_POCL=500 (default) is ~330 s of timed queries plus
# ~40 s of warm-up, engine start (the index's copy into PoCL's buffers), cache
# read and index prefault: part c ~6 min. The most that fits one 10-minute
# command is ~750 queries (NQ_POCL=750 BUDGET_POCL=45: ~9 min); the default
# is smaller to leave device time for the rest. BUDGET_POCL (default 30 s a
# series) cuts a series that is slower than this estimate (the table gives the
# count each series ran), so part c stays under 12 x 30 s + overhead whatever
# the speed.
# Parts a and b, estimated the same way: a = build (~1 min) + gen and index
# (230 s, BENCHMARKS.md) + the oracle (10,000 queries x OR and AND, one call
# each at top 1000; ~25 ns a posting on the VM, 1M and 10M-document indexes,
# so ~95 ms a call at 10M's ~3.8M postings a query, on 16 threads: ~120 s)
# = ~7 min; b = 12 series x 10,000 queries x ~1.3 ms (H200, 10M,
# BENCHMARKS.md) = ~3.5 min (BUDGET 30 s a series caps it).
#
# Environment: B (build dir, default /tmp/b: reused if the lead built it already),
# W (work dir for the index and the cache, default /tmp/w), BUDGET (seconds a
# series may take in part b, default 30), WARMUP (default 50; 10 for PoCL).
# For a dry run elsewhere (how it was tested on the 2-core VM with PoCL):
# N (documents, default 10000000), NQ (part b's queries, 10000), GPU (part b's
# device spec, default gpu), e.g.
#   NO_SETUP=1 B=/tmp/b-x W=/tmp/w-x OUT=/tmp/o-x N=20000 NQ=60 NQ_POCL=20 GPU=cpu \
#     bash scripts/gpu_bench10m.sh a  (then b, then c)
set -u
part=${1:?part a, b or c}
B=${B:-/tmp/b}; W=${W:-/tmp/w}; OUT=${OUT:-/tmp/out}
Q=.effdata/queries/terabyte05-efficiency.txt
N=${N:-10000000}; NQ=${NQ:-10000}; GPU=${GPU:-gpu}; CACHE=$W/oracle-$N-top1000.bin
ALGOS=or,and,and_or,wand,bmw,maxscore
t0=$(date +%s)
mkdir -p "$OUT" "$W"
[ -s "$Q" ] || { echo "no $Q: carry .effdata"; exit 2; }
if [ -f .device-debs/setup.sh ] && [ "${NO_SETUP:-0}" = 0 ]; then
    source .device-debs/setup.sh
    ln -sf /lib/x86_64-linux-gnu/libz.so.1 /tmp/deps/usr/lib/x86_64-linux-gnu/libz.so
    rm -f /tmp/deps/usr/lib/x86_64-linux-gnu/libz.a
fi
T=$B/tandem

# The compact table of a CSV: algorithm, k, device, queries, mean/p50/p99 us,
# launches and bytes a query, wrong answers.
compact() {
    awk -F, 'NR == 1 { printf "%-10s %5s %-22s %6s %9s %9s %9s %6s %8s %8s %5s\n",
                       "algorithm", "k", "device", "n", "mean us", "p50 us", "p99 us",
                       "launch", "up B", "down B", "wrong"; next }
             { printf "%-10s %5s %-22.22s %6s %9.0f %9.0f %9.0f %6.2f %8.0f %8.0f %5s\n",
                      $1, $2, $4, $5, $6, $7, $9, $11, $12, $13, $14 }' "$1"
}

since() { echo "$1 $(( $(date +%s) - t0 )) s"; }

case $part in
a)
    nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
    if [ ! -x "$T" ]; then
        cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
    fi
    cmake --build "$B" -j16 --target tandem_cli >> "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
    git log --oneline -1; since build
    BUILD_ONLY=1 bash scripts/bench_queries.sh "$T" "$Q" "$W" "$OUT" $N 2>&1 | tail -8
    since "10M index"
    rc=0
    for n in $((NQ / 4)) $((NQ / 2)) $((3 * NQ / 4)) $NQ; do
        left=$(( 585 - ($(date +%s) - t0) ))
        [ "$left" -gt 30 ] || { echo "stopped before $n queries: part b computes the rest"; break; }
        NQ=$n ORACLE_ONLY=1 ORACLE_CACHE=$CACHE ORACLE_THREADS=16 WARMUP=0 ALGORITHMS=$ALGOS K=10,1000 \
            TAG=oracle timeout "$left" bash scripts/bench_queries.sh "$T" "$Q" "$W" "$OUT" $N > "$OUT/oracle-$n.log" 2>&1
        rc=$?
        grep -E '^oracle-' "$OUT/oracle-$n.log"
        since "oracle $n queries (rc $rc)"
        [ "$rc" = 0 ] || break
    done
    compact "$OUT/queries-$N-gpu-cpu-oracle.csv" 2>/dev/null
    exit $rc
    ;;
b)
    [ -s "$W/c$N.idx" ] || { echo "no $W/c$N.idx: run part a first on this warm machine"; exit 2; }
    NQ=$NQ BUDGET=${BUDGET:-30} WARMUP=${WARMUP:-50} DEVICES=$GPU ALGORITHMS=$ALGOS K=10,1000 \
        ORACLE_CACHE=$CACHE ORACLE_THREADS=16 timeout $(( 585 - ($(date +%s) - t0) )) \
        bash scripts/bench_queries.sh "$T" "$Q" "$W" "$OUT" $N > "$OUT/part-b.log" 2>&1
    rc=$?
    tail -4 "$OUT/part-b.log"
    compact "$OUT/queries-$N-$GPU.csv"
    since "part b (rc $rc)"
    exit $rc
    ;;
c)
    [ -s "$W/c$N.idx" ] || { echo "no $W/c$N.idx: run part a first on this warm machine"; exit 2; }
    NQ=${NQ_POCL:-500} BUDGET=${BUDGET_POCL:-30} WARMUP=${WARMUP:-10} DEVICES=cpu ALGORITHMS=$ALGOS \
        K=10,1000 ORACLE_CACHE=$CACHE ORACLE_THREADS=16 timeout $(( 585 - ($(date +%s) - t0) )) \
        bash scripts/bench_queries.sh "$T" "$Q" "$W" "$OUT" $N > "$OUT/part-c.log" 2>&1
    rc=$?
    tail -4 "$OUT/part-c.log"
    compact "$OUT/queries-$N-cpu.csv"
    since "part c (rc $rc)"
    exit $rc
    ;;
*)
    echo "usage: scripts/gpu_bench10m.sh a|b|c"; exit 2 ;;
esac
