"""tandem's status codes as Python exceptions, each carrying the library's
message (tdm_last_error) and status (tdm_last_status)."""
from __future__ import annotations

from typing import Dict, Optional, Type

from . import _lib

__all__ = ["TandemError", "InvalidArgumentError", "LimitError", "TandemIOError",
           "FormatError", "CorruptError", "VersionError", "NoDeviceError", "DeviceError",
           "NotFoundError", "UnsupportedError", "TandemMemoryError", "TandemTimeoutError",
           "error", "check"]


class TandemError(Exception):
    """A failed tandem call: str(e) is tandem's message, e.status its code
    (a TDM_ERR_* value, negative; tandem.h).

    Every subclass is also the matching built-in exception where there is one
    (InvalidArgumentError is a ValueError, TandemIOError an OSError, ...), so
    code that catches those keeps working."""

    status: int
    message: str

    def __init__(self, message: str, status: int = _lib.ERR_INTERNAL) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class InvalidArgumentError(TandemError, ValueError):
    """A bad option or argument (TDM_ERR_INVALID_ARG)."""


class LimitError(TandemError, ValueError):
    """Input beyond a documented limit, such as too many query terms (TDM_ERR_LIMIT)."""


class TandemIOError(TandemError, OSError):
    """A file could not be read or written (TDM_ERR_IO)."""


class FormatError(TandemError):
    """Malformed input: bad magic, truncated, a parse error (TDM_ERR_FORMAT)."""


class CorruptError(TandemError):
    """Checksum mismatch or inconsistent data (TDM_ERR_CORRUPT)."""


class VersionError(TandemError):
    """A format version this library cannot read (TDM_ERR_VERSION)."""


class NoDeviceError(TandemError):
    """No OpenCL device, or none matched the selection (TDM_ERR_NO_DEVICE)."""


class DeviceError(TandemError):
    """An OpenCL call failed, kernels did not build, or device memory ran out."""


class NotFoundError(TandemError, LookupError):
    """A term, file or entry that does not exist (TDM_ERR_NOT_FOUND)."""


class UnsupportedError(TandemError):
    """A feature the device or build lacks (TDM_ERR_UNSUPPORTED)."""


class TandemMemoryError(TandemError, MemoryError):
    """Host memory exhausted (TDM_ERR_NOMEM)."""


class TandemTimeoutError(TandemError, TimeoutError):
    """A device, or calls in flight at a close, did not finish within the
    time limit (TDM_ERR_TIMEOUT)."""


_BY_STATUS: Dict[int, Type[TandemError]] = {
    _lib.ERR_INVALID_ARG: InvalidArgumentError,
    _lib.ERR_NOMEM: TandemMemoryError,
    _lib.ERR_IO: TandemIOError,
    _lib.ERR_FORMAT: FormatError,
    _lib.ERR_CORRUPT: CorruptError,
    _lib.ERR_VERSION: VersionError,
    _lib.ERR_NO_DEVICE: NoDeviceError,
    _lib.ERR_OPENCL: DeviceError,
    _lib.ERR_BUILD: DeviceError,
    _lib.ERR_DEVICE_MEMORY: DeviceError,
    _lib.ERR_NOT_FOUND: NotFoundError,
    _lib.ERR_UNSUPPORTED: UnsupportedError,
    _lib.ERR_LIMIT: LimitError,
    _lib.ERR_TIMEOUT: TandemTimeoutError,
}


def error(status: int, message: Optional[str] = None) -> TandemError:
    """The exception for `status`, with `message` or else this thread's
    tdm_last_error() (or the status's name when that is empty)."""
    if message is None:
        raw = _lib.last_error()
        message = raw.decode("utf-8", "replace") if raw else ""
    if not message:
        message = _lib.strerror(status).decode()
    return _BY_STATUS.get(status, TandemError)(message, status)


def check(status: int) -> int:
    """Raises the exception for a failed call's status (reads the calling
    thread's last error, so call it right after the call, on its thread);
    returns `status` (tandem's OK) otherwise."""
    if status != _lib.OK:
        raise error(status)
    return status
