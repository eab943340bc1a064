"""Retrieve and evaluate with PyTerrier: python run_and_evaluate.py INDEX TOPICS QRELS [RUN]

TOPICS: "qid<TAB>query" lines; QRELS: TREC qrels (qid 0 docno rel). Needs
python-terrier (pip install python-terrier; no Java is started). Prints
pt.Experiment's table and writes the run (TREC format) to RUN if given."""
import sys
from typing import Optional

import pandas as pd
import pyterrier as pt

from tandem.pyterrier import TandemIndex


def main(index: str, topics: str, qrels: str, run: Optional[str] = None) -> None:
    t = pd.read_csv(topics, sep="\t", names=["qid", "query"], dtype=str)
    q = pt.io.read_qrels(qrels)
    bm25 = TandemIndex(index).retriever(k=1000)
    print(pt.Experiment([bm25], t, q, eval_metrics=["map", "P.10", "ndcg_cut.10"],
                        names=["tandem BM25"]).to_string())
    if run:
        pt.io.write_results(bm25.transform(t), run, format="trec")


if __name__ == "__main__":
    main(*sys.argv[1:5])
