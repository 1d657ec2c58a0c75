"""Writes of variable-sized batches into a fixed-size NDArray, a whole chunk at a time
(python-blosc2's ``_ChunkAlignedWriter``): batches wait in memory until they fill a chunk,
so each chunk is compressed once instead of merged at every batch that straddles it; only
the last :meth:`ChunkAlignedWriter.flush` writes a partial chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import BoundsError, ParamError

__all__ = ["ChunkAlignedWriter"]


class ChunkAlignedWriter:
    """Appends to ``arr`` from position 0 in blocks of ``chunk_len`` rows.

    >>> import pyblosc2 as pb
    >>> arr = pb.zeros((10,), dtype=np.int64, chunks=(4,))
    >>> w = ChunkAlignedWriter(arr, 4)
    >>> for start in range(0, 10, 3):
    ...     w.append(np.arange(start, min(start + 3, 10)))
    >>> w.flush()
    >>> arr[:].tolist()
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """

    __slots__ = ("arr", "chunk_len", "on_write", "pending", "pending_n", "wpos")

    def __init__(
        self,
        arr: Any,
        chunk_len: int,
        on_write: Callable[[int, np.ndarray], None] | None = None,
    ) -> None:
        if isinstance(chunk_len, bool) or not isinstance(chunk_len, int) or chunk_len < 1:
            raise ParamError(f"chunk_len must be a positive int, got {chunk_len!r}")
        self.arr = arr
        self.chunk_len = chunk_len
        self.on_write = on_write  # called with (start, block) before each write
        self.pending: list[np.ndarray] = []
        self.pending_n = 0
        self.wpos = 0

    def append(self, block: np.ndarray) -> None:
        """Queue ``block``; write every whole chunk it completes."""
        if len(block) == 0:
            return
        if self.wpos + self.pending_n + len(block) > len(self.arr):
            raise BoundsError(
                f"ChunkAlignedWriter: {self.wpos + self.pending_n + len(block)} rows for an "
                f"array of {len(self.arr)}"
            )
        self.pending.append(block)
        self.pending_n += len(block)
        while self.pending_n >= self.chunk_len:
            self._write(self._take(self.chunk_len))

    def flush(self) -> None:
        """Write what is queued (a partial chunk)."""
        if self.pending_n:
            self._write(self._take(self.pending_n))

    def _write(self, block: np.ndarray) -> None:
        n = len(block)
        if self.on_write is not None:
            self.on_write(self.wpos, block)
        self.arr[self.wpos : self.wpos + n] = block
        self.wpos += n

    def _take(self, n: int) -> np.ndarray:
        """The first ``n`` queued rows, removed from the queue."""
        parts: list[np.ndarray] = []
        need = n
        while need:
            head = self.pending[0]
            if len(head) <= need:
                parts.append(self.pending.pop(0))
                need -= len(head)
            else:
                parts.append(head[:need])
                self.pending[0] = head[need:]
                need = 0
        self.pending_n -= n
        return parts[0] if len(parts) == 1 else np.concatenate(parts)
