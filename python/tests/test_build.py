"""tandem.build, import_ciff and import_pisa: the same index as the CLI's,
progress reported, KeyboardInterrupt cancelling with nothing left behind."""
import _thread
import os
import subprocess
import sys
import time

import pytest

import tandem
from conftest import QUERIES, run_cli, write_collection


def test_build_same_file_as_cli(collection, index, cli, tmp_path):
    out = str(tmp_path / "cli.idx")
    run_cli(cli, "build", "--threads", "1", "-o", out, collection)
    assert open(out, "rb").read() == open(index, "rb").read()


def test_build_options(collection, tmp_path, engine):
    stop = tmp_path / "stop.txt"
    stop.write_text("the\nwater\n")
    path = tandem.build(collection, tmp_path / "o.idx", stemmer="none", codec="pef",
                        threads=1, stopwords=str(stop), memory_mb=8, progress=False)
    assert path == tmp_path / "o.idx"
    with engine.open(path) as s:
        st = s.stats
        assert (st["stemmer"], st["codec"], st["stopwords"]) == ("none", "pef", 2)
        assert s.normalize("sailing") == "sailing" and s.normalize("water") is None


def test_progress_callable_and_bar(collection, tmp_path, capsys):
    seen = []
    tandem.build(collection, str(tmp_path / "p.idx"), progress=seen.append)
    assert seen and seen[-1].phase == 2 and seen[-1].documents == 400
    tandem.build(collection, str(tmp_path / "q.idx"), progress=True)
    err = capsys.readouterr().err
    assert "tandem build: " in err and "done: 400 docs" in err
    tandem.build(collection, str(tmp_path / "r.idx"), progress=False)
    assert capsys.readouterr().err == ""


def test_keyboard_interrupt_cancels(tmp_path):
    src = write_collection(str(tmp_path / "big.txt"), docs=30000, seed=3)
    out = tmp_path / "sub" / "c.idx"
    out.parent.mkdir()
    calls = []

    def progress(p):
        calls.append(p.phase)
        if len(calls) == 1:
            _thread.interrupt_main()   # as Ctrl-C would
            time.sleep(0.3)            # the main thread sees it while C waits

    with pytest.raises(KeyboardInterrupt):
        tandem.build(src, str(out), threads=1, memory_mb=4, progress=progress)
    assert calls
    assert os.listdir(out.parent) == []   # no index, no run file, no temporary


def test_progress_exception_cancels(collection, tmp_path):
    def progress(p):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        tandem.build(collection, str(tmp_path / "x.idx"), progress=progress)
    assert not (tmp_path / "x.idx").exists()


def _same_results(engine, a, b, as_terms=False):
    with engine.open(a) as sa, engine.open(b) as sb:
        for _, q in QUERIES:
            want = sa.search(q, k=20)
            if as_terms:   # b's own analyzer aside: give it a's terms
                q = [t for t in map(sa.normalize, q.split()) if t]
            assert sb.search(q, k=20) == want


def test_import_ciff_and_pisa(engine, index, cli, tmp_path):
    ciff = str(tmp_path / "x.ciff")
    run_cli(cli, "export", "--to", "ciff", index, "-o", ciff)
    seen = []
    got = tandem.import_ciff(ciff, str(tmp_path / "c.idx"), progress=seen.append)
    assert seen and seen[-1].lists_done == seen[-1].lists_total
    _same_results(engine, index, got, as_terms=True)
    run_cli(cli, "import", "--from", "ciff", ciff, "-o", str(tmp_path / "cli.idx"))
    assert open(got, "rb").read() == open(tmp_path / "cli.idx", "rb").read()
    base = str(tmp_path / "pisa")
    run_cli(cli, "export", "--to", "pisa", index, "-o", base)
    _same_results(engine, index, tandem.import_pisa(base, str(tmp_path / "p.idx"),
                                                   codec="vbyte128"), as_terms=True)


def _analyzer(engine, path):
    with engine.open(path) as s:
        return s.stats["stemmer"], s.stats["stopwords"], s.normalize("sailing")


