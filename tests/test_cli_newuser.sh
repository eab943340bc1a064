#!/usr/bin/env bash
# What a new user hits (issue 27 item 7): named stopword lists and the
# default, the analyzer through a CIFF or PISA round trip, lookup of several
# words, queries with no known term named, lines files without tabs, input
# directories, and the messages and exit statuses of the CLI. Usage:
# test_cli_newuser.sh TANDEM. The exit status is the number of failures.
set -u
T=$1
CLI_TIMEOUT=60
. "$(dirname "$0")/cli_lib.sh"

printf 'd1\tthe quick brown foxes\nd2\ta dog and a fox\nd3\tenergy of the dogs\n' > in.txt

begin "build: Lucene's 33 stopwords by default; snowball, none, /dev/null by name"
run "$T" build --quiet -o dflt.idx in.txt
want_ok
run "$T" stats dflt.idx
grep -Eq '^stopwords +33$' out.txt || fail "default: $(grep stopwords out.txt)"
for sw in "snowball 174" "none 0" "/dev/null 0"; do
    run "$T" build --quiet --stopwords "${sw% *}" -o sw.idx in.txt
    want_ok
    run "$T" stats sw.idx
    grep -Eq "^stopwords +${sw#* }\$" out.txt || fail "${sw% *}: $(grep stopwords out.txt)"
done
run "$T" search dflt.idx "fox and dog"
want_ok
grep -q $'\td2$' out.txt || fail "fox and dog: $(cat out.txt)"
run "$T" build --quiet --stopwords nosuchlist -o sw.idx in.txt
want_fail "lucene, snowball, none"

begin "the analyzer survives a CIFF and a PISA round trip"
"$T" export --to ciff dflt.idx -o x.ciff >/dev/null 2>&1 || fail "export ciff"
"$T" export --to pisa dflt.idx -o p >/dev/null 2>&1 || fail "export pisa"
[ -s p.analyzer ] || fail "no p.analyzer"
for src in "ciff x.ciff" "pisa p"; do
    run "$T" import --from ${src% *} ${src#* } -o back.idx
    want_ok
    grep -q "stemmer english, 33 stopwords" out.txt || fail "${src% *}: $(cat out.txt)"
    run "$T" search back.idx 'foxes energy'
    [ "$(wc -l < out.txt)" -eq 3 ] || fail "${src% *}: foxes energy: $(cat out.txt)"
done

begin "import without an analyzer: unknown, said; --stemmer/--stopwords set it"
printf '' > p.analyzer
run "$T" import --from pisa p -o unk.idx
want_ok
grep -q "stemmer unknown" out.txt || fail "$(cat out.txt)"
grep -q "carries no analyzer" err.txt || fail "no note: $(cat err.txt)"
run "$T" search unk.idx 'foxes energy'
want_ok
grep -q "analyzer is unknown" err.txt || fail "no warning: $(cat err.txt)"
run "$T" import --from pisa p --stemmer english --stopwords lucene -o set.idx
want_ok
run "$T" search set.idx 'foxes energy'
[ "$(wc -l < out.txt)" -eq 3 ] || fail "set: foxes energy: $(cat out.txt)"
run "$T" import --from pisa p --stemmer klingon -o bad.idx
want_fail "klingon"
[ ! -e bad.idx ] || fail "bad.idx written"
printf 'tandem-analyzer: stemmer=english stopwords=2 a\n' > p.analyzer
run "$T" import --from pisa p -o bad.idx
want_fail "p.analyzer: malformed"

begin "run names the queries with no known term"
printf '1:fox\n2:zzz qqq\n3:the\n' > q.txt
run "$T" run dflt.idx --queries q.txt -o r.run
want_ok
grep -q "2 queries with no term in the index, so not in the run: '2', '3'" err.txt ||
    fail "$(cat err.txt)"
[ "$(cut -d' ' -f1 r.run | sort -u)" = 1 ] || fail "run: $(cat r.run)"

begin "lookup refuses several words instead of taking the first"
run "$T" lookup dflt.idx 'fox dog'
want_fail "2 words to the tokenizer"
run "$T" lookup dflt.idx 'Zürich'
want_fail "2 words to the tokenizer"
run "$T" lookup dflt.idx ' foxes '
want_ok
grep -q '^term fox$' out.txt || fail "$(cat out.txt)"

begin "build: a lines file without tabs is refused unless --unnamed-lines"
printf '1 0 CACM-1 1\n2 0 CACM-7 1\n' > qrels.txt
run "$T" build --quiet -o q.idx qrels.txt
want_fail "qrels.txt: line 1: no TAB"
[ ! -e q.idx ] || fail "q.idx written"
run "$T" build --quiet --unnamed-lines -o q.idx qrels.txt
want_ok
grep -q "q.idx: 2 documents" out.txt || fail "no summary: $(cat out.txt)"
run "$T" build --quiet -o q.idx /dev/null
want_fail "/dev/null: empty input: no documents"
grep -q "line 0" err.txt && fail "says line 0: $(cat err.txt)"

begin "search --help gives -k's default"
run "$T" search --help
grep -q -- "-k N .*(default 10)" out.txt || fail "$(grep -- '-k N' out.txt)"

begin "terms --top with --prefix blames the pair"
run "$T" terms dflt.idx --top 3 --prefix f
want_fail "--top and --prefix do not combine"
grep -q "need INDEX" err.txt && fail "blames INDEX: $(cat err.txt)"

echo "$failures failure(s)"
exit "$failures"
