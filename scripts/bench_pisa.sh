#!/usr/bin/env bash
# tandem beside PISA in one run, one table with the ratios (issue 29 item 4).
# `bash scripts/bench_pisa.sh --help` says everything; the text is usage() below.
set -u

usage() {
    cat <<'EOF'
usage: scripts/bench_pisa.sh [options]
tandem and PISA on the same generated collection and the same queries, in one
run, one table a (collection size, query log) with the ratios.

For each size N of --docs:
  tandem gen collection --docs N --seed 1 --vocab-from VOCAB
  tandem build --stemmer none --stopwords none        -> WORK/cN.idx
  tandem export --to pisa                              -> WORK/pisaN/exp.*
  pisa_bench.py prep (block_simdbp, BM25 1.2/0.75, block-max blocks of 128)
                                                       -> WORK/pisaN/idx/
  (each skipped when WORK already holds it for the same N and VOCAB: a second
  call on a warm machine goes straight to the queries; the collection text is
  deleted once indexed).
Then for each query log of --logs:
  the query sets: the log's first NQ queries with a term in the index (PISA's
  tokenizer and lexicon, as pisa_bench.py selects them) for single queries,
  the first TPUT_NQ for throughput; both tools get exactly these lines, and
  the counts each tool ran are printed and compared (tandem leaves out queries
  with no term by its own tokenizer: a difference is flagged).
  tandem bench queries, every answer checked against the oracle
  (--oracle-threads, --oracle-cache WORK/cache/...):
    single queries: and, maxscore, wand, bmw, or at k 10; maxscore, bmw at
      k 1000 (NQ set, --per-query CSV for the floor row)
    batches: and, maxscore, bmw at k 10, maxscore at k 1000, each batch size
      of BATCH from BATCH_THREADS sender threads (TPUT_NQ set; the best size
      is reported). bench queries also runs single series on that set first
      (not reported; --budget bounds them).
  PISA (pisa_bench.py): tput THREADS ranked_and:10,maxscore:10,
    block_max_wand:10,maxscore:1000 (TPUT_NQ set; all in one call);
    lat (one thread, one query a call) ranked_and:10,maxscore:10,wand:10,
    block_max_wand:10,ranked_or:10,maxscore:1000,block_max_wand:1000 (NQ set).
  The floor row: the one-term queries of the NQ set whose list is shorter than
    one block (128 postings), chosen from tandem's --per-query features
    (terms = 1, len_max < 128): PISA ranked_and:10 and tandem AND top-10 on
    exactly those queries, median (p50) and p99 (the floor medians of tandem's
    other k = 10 series are printed under the table).

Table: rows algorithm@k; columns: queries run (PISA/tandem), PISA one thread
mean and p99, tandem mean and p99 (µs), PISA/tandem (× > 1: tandem faster),
PISA THREADS-thread q/s, tandem's best batch q/s (its size), tandem/PISA.
A table a tandem device when DEVICES names several. Printed, and appended to
OUT/bench-pisa.md and OUT/bench-pisa.csv; raw outputs under
OUT/run-N-LOG/ (PISA's lines, tandem's tables, CSVs, stderr).

