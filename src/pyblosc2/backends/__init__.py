"""Where bytes live: storage backends behind one small protocol (:mod:`.base`).

A frame is read and written through a :class:`~.base.ByteStore` (memory, a file region, a
memory map); a sparse frame's chunk objects live in a :class:`~.base.ObjectStore` (a local
directory). Backends know nothing of the Blosc formats: the frame layer does.
"""

from __future__ import annotations

from .base import READ_ONLY, ByteStore, ObjectStore
from .directory import DirectoryStore
from .file import FileStore
from .memory import MemoryStore
from .mmap import MmapStore

__all__ = [
    "READ_ONLY",
    "ByteStore",
    "DirectoryStore",
    "FileStore",
    "MemoryStore",
    "MmapStore",
    "ObjectStore",
]
