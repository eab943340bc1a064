#!/usr/bin/env bash
# tandem-mpi serve (issue 33 item 4): `tandem serve`'s HTTP API on rank 0 of
# `mpirun -np 2` over 3 shards (PoCL devices, this machine): /search and
# /search/batch answer as `tandem search --json` on the unsharded index
# (hits, scores, names; every algorithm, k from the request; the query's
# terms and unknown terms counted as there, AUTO's algorithm); a rank that
# fails a round gives that request a 503 naming it and the service goes on;
# a killed rank gives 5xx (or a closed connection), never a hang, and the
# job ends; SIGTERM to rank 0 answers what is in flight and stops every rank
# (exit 0). /health and /metrics over `mpirun -np 3`: ready with every rank,
# valid Prometheus text with every rank's and shard's series and the
# broker's; a shard whose lanes failed (TANDEM_FAULT_INJECT on rank 2) and
# a rank killed (mpirun --enable-recovery keeps rank 0 up) turn /health to
# 503 naming the rank and shard, and searches get a clear 503, never a hang.
# Usage: test_mpi_serve.sh TANDEM TANDEM_MPI|none MPIEXEC.
# Exit 77 (skipped) without MPI, libmicrohttpd, curl or python3.
set -u
T=$1 M=$2 MPIEXEC=${3:-mpirun}
if [ "$M" = none ] || [ ! -x "$M" ] || ! command -v "$MPIEXEC" >/dev/null; then
    echo "skipped: tandem-mpi not built (no MPI found)"; exit 77
fi
command -v curl >/dev/null && command -v python3 >/dev/null ||
    { echo "skipped: no curl or python3"; exit 77; }
"$M" serve --help 2>&1 | grep -q -- "--listen ADDR" ||
    { echo "skipped: tandem-mpi built without libmicrohttpd"; exit 77; }
CLI_TIMEOUT=60
. "$(dirname "$0")/cli_lib.sh"
# Under ASan, MPI processes run without leak detection (memory errors and
# UBSan still checked): Open MPI's own allocations at exit are made in plugins
# without frame pointers, whose stacks no suppression can name.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

bench_fixture
"$T" shard idx --shards 3 -o s >/dev/null 2>&1 || { echo "cannot shard the fixture index"; exit 1; }

# launch NAME MPIEXEC-LINE...: the service in the background; PORT, PID0 (rank 0), JOB
launch() {
    local log=$1; shift
    timeout 120 "$@" >"$log.out" 2>"$log.err" &
    JOB=$!
    PORT= PID0=
    for _ in $(seq 1 300); do
        grep -q "ready" "$log.err" 2>/dev/null && break
        kill -0 "$JOB" 2>/dev/null || break
        sleep 0.1
    done
    PORT=$(grep -o 'http://127.0.0.1:[0-9]*' "$log.err" | sed 's/.*://')
    PID0=$(grep -o 'pid [0-9]*' "$log.err" | cut -d' ' -f2)
    [ -n "$PORT" ] && [ -n "$PID0" ] || { fail "did not start: $(tail -5 "$log.err")"; return 1; }
}
# start NAME [options]: 2 ranks over the 3 shards
start() {
    local log=$1; shift
    launch "$log" "$MPIEXEC" --oversubscribe -np 2 "$M" serve s --listen 127.0.0.1:0 "$@"
}
# get PATH: the body to resp.json, the HTTP status to CODE
get() { CODE=$(curl -s -m 30 -o resp.json -w '%{http_code}' "http://127.0.0.1:$PORT$1"); }
# post PATH BODY: the body to resp.json, the HTTP status to CODE
post() { CODE=$(curl -s -m 30 -o resp.json -w '%{http_code}' -X POST -d "$2" \
                 "http://127.0.0.1:$PORT$1"); }
hits() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for r in d.get("results", [d]):
    print(json.dumps(r.get("hits"), sort_keys=True))' "$1"; }