options (each also an environment variable, the option winning):
  --tandem BIN         tandem binary (TANDEM_BIN; default build/tandem)
  --work DIR           index, PISA files, oracle caches (WORK; default
                       /tmp/bench-pisa); about 3 GB a million documents
  --out DIR            tables and raw outputs (OUT; default WORK)
  --docs LIST          collection sizes, comma-separated (DOCS; default
                       1000000; 10000000 is heavy: see the times below)
  --logs LIST          query logs, comma-separated, id:text or id<TAB>text lines
                       (LOGS; default QUERIES_DIR/terabyte05-efficiency.txt,
                       QUERIES_DIR/msmarco-passage-dev-subset.tsv)
  --queries-dir DIR    QUERIES_DIR (default ../shared/data/queries from the
                       repository root)
  --vocab-from FILE    the collection's vocabulary (VOCAB; default the first log)
  --nq N               single-query set size (NQ; default 3000)
  --tput-nq N          throughput set size (TPUT_NQ; default 10000)
  --devices SPEC       tandem's devices: gpu, cpu, ... (DEVICES; default gpu)
  --threads T          PISA tput threads (THREADS; default nproc)
  --oracle-threads T   (ORACLE_THREADS; default nproc)
  --batch LIST         batch sizes (BATCH; default 256,1024,4096; sizes above
                       the set's count are dropped, the count taken instead)
  --batch-threads T    batch sender threads (BATCH_THREADS; default 2)
  --budget S           seconds of timed queries a tandem series may take
                       (BUDGET; default 10: a cut series shows its count)
  --warmup N           tandem's untimed queries a series (WARMUP; default 100)
  --limit S            wall-clock seconds for the whole run (LIMIT; default 0:
                       none). Every step runs under `timeout` of what is left
                       of its (size, log)'s share (the time left split evenly
                       over the pairs still to run); a cut step leaves what it
                       finished (PISA prints a line a spec, tandem's CSV is
                       written at the end: a cut tandem step leaves its row
                       empty) and the table says '-'. 0 = no limit.
  --pisa-bench FILE    pisa_bench.py (PISA_BENCH; default
                       ../shared/bench/pisa/pisa_bench.py)
  --pisa-site DIR      the unzipped pyterrier-pisa wheel (PISA_SITE; default
                       WORK/pisa-site, else /tmp/pisa-site)
  --pisa-wheel FILE|DIR  a pyterrier_pisa wheel, or a folder holding one for
                       this python (cpXY), unzipped into PISA_SITE when that
                       has no pyterrier_pisa/ yet (PISA_WHEEL)
  --series LIST        which series run, comma-separated: single (one query
                       at a time: tandem's lat10/lat1000, PISA lat and the floor),
                       batch (tandem's batches, PISA tput) (SERIES; default
                       single,batch). A series left out shows '-' in the table
  --prep-only          stop after the indexes (a 10M run in its own call)
  --commit REV         printed with the tables (COMMIT; default git's HEAD)
  -h, --help

Needs python3 with numpy (PYTHONPATH is passed on) and a pyterrier-pisa 0.4.6
wheel for that python: the GPU machine has 3.12 (.gl/wheels/); elsewhere
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.11 \
    --implementation cp --platform manylinux2014_x86_64 -d /tmp/pisa-wheels \
    pyterrier-pisa==0.4.6
On the GPU machine ../shared does not travel: copy pisa_bench.py, the logs
and the wheel into an ignored directory (.gl/) and point the options there.

Exit status: 1 if any tandem answer differed from the oracle's (or a tandem
step failed), 2 on bad usage or missing input, else 0.

Times. Measured on the 2-core development VM (PoCL, kernels cached), both
logs, --devices cpu: 20k documents, --nq 200 --tput-nq 400: 19 s; 200k
documents, --nq 300 --tput-nq 1000: 87 s (PISA lat's seven means summed: 6.6 ms
a terabyte05 query, 10.9 ms an msmarco one). Expected at 1M on the GPU
machine (16 cores + H100/H200), --nq 3000 --tput-nq 10000: gen + build ~25 s,
export + PISA prep ~20 s, the first tandem step's cold NVIDIA kernel build
~70 s (once a machine); a log: tandem ~20-30 s (oracle on 16 threads, 11
series), PISA tput ~5 s, PISA lat (NQ + 100 warm-up) x its seven means summed
(16.4 ms for terabyte05 at 1M, issue 29's figures: ~50 s; msmarco ~1.7x: ~85 s).
In all ~4.5-5 min: with the tree's build (~1.5 min) one 10-minute call, run
with --limit at what is left. 10M: gen + build ~230 s + export and prep (one
call, --prep-only); PISA ~10x slower, so one log a call, --nq 1000 --tput-nq
4000 (terabyte05 ~3 min, msmarco ~5 min; --limit guards it).
EOF
}

die() { echo "bench_pisa: $*" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
TANDEM_BIN=${TANDEM_BIN:-build/tandem}
WORK=${WORK:-/tmp/bench-pisa}
OUT=${OUT:-}
DOCS=${DOCS:-1000000}
QUERIES_DIR=${QUERIES_DIR:-$repo/../shared/data/queries}
LOGS=${LOGS:-}
VOCAB=${VOCAB:-}
NQ=${NQ:-3000}
TPUT_NQ=${TPUT_NQ:-10000}
DEVICES=${DEVICES:-gpu}
THREADS=${THREADS:-$(nproc)}
ORACLE_THREADS=${ORACLE_THREADS:-$(nproc)}
BATCH=${BATCH:-256,1024,4096}
BATCH_THREADS=${BATCH_THREADS:-2}
BUDGET=${BUDGET:-10}
WARMUP=${WARMUP:-100}
LIMIT=${LIMIT:-0}
PISA_BENCH=${PISA_BENCH:-$repo/../shared/bench/pisa/pisa_bench.py}
PISA_SITE=${PISA_SITE:-}
PISA_WHEEL=${PISA_WHEEL:-}
PREP_ONLY=${PREP_ONLY:-0}
SERIES=${SERIES:-single,batch}
COMMIT=${COMMIT:-}

while [ $# -gt 0 ]; do
    opt=$1
    case $opt in
    -h | --help) usage; exit 0 ;;
    --prep-only) PREP_ONLY=1; shift; continue ;;
    --*=*) set -- "${opt%%=*}" "${opt#*=}" "${@:2}"; continue ;;
    --tandem | --work | --out | --docs | --logs | --queries-dir | --vocab-from | --nq | --tput-nq | \
        --devices | --threads | --oracle-threads | --batch | --batch-threads | --budget | --warmup | \
        --limit | --pisa-bench | --pisa-site | --pisa-wheel | --commit | --series) ;;
    *) die "unknown option $opt (--help)" ;;
    esac
    [ $# -ge 2 ] || die "$opt: needs a value (--help)"
    v=$2
    case $opt in
    --tandem) TANDEM_BIN=$v ;;
    --work) WORK=$v ;;
    --out) OUT=$v ;;
    --docs) DOCS=$v ;;
    --logs) LOGS=$v ;;
    --queries-dir) QUERIES_DIR=$v ;;
    --vocab-from) VOCAB=$v ;;
    --nq) NQ=$v ;;
    --tput-nq) TPUT_NQ=$v ;;
    --devices) DEVICES=$v ;;
    --threads) THREADS=$v ;;
    --oracle-threads) ORACLE_THREADS=$v ;;
    --batch) BATCH=$v ;;
    --batch-threads) BATCH_THREADS=$v ;;
    --budget) BUDGET=$v ;;
    --warmup) WARMUP=$v ;;
    --limit) LIMIT=$v ;;
    --pisa-bench) PISA_BENCH=$v ;;
    --pisa-site) PISA_SITE=$v ;;
    --pisa-wheel) PISA_WHEEL=$v ;;
    --commit) COMMIT=$v ;;
    --series) SERIES=$v ;;
    esac
    shift 2
