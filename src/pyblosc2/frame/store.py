"""Where a contiguous frame's bytes live: memory or a file region (frame-format.md §7).

Writes go through :meth:`write` and :meth:`truncate` only, so tests can inject failures.
"""

from __future__ import annotations

import os

__all__ = ["FileStore", "MemoryStore"]


class MemoryStore:
    """A frame in a ``bytearray``."""

    def __init__(self, data: bytes | bytearray = b"") -> None:
        self.buf = bytearray(data)
        self.bytes_read = 0

    @property
    def size(self) -> int:
        return len(self.buf)

    def read(self, pos: int, n: int) -> memoryview:
        self.bytes_read += min(n, max(0, len(self.buf) - pos))
        return memoryview(self.buf)[pos : pos + n]

    def write(self, pos: int, data: bytes | memoryview) -> None:
        end = pos + len(data)
        if end > len(self.buf):
            self.buf.extend(bytes(end - len(self.buf)))
        self.buf[pos:end] = data

    def truncate(self, size: int) -> None:
        del self.buf[size:]

    def close(self) -> None:
        pass


class FileStore:
    """A frame stored in a file from byte ``offset`` on (bytes before it are not touched)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        offset: int = 0,
        *,
        writable: bool = False,
        create: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        self.offset = offset
        flags = os.O_RDWR if writable else os.O_RDONLY
        if create:
            flags |= os.O_CREAT | os.O_EXCL
        self._fd = os.open(self.path, flags, 0o644)
        self.bytes_read = 0

    @property
    def size(self) -> int:
        return os.fstat(self._fd).st_size - self.offset

    def read(self, pos: int, n: int) -> bytes:
        data = os.pread(self._fd, n, self.offset + pos)
        self.bytes_read += len(data)
        return data

    def write(self, pos: int, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            done = os.pwrite(self._fd, view, self.offset + pos)
            view, pos = view[done:], pos + done

    def truncate(self, size: int) -> None:
        os.ftruncate(self._fd, self.offset + size)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()


class MmapStore:
    """A read-only memory map of a frame file (``mmap_mode='r'``): reads are views."""

    def __init__(self, path: str | os.PathLike[str], offset: int = 0) -> None:
        import mmap

        self.path = os.fspath(path)
        self.offset = offset
        with open(self.path, "rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._view = memoryview(self._map)
        self.bytes_read = 0

    @property
    def size(self) -> int:
        return len(self._map) - self.offset

    def read(self, pos: int, n: int) -> memoryview:
        start = self.offset + pos
        view = self._view[start : start + n]
        self.bytes_read += len(view)
        return view

    def write(self, pos: int, data: bytes | memoryview) -> None:
        raise ValueError("Cannot do this action with reading mode")

    def truncate(self, size: int) -> None:
        raise ValueError("Cannot do this action with reading mode")

    def close(self) -> None:
        if self._view is not None:
            self._view.release()
            self._view = None  # type: ignore[assignment]
            self._map.close()
