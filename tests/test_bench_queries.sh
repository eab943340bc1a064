#!/usr/bin/env bash
# `tandem bench queries` (issue 13 item 8, issue 15 item 4) on a small
# generated index: every algorithm at every k on every device, answers equal
# to the oracle's, the table, CSV and plot; single queries from several
# threads and a sweep of batch sizes, every batched answer the oracle's, the
# throughput plot; a row per timed query (--per-query) consistent with the
# summary, its features those of `tandem terms`; weighted queries; queries without known terms left out;
# one series over every device together (--spread), also on a split handle
# (TANDEM_PARTITION=split: single queries on every partition, batches whole);
# bad options refused with the option named (kernel build options the
# driver refuses too); outputs through the output
# guard. Usage: test_bench_queries.sh TANDEM. The exit status is the
# number of failures.
set -u
T=$1
CLI_TIMEOUT=600
. "$(dirname "$0")/cli_lib.sh"

bench_fixture
cp q.txt qa.txt
echo '12:zzznotinthelog' >> qa.txt # no term of it in the index

begin "every algorithm at k 10 and 1000 on every device, all answers the oracle's"
run "$T" bench queries idx --queries qa.txt --warmup 3 --csv b.csv --plot b.svg
want_ok
grep -q "every answer is the oracle's" err.txt || fail "no verdict: $(tail -3 err.txt)"
grep -q "12 queries of qa.txt: 11 ranked, 1 without a term" err.txt ||
    fail "unknown-only query not left out: $(head -3 err.txt)"
ndev=$(grep -c '^device [0-9]*:' err.txt)
[ "$ndev" -ge 1 ] || fail "no device line: $(head -5 err.txt)"
for a in or and and_or wand bmw maxscore; do
    for k in 10 1000; do
        n=$(grep -Ec "^$a +$k [0-9]+ " out.txt)
        [ "$n" -eq "$ndev" ] || fail "$a k $k: $n rows for $ndev devices: $(cat out.txt)"
    done
done
# the oracle runs once a query and mode, at the largest k (k 10 is its prefix)
for o in oracle-or oracle-and; do
    grep -Eq "^$o +1000 host" out.txt || fail "no $o row: $(cat out.txt)"
    ! grep -Eq "^$o +10 " out.txt || fail "$o ran at k 10 too: $(cat out.txt)"
done
head -1 b.csv | grep -q '^algorithm,k,device,device_name,queries,mean_us,p50_us,p90_us,p99_us,max_us,launches_per_query,bytes_up_per_query,bytes_down_per_query,mismatches,mode,batch,threads,queries_per_s,shared,queue_us,sched_batches,window_us,cpu_us$' ||
    fail "CSV header: $(head -1 b.csv)"
rows=$(($(wc -l < b.csv) - 1))
[ "$rows" -eq $((12 * ndev + 2)) ] || fail "CSV has $rows rows, want $((12 * ndev + 2))"
awk -F, 'NR > 1 && ($5 != 11 || $14 != 0) { bad = 1 } END { exit bad }' b.csv ||
    fail "a series without 11 queries or with mismatches: $(cat b.csv)"
awk -F, 'NR > 1 && $3 >= 0 && ($11 < 1 || $12 <= 0 || $13 <= 0 || $6 <= 0) { bad = 1 }
         END { exit bad }' b.csv || fail "device rows without launches or bytes: $(cat b.csv)"
awk -F, 'NR > 1 && !($7 <= $8 && $8 <= $9 && $9 <= $10) { bad = 1 } END { exit bad }' b.csv ||
    fail "percentiles out of order: $(cat b.csv)"
grep -q '^<svg' b.svg && grep -q '</svg>' b.svg || fail "not an SVG: $(head -c 200 b.svg)"
[ "$(grep -c '<polyline' b.svg)" -eq $((12 * ndev + 2)) ] || fail "SVG series: $(grep -c '<polyline' b.svg)"
grep -q 'top 1000' b.svg || fail "no k = 1000 panel"

