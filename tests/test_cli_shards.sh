#!/usr/bin/env bash
# `tandem search|run --shards PREFIX` (issue 33 item 7's base): a split's
# shard files opened as one index in one process (tdm_index_open_split),
# spread over the devices (3 shards on 2 PoCL devices, and on 1): every
# answer the unsharded index's, byte for byte (`search --json`, the TREC run
# of `run`, every algorithm); shards of two splits, a missing shard, a plain
# index and --shards beside INDEX refused. Usage: test_cli_shards.sh TANDEM.
set -u
T=$1
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"
export POCL_DEVICES="pthread pthread" TANDEM_DEVICES=cpu

bench_fixture
"$T" shard idx --shards 3 -o s >/dev/null 2>&1 && "$T" shard idx --shards 2 -o two >/dev/null 2>&1 ||
    { echo "cannot shard the fixture index"; exit 1; }

for alg in auto or and and_or wand bmw maxscore; do
    begin "search --json, $alg: the whole index's bytes"
    while IFS=: read -r _ text; do
        "$T" search idx "$text" --json -k 20 --algorithm "$alg" > whole.json 2>/dev/null
        run "$T" search --shards s "$text" --json -k 20 --algorithm "$alg"
        want_ok
        # the answer (not the timings, devices and work, which differ by nature)
        strip() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(json.dumps({f: d.get(f) for f in ("query", "algorithm", "terms", "unknown_terms", "hits")},
                 sort_keys=True))' "$1"; }
        [ "$(strip whole.json)" = "$(strip out.txt)" ] ||
            { fail "'$text': $(strip whole.json | cut -c1-300) vs $(strip out.txt | cut -c1-300)"; break; }
    done < <(sed -n '1,11p;' q.txt | awk 'NR % 3 == 1')
done

for alg in auto and and_or bmw; do
    begin "run, $alg: tandem run's bytes"
    "$T" run idx --queries q.txt -k 50 --algorithm "$alg" -o whole.run >/dev/null 2>&1 ||
        fail "tandem run failed"
    run "$T" run --shards s --queries q.txt -k 50 --algorithm "$alg" --batch 4 -o shards.run
    want_ok
    cmp -s whole.run shards.run || fail "runs differ: $(cmp whole.run shards.run 2>&1)"
done

begin "run on one device: 3 shards there, the same bytes"
TANDEM_DEVICES=0 run "$T" run --shards s --queries q.txt -k 50 -o one.run
want_ok
"$T" run idx --queries q.txt -k 50 -o whole.run >/dev/null 2>&1
cmp -s whole.run one.run || fail "runs differ"

mkdir -p mix miss
cp s.0 mix/s.0 && cp two.1 mix/s.1 && cp s.2 mix/s.2
cp s.0 miss/s.0 && cp s.2 miss/s.2
begin "shards of two splits: refused"
run "$T" search --shards mix/s "flow"
want_fail "two splits"
begin "a missing shard: refused, naming it"
run "$T" search --shards miss/s "flow"
want_fail "miss/s.1"
begin "a plain index as a split: refused"
cp idx plain.0
run "$T" search --shards plain "flow"
want_fail "plain.0: not a shard"
begin "--shards and INDEX both: a usage error"
run "$T" search idx --shards s "flow"
[ "$rc" -eq 2 ] || fail "exit $rc, want 2"

echo "$failures failure(s)"
exit "$failures"
