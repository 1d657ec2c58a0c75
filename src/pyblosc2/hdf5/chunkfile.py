"""Stored chunks read straight from the HDF5 file by byte ranges (the trick b2h5py plays).

h5py's ``get_chunk_info_by_coord`` gives a chunk's address and size in the file; a small
selection then reads just the parts of the stored chunk it needs (frame header, index and
trailer, chunk header and block starts, the blocks holding selected items) by positioned
reads of pyblosc2's own descriptor of the file, instead of the whole chunk through
``read_direct_chunk``.

Only where that is sure to read what HDF5 would: the file is open read-only and not in SWMR
mode (no writer can move or rewrite a chunk meanwhile: HDF5's file lock keeps other
processes' writers out), through the default ``sec2`` driver, and the path h5py opened
still names that file (same device and inode before and after pyblosc2 opens it). Whether an
address counts the user block (HDF5 versions differ) is checked once on a file with one,
against ``read_direct_chunk``; if neither reading matches, ranges are not used.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any

from ..backends.base import ByteStore
from ..backends.file import FileStore
from ..backends.memory import MemoryStore
from ..errors import FormatError
from ..stores.leaves import Window

__all__ = ["ChunkFile", "StoredChunk"]

#: how many bytes of a chunk are compared to tell the address convention of a user block
_PROBE = 64


@dataclass
class StoredChunk:
    """One stored chunk: its filter mask and size, and its bytes, read whole (``data``) or
    reachable by positioned reads of the file (``window``, exactly the chunk's bytes)."""

    mask: int
    size: int
    #: the chunk's file address (None when not known)
    address: int | None
    data: memoryview | None = None
    window: ByteStore | None = None

    def source(self) -> ByteStore:
        """The stored bytes as a byte store (no copy of ``data``)."""
        if self.data is not None:
            return MemoryStore(self.data, readonly=True)
        assert self.window is not None
        return self.window

    @property
    def bytes_read(self) -> int:
        """Stored bytes read for this chunk so far."""
        return len(self.data) if self.data is not None else getattr(self.window, "bytes_read", 0)


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class ChunkFile:
    """Positioned reads of one HDF5 file's stored chunks (see the module docstring)."""

    def __init__(self, store: FileStore, userblock: int) -> None:
        self.store = store
        #: what to add to a chunk address: 0, the user block size, or None (not yet known)
        self.base: int | None = 0 if userblock == 0 else None
        self.userblock = userblock

    @classmethod
    def for_file(cls, file: Any) -> ChunkFile | None:
        """Ranged access to ``file`` (an open ``h5py.File``), or None where it is not sure."""
        if os.name != "posix" or file.mode != "r" or file.swmr_mode or file.driver != "sec2":
            return None
        path = file.filename
        try:
            handle = file.id.get_vfd_handle()
            theirs = os.fstat(handle) if isinstance(handle, int) else None
            before = os.stat(path)
            store = FileStore(path)
        except (OSError, FormatError, TypeError, ValueError):
            return None
        try:
            after = os.stat(path)
        except OSError:
            after = None
        if (
            theirs is None
            or after is None
            or not (_same_file(theirs, before) and _same_file(before, after))
        ):
            store.close()
            return None
        return cls(store, int(file.userblock_size))

    def settle_base(self, address: int, stored: bytes | memoryview) -> bool:
        """Learn from a chunk read whole (``stored``, at ``address``) whether addresses count
        the user block; False when neither reading gives its bytes (ranges are then not
        used)."""
        if self.base is not None:
            return True
        probe = bytes(memoryview(stored)[:_PROBE])
        for base in (0, self.userblock):
            if bytes(self.store.read(address + base, len(probe))) == probe:
                self.base = base
                return True
        return False

    def window(self, address: int, size: int) -> Window:
        """The ``size`` stored bytes at ``address`` (:meth:`settle_base` first)."""
        assert self.base is not None
        return Window(self.store, address + self.base, size, owned=False)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.store.close()
