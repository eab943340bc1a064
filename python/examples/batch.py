"""Many queries at once: python batch.py INDEX QUERIES [K]

QUERIES: one query a line. search_batch sends them to the devices together
(the same answers as one search() each, in fewer launches) and returns numpy
arrays; prints each query's best document."""
import sys

import numpy as np

import tandem


def main(index: str, queries: str, k: int = 10) -> None:
    qs = [line.strip() for line in open(queries) if line.strip()]
    with tandem.Engine() as engine, engine.open(index) as s:
        res = s.search_batch(qs, k=k)
        names = res.docnames(s)
        for i, q in enumerate(qs):
            rows = np.flatnonzero(res.qid == i)
            best = "%s %.4f" % (names[rows[0]], res.score[rows[0]]) if len(rows) else "-"
            print("%s\t%d hits\t%s" % (q, len(rows), best))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:4]))
