"""Several Python threads searching one Searcher at once get the answers of a
single thread, and the GIL is released while the library works."""
import threading
import time

import pytest

import tandem
from conftest import QUERIES, write_collection


def test_threads_same_answers(searcher):
    queries = [q for _, q in QUERIES] * 6
    want = [searcher.search(q, k=15) for q in queries]
    errors, got = [], {}

    def worker(tid):
        try:
            got[tid] = [searcher.search(q, k=15) for q in queries]
            b = searcher.search_batch(queries[:8], k=15)
            names = b.docnames(searcher)
            got[tid, "b"] = [[(names[j], float(b.score[j])) for j in range(len(b.qid))
                              if b.qid[j] == i] for i in range(8)]
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for t in range(6):
        assert got[t] == want
        assert got[t, "b"] == want[:8]


def test_close_waits_for_searches(engine, index):
    s = engine.open(index)
    done = []

    def worker():
        for _ in range(20):
            try:
                s.search("river boats", k=10)
                done.append(1)
            except ValueError:   # closed: later calls refuse, none crashes
                return

    ts = [threading.Thread(target=worker) for _ in range(3)]
    for t in ts:
        t.start()
    time.sleep(0.01)
    s.close()
    for t in ts:
        t.join()
    assert s.closed


def test_gil_released_during_search(engine, tmp_path):
    """While one thread is inside a long search, another runs Python code: the
    largest pause the spinning thread sees is far shorter than the call."""
    src = write_collection(str(tmp_path / "c.txt"), docs=120000, seed=5)
    idx = tandem.build(src, str(tmp_path / "c.idx"), progress=False)
    query = " ".join(__import__("conftest").WORDS)
    with engine.open(idx) as s:
        s.search(query, k=1000)   # warm up (upload, kernels)
        durations, stop = [], threading.Event()

        def searching():
            for _ in range(5):
                t0 = time.perf_counter()
                s.search(query, k=1000, algorithm="or")
                durations.append(time.perf_counter() - t0)
            stop.set()

        t = threading.Thread(target=searching)
        last, gap, spins = time.perf_counter(), 0.0, 0
        t.start()
        while not stop.is_set():
            now = time.perf_counter()
            gap = max(gap, now - last)
            last = now
            spins += 1
        t.join()
    longest = max(durations)
    if longest < 0.05:
        pytest.skip("skipped: searches too fast here (%.1f ms) to tell" % (longest * 1e3))
    assert gap < longest / 2, "the spinning thread stalled %.1f ms of a %.1f ms call" % (
        gap * 1e3, longest * 1e3)


def test_close_refuses_new_searches_at_once(engine, index):
    """Threads that keep searching do not hold close() up: it refuses new
    searches at once (ValueError in those threads) and waits only for the
    ones in flight (issue 27, item 4)."""
    e = tandem.Engine()
    s = e.open(index)
    stop, refused, started = threading.Event(), [], threading.Barrier(5)

    def worker():
        started.wait()
        while not stop.is_set():
            try:
                s.search("river boats", k=10)
            except ValueError as ex:
                refused.append(str(ex))
                return

    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    started.wait()
    time.sleep(0.2)
    t0 = time.monotonic()
    e.close()
    took = time.monotonic() - t0
    stop.set()
    for t in ts:
        t.join()
    assert s.closed and e.closed
    assert len(refused) == 4 and all("closed" in r for r in refused), refused
    assert took < 1.0, "close took %.1f s while other threads searched" % took


def test_close_bounded_wait_then_last_call_frees(engine, index):
    """A call in flight longer than close's limit: close raises
    TandemTimeoutError after the limit, new calls fail at once, and the
    handles are freed when that call returns."""
    e = tandem.Engine()
    s = e.open(index)
    s._enter()   # a call in flight, held by the test
    t0 = time.monotonic()
    with pytest.raises(tandem.TandemTimeoutError, match="in flight"):
        e.close(timeout=0.2)
    assert 0.15 < time.monotonic() - t0 < 5.0
    with pytest.raises(ValueError, match="closed"):
        s.search("river boats")
    with pytest.raises(ValueError, match="closed"):
        e.open(index)
    assert s._index is not None   # not freed under the call
    s._leave()                    # the call returns: the searcher, then the engine, freed
    assert s._index is None
    s.close()                     # idempotent
    e.close()