def test_import_analyzer(engine, index, cli, tmp_path):
    """stemmer= and stopwords= as `tandem import --stemmer/--stopwords`: over
    what the input carries (the export's), for an input that carries none,
    the same file as the CLI's; bad values refused, nothing left behind."""
    base = str(tmp_path / "p")
    run_cli(cli, "export", "--to", "pisa", index, "-o", base)
    ciff = str(tmp_path / "x.ciff")
    run_cli(cli, "export", "--to", "ciff", index, "-o", ciff)
    english = ("english", 33, "sail")   # tandem.build's defaults
    # carried by the export (BASE.analyzer, the CIFF description)
    assert _analyzer(engine, tandem.import_pisa(base, str(tmp_path / "a.idx"))) == english
    assert _analyzer(engine, tandem.import_ciff(ciff, str(tmp_path / "b.idx"))) == english
    # set over what is carried
    none = tandem.import_ciff(ciff, str(tmp_path / "c.idx"), stemmer="none", stopwords="none")
    assert _analyzer(engine, none) == ("none", 0, "sailing")
    stop = tmp_path / "stop.txt"
    stop.write_text("river\nboats\n")
    got = tandem.import_pisa(base, str(tmp_path / "d.idx"), stopwords=stop)
    assert _analyzer(engine, got)[:2] == ("english", 2)
    # an input without an analyzer: unknown, unless given
    open(base + ".analyzer", "w").close()
    assert _analyzer(engine, tandem.import_pisa(base, str(tmp_path / "e.idx")))[0] == "unknown"
    got = tandem.import_pisa(base, str(tmp_path / "f.idx"), stemmer="english",
                             stopwords="lucene", progress=False)
    assert _analyzer(engine, got) == english
    _same_results(engine, index, got)   # query text, analyzed as the original's
    run_cli(cli, "import", "--from", "pisa", base, "--stemmer", "english", "--stopwords",
            "lucene", "-o", str(tmp_path / "cli.idx"))
    assert open(got, "rb").read() == open(tmp_path / "cli.idx", "rb").read()
    # refused: nothing written
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(tandem.TandemError, match="klingon"):
        tandem.import_pisa(base, str(tmp_path / "bad.idx"), stemmer="klingon")
    with pytest.raises(tandem.TandemIOError):
        tandem.import_ciff(ciff, str(tmp_path / "bad.idx"), stopwords=str(tmp_path / "none"))
    with pytest.raises(tandem.InvalidArgumentError, match="NUL"):
        tandem.import_ciff(ciff, str(tmp_path / "bad.idx"), stemmer="english\0x")
    with pytest.raises(TypeError):
        tandem.import_ciff(ciff, str(tmp_path / "bad.idx"), stemmer=3)
    assert sorted(os.listdir(tmp_path)) == before


def test_import_toy_ciff(engine, shared_data, tmp_path):
    toy = os.path.join(shared_data, "ciff", "toy-complete-20200309.ciff")
    if not os.path.exists(toy):
        pytest.skip("skipped: no toy CIFF in ../shared/data")
    with engine.open(tandem.import_ciff(toy, str(tmp_path / "toy.idx"))) as s:
        assert s.stats["documents"] == 3
        assert sorted(s.docnames(range(3))) == ["DOC222", "TREC_DOC_1", "WSJ_1"]


def test_ctrl_c_on_a_terminal(tmp_path):
    """A real SIGINT to a Python process building on a terminal: the bar was
    shown, the process ends with KeyboardInterrupt, nothing is left."""
    import pty
    import signal
    import select
    src = write_collection(str(tmp_path / "big.txt"), docs=150000, seed=9)
    out = tmp_path / "out"
    out.mkdir()
    code = ("import sys, tandem; tandem.build(sys.argv[1], sys.argv[2], threads=1, "
            "memory_mb=4)")
    try:
        master, slave = pty.openpty()
    except OSError as e:
        pytest.skip("skipped: no pseudo-terminal here (%s)" % e)
    env = dict(os.environ, TANDEM_LIBRARY=tandem.library_path,
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(tandem.__file__))))
    p = subprocess.Popen([sys.executable, "-c", code, src, str(out / "x.idx")], env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave,
                         cwd=str(tmp_path))
    os.close(slave)
    seen, sent = b"", False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        if not sent and b"tandem build: " in seen:
            p.send_signal(signal.SIGINT)
            sent = True
        if p.poll() is not None and not r:
            break
    p.wait(timeout=60)
    os.close(master)
    assert sent, "no progress bar on the terminal: %r" % seen[-300:]
    assert p.returncode != 0 and b"KeyboardInterrupt" in seen, seen[-500:]
    assert os.listdir(out) == []
