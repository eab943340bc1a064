#!/usr/bin/env python3
"""PISA on an impact index with weighted queries: what tandem scores, PISA scores.

pisa_bench.py (../shared/bench/pisa) runs PISA on `tandem export --to pisa`. On
an impact index (`prep --scorer quantized`: the stored frequency, the impact,
is the score) its query path does not rank what tandem ranks for a learned
sparse log (docs/LEARNED_SPARSE.md, "PISA on an impact index"):
  - it sends text through PISA's English tokenizer, which splits WordPieces
    (`##ing` becomes `ing`, punctuation tokens vanish);
  - it calls retrieve() without query_weighted, so PISA counts each distinct
    term once: a token repeated 80 times weighs 1, not 80.
This script reuses pisa_bench.py (its prep, context, timing and output) but
hands PISA each query as term -> weight, terms exactly as written, with
query_weighted on: PISA then scores sum(weight x impact) as tandem does.

  pisa_impact.py lat DIR QUERIES N ALGO:K[,...]      as pisa_bench.py lat
  pisa_impact.py tput DIR QUERIES N THREADS ALGO:K[,...]
  pisa_impact.py run DIR QUERIES N ALGO K OUT        TREC run (qid Q0 doc rank score PISA;
      PISA_THREADS threads, default 1)
  pisa_impact.py same RUN_A RUN_B                    two TREC runs: identical queries,
      queries that differ only in which equal-scored documents fill the last places
      (PISA keeps any of a tie at the k-th score, tandem the lowest docids), and
      others (exit 1 if any)

Bounds (environment), for large collections: PISA_WARMUP queries run untimed
before each lat spec (default 100, as pisa_bench.py) and before each tput spec
(default 500, as pisa_bench.py); PISA_BUDGET seconds of timed queries a lat
spec may take (default none: all N), its line says how many ran (n=).

QUERIES: tandem's query files: `id<TAB>tok tok ...` (or `id:tok ...`), a token's
repetitions its weight (Anserini's SPLADE++ and uniCOIL topics; .gz read too),
or JSON lines {"id": ..., "terms"|"vector": {term: weight}}. The first N queries
with a term in the index are used. pyterrier-pisa repeats a term floor(weight)
times and counts the repeats, so a fractional weight is floored (0.5 drops the
term): integer weights (the TSV logs) are exact.

pisa_bench.py is found in PISA_BENCH (a directory; default ../shared/bench/pisa,
then .gl); PISA_SITE as for pisa_bench.py.
"""
import collections, gzip, json, os, statistics, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
for d in (os.environ.get("PISA_BENCH"), os.path.join(HERE, "..", "..", "shared", "bench", "pisa"),
          os.path.join(HERE, "..", ".gl")):
    if d and os.path.exists(os.path.join(d, "pisa_bench.py")):
        sys.path.insert(0, d)
        break
import numpy as np  # noqa: E402
import pisa_bench as B  # noqa: E402

P = B.P


def parse(line):
    line = line.strip()
    if not line:
        return None
    if line.startswith("{"):
        o = json.loads(line)
        terms = o.get("terms", o.get("vector")) or {}
        return str(o.get("id", "")), {str(t): float(w) for t, w in terms.items()}
    sep = "\t" if "\t" in line else ":"
    qid, text = line.split(sep, 1) if sep in line else ("", line)
    return qid, {t: float(c) for t, c in collections.Counter(text.split()).items()}


def load(path, n, d):
    """The first n queries with a term in the lexicon: (id, {term: weight})."""
    lex = set(t.rstrip("\n") for t in open(os.path.join(d, "fwd.terms"), encoding="utf-8"))
    out = []
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            q = parse(line)
            if q and any(t in lex for t in q[1]):
                out.append(q)
                if len(out) == n:
                    break
    return out


IDS = {}  # id(dict) -> query id, for run's output


def queries(path, n, d):
    qs = load(path, n, d)
    for qid, terms in qs:
        IDS[id(terms)] = qid
    return [terms for _, terms in qs]


