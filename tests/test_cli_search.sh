#!/usr/bin/env bash
# `tandem search` and `tandem run` (issue 14 items 1-2): results, JSON, a
# TREC run from each query-file format, the same answers from every
# algorithm, the same run bytes for every --batch and --threads, a failing
# query named without losing the others, the progress bar only on a
# terminal, and clear failures for bad options. Usage: test_cli_search.sh
# TANDEM. The exit status is the number of failures.
set -u
T=$1
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"

printf 'd1\thello world\nd2\tboundary layers of flows\nd3\tthe flow of air, flowing\nd4\tair air air\n' > in.txt
printf 'the\nof\n' > stop.txt
"$T" build --quiet --format lines --stopwords stop.txt -o idx in.txt >/dev/null 2>&1 || { echo "cannot build a fixture index"; exit 1; }

begin "search: ranks, scores, names; device and time on stderr"
run "$T" search idx "flow air" -k 10
want_ok
[ "$(wc -l < out.txt)" -eq 3 ] || fail "want 3 hits: $(cat out.txt)"
head -1 out.txt | grep -q $'^1\t[0-9.]*\td3$' || fail "first hit: $(head -1 out.txt)"
grep -Eq "^3 results; [a-z_]+ on device [0-9]+ \(.+\), [0-9.]+ ms; policy [a-z-]+, queued [0-9.]+ ms" err.txt ||
    fail "no device, time and policy line: $(cat err.txt)"

begin "search --json"
run "$T" search idx "boundary layer" --json
want_ok
grep -q '"hits": \[{"rank": 1, "docid": 1, "name": "d2"' out.txt || fail "$(cat out.txt)"
grep -q '"algorithm": "' out.txt || fail "no algorithm: $(cat out.txt)"
grep -q '"variant": "\(item\|group\|compressed\)", "launches": [1-9]' out.txt || fail "no variant/launches: $(cat out.txt)"
grep -Eq '"batch": [1-9][0-9]*, "policy": "[a-z-]+", "load_mode": "(single|batch)", "queue_seconds": [0-9.e-]+, "predicted_seconds": [0-9.e-]+, "handovers": 0, ' out.txt ||
    fail "no scheduler fields: $(cat out.txt)"

begin "search --json on the host path: no launch, no byte, the device's hits"
# the tests run with TANDEM_HOST_MAX_POSTINGS=0 (tests/CMakeLists.txt): here
# unset (the row's threshold: these lists are short) and never, per algorithm
for a in auto or and and_or maxscore; do
    env -u TANDEM_HOST_MAX_POSTINGS "$T" search idx "boundary layer flow" --algorithm $a -k 5 \
        --json > host.json 2> err.txt || fail "$a: host search failed: $(cat err.txt)"
    grep -q '"variant": "host", "launches": 0, "bytes_up": 0, "bytes_down": 0, "batch": 1' \
        host.json || fail "$a: not the host's: $(cat host.json)"
    TANDEM_HOST_MAX_POSTINGS=0 "$T" search idx "boundary layer flow" --algorithm $a -k 5 \
        --json > dev.json 2> err.txt || fail "$a: device search failed: $(cat err.txt)"
    [ "$(sed 's/.*"hits"//' host.json)" = "$(sed 's/.*"hits"//' dev.json)" ] ||
        fail "$a: host hits $(cat host.json) device $(cat dev.json)"
done
TANDEM_HOST_MAX_POSTINGS=1k run "$T" search idx "flow air"
want_fail "TANDEM_HOST_MAX_POSTINGS=1k: expected a whole number of postings"

begin "search: TANDEM_SEARCH_VARIANT naming no variant is refused, naming it"
TANDEM_SEARCH_VARIANT=bogus run "$T" search idx "flow air"
want_fail "TANDEM_SEARCH_VARIANT=bogus: expected item, group or compressed"

begin "search: TANDEM_ZR_LAYOUT naming no layout is refused, naming it"
TANDEM_ZR_LAYOUT=bogus run "$T" search idx "flow air"
want_fail "TANDEM_ZR_LAYOUT=bogus: expected range or interleaved"

begin "search --policy: each policy answers the same; a bad one is refused"
run "$T" search idx "flow air" --policy direct
want_ok
cp out.txt pol.direct
for p in hybrid best; do
    run "$T" search idx "flow air" --policy "$p"
    want_ok
    cmp -s pol.direct out.txt || fail "$p: $(cat out.txt)"
    grep -q "policy $p" err.txt || fail "$p: $(cat err.txt)"
done
run "$T" search idx "flow" --policy fastest
want_fail "fastest"

