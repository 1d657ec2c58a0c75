"""Former home of the frame stores, which now live in :mod:`pyblosc2.backends`."""

from __future__ import annotations

from ..backends import FileStore, MemoryStore, MmapStore

__all__ = ["FileStore", "MemoryStore", "MmapStore"]