begin "serve: answers are tandem search --json's on the whole index"
if start a; then
    for alg in auto or and and_or wand bmw maxscore; do
        while IFS=: read -r _ text; do
            "$T" search idx "$text" --json -k 15 --algorithm "$alg" >whole.json 2>/dev/null
            post /search "{\"query\": \"$text\", \"k\": 15, \"algorithm\": \"$alg\"}"
            [ "$CODE" = 200 ] || { fail "$alg '$text': HTTP $CODE: $(head -c 300 resp.json)"; break; }
            [ "$(hits whole.json)" = "$(hits resp.json)" ] ||
                { fail "$alg '$text': $(hits resp.json | cut -c1-200) vs $(hits whole.json | cut -c1-200)"; break; }
        done < <(awk 'NR % 4 == 1' q.txt)
    done
    begin "serve: a batch, each query the whole index's"
    body=$(python3 -c 'import json,sys
print(json.dumps([{"query": l.split(":", 1)[1].strip(), "k": 7} for l in open("q.txt")]))')
    post /search/batch "$body"
    [ "$CODE" = 200 ] || fail "HTTP $CODE"
    while IFS=: read -r _ text; do
        "$T" search idx "$text" --json -k 7 >>whole_batch.txt 2>/dev/null && echo >>whole_batch.txt
    done < q.txt
    python3 - resp.json whole_batch.txt <<'PY' || fail "batch answers differ"
import json, sys
got = [r["hits"] for r in json.load(open(sys.argv[1]))["results"]]
want = [json.loads(l)["hits"] for l in open(sys.argv[2]) if l.strip()]
sys.exit(0 if got == want else 1)
PY
    begin "serve: terms, unknown_terms and auto's algorithm are the whole index's"
    # two words of one document each, far inside shards 0 and 1 (documents
    # [0, 1026) and [1026, 2009)): no shard holds both, the whole index does
    read -r w0 w1 < <(awk -F'\t' '{ n = split($2, w, " ")
            for (i = 1; i <= n; i++) { c[w[i]]++; at[w[i]] = NR } }
        END { for (x in c) if (c[x] == 1 && at[x] < 900 && a == "") a = x
              for (x in c) if (c[x] == 1 && at[x] > 1150 && at[x] < 1900 && b == "") b = x
              print a, b }' c.txt)
    view() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(d["terms"], d["unknown_terms"], d["algorithm"])' "$1"; }
    for text in "$w0 $w1 qqqzzz" "$w0" "boundary layer flow zzzqqq"; do
        for alg in auto and or; do
            "$T" search idx "$text" --json -k 5 --algorithm "$alg" >whole.json 2>/dev/null
            post /search "{\"query\": \"$text\", \"k\": 5, \"algorithm\": \"$alg\"}"
            [ "$CODE" = 200 ] && [ "$(view resp.json)" = "$(view whole.json)" ] ||
                fail "$alg '$text': HTTP $CODE, $(view resp.json) vs $(view whole.json)"
        done
    done
    [ "$(view whole.json | cut -d' ' -f1,2)" = "3 1" ] || fail "whole: $(view whole.json)"
    post /search "{\"terms\": {\"$w0\": 1, \"$w1\": 2, \"qqqzzz\": 1}, \"k\": 5}"
    [ "$CODE" = 200 ] && [ "$(view resp.json)" = "2 1 maxscore" ] ||
        fail "weighted terms: HTTP $CODE, $(view resp.json), want 2 1 maxscore"
    post /search '{"query": "flow", "device": 0}'
    [ "$CODE" = 400 ] || fail "a device pin: HTTP $CODE, want 400"
    begin "SIGTERM to rank 0: what is in flight is answered, every rank stops"
    big=$(python3 -c 'import json,sys
print(json.dumps([{"query": l.split(":", 1)[1].strip(), "k": 1000, "algorithm": "or"}
                  for l in open("q.txt")] * 40))')
    curl -s -m 30 -o late.json -w '%{http_code}' -X POST -d "$big" \
        "http://127.0.0.1:$PORT/search/batch" >late.code &
    sleep 0.2
    kill -TERM "$PID0"
    wait $!
    wait "$JOB"; rc=$?
    [ "$(cat late.code)" = 200 ] || fail "the request in flight: HTTP $(cat late.code)"
    [ "$rc" -eq 0 ] || fail "exit $rc: $(tail -5 a.err)"
    grep -q "stopped" a.err || fail "$(tail -3 a.err)"
fi

begin "a rank that fails a round: 503 naming it, then the service goes on"
if start b --test-fault 1:fail@2; then
    post /search '{"query": "flow", "k": 5}'
    [ "$CODE" = 200 ] || fail "first: HTTP $CODE"
    post /search '{"query": "flow", "k": 5}'
    [ "$CODE" = 503 ] || fail "second: HTTP $CODE, want 503"
    grep -q "rank 1 failed: s.1: failure injected" resp.json || fail "$(head -c 300 resp.json)"
    post /search '{"query": "flow", "k": 5}'
    [ "$CODE" = 200 ] || fail "third: HTTP $CODE"
    kill -TERM "$PID0"
    wait "$JOB" || fail "exit $?"
fi

begin "a rank killed: 5xx or a closed connection, never a hang; the job ends"
if start c --test-fault 1:kill@2 --rank-timeout 3; then
    post /search '{"query": "flow", "k": 5}'
    [ "$CODE" = 200 ] || fail "first: HTTP $CODE"
    t0=$(date +%s)
    post /search '{"query": "flow", "k": 5}'
    case "$CODE" in 5??|000) ;; *) fail "HTTP $CODE after a rank died, want 5xx" ;; esac
    wait "$JOB"; rc=$?
    [ "$rc" -ne 0 ] || fail "the job exited 0"
    [ $(($(date +%s) - t0)) -lt 30 ] || fail "took $(($(date +%s) - t0)) s"
