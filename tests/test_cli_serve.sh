#!/usr/bin/env bash
# `tandem serve` (issue 32) as a user runs it: started on a free loopback
# port over the benchmark tests' generated index, driven by curl and
# Python's standard library. /health; /search answers with the bytes of
# `tandem search --json` (hits, terms) for every query and several
# algorithms, text and terms alike; a batch; many concurrent clients with
# the same answers and the scheduler's batching in /metrics; malformed JSON
# and HTTP, oversize bodies (declared and chunked), every limit, unknown
# terms and routes, each a 4xx with a JSON error naming it; slow clients cut
# off; the bearer token; SIGINT, and SIGTERM in the middle of a load that
# loses nothing in flight; the load generator (scripts/serve_load.py) short,
# failing on a wrong answer and on server errors; /health once every lane
# died. Usage: test_cli_serve.sh TANDEM. The exit status
# is the number of failures (77: skipped, no serve, curl or python3).
set -u
T=$1
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"
# Two PoCL devices, one taken as a GPU lane: a batch lane, so that
# simultaneous queries can share launches on a machine without a GPU.
export POCL_DEVICES="pthread pthread" TANDEM_LANE_KINDS=cpu,gpu TANDEM_DEVICES=pocl

if "$T" serve --help 2>&1 | grep -q "not built"; then
    echo "test_cli_serve: skipped: tandem was built without libmicrohttpd"
    exit 77
fi
for tool in curl python3; do
    command -v "$tool" >/dev/null || { echo "test_cli_serve: skipped: no $tool"; exit 77; }
done
bench_fixture
SPID=
trap '[ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null; cd / && rm -rf "$W"' EXIT

# Starts the server (extra options in "$@") and waits until /health says
# ready; sets SPID, PORT and URL. serve.err is emptied here, before the
# server starts: the background job's own redirection may come after the
# first look at it, which then read the previous server's log (its port,
# its "ready"). The bound is generous (START_WAIT, 300 s): the kernels may
# compile on this start and the machine may be loaded. If it does not come
# up: serve.err, and whether it died (its exit status; 137 is a SIGKILL
# from outside, such as the OOM killer) or was still loading.
START_WAIT=${START_WAIT:-300}
start() {
    : > serve.err
    "$T" serve idx --listen 127.0.0.1:0 "$@" 2>> serve.err &
    SPID=$!
    local t0=$SECONDS health=
    PORT= URL=
    while [ $((SECONDS - t0)) -lt "$START_WAIT" ]; do
        [ -z "$PORT" ] &&
            PORT=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' serve.err)
        if [ -n "$PORT" ]; then
            URL=http://127.0.0.1:$PORT
            health=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$URL/health")
            [ "$health" = 200 ] && return 0
        fi
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.2
    done
    local how="still running after $((SECONDS - t0)) s (/health: ${health:-no port yet})"
    if ! kill -0 "$SPID" 2>/dev/null; then
        wait "$SPID"
        how="exited with status $? after $((SECONDS - t0)) s"
        SPID=
    fi
    echo "server did not start ($*): $how; serve.err:"
    sed 's/^/    /' serve.err
    exit 1
}
# Stops it with signal $1; keeps its exit status in src.
stop() {
    kill "-$1" "$SPID" 2>/dev/null
    src=0
    timeout 60 tail --pid="$SPID" -f /dev/null || src=124
    wait "$SPID" || src=$?
    SPID=
}
# POST (or GET when $2 is -) to path $1: the status in code, the body in body.txt.
req() {
    if [ "$2" = - ]; then
        code=$(curl -s -m 60 -o body.txt -w '%{http_code}' "${@:3}" "$URL$1")
    else
        code=$(curl -s -m 60 -o body.txt -w '%{http_code}' --data-binary "$2" "${@:3}" "$URL$1")
    fi
}
# The request was refused with status $1 and a JSON error holding $2.
want_err() {
    [ "$code" = "$1" ] || fail "status $code, want $1: $(head -c 300 body.txt)"
    grep -q "^{\"error\": \".*$2.*\", \"status\": $1}$" body.txt ||
        fail "error lacks '$2': $(head -c 300 body.txt)"
}
# A query's JSON string (q.txt texts hold no quotes or backslashes).
jq_text() { printf '{"query": "%s"%s}' "$1" "${2:+, $2}"; }
hits() { grep -o '"hits": .*' "$1"; }

