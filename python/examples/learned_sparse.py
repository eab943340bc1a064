"""Learned sparse retrieval (SPLADE, uniCOIL, ...): python learned_sparse.py INDEX

Documents come as {"docno", "toks"} with toks a dict term -> integer impact
(what a learned sparse encoder gives, quantized); queries as query_toks dicts
term -> weight. Scores are sums of query weight x document impact
(scoring="impact"). The documents here are made up; feed an encoder's output
the same way. Needs python-terrier."""
import sys

import pandas as pd

from tandem.pyterrier import TandemIndexer, TandemRetrieve

DOCS = [
    {"docno": "athena", "toks": {"athena": 9, "goddess": 6, "wisdom": 7, "greek": 4}},
    {"docno": "poseidon", "toks": {"poseidon": 9, "god": 6, "sea": 7, "greek": 4}},
    {"docno": "minerva", "toks": {"minerva": 9, "goddess": 6, "wisdom": 6, "roman": 4}},
]


def main(index: str) -> None:
    ix = TandemIndexer(index, overwrite=True).index(DOCS)
    topics = pd.DataFrame({"qid": ["1"], "query_toks": [{"goddess": 1.5, "wisdom": 2.0,
                                                         "greek": 0.5}]})
    res = TandemRetrieve(ix, scoring="impact", k=10).transform(topics)
    print(res[["qid", "docno", "score", "rank"]].to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1])