done

LOGS=${LOGS:-$QUERIES_DIR/terabyte05-efficiency.txt,$QUERIES_DIR/msmarco-passage-dev-subset.tsv}
IFS=, read -r -a logs <<<"$LOGS"
IFS=, read -r -a sizes <<<"$DOCS"
VOCAB=${VOCAB:-${logs[0]}}
OUT=${OUT:-$WORK}
for n in "$NQ" "$TPUT_NQ" "$THREADS" "$ORACLE_THREADS" "$BATCH_THREADS" "$BUDGET" "$WARMUP" "$LIMIT" "${sizes[@]}"; do
    [[ $n =~ ^[0-9]+$ ]] || die "not a number: '$n'"
done
single=0 batch=0
IFS=, read -r -a series <<<"$SERIES"
for x in "${series[@]}"; do
    case $x in single) single=1 ;; batch) batch=1 ;; *) die "--series: unknown series '$x'" ;; esac
done
[ $((single + batch)) -gt 0 ] || die "--series: none named"
[ -x "$TANDEM_BIN" ] || die "no tandem binary at $TANDEM_BIN (--tandem)"
[ -s "$VOCAB" ] || die "no vocabulary log $VOCAB (--vocab-from)"
if [ "$PREP_ONLY" = 0 ]; then
    for q in "${logs[@]}"; do [ -s "$q" ] || die "no query log $q (--logs, --queries-dir)"; done