def call(c, algo, qs, k, threads=1):
    """pisa_bench.call with term -> weight queries, weighted (a str: one term)."""
    qs = [q if isinstance(q, dict) else {q: 1.0} for q in qs]
    m = len(qs) * k
    qi, dn = np.empty(m, np.int32), np.empty(m, object)
    rk, sc = np.empty(m, np.int32), np.empty(m, np.float32)
    n = P.retrieve(c, algo, list(enumerate(qs)), k=k, threads=threads, pretokenised=1,
                   query_weighted=1, result_qidxs=qi, result_docnos=dn, result_ranks=rk,
                   result_scores=sc)
    return n, qi, dn, sc


def lat(a):
    c, qs = B.context(a.dir), queries(a.queries, a.n, a.dir)
    warm = int(os.environ.get("PISA_WARMUP", "100"))
    budget = float(os.environ.get("PISA_BUDGET", "inf"))
    for algo, k in B.specs(a.specs):
        for q in qs[:warm]:
            call(c, algo, [q], k)
        ts, spent = [], 0.0
        for q in qs:
            t = time.perf_counter_ns()
            call(c, algo, [q], k)
            ts.append((time.perf_counter_ns() - t) / 1000)
            spent += ts[-1] / 1e6
            if spent >= budget:
                break
        s = sorted(ts)
        print(f"PISA {algo:>20} k={k:<5} n={len(ts)} mean {statistics.fmean(ts):9.1f} "
              f"p50 {B.pct(s, 50):9.1f} p90 {B.pct(s, 90):9.1f} p99 {B.pct(s, 99):9.1f} "
              f"max {s[-1]:10.1f} us", flush=True)
    ts = []
    for _ in range(2000):
        t = time.perf_counter_ns()
        call(c, "ranked_or", ["zzzznotatermzzzz"], 10)
        ts.append((time.perf_counter_ns() - t) / 1000)
    print(f"PISA call overhead (an empty query): mean {statistics.fmean(ts):.1f} us", flush=True)


def tput(a):
    c, qs = B.context(a.dir), queries(a.queries, a.n, a.dir)
    warm = int(os.environ.get("PISA_WARMUP", "500"))
    for algo, k in B.specs(a.specs):
        if warm:
            call(c, algo, qs[:warm], k, a.threads)
        t = time.time()
        call(c, algo, qs, k, a.threads)
        dt = time.time() - t
        print(f"PISA {algo:>20} k={k:<5} threads={a.threads} {len(qs) / dt:10.0f} q/s "
              f"({len(qs)} queries, {dt:.2f} s)", flush=True)


def run(a):
    c, qs = B.context(a.dir), queries(a.queries, a.n, a.dir)
    cnt, qi, dn, sc = call(c, a.algo, qs, a.k, int(os.environ.get("PISA_THREADS", "1")))
    with open(a.out, "w") as f:
        rank, last = 0, None
        for i in range(cnt):  # PISA orders each query's hits by score, then docid
            rank = rank + 1 if qi[i] == last else 1
            last = qi[i]
            f.write(f"{IDS[id(qs[qi[i]])]} Q0 {dn[i]} {rank} {sc[i]:.6f} PISA\n")


def trec(path):
    r = collections.defaultdict(list)
    for line in open(path):
        f = line.split()
        r[f[0]].append((f[2], float(f[4])))
    return r


def same(path_a, path_b):
    a, b = trec(path_a), trec(path_b)
    n = {"identical": 0, "tie at the k-th score only": 0, "different": 0}
    for q in sorted(set(a) | set(b)):
        x, y = a.get(q, []), b.get(q, [])
        if x == y:
            n["identical"] += 1
            continue
        above = lambda h: {d for d, s in h if s > h[-1][1]} if h else set()
        tie = [s for _, s in x] == [s for _, s in y] and above(x) == above(y)
        n["tie at the k-th score only" if tie else "different"] += 1
        if not tie and n["different"] <= 3:
            print(f"query {q} differs: {x[:3]} ... vs {y[:3]} ...")
    print(f"{len(set(a) | set(b))} queries: " + ", ".join(f"{v} {k}" for k, v in n.items()))
    return 1 if n["different"] else 0


B.queries, B.call, B.lat, B.tput, B.run = queries, call, lat, tput, run

if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "same":
        sys.exit(same(sys.argv[2], sys.argv[3]))
    B.__doc__ = __doc__
    sys.argv[0] = os.path.basename(__file__)
    B.main()
