#!/usr/bin/env python3
"""The slowest tenth of the queries, one run against another (issue 31 item 3).

Usage: slowest_tenth.py BASE.csv OTHER.csv [FRACTION]

BASE.csv and OTHER.csv are `tandem bench queries --per-query` files of the
same queries (the same --queries and --limit): BASE the one-GPU run, OTHER
the split handle's (TANDEM_PARTITION=split, docs/PARTITION.md). For each
single-query series (algorithm, k, threads) of BASE's first device row,
the FRACTION (0.1) of its queries slowest in BASE are taken, and their mean
and p50 latency in BASE and in OTHER's series of the same algorithm, k and
threads are printed, with the change, how many of them OTHER split
(partitions > 0), and the same for every query. Rows of the oracle
(device -1) and of batch calls are left out."""
import csv
import statistics
import sys


def series(path):
    """{(algorithm, k, threads): {query: (latency_us, partitions, len_sum)}},
    single-query rows of the first device the file names (a spread series'
    device is the device count: one per file)."""
    out, device = {}, None
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if int(r["device"]) < 0 or r["mode"] != "single":
                continue
            if device is None:
                device = r["device"]
            if r["device"] != device:
                continue
            key = (r["algorithm"], int(r["k"]), int(r["threads"]))
            out.setdefault(key, {})[int(r["query"])] = (
                float(r["latency_us"]), int(r.get("partitions") or 0), int(r["len_sum"]))
    return out


def row(name, base, other, qs):
    b = [base[q][0] for q in qs]
    o = [other[q][0] for q in qs]
    split = sum(1 for q in qs if other[q][1] > 0)
    mb, mo = statistics.mean(b), statistics.mean(o)
    print("  %-14s %5d queries  mean %10.1f -> %10.1f us (%+6.1f %%)  p50 %10.1f -> %10.1f us"
          "  split %d" % (name, len(qs), mb, mo, 100.0 * (mo - mb) / mb, statistics.median(b),
                          statistics.median(o), split))


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    frac = float(sys.argv[3]) if len(sys.argv) == 4 else 0.1
    base, other = series(sys.argv[1]), series(sys.argv[2])
    for key in sorted(base):
        if key not in other:
            print("%s k %d threads %d: not in %s" % (key + (sys.argv[2],)))
            continue
        qs = sorted(set(base[key]) & set(other[key]))
        if not qs:
            continue
        slow = sorted(qs, key=lambda q: base[key][q][0], reverse=True)
        slow = slow[:max(1, int(round(len(slow) * frac)))]
        print("%s k %d threads %d:" % key)
        row("slowest %g" % frac, base[key], other[key], slow)
        row("all", base[key], other[key], qs)


if __name__ == "__main__":
    main()