begin "a batch sweep and threads: every answer the oracle's, queries per second, the plot"
run "$T" bench queries idx --queries qa.txt --warmup 2 --algorithms or,bmw,and -k 10,100 \
    --threads 1,3 --batch 1,4,64 --csv t.csv --throughput-plot t.svg --plot c.svg --per-query p.csv
want_ok
grep -q "every answer is the oracle's" err.txt || fail "no verdict: $(tail -3 err.txt)"
ndev=$(grep -c '^device [0-9]*:' err.txt)
# per algorithm, k and device: single x1, single x3, batch 1, 4, 64
rows=$(($(wc -l < t.csv) - 1))
[ "$rows" -eq $((3 * 2 * 5 * ndev + 2)) ] || fail "CSV has $rows rows, want $((30 * ndev + 2)): $(cat t.csv)"
for a in or bmw and; do
    for m in "single,1,1" "single,1,3" "batch,1,1" "batch,4,1" "batch,64,1"; do
        n=$(grep -c "^$a,100,[0-9]*,.*,11,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,0,$m," t.csv)
        [ "$n" -eq "$ndev" ] || fail "$a k 100 $m: $n rows for $ndev devices: $(grep "^$a,100" t.csv)"
    done
done
awk -F, 'NR > 1 && ($18 <= 0 || $19 < 1) { bad = 1 } END { exit bad }' t.csv ||
    fail "a series without queries per second or shared: $(cat t.csv)"
awk -F, 'NR > 1 && $15 == "batch" && $16 == 64 && $3 >= 0 && $6 <= 0 { bad = 1 } END { exit bad }' t.csv ||
    fail "batch latencies: $(cat t.csv)"
grep -Eq '^or +10 0 .* single x3 ' out.txt && grep -Eq '^bmw +100 0 .* batch 64 ' out.txt ||
    fail "table rows: $(cat out.txt)"
grep -q '^queries per second (best' out.txt || fail "no throughput table: $(cat out.txt)"
n=$(sed -n '/^queries per second/,$p' out.txt | grep -Ec '^(or|bmw|and) +(10|100) [0-9]+ .*( +[0-9]+){5} +[0-9.]+x$')
[ "$n" -eq $((6 * ndev)) ] || fail "throughput table: $n lines, want $((6 * ndev)): $(sed -n '/^queries per second/,$p' out.txt)"
grep -q '^<svg' t.svg && grep -q '</svg>' t.svg || fail "not an SVG: $(head -c 200 t.svg)"
# a panel per k and device; a batch line and a single line per algorithm in each
[ "$(grep -c '<polyline' t.svg)" -eq $((2 * ndev * 3 * 2)) ] || fail "throughput lines: $(grep -c '<polyline' t.svg)"
[ "$(grep -c 'queries in flight' t.svg)" -eq $((2 * ndev)) ] || fail "panels: $(grep -c 'queries in flight' t.svg)"
# the CDF shows the fewest threads' single queries and the oracle only
[ "$(grep -c '<polyline' c.svg)" -eq $((3 * 2 * ndev + 2)) ] || fail "CDF series: $(grep -c '<polyline' c.svg)"

begin "--per-query: a row per timed query of every series, as the summary counts them"
head -1 p.csv | grep -q '^algorithm,k,device,mode,batch,threads,query,id,latency_us,terms,len_min,len_second,len_max,len_sum,uboc,ran,variant,partitions$' ||
    fail "header: $(head -1 p.csv)"
