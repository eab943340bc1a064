#!/usr/bin/env bash
# `tandem bench load` (issue 16 item 7) on a small generated index, with PoCL
# opened as two devices and TANDEM_LANE_KINDS=cpu,gpu (a CPU lane and a GPU
# lane on a machine without a GPU): a sweep of rates for every policy, the
# table's and the CSV's columns, utilization and lane shares, the rate search
# (--find-max) and its table, the plot, the list-cache setting beside the
# resident one, deadline misses, a spoiled answer failing the oracle check
# (TANDEM_BENCH_LOAD_CORRUPT), bad options refused with the option named, and
# outputs through the output guard. Usage: test_bench_load.sh TANDEM. The
# exit status is the number of failures (77: skipped, fewer than two devices).
set -u
T=$1
CLI_TIMEOUT=600
. "$(dirname "$0")/cli_lib.sh"
# cli_lib's run, and a sanitizer's report fails the case even where the
# command was meant to fail (an error path that leaks)
run() {
    timeout "${CLI_TIMEOUT:-10}" "$@" >out.txt 2>err.txt; rc=$?
    if grep -q 'Sanitizer\|runtime error:' err.txt; then
        fail "sanitizer report: $(grep -m3 'Sanitizer\|runtime error:' err.txt)"
    fi
}
export POCL_DEVICES="pthread pthread" TANDEM_LANE_KINDS=cpu,gpu TANDEM_DEVICES=pocl

bench_fixture
echo '12:zzznotinthelog' >> q.txt # no term of it in the index
ndev=$("$T" devices 2>/dev/null | grep -c "Portable Computing Language")
if [ "$ndev" -lt 2 ]; then
    echo "test_bench_load: skipped: PoCL did not give two devices"
    exit 77
fi
short=(--duration 0.6 --warmup 0.2 --senders 32)
sweep=(--duration 1.2 --warmup 0.2 --senders 32)
hdr='memory,memory_bytes,policy,rate,probe,arrivals,answered,failed,dropped,late,late_max_ms,throughput,mean_ms,p50_ms,p95_ms,p99_ms,p999_ms,max_ms,deadline_ms,misses,miss_pct,engine_misses,mismatches,batch_mode_pct,batched_pct,other_policy,stolen,promoted,mode_switches,cache_hit_rate,stopped,sustained,max_inflight,senders,wall_s,lanes'

begin "a sweep of two rates, every policy the lanes serve, every answer the oracle's"
run "$T" bench load idx --queries q.txt "${sweep[@]}" --rates 15,40 --csv s.csv --plot s.svg
want_ok
grep -q "every answer is the oracle's" err.txt || fail "no verdict: $(tail -3 err.txt)"
grep -q "12 queries of q.txt: 11 ranked, 1 without a term" err.txt || fail "$(head -2 err.txt)"
grep -q "lane 0: CPU lane" err.txt && grep -q "lane 1: GPU lane" err.txt || fail "lanes: $(cat err.txt)"
head -1 out.txt | grep -Eq '^memory +policy +rate +arrived +q/s +mean ms +p50 +p95 +p99 +p99.9 +miss% +late +drop +bmode% +batch% +hit% +verdict +lanes: util/share$' ||
    fail "table header: $(head -1 out.txt)"
for p in cpu-only gpu-only best hybrid; do
    for r in 15 40; do
        grep -Eq "^full +$p +$r +[0-9]+ +[0-9.]+( +[0-9.]+){10} +(-|[0-9.]+) +(ok|over|stopped) +C0 [0-9]+%/[0-9]+% G1 [0-9]+%/[0-9]+%$" out.txt ||
            fail "no row for $p at $r: $(cat out.txt)"
    done
done
[ "$(head -1 s.csv)" = "$hdr" ] || fail "CSV header: $(head -1 s.csv)"
[ "$(($(wc -l < s.csv) - 1))" -eq 8 ] || fail "CSV rows: $(cat s.csv)"
# every measured arrival answered, none failed, no mismatch; percentiles in order
awk -F, 'NR > 1 && ($6 < 1 || $7 + $9 != $6 || $8 != 0 || $23 != 0 || !($14 <= $15 && $15 <= $16 && $16 <= $17 && $17 <= $18)) { bad = 1 } END { exit bad }' s.csv ||
    fail "counts or percentiles: $(cat s.csv)"
# throughput near the offered rate (light load), utilization within [0, 1],
# lane shares adding up to 1, cpu-only on lane 0 only, gpu-only on lane 1 only
awk -F, 'NR > 1 && ($12 < $4 * 0.3 || $12 > $4 * 3) { bad = 1 } END { exit bad }' s.csv ||
    fail "throughput: $(cut -d, -f3,4,12 s.csv)"
