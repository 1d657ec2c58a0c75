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

__all__ = ["Geometry", "ShapeLike", "resize_plan"]

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
        ext, grid, bgrid = [], [], []  # one pass (a reader following a writer derives often)
        for s, c, b in zip(self.shape, self.chunks, self.blocks, strict=True):
            e = -(-c // b) * b if b else 0
            ext.append(e)
            grid.append(-(-s // c) if c else 0)
            bgrid.append(e // b if b else 0)
        setattr_ = object.__setattr__
        setattr_(self, "ext", tuple(ext))
        setattr_(self, "grid", tuple(grid))
        setattr_(self, "bgrid", tuple(bgrid))
        setattr_(self, "itemsize", self.dtype.itemsize)

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


def resize_plan(old: Geometry, newshape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Where each chunk of ``old`` resized to ``newshape`` comes from: per chunk of the new
    grid (C order) its flat number in ``old``'s grid, or -1 for a chunk outside it (new);
    and the positions of the *edge* chunks, in both grids but not whole inside both shapes
    (their part past the smaller shape may need zeroing). Whole-grid arithmetic, no
    per-chunk Python.

    >>> g = Geometry((5, 4), (2, 4), (2, 2), np.dtype("i1"))
    >>> flat, edges = resize_plan(g, (7, 4))
    >>> flat.tolist(), edges.tolist()
    ([0, 1, 2, -1], [2])
    """
    grid = tuple(-(-s // c) if c else 0 for s, c in zip(newshape, old.chunks, strict=True))
    flat = np.zeros(grid, np.int64)
    inside = np.ones(grid, bool)
    whole = np.ones(grid, bool)
    stride = 1
    for d in range(old.ndim - 1, -1, -1):
        c = np.arange(grid[d])
        k, g = old.chunks[d], old.grid[d]
        view = (1,) * d + (grid[d],) + (1,) * (old.ndim - d - 1)
        flat += (c * stride).reshape(view)
        inside &= (c < g).reshape(view)
        whole &= ((c + 1) * k <= min(old.shape[d], newshape[d])).reshape(view)
        stride *= g
    flat = flat.ravel()
    inside = inside.ravel()
    flat[~inside] = -1
    return flat, np.flatnonzero(inside & ~whole.ravel())