fi
[ -s "$PISA_BENCH" ] || die "no pisa_bench.py at $PISA_BENCH (--pisa-bench)"
command -v python3 >/dev/null || die "no python3"
mkdir -p "$WORK/cache" "$OUT" || die "cannot make $WORK or $OUT"
TANDEM_BIN=$(cd "$(dirname "$TANDEM_BIN")" && pwd)/$(basename "$TANDEM_BIN")

# PISA's module: an unzipped wheel (pisa_bench.py reads PISA_SITE).
if [ -z "$PISA_SITE" ]; then
    if [ -n "$PISA_WHEEL" ] || [ ! -d /tmp/pisa-site/pyterrier_pisa ]; then
        PISA_SITE=$WORK/pisa-site
    else
        PISA_SITE=/tmp/pisa-site
    fi
fi
if [ ! -d "$PISA_SITE/pyterrier_pisa" ]; then
    whl=$PISA_WHEEL
    if [ -d "$whl" ]; then
        tag=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
        whl=$(find "$whl" -maxdepth 1 -name "pyterrier_pisa-*-$tag-*.whl" | head -1)
    fi
    [ -s "${whl:-/nonexistent}" ] || die "no PISA module in $PISA_SITE and no wheel for this python (--pisa-wheel; --help)"
    python3 -m zipfile -e "$whl" "$PISA_SITE" || die "cannot unzip $whl"
fi
export PISA_SITE
python3 -c 'import numpy' 2>/dev/null || die "python3 has no numpy (PYTHONPATH)"

exec 3>&1 # step()'s notes reach the terminal past its command's redirections
t0=$(date +%s)
now() { echo $(( $(date +%s) - t0 )); }
say() { echo "== $(now) s: $*"; }
# Seconds the next step may take: what is left of this pair's share.
share_end=0
left() {
    if [ "$LIMIT" = 0 ]; then echo 86400; else echo $(( share_end - $(date +%s) )); fi
}
# step NAME CMD...: CMD under the time left, or skipped when too little is.
step() {
    local name=$1 l
    shift
    l=$(left)
    if [ "$l" -lt 3 ]; then
        say "$name: skipped, the time limit is spent" >&3
        return 124
    fi
    timeout "$l" "$@"
    local rc=$?
    [ "$rc" != 124 ] || say "$name: cut at the time limit" >&3
    return $rc
}

if [ -z "$COMMIT" ]; then
    COMMIT=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
    [ "$COMMIT" = unknown ] || git -C "$repo" diff --quiet HEAD -- 2>/dev/null || COMMIT="$COMMIT+dirty"
fi
PY=$(mktemp -d)
trap 'rm -rf "$PY"' EXIT

# The query sets: the first N lines of a log with a term in PISA's lexicon,
# selected as pisa_bench.py's queries() selects them, written as they were.
cat >"$PY/filter.py" <<'PYEOF'
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))
import pisa_bench as B
src, n, d, out = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
lex = set(t.rstrip("\n") for t in open(os.path.join(d, "fwd.terms"), encoding="utf-8"))
seen = kept = 0
with open(out, "w", encoding="utf-8") as f:
    for line in open(src, encoding="utf-8", errors="replace"):
        line = line.rstrip("\r\n")
        if not line:
            continue
        seen += 1
        sep = "\t" if "\t" in line else ":"
        text = line.split(sep, 1)[1] if sep in line else line
        if any(t in lex for t in B.P.tokenize(text, "")):
            f.write(line + "\n")
            kept += 1
            if kept == n:
                break
print(kept, seen)
PYEOF

# The floor set and the table, from the raw outputs of one (size, log).
cat >"$PY/table.py" <<'PYEOF'
import csv, os, re, statistics, sys

