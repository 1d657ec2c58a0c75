"""A frame read from an open binary file object (``open(p, "rb")``, ``io.BytesIO``, any
object with ``read``, ``seek`` and ``tell``), in place and read-only: each read seeks and
reads under a lock, and the object's position is put back afterwards. The caller owns the
object (it is never closed here). fsspec file objects are not read this way: they are opened
by their URL (:func:`~pyblosc2.frame.location.file_object_url`), with the remote backend's
lazy, checked reads.
"""

from __future__ import annotations

import io
import threading
from typing import Any

from ..errors import FormatError, ParamError, ParamTypeError
from .base import READ_ONLY

__all__ = ["FileObjectStore", "is_binary_file"]


def is_binary_file(obj: object) -> bool:
    """Whether ``obj`` is a readable, seekable binary file object (not a path).

    >>> is_binary_file(io.BytesIO(b"x")), is_binary_file("x.b2frame"), is_binary_file(io.StringIO())
    (True, False, False)
    """
    if isinstance(obj, str | bytes | bytearray | memoryview) or not all(
        callable(getattr(obj, m, None)) for m in ("read", "seek", "tell")
    ):
        return False
    return not isinstance(obj, io.TextIOBase)


class FileObjectStore:
    """The bytes of a binary file object from ``offset`` on.

    >>> s = FileObjectStore(io.BytesIO(b"hello world"), offset=6); s.size, s.read(0, 3)
    (5, b'wor')
    """

    def __init__(self, f: Any, offset: int = 0) -> None:
        if not is_binary_file(f):
            raise ParamTypeError(
                f"urlpath must be a path, a URL or a binary file object, got {type(f).__name__}"
            )
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ParamError(f"offset must be a non-negative int, got {offset!r}")
        readable = getattr(f, "readable", None)
        if callable(readable) and not readable():
            raise ParamError("the file object is not open for reading (open it with 'rb')")
        self._f, self.offset = f, offset
        self._lock = threading.Lock()
        self.bytes_read = 0
        with self._lock:
            here = f.tell()
            self._size = f.seek(0, io.SEEK_END)
            f.seek(here)
        if offset > self._size:
            raise FormatError("frame", "offset", offset, f"at most the size {self._size}", offset)

    @property
    def size(self) -> int:
        return self._size - self.offset

    @property
    def writable(self) -> bool:
        return False

    def read(self, pos: int, n: int) -> bytes:
        with self._lock:
            here = self._f.tell()
            try:
                self._f.seek(self.offset + pos)
                data = self._f.read(max(0, min(n, self.size - pos)))
            finally:
                self._f.seek(here)
        if not isinstance(data, bytes | bytearray | memoryview):
            raise ParamTypeError(f"the file object's read() gave {type(data).__name__}, not bytes")
        self.bytes_read += len(data)
        return bytes(data)

    def write(self, pos: int, data: bytes | memoryview) -> None:
        raise ParamError(f"{READ_ONLY} (a frame read from a file object is read-only)")

    def truncate(self, size: int) -> None:
        raise ParamError(f"{READ_ONLY} (a frame read from a file object is read-only)")

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass
