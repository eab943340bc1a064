#!/usr/bin/env python3
"""Open-loop Poisson load over HTTP against `tandem serve` (issue 32 item 4).

    serve_load.py URL --queries FILE (--rates LIST | --find-max) [options]

What `tandem bench load` does in process, over HTTP, with the same rules, so
that the two can be put side by side: queries of an id:text file (in order,
cycled) arrive as a Poisson process (seeded exponential gaps) at each rate;
each is sent at its arrival time whatever is still running (an open loop);
its latency runs from the scheduled arrival to the last byte of the answer,
so a backlog counts. Per policy: mean, p50, p95, p99, p99.9, deadline misses,
achieved rate, errors; --find-max: the highest rate whose p95 stays within
the budget (50 ms) and the deadline, doubling from --start-rate then
bisection, each failed probe run twice, a probe stopped once more than 5 %
of its arrivals took longer than the budget, a point stopped when its
backlog is hopeless (tools/cmd_bench_load*.c has the same rules).

The generator: --workers processes (multiprocessing), each an asyncio loop
with a pool of keep-alive HTTP/1.1 connections (one request at a time on
each, opened as needed up to --connections in all) taking every W-th
arrival of the one schedule; an arrival that finds no free connection waits
for one (its wait counts). The loops wait in select(2), whose timeout is in
microseconds (epoll's is in milliseconds); at light load a worker also
yields busily for the last --spin-us before each arrival, as a woken process
can be late (the median lag from arrival to send is in the CSV).
--route health drives GET /health instead: what the generator itself can
push, to know it is not the bottleneck.

Answers are checked: every answer to a query must carry the hits (the bytes
of the "hits" array) of that query's reference answer, fetched from the
server one request at a time before the load; with --check-with TANDEM
INDEX, the references of --check-sample queries are first checked against
`TANDEM search INDEX TEXT --json`. A wrong answer, a non-200 answer or a
lost connection makes the exit status 1 (2: bad usage or the server not
reachable). Test switch: SERVE_LOAD_CORRUPT=N spoils the reference of the
N-th query, to see the check fail. Python's standard library only.
"""
import argparse
import array
import asyncio
import collections
import csv
import json
import math
import multiprocessing as mp
import os
import random
import selectors
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

LATE_S = 0.001          # a send this much after its arrival time is late
RATE_MAX = 1e6
MIN_ARRIVALS = 20       # the rate search does not go where a point has fewer
GRACE_S = 0.25          # the backlog test waits this long for a pace
MAX_REPORTED = 5        # errors and mismatches described per point
YIELD_EVERY = 32        # sends in a row before the loop reads answers
POLICIES = ("cpu-only", "gpu-only", "best", "hybrid", "direct")
mono = time.monotonic   # CLOCK_MONOTONIC: one clock for every process


def fail(msg, code=2):
    print(f"serve_load: {msg}", file=sys.stderr)
    sys.exit(code)


# ---- queries, references, options


def read_queries(path, limit):
    """id:text (or id<TAB>text) lines as tandem reads them; blank lines skipped."""
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip("\r\n")
                if not line.strip():
                    continue
                tab, colon = line.find("\t"), line.find(":")
                cut = tab if tab >= 0 and (colon < 0 or tab < colon) else colon
                if cut <= 0:
                    fail(f"{path}:{n}: expected id:text")
                out.append((line[:cut].strip(), line[cut + 1:].strip()))
                if limit and len(out) == limit:
                    break
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if not out:
        fail(f"{path}: no query")
    return out


def hits_of(body):
    """The "hits" array of a search answer, as bytes (the object's last field)."""
    at = body.rfind(b'"hits": ')
    return body[at:].rstrip() if at >= 0 else None


