"""setuptools hook: records the libtandem to load (TANDEM_LIBRARY at build
time, made absolute) in tandem/_build_config.py; the metadata is in
pyproject.toml."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    def run(self):
        super().run()
        lib = os.environ.get("TANDEM_LIBRARY")
        lib = os.path.abspath(lib) if lib else None
        if lib and not os.path.exists(lib):
            raise SystemExit("TANDEM_LIBRARY=%s: no such file" % lib)
        out = os.path.join(self.build_lib, "tandem", "_build_config.py")
        with open(out, "w") as f:
            f.write('"""Written by setup.py: the libtandem this package was built against."""\n')
            f.write("LIBRARY = %r\n" % lib)


setup(cmdclass={"build_py": BuildPy})
