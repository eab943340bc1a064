"""Fixtures for the installed package's tests (run.sh): a small collection
and its index, one engine, the CLI (TANDEM_CLI) and the repository
(TANDEM_SOURCE_DIR) the wheel was built from."""
import os
import random
import subprocess

import pytest

import tandem

WORDS = ("river rivers boat boats sail sailing house houses wind windy storm stormy "
         "harbor light island north south current tide deep water fish net anchor bay "
         "coast rock sand wave map chart").split()


@pytest.fixture(scope="session")
def source_dir():
    return os.environ["TANDEM_SOURCE_DIR"]


@pytest.fixture(scope="session")
def cli():
    return os.environ["TANDEM_CLI"]


def run_cli(cli, *args):
    p = subprocess.run([cli, *args], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, "tandem %s: %s" % (" ".join(args), p.stderr)
    return p.stdout


@pytest.fixture(scope="session")
def docs():
    """300 documents as PyTerrier gives them: {"docno", "text"}."""
    rng = random.Random(5)
    weights = [1.0 / (r + 1) for r in range(len(WORDS))]
    return [{"docno": "d%d" % i, "text": " ".join(rng.choices(WORDS, weights, k=rng.randint(3, 30)))}
            for i in range(300)]


@pytest.fixture(scope="session")
def index(tmp_path_factory, docs):
    path = str(tmp_path_factory.mktemp("idx") / "docs.idx")
    with open(path + ".txt", "w") as f:
        f.writelines("%s\t%s\n" % (d["docno"], d["text"]) for d in docs)
    return tandem.build(path + ".txt", path, threads=1, progress=False)


@pytest.fixture(scope="session")
def engine():
    with tandem.Engine() as e:
        yield e


@pytest.fixture(scope="session")
def data():
    d = os.environ.get("TANDEM_TEST_DATA", "")
    if not os.path.isdir(os.path.join(d, "cranfield")) or not os.path.isdir(os.path.join(d, "cacm")):
        pytest.skip("skipped: no Cranfield/CACM in %r (TANDEM_TEST_DATA)" % d)
    return d