class Server:
    def __init__(self, url, token):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "http" or not u.hostname:
            fail(f"{url}: expected http://HOST:PORT")
        self.url = url.rstrip("/")
        self.host = u.hostname
        self.port = u.port or 80
        self.auth = f"Authorization: Bearer {token}\r\n" if token else ""

    def call(self, path, body=None, timeout=120):
        req = urllib.request.Request(self.url + path, body)
        if self.auth:
            req.add_header("Authorization", self.auth.split(": ", 1)[1].strip())
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def request_bytes(self, path, body):
        """One whole HTTP/1.1 request, keep-alive."""
        if body is None:
            return (f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n{self.auth}\r\n").encode()
        return (f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\n{self.auth}"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                ).encode() + body


def search_body(text, a, policy):
    q = {"query": text, "k": a.k, "algorithm": a.algorithm}
    if policy:
        q["policy"] = policy
    return json.dumps(q).encode()


def references(srv, queries, a):
    """Each query's hits from the server, one request at a time (a few
    connections at once); queries without a term in the index are left
    out, as tandem bench load does. Exits 1 if one fails."""
    def one(q):
        st, body = srv.call("/search", search_body(q[1], a, None))
        if st != 200:
            fail(f"reference answer to query '{q[0]}': status {st}: {body[:200]!r}", 1)
        return json.loads(body)["terms"], hits_of(body)
    with ThreadPoolExecutor(8) as ex:
        got = list(ex.map(one, queries))
    kept = [(q, h) for q, (terms, h) in zip(queries, got) if terms > 0]
    print(f"{len(queries)} queries: {len(kept)} ranked, {len(queries) - len(kept)} without a "
          f"term in the index left out", file=sys.stderr)
    if not kept:
        fail("no query has a term in the index")
    return [q for q, _ in kept], [h for _, h in kept]


def check_with_cli(tandem, index, queries, refs, a):
    """The references of a sample against `tandem search --json`: 0 or the
    number that differ."""
    n = min(a.check_sample, len(queries))
    pick = sorted(random.Random(a.seed).sample(range(len(queries)), n))
    bad = 0
    for i in pick:
        qid, text = queries[i]
        r = subprocess.run([tandem, "search", index, text, "--json", "-k", str(a.k),
                            "--algorithm", a.algorithm], capture_output=True, timeout=600)
        if r.returncode != 0:
            fail(f"{tandem} search: exit {r.returncode}: {r.stderr[-300:]!r}", 1)
        if hits_of(r.stdout) != refs[i]:
            bad += 1
            print(f"MISMATCH query '{qid}': the server's hits are not tandem search --json's",
                  file=sys.stderr)
    print(f"references: {n - bad} of {n} sampled queries have the hits of tandem search --json",
          file=sys.stderr)
    return bad


def lane_policies(srv):
    """cpu-only / gpu-only where the server has such a lane, then best and
    hybrid (bench load's default), from /metrics."""
    st, body = srv.call("/metrics")
    if st != 200:
        fail(f"GET /metrics: status {st}")
    kinds = {ln.split('kind="', 1)[1].split('"', 1)[0] for ln in body.decode().splitlines()
             if ln.startswith("tandem_device_info{")}
    return [p for p, k in (("cpu-only", "cpu"), ("gpu-only", "gpu")) if k in kinds] + \
        ["best", "hybrid"]


# ---- the workers: asyncio, keep-alive connections


class Conn(asyncio.Protocol):
    """One keep-alive connection, one request at a time."""

    def __init__(self, w):
        self.w, self.tr, self.buf, self.cur, self.need = w, None, bytearray(), -1, -1

    def connection_made(self, tr):
        self.tr = tr
        self.w.opened(self)

    def data_received(self, data):
        self.buf += data
        while True:
            if self.need < 0:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = bytes(self.buf[:end]).lower()
                at = head.find(b"\r\ncontent-length:")
                if at < 0:
                    self.tr.close()  # no length: cannot frame it (counted when lost)
                    return
                eol = head.find(b"\r", at + 2)
                self.status = int(head[9:12])
                self.hlen = end + 4
                self.need = self.hlen + int(head[at + 17:eol if eol > 0 else len(head)])
                self.closing = b"\r\nconnection: close" in head
            if len(self.buf) < self.need:
                return
            body = bytes(self.buf[self.hlen:self.need])
            del self.buf[:self.need]
            self.need = -1
            i, self.cur = self.cur, -1
            self.w.answered(self, i, self.status, body)

    def connection_lost(self, exc):
        self.w.lost(self, exc)


class Worker:
    """Arrivals j of this worker: times t[j] (seconds from t0), queries
    q[j]; lat[j] the latency, or one of the marks below."""
    UNSENT, FAILED, DROPPED, WRONG = -1.0, -2.0, -3.0, -4.0

    def __init__(self, srv, cap, spin, refs, health, stop, over):
        self.srv, self.cap, self.spin = srv, cap, spin
        self.reqs, self.refs, self.health, self.stop = None, refs, health, stop
        self.over = over  # answers of the point over its limit, shared
        # select(2) takes its timeout in microseconds, epoll in milliseconds:
        # sends on time without spinning (while the descriptors fit its set)
        self.loop = asyncio.SelectorEventLoop(selectors.SelectSelector()) if cap <= 900 \
            else asyncio.new_event_loop()
        self.idle, self.conns, self.connecting = [], set(), 0
        self.running = False  # a point is on: arrivals to place, answers to count
        self.errors = 0

    # connections
    def opened(self, c):
        self.connecting -= 1
        self.conns.add(c)
        self.give(c)

    def lost(self, c, exc):
        self.conns.discard(c)
        if c in self.idle:
            self.idle.remove(c)
        j, c.cur = c.cur, -1
        if j >= 0 and self.running:
            self.settle(j, self.FAILED, f"connection lost: {exc or 'closed by the server'}")
        if self.running and self.pending and len(self.conns) + self.connecting < self.cap:
            self.connect()  # the waiting ones need a carrier

    def connect(self):
        self.connecting += 1
        fut = self.loop.create_task(self.loop.create_connection(
            lambda: Conn(self), self.srv.host, self.srv.port))
        fut.add_done_callback(self.connected)

    def connected(self, fut):
        if fut.cancelled() or fut.exception() is None:
            return
        self.connecting -= 1
        self.errors += 1
        if self.running and not self.conns and not self.connecting:
            while self.pending:  # nothing will carry them
                self.settle(self.pending.popleft(), self.FAILED,
                            f"cannot connect: {fut.exception()}")

    def give(self, c):
        """A free connection: the oldest waiting arrival, else idle."""
        if self.running and self.pending:
            self.send(c, self.pending.popleft())
        else:
            self.idle.append(c)

    # one point
    def settle(self, j, v, msg=None):
        """Arrival j is over: its latency v, or a mark with a message."""
        self.lat[j] = v
        self.done += 1
        if msg:
            self.failed += v == self.FAILED
            self.mism += v == self.WRONG
            if len(self.msgs) < MAX_REPORTED:
                self.msgs.append(msg)
        if self.done == self.sent_n and self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def send(self, c, j):
        lag = mono() - (self.t0 + self.t[j])
        if self.t[j] >= self.warmup:
            self.lags.append(lag)
        if lag > LATE_S:
            self.late += 1
            self.late_max = max(self.late_max, lag)
        c.cur = j
        c.tr.write(self.reqs[self.q[j]])

    def answered(self, c, j, status, body):
        now = mono()
        if j >= 0 and self.running:
            if status != 200:
                self.settle(j, self.FAILED, f"status {status}: {body[:200]!r}")
            elif not self.health and hits_of(body) != self.refs[self.q[j]]:
                self.settle(j, self.WRONG, f"MISMATCH query #{self.q[j]} (arrival {j} of "
                            "this worker): its hits are not the reference's")
            else:
                lat = now - self.t0 - self.t[j]
                measured = self.t[j] >= self.warmup
                if measured and not self.health:
                    at = body.find(b'"batch": ')
                    self.batched += at >= 0 and body[at + 9:at + 11] != b"1,"
                    self.bmode += body.find(b'"load_mode": "batch"') >= 0
                if measured:
                    self.last = max(self.last, now)
                if measured and self.limit > 0 and lat > self.limit:
                    with self.over.get_lock():  # over every worker
                        self.over.value += 1
                        if self.over.value > self.hopeless and not self.stop.value:
                            self.stop.value = 1  # p95 is over the limit whatever follows
                            self.why = (f"over 5 % of the arrivals took over "
                                        f"{self.limit * 1e3:g} ms")
                self.settle(j, lat)
        if c.closing:
            c.tr.close()
        else:
            self.give(c)

    def backlogged(self, now):
        """More arrivals unanswered than the answers' pace clears within
        twice the horizon (bench load's test, for this worker's share)."""
        el = now - self.t0
        if el <= GRACE_S:
            return False
        pace = self.done / el
        return self.sent_n - self.done > 2 * pace * self.horizon + 32 / self.nworkers

    async def dispatch(self):
        for j in range(len(self.t)):
            when = self.t0 + self.t[j]
            d = when - mono()
            if d > self.spin_now:
                await asyncio.sleep(d - self.spin_now)
            while mono() < when:
                await asyncio.sleep(0)  # busy, but the answers are still read
            if j % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)
            now = mono()
            if self.stop.value:
                break
            if now - when > self.give_up or self.backlogged(now):
                self.stop.value = 1  # hopeless: the rest are dropped
                self.why = (f"an arrival {now - when:.2f} s late" if now - when > self.give_up
                            else f"{self.sent_n - self.done} unanswered at "
                                 f"{now - self.t0:.2f} s, {self.done} answered")
                break
            self.sent_n += 1
            self.inflight_max = max(self.inflight_max, self.sent_n - self.done)
            if self.idle:
                self.send(self.idle.pop(), j)
            else:
                self.pending.append(j)
                if len(self.conns) + self.connecting < self.cap:
                    self.connect()
        while self.stop.value and self.pending:  # stopped: the waiting ones are not sent
            self.lat[self.pending.pop()] = self.DROPPED
            self.sent_n -= 1
        if self.done < self.sent_n:
            self.drained = self.loop.create_future()
            try:
                await asyncio.wait_for(self.drained, self.drain_s)
            except asyncio.TimeoutError:
                for c in list(self.conns):
                    if c.cur >= 0:
                        j, c.cur = c.cur, -1
                        self.settle(j, self.FAILED, f"no answer {self.drain_s:.0f} s after "
                                    "the last arrival")
                        c.tr.close()

    def run_point(self, cmd):
        self.t, self.q = cmd["t"], cmd["q"]
        self.t0, self.warmup, self.limit = cmd["t0"], cmd["warmup"], cmd["limit"]
        self.give_up, self.hopeless, self.nworkers = cmd["give_up"], cmd["hopeless"], cmd["W"]
        self.horizon = self.limit if self.limit > 0 else self.give_up
        # spinning costs at most a tenth of a processor
        self.spin_now = self.spin if cmd["gap"] > 10 * self.spin else 0
        self.drain_s = max(4 * self.horizon, 10)
        n = len(self.t)
        self.lat = array.array("d", [self.UNSENT]) * n
        self.pending, self.msgs, self.drained = collections.deque(), [], None
        self.sent_n = self.done = self.failed = self.mism = 0
        self.late = self.inflight_max = self.batched = self.bmode = 0
        self.late_max = self.last = 0.0
        self.lags = array.array("d")
        self.why = None
        self.running = True
        self.loop.run_until_complete(self.dispatch())
        self.running = False
        meas = [v for x, v in zip(self.t, self.lat) if x >= self.warmup]
        return {"lat": array.array("d", (v for v in meas if v >= 0)).tobytes(),
                "arrivals": len(meas), "failed": meas.count(self.FAILED),
                "wrong": meas.count(self.WRONG),
                "dropped": meas.count(self.DROPPED) + meas.count(self.UNSENT),
                "failed_all": self.failed, "mism": self.mism, "late": self.late,
                "late_max": self.late_max, "inflight_max": self.inflight_max,
                "last": self.last, "conns": len(self.conns), "batched": self.batched,
                "bmode": self.bmode, "msgs": self.msgs, "errors": self.errors,
                "lags": self.lags.tobytes(), "why": self.why}


def worker_main(pipe, srv, cap, spin, refs, health, stop, over):
    w = Worker(srv, cap, spin, refs, health, stop, over)
    while True:
        cmd = pipe.recv()
        if cmd is None:
            return
        if "reqs" in cmd:  # the requests of a policy
            w.reqs = cmd["reqs"]
            pipe.send(None)
            continue
        pipe.send(w.run_point(cmd))


# ---- points, the rate search, output


def schedule(rate, seed, warmup, duration):
    """Poisson arrivals over warm-up + duration (the same for every policy)."""
    g = random.Random(seed ^ (round(rate * 1000) * 0x9E3779B97F4A7C15 % (1 << 64)))
    t, now, end = array.array("d"), 0.0, warmup + duration
    while True:
        now += g.expovariate(rate)
        if now >= end:
            return t
        t.append(now)


def pct(v, f):
    """Nearest rank of the sorted v at fraction f."""
    if not v:
        return 0.0
    r = math.ceil(f * len(v))
    return v[r - 1 if r else 0]


class Load:
    def __init__(self, a, srv, queries, refs):
        self.a, self.srv, self.queries, self.points = a, srv, queries, []
        self.stop = mp.Value("i", 0, lock=False)
        self.over = mp.Value("l", 0)
        ctx = mp.get_context("fork")
        cap = max(1, a.connections // a.workers)
        self.pipes, self.procs = [], []
        for _ in range(a.workers):
            here, there = ctx.Pipe()
            p = ctx.Process(target=worker_main, daemon=True,
                            args=(there, srv, cap, a.spin_us * 1e-6, refs,
                                  a.route == "health", self.stop, self.over))
            p.start()
            self.pipes.append(here)
            self.procs.append(p)
        self.policy = "?"
        self.mismatches = self.failures = 0
        self.t_start = mono()
        self.cut = False

    def close(self):
        for p in self.pipes:
            p.send(None)
        for p in self.procs:
            p.join(5)

    def set_policy(self, pol):
        self.policy = pol
        if self.a.route == "health":
            reqs = [self.srv.request_bytes("/health", None)]
        else:
            reqs = [self.srv.request_bytes("/search", search_body(t, self.a, pol))
                    for _, t in self.queries]
        for p in self.pipes:
            p.send({"reqs": reqs})
        for p in self.pipes:
            p.recv()

    def run_point(self, rate, probe, limit_ms):
        a, W = self.a, self.a.workers
        t = schedule(rate, a.seed, a.warmup, a.duration)
        nwarm = sum(1 for x in t if x < a.warmup)
        nq = 1 if a.route == "health" else len(self.queries)
        deadline = a.deadline_ms * 1e-3
        give_up = max(deadline * 4, 2.0)
        hopeless = int((len(t) - nwarm) * 0.05)
        self.stop.value = 0
        self.over.value = 0
        t0 = mono() + 0.05 + len(t) * 2e-7  # the workers have their arrivals by then
        for w, p in enumerate(self.pipes):
            p.send({"t": t[w::W], "q": array.array("l", (i % nq for i in range(w, len(t), W))),
                    "t0": t0, "warmup": a.warmup, "limit": limit_ms * 1e-3,
                    "give_up": give_up, "hopeless": hopeless, "W": W, "gap": W / rate})
        rs = [p.recv() for p in self.pipes]
        lat, lags = array.array("d"), array.array("d")
        for r in rs:
            lat.frombytes(r["lat"])
            lags.frombytes(r["lags"])
        lat = sorted(lat)
        pt = {"policy": self.policy, "rate": rate, "probe": probe,
              "arrivals": sum(r["arrivals"] for r in rs), "answered": len(lat),
              "failed": sum(r["failed"] for r in rs), "dropped": sum(r["dropped"] for r in rs),
              "late": sum(r["late"] for r in rs),
              "late_max_ms": max(r["late_max"] for r in rs) * 1e3,
              "send_lag_p50_us": 1e6 * pct(sorted(lags), 0.5),
              "mismatches": sum(r["wrong"] for r in rs),
              "max_inflight": sum(r["inflight_max"] for r in rs),
              "connections": sum(r["conns"] for r in rs), "stopped": self.stop.value}
        first, last = t0 + (t[nwarm] if nwarm < len(t) else 0), max(r["last"] for r in rs)
        pt["throughput"] = len(lat) / (last - first) if last > first else 0.0
        pt["mean_ms"] = sum(lat) / len(lat) * 1e3 if lat else 0.0
        for name, f in (("p50", .5), ("p95", .95), ("p99", .99), ("p999", .999)):
            pt[name + "_ms"] = pct(lat, f) * 1e3
        pt["max_ms"] = lat[-1] * 1e3 if lat else 0.0
        pt["misses"] = sum(1 for x in lat if x > deadline) + pt["dropped"]
        pt["miss_pct"] = 100 * pt["misses"] / pt["arrivals"] if pt["arrivals"] else 0.0
        ans = max(1, len(lat))
        pt["batched_pct"] = 100 * sum(r["batched"] for r in rs) / ans
        pt["batch_mode_pct"] = 100 * sum(r["bmode"] for r in rs) / ans
        lim = a.deadline_ms if not a.find_max else min(a.deadline_ms, a.budget_p95_ms)
        pt["sustained"] = int(not pt["stopped"] and not pt["failed"] and not pt["mismatches"]
                              and pt["answered"] > 0 and pt["p95_ms"] <= lim)
        self.mismatches += sum(r["mism"] for r in rs)
        self.failures += sum(r["failed_all"] for r in rs)
        for r in rs:
            for m in r["msgs"]:
                print(f"{'' if m.startswith('MISMATCH') else 'FAILED '}{self.policy} rate "
                      f"{rate:g}: {m}", file=sys.stderr)
        whys = [r["why"] for r in rs if r["why"]]
        if whys:
            print(f"{self.policy} rate {rate:g}: stopped: {whys[0]}", file=sys.stderr)
        self.points.append(pt)
        return pt

    def point(self, rate, probe):
        a = self.a
        if self.cut or (a.time_limit > 0 and mono() - self.t_start > a.time_limit):
            if not self.cut:
                print(f"--time-limit {a.time_limit:g} s reached: no further point",
                      file=sys.stderr)
            self.cut = True
            return None
        limit = min(a.budget_p95_ms, a.deadline_ms) if probe else 0
        print(f"{self.policy}, {rate:g} q/s{' (rate search)' if probe else ''} ...",
              file=sys.stderr)
        pt = self.run_point(rate, probe, limit)
        print_point(pt)
        if pt["max_inflight"] >= a.connections and not pt["stopped"]:
            print(f"note: all {a.connections} connections were busy at once "
                  f"({pt['late']} arrivals sent late): raise --connections "
                  "(and the server's --max-connections)", file=sys.stderr)
        return pt

    def probe(self, rate):
        """A probe, run again when it failed without stopping (a hiccup)."""
        pt = self.point(rate, 1)
        if pt and not pt["sustained"] and not pt["stopped"]:
            pt = self.point(rate, 1)
        return pt

    def find_max(self):
        """Doubling from the start rate while sustained (halving while not),
        then bisection on a log scale: bench load's rate search."""
        a = self.a
        lo = hi = 0
        r, floor_rate, lo_pt = a.start_rate, MIN_ARRIVALS / a.duration, None
        while True:
            pt = self.probe(r)
            if pt is None:
                break
            if pt["sustained"]:
                lo, lo_pt = r, pt
                if hi or r * 2 > RATE_MAX:
                    break
                r *= 2
            else:
                hi = r
                if lo or r / 2 < floor_rate:
                    break
                r /= 2
        while pt is not None and lo and hi and hi / lo - 1 > a.precision:
            r = math.sqrt(lo * hi)
            pt = self.probe(r)
            if pt is None:
                break
            if pt["sustained"]:
                lo, lo_pt = r, pt
            else:
                hi = r
        if not self.cut:
            print(f"{self.policy}: {'sustains' if lo else 'sustains no rate down to'} "
                  f"{lo or hi:.4g} q/s (p95 budget {a.budget_p95_ms:g} ms, deadline "
                  f"{a.deadline_ms:g} ms)", file=sys.stderr)
        return lo_pt, pt is None


HEAD = ("policy", "rate", "arrived", "q/s", "mean ms", "p50", "p95", "p99", "p99.9", "miss%",
        "late", "drop", "fail", "bmode%", "batch%", "conns", "verdict")


def print_header():
    print("%-8s %9s %8s %9s %8s %8s %8s %8s %8s %6s %5s %5s %5s %6s %6s %5s %s" % HEAD)


def print_point(p):
    verdict = "stopped" if p["stopped"] else "ok" if p["sustained"] else "over"
    print("%-8s %9s %8d %9.1f %8.2f %8.2f %8.2f %8.2f %8.2f %6.2f %5d %5d %5d %6.1f %6.1f %5d %s"
          % (p["policy"], ("*" if p["probe"] else "") + "%.6g" % p["rate"], p["arrivals"],
             p["throughput"], p["mean_ms"], p["p50_ms"], p["p95_ms"], p["p99_ms"], p["p999_ms"],
             p["miss_pct"], p["late"], p["dropped"], p["failed"] + p["mismatches"],
             p["batch_mode_pct"], p["batched_pct"], p["connections"], verdict), flush=True)


CSV_FIELDS = ("policy", "rate", "probe", "arrivals", "answered", "failed", "dropped", "late",
              "late_max_ms", "send_lag_p50_us", "throughput", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms",
              "max_ms", "misses", "miss_pct", "mismatches", "batch_mode_pct", "batched_pct",
              "stopped", "sustained", "max_inflight", "connections")


def write_csv(path, points):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for p in points:
            w.writerow([("%.6g" % p[k]) if isinstance(p[k], float) else p[k] for k in CSV_FIELDS])
    os.replace(tmp, path)


def print_max(a, best):
    print(f"\nhighest sustained rate over HTTP (p95 <= {a.budget_p95_ms:g} ms and the "
          f"{a.deadline_ms:g} ms deadline; rate search to {a.precision * 100:g} %)")
    print("%-8s %10s %8s %8s %8s %8s %6s" % ("policy", "max q/s", "p50 ms", "p95", "p99",
                                             "p99.9", "miss%"))
    for pol, (pt, cut) in best.items():
        if pt is None:
            print("%-8s %10s%s" % (pol, "none", "   (cut by --time-limit)" if cut else ""))
            continue
        print("%-8s %10.6g %8.2f %8.2f %8.2f %8.2f %6.2f%s" % (
            pol, pt["rate"], pt["p50_ms"], pt["p95_ms"], pt["p99_ms"], pt["p999_ms"],
            pt["miss_pct"], "   (cut by --time-limit: a higher rate may be)" if cut else ""))


def compare(path, points, best):
    """Beside `tandem bench load --csv`: per policy the highest sustained
    rate in process and over HTTP, and the p50 of each at the lowest rate
    of --rates (with the client's own median lag from arrival to send,
    part of the HTTP p50)."""
    try:
        with open(path, newline="") as f:
            ref = list(csv.DictReader(f))
    except OSError as e:
        fail(f"--compare {path}: {e.strerror}")
    print(f"\nover HTTP against in process ({path}); targets: rate >= 90 %, "
          "light-load p50 <= +100 us")
    fmt = "%-8s %12s %12s %7s %8s %12s %12s %7s %10s"
    print(fmt % ("policy", "in-proc q/s", "HTTP q/s", "HTTP %", "at q/s", "in-proc p50",
                 "HTTP p50", "+us", "client lag"))
    for pol in best:
        mine = [r for r in ref if r["policy"] == pol and r.get("memory", "full") == "full"]
        inmax = max((float(r["rate"]) for r in mine
                     if r["probe"] == "1" and r["sustained"] == "1"), default=0)
        hmax = best[pol][0]["rate"] if best[pol][0] else 0
        light = [p for p in points if p["policy"] == pol and not p["probe"]]
        hp = min(light, key=lambda p: p["rate"]) if light else None
        ip = [float(r["p50_ms"]) for r in mine if r["probe"] == "0" and hp
              and abs(float(r["rate"]) - hp["rate"]) < 1e-9]
        print(fmt % (
            pol, "%.6g" % inmax if inmax else "-", "%.6g" % hmax if hmax else "-",
            "%.1f" % (100 * hmax / inmax) if inmax and hmax else "-",
            "%g" % hp["rate"] if hp else "-", "%.3f ms" % ip[0] if ip else "-",
            "%.3f ms" % hp["p50_ms"] if hp else "-",
            "%+.0f" % ((hp["p50_ms"] - ip[0]) * 1e3) if ip and hp else "-",
            "%.0f us" % hp["send_lag_p50_us"] if hp else "-"))


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="serve_load.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n", 1)[1])
    ap.add_argument("url", help="the server, http://HOST:PORT")
    ap.add_argument("--queries", help="id:text lines (needed but for --route health)")
    ap.add_argument("--limit", type=int, default=0, help="the first N queries of the file")
    ap.add_argument("--route", choices=("search", "health"), default="search",
                    help="POST /search (default), or GET /health: the generator's own rate")
    ap.add_argument("--policies", help="comma list of %s (default: cpu-only and gpu-only "
                    "where the server has such a lane, best, hybrid)" % ", ".join(POLICIES))
    ap.add_argument("--algorithm", default="auto")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--rates", help="offered rates, queries per second (e.g. 50,100,200)")
    ap.add_argument("--duration", type=float, default=5, help="measured seconds a point (5)")
    ap.add_argument("--warmup", type=float, default=1,
                    help="seconds of arrivals run first, checked but not measured (1)")
    ap.add_argument("--deadline-ms", type=float, default=500,
                    help="misses counted past it; a point is hopeless 4 deadlines late (500)")
    ap.add_argument("--find-max", action="store_true", help="the highest sustained rate "
                    "per policy: doubling from --start-rate, then bisection")
    ap.add_argument("--budget-p95-ms", type=float, default=50,
                    help="the p95 budget of --find-max (50)")
    ap.add_argument("--start-rate", type=float, help="the rate search's first rate "
                    "(default: the first of --rates, else 10)")
    ap.add_argument("--precision", type=float, default=0.05,
                    help="the rate search stops at hi / lo - 1 <= F (0.05)")
    ap.add_argument("--time-limit", type=float, default=0,
                    help="start no point after S seconds from the start (0: none)")
    ap.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1),
                    help="client processes (default: the processors, at most 8)")
    ap.add_argument("--connections", type=int, default=1024, help="keep-alive connections "
                    "at most, over every worker (1024; the server's --max-connections "
                    "must allow them)")
    ap.add_argument("--spin-us", type=float, default=300, help="microseconds before an "
                    "arrival spent yielding to the loop rather than sleeping, where a "
                    "worker's arrivals are over 10 times that apart (300; 0: never)")
    ap.add_argument("--seed", type=int, default=1, help="the arrivals' seed (1)")
    ap.add_argument("--token-file", help="send 'Authorization: Bearer' the file's first line")
    ap.add_argument("--check-with", nargs=2, metavar=("TANDEM", "INDEX"),
                    help="check the references of --check-sample queries against "
                    "TANDEM search INDEX TEXT --json")
    ap.add_argument("--check-sample", type=int, default=5, help="queries so checked (5)")
    ap.add_argument("--csv", help="every point as CSV (bench load's columns where they meet)")
    ap.add_argument("--compare", metavar="BENCH_CSV", help="a `tandem bench load --csv` of "
                    "the same policies, rates and budget: side by side at the end")
    a = ap.parse_args(argv)
    if a.route == "search" and not a.queries:
        ap.error("--queries FILE is needed (or --route health)")
    if not a.rates and not a.find_max:
        ap.error("nothing to run: give --rates LIST, --find-max or both")
    try:
        a.rates = sorted({float(x) for x in a.rates.split(",")}) if a.rates else []
    except ValueError:
        ap.error(f"--rates {a.rates}: expected numbers")
    if any(not 1 <= r <= RATE_MAX for r in a.rates):
        ap.error("--rates: each in 1..1e6")
    a.start_rate = a.start_rate or (a.rates[0] if a.rates else 10)
    if a.policies:
        a.policies = a.policies.split(",")
        bad = [p for p in a.policies if p not in POLICIES]
        if bad:
            ap.error(f"--policies {','.join(bad)}: expected {', '.join(POLICIES)}")
    if a.workers < 1 or a.connections < a.workers:
        ap.error("--workers 1 or more, --connections at least --workers")
    if a.duration <= 0 or a.warmup < 0 or a.deadline_ms <= 0 or a.budget_p95_ms <= 0:
        ap.error("--duration, --deadline-ms, --budget-p95-ms: positive")
    return a


