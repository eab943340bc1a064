"""Shared fixtures: a small collection written by the tests themselves, its
index built through tandem.build, one engine for the session, and the tandem
CLI (TANDEM_CLI, else `tandem` on PATH) to compare against.

The library comes from TANDEM_LIBRARY (ctest sets it to the build's
libtandem.so); the devices from TANDEM_DEVICES (PoCL in CI)."""
import os
import random
import shutil
import subprocess

import pytest

import tandem

# A vocabulary with inflections, so that stemming matters.
WORDS = ("river rivers boat boats boating sail sails sailing sailor house houses housing "
         "wind winds windy storm storms stormy harbor harbour light lights lighting "
         "island islands north south east west current currents tide tides deep "
         "water waters waterway fish fishing fisher net nets anchor anchored bay "
         "coast coastal rock rocks sand sandy wave waves map maps chart charted").split()


def write_collection(path, docs=400, seed=17):
    """docs documents 'doc<i><TAB>text', Zipf-like word choice; two identical
    documents so that ties (broken by the smaller docid) are exercised."""
    rng = random.Random(seed)
    weights = [1.0 / (r + 1) for r in range(len(WORDS))]
    with open(path, "w") as f:
        for i in range(docs):
            n = rng.randint(3, 40)
            text = " ".join(rng.choices(WORDS, weights, k=n))
            if i in (7, 8):
                text = "deep water anchor storm storm"
            f.write("doc%d\t%s\n" % (i, text))
    return path


QUERIES = [
    ("q1", "river boats"),
    ("q2", "stormy coastal waters"),
    ("q3", "deep water anchor storm"),
    ("q4", "sailing"),
    ("q5", "fish nets in the bay"),
    ("q6", "nothinglikethis"),
    ("q7", "north south east west current tide"),
    ("q8", "light house harbour"),
]


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("tandem-py")


@pytest.fixture(scope="session")
def collection(workdir):
    return write_collection(str(workdir / "docs.txt"))


@pytest.fixture(scope="session")
def index(workdir, collection):
    return tandem.build([collection], str(workdir / "docs.idx"), threads=2, progress=False)


@pytest.fixture(scope="session")
def engine():
    with tandem.Engine() as e:
        yield e


@pytest.fixture(scope="session")
def searcher(engine, index):
    with engine.open(index) as s:
        yield s


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("TANDEM_CLI") or shutil.which("tandem")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("skipped: no tandem CLI (set TANDEM_CLI to the built binary)")
    return path


def run_cli(cli, *args):
    p = subprocess.run([cli, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, "tandem %s failed: %s" % (" ".join(args), p.stderr)
    return p.stdout


@pytest.fixture(scope="session")
def shared_data():
    d = os.environ.get("TANDEM_TEST_DATA") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "data")
    if not os.path.isdir(d):
        pytest.skip("skipped: no ../shared/data (TANDEM_TEST_DATA)")
    return d