fi

# health FIELDS...: /health's JSON, the fields named printed (python expressions on d)
health() { python3 -c 'import json,sys
d = json.load(open("resp.json"))
print(*[eval(e, {"d": d}) for e in sys.argv[1:]])' "$@"; }

begin "3 ranks: /health ready with every rank and shard"
S=(serve s --listen 127.0.0.1:0 --rank-timeout 3)
if launch d "$MPIEXEC" --enable-recovery --oversubscribe -np 3 "$M" "${S[@]}"; then
    get /health
    [ "$CODE" = 200 ] || fail "HTTP $CODE: $(head -c 300 resp.json)"
    [ "$(health 'd["status"]' 'd["nranks"]' 'd["nshards"]' \
        '[(r["rank"], r["answering"], [s["shard"] for s in r["shards"]]) for r in d["ranks"]]' \
        'all(s["lanes_alive"] > 0 for r in d["ranks"] for s in r["shards"])')" = \
      "ready 3 3 [(0, True, [0]), (1, True, [1]), (2, True, [2])] True" ] ||
        fail "$(head -c 400 resp.json)"
    begin "3 ranks: /metrics, valid, every rank's and shard's series and the broker's"
    post /search/batch '[{"query": "flow", "k": 5}, {"query": "heat transfer", "k": 5}]'
    [ "$CODE" = 200 ] || fail "search: HTTP $CODE"
    get /metrics
    [ "$CODE" = 200 ] || fail "HTTP $CODE"
    cp resp.json metrics.txt
    python3 - metrics.txt <<'PY' || fail "metrics: see above"
import re, sys
text = open(sys.argv[1]).read()
lab = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(%s(?:,%s)*)\})? (\S+)$' % (lab, lab))
helped, types, series, bad, fam = set(), {}, {}, [], None
for ln in text.splitlines():
    if ln.startswith("# HELP "):
        n = ln.split(" ")[2]
        bad += ["HELP twice: " + n] if n in helped else []
        helped.add(n)
    elif ln.startswith("# TYPE "):
        n, t = ln.split(" ")[2:4]
        bad += ["TYPE twice or without HELP: " + n] if n in types or n not in helped else []
        types[n], fam = t, n
    elif ln:
        m = sample.match(ln)
        if not m:
            bad.append("malformed: " + ln); continue
        n = m.group(1)
        own = n == fam or (types.get(fam) == "histogram" and
                           n in (fam + "_bucket", fam + "_sum", fam + "_count"))
        bad += [] if own else ["outside its family %s: %s" % (fam, ln)]
        bad += ["twice: " + ln] if (n, m.group(2)) in series else []
        series[(n, m.group(2))] = float(m.group(3))
def val(n, labels):
    return series.get((n, labels))