BLOCK = 128
ROWS = [("ranked_and", "and", 10, "AND"), ("maxscore", "maxscore", 10, "MaxScore"),
        ("wand", "wand", 10, "WAND"), ("block_max_wand", "bmw", 10, "BMW"),
        ("ranked_or", "or", 10, "OR"), ("maxscore", "maxscore", 1000, "MaxScore"),
        ("block_max_wand", "bmw", 1000, "BMW")]


def rows(path):
    try:
        return list(csv.DictReader(open(path)))
    except OSError:
        return []


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def floor_rows(perq, algo="and"):
    return [r for r in rows(perq) if r["algorithm"] == algo and r["k"] == "10"
            and r["mode"] == "single" and r["threads"] == "1" and r["terms"] == "1"
            and int(r["len_max"]) < BLOCK]


def floor_set(run, qset, out):
    pos = sorted({int(r["query"]) for r in floor_rows(os.path.join(run, "t-lat10-perq.csv"))})
    lines = [l for l in open(qset, encoding="utf-8")]
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(lines[p] for p in pos)
    print(len(pos))


def pisa(path):
    lat, tput = {}, {}
    try:
        text = open(path).read()
    except OSError:
        return lat, tput
    for m in re.finditer(r"PISA\s+(\w+) k=(\d+)\s+n=(\d+) mean\s+([\d.]+) p50\s+([\d.]+) "
                         r"p90\s+([\d.]+) p99\s+([\d.]+)", text):
        lat[(m[1], int(m[2]))] = dict(n=int(m[3]), mean=float(m[4]), p50=float(m[5]),
                                      p99=float(m[7]))
    for m in re.finditer(r"PISA\s+(\w+) k=(\d+)\s+threads=(\d+)\s+(\d+) q/s \((\d+) queries", text):
        tput[(m[1], int(m[2]))] = dict(qps=float(m[4]), n=int(m[5]), threads=int(m[3]))
    return lat, tput


def us(x):
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 1000 else f"{x:.1f}"


def ratio(a, b):
    if not (a and b):
        return "-"
    return f"{a / b:.2f}" if a < b else f"{a / b:.1f}"


