"""The package builds and installs offline from the checkout (Debian's
setuptools, no index) into a virtual environment that sees Debian's numpy,
records the library it was built against, and searches from there."""
import os
import shutil
import subprocess
import sys

import pytest

import tandem

PKG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def test_offline_pip_install(tmp_path, index):
    try:
        import ensurepip  # noqa: F401  (python3-venv)
    except ImportError:
        pytest.skip("skipped: no venv/ensurepip (apt-get install python3-venv)")
    src = tmp_path / "src"
    shutil.copytree(PKG, src, ignore=shutil.ignore_patterns(
        "tests", "__pycache__", "build", "*.egg-info", "_build_config.py"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=300)
    py = str(venv / "bin" / "python")
    env = dict(os.environ, TANDEM_LIBRARY=tandem.library_path, PIP_NO_INPUT="1")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation",
                        "--no-index", "--no-deps", str(src)], env=env, capture_output=True,
                       text=True, timeout=600, cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    env.pop("TANDEM_LIBRARY")   # the path recorded at build time is used
    code = ("import tandem, sys; assert tandem.__file__.startswith(sys.prefix), tandem.__file__;"
            "print(tandem.library_path);"
            "e = tandem.Engine(); s = e.open(sys.argv[1]); print(s.search('river', k=1)[0][0])")
    p = subprocess.run([py, "-c", code, index], env=env, capture_output=True, text=True,
                       timeout=300, cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    lib, top = p.stdout.split("\n")[:2]
    assert os.path.samefile(lib, tandem.library_path)
    assert top.startswith("doc")
