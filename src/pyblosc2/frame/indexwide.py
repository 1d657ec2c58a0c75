"""What a frame reader works out from its whole index (methods of
:class:`~.contiguous.FrameReader`): the byte ranges to prefetch for a set of chunks from a
remote source, and the size of a variable-chunk frame's lone special chunk.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..chunk.header import ChunkHeader
from ..constants import EXTENDED_HEADER_LENGTH
from ..errors import FormatError
from .sparse import chunk_name

__all__ = ["prefetch_chunks", "variable_special_size"]


def prefetch_chunks(self: Any, chunks: list[int]) -> None:
    """Tell a source that can fetch ranges together (a remote one) that ``chunks`` will be
    read whole: it fetches them concurrently. A chunk's bytes end at most at the next
    offset in the data area (or at its end); a no-op for other sources."""
    prefetch = getattr(self.source, "prefetch", None)
    if self.directory is not None:
        prefetch = getattr(self.directory, "prefetch_objects", None)
        if prefetch is not None:
            offs = [self.offset(n) for n in chunks]
            ids = sorted({off for off in offs if off >= 0})
            prefetch([chunk_name(i) for i in ids])
        return
    if prefetch is None or not chunks:
        return
    h = self.header
    starts = np.unique(self.offsets[self.offsets >= 0])
    ends = np.append(starts[1:], h.cbytes)
    wanted = np.unique(self.offsets[np.asarray(chunks, np.int64)])
    i = np.searchsorted(starts, wanted[wanted >= 0])
    hl = h.header_len
    prefetch([(hl + int(a), hl + int(b)) for a, b in zip(starts[i], ends[i], strict=True)])


def variable_special_size(self: Any, n: int) -> int:
    """Size of special chunk ``n`` in a variable-chunk frame: the offset stores none, but
    when it is the only special one the total ``nbytes`` determines it. (C-Blosc2 writes
    such frames and then fails to read them back, frame-format.md §2.7.)"""
    specials = np.flatnonzero(self.offsets < 0)
    if len(specials) != 1:
        raise FormatError(
            "index chunk",
            f"offset[{n}]",
            None,
            "at most one special offset in a variable-chunk frame (its size is otherwise unknown)",
            f"{len(specials)} of them",
        )
    stored = sum(
        ChunkHeader.from_bytes(self.get_chunk(k)[:EXTENDED_HEADER_LENGTH]).nbytes
        for k in range(self.nchunks)
        if k != n
    )
    size = self.header.nbytes - stored
    if size < 0:
        raise FormatError(
            "frame header",
            "nbytes",
            30,
            f"at least the stored chunks' {stored} bytes",
            self.header.nbytes,
        )
    return size
