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

echo "$failures failure(s)"
exit "$failures"
