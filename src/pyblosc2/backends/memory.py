"""A frame held in memory: a private ``bytearray`` (writable) or a view of the caller's
buffer (read-only, no copy)."""

from __future__ import annotations

from ..errors import ParamError
from .base import READ_ONLY

__all__ = ["MemoryStore"]


class MemoryStore:
    """Bytes in memory.

    >>> s = MemoryStore(b"abc"); s.write(5, b"z"); bytes(s.read(0, 6))
    b'abc\\x00\\x00z'
    >>> MemoryStore(b"abc", readonly=True).read(1, 5).tobytes()
    b'bc'
    """

    def __init__(self, data: bytes | bytearray | memoryview = b"", *, readonly: bool = False):
        self._readonly = readonly
        self.buf: bytearray | memoryview = (
            memoryview(data).cast("B") if readonly else bytearray(data)
        )
        self.bytes_read = 0

    @property
    def size(self) -> int:
        return len(self.buf)

    @property
    def writable(self) -> bool:
        return not self._readonly

    def read(self, pos: int, n: int) -> memoryview:
        view = memoryview(self.buf)[pos : pos + n]
        self.bytes_read += len(view)
        return view

    def write(self, pos: int, data: bytes | memoryview) -> None:
        buf = self._mutable()
        size = len(buf)
        if pos >= size:  # appending: no zero-filled temporary the size of the data
            if pos > size:
                buf.extend(bytes(pos - size))
            buf += data
            return
        end = pos + len(data)
        if end > size:
            buf.extend(bytes(end - size))
        buf[pos:end] = data

    def truncate(self, size: int) -> None:
        buf = self._mutable()
        if size <= len(buf):
            del buf[size:]
        else:
            buf.extend(bytes(size - len(buf)))

    def _mutable(self) -> bytearray:
        if not isinstance(self.buf, bytearray):
            raise ParamError(READ_ONLY)
        return self.buf

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass
