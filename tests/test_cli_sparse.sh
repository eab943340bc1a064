#!/usr/bin/env bash
# Learned sparse retrieval end to end (issue 30): a JSON vector collection
# (plain and gzip, integer and float weights) built into an impact index, a
# SPLADE-style query log of repeated WordPiece tokens and JSON vector queries
# run on it, evaluated against qrels; every algorithm the same run; BM25 on the
# impact index refused; bench queries checked against the oracle.
# Usage: test_cli_sparse.sh TANDEM. The exit status is the number of failures.
set -u
T=$1
CLI_TIMEOUT=300
. "$(dirname "$0")/cli_lib.sh"

cat > coll.jsonl <<'J'
{"id": "athena", "contents": "the goddess athena", "vector": {"athena": 90, "goddess": 60, "wisdom": 70, "greek": 40, "##ing": 5}}
{"id": "poseidon", "contents": "", "vector": {"poseidon": 90, "god": 60, "sea": 70, "greek": 40}}
{"id": "minerva", "vector": {"minerva": 90, "goddess": 60, "wisdom": 60, "roman": 40, "##ing": 9}}
{"id": "neptune", "vector": {"neptune": 90, "god": 60, "sea": 65, "roman": 40}}
J
gzip -c coll.jsonl > coll.jsonl.gz
sed 's/: \([0-9]*\)\([,}]\)/: \1.25\2/g' coll.jsonl > float.jsonl

begin "build: a JSON vector collection is an impact index, plain or gzip the same file"
run "$T" build --quiet -o idx coll.jsonl
want_ok
run "$T" build --quiet -o idxz coll.jsonl.gz
want_ok
cmp -s idx idxz || fail "gzip input gave another index"
run "$T" stats idx
grep -q "scoring        impact (integer weights as given)" out.txt || fail "$(cat out.txt)"
grep -q "stemmer        none" out.txt || fail "$(cat out.txt)"

begin "build: float weights need a rule; scale and linear recorded"
run "$T" build --quiet -o f.idx float.jsonl
want_fail "line 1, column .*not an integer"
run "$T" build --quiet --quantize scale:4 -o f.idx float.jsonl
want_ok
"$T" stats f.idx | grep -q "impact (quantized scale:4)" || fail "scale not recorded"
run "$T" build --quiet --quantize linear:8 -o l.idx float.jsonl
want_ok
"$T" stats l.idx | grep -q "impact (quantized linear:8, largest weight 90.25" || fail "linear not recorded"
run "$T" build --quiet --quantize bogus -o b.idx float.jsonl
want_fail "quantize 'bogus'"
printf '{"id": "x", "vector": {"a": -1}}\n' > neg.jsonl
run "$T" build --quiet -o b.idx neg.jsonl
want_fail "neg.jsonl: line 1.*term 'a' is negative"

begin "run: a SPLADE-style log of repeated tokens (1,500 tokens, 5 terms)"
{
    printf 'q1\t'; for i in $(seq 300); do printf 'goddess wisdom ##ing '; done
    printf 'greek greek\n'
    printf 'q2\t'; for i in $(seq 400); do printf 'sea god '; done; printf 'roman\n'
} > q.tsv
run "$T" run idx --queries q.tsv -k 10 -o q.run
want_ok
[ "$(wc -l < q.run)" -eq 6 ] || fail "want 6 lines: $(cat q.run)"
# q1 on athena: 300 x 60 + 300 x 70 + 300 x 5 + 2 x 40 = 40580; on minerva
# 300 x (60 + 60 + 9) = 38700; q2: poseidon 400 x (60 + 70), neptune 400 x
# (60 + 65) + 40
grep -q "^q1 Q0 athena 1 40580\.0* " q.run || fail "q1: $(cat q.run)"
grep -q "^q1 Q0 minerva 2 38700\.0* " q.run || fail "q1: $(cat q.run)"
grep -q "^q2 Q0 poseidon 1 52000\.0* " q.run || fail "q2: $(cat q.run)"
grep -q "^q2 Q0 neptune 2 50040\.0* " q.run || fail "q2: $(cat q.run)"

