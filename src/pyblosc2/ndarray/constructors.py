"""The public NDArray constructors: empty/zeros/full/ones from special chunks, asarray from
numpy, copy, open and from-cframe. They bind the storage builders of :mod:`.build` to
:class:`~pyblosc2.NDArray`, above the class (its own methods use the builders directly)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._bytes import BufferLike
from ..constants import SpecialValue
from ..schunk import SChunk
from .build import asarray_of, copy_of, empty_of, new_array
from .geometry import ShapeLike
from .ndarray import NDArray

__all__ = [
    "asarray",
    "copy",
    "empty",
    "full",
    "ndarray_from_cframe",
    "ones",
    "open",
    "zeros",
]


def _new(
    shape: ShapeLike,
    dtype: DTypeLike,
    chunks: ShapeLike | None,
    blocks: ShapeLike | None,
    kwargs: dict[str, Any],
) -> NDArray:
    """A new NDArray of zero chunks (:func:`.build.new_array`), for the constructors that
    fill it themselves (:mod:`.chunkfill`)."""
    return new_array(NDArray, shape, dtype, chunks, blocks, kwargs)


def empty(
    shape: ShapeLike,
    dtype: DTypeLike = np.float64,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> NDArray:
    """An array whose items are unspecified (stored as zeros, as special chunks).

    ``chunks``/``blocks`` default to the automatic partition; ``kwargs`` are those of
    :class:`~pyblosc2.SChunk` (``urlpath``, ``mode``, ``cparams``, ``meta``, ...).

    >>> a = empty((4, 5), np.int32)
    >>> a.shape, a.dtype
    ((4, 5), dtype('int32'))
    """
    return empty_of(NDArray, shape, dtype, chunks, blocks, **kwargs)


def zeros(
    shape: ShapeLike,
    dtype: DTypeLike = np.float64,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> NDArray:
    """An array of zeros (special-value chunks: nothing is stored).

    >>> a = zeros((3, 4), np.uint8, chunks=(2, 4), blocks=(1, 4))
    >>> a[...].sum(), a.schunk.nchunks
    (np.uint64(0), 2)
    """
    return empty_of(NDArray, shape, dtype, chunks, blocks, **kwargs)


def full(
    shape: ShapeLike,
    fill_value: Any,
    dtype: DTypeLike | None = None,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> NDArray:
    """An array filled with ``fill_value`` (repeated-value chunks); ``dtype`` defaults to
    the one of ``fill_value``.

    >>> full((2, 3), 7.5)[...]
    array([[7.5, 7.5, 7.5],
           [7.5, 7.5, 7.5]])
    >>> full(4, "ab").dtype
    dtype('<U2')
    """
    dtype = np.asarray(fill_value).dtype if dtype is None else dtype
    zero = np.asarray(fill_value, dtype).tobytes() == bytes(np.dtype(dtype).itemsize)
    kind = SpecialValue.ZERO if zero else SpecialValue.VALUE
    return new_array(NDArray, shape, dtype, chunks, blocks, kwargs, kind, fill_value)


def ones(
    shape: ShapeLike,
    dtype: DTypeLike = np.float64,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> NDArray:
    """An array of ones.

    >>> ones((2, 2), np.int8)[...]
    array([[1, 1],
           [1, 1]], dtype=int8)
    """
    return full(shape, 1, dtype, chunks, blocks, **kwargs)


def asarray(
    array: ArrayLike,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    **kwargs: Any,
) -> NDArray:
    """Store a numpy array (or anything ``np.asarray`` accepts) as an NDArray; ``kwargs``
    are those of :class:`~pyblosc2.SChunk` (``urlpath``, ``mode``, ``cparams``, ``meta``...)
    plus ``dtype`` and ``copy``.

    An NDArray is returned as is unless a copy is asked for (``copy=True``) or needed (another
    dtype, partition or storage); ``copy=False`` refuses the latter. It is copied chunk by
    chunk, keeping its chunks and blocks unless others are given.

    >>> a = asarray(np.arange(12).reshape(3, 4), chunks=(2, 2), blocks=(1, 2),
    ...             cparams={"clevel": 9, "nthreads": 1})
    >>> a[1:, 1:3]
    array([[ 5,  6],
           [ 9, 10]])
    >>> asarray([[1.5, 2.5]]).shape
    (1, 2)
    >>> asarray(a) is a, asarray(a, dtype=np.int8).dtype
    (True, dtype('int8'))
    """
    return asarray_of(NDArray, array, chunks, blocks, **kwargs)


def copy(
    arr: NDArray, chunks: ShapeLike | None = None, blocks: ShapeLike | None = None, **kwargs: Any
) -> NDArray:
    """A copy of ``arr`` with new storage, chunks, blocks, dtype or cparams, made chunk by
    chunk; its other metalayers and its vlmeta are copied too (as python-blosc2 does).

    >>> a = asarray(np.arange(10)); a.vlmeta["name"] = "a"
    >>> b = copy(a, chunks=(5,), blocks=(5,))
    >>> b.chunks, b[4:7], b.vlmeta["name"]
    ((5,), array([4, 5, 6]), 'a')
    """
    return copy_of(arr, chunks, blocks, **kwargs)


def open(urlpath: Any, mode: str = "r", offset: int = 0, **kwargs: Any) -> SChunk | NDArray:
    """Open a frame: an :class:`NDArray` when it has a ``b2nd`` metalayer, else an SChunk.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "a.b2nd")
    >>> _ = asarray(np.arange(10), urlpath=path)
    >>> open(path)[3:5]
    array([3, 4])
    """
    from ..schunk import open as open_schunk

    schunk = open_schunk(urlpath, mode, offset, **kwargs)
    if "b2nd" in dict(schunk.header.metalayers):
        return NDArray(schunk)
    return schunk


def ndarray_from_cframe(cframe: BufferLike, copy: bool = False) -> NDArray:
    """An NDArray over an in-memory cframe with a ``b2nd`` metalayer (``copy=True`` copies the
    bytes instead of referencing them).

    >>> cframe = asarray(np.arange(6, dtype=np.float32).reshape(2, 3)).to_cframe()
    >>> ndarray_from_cframe(cframe)[1]
    array([3., 4., 5.], dtype=float32)
    """
    from ..schunk import schunk_from_cframe

    return NDArray(schunk_from_cframe(cframe, copy))