start --max-body 4096 --max-k 100 --max-terms 4 --max-batch 20 --timeout 2

begin "health"
req /health -
[ "$code" = 200 ] && grep -q '^{"status": "ready", ' body.txt || fail "$code $(cat body.txt)"

begin "search: the hits and terms of tandem search --json, every query, several algorithms"
cut -d: -f2 q.txt > texts.txt
while IFS= read -r text; do
    for a in auto or bmw and_or; do
        run "$T" search idx "$text" --json -k 20 --algorithm "$a"
        want_ok
        req /search "$(jq_text "$text" "\"k\": 20, \"algorithm\": \"$a\"")"
        [ "$code" = 200 ] || fail "$text/$a: status $code: $(head -c 300 body.txt)"
        [ "$(hits out.txt)" = "$(hits body.txt)" ] || fail "$text/$a: hits differ"
        for f in query terms unknown_terms algorithm; do
            [ "$(grep -o "\"$f\": [^,]*" out.txt)" = "$(grep -o "\"$f\": [^,]*" body.txt)" ] ||
                fail "$text/$a: $f differs: $(grep -o "\"$f\": [^,]*" body.txt)"
        done
        # every field of search --json, in its order
        [ "$(grep -o '"[a-z_]*": ' out.txt | tr -d '\n')" = "$(grep -o '"[a-z_]*": ' body.txt | tr -d '\n')" ] ||
            fail "$text/$a: not the fields of search --json"
    done
done < texts.txt

begin "search: Server-Timing gives the server's part beside the engine's"
curl -s -m 60 -D hdr.txt -o body.txt --data-binary '{"query": "boundary layer flow"}' "$URL/search"
grep -q $'^Server-Timing: parse;dur=[0-9.]*, engine;dur=[0-9.]*, encode;dur=[0-9.]*\r$' hdr.txt ||
    fail "$(cat hdr.txt)"
req /health - -D hdr.txt
[ "$code" = 200 ] && ! grep -qi '^Server-Timing' hdr.txt || fail "health: $(cat hdr.txt)"

begin "search: terms given directly rank as the same text"
run "$T" search idx "boundary layer flow" --json --scoring bm25 --k1 0.9 --b 0.4
req /search '{"terms": {"boundary": 1, "layer": 1, "flow": 1}, "k1": 0.9, "b": 0.4}'
[ "$code" = 200 ] && [ "$(hits out.txt)" = "$(hits body.txt)" ] || fail "$code: $(head -c 300 body.txt)"
grep -q '"query": null' body.txt || fail "$(head -c 100 body.txt)"
req /search '{"terms": {"flow": 2.5, "plate": 1e-3}, "policy": "direct", "device": 0}'
[ "$code" = 200 ] && grep -q '"policy": "direct"' body.txt || fail "$code: $(head -c 300 body.txt)"

begin "search: unknown terms answer no hits, counted"
req /search '{"terms": {"zzznotaterm": 1}}'
[ "$code" = 200 ] && grep -q '"unknown_terms": 1, .*"hits": \[\]}$' body.txt || fail "$code: $(cat body.txt)"
req /search '{"query": "zzznotaterm qqqnotaterm"}'
[ "$code" = 200 ] && grep -q '"unknown_terms": 2, .*"hits": \[\]}$' body.txt || fail "$code: $(cat body.txt)"

begin "batch: each answer that of /search, mixed options included"
python3 - "$URL" <<'EOF' || fail "batch"
import json, sys, urllib.request
url = sys.argv[1]
def post(path, body):
    r = urllib.request.urlopen(urllib.request.Request(url + path, json.dumps(body).encode()), timeout=60)
    return r.status, json.loads(r.read())
texts = [l.split(":", 1)[1].strip() for l in open("q.txt")]
qs = [{"query": t, "k": 5 + i % 3, "algorithm": ["or", "wand", "auto"][i % 3]} for i, t in enumerate(texts)]
qs.append({"terms": {"flow": 1, "heat": 2}})
st, b = post("/search/batch", qs)
assert st == 200 and len(b["results"]) == len(qs), b
for q, r in zip(qs, b["results"]):
    assert post("/search", q)[1]["hits"] == r["hits"], (q, r)
