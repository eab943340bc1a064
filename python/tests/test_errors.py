"""Bad input raises the right exception, carrying tandem's own message."""
import pytest

import tandem


def test_open_errors(engine, tmp_path):
    with pytest.raises(tandem.NotFoundError) as e:
        engine.open(str(tmp_path / "missing.idx"))
    assert "missing.idx" in str(e.value) and e.value.status == -11
    assert isinstance(e.value, LookupError) and isinstance(e.value, tandem.TandemError)
    bad = tmp_path / "bad.idx"
    bad.write_bytes(b"this is not an index, just some bytes" * 10)
    with pytest.raises(tandem.FormatError) as e:
        engine.open(str(bad))
    assert "bad.idx" in str(e.value)


def test_engine_errors():
    with pytest.raises(tandem.NoDeviceError) as e:
        tandem.Engine(devices="no-such-device-anywhere")
    assert "no-such-device-anywhere" in str(e.value)


def test_build_errors(collection, tmp_path):
    with pytest.raises(tandem.NotFoundError) as e:
        tandem.build(str(tmp_path / "nope.txt"), str(tmp_path / "a.idx"), progress=False)
    assert "nope.txt" in str(e.value)
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"d1\thello\x00world\n")
    with pytest.raises(tandem.FormatError) as e:
        tandem.build(str(binary), str(tmp_path / "b.idx"), progress=False)
    assert "bin.txt" in str(e.value)
    with pytest.raises(tandem.InvalidArgumentError) as e:
        tandem.build(collection, str(tmp_path / "c.idx"), codec="nosuchcodec", progress=False)
    assert "nosuchcodec" in str(e.value)
    with pytest.raises(tandem.TandemError):
        tandem.build(collection, str(tmp_path / "d.idx"), stemmer="klingon", progress=False)
    with pytest.raises(tandem.InvalidArgumentError):
        tandem.build(collection, str(tmp_path / "e.idx"), k1=-1, progress=False)
    with pytest.raises(tandem.InvalidArgumentError):
        tandem.build(collection, str(tmp_path / "f.idx"), format="pdf", progress=False)
    with pytest.raises(tandem.InvalidArgumentError):
        tandem.build(collection, str(tmp_path / "g.idx"), threads=-2, progress=False)
    with pytest.raises(TypeError):
        tandem.build([3], str(tmp_path / "h.idx"), progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin.txt"]


def test_import_errors(tmp_path):
    junk = tmp_path / "junk.ciff"
    junk.write_bytes(b"\xff" * 64)
    with pytest.raises(tandem.FormatError) as e:
        tandem.import_ciff(str(junk), str(tmp_path / "j.idx"))
    assert "junk.ciff" in str(e.value)
    with pytest.raises(tandem.NotFoundError):
        tandem.import_pisa(str(tmp_path / "none"), str(tmp_path / "p.idx"))


def test_search_errors(searcher):
    with pytest.raises(tandem.InvalidArgumentError) as e:
        searcher.search("river", k=0)
    assert e.value.message and e.value.status == -1
    with pytest.raises(tandem.InvalidArgumentError):
        searcher.search("river", k=10001)
    with pytest.raises(tandem.InvalidArgumentError):
        searcher.search("river", k=-1)
    with pytest.raises(tandem.InvalidArgumentError) as e:
        searcher.search("river", algorithm="quantum")
    assert "quantum" in str(e.value)
    with pytest.raises(tandem.InvalidArgumentError):
        searcher.search("river", scoring="tfidf")
    with pytest.raises(tandem.InvalidArgumentError):
        searcher.search("river", b=1.5)
    with pytest.raises(tandem.InvalidArgumentError):
        searcher.search("river", k1=float("nan"))
    with pytest.raises(tandem.InvalidArgumentError):
        searcher.search({"river": -1.0})


def test_search_bounds_and_nul(searcher):
    """Issue 27 item 5: a NUL in a term or text is refused, not cut there
    ('river\\0x' searched as 'river'); k1 and weights that would make every
    score inf or count as zero are refused by the library's checks."""
    for q in ({"river\0x": 1.0}, ["river\0x"], "river\0x", b"river\0x"):
        with pytest.raises(tandem.InvalidArgumentError) as e:
            searcher.search(q)
        assert "NUL" in str(e.value)
    for k1 in (1e308, 101.0, float("inf"), -0.5):
        with pytest.raises(tandem.InvalidArgumentError) as e:
            searcher.search("river", k1=k1)
        assert "k1" in str(e.value)
    with pytest.raises(tandem.InvalidArgumentError):
        searcher.search_batch(["river"], k1=1e308)
    assert searcher.search("river", k1=100.0)  # the bound itself is fine
    for w in (3e38, 1e10, 1e-39, 1e-10, float("inf")):
        with pytest.raises(tandem.InvalidArgumentError) as e:
            searcher.search({"river": w})
        assert "weight" in str(e.value)
    for scoring in ("bm25", "impact"):
        hits = searcher.search({"river": 1e9, "boat": 1e-9}, scoring=scoring)
        assert hits and all(0 < s < float("inf") for _, s in hits)
    with pytest.raises(tandem.InvalidArgumentError):
        searcher.search("river", device=99)
    from tandem import _lib
    with pytest.raises(tandem.InvalidArgumentError if _lib.HAVE_POLICY
                       else tandem.UnsupportedError) as e:
        searcher.search("river", policy="telepathy")
    assert "telepathy" in str(e.value)
    with pytest.raises(tandem.LimitError):
        searcher.search(["t%d" % i for i in range(2000)])
    with pytest.raises(tandem.LimitError):
        searcher.search(" ".join("w%d" % i for i in range(2000)))
    with pytest.raises(TypeError):
        searcher.search(42)
    with pytest.raises(TypeError):
        searcher.search({"river": "heavy"})
    with pytest.raises(TypeError):
        searcher.search("river", k="10")
    with pytest.raises(tandem.NotFoundError):
        searcher.docname(10**6)


@pytest.mark.parametrize("have_batch", [True, False])
def test_batch_error_names_query(searcher, have_batch, monkeypatch):
    from tandem import _lib
    if have_batch and not _lib.HAVE_BATCH:
        pytest.skip("skipped: this libtandem has no tdm_search_batch")
    monkeypatch.setattr(_lib, "HAVE_BATCH", have_batch)
    with pytest.raises(tandem.LimitError) as e:
        searcher.search_batch(["river", ["t%d" % i for i in range(2000)], "boat"])
    assert "query 1" in str(e.value)
    with pytest.raises(tandem.InvalidArgumentError):
        searcher.search_batch(["river"], k=0)


def test_close_and_context_managers(index):
    with tandem.Engine() as e:
        s = e.open(index)
        with e.open(index) as s2:
            assert s2.search("river", k=1)
        assert s2.closed
        with pytest.raises(ValueError, match="closed"):
            s2.search("river")
        s2.close()   # idempotent
        assert not s.closed
    assert e.closed and s.closed   # closing the engine closed its searchers
    with pytest.raises(ValueError):
        s.search_batch(["river"])
    with pytest.raises(ValueError):
        e.open(index)


def test_searcher_dropped_without_close(index):
    import gc
    import weakref
    with tandem.Engine() as e:
        s = e.open(index)
        ref = weakref.ref(s)
        del s
        gc.collect()
        assert ref() is None   # the engine does not keep it alive
        assert e.open(index).search("river", k=1)
