"""tandem from Python: a thin layer over libtandem's C API (include/tandem.h).

    import tandem
    tandem.build(["docs.txt"], "docs.idx")
    with tandem.Engine() as engine, engine.open("docs.idx") as s:
        print(s.search("greek goddess of wisdom", k=3))

The library is found through TANDEM_LIBRARY (a path to libtandem.so), the
path recorded when the package was built (TANDEM_LIBRARY at build time), or
the system's (ldconfig; /usr/local/lib, /usr/lib)."""
from . import _lib
from ._build import build, import_ciff, import_pisa
from .engine import BatchResult, Device, Engine, Searcher, devices
from .errors import (CorruptError, DeviceError, FormatError, InvalidArgumentError,
                     LimitError, NoDeviceError, NotFoundError, TandemError, TandemIOError,
                     TandemMemoryError, UnsupportedError, VersionError)
from .run import write_trec_run

__version__ = "0.1.0"
library_path = _lib.path


def library_version():
    """The version of the loaded libtandem ("MAJOR.MINOR.PATCH")."""
    return _lib.version().decode()


__all__ = ["build", "import_ciff", "import_pisa", "devices", "Engine", "Searcher",
           "BatchResult", "Device", "write_trec_run", "library_version", "library_path",
           "TandemError", "InvalidArgumentError", "LimitError", "TandemIOError",
           "FormatError", "CorruptError", "VersionError", "NoDeviceError", "DeviceError",
           "NotFoundError", "UnsupportedError", "TandemMemoryError"]
