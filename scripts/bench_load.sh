#!/usr/bin/env bash
# Load: Poisson arrivals per scheduling policy (BENCHMARKS.md "Load"; issue 16
# item 7 and its targets).
#   scripts/bench_load.sh TANDEM QUERYLOG WORKDIR OUTDIR [DOCS]
# Generates DOCS documents (default 1000000) with --vocab-from QUERYLOG and
# builds them with --stemmer none (both skipped when WORKDIR already holds the
# index, as scripts/bench_queries.sh leaves it: a second call on a warm machine
# goes straight to the benchmark), then runs `tandem bench load` on the first
# NQ queries of QUERYLOG (default 2000, cycled) on DEVICES (default gpu,cpu:
# the GPU a GPU lane, PoCL on the host cores a CPU lane), the oracle's answers
# first on ORACLE_THREADS threads (16):
#   1. --find-max: the highest rate each policy (cpu-only, gpu-only, best,
#      hybrid) sustains with p95 within BUDGET_MS (default 500) and the
#      DEADLINE_MS (500) deadline, with the index resident ("full") and with
#      each device's memory for it limited to CACHE_FRACTION (1/3) of its size
#      (a list cache; the CPU lane's too: the budget is per engine), for
#      CACHE_POLICIES (hybrid,gpu-only; the other policies run resident only).
#   2. a sweep of every policy, index resident, at half and all of cpu-only's
#      and of hybrid's sustained rates (RATES overrides), for the latency
#      comparisons of the targets (mean, p99 at the same offered rate).
# Each point: WARMUP seconds (0.5) then DURATION seconds (2) of arrivals; the
# rate search from START_RATE (50) to PRECISION (0.05). Tables, CSVs and the
# latency-against-rate plots in OUTDIR (names carry DOCS and TAG), then a
# compact summary against the targets. Every answer is checked against the
# oracle (a mismatch: exit 1).
# Time: both runs fit one 10-minute device command for the 1M collection on
# a warm machine with the build (~25 s of gen+build on 16 cores), and one for
# the 10M collection when WORKDIR already holds its index (BUILD_ONLY=1 stops
# after the index: ~230 s for 10M, in a command of its own). TIME_LIMIT
# (default 560 s, from the script's start) bounds the whole: when the build
# took a share, DURATION and the precision shrink, and each run is given a
# share of what is left (--time-limit: no point starts past it, the tables say
# which rate searches were cut; a timeout 1-2 minutes later is the backstop).
# On the GPU machine the query log does not travel with the tree: copy it into
# an ignored directory and carry that. Example device command (repository root):
#   source .device-debs/setup.sh && ln -sf /lib/x86_64-linux-gnu/libz.so.1 \
#     /tmp/deps/usr/lib/x86_64-linux-gnu/libz.so && rm -f /tmp/deps/usr/lib/x86_64-linux-gnu/libz.a &&
#   cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build /tmp/b -j16 --target tandem_cli >/dev/null &&
#   bash scripts/bench_load.sh /tmp/b/tandem .effdata/queries/terabyte05-efficiency.txt /tmp/w $OUT 1000000
set -u
start=$(date +%s)
T=${1:?tandem binary}; Q=${2:?query log}; W=${3:?work directory}; O=${4:?output directory}
n=${5:-1000000}; nq=${NQ:-2000}; dev=${DEVICES:-gpu,cpu}; limit=${TIME_LIMIT:-560}
dur=${DURATION:-2}; warm=${WARMUP:-0.5}; prec=${PRECISION:-0.05}
mkdir -p "$W" "$O"
if [ ! -s "$W/c$n.idx" ]; then
  "$T" gen collection --docs "$n" --seed 1 --vocab-from "$Q" --quiet -o "$W/c$n.txt" || exit 1
  "$T" build --quiet --stemmer none -o "$W/c$n.idx" "$W/c$n.txt" || exit 1
  rm -f "$W/c$n.txt" # the text is 1.4 GB a million documents; the index is what is used
  echo "collection and index of $n documents in $(( $(date +%s) - start )) s"
fi
"$T" stats "$W/c$n.idx" | head -6
[ "${BUILD_ONLY:-0}" = 0 ] || exit 0
left() { echo $(( limit - ($(date +%s) - start) )); }
# a share of what is left, at least 30 s (timeout refuses a negative time)
share() { local t=$(( $(left) * $1 / $2 )); [ "$t" -ge 30 ] || t=30; echo "$t"; }
if [ "$(left)" -lt 420 ] && [ -z "${DURATION:-}" ]; then
  dur=1; prec=0.1 # the build took its share: shorter points, a coarser search
  echo "$(left) s left after the build: DURATION 1, PRECISION 0.1"
fi
base=$O/load-$n${TAG:+-$TAG}
common=(--queries "$Q" --limit "$nq" --devices "$dev" --oracle-threads "${ORACLE_THREADS:-16}"
        --deadline-ms "${DEADLINE_MS:-500}" --duration "$dur" --warmup "$warm")
[ -z "${SENDERS:-}" ] || common+=(--senders "$SENDERS")
rc=0

