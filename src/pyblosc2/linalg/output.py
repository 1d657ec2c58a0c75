"""The NDArrays :mod:`pyblosc2.linalg` returns: created with the constructor keywords the
caller gave, then written one work region at a time (:func:`.plan.work_regions`), each chunk
compressed once and committed in batches, so a killed product leaves an array that opens (its
unwritten chunks zero) and the result is never whole in memory.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..errors import ParamError
from ..ndarray.chunkfill import ChunkWriter, Region, encode_region
from ..ndarray.constructors import _new
from ..ndarray.ndarray import NDArray
from ..ndarray.numpylike import compute_chunks_blocks
from .plan import work_regions

__all__ = ["RESULT_BLOCK_BYTES", "WRITE_BATCH_BYTES", "fill_by_work", "new_result", "result_blocks"]

#: compressed bytes of result chunks gathered before a commit
WRITE_BATCH_BYTES = 1 << 24
#: bytes of a result's block by default (streams of 64 KiB and more compress on threads)
RESULT_BLOCK_BYTES = 1 << 19


def result_blocks(chunks: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Blocks of at most :data:`RESULT_BLOCK_BYTES` for a result of ``chunks``: the leading
    axes halved first, so a block is a run of whole trailing rows where it can be.

    >>> result_blocks((125, 4000), 8), result_blocks((3, 5), 8), result_blocks((), 8)
    ((16, 4000), (3, 5), ())
    """
    blocks = [max(1, c) for c in chunks]
    d = 0
    while d < len(blocks) and math.prod(blocks) * itemsize > RESULT_BLOCK_BYTES:
        if blocks[d] == 1:
            d += 1
            continue
        blocks[d] = -(-blocks[d] // 2)
    return tuple(min(b, c) if c else 0 for b, c in zip(blocks, chunks, strict=True))


def new_result(shape: tuple[int, ...], dtype: np.dtype, kwargs: dict[str, Any]) -> NDArray:
    """A new NDArray of zero chunks for a result, with the constructor ``kwargs`` the caller
    gave (``chunks``, ``blocks``, ``urlpath``, ``mode``, ``cparams``...). By default the
    chunks are the automatic ones and the blocks (unless given) larger than the constructors'
    (:func:`result_blocks`): a result is written whole, chunk after chunk, where larger blocks
    compress on more threads.

    >>> new_result((2, 3), np.dtype("f8"), {"chunks": (1, 3)}).chunks
    (1, 3)
    """
    kw = dict(kwargs)
    if "dtype" in kw:
        raise ParamError(f"dtype is set by the operation ({dtype}), got dtype={kw['dtype']!r}")
    chunks, blocks = kw.pop("chunks", None), kw.pop("blocks", None)
    if blocks is None and all(shape):
        if chunks is None:
            chunks, _ = compute_chunks_blocks(shape, dtype=dtype)
        blocks = result_blocks(tuple(chunks), dtype.itemsize)
    return _new(shape, dtype, chunks, blocks, kw)


def fill_by_work(out: NDArray, compute: Callable[[Region], np.ndarray]) -> NDArray:
    """Fill ``out`` (new, zero chunks): ``compute(work)`` gives the items of each work
    region, which are compressed chunk by chunk (all-zero chunks stay special). Returns
    ``out``.

    >>> from pyblosc2 import zeros
    >>> rows = lambda w: np.arange(w[0].start, w[0].stop)[:, None]
    >>> fill_by_work(zeros((3, 2), "i4", chunks=(2, 2)), rows)[...].tolist()
    [[0, 0], [1, 1], [2, 2]]
    """
    if out.size == 0 and out.ndim:
        return out
    geo = out._geometry
    writer = ChunkWriter(out, WRITE_BATCH_BYTES)
    for work in work_regions(geo.shape, geo.chunks, geo.itemsize):
        items = np.broadcast_to(compute(work), tuple(w.stop - w.start for w in work))
        for region in _chunks_in(work, geo.chunks):
            local = tuple(
                slice(r.start - w.start, r.stop - w.start)
                for r, w in zip(region, work, strict=True)
            )
            chunk = encode_region(out, region, items[local])
            if chunk is not None:
                coords = tuple(r.start // c for r, c in zip(region, geo.chunks, strict=True))
                writer.put(int(np.ravel_multi_index(coords, geo.grid)) if coords else 0, chunk)
    writer.flush()
    return out


def _chunks_in(box: Region, chunks: tuple[int, ...]) -> Iterator[Region]:
    """The chunk regions inside ``box`` (its bounds on chunk boundaries or the array's end),
    in storage order.

    >>> list(_chunks_in((slice(2, 5),), (2,)))
    [(slice(2, 4, None),), (slice(4, 5, None),)]
    """
    ranges = [range(b.start, b.stop, c) for b, c in zip(box, chunks, strict=True)]
    for origin in itertools.product(*ranges):
        yield tuple(
            slice(o, min(o + c, b.stop)) for o, c, b in zip(origin, chunks, box, strict=True)
        )