st, b2 = post("/search/batch", {"queries": qs[:3]})
assert [r["hits"] for r in b2["results"]] == [r["hits"] for r in b["results"][:3]]
EOF

begin "concurrent clients: the same answers, the scheduler's counters in /metrics"
python3 - "$URL" <<'EOF' || fail "concurrent"
import json, sys, threading, urllib.request
url = sys.argv[1]
def post(body):
    r = urllib.request.urlopen(urllib.request.Request(url + "/search", json.dumps(body).encode()), timeout=120)
    return json.loads(r.read())
texts = [l.split(":", 1)[1].strip() for l in open("q.txt")]
want = {t: post({"query": t, "k": 10})["hits"] for t in texts}
json.dump(want, open("want.json", "w"))
bad, batched = [], [0]
def client(n):
    for i in range(25):
        t = texts[(n + i) % len(texts)]
        try:
            r = post({"query": t, "k": 10})
            if r["hits"] != want[t]:
                bad.append(t)
            batched[0] = max(batched[0], r["batch"])
        except Exception as e:
            bad.append(repr(e))
ts = [threading.Thread(target=client, args=(n,)) for n in range(16)]
for t in ts: t.start()
for t in ts: t.join()
assert not bad, bad[:5]
print("largest batch seen:", batched[0])
EOF
req /metrics -
for m in 'tandem_http_requests_total{route="/search",code="200"} [0-9]' 'tandem_queries_total [0-9]' \
         'tandem_http_request_duration_seconds_bucket{route="/search",le="+Inf"} [0-9]' \
         'tandem_query_queue_seconds_count [0-9]' 'tandem_batch_size_bucket{device="[0-9]",le="1"}' \
         'tandem_device_utilization{device="[0-9]"} [0-9]' 'tandem_device_queries_total{device="1"} [0-9]' \
         'tandem_list_cache_hits_total{device="0"} [0-9]' 'tandem_sched_answered_total [0-9]' \
         'tandem_ready 1' '# TYPE tandem_batch_size histogram' \
         'tandem_http_overhead_seconds_bucket{route="/search",le="+Inf"} [1-9]' \
         'tandem_http_overhead_seconds_bucket{route="/health",le="1e-05"} [0-9]'; do
    grep -q "^$m" body.txt || fail "no '$m' in /metrics"
done
n=$(sed -n 's/^tandem_queries_total //p' body.txt)
[ "${n:-0}" -ge 400 ] || fail "tandem_queries_total $n, want 400 or more"

begin "malformed JSON and bad fields: 400 naming them"
req /search '{"query": "flow"'
want_err 400 "invalid JSON at line 1"
req /search 'flow'
want_err 400 "invalid JSON"
req /search ''
want_err 400 "invalid JSON"
req /search '{"query": "flow"} trailing'
want_err 400 "invalid JSON"
req /search '{"query": "flow", "query": "heat"}'
want_err 400 "invalid JSON.*duplicate"
req /search '[1, 2]'
want_err 400 "expected an object"
req /search '{"query": "flow", "terms": {"flow": 1}}'
want_err 400 "not both"
req /search '{"k": 3}'
want_err 400 "not neither"
req /search '{"query": 7}'
want_err 400 "query: expected a string"
req /search '{"query": "flow", "fast": true}'
want_err 400 "unknown field 'fast'"
req /search '{"query": "flow", "k": "ten"}'
want_err 400 "k: expected a whole number in 1..100"
req /search '{"query": "flow", "k": 2.5}'
want_err 400 "k: expected"
req /search '{"query": "flow", "algorithm": "fastest"}'
want_err 400 "algorithm: expected"
req /search '{"query": "flow", "scoring": "tfidf"}'
want_err 400 "scoring: expected bm25 or impact"
req /search '{"query": "flow", "k1": -1}'
want_err 400 "k1: -1 is out of range"
req /search '{"query": "flow", "b": 2}'
want_err 400 "b: 2 is out of range"
req /search '{"query": "flow", "device": 99}'
want_err 400 "device"
req /search '{"query": "flow", "device": -3}'
want_err 400 "device: expected"
req /search '{"query": "flow", "policy": "fastest"}'
want_err 400 "policy: expected"
req /search '{"terms": {"flow": 0}}'
want_err 400 "terms.flow: 0 is out of range"
req /search '{"terms": {"flow": "1"}}'
want_err 400 "terms.flow: expected a number"
req /search '{"terms": ["flow"]}'
want_err 400 "terms: expected an object"
req /search '{"query": "\u0000x"}'
want_err 400 "invalid JSON"
req /search "$(printf '{"query": "\xff\xfe"}')"
want_err 400 "invalid JSON"
req /search "$(printf '%.0s[' $(seq 3000))"
want_err 400 "invalid JSON"
req /search/batch '[{"query": "flow"}, {"query": "heat", "k": 0}]'
want_err 400 "queries\[1\].k: expected"
req /search/batch '{"query": "flow"}'
want_err 400 "expected a list of queries"

