"""Module-level persistence helpers of python-blosc2 (``save``, ``load``, ``from_cframe``)
and ``get_slice_nchunks``: which chunks a slice of an SChunk or NDArray touches."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._bytes import BufferLike
from ..errors import ParamError
from ..frame.location import put_cframe, whole_at_url
from ..schunk import SChunk, schunk_from_cframe
from .constructors import copy, open
from .indexing import is_int_key, normalize_key
from .ndarray import NDArray

__all__ = ["from_cframe", "get_slice_nchunks", "load", "save"]


def save(
    array: NDArray, urlpath: str | os.PathLike[str], contiguous: bool = True, **kwargs: Any
) -> None:
    """Write a copy of ``array`` to ``urlpath`` (python-blosc2's ``save``; an existing file is
    replaced unless ``mode`` says otherwise). ``kwargs`` are those of :func:`copy`
    (``cparams``, ``chunks``, ...).

    >>> import tempfile
    >>> from .constructors import asarray
    >>> path = os.path.join(tempfile.mkdtemp(), "a.b2nd")
    >>> save(asarray(np.arange(4)), path)
    >>> open(path)[...]
    array([0, 1, 2, 3])
    """
    kwargs.setdefault("mode", "w")
    if whole_at_url(urlpath, {**kwargs, "contiguous": contiguous}):  # built here, written whole
        own = {k: v for k, v in kwargs.items() if k not in ("mode", "storage_options")}
        put_cframe(urlpath, copy(array, **own).to_cframe(), kwargs)
        return
    copy(array, urlpath=urlpath, contiguous=contiguous, **kwargs)


def from_cframe(cframe: BufferLike, copy: bool = True) -> SChunk | NDArray:
    """The container in an in-memory cframe: an :class:`NDArray` when it has a ``b2nd``
    metalayer, else an :class:`SChunk` (``copy=False`` references the bytes).

    >>> from .constructors import asarray
    >>> from_cframe(asarray(np.arange(3)).to_cframe())[...]
    array([0, 1, 2])
    >>> type(from_cframe(SChunk(data=b"abc").to_cframe())).__name__
    'SChunk'
    """
    schunk = schunk_from_cframe(cframe, copy)
    if "b2nd" in dict(schunk.header.metalayers):
        return NDArray(schunk)
    return schunk


def load(urlpath: str | os.PathLike[str], offset: int = 0, **kwargs: Any) -> SChunk | NDArray:
    """Read a whole container file into memory: the result has no ``urlpath`` and later
    changes to it do not touch the file (python-blosc2's ``load``).

    >>> import tempfile
    >>> from .constructors import asarray
    >>> path = os.path.join(tempfile.mkdtemp(), "a.b2nd")
    >>> _ = asarray(np.arange(3), urlpath=path, mode="w")
    >>> a = load(path); a.schunk.urlpath is None, a[...]
    (True, array([0, 1, 2]))
    """
    kwargs.setdefault("mode", "r")
    found = open(urlpath, offset=offset, **kwargs)
    schunk = found.schunk if isinstance(found, NDArray) else found
    return from_cframe(schunk.to_cframe(), copy=False)


def _flat_bounds(key: Any, nitems: int) -> tuple[int, int]:
    if is_int_key(key):
        start = int(key) + (nitems if int(key) < 0 else 0)
        return start, start + 1
    if isinstance(key, slice):
        if key.step not in (None, 1):
            raise ParamError(f"key must be a slice with step 1, got {key!r}")
        start, stop = key.start, key.stop
    elif isinstance(key, tuple | list) and len(key) == 2:
        start, stop = key
    else:
        raise ParamError(f"key must be an int, a slice or a (start, stop) pair, got {key!r}")
    return slice(start, stop).indices(nitems)[:2]


def get_slice_nchunks(
    container: SChunk | NDArray, key: int | slice | tuple[Any, ...] | Sequence[slice]
) -> np.ndarray:
    """The indexes (int64) of the chunks a slice touches: for an SChunk ``key`` is an int,
    a slice (step 1) or ``(start, stop)`` in items; for an NDArray one slice per dimension.

    >>> s = SChunk(chunksize=40, data=np.arange(100, dtype=np.int32))
    >>> get_slice_nchunks(s, (5, 25)).tolist(), get_slice_nchunks(s, slice(-1, None)).tolist()
    ([0, 1, 2], [9])
    >>> from .constructors import zeros
    >>> get_slice_nchunks(zeros((4, 4), chunks=(2, 2), blocks=(1, 1)), (slice(1, 3), 3)).tolist()
    [1, 3]
    """
    if isinstance(container, NDArray):
        ranges, _ = normalize_key(key, container.shape)
        if any(r.step not in (1, -1) and len(r) > 1 for r in ranges):
            raise ParamError(f"key must use step 1, got {key!r}")
        if any(len(r) == 0 for r in ranges):
            return np.empty(0, np.int64)
        lo = tuple(min(r[0], r[-1]) for r in ranges)
        hi = tuple(max(r[0], r[-1]) + 1 for r in ranges)
        return np.array(sorted(n for _, n in container._chunks_in(lo, hi)), np.int64)
    per_chunk = container.chunksize // container.typesize
    start, stop = _flat_bounds(key, container.nbytes // container.typesize)
    if stop <= start or not per_chunk:
        return np.empty(0, np.int64)
    return np.arange(start // per_chunk, -(-stop // per_chunk), dtype=np.int64)
