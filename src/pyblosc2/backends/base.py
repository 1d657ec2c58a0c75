"""The storage protocol: what the frame layer needs from a place that holds bytes.

A :class:`ByteStore` is one object's bytes with random access (a frame in memory, in a file
from an offset on, memory-mapped, or later remote). An :class:`ObjectStore` is a flat set of
named objects (a sparse frame's directory). A new backend implements these and nothing else.
Every write goes through ``write``/``truncate``/``write_object``, so tests can inject failures.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["READ_ONLY", "ByteStore", "ObjectStore"]

# python-blosc2's message for a write to a container opened with mode="r".
READ_ONLY = "Cannot do this action with reading mode"


@runtime_checkable
class ByteStore(Protocol):
    """Random access to one object's bytes (position 0 = its first byte)."""

    bytes_read: int
    """Bytes returned by :meth:`read` so far (shows what a lazy read touched)."""

    @property
    def size(self) -> int:
        """The current size in bytes."""
        ...

    @property
    def writable(self) -> bool:
        """Whether :meth:`write` and :meth:`truncate` are allowed."""
        ...

    def read(self, pos: int, n: int) -> bytes | memoryview:
        """Bytes ``[pos, pos + n)``; fewer at the end of the object."""
        ...

    def write(self, pos: int, data: bytes | memoryview) -> None:
        """Write ``data`` at ``pos`` (growing the object when needed)."""
        ...

    def truncate(self, size: int) -> None:
        """Cut (or zero-extend) the object to ``size`` bytes."""
        ...

    def sync(self) -> None:
        """Make the writes so far durable (``fsync``; a no-op where that means nothing)."""
        ...

    def close(self) -> None:
        """Release the resources; idempotent."""
        ...


@runtime_checkable
class ObjectStore(Protocol):
    """A flat namespace of whole objects (a sparse frame's directory)."""

    def exists(self, name: str) -> bool:
        """Whether object ``name`` exists."""
        ...

    def object_size(self, name: str) -> int:
        """The size of object ``name`` in bytes (``FileNotFoundError`` when missing)."""
        ...

    def read_object(self, name: str, limit: int | None = None) -> bytes:
        """The whole object (``FileNotFoundError`` when missing); a ``FormatError`` when it
        is larger than ``limit`` or is not a regular file (a device, a FIFO, a symlink out
        of the directory), before its bytes are read."""
        ...

    def write_object(self, name: str, data: bytes | memoryview) -> None:
        """Create or replace object ``name`` atomically (readers see old or new bytes)."""
        ...

    def remove_object(self, name: str) -> None:
        """Remove object ``name``; a missing one is a no-op."""
        ...

    def open_object(self, name: str, *, writable: bool) -> ByteStore:
        """A :class:`ByteStore` over object ``name``."""
        ...