# per series (algorithm, k, device, mode, batch, threads): as many rows as the
# summary's queries, in query order (positions 0..10, ids 1..11: the 12th
# query has no known term), latencies > 0 whose mean is the summary's
awk -F, 'FNR == 1 { next }
    NR == FNR { key = $1 "," $2 "," $3 "," $15 "," $16 "," $17; want[key] = $5; mean[key] = $6; next }
    { key = $1 "," $2 "," $3 "," $4 "," $5 "," $6
      if ($9 <= 0 || $7 != n[key] || $8 != n[key] + 1) { print "bad row: " $0; bad = 1 }
      n[key]++; sum[key] += $9 }
    END { for (k in want) {
              if (n[k] != want[k]) { print k ": " n[k] " rows, " want[k] " timed"; bad = 1; continue }
              d = sum[k] / n[k] - mean[k]
              if (d > 0.002 || d < -0.002) { print k ": mean " sum[k] / n[k] " vs " mean[k]; bad = 1 } }
          for (k in n) if (!(k in want)) { print "no such series: " k; bad = 1 }
          exit bad }' t.csv p.csv > chk.txt || fail "$(head -5 chk.txt)"
[ "$(($(wc -l < p.csv) - 1))" -eq $(((3 * 2 * 5 * ndev + 2) * 11)) ] || fail "$(wc -l < p.csv) lines"
# the same features for a query in every row; an algorithm and variant that ran
awk -F, 'NR > 1 { f = $10 "," $11 "," $12 "," $13 "," $14 "," $15
                  if (($7 in g) && g[$7] != f) bad = 1; g[$7] = f
                  if ($16 == "" || $17 == "") bad = 1 } END { exit bad }' p.csv ||
    fail "features differ between rows of a query, or no algorithm/variant"
