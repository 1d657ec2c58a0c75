"""The geometry of a b2nd array: its shape, chunk and block shapes and dtype (the ``b2nd``
metalayer, frame-format.md §8.1) and what the chunk grid and the in-chunk layout derive from
them (§8.3-§8.4), computed once.

An array holds one :class:`Geometry` and replaces it whole when its shape changes
(``resize``): code that takes an array's geometry once sees one shape, one chunk grid and one
padding, never a mix of an old and a new one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .b2nd_meta import B2NDMeta

__all__ = ["Geometry", "ShapeLike"]

#: A shape argument: an int (one dimension) or a sequence of ints (numpy integers accepted).
ShapeLike = int | Sequence[int]


@dataclass(frozen=True, slots=True)
class Geometry:
    """Shape, chunks, blocks and dtype of an array, with the extents derived from them.

    >>> g = Geometry.from_meta(B2NDMeta((5, 7), (3, 4), (2, 3), np.dtype("<i2")))
    >>> g.ext, g.grid, g.bgrid, g.nchunks, g.chunk_nbytes
    ((4, 6), (2, 2), (2, 2), 4, 48)
    >>> g.resized((9, 7)).grid, g.to_meta() == B2NDMeta((5, 7), (3, 4), (2, 3), np.dtype("<i2"))
    ((3, 2), True)
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    blocks: tuple[int, ...]
    dtype: np.dtype
    #: the chunk shape padded to whole blocks: the shape of a chunk's decompressed buffer
    ext: tuple[int, ...] = field(init=False, compare=False)
    #: chunks per axis (the chunk grid, C order over it is storage order)
    grid: tuple[int, ...] = field(init=False, compare=False)
    #: blocks per axis of a chunk (the block grid of ``ext``)
    bgrid: tuple[int, ...] = field(init=False, compare=False)
    #: bytes per item
    itemsize: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        ext = tuple(
            -(-c // b) * b if b else 0 for c, b in zip(self.chunks, self.blocks, strict=True)
        )
        grid = tuple(-(-s // c) if c else 0 for s, c in zip(self.shape, self.chunks, strict=True))
        bgrid = tuple(e // b if b else 0 for e, b in zip(ext, self.blocks, strict=True))
        object.__setattr__(self, "ext", ext)
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "bgrid", bgrid)
        object.__setattr__(self, "itemsize", self.dtype.itemsize)

    @classmethod
    def from_meta(cls, meta: B2NDMeta) -> Geometry:
        """The geometry a ``b2nd`` metalayer describes."""
        return cls(meta.shape, meta.chunks, meta.blocks, meta.dtype)

    def to_meta(self) -> B2NDMeta:
        """The ``b2nd`` metalayer of this geometry."""
        return B2NDMeta(self.shape, self.chunks, self.blocks, self.dtype)

    def resized(self, shape: tuple[int, ...]) -> Geometry:
        """The same partition and dtype over another shape (the chunk grid follows it)."""
        return replace(self, shape=shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions (0 for a scalar array)."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of items."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """The items' bytes, uncompressed."""
        return self.size * self.itemsize

    @property
    def nchunks(self) -> int:
        """The number of chunks the shape needs (one for a scalar array)."""
        return math.prod(self.grid) if self.shape else 1

    @property
    def chunk_nbytes(self) -> int:
        """Bytes per chunk padded to whole blocks, uncompressed (the super-chunk's chunksize)."""
        return math.prod(self.ext) * self.itemsize

    @property
    def block_nbytes(self) -> int:
        """Bytes per block, uncompressed."""
        return math.prod(self.blocks) * self.itemsize

    @property
    def ext_shape(self) -> tuple[int, ...]:
        """The shape padded to whole chunks."""
        return tuple(g * c for g, c in zip(self.grid, self.chunks, strict=True))