def table(run, meta):
    docs, log, commit = meta["docs"], meta["log"], meta["commit"]
    plat, _ = pisa(os.path.join(run, "pisa-lat.txt"))
    _, ptput = pisa(os.path.join(run, "pisa-tput.txt"))
    pfloor, _ = pisa(os.path.join(run, "pisa-floor.txt"))
    single = rows(os.path.join(run, "t-lat10.csv")) + rows(os.path.join(run, "t-lat1000.csv"))
    batch = rows(os.path.join(run, "t-tput10.csv")) + rows(os.path.join(run, "t-tput1000.csv"))
    perq = os.path.join(run, "t-lat10-perq.csv")
    devs = sorted({(int(r["device"]), r["device_name"]) for r in single + batch
                   if int(r["device"]) >= 0})
    md, out, wrong = [], [], 0
    for d, dname in devs or [(-1, "no tandem result")]:
        md.append(f"\n### {int(docs):,} documents, {log}: tandem on {dname} "
                  f"(`{meta['devices']}`), commit {commit}\n")
        md.append(meta["counts"] + "\n")
        md.append(f"| µs, top-k | n PISA / tandem | PISA 1 thread mean / p99 | tandem mean / p99 "
                  f"| × mean | × p99 | PISA {meta['threads']} threads q/s "
                  f"| tandem batch q/s (size) | × |")
        md.append("|---|---|---|---|---|---|---|---|---|")
        for pa, ta, k, label in ROWS:
            p = plat.get((pa, k), {})
            t = next((r for r in single if r["algorithm"] == ta and int(r["k"]) == k
                      and int(r["device"]) == d and r["mode"] == "single"
                      and r["threads"] == "1"), None)
            bs = [r for r in batch if r["algorithm"] == ta and int(r["k"]) == k
                  and int(r["device"]) == d and r["mode"] == "batch"]
            b = max(bs, key=lambda r: float(r["queries_per_s"]), default=None)
            pt = ptput.get((pa, k))
            bad = sum(int(r["mismatches"]) for r in ([t] if t else []) + bs)
            wrong += bad
            tm, t99 = (float(t["mean_us"]), float(t["p99_us"])) if t else (None, None)
            bq = float(b["queries_per_s"]) if b else None
            tput_cells = ["", "", ""]
            if pt or bs:
                tput_cells = [f"{pt['qps']:,.0f}" if pt else "-",
                              f"{bq:,.0f} ({b['batch']})" if b else "-",
                              ratio(bq, pt["qps"] if pt else None)]
            name = f"{label}@{k}" + (f" **{bad} WRONG**" if bad else "")
            md.append(f"| {name} | {p.get('n', '-')} / {t['queries'] if t else '-'} "
                      f"| {us(p.get('mean'))} / {us(p.get('p99'))} | {us(tm)} / {us(t99)} "
                      f"| {ratio(p.get('mean'), tm)} | {ratio(p.get('p99'), t99)} | "
                      + " | ".join(tput_cells) + " |")
            out.append([docs, log, dname, f"{label}@{k}", k, p.get("n", ""),
                        t["queries"] if t else "", p.get("mean", ""), p.get("p99", ""),
                        tm or "", t99 or "", meta["threads"], pt["qps"] if pt else "",
                        bq or "", b["batch"] if b else "", bad])
        fl = [float(r["latency_us"]) for r in floor_rows(perq) if int(r["device"]) == d]
        pf = pfloor.get(("ranked_and", 10), {})
        fm, f99 = (pct(fl, 50), pct(fl, 99)) if fl else (None, None)
        md.append(f"| floor: 1 term, < {BLOCK} postings, AND@10, **p50** / p99 "
                  f"| {pf.get('n', '-')} / {len(fl)} | {us(pf.get('p50'))} / {us(pf.get('p99'))} "
                  f"| {us(fm)} / {us(f99)} | {ratio(pf.get('p50'), fm)} "
                  f"| {ratio(pf.get('p99'), f99)} | | | |")
        out.append([docs, log, dname, "floor-p50", 10, pf.get("n", ""), len(fl),
                    pf.get("p50", ""), pf.get("p99", ""), fm or "", f99 or "", "", "", "", "", 0])
        per = []
        for ta in ("and", "maxscore", "wand", "bmw", "or"):
            xs = [float(r["latency_us"]) for r in floor_rows(perq, ta) if int(r["device"]) == d]
            if xs:
                per.append(f"{ta} {statistics.median(xs):.1f}")
        if per:
            md.append(f"\ntandem floor medians, µs, k = 10: {', '.join(per)}")
    text = "\n".join(md) + "\n"
    print(text)
    with open(os.path.join(meta["out"], "bench-pisa.md"), "a") as f:
        f.write(text)
    path = os.path.join(meta["out"], "bench-pisa.csv")
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["docs", "log", "tandem_device", "row", "k", "n_pisa", "n_tandem",
                        "pisa_mean_us", "pisa_p99_us", "tandem_mean_us", "tandem_p99_us",
                        "pisa_threads", "pisa_qps", "tandem_qps", "tandem_batch", "wrong",
                        "commit"])
        w.writerows(r + [meta["commit"]] for r in out)
    return wrong


if sys.argv[1] == "floor":
    floor_set(*sys.argv[2:5])
else:
    meta = dict(zip(("docs", "log", "devices", "threads", "commit", "out", "counts"),
                    sys.argv[3:10]))
    sys.exit(1 if table(sys.argv[2], meta) else 0)
PYEOF