awk -F, 'NR > 1 { n = split($36, l, ";"); s = 0; for (i = 1; i <= n; i++) { split(l[i], f, ":"); s += f[3];
         if (f[2] < 0 || f[2] > 1.01) bad = 1 } if (n != 2 || s < 0.999 || s > 1.001) bad = 1 }
         NR > 1 && $3 == "cpu-only" && $36 !~ /^cpu0:[0-9.]+:1.0000;gpu1:0.0000:0.0000$/ { bad = 1 }
         NR > 1 && $3 == "gpu-only" && $36 !~ /^cpu0:0.0000:0.0000;gpu1:[0-9.]+:1.0000$/ { bad = 1 }
         NR > 1 && $3 == "gpu-only" && $36 ~ /gpu1:0.0000/ { bad = 1 }
         END { exit bad }' s.csv || fail "lanes: $(cut -d, -f3,4,36 s.csv)"
awk -F, 'NR > 1 && ($34 < 1 || $34 > 32 || $33 > $34) { bad = 1 } END { exit bad }' s.csv ||
    fail "the sender pool past --senders 32: $(cut -d, -f3,4,33,34 s.csv)"
awk -F, 'NR > 1 && ($30 != -1 || $26 != 0) { bad = 1 } END { exit bad }' s.csv ||
    fail "resident index with a hit rate, or another policy answered: $(cat s.csv)"
grep -q '^<svg' s.svg && grep -q '</svg>' s.svg || fail "not an SVG: $(head -c 200 s.svg)"
# p50, p95, p99 per policy
[ "$(grep -c '<polyline' s.svg)" -eq 12 ] || fail "SVG lines: $(grep -c '<polyline' s.svg)"
grep -q 'device memory: full' s.svg || fail "no panel title"

begin "--find-max: a rate per policy, probes marked, the table"
run "$T" bench load idx --queries q.txt "${short[@]}" --policies hybrid,cpu-only --find-max \
    --budget-p95-ms 400 --start-rate 30 --precision 0.5 --csv f.csv --plot f.svg
want_ok
grep -q '^highest sustained rate (p95 <= 400 ms and the 500 ms deadline' out.txt ||
    fail "no max table: $(cat out.txt)"
sed -n '/^highest sustained/,$p' out.txt > max.txt
grep -Eq '^full +hybrid +[0-9.e+]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +-$' max.txt ||
    fail "hybrid's line: $(cat max.txt)"
grep -Eq '^full +cpu-only +[0-9.e+]+( +[0-9.]+){5} +- +-$' max.txt || fail "cpu-only's line: $(cat max.txt)"
grep -Eq '^full +hybrid +\*30 ' out.txt || fail "the first probe at the start rate: $(cat out.txt)"
awk -F, 'NR > 1 && $5 != 1 { bad = 1 } END { exit bad }' f.csv || fail "probes not marked"
# the reported maximum is a sustained probe, and double it (or a probe above) was not
for p in hybrid cpu-only; do
    m=$(awk -v p="$p" '$1 == "full" && $2 == p { print $3 }' max.txt)
    awk -F, -v p="$p" -v m="$m" 'NR > 1 && $3 == p && $4 + 0 == m + 0 && $32 == 1 { ok = 1 }
        NR > 1 && $3 == p && $4 > m + 0 && $32 == 1 { bad = 1 } END { exit !(ok && !bad) }' f.csv ||
        fail "$p: max $m is not the highest sustained probe: $(cut -d, -f3,4,15,31,32 f.csv)"
done
grep -q '^<svg' f.svg || fail "no plot"

begin "--time-limit: no point starts after it, the searches say they were cut"
run "$T" bench load idx --queries q.txt "${short[@]}" --policies hybrid,best --find-max --time-limit 0.001 --csv t.csv
want_ok
grep -q -- "--time-limit 0.001 s reached: no further point" err.txt || fail "$(cat err.txt)"
grep -Eq '^full +hybrid +cut by --time-limit: no sustained rate found yet$' out.txt &&
    grep -Eq '^full +best +cut by --time-limit: no sustained rate found yet$' out.txt || fail "$(cat out.txt)"
[ "$(wc -l < t.csv)" -le 1 ] || fail "points ran past the limit: $(cat t.csv)"