begin "limits: k, terms, batch and body"
req /search '{"query": "flow", "k": 101}'
want_err 400 "k: expected a whole number in 1..100"
req /search '{"terms": {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1}}'
want_err 400 "terms: 5 terms, more than the limit of 4"
req /search/batch '[]'
want_err 400 "queries: 0 queries; a batch takes 1..20"
req /search/batch "[$(printf '{"query": "flow"},%.0s' $(seq 20)){\"query\": \"flow\"}]"
want_err 400 "queries: 21 queries"
big=$(head -c 5000 /dev/zero | tr '\0' 'a')
req /search "{\"query\": \"$big\"}"
want_err 413 "body: 5013 bytes, more than the limit of 4096"
req /search "{\"query\": \"$big\"}" -H "Transfer-Encoding: chunked"
want_err 413 "body: more than the limit of 4096"
req /search "{\"query\": \"$big\"}" -H "Expect: 100-continue"
want_err 413 "body"

begin "routes and methods: 404 and 405 as JSON"
req /nowhere -
want_err 404 "no such route"
req /search -
want_err 405 "method GET not allowed"
req /health '{}'
want_err 405 "method POST not allowed"
code=$(curl -s -o /dev/null -w '%{http_code}' -I "$URL/health")
[ "$code" = 200 ] || fail "HEAD /health: $code"

begin "malformed HTTP and slow clients: answered or cut off, the server unharmed"
python3 - 127.0.0.1 "$PORT" <<'EOF' || fail "raw HTTP"
import socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
def talk(data, wait=5):
    s = socket.create_connection((host, port), timeout=wait)
    s.sendall(data)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b: break
            out += b
    except socket.timeout:
        out += b"<timeout>"
    s.close()
    return out