# gen + build + export + PISA prep for one size, each skipped when done.
prepare() {
    local n=$1 idx=$WORK/c$1.idx pd=$WORK/pisa$1 stamp
    stamp="docs $n seed 1 vocab $(cksum <"$VOCAB") stemmer none stopwords none"
    if [ ! -s "$idx" ] || [ "$(cat "$idx.stamp" 2>/dev/null)" != "$stamp" ]; then
        rm -rf "$idx" "$idx.stamp" "$pd"
        say "gen + build $n documents"
        "$TANDEM_BIN" gen collection --docs "$n" --seed 1 --vocab-from "$VOCAB" --quiet \
            -o "$WORK/c$n.txt" || return 1
        "$TANDEM_BIN" build --quiet --stemmer none --stopwords none -o "$idx" "$WORK/c$n.txt" || return 1
        rm -f "$WORK/c$n.txt"
        echo "$stamp" >"$idx.stamp"
    fi
    if [ ! -s "$pd/idx/pisa_bench.conf" ]; then
        rm -rf "$pd"
        mkdir -p "$pd"
        say "export to PISA + prep"
        "$TANDEM_BIN" export --to pisa "$idx" -o "$pd/exp" || return 1
        python3 "$PISA_BENCH" prep "$pd/exp" "$pd/idx" >"$pd/prep.log" 2>&1 || { tail -5 "$pd/prep.log"; return 1; }
        grep '^pisa prep' "$pd/prep.log"
        rm -f "$pd"/exp.docs "$pd"/exp.freqs # hard links (or copies) in idx/
    fi
    "$TANDEM_BIN" stats "$idx" | head -2
}

# The batch sizes of BATCH that a set of $1 queries can fill, and $1 if any was cut.
batches() {
    local cnt=$1 out="" cut=0 b
    IFS=, read -r -a bs <<<"$BATCH"
    for b in "${bs[@]}"; do
        if [ "$b" -le "$cnt" ]; then out+=${out:+,}$b; else cut=1; fi
    done
    [ "$cut" = 0 ] || out+=${out:+,}$cnt
    echo "$out"
}

# tandem bench queries: NAME QUERYSET COUNT K ALGORITHMS [more options]
tandem_q() {
    local name=$1 qs=$2 cnt=$3 k=$4 algos=$5 idx=$WORK/c$N.idx
    shift 5
    step "tandem $name" "$TANDEM_BIN" bench queries "$idx" --queries "$qs" --limit "$cnt" -k "$k" \
        --algorithms "$algos" --devices "$DEVICES" --budget "$BUDGET" --warmup "$WARMUP" \
        --oracle-threads "$ORACLE_THREADS" --oracle-cache "$WORK/cache/$N-$lname-$name.bin" \
        --csv "$R/t-$name.csv" "$@" >"$R/t-$name.txt" 2>"$R/t-$name.err"
    local rc=$?
    grep -E 'ranked|every answer|differ|MISMATCH' "$R/t-$name.err" | grep -v '^MISMATCH' | sed "s/^/  tandem $name: /"
    [ "$rc" = 0 ] || [ "$rc" = 124 ] || { echo "  tandem $name: exit $rc"; tail -3 "$R/t-$name.err"; status=1; }
}

ranked() { sed -n 's/.*: \([0-9]*\) ranked, \([0-9]*\) without.*/\1 (\2 left out)/p' "$1" 2>/dev/null | head -1; }
pisa_n() { sed -n 's/.* n=\([0-9]*\) .*/\1/p' "$1" 2>/dev/null | sort -u | paste -sd' '; }
pisa_t() { sed -n 's/.*(\([0-9]*\) queries.*/\1/p' "$1" 2>/dev/null | sort -u | paste -sd' '; }

