#!/usr/bin/env bash
# `tandem search` and `tandem run` (issue 14 items 1-2): results, JSON, a
# TREC run from each query-file format, the same answers from every
# algorithm, and clear failures for bad options. Usage: test_cli_search.sh
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
grep -q "on device" err.txt || fail "no device line: $(cat err.txt)"

begin "search --json"
run "$T" search idx "boundary layer" --json
want_ok
grep -q '"hits": \[{"rank": 1, "docid": 1, "name": "d2"' out.txt || fail "$(cat out.txt)"
grep -q '"algorithm": "' out.txt || fail "no algorithm: $(cat out.txt)"
grep -q '"variant": "\(item\|group\)", "launches": [1-9]' out.txt || fail "no variant/launches: $(cat out.txt)"

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

echo "$failures failure(s)"
exit "$failures"