begin "run: every algorithm gives the same run"
for a in or wand bmw maxscore; do
    run "$T" run idx --queries q.tsv -k 10 --algorithm $a -o q.$a.run
    want_ok
    cmp -s q.run q.$a.run || fail "$a differs"
done

begin "run: JSON vector queries, the same run as the tokens"
printf '{"id": "q1", "vector": {"goddess": 300, "wisdom": 300, "##ing": 300, "greek": 2}}\n{"id": "q2", "vector": {"sea": 400, "god": 400, "roman": 1}}\n' > q.jsonl
run "$T" run idx --queries q.jsonl -k 10 -o qj.run
want_ok
cmp -s q.run qj.run || fail "$(diff q.run qj.run)"

begin "eval: the run against qrels"
printf 'q1 0 athena 1\nq2 0 poseidon 1\n' > qrels
run "$T" eval qrels q.run
want_ok
grep -Eq "^map\s+all\s+1\.0000" out.txt || fail "$(cat out.txt)"

begin "search: BM25 on an impact index is refused; impact is the default"
run "$T" search --scoring bm25 idx goddess
want_fail "is an impact index"
run "$T" search idx goddess
want_ok
head -1 out.txt | grep -q $'\t60.000000\t' || fail "$(cat out.txt)"

begin "search: free text on an impact index is split on white space, terms as written"
run "$T" search idx '##ing'
want_ok
head -1 out.txt | grep -q $'^1\t9.000000\tminerva$' || fail "$(cat out.txt)"
# a run of one token repeated weighs its length: athena 3 x 5 + 40, minerva 3 x 9
run "$T" search idx '##ing ##ing ##ing   greek'
want_ok
head -1 out.txt | grep -q $'^1\t55.000000\tathena$' || fail "$(cat out.txt)"
run "$T" search idx 'Greek'
want_ok
grep -q '^0 results' err.txt || fail "case folded: $(cat out.txt err.txt)"

begin "bench queries: the tokens log on the impact index, answers the oracle's"
run "$T" bench queries idx --queries q.tsv --algorithms or,wand,bmw,maxscore --k 10,1000 \
    --warmup 1 --budget 1 --batch 2
want_ok
grep -q "every answer is the oracle's" out.txt err.txt || fail "$(tail -3 out.txt)"

begin "import --impact: CIFF and PISA exports of impacts are impact indexes"
run "$T" export --to ciff idx -o idx.ciff
want_ok
run "$T" export --to pisa idx -o idxp
want_ok
run "$T" import --quiet --from ciff idx.ciff -o plain.idx
want_ok
run "$T" search --scoring bm25 plain.idx goddess
want_ok  # not marked: BM25 allowed (the impact scoring must be asked for)
for from in ciff pisa; do
    in=idx.ciff; [ $from = pisa ] && in=idxp
    run "$T" import --quiet --impact --from $from $in -o imp.$from.idx
    want_ok
    "$T" stats imp.$from.idx | grep -q "scoring        impact (integer weights as given)" ||
        fail "$from: not an impact index"
    run "$T" search --scoring bm25 imp.$from.idx goddess
    want_fail "is an impact index"
    run "$T" run imp.$from.idx --queries q.tsv -k 10 -o q.imp.$from.run
    want_ok
    cmp -s q.run q.imp.$from.run || fail "$from: $(diff q.run q.imp.$from.run)"
done

begin "run: more than 1024 distinct terms in a line is named"
{ printf 'big\t'; for i in $(seq 1030); do printf 't%d ' $i; done; printf '\n'; } > big.tsv
run "$T" run idx --queries big.tsv -o big.run
want_fail "query 'big': more than 1024 distinct terms"

exit $failures