def main(argv):
    a = parse_args(argv)
    token = None
    if a.token_file:
        with open(a.token_file) as f:
            token = f.readline().strip()
    srv = Server(a.url, token)
    try:
        st, body = srv.call("/health", timeout=10)
    except OSError as e:
        fail(f"{a.url}: {e}")
    if st != 200:
        fail(f"{a.url}/health: status {st}: {body[:200]!r}")
    queries, refs = [], []
    bad = 0
    if a.route == "search":
        queries, refs = references(srv, read_queries(a.queries, a.limit), a)
        if a.check_with:
            bad = check_with_cli(*a.check_with, queries, refs, a)
        spoil = int(os.environ.get("SERVE_LOAD_CORRUPT") or 0)
        if 0 < spoil <= len(refs):  # test switch: a wrong reference, every answer differs
            refs[spoil - 1] = refs[spoil - 1][:-2] + b" ]"
        policies = a.policies or lane_policies(srv)
    else:
        policies = ["health"]
    load = Load(a, srv, queries, refs)
    best = {}
    try:
        print_header()
        for pol in policies:
            load.set_policy(pol if a.route == "search" else None)
            load.policy = pol
            for r in a.rates:
                if load.point(r, 0) is None:
                    break
            if a.find_max:
                best[pol] = load.find_max()
    finally:
        load.close()
    if a.find_max:
        print_max(a, best)
    if a.csv:
        write_csv(a.csv, load.points)
    if a.compare and a.find_max:
        compare(a.compare, load.points, best)
    mism = load.mismatches + bad
    if mism or load.failures:
        print(f"serve_load: {mism} answers differ from the references, {load.failures} "
              "requests failed", file=sys.stderr)
        return 1
    if a.route == "search":
        print("serve_load: every answer has its query's reference hits", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