begin "the list-cache setting beside the resident one"
# (the fixture's small sections take half of it: 1/3 would not fit; 700K leaves a
# cache of a fifth of its lists)
run "$T" bench load idx --queries q.txt "${short[@]}" --policies hybrid,gpu-only --rates 25 \
    --device-memory full,700K --csv m.csv --plot m.svg
want_ok
grep -q "every answer is the oracle's" err.txt || fail "$(tail -3 err.txt)"
grep -q "lane 1: list cache of [0-9]* bytes for an index of [0-9]* (memory 700K)" err.txt ||
    fail "no cache line: $(grep lane err.txt)"
for p in hybrid gpu-only; do
    grep -Eq "^full +$p +25 .* - +(ok|over|stopped) " out.txt || fail "full $p: $(cat out.txt)"
    grep -Eq "^700K +$p +25 .* [0-9.]+ +(ok|over|stopped) " out.txt || fail "700K $p: $(cat out.txt)"
done
awk -F, 'NR > 1 && $1 == "700K" && ($2 != 716800 || $30 < 0 || $30 > 1) { bad = 1 } END { exit bad }' m.csv ||
    fail "cached rows: $(cat m.csv)"
[ "$(grep -c 'device memory:' m.svg)" -eq 2 ] || fail "two panels wanted"

begin "misses count against the deadline"
run "$T" bench load idx --queries q.txt "${short[@]}" --policies best --rates 20 --deadline-ms 0.001 --csv d.csv
want_ok
awk -F, 'NR > 1 && ($20 != $6 || $21 != 100) { bad = 1 } END { exit bad }' d.csv ||
    fail "every query should miss a 1 us deadline: $(cat d.csv)"

begin "a spoiled answer fails the oracle check"
TANDEM_BENCH_LOAD_CORRUPT=3 run "$T" bench load idx --queries q.txt "${short[@]}" --policies hybrid --rates 20
want_fail "answers differ from the oracle's"
grep -q '^MISMATCH hybrid rate 20 arrival 2 query' err.txt || fail "no mismatch line: $(cat err.txt)"
TANDEM_BENCH_LOAD_CORRUPT=x run "$T" bench load idx --queries q.txt --rates 20
want_fail "TANDEM_BENCH_LOAD_CORRUPT"

begin "gpu-only without a GPU lane is refused, naming the policy"
TANDEM_LANE_KINDS=cpu,cpu run "$T" bench load idx --queries q.txt "${short[@]}" --policies gpu-only --rates 10
want_fail "gpu-only, but the engine has no GPU lane"

begin "bad values are refused, naming the option"
for bad in "--rates 0" "--rates x" "--rates 10,10" "--rates 10," "--rates -5" "--rates 2e6" \
           "--duration 0" "--duration nan" "--warmup -1" "--deadline-ms 0" "--policies foo" \
           "--policies hybrid,hybrid" "--policies default" "--device-memory 2/1" "--device-memory 0" \
           "--device-memory full,full" "--device-memory 12Q" "--senders 0" "--senders 5000" \
           "--precision 0" "--precision 2" "--start-rate 0" "-k 0" "-k 10001" "--algorithm foo" \
           "--limit 0" "--oracle-threads 0" "--seed x" "--format nope" "--time-limit 0" \
           "--time-limit -1"; do
    # shellcheck disable=SC2086
    run "$T" bench load idx --queries q.txt --rates 10 $bad
    want_fail "${bad%% *}"
done
run "$T" bench load idx --queries q.txt --rates 10 --budget-p95-ms 100
want_fail "add --find-max"
run "$T" bench load idx --queries q.txt
want_fail "give --rates LIST, --find-max or both"
run "$T" bench load idx --queries q.txt --rates 10 --bogus
want_fail "unknown or incomplete option '--bogus'"
run "$T" bench load idx --rates 10
want_fail "need INDEX and --queries"
run "$T" bench load idx --queries nosuchfile --rates 10
want_fail "nosuchfile"
run "$T" bench load nosuchindex --queries q.txt --rates 10
want_fail "nosuchindex"
echo '1:zzznothing' > qe.txt
run "$T" bench load idx --queries qe.txt --rates 10
want_fail "no query has a term in the index"

begin "outputs: never over an input, never one file twice"
run "$T" bench load idx --queries q.txt --rates 10 --csv idx
want_fail "--csv\|idx"
cmp -s idx idx.orig || fail "the index changed"
run "$T" bench load idx --queries q.txt --rates 10 --csv same --plot same
want_fail "the same file"
run "$T" bench load idx --queries q.txt --rates 10 --plot -
want_fail "standard output"

[ "$failures" -eq 0 ] && echo "test_bench_load: all cases passed"
exit "$failures"
