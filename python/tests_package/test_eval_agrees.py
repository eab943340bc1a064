"""`tandem eval -m` equals ir_measures and pytrec_eval (trec_eval's code) on
Cranfield and CACM runs made as scripts/effectiveness.sh makes them: every
query's figure and the means, to four places. Cranfield's cranqrel grades g
are given to both as TREC levels 5 - g (-1: 0), as tandem eval reads them."""
import os

import ir_measures
import pytest
import pytrec_eval

from conftest import run_cli

# tandem eval's name, pytrec_eval's, ir_measures'
MEASURES = [("map", "map", "AP"), ("P_5", "P_5", "P@5"), ("P_10", "P_10", "P@10"),
            ("ndcg_cut_10", "ndcg_cut_10", "nDCG@10"), ("ndcg", "ndcg", "nDCG"),
            ("recall_100", "recall_100", "R@100"), ("recall_1000", "recall_1000", "R@1000"),
            ("recip_rank", "recip_rank", "RR"), ("Rprec", "Rprec", "Rprec"),
            ("map_cut_100", "map_cut_100", "AP@100")]
ASK = ["map", "P.5,10", "ndcg_cut.10", "ndcg", "recall_100", "recall.1000", "recip_rank",
       "Rprec", "map_cut.100"]


def read_qrels(path, cranfield):
    q = {}
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if cranfield:
            qid, doc, g = f[0], f[1], int(f[2])
            level = 0 if g == -1 else 5 - g
        else:
            qid, doc, level = f[0], f[2], int(float(f[3]))
        q.setdefault(qid, {})[doc] = level
    return q


def make_run(cli, data, tmp_path, name):
    if name == "cranfield":
        src, queries, opts = "cranfield/cran.all.1400", "cranfield/cran.qry", ["--by-position"]
    else:
        src, queries, opts = "cacm/cacm.all", "cacm/query.text", ["--docname-prefix", "CACM-"]
    idx, run = str(tmp_path / (name + ".idx")), str(tmp_path / (name + ".run"))
    run_cli(cli, "build", "--quiet", "--stemmer", "english", "-o", idx, os.path.join(data, src))
    run_cli(cli, "run", idx, "--queries", os.path.join(data, queries), "-o", run, "-k", "1000",
            *opts)
    return run


@pytest.mark.parametrize("name", ["cranfield", "cacm"])
def test_eval_agrees(name, cli, data, tmp_path):
    qrels_path = os.path.join(data, "cranfield/cranqrel" if name == "cranfield"
                              else "cacm/qrels.cacm.trec.txt")
    run_path = make_run(cli, data, tmp_path, name)
    args = [a for m in ASK for a in ("-m", m)]
    out = run_cli(cli, "eval", "-q", *args, qrels_path, run_path)
    ours = {}
    for line in out.splitlines():
        m, qid, v = line.split("\t")
        ours[(m, qid)] = v
    qrels = read_qrels(qrels_path, name == "cranfield")
    run = {}
    for line in open(run_path):
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    evaluated = sorted(set(run) & set(qrels))
    assert len(evaluated) == (225 if name == "cranfield" else 52)

    # pytrec_eval: every query's figure
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.5,10", "ndcg_cut.10", "ndcg",
                                                "recall.100,1000", "recip_rank", "Rprec",
                                                "map_cut.100"})
    per = ev.evaluate(run)
    assert sorted(per) == evaluated
    for ours_name, trec_name, _ in MEASURES:
        for qid in evaluated:
            assert ours[(ours_name, qid)] == "%.4f" % per[qid][trec_name], (ours_name, qid)

    # ir_measures: the means
    agg = ir_measures.calc_aggregate([ir_measures.parse_measure(m) for _, _, m in MEASURES],
                                     qrels, run)
    for ours_name, _, irm in MEASURES:
        assert ours[(ours_name, "all")] == "%.4f" % agg[ir_measures.parse_measure(irm)], \
            (ours_name, ours[(ours_name, "all")], agg)