# the features are the lists' lengths `tandem terms` prints (stemmer none:
# the words are the terms): query 8 (position 7) and query 3 (position 2)
"$T" terms idx > terms.txt || fail "tandem terms failed"
for qn in 8 3; do
    words=$(grep "^$qn:" q.txt | cut -d: -f2)
    want=$(echo "$words" | tr ' ' '\n' | sort -u | awk -F'\t' 'NR == FNR { df[$1] = $2; next }
        ($1 in df) { l = df[$1]; n++; s += l; if (l > mx) mx = l
                     if (mn == "" || l < mn) { se = mn; mn = l } else if (se == "" || l < se) se = l }
        END { print n "," mn "," (se == "" ? 0 : se) "," mx "," s }' terms.txt -)
    got=$(awk -F, -v q=$((qn - 1)) '$7 == q && $1 == "or" { print $10 "," $11 "," $12 "," $13 "," $14; exit }' p.csv)
    [ -n "$want" ] && [ "$got" = "$want" ] || fail "query $qn: features $got, tandem terms says $want"
done
awk -F, '$7 == 2 && ($10 != 1 || $12 != 0 || $11 != $13 || $15 != 0) { bad = 1 } END { exit bad }' p.csv ||
    fail "one-term query: $(awk -F, '$7 == 2' p.csv | head -2)"

begin "a batched series with several sender threads, weighted queries"
printf '{"id": "a", "terms": {"flow": 2.5, "plate": 1}}\n{"id": "b", "terms": {"layer": 1}}\n' > qw.jsonl
run "$T" bench queries idx --queries qw.jsonl --algorithms maxscore -k 5 --warmup 0 --batch 2 --batch-threads 2
want_ok
grep -Eq "^maxscore +5 0 .* batch 2x2 " out.txt || fail "$(cat out.txt)"
grep -q "every answer is the oracle's" err.txt || fail "$(tail -3 err.txt)"

begin "auto, one k, weighted JSON-lines queries"
printf '{"id": "a", "terms": {"flow": 2.5, "plate": 1}}\n{"id": "b", "terms": {"layer": 1}}\n{"id": "c", "terms": {"nosuchterm": 1}}\n' > q.jsonl
run "$T" bench queries idx --queries q.jsonl --algorithms auto,bmw -k 7 --warmup 0 --oracle-threads 2
want_ok
grep -q "3 queries of q.jsonl: 2 ranked, 1 without" err.txt || fail "$(head -2 err.txt)"
grep -Eq "^auto +7 0 " out.txt && grep -Eq "^bmw +7 0 " out.txt || fail "$(cat out.txt)"
grep -Eq "^oracle-or +7 host, 2 threads +2 " out.txt || fail "oracle row: $(cat out.txt)"
grep -q "every answer is the oracle's" err.txt || fail "$(tail -3 err.txt)"

begin "--limit takes the first queries"
run "$T" bench queries idx --queries q.txt --limit 2 --algorithms or -k 1 --warmup 1
want_ok
grep -q "2 queries of q.txt: 2 ranked" err.txt || fail "$(head -2 err.txt)"

begin "--budget stops a series early, on the first queries"
run "$T" bench queries idx --queries q.txt --algorithms or -k 10 --warmup 0 --budget 0.000001
want_ok
grep -Eq "^or +10 0 [^ ].* +1 +[0-9.]+ " out.txt || fail "want 1 query timed: $(cat out.txt)"
grep -Eq "^oracle-or +10 host, 1 thread +11 " out.txt || fail "the oracle runs all: $(cat out.txt)"
run "$T" bench queries idx --queries q.txt --algorithms or -k 10 --warmup 0 --budget 0.000001 --per-query pb.csv
want_ok
[ "$(grep -c '^or,10,0,' pb.csv)" -eq 1 ] && [ "$(grep -c '^oracle-or,10,' pb.csv)" -eq 11 ] ||
    fail "--per-query under a budget: $(cat pb.csv)"

begin "non-default BM25 k1 and b, single and batched: every algorithm's answers the oracle's"
run "$T" bench queries idx --queries q.txt --algorithms all -k 3,50 --warmup 1 --k1 0.9 --b 0.4 --batch 4
want_ok
grep -q "every answer is the oracle's" err.txt || fail "$(tail -3 err.txt)"
grep -Eq "^maxscore +50 0 .* single x1 " out.txt && grep -Eq "^bmw +3 0 .* batch 4 " out.txt ||
    fail "$(cat out.txt)"

begin "--oracle-cache: written, then read instead of running the oracle; foreign or damaged refused"
rm -f oc.bin
run "$T" bench queries idx --queries q.txt --algorithms and_or -k 10,100 --warmup 0 --oracle-cache oc.bin --oracle-only
want_ok
grep -Eq "^oracle-or +100 host, 1 thread +11 " out.txt && grep -Eq "^oracle-and +100 host" out.txt ||
    fail "oracle rows: $(cat out.txt)"
! grep -Eq "^and_or " out.txt || fail "--oracle-only ran a device series: $(cat out.txt)"
grep -q "oracle cache oc.bin: 22 answers written" err.txt || fail "$(cat err.txt)"
cp oc.bin oc.orig
run "$T" bench queries idx --queries q.txt --algorithms and_or -k 10,100 --warmup 0 --oracle-cache oc.bin
want_ok
grep -q "every answer is the oracle's" err.txt || fail "$(tail -3 err.txt)"
grep -Eq "^oracle-or +100 host, 11 \(all\) cached +11 " out.txt || fail "not from the cache: $(cat out.txt)"
! grep -q "^oracle (" err.txt || fail "the oracle ran again: $(cat err.txt)"
cmp -s oc.bin oc.orig || fail "a run that computed nothing rewrote the cache"
# a cache of the first 5 queries serves them; the rest are run and added
run "$T" bench queries idx --queries q.txt --limit 5 --algorithms or -k 100 --warmup 0 --oracle-cache oc5.bin
want_ok
run "$T" bench queries idx --queries q.txt --algorithms or,and -k 100 --warmup 0 --oracle-cache oc5.bin --oracle-only
want_ok
grep -Eq "^oracle-or +100 host, 5 cached +11 " out.txt || fail "partial cache: $(cat out.txt)"
grep -q "oracle cache oc5.bin: 22 answers written" err.txt || fail "$(cat err.txt)"
# another k, another scoring, other queries, another index: refused, file untouched
run "$T" bench queries idx --queries q.txt -k 10,1000 --oracle-cache oc.bin
want_fail "oc.bin: answers at k = 100; this run's largest k is 1000"
run "$T" bench queries idx --queries q.txt -k 100 --k1 2 --oracle-cache oc.bin
want_fail "oc.bin: answers for scoring"
sed 's/flow/heat/' q.txt > q2.txt
run "$T" bench queries idx --queries q2.txt -k 100 --oracle-cache oc.bin
want_fail "oc.bin: its query 1 is not this run's"
"$T" gen collection --docs 500 --seed 9 --vocab-from q.txt --quiet -o c2.txt >/dev/null 2>&1 &&
"$T" build --quiet --stemmer none -o idx2 c2.txt >/dev/null 2>&1 || fail "cannot build idx2"
run "$T" bench queries idx2 --queries q.txt -k 100 --oracle-cache oc.bin
want_fail "oc.bin: answers for another index"
cmp -s oc.bin oc.orig || fail "a refused cache was changed"
# damage: a flipped byte, a truncated file, not a cache at all
cp oc.orig bad.bin
printf '\x55' | dd of=bad.bin bs=1 seek=200 conv=notrunc 2>/dev/null
run "$T" bench queries idx --queries q.txt -k 10,100 --oracle-cache bad.bin
want_fail "bad.bin: offset [0-9]*: checksum mismatch"
head -c 150 oc.orig > bad.bin
run "$T" bench queries idx --queries q.txt -k 10,100 --oracle-cache bad.bin
want_fail "bad.bin: offset [0-9]*: .*damaged"
run "$T" bench queries idx --queries q.txt -k 10,100 --oracle-cache q.txt
want_fail "q.txt"
head -11 qa.txt | cmp -s - q.txt || fail "the query log changed"
run "$T" bench queries idx --queries q.txt -k 10,100 --oracle-cache idx
want_fail "--oracle-cache\|idx"
cmp -s idx idx.orig || fail "the index changed"

begin "bad values are refused, naming the option"
for bad in "-k 0" "-k 10001" "-k 10,10" "-k 10," "-k x" "--limit 0" "--limit -3" "--warmup 1.5" \
           "--oracle-threads 0" "--budget 0" "--budget nan" "--algorithms foo" "--algorithms or,or" "--format nope" \
           "--batch 0" "--batch 65537" "--batch 8,8" "--batch 1,x" "--threads 0" "--threads 2,2" \
           "--batch-threads 0" "--k1 -1" "--k1 101" "--b 1.5" "--b x" "--spread nope" \
           "--spread default"; do
    # shellcheck disable=SC2086
    run "$T" bench queries idx --queries q.txt $bad
    want_fail "${bad%% *}"
done
run "$T" bench queries idx --queries q.txt --bogus
want_fail "unknown or incomplete option '--bogus'"
run "$T" bench queries idx
want_fail "need INDEX and --queries"
run "$T" bench queries idx --queries nosuchfile
want_fail "nosuchfile"
run "$T" bench queries nosuchindex --queries q.txt
want_fail "nosuchindex"
# kernel build options the driver refuses: the engine's clear error, no series
run "$T" bench queries idx --queries q.txt --build-options -cl-no-such-option
want_fail "no-such-option"

begin "--spread: one series over every device together, every answer the oracle's"
run "$T" bench queries idx --queries q.txt --algorithms and,bmw -k 10 --warmup 3 --batch 4 \
    --spread hybrid
want_ok
grep -q "every answer is the oracle's" err.txt || fail "$(tail -3 err.txt)"
grep -Eq "^device [0-9]+: [0-9]+ devices together under policy hybrid" err.txt ||
    fail "no spread line: $(head -5 err.txt)"
for a in and bmw; do
    for mode in "single x1" "batch 4"; do
        grep -Eq "^$a +10 [0-9]+ all [0-9]+, hybrid .* $mode " out.txt ||
            fail "$a: no spread $mode row: $(cat out.txt)"
    done
done
! grep -Eq "^(and|bmw) +10 0 " out.txt || fail "a series a device ran too: $(cat out.txt)"

begin "--spread on a split handle: single queries on every partition, batches whole"
# two PoCL devices, the whole index and a shard on each; threshold 1: every
# single query (each has a posting) splits, every batch runs whole
POCL_DEVICES="pthread pthread" TANDEM_PARTITION=split TANDEM_SPLIT_MIN_POSTINGS=1 \
    run "$T" bench queries idx --queries q.txt --algorithms and,bmw,and_or -k 10,1000 \
    --warmup 2 --batch 4 --spread hybrid --per-query ps.csv
want_ok
grep -q "every answer is the oracle's" err.txt || fail "$(tail -3 err.txt)"
nd=$(sed -n 's/^device [0-9]*: \([0-9]*\) devices together.*/\1/p' err.txt)
if [ "${nd:-0}" -ge 2 ]; then
    grep -q "11 of 11 queries ran on every partition at once" err.txt ||
        fail "no split line: $(cat err.txt)"
    awk -F, -v n="$nd" 'NR > 1 && $3 >= 0 && (($4 == "single") != ($18 == n)) { bad = 1 }
                        END { exit bad }' ps.csv ||
        fail "single rows not on $nd partitions, or batch rows split: $(cat ps.csv)"
    POCL_DEVICES="pthread pthread" TANDEM_PARTITION=split \
        TANDEM_SPLIT_MIN_POSTINGS=4611686018427387904 \
        run "$T" bench queries idx --queries q.txt --algorithms and -k 10 --warmup 2 \
        --spread hybrid --per-query pw.csv
    want_ok
    awk -F, 'NR > 1 && $18 != 0 { bad = 1 } END { exit bad }' pw.csv ||
        fail "a query split above the threshold: $(cat pw.csv)"
else
    echo "split handle: skipped: PoCL did not give two devices"
fi

begin "outputs: never over an input, never one file twice"
run "$T" bench queries idx --queries q.txt --csv idx
want_fail "--csv\|idx"
cmp -s idx idx.orig || fail "the index changed"
run "$T" bench queries idx --queries q.txt --csv same --plot same
want_fail "the same file"
run "$T" bench queries idx --queries q.txt --plot same --throughput-plot same
want_fail "the same file"
run "$T" bench queries idx --queries q.txt --throughput-plot idx
want_fail "--throughput-plot\|idx"
cmp -s idx idx.orig || fail "the index changed"
run "$T" bench queries idx --queries q.txt --csv -
want_fail "standard output"
run "$T" bench queries idx --queries q.txt --csv same --per-query same
want_fail "the same file"
run "$T" bench queries idx --queries q.txt --per-query idx
want_fail "--per-query\|idx"
cmp -s idx idx.orig || fail "the index changed"
# a directory that does not exist: refused before the benchmark runs
run "$T" bench queries idx --queries q.txt --per-query nodir/p.csv
want_fail "--per-query: nodir/p.csv: cannot create"
[ ! -e nodir ] && ! grep -q '^oracle' out.txt || fail "ran or wrote anyway: $(ls; cat out.txt)"
run "$T" bench queries idx --queries q.txt --csv nodir/s.csv
want_fail "--csv: nodir/s.csv: cannot create"
# a run that fails leaves an earlier per-query file as it was
printf 'keep\n' > keep.csv
run "$T" bench queries idx --queries q.txt -k 10,100 --per-query keep.csv --oracle-cache bad.bin
want_fail "bad.bin"
[ "$(cat keep.csv)" = keep ] || fail "a failed run changed the per-query file"

[ "$failures" -eq 0 ] && echo "test_bench_queries: all cases passed"
exit "$failures"
