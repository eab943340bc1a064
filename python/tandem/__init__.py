"""tandem from Python: a thin layer over libtandem's C API (include/tandem.h).

    import tandem
    tandem.build(["docs.txt"], "docs.idx")
    with tandem.Engine() as engine, engine.open("docs.idx") as s:
        print(s.search("greek goddess of wisdom", k=3))

Installed with `pip install ./python`, the package carries its own
libtandem (built by CMake through scikit-build-core). TANDEM_LIBRARY (a path
to libtandem.so) overrides it, for developers using a build tree; a checkout
without a bundled library uses the system's (ldconfig; /usr/local/lib,
/usr/lib). tandem.pyterrier has PyTerrier transformers (with python-terrier
installed).

Every public name is typed (the package ships py.typed for type checkers);
help(tandem.Engine), help(tandem.Searcher.search) and so on say how to call
them."""
from __future__ import annotations

from . import _lib
from ._build import BuildProgress, ImportProgress, build, import_ciff, import_pisa
from ._types import Hits, Query, StrPath, Term
from .engine import BatchResult, Device, Engine, Searcher, devices
from .errors import (CorruptError, DeviceError, FormatError, InvalidArgumentError,
                     LimitError, NoDeviceError, NotFoundError, TandemError, TandemIOError,
                     TandemMemoryError, TandemTimeoutError, UnsupportedError,
                     VersionError)
from .run import write_trec_run

library_path: str = _lib.path


def library_version() -> str:
    """The version of the loaded libtandem ("MAJOR.MINOR.PATCH")."""
    return str(_lib.version().decode())


def _version() -> str:
    """The version CMake wrote into a wheel (from CMakeLists.txt's project());
    from a checkout, that of the library in use (the same project())."""
    try:
        from ._build_config import VERSION  # type: ignore[import-not-found,unused-ignore]
        return str(VERSION)
    except ImportError:
        return library_version()


__version__: str = _version()


__all__ = ["build", "import_ciff", "import_pisa", "devices", "Engine", "Searcher",
           "BatchResult", "Device", "write_trec_run", "library_version", "library_path",
           "TandemError", "InvalidArgumentError", "LimitError", "TandemIOError",
           "FormatError", "CorruptError", "VersionError", "NoDeviceError", "DeviceError",
           "NotFoundError", "UnsupportedError", "TandemMemoryError", "TandemTimeoutError",
           "BuildProgress", "ImportProgress", "Query", "Term", "Hits", "StrPath"]
