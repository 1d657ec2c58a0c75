"""A read-only memory map of a frame file (``mmap_mode='r'``): reads are views, no copies."""

from __future__ import annotations

import mmap
import os
import sys
from typing import Any

from ..errors import ParamError
from .base import READ_ONLY
from .file import check_regular

__all__ = ["DEFAULT_MAPPING_SIZE", "MmapStore", "announce_mapping"]

#: C-Blosc2's mapping size of a writable memory-mapped frame when none is given (1 GiB)
DEFAULT_MAPPING_SIZE = 1 << 30


def announce_mapping(path: str, mmap_mode: str, initial: int | None, file_size: int) -> None:
    """C-Blosc2's ``BLOSC_INFO`` line for a memory-mapped frame (printed to stderr when the
    ``BLOSC_INFO`` environment variable is set, whatever its value): the file size for
    ``mmap_mode='r'``, else the larger of ``initial_mapping_size`` (default 1 GiB) and it.

    >>> os.environ["BLOSC_INFO"] = "1"
    >>> import contextlib, io, sys
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     announce_mapping("a.b2frame", "w+", None, 0)
    >>> del os.environ["BLOSC_INFO"]; err.getvalue().split(" of ")[-1].strip()
    '1073741824 bytes.'
    """
    if "BLOSC_INFO" not in os.environ:
        return
    size = file_size if mmap_mode == "r" else max(initial or DEFAULT_MAPPING_SIZE, file_size)
    print(
        f"[INFO] - Opened memory-mapped file {path} in mode {mmap_mode} with an mapping size "
        f"of {size} bytes.",
        file=sys.stderr,
    )


class MmapStore:
    """A read-only memory map of ``path`` from ``offset`` on."""

    def __init__(self, path: str | os.PathLike[str], offset: int = 0) -> None:
        self.path = os.fspath(path)
        self.offset = offset
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the open
        try:
            check_regular(fd, self.path, "file")
            self._map: mmap.mmap | None = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        self._view: memoryview | None = memoryview(self._map)
        self.bytes_read = 0

    def __reduce__(self) -> tuple[Any, ...]:
        return (MmapStore, (self.path, self.offset))  # a copy maps the file itself

    @property
    def size(self) -> int:
        return (len(self._view) if self._view is not None else 0) - self.offset

    @property
    def writable(self) -> bool:
        return False

    def read(self, pos: int, n: int) -> memoryview:
        if self._view is None:
            raise ParamError(f"{self.path}: the memory map is closed")
        start = self.offset + pos
        view = self._view[start : start + n]
        self.bytes_read += len(view)
        return view

    def write(self, pos: int, data: bytes | memoryview) -> None:
        raise ParamError(READ_ONLY)

    def truncate(self, size: int) -> None:
        raise ParamError(READ_ONLY)

    def sync(self) -> None:
        pass

    def close(self) -> None:
        if self._view is not None:
            self._view.release()
            self._view = None
        if self._map is not None:
            self._map.close()
            self._map = None