for r in range(3):
    rs = 'rank="%d",shard="%d"' % (r, r)
    for n, l in [("tandem_sched_answered_total", rs),
                 ("tandem_device_utilization", rs + ',device="0"'),
                 ("tandem_device_alive", rs + ',device="0"'),
                 ("tandem_list_cache_hits_total", rs + ',device="0"'),
                 ("tandem_batch_size_count", rs + ',device="0"'),
                 ("tandem_mpi_rank_up", 'rank="%d"' % r),
                 ("tandem_mpi_shard_ready", rs)]:
        if val(n, l) is None:
            bad.append("no %s{%s}" % (n, l))
    if (val("tandem_batch_size_count", rs + ',device="0"') or 0) < 2:
        bad.append("rank %d: batch sizes of fewer than 2 queries" % r)
    if val("tandem_mpi_rank_up", 'rank="%d"' % r) != 1:
        bad.append("rank %d not up" % r)
for n in ["tandem_mpi_requests_total", "tandem_mpi_rounds_total", "tandem_mpi_sent_bytes_total",
          "tandem_mpi_received_bytes_total", "tandem_mpi_round_queries_total"]:
    if not (val(n, None) or 0) >= 1:
        bad.append("%s: %s" % (n, val(n, None)))
if val("tandem_mpi_merge_seconds_total", None) is None or val("tandem_queries_total", None) != 2:
    bad.append("merge seconds or queries: %s %s" % (val("tandem_mpi_merge_seconds_total", None),
                                                    val("tandem_queries_total", None)))
print("\n".join(bad[:10]))
sys.exit(1 if bad else 0)
PY
    begin "3 ranks: a rank killed turns /health to 503 naming it; a search gets 503, no hang"
    pid2=$(curl -s "http://127.0.0.1:$PORT/health" | python3 -c 'import json,sys
print([r["pid"] for r in json.load(sys.stdin)["ranks"] if r["rank"] == 2][0])')
    kill -KILL "$pid2"
    t0=$(date +%s)
    get /health
    [ "$CODE" = 503 ] && [ "$(health 'd["status"]' 'd["rank"]' 'd["shard"]' \
        '[r["answering"] for r in d["ranks"]]')" = "unavailable 2 2 [True, True, False]" ] &&
        grep -q '"reason": "rank 2 (s.2) has not answered a probe' resp.json ||
        fail "HTTP $CODE: $(head -c 600 resp.json)"
    post /search '{"query": "flow", "k": 5}'
    [ "$CODE" = 503 ] && grep -q 'rank 2 did not answer within 3 s (--rank-timeout)' resp.json ||
        fail "search: HTTP $CODE: $(head -c 300 resp.json)"
    # the job ends (under --enable-recovery mpirun may exit 0 after rank 0's abort)
    wait "$JOB"
    grep -q "rank 2 did not answer within 3 s (--rank-timeout); stopping every rank" d.err ||
        fail "$(tail -3 d.err)"
    [ $(($(date +%s) - t0)) -lt 20 ] || fail "took $(($(date +%s) - t0)) s"
fi

begin "3 ranks: a shard whose lanes failed: 503 naming rank and shard, /health too"
if launch e "$MPIEXEC" --oversubscribe -np 2 "$M" "${S[@]}" : \
          -np 1 -x TANDEM_DEVICES=0 -x TANDEM_FAULT_INJECT=0:build@1 "$M" "${S[@]}"; then
    post /search '{"query": "flow", "k": 5}'
    [ "$CODE" = 503 ] && grep -q '"rank 2 failed: s.2: ' resp.json ||
        fail "search: HTTP $CODE: $(head -c 300 resp.json)"
    get /health
    [ "$CODE" = 503 ] && [ "$(health 'd["rank"]' 'd["shard"]' 'd["reason"]')" = \
        "2 2 rank 2 failed: s.2: no lane alive: all 1 failed (their devices faulted)" ] ||
        fail "HTTP $CODE: $(head -c 600 resp.json)"
    get /metrics
    grep -q '^tandem_mpi_shard_ready{rank="2",shard="2"} 0$' resp.json &&
        grep -q '^tandem_device_alive{rank="2",shard="2",device="0"} 0$' resp.json &&
        grep -q '^tandem_mpi_request_failures_total 1$' resp.json ||
        fail "metrics: $(grep -E 'shard_ready|device_alive|failures' resp.json)"
    kill -TERM "$PID0"
    wait "$JOB" || fail "exit $?"
fi

echo "$failures failure(s)"
exit "$failures"
