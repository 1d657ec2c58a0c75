"""Writing a dask array into a sparse-frame NDArray in parallel (frame-format.md §6).

A contiguous frame has one writer at a time: every change rewrites its index and trailer.
A sparse frame keeps one object per chunk, so :func:`from_dask` lets every dask task
compress its own block and write it as its own chunk object, concurrently and without a
lock, from threads, processes or cluster workers alike; when all are written, one commit
writes the index object that makes them live (until then the array reads as zeros, as
created). The result is an ordinary sparse ``.b2nd`` that python-blosc2 opens.

A kill at any moment leaves a directory that opens: a new array is created whole (zero
chunks) before any task runs; over an existing sparse frame (``mode="w"``) the new array's
header is made in a directory beside it, the tasks write their objects under ids no live
chunk uses, and the one commit replaces the index object, so the old content stays live
until then (objects of a killed run are left unreferenced; the next change may reuse their
ids).

Reading needs nothing here: ``dask.array.from_array(nd, chunks=nd.chunks)`` works on any
NDArray, local or remote, because a pickled NDArray reopens its file or URL in each process.

dask is imported when :func:`from_dask` runs, never by ``import pyblosc2``.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import numpy as np

from ..backends.base import ObjectStore
from ..chunk.header import ChunkHeader
from ..errors import FormatError
from ..frame.edit import special_kind
from ..frame.frame import Frame
from ..frame.index import SPECIAL_OFFSET_OF
from ..frame.location import is_url, local_path, open_frame, remove_urlpath
from ..frame.sparse import chunk_name, next_chunk_id
from ..storage import Storage
from .constructors import empty, open
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
    target = _existing_sparse(urlpath, bool(kwargs.get("locking"))) if mode == "w" else None
    if target is None:
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
        frame, base, template = nd.schunk._frame, 0, None
    else:  # the new header made beside; the old content stays live until the commit
        frame, template = target, f"{urlpath}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"
        nd = empty(
            darr.shape,
            darr.dtype,
            chunks=chunks,
            blocks=blocks,
            urlpath=template,
            contiguous=False,
            mode="w",
            **kwargs,
        )
        base = next_chunk_id(target.offsets)
    assert frame.directory is not None
    try:
        if darr.size == 0:
            entries = np.empty(0, np.int64)
        elif not darr.ndim:
            value = np.asarray(darr.compute(), nd.dtype).reshape(())
            entries = np.array([_put_chunk(value, nd, 0, frame.directory, base)], np.int64)
        else:
            grid = nd._geometry.grid
            one = (1,) * darr.ndim
            meta = np.empty((0,) * darr.ndim, np.int64)
            written = darr.map_blocks(
                _write_chunk, nd, grid, frame.directory, base, dtype=np.int64, chunks=one, meta=meta
            )
            (entries,) = dask.compute(written)
        _commit(frame, nd, np.asarray(entries, np.int64).reshape(-1))
    finally:
        if template is not None:
            nd.schunk._frame.close()
            remove_urlpath(template)
    if target is None:
        return nd
    frame.close()
    locking = {k: kwargs[k] for k in ("locking",) if k in kwargs}
    return open(urlpath, mode="a", **locking)  # type: ignore[return-value]


def _existing_sparse(urlpath: str, locking: bool) -> Frame | None:
    """The sparse frame at the local ``urlpath``, or None when there is none (then a new one
    is created in its place; a file or a directory that does not open is removed first)."""
    path = local_path(urlpath)
    if is_url(urlpath) or not os.path.isdir(path):
        return None
    try:
        return open_frame(path, Storage(urlpath=path, mode="a", locking=locking))
    except (FormatError, FileNotFoundError):
        return None


def _write_chunk(
    block: np.ndarray,
    nd: NDArray,
    grid: tuple[int, ...],
    directory: ObjectStore,
    base: int,
    block_info: Any = None,
) -> np.ndarray:
    """A dask task: the chunk of ``block`` written (:func:`_put_chunk`); returns its index
    entry as a one-item block."""
    n = int(np.ravel_multi_index(block_info[0]["chunk-location"], grid))
    return np.full((1,) * block.ndim, _put_chunk(block, nd, n, directory, base), np.int64)


def _put_chunk(block: np.ndarray, nd: NDArray, n: int, directory: ObjectStore, base: int) -> int:
    """Compress ``block`` as chunk ``n`` of ``nd`` and write its object (id ``base + n``);
    returns its index entry (its chunk id, or the offset of a special value)."""
    full = np.zeros(nd._geometry.ext, nd.dtype)
    full[tuple(slice(0, s) for s in block.shape)] = block
    chunk = nd._compress(full)
    kind = special_kind(ChunkHeader.from_bytes(chunk))
    if kind is not None:
        return int(SPECIAL_OFFSET_OF[kind])
    directory.write_object(chunk_name(base + n), chunk)
    return base + n


def _commit(frame: Frame, nd: NDArray, offsets: np.ndarray) -> None:
    """Make the written chunk objects live: one atomic replacement of the index object of
    ``frame``, with ``nd``'s header and vlmeta (the array made for them: ``frame``'s own, or
    one made beside it); the objects only the old index used are removed after."""
    made = nd.schunk._frame
    with frame.writing():
        # the frame's one commit path, with every object already in place
        frame._commit(made.header, offsets, made.trailer, None, None)
