"""The README's Python example runs as printed (Cranfield from ../shared/data;
skipped without it) and writes the same run as `tandem run --by-position`."""
import os
import re
import subprocess
import sys

import pytest

from conftest import run_cli

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")


def test_readme_example(tmp_path, shared_data, cli):
    if not os.path.exists(os.path.join(shared_data, "cranfield", "cran.qry")):
        pytest.skip("skipped: no Cranfield in ../shared/data")
    text = open(README).read()
    section = text[text.index("\n## Python\n"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    root = tmp_path / "repo"
    (root / "build").mkdir(parents=True)
    os.symlink(cli, root / "build" / "tandem")
    (tmp_path / "shared").mkdir()
    os.symlink(os.path.abspath(shared_data), tmp_path / "shared" / "data")
    (root / "example.py").write_text(code)
    p = subprocess.run([sys.executable, "example.py"], cwd=str(root), capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"^map\s+all\s+0\.30", p.stdout, re.M), p.stdout
    run_cli(cli, "run", str(root / "build" / "cran.idx"), "--queries",
            os.path.join(shared_data, "cranfield", "cran.qry"), "--by-position",
            "-o", str(tmp_path / "cli.run"))
    assert open(tmp_path / "cli.run").read() == open(root / "build" / "cran.run").read()
