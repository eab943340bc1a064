"""Search a collection split into shards, in one process and across MPI ranks:
python shards.py PREFIX QUERIES [RANKS]

PREFIX: the shard files PREFIX.0 .. PREFIX.<N-1> that `tandem shard INDEX
--shards N -o PREFIX` wrote. QUERIES: "qid:text" or "qid<TAB>text" lines.

1. In this process: Engine.open_shards(PREFIX) opens every shard as one
   index, spread over this machine's devices; each query runs on all shards
   and their top k merge into the unsharded index's answer, bit for bit.
   Prints each query's top 3.
2. Past one machine (RANKS given): the same shards searched by RANKS MPI
   processes through the tandem-mpi program (docs/MPI.md), which mpirun
   places on the hosts of its hostfile; shard i is opened by rank i % RANKS.
   This runs `mpirun -np RANKS tandem-mpi run PREFIX --queries QUERIES -o -`
   (tandem-mpi from $TANDEM_MPI or PATH), reads its TREC run and checks it
   holds the same documents, in the same order, as step 1. As root, Open MPI
   wants OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 set.

Python users with mpi4py can instead open, on each rank, only that rank's
shard files with Engine.open(path) (a shard scores with the whole
collection's statistics), search_batch there, gather (score, docid, name)
on rank 0 and keep the best k by score descending, docid ascending; but
and_or must then be decided on the whole (docs/MPI.md, "The protocol"):
tandem-mpi does all of that, checked."""
import os
import shutil
import subprocess
import sys
from typing import Dict, List, Tuple

import tandem

K = 10


def read_queries(path: str) -> List[Tuple[str, str]]:
    out = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            sep = "\t" if "\t" in line else ":"
            if sep in line:
                qid, text = line.split(sep, 1)
                out.append((qid.strip(), text.strip()))
    return out


def in_process(prefix: str, queries: List[Tuple[str, str]]) -> Dict[str, List[str]]:
    with tandem.Engine() as engine, engine.open_shards(prefix) as s:
        print("%s: %d documents, on %d device(s)"
              % (prefix, s.stats["documents"], len(engine.devices)))
        tops = {}
        for qid, text in queries:
            hits = s.search(text, k=K)
            tops[qid] = [name for name, _ in hits]
            print("%s\t%s" % (qid, "  ".join("%s %.4f" % h for h in hits[:3]) or "-"))
        return tops


def over_mpi(prefix: str, queries_path: str, ranks: int) -> Dict[str, List[str]]:
    prog = os.environ.get("TANDEM_MPI") or shutil.which("tandem-mpi")
    if not prog:
        sys.exit("tandem-mpi not found (set TANDEM_MPI): it is built where CMake finds MPI")
    cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), prog, "run", prefix,
           "--queries", queries_path, "-k", str(K), "-o", "-"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode:
        sys.exit("tandem-mpi failed (%d): %s" % (p.returncode, p.stderr[-2000:]))
    tops: Dict[str, List[str]] = {}
    for line in p.stdout.splitlines():   # qid Q0 docno rank score tag
        qid, _, docno = line.split()[:3]
        tops.setdefault(qid, []).append(docno)
    return tops


def main(prefix: str, queries_path: str, ranks: int = 0) -> None:
    queries = read_queries(queries_path)
    local = in_process(prefix, queries)
    if ranks:
        remote = over_mpi(prefix, queries_path, ranks)
        same = all(remote.get(qid, []) == local[qid] for qid, _ in queries)
        print("%d MPI ranks: %s" % (ranks, "the same documents as in one process" if same
                                    else "DIFFERENT documents"))
        sys.exit(0 if same else 1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:4]))