status=0
npairs=$(( ${#sizes[@]} * ${#logs[@]} ))
[ "$PREP_ONLY" = 0 ] || npairs=${#sizes[@]}
say "tandem $TANDEM_BIN ($COMMIT), devices $DEVICES; PISA $PISA_SITE; $(nproc) processors; limit ${LIMIT} s"
for N in "${sizes[@]}"; do
    share_end=$(( t0 + LIMIT ))
    prepare "$N" || { echo "bench_pisa: preparing $N documents failed"; exit 1; }
    say "$N documents ready"
    [ "$PREP_ONLY" = 0 ] || { npairs=$(( npairs - 1 )); continue; }
    for Q in "${logs[@]}"; do
        lname=$(basename "$Q"); lname=${lname%.*}
        R=$OUT/run-$N-$lname
        rm -rf "$R"; mkdir -p "$R"
        share_end=$(( $(date +%s) + (t0 + LIMIT - $(date +%s)) / npairs ))
        npairs=$(( npairs - 1 ))
        note=""
        [ "$LIMIT" = 0 ] || note=" (its share of the limit ends at +$(( share_end - t0 )) s)"
        say "$N documents, $lname$note"
        max=$(( NQ > TPUT_NQ ? NQ : TPUT_NQ ))
        read -r kept seen < <(python3 "$PY/filter.py" "$PISA_BENCH" "$Q" "$max" "$WORK/pisa$N/idx" "$R/all.txt")
        nq=$(( NQ < kept ? NQ : kept )); tq=$(( TPUT_NQ < kept ? TPUT_NQ : kept ))
        head -n "$nq" "$R/all.txt" >"$R/lat.txt"
        head -n "$tq" "$R/all.txt" >"$R/tput.txt"
        echo "  $lname: $kept of the first $seen queries have a term in the index: single set $nq, throughput set $tq"
        [ "$nq" -gt 0 ] || { echo "  no query with a term: skipped"; continue; }
        tb=$(batches "$tq")
        if [ "$single" = 1 ]; then
            tandem_q lat10 "$R/lat.txt" "$nq" 10 and,maxscore,wand,bmw,or --per-query "$R/t-lat10-perq.csv"
            tandem_q lat1000 "$R/lat.txt" "$nq" 1000 maxscore,bmw
        fi
        if [ "$batch" = 1 ]; then
            tandem_q tput10 "$R/tput.txt" "$tq" 10 and,maxscore,bmw --batch "$tb" --batch-threads "$BATCH_THREADS"
            tandem_q tput1000 "$R/tput.txt" "$tq" 1000 maxscore --batch "$tb" --batch-threads "$BATCH_THREADS"
        fi
        say "tandem done"
        [ "$batch" = 0 ] || step "PISA tput" python3 "$PISA_BENCH" tput "$WORK/pisa$N/idx" "$R/tput.txt" "$tq" "$THREADS" \
            ranked_and:10,maxscore:10,block_max_wand:10,maxscore:1000 >"$R/pisa-tput.txt" 2>"$R/pisa-tput.err"
        nf=0
        [ "$single" = 0 ] || nf=$(python3 "$PY/table.py" floor "$R" "$R/lat.txt" "$R/floor.txt")
        if [ "${nf:-0}" -gt 0 ]; then
            step "PISA floor" python3 "$PISA_BENCH" lat "$WORK/pisa$N/idx" "$R/floor.txt" "$nf" ranked_and:10 \
                >"$R/pisa-floor.txt" 2>"$R/pisa-floor.err"
        fi
        [ "$single" = 0 ] || step "PISA lat" python3 "$PISA_BENCH" lat "$WORK/pisa$N/idx" "$R/lat.txt" "$nq" \
            ranked_and:10,maxscore:10,wand:10,block_max_wand:10,ranked_or:10,maxscore:1000,block_max_wand:1000 \
            >"$R/pisa-lat.txt" 2>"$R/pisa-lat.err"
        say "PISA done"
        counts="Queries: the first $nq (single) and $tq (throughput) of $lname with a term in the index; PISA ran $(pisa_n "$R/pisa-lat.txt") / $(pisa_t "$R/pisa-tput.txt"); tandem ranked $(ranked "$R/t-lat10.err") / $(ranked "$R/t-tput10.err"); floor queries $nf. PISA: block_simdbp, BM25 1.2/0.75 (its idf), $(grep -so 'call overhead.*' "$R/pisa-lat.txt") included."
        r1=$(ranked "$R/t-lat10.err"); r2=$(ranked "$R/t-tput10.err")
        if { [ "$single" = 1 ] && [ "${r1%% *}" != "$nq" ]; } || { [ "$batch" = 1 ] && [ "${r2%% *}" != "$tq" ]; }; then
            counts+=" **COUNTS DIFFER** (or a tandem step did not finish): tandem ranked other than the set's count."
            echo "  counts differ: single $nq / tandem ${r1:-none}; throughput $tq / tandem ${r2:-none}"
        fi
        python3 "$PY/table.py" table "$R" "$N" "$lname" "$DEVICES" "$THREADS" "$COMMIT" "$OUT" "$counts" || status=1
    done
done
[ "$PREP_ONLY" = 1 ] || say "done (exit $status); tables in $OUT/bench-pisa.md and .csv"
exit $status
