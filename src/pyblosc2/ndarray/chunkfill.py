"""Building an NDArray chunk by chunk: a new array's chunks are appended in storage order
(C order over the chunk grid, frame-format.md §8.4), each from a piece computed for its region,
so no constructor here holds more than one chunk (or one row of chunks) in memory."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import numpy as np

from .._threads import run_parallel
from .core import ArrayCore
from .reader import read_box

__all__ = [
    "BATCH_BYTES",
    "WHOLE_READ_MAX",
    "ChunkWriter",
    "Region",
    "chunk_regions",
    "encode_region",
    "fill_flat",
    "fill_regions",
    "iter_regions",
    "reader_of",
]

#: sources up to this many bytes are read whole once instead of region by region (reading a
#: region decodes every source chunk it overlaps; python-blosc2 uses the same 16 MB bound)
WHOLE_READ_MAX = 1 << 24

#: The part of an array one chunk covers: one slice per dimension.
Region = tuple[slice, ...]

#: The array filled (an NDArray: the fillers return what they are given).
A = TypeVar("A", bound=ArrayCore)


def iter_regions(shape: tuple[int, ...], chunks: tuple[int, ...]) -> Iterator[Region]:
    """The region of every chunk, in storage order (C order over the chunk grid), one at a
    time.

    >>> list(iter_regions((5,), (2,)))
    [(slice(0, 2, None),), (slice(2, 4, None),), (slice(4, 5, None),)]
    """
    grid = [range(0, s, c) for s, c in zip(shape, chunks, strict=True)]
    for origin in itertools.product(*grid):
        yield tuple(slice(o, min(o + c, s)) for o, c, s in zip(origin, chunks, shape, strict=True))


def chunk_regions(shape: tuple[int, ...], chunks: tuple[int, ...]) -> list[Region]:
    """The region of every chunk, in storage order, as a list (see :func:`iter_regions`).

    >>> chunk_regions((5,), (2,))
    [(slice(0, 2, None),), (slice(2, 4, None),), (slice(4, 5, None),)]
    """
    return list(iter_regions(shape, chunks))


def reader_of(src: Any) -> Callable[[Region], Any]:
    """``region -> src[region]`` for an NDArray (or array-like) source: from one whole read
    when it is at most :data:`WHOLE_READ_MAX` bytes, else region by region (the regions of
    :func:`chunk_regions`: explicit bounds, step 1).

    >>> from pyblosc2 import asarray
    >>> reader_of(asarray(np.arange(5)))((slice(1, 3),))
    array([1, 2])
    """
    if isinstance(src, ArrayCore):
        if src.size * src.dtype.itemsize <= WHOLE_READ_MAX:
            src = read_box(src, (0,) * src.ndim, src.shape)
        else:
            core = src
            return lambda region: read_box(
                core, tuple(r.start for r in region), tuple(r.stop for r in region)
            )
    return lambda region: src[region] if region else src[()]


#: compressed bytes a builder gathers before it commits them (most arrays: one commit)
BATCH_BYTES = 1 << 26


class ChunkWriter:
    """The chunks of a new array (created with zero chunks, :func:`.build.new_array`) put in
    place in a few commits, each a valid array: a builder killed midway leaves an array that
    opens, its unwritten chunks zero.

    >>> from .constructors import _new
    >>> a = _new((4,), "i2", (2,), (2,), {})
    >>> w = ChunkWriter(a); w.put(1, a._compress(np.array([5, 6], "i2"))); w.flush()
    >>> a[...]
    array([0, 0, 5, 6], dtype=int16)
    """

    def __init__(self, arr: ArrayCore, batch: int = BATCH_BYTES) -> None:
        self.arr, self.batch = arr, batch
        self.new: dict[int, bytes] = {}
        self.size = 0

    def put(self, n: int, chunk: bytes) -> None:
        """Chunk ``n`` becomes ``chunk`` (committed with the next batch)."""
        self.new[n] = chunk
        self.size += len(chunk)
        if self.size >= self.batch:
            self.flush()

    def flush(self) -> None:
        """Commit the chunks put so far."""
        if self.new:
            schunk = self.arr.schunk
            schunk.set_chunks([self.new.get(k, k) for k in range(schunk.nchunks)])
            self.new, self.size = {}, 0


def fill_regions(arr: A, piece_of: Callable[[Region], Any], nthreads: int = 1) -> A:
    """Fill the new ``arr`` (zero chunks) one chunk per region, ``piece_of(region)`` giving
    its items (anything broadcastable to the region's shape); all-zero chunks stay special
    zero chunks. Returns ``arr``.

    With ``nthreads`` > 1, that many regions at a time are computed and compressed on the
    thread pool (``piece_of`` must then be safe to call from several threads), so at most
    ``nthreads`` pieces are in memory at once.

    >>> from .constructors import _new
    >>> a = fill_regions(_new((3, 4), "i4", (2, 2), (1, 2), {}), lambda r: r[0].start)
    >>> a[...]
    array([[0, 0, 0, 0],
           [0, 0, 0, 0],
           [2, 2, 2, 2]], dtype=int32)
    """
    if not arr.ndim:
        value = np.asarray(piece_of(()), arr.dtype).reshape(())
        arr.schunk.update_chunk(0, arr._compress(value))
        return arr
    if arr.size == 0:
        return arr
    writer = ChunkWriter(arr)

    def encoded(region: Region) -> bytes | None:
        return encode_region(arr, region, piece_of(region))

    regions = iter_regions(arr.shape, arr.chunks)
    first = 0
    while window := list(itertools.islice(regions, max(1, nthreads))):
        for n, chunk in enumerate(run_parallel(encoded, window, nthreads), first):
            if chunk is not None:
                writer.put(n, chunk)
        first += len(window)
    writer.flush()
    return arr


def encode_region(arr: ArrayCore, region: Region, piece: Any) -> bytes | None:
    """The chunk of ``arr`` covering ``region`` holding ``piece`` (anything broadcastable to
    the region's shape), compressed; None when it is all zero bytes (the new array's special
    zero chunk stays). An edge chunk is padded with zeros to whole blocks.

    >>> from .constructors import _new
    >>> a = _new((3,), "i2", (2,), (2,), {})
    >>> encode_region(a, (slice(0, 2),), 0) is None, len(encode_region(a, (slice(2, 3),), 7)) > 0
    (True, True)
    """
    shape = tuple(r.stop - r.start for r in region)
    data = np.broadcast_to(np.asarray(piece, arr.dtype), shape)
    if not data.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
        data = data.copy()
    if not data.reshape(-1).view(np.uint8).any():
        return None
    ext_shape = arr._geometry.ext
    if shape != ext_shape:
        ext = np.zeros(ext_shape, arr.dtype)
        ext[tuple(slice(0, k) for k in shape)] = data
        data = ext
    return arr._compress(data)


def fill_flat(arr: A, produce: Callable[[int, int], np.ndarray], c_order: bool) -> A:
    """Fill the empty ``arr`` from a flat sequence: ``produce(lo, hi)`` returns items
    ``lo..hi-1`` of it, called with increasing, contiguous ranges (so a one-pass iterator can
    back it). With ``c_order`` the items are laid out in C order (one row of chunks at a time
    in memory); otherwise each chunk takes the next items in storage order ("chunk order").

    >>> from .constructors import _new
    >>> a = _new((2, 4), "i8", (2, 2), (1, 2), {})
    >>> fill_flat(a, lambda lo, hi: np.arange(lo, hi), c_order=False)[...]
    array([[0, 1, 4, 5],
           [2, 3, 6, 7]])
    """
    if not arr.ndim:
        return fill_regions(arr, lambda region: produce(0, 1)[0])
    if not c_order:
        done = 0

        def chunk_order(region: Region) -> np.ndarray:
            nonlocal done
            shape = tuple(r.stop - r.start for r in region)
            count = math.prod(shape)
            items = produce(done, done + count)
            done += count
            return np.asarray(items, arr.dtype).reshape(shape)

        return fill_regions(arr, chunk_order)
    row = math.prod(arr.shape[1:])
    slab: dict[int, np.ndarray] = {}

    def c_ordered(region: Region) -> np.ndarray:
        r0 = region[0]
        if r0.start not in slab:  # a new row of chunks: produce its items
            slab.clear()
            items = produce(r0.start * row, r0.stop * row)
            slab[r0.start] = np.asarray(items, arr.dtype).reshape(
                (r0.stop - r0.start, *arr.shape[1:])
            )
        key = (slice(None), *region[1:])
        return slab[r0.start][key]

    return fill_regions(arr, c_ordered)