# 1. the highest sustained rates, resident and under the list-cache budget
cpol=${CACHE_POLICIES:-hybrid,gpu-only}
t1=$(date +%s)
timeout "$(( $(share 2 3) + 120 ))" "$T" bench load "$W/c$n.idx" "${common[@]}" --find-max --time-limit "$(share 2 3)" \
  --budget-p95-ms "${BUDGET_MS:-500}" --start-rate "${START_RATE:-50}" --precision "$prec" \
  --policies "$cpol" --device-memory "full,${CACHE_FRACTION:-1/3}" \
  --csv "$base-cache.csv" --plot "$base-cache.svg" > "$base-cache.txt" 2> "$base-cache.err" || rc=1
timeout "$(( $(share 3 5) + 120 ))" "$T" bench load "$W/c$n.idx" "${common[@]}" --find-max --time-limit "$(share 3 5)" \
  --budget-p95-ms "${BUDGET_MS:-500}" --start-rate "${START_RATE:-50}" --precision "$prec" \
  --policies "${POLICIES:-cpu-only,best}" \
  --csv "$base-max.csv" --plot "$base-max.svg" > "$base-max.txt" 2> "$base-max.err" || rc=1
echo "rate search: $(( $(date +%s) - t1 )) s"
grep -hv '^MISMATCH\|q/s (rate search) \.\.\.$\|^oracle (\|^lane \|^every answer' "$base-cache.err" "$base-max.err" | tail -12

# the sustained rates (0 when none was found; a cut search gives the rate it reached)
maxof() { awk -v p="$2" -v m="$3" '/^highest sustained/ { on = 1 } on && (m == "full" ? $1 == "full" : $1 != "full") && $2 == p && ($3 == "none" || $3 + 0 > 0) { print ($3 == "none" ? 0 : $3); exit }' "$1"; }
cpu=$(maxof "$base-max.txt" cpu-only full); best=$(maxof "$base-max.txt" best full)
hyb=$(maxof "$base-cache.txt" hybrid full); gpu=$(maxof "$base-cache.txt" gpu-only full)
hybc=$(maxof "$base-cache.txt" hybrid cached); gpuc=$(maxof "$base-cache.txt" gpu-only cached)

# 2. every policy at the same rates: half and all of cpu-only's and hybrid's
rates=${RATES:-$(printf '%s\n' "$cpu" "$hyb" | awk '$1 > 0 { printf "%.4g\n%.4g\n", $1 / 2, $1 }' | sort -gu | paste -sd,)}
if [ -n "$rates" ] && [ "$(left)" -gt 30 ]; then
  t2=$(date +%s)
  timeout "$(( $(share 1 1) + 60 ))" "$T" bench load "$W/c$n.idx" "${common[@]}" --rates "$rates" --time-limit "$(share 1 1)" \
    --csv "$base-sweep.csv" --plot "$base-sweep.svg" > "$base-sweep.txt" 2> "$base-sweep.err" || rc=1
  echo "sweep at $rates q/s: $(( $(date +%s) - t2 )) s"
  tail -2 "$base-sweep.err"
fi

echo "== bench load: $n documents, $nq queries, deadline ${DEADLINE_MS:-500} ms, p95 budget ${BUDGET_MS:-500} ms, $dur s points"
for f in "$base-cache.txt" "$base-max.txt"; do sed -n '/^highest sustained/,$p' "$f" | grep -v '^$'; done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }'; }
echo "targets: hybrid / cpu-only sustained rate $(ratio "$hyb" "$cpu") (want >= 3);" \
     "list cache ${CACHE_FRACTION:-1/3} / resident: hybrid $(ratio "$hybc" "$hyb"), gpu-only $(ratio "$gpuc" "$gpu") (want >= 0.5)"
if [ -s "$base-sweep.csv" ]; then
  # at each rate: mean and p99 of every policy; hybrid's against gpu-only's mean and cpu-only's p99
  awk -F, 'NR > 1 { r[$4] = 1; m[$4, $3] = $13; p[$4, $3] = $16; v[$4, $3] = $32 }
    END { for (x in r) {
            printf "at %s q/s: mean/p99 ms", x
            split("cpu-only gpu-only best hybrid", P, " ")
            for (i = 1; i <= 4; i++) if ((x, P[i]) in m) printf "  %s %.2f/%.2f%s", P[i], m[x, P[i]], p[x, P[i]], v[x, P[i]] ? "" : " (over)"
            if ((x, "hybrid") in m && (x, "gpu-only") in m && m[x, "hybrid"] > 0)
              printf "; gpu-only/hybrid mean %.2f (want > 1)", m[x, "gpu-only"] / m[x, "hybrid"]
            if ((x, "hybrid") in p && (x, "cpu-only") in p && p[x, "hybrid"] > 0)
              printf "; cpu-only/hybrid p99 %.1f (want >= 10)", p[x, "cpu-only"] / p[x, "hybrid"]
            printf "\n" } }' "$base-sweep.csv" | sort -t' ' -k2 -g
fi
grep -h "answers differ\|every answer is the oracle's" "$base"-*.err | sort | uniq -c
echo "bench load: $(( $(date +%s) - start )) s; outputs $base-{cache,max,sweep}.{txt,err,csv,svg}"
exit $rc