for junk in [b"GARBAGE\r\n\r\n", b"\x00\x01\x02\xff" * 100 + b"\r\n\r\n",
             b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
             b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
             b"POST /search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nxx\r\n",
             b"GET /health HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 100000 + b"\r\n\r\n"]:
    out = talk(junk)
    assert b"<timeout>" not in out and (out == b"" or out.startswith(b"HTTP/1.1 4")), (junk[:40], out[:200])
# a truncated body, then the client goes away
s = socket.create_connection((host, port))
s.sendall(b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"query\"")
s.close()
# a slow client: half a request, then silence; cut off after --timeout 2
t = time.time()
out = talk(b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{", wait=20)
assert b"<timeout>" not in out and time.time() - t < 15, (out, time.time() - t)
# still serving
out = talk(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
assert out.startswith(b"HTTP/1.1 200"), out
EOF

begin "SIGINT: exit 0"
stop INT
[ "$src" = 0 ] || fail "exit $src: $(tail -3 serve.err)"
grep -q "SIGINT: stopping" serve.err && grep -q "stopped$" serve.err || fail "$(tail -3 serve.err)"

begin "device faults: a lane that dies hands its queries over; every request answered"
TANDEM_FAULT_INJECT=1:build@2,0:oom@7 start
python3 - "$URL" <<'EOF' || fail "faults"
import json, sys, threading, urllib.error, urllib.request
url = sys.argv[1]
def post(body):
    try:
        r = urllib.request.urlopen(urllib.request.Request(url + "/search", json.dumps(body).encode()), timeout=120)
        return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
texts = [l.split(":", 1)[1].strip() for l in open("q.txt")]
want = json.load(open("want.json"))
bad, codes = [], {}
# half the requests pinned to lane 1, so that it reaches its faulty second
# run whatever the lanes' models say (a cold calibration on a loaded machine
# may send every unpinned query to lane 0); a pinned query whose lane
# failed goes to another
def client(n):
    for i in range(10):
        t = texts[(n + i) % len(texts)]
        st, b = post({"query": t, "k": 10, **({"device": 1} if i % 2 == 0 else {})})
        codes[st] = codes.get(st, 0) + 1
        if st == 200 and b["hits"] != want[t]: bad.append(t)
        if st != 200 and not (st >= 500 and b["error"]): bad.append((st, b))
ts = [threading.Thread(target=client, args=(n,)) for n in range(8)]
for t in ts: t.start()
for t in ts: t.join()
assert not bad and sum(codes.values()) == 80 and codes.get(200, 0) > 0, (bad[:3], codes)
print("fault run:", codes)
EOF
req /metrics -
grep -q '^tandem_device_alive{device="1"} 0$' body.txt || fail "lane 1 alive: $(grep alive body.txt)"
grep -q '^tandem_sched_handovers_total [1-9]' body.txt || fail "no handovers: $(grep handovers_total body.txt)"
stop TERM
[ "$src" = 0 ] || fail "exit $src: $(tail -3 serve.err)"

begin "load generator (scripts/serve_load.py): open-loop Poisson, every answer checked"
LOAD=$(cd "$(dirname "$0")/.." && pwd)/scripts/serve_load.py
start --max-connections 64
python3 "$LOAD" "$URL" --queries q.txt --policies best,gpu-only --rates 30 --duration 1 \
    --warmup 0.3 --workers 2 --connections 16 --check-with "$T" idx --check-sample 3 \
    --csv load.csv > load.out 2> load.err || fail "serve_load: exit $?: $(tail -5 load.err)"
grep -q "3 of 3 sampled queries have the hits of tandem search --json" load.err &&
    grep -q "every answer has its query's reference hits" load.err || fail "$(tail -5 load.err)"
grep -q '^best  *30 .* ok$' load.out && grep -q '^gpu-only  *30 .* ok$' load.out ||
    fail "$(cat load.out)"
[ "$(head -1 load.csv | cut -d, -f1-4)" = "policy,rate,probe,arrivals" ] &&
    [ "$(grep -c '^best,30,0,' load.csv)" = 1 ] || fail "csv: $(head -3 load.csv)"
python3 "$LOAD" "$URL" --queries q.txt --policies gpu-only --find-max --start-rate 50 \
    --precision 0.5 --time-limit 3 --duration 0.5 --warmup 0.2 --workers 2 > load.out 2> load.err ||
    fail "serve_load --find-max: exit $?: $(tail -5 load.err)"
grep -A2 '^highest sustained rate over HTTP (p95 <= 50 ms' load.out | grep -q '^gpu-only  *[0-9]' ||
    fail "$(cat load.out)"
SERVE_LOAD_CORRUPT=2 python3 "$LOAD" "$URL" --queries q.txt --policies best --rates 30 \
    --duration 0.5 --warmup 0 --workers 1 > load.out 2> load.err
[ $? = 1 ] && grep -q "MISMATCH query" load.err && grep -q "answers differ" load.err ||
    fail "a wrong answer passed: $(tail -3 load.err)"
python3 "$LOAD" "$URL" --route health --rates 500 --duration 0.5 --warmup 0.1 --workers 2 \
    > load.out 2> load.err && grep -q '^health  *500 ' load.out || fail "$(tail -3 load.err)"
stop TERM
[ "$src" = 0 ] || fail "exit $src: $(tail -3 serve.err)"

begin "no lane alive: /health is 503 saying why; the load generator fails on the errors"
TANDEM_FAULT_INJECT=0:build@40,1:build@40 start
python3 "$LOAD" "$URL" --queries q.txt --policies best --rates 100 --duration 1 --warmup 0 \
    --workers 1 > load.out 2> load.err
[ $? = 1 ] && grep -q "requests failed" load.err && grep -q "FAILED best rate 100: status 50" load.err ||
    fail "errors passed: $(tail -3 load.err)"
req /health -
[ "$code" = 503 ] && grep -q '"status": "unavailable", "reason": "no lane alive: all 2 failed' body.txt &&
    grep -q '"lanes_alive": 0' body.txt || fail "$code $(cat body.txt)"
req /search '{"query": "flow"}'
[ "${code:0:1}" = 5 ] && grep -q '"error": ' body.txt || fail "$code $(cat body.txt)"
stop TERM
[ "$src" = 0 ] || fail "exit $src: $(tail -3 serve.err)"

begin "bearer token: every route but /health"
printf 's3cret-token\n' > token.txt
start --token-file token.txt --trace
req /health -
[ "$code" = 200 ] || fail "health: $code"
req /search '{"query": "flow"}'
want_err 401 "bearer token"
req /search '{"query": "flow"}' -H "Authorization: Bearer wrong"
want_err 401 "bearer token"
req /metrics -
want_err 401 "bearer token"
req /search '{"query": "flow"}' -H "Authorization: Bearer s3cret-token"
[ "$code" = 200 ] || fail "with the token: $code $(head -c 200 body.txt)"
# --trace: a line a request, each stage's microseconds, written
# once the answer is sent (the client may have it a moment before)
for i in $(seq 50); do
    grep -q '^tandem serve: trace /search 200 body [0-9]* parse [0-9]* run [0-9]* encode [0-9]* queue [0-9]* send [0-9]* engine [0-9]* total [0-9]*$' serve.err &&
        break
    sleep 0.1
done
grep -q '^tandem serve: trace /search 401 body - parse - run - encode [0-9]* queue [0-9]* send [0-9]* engine 0 total [0-9]*$' serve.err &&
    grep -q '^tandem serve: trace /search 200 body [0-9]* parse [0-9]* run [0-9]* encode [0-9]* queue [0-9]* send [0-9]* engine [0-9]* total [0-9]*$' serve.err ||
    fail "trace: $(grep trace serve.err | tail -3)"

begin "SIGTERM in the middle of a load: what is in flight is answered, exit 0"
python3 - "$URL" "$SPID" <<'EOF' || fail "load at SIGTERM"
import http.client, json, os, signal, sys, threading, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1]); pid = int(sys.argv[2])
H = {"Authorization": "Bearer s3cret-token"}
texts = [l.split(":", 1)[1].strip() for l in open("q.txt")]
stop, bad, ok = [False], [], [0]
def client():
    while not stop[0]:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        try:
            c.request("POST", "/search", json.dumps({"query": texts[0], "k": 10}), H)
        except OSError:
            return  # refused: the server stopped listening
        try:
            r = c.getresponse(); body = r.read()
            if r.status == 200: json.loads(body); ok[0] += 1
            elif r.status == 503: assert "shutting down" in json.loads(body)["error"]
            else: bad.append((r.status, body[:200]))
        except (http.client.RemoteDisconnected, ConnectionResetError):
            pass  # not yet accepted when the server stopped listening
        except Exception as e:
            bad.append(repr(e))  # a cut answer, bad JSON
        c.close()
ts = [threading.Thread(target=client) for _ in range(8)]
for t in ts: t.start()
time.sleep(1.5)
# a batch sent whole before the signal, still running when it comes
big = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
big.request("POST", "/search/batch", json.dumps([{"query": t, "k": 100} for t in texts] * 80), H)
time.sleep(0.2)
os.kill(pid, signal.SIGTERM)
r = big.getresponse(); body = r.read()
assert r.status == 200 and len(json.loads(body)["results"]) == 880, (r.status, body[:200])
stop[0] = True
for t in ts: t.join()
assert not bad and ok[0] > 0, (bad[:5], ok[0])
EOF
stop TERM # already signalled: waits for the exit
[ "$src" = 0 ] || fail "exit $src: $(tail -3 serve.err)"
grep -q "SIGTERM: stopping" serve.err && grep -q "stopped$" serve.err || fail "$(tail -3 serve.err)"
grep -i "sanitizer\|runtime error" serve.err && fail "sanitizer report"

begin "bad options are refused, naming them"
run "$T" serve idx --listen nowhere
want_fail "expected ADDR:PORT"
run "$T" serve idx --listen 127.0.0.1:99999
want_fail "port"
run "$T" serve idx --max-k 0
want_fail "max-k"
run "$T" serve idx -k 500 --max-k 100
want_fail "max-k"
run "$T" serve idx --token-file /nonexistent
want_fail "token-file"
run "$T" serve
want_fail "need INDEX"
run "$T" serve --help
want_ok
grep -q "max-body" out.txt || fail "help: $(cat out.txt)"

exit "$failures"
