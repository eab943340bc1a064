"""The wheel as installed by run.sh: its own libtandem, linked to the OpenCL
ICD loader, the version of CMakeLists.txt's project(), TANDEM_LIBRARY still
overriding it, docstrings that help() shows, py.typed for type checkers."""
import importlib.metadata
import os
import pydoc
import re
import subprocess
import sys

import tandem


def test_bundled_library(engine, index):
    pkg = os.path.dirname(os.path.abspath(tandem.__file__))
    assert pkg.startswith(sys.prefix), pkg   # the installed package, not the checkout
    assert tandem.library_path == os.path.join(pkg, "libtandem.so")
    with engine.open(index) as s:
        assert s.search("river boats", k=3)


def test_links_the_icd_loader():
    out = subprocess.run(["ldd", tandem.library_path], capture_output=True, text=True,
                         check=True).stdout
    ocl = [line.split()[0] for line in out.splitlines() if "OpenCL" in line]
    assert ocl == ["libOpenCL.so.1"], out


def test_version_is_the_projects(source_dir):
    text = open(os.path.join(source_dir, "CMakeLists.txt")).read()
    want = re.search(r"project\(tandem\s+VERSION\s+([0-9.]+)", text).group(1)
    assert tandem.__version__ == want
    assert importlib.metadata.version("tandem") == want
    assert tandem.library_version() == want


def test_tandem_library_overrides():
    lib = os.environ["TANDEM_BUILD_LIBRARY"]
    env = dict(os.environ, TANDEM_LIBRARY=lib)
    p = subprocess.run([sys.executable, "-c", "import tandem; print(tandem.library_path)"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert os.path.samefile(p.stdout.strip(), lib)


def test_help_shows_docstrings():
    assert "The top k documents of `query`" in pydoc.render_doc(tandem.Searcher.search)
    assert "Builds an index at `path`" in pydoc.render_doc(tandem.build)
    import tandem.pyterrier as tp
    page = pydoc.render_doc(tp.TandemRetrieve)
    assert "query_toks" in page and "transform" in page


def test_py_typed_shipped():
    """PEP 561: the wheel marks the package as typed."""
    pkg = os.path.dirname(os.path.abspath(tandem.__file__))
    assert os.path.isfile(os.path.join(pkg, "py.typed"))
    files = [str(f) for f in importlib.metadata.files("tandem") or ()]
    assert "tandem/py.typed" in files, files
