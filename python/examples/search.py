"""Search an index: python search.py INDEX "QUERY" [K]

Prints the top K (10) documents, best first, with their BM25 scores."""
import sys

import tandem


def main(index: str, query: str, k: int = 10) -> None:
    with tandem.Engine() as engine, engine.open(index) as s:
        for rank, (name, score) in enumerate(s.search(query, k=k), 1):
            print("%d\t%s\t%.4f" % (rank, name, score))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:4]))