begin "search: every algorithm gives the same ranking"
for a in or wand bmw maxscore auto; do
    run "$T" search idx "flow air hello" --algorithm "$a"
    want_ok
    cp out.txt "res.$a"
    cmp -s res.or "res.$a" || fail "$a differs from or"
done
run "$T" search idx "flow air" --algorithm and
want_ok
[ "$(wc -l < out.txt)" -eq 1 ] || fail "and: $(cat out.txt)"

begin "search: a query of stopwords and unknown words has no results"
run "$T" search idx "the zzzz"
want_ok
[ ! -s out.txt ] || fail "$(cat out.txt)"

begin "search: bad options are refused, naming them"
run "$T" search idx "flow" -k 0
want_fail "-k"
run "$T" search idx "flow" -k 10001
want_fail "-k"
run "$T" search idx "flow" --algorithm fast
want_fail "fast"
run "$T" search idx "flow" --device 99
want_fail "device"
run "$T" search idx "flow" --scoring tfidf
want_fail "scoring"
run "$T" search idx "flow" --b 2
want_fail "--b"
run "$T" search idx
want_fail "need INDEX"
run "$T" search no-such-index "flow"
want_fail "no-such-index"

begin "run: id:text lines to a TREC run"
printf 'q1:flow\nq2:hello world\nq3:the\n' > q.txt
run "$T" run idx --queries q.txt -o run.txt -k 2 --tag T1
want_ok
[ "$(grep -c '^q1 Q0 ' run.txt)" -eq 2 ] || fail "q1: $(cat run.txt)"
grep -q '^q2 Q0 d1 1 [0-9.]* T1$' run.txt || fail "q2: $(cat run.txt)"
grep -q '^q3 ' run.txt && fail "q3 (a stopword) has results"

begin "run: TSV and weighted JSON lines; stdout"
printf 'a\tflow\n' > q.tsv
run "$T" run idx --queries q.tsv -o -
want_ok
grep -q '^a Q0 d3 1 ' out.txt || fail "$(cat out.txt)"
printf '{"id": "w", "terms": {"air": 1.0, "hello": 10}}\n' > q.jsonl
run "$T" run idx --queries q.jsonl -o - -k 1
want_ok
grep -q '^w Q0 d1 1 ' out.txt || fail "weights: $(cat out.txt)"

begin "run --docname-prefix: names as the qrels spell them"
run "$T" run idx --queries q.tsv -o - --docname-prefix CACM-
want_ok
grep -q '^a Q0 CACM-d3 1 ' out.txt || fail "$(cat out.txt)"

begin "run: bad inputs"
run "$T" run idx --queries q.txt
want_fail "need INDEX"
run "$T" run idx --queries q.txt -o run2.txt --tag "a b"
want_fail "--tag"
run "$T" run idx --queries q.txt -o run2.txt --docname-prefix "a b"
want_fail "--docname-prefix"
cp idx idx.orig
run "$T" run idx --queries q.txt -o idx
want_fail "idx"
cmp -s idx idx.orig || fail "the index was overwritten"
printf 'no colon here\n' > bad.txt
run "$T" run idx --queries bad.txt -o run3.txt --format colon
want_fail "bad.txt"

begin "run: the same bytes for single calls, any batch size and any thread count"
# A generated collection and 120 queries drawn from its vocabulary (some
# with words it lacks), so that batches mix long and short lists.
cat > log.txt <<'EOF2'
1:boundary layer flow
2:heat transfer in a flat plate
3:supersonic flow over a cone
4:laminar boundary layer heat
5:pressure distribution on a wing
6:wing flow pressure heat plate cone
7:turbulent mixing layer
8:shock wave boundary layer interaction
EOF2
"$T" gen collection --docs 1500 --seed 3 --vocab-from log.txt --quiet -o big.txt >/dev/null 2>&1 &&
"$T" build --quiet --stemmer none -o big.idx big.txt >/dev/null 2>&1 || fail "cannot build the batch fixture"
awk -F: '{ print }' log.txt > many.txt
for i in $(seq 9 120); do
    awk -F: -v i="$i" 'NR == (i % 8) + 1 { split($2, w, " "); t = ""
        for (j = 1; j <= length(w); j++) if ((i + j) % 3) t = t " " w[j]
        print i ":" t " " w[1] (i % 5 ? "" : " nosuchword") }' log.txt >> many.txt
