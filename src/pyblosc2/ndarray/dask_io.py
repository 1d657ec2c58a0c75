"""Writing a dask array into a sparse-frame NDArray in parallel (frame-format.md §6).

A contiguous frame has one writer at a time: every change rewrites its index and trailer.
A sparse frame keeps one object per chunk, so :func:`from_dask` lets every dask task
compress its own block and write it as its own chunk object, concurrently and without a
lock, from threads, processes or cluster workers alike; when all are written, one commit
writes the index object that makes them live (until then the array reads as zeros, as
created). The result is an ordinary sparse ``.b2nd`` that python-blosc2 opens.

Reading needs nothing here: ``dask.array.from_array(nd, chunks=nd.chunks)`` works on any
NDArray, local or remote, because a pickled NDArray reopens its file or URL in each process.

dask is imported when :func:`from_dask` runs, never by ``import pyblosc2``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..chunk.header import ChunkHeader
from ..frame.edit import special_kind
from ..frame.index import SPECIAL_OFFSET_OF
from ..frame.sparse import chunk_name
from ..storage import Storage
from .constructors import empty
from .ndarray import NDArray

__all__ = ["from_dask"]


def _regular_chunks(chunks: tuple[tuple[int, ...], ...]) -> tuple[int, ...] | None:
    """The chunk shape when dask's chunks are a regular grid (all equal but the last)."""
    out = []
    for axis in chunks:
        first = axis[0] if axis else 0
        if any(c != first for c in axis[:-1]) or (axis and axis[-1] > first):
            return None
        out.append(max(first, 1))
    return tuple(out)


def from_dask(
    darr: Any,
    urlpath: str,
    *,
    contiguous: bool = False,
    chunks: tuple[int, ...] | None = None,
    blocks: tuple[int, ...] | None = None,
    mode: str = "w",
    **kwargs: Any,
) -> NDArray:
    """Store the dask array ``darr`` at ``urlpath`` (a local path or an fsspec URL) as a
    sparse-frame NDArray, each chunk compressed and written by the task that computes it.

    ``chunks`` default to ``darr``'s (which must then form a regular grid; other arrays are
    rechunked to ``chunks``); ``kwargs`` are those of :func:`~pyblosc2.empty` (``cparams``,
    ``meta``, ``storage_options``, ...). The computation runs on dask's current scheduler
    (threads, processes or a ``distributed`` client).

    >>> import dask.array as da, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "d.b2nd")
    >>> nd = from_dask(da.arange(10, chunks=4), path)
    >>> nd[...], nd.chunks, nd.schunk.contiguous
    (array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), (4,), False)
    """
    import dask

    if contiguous:
        raise NotImplementedError(
            "from_dask into a contiguous frame (its writers cannot run in parallel): use "
            "contiguous=False, or da.store(darr, nd) into an NDArray opened with locking=True"
        )
    if Storage(urlpath=urlpath, mode=mode).mode == "r":
        raise NotImplementedError("from_dask with mode='r'")
    regular = _regular_chunks(darr.chunks)
    if chunks is None:
        chunks = regular if regular is not None else tuple(max(c[0], 1) for c in darr.chunks)
    chunks = tuple(int(c) for c in chunks)
    if regular != chunks:
        darr = darr.rechunk(chunks)
    nd = empty(
        darr.shape,
        darr.dtype,
        chunks=chunks,
        blocks=blocks,
        urlpath=urlpath,
        contiguous=False,
        mode=mode,
        **kwargs,
    )
    if darr.size == 0 or not darr.ndim:
        if darr.size:
            nd[()] = np.asarray(darr.compute())
        return nd
    grid = nd._geometry.grid
    one = (1,) * darr.ndim
    meta = np.empty((0,) * darr.ndim, np.int64)
    written = darr.map_blocks(_write_chunk, nd, grid, dtype=np.int64, chunks=one, meta=meta)
    (offsets,) = dask.compute(written)
    _commit(nd, np.asarray(offsets, np.int64).reshape(-1), math.prod(grid))
    return nd


def _write_chunk(
    block: np.ndarray, nd: NDArray, grid: tuple[int, ...], block_info: Any = None
) -> np.ndarray:
    """A dask task: compress ``block`` as its chunk and write that chunk's object. Returns
    the chunk's index entry (its chunk id, or the offset of a special value)."""
    coords = block_info[0]["chunk-location"]
    n = int(np.ravel_multi_index(coords, grid))
    full = np.zeros(nd._geometry.ext, nd.dtype)
    full[tuple(slice(0, s) for s in block.shape)] = block
    chunk = nd._compress(full)
    kind = special_kind(ChunkHeader.from_bytes(chunk))
    if kind is not None:
        offset = int(SPECIAL_OFFSET_OF[kind])
    else:
        directory = nd.schunk._frame.directory
        assert directory is not None
        directory.write_object(chunk_name(n), chunk)
        offset = n
    return np.full((1,) * block.ndim, offset, np.int64)


def _commit(nd: NDArray, entries: np.ndarray, nchunks: int) -> None:
    """Make the written chunk objects live: one atomic replacement of the index object."""
    offsets = np.empty(nchunks, np.int64)
    offsets[:] = entries  # C order of the chunk grid, as dask's blocks were laid out
    frame = nd.schunk._frame
    with frame.writing():
        # the frame's one commit path, with every object already in place
        frame._commit(frame.header, offsets, frame.trailer, None, None)