done
opts=("--batch 1" "--batch 64" "--batch 7 --threads 3" "--batch 0 --threads 4" "--batch 500 --threads 2")
pair=0
for k in 10 1000; do
    for a in auto bmw and; do
        run "$T" run big.idx --queries many.txt -o ref.run -k "$k" --algorithm "$a" --batch 0
        want_ok
        [ -s ref.run ] || fail "k $k $a: empty run"
        these=("${opts[@]}")
        # small inputs (the rusticl stage: llvmpipe took 93 s for all 30):
        # each k and algorithm against one option in turn, every option met
        [ -n "${TANDEM_TEST_SMALL:-}" ] && these=("${opts[pair % ${#opts[@]}]}")
        pair=$((pair + 1))
        for opt in "${these[@]}"; do
            # shellcheck disable=SC2086
            run "$T" run big.idx --queries many.txt -o b.run -k "$k" --algorithm "$a" $opt
            want_ok
            cmp -s ref.run b.run || fail "k $k $a $opt: the run differs from single calls': $(diff ref.run b.run | head -3)"
        done
    done
done
grep -q '120 queries in [0-9.]* s' err.txt || fail "no summary: $(cat err.txt)"

begin "run: a failing query is named, the others are written, exit status 1"
long=$(for i in $(seq 1 1100); do printf 'flow '; done)
{ head -3 many.txt; echo "bad:$long"; sed -n '4,20p' many.txt; } > withbad.txt
head -20 many.txt > good.txt
run "$T" run big.idx --queries good.txt -o good.run -k 10 --batch 0
want_ok
for opt in "--batch 0" "--batch 8" "--batch 3 --threads 2"; do
    rm -f bad.run
    # shellcheck disable=SC2086
    run "$T" run big.idx --queries withbad.txt -o bad.run -k 10 $opt
    want_fail "query 'bad' (line 4)"
    grep -q "1 of 21 queries failed" err.txt || fail "$opt: no count: $(cat err.txt)"
    cmp -s good.run bad.run || fail "$opt: the other queries' run differs: $(diff good.run bad.run | head -3)"
done

begin "run: an empty query file says it has no queries (issue 27 item 6)"
: > none.txt
printf '\n \n' > blank.txt
for qf in none.txt blank.txt; do
    echo "old run" > old.run
    run "$T" run big.idx --queries $qf -o old.run
    want_fail "$qf: the file has no queries"
    grep -q "every query failed" err.txt && fail "$qf: blames failed queries: $(cat err.txt)"
    [ "$(cat old.run)" = "old run" ] || fail "$qf: the old run was replaced"
done

begin "run: when every query fails, an old run is left as it was"
echo "old run" > old.run
printf 'b1:%s\nb2:%s\n' "$long" "$long" > allbad.txt
run "$T" run big.idx --queries allbad.txt -o old.run
want_fail "every query failed"
grep -q "query 'b2' (line 2)" err.txt || fail "b2 not named: $(cat err.txt)"
[ "$(cat old.run)" = "old run" ] || fail "the old run was replaced"

begin "run: no progress bar in a pipe, one on a terminal"
run "$T" run big.idx --queries many.txt -o p.run -k 10
want_ok
grep -q $'\r\|ETA\|\[#' err.txt && fail "progress output in a pipe: $(od -c err.txt | head -3)"
[ "$(wc -l < err.txt)" -eq 1 ] || fail "stderr in a pipe: $(cat err.txt)"
if command -v script >/dev/null 2>&1; then
    timeout 60 script -qec "'$T' run big.idx --queries many.txt -o p2.run -k 10 --batch 4" /dev/null > tty.txt 2>&1
    grep -q 'run \[#*\.*\] [0-9]*/120 queries, [0-9]*/s' tty.txt || fail "no bar on a terminal: $(od -c tty.txt | head -5)"
    grep -q '120/120 queries' tty.txt || fail "the bar does not end at 120/120: $(tr '\r' '\n' < tty.txt | tail -3)"
    cmp -s p.run p2.run || fail "the run on a terminal differs"
else
    echo "run progress bar on a terminal: skipped (no 'script')"
fi

begin "run: --batch and --threads are checked"
run "$T" run big.idx --queries many.txt -o x.run --batch 65537
want_fail "--batch"
run "$T" run big.idx --queries many.txt -o x.run --batch -1
want_fail "--batch"
run "$T" run big.idx --queries many.txt -o x.run --threads 0
want_fail "--threads"
run "$T" run big.idx --queries many.txt -o x.run --threads 257
want_fail "--threads"
run "$T" run big.idx --queries many.txt -o x.run -k 10 --policy best --batch 0 --threads 2
want_ok
run "$T" run big.idx --queries many.txt -o y.run -k 10
want_ok
cmp -s x.run y.run || fail "--policy best changed the run"
# batch calls go through the lanes too (tdm_search_batch, docs/SCHED.md)
for pol in best hybrid cpu-only direct; do
    run "$T" run big.idx --queries many.txt -o z.run -k 10 --policy "$pol" --batch 16 --threads 2
    want_ok
    cmp -s z.run y.run || fail "--policy $pol with batch calls changed the run"
done

echo "$failures failure(s)"
exit "$failures"
