"""NumPy-like NDArray constructors and helpers of python-blosc2's module namespace (``eye``,
``fromiter``, ``meshgrid``, ``broadcast_to``, ``array``, ``expand_dims``, ``reshape``,
``*_like``, ``take``, ``sort`` ...). Every constructor builds its result chunk by chunk
(:mod:`.chunkfill`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ..errors import ParamError
from ..params import is_int, parse_choice, parse_int, refuse
from .b2nd_meta import MAX_DIM
from .chunkfill import Region, fill_flat, fill_regions
from .constructors import _new, asarray, empty, full, zeros
from .fancy import _normalize_axis, _normalize_indices, gather_flat, take_numpy
from .geometry import ShapeLike
from .ndarray import NDArray
from .partition import parse_geometry, parse_shape, resolve_shape
from .views import squeeze_view

__all__ = [
    "are_partitions_behaved",
    "argsort",
    "array",
    "broadcast_to",
    "compute_chunks_blocks",
    "empty_like",
    "expand_dims",
    "eye",
    "fromiter",
    "full_like",
    "meshgrid",
    "nans",
    "ones_like",
    "reshape",
    "sort",
    "squeeze",
    "take",
    "take_along_axis",
    "uninit",
    "zeros_like",
]


def eye(
    N: int, M: int | None = None, k: int = 0, dtype: DTypeLike = np.float64, **kwargs: Any
) -> NDArray:
    """A 2-d array with ones on the ``k``-th diagonal (``np.eye``); chunks off the diagonal
    are stored as special zero chunks.

    >>> eye(3, 4, k=1, dtype=np.int8)[...]
    array([[0, 1, 0, 0],
           [0, 0, 1, 0],
           [0, 0, 0, 1]], dtype=int8)
    """
    n = parse_int(N, "N", 0)
    m = n if M is None else parse_int(M, "M", 0)
    k = parse_int(k, "k")
    arr = _new((n, m), dtype, kwargs.pop("chunks", None), kwargs.pop("blocks", None), kwargs)

    def piece(region: Region) -> np.ndarray:
        rows = np.arange(region[0].start, region[0].stop)[:, None]
        cols = np.arange(region[1].start, region[1].stop)[None, :]
        return cols - rows == k

    return fill_regions(arr, piece)


def fromiter(
    iterable: Iterable[Any], shape: ShapeLike, dtype: DTypeLike, c_order: bool = True, **kwargs: Any
) -> NDArray:
    """An array from an iterable, consumed once and only as far as needed: in C order, or with
    ``c_order=False`` chunk after chunk in storage order (a numpy array of the right size is
    taken in C order either way). A too short iterable is refused.

    >>> fromiter(iter(range(6)), (2, 3), np.int16)[...]
    array([[0, 1, 2],
           [3, 4, 5]], dtype=int16)
    >>> fromiter(range(8), (2, 4), "i4", c_order=False, chunks=(2, 2), blocks=(1, 2))[...]
    array([[0, 1, 4, 5],
           [2, 3, 6, 7]], dtype=int32)
    """
    arr = _new(shape, dtype, kwargs.pop("chunks", None), kwargs.pop("blocks", None), kwargs)
    if isinstance(iterable, np.ndarray) and iterable.size == arr.size:
        # a numpy array is laid out as it is, whatever c_order (as python-blosc2 does)
        src = iterable.reshape(arr.shape) if arr.ndim else iterable.reshape(())
        return fill_regions(arr, lambda region: src[region] if region else src[()])
    it = iter(iterable)

    def produce(lo: int, hi: int) -> np.ndarray:
        try:
            return np.fromiter(it, arr.dtype, count=hi - lo)
        except ValueError as exc:
            raise ParamError(
                f"iterable must give {arr.size} items (shape {arr.shape}), it ended early: {exc}"
            ) from None

    return fill_flat(arr, produce, c_order)


def _read(src: Any, region: tuple[slice, ...]) -> np.ndarray:
    return np.asarray(src[region])


def broadcast_to(arr: Any, shape: ShapeLike) -> NDArray:
    """``arr`` (an NDArray or array-like) broadcast to ``shape`` as a new NDArray; shapes that
    do not broadcast raise ``ValueError`` as in numpy.

    >>> broadcast_to(np.arange(3), (2, 3))[...]
    array([[0, 1, 2],
           [0, 1, 2]])
    """
    src = arr if isinstance(arr, NDArray) else np.asarray(arr)
    target = parse_shape(shape, "shape", 0)
    try:
        fits = np.broadcast_shapes(src.shape, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise ParamError(f"an array of shape {src.shape} cannot be broadcast to shape {target}")
    lead = len(target) - len(src.shape)
    out = _new(target, src.dtype, None, None, {})

    def piece(region: Region) -> np.ndarray:
        sub = tuple(
            slice(0, 1) if n == 1 else r for r, n in zip(region[lead:], src.shape, strict=True)
        )
        return _read(src, sub) if sub else np.asarray(src[()])

    return fill_regions(out, piece)


def meshgrid(*arrays: Any, indexing: str = "xy") -> list[NDArray]:
    """Coordinate arrays from coordinate vectors (``np.meshgrid``), one NDArray each.

    >>> [g[...].tolist() for g in meshgrid(np.arange(2), np.arange(3))]
    [[[0, 1], [0, 1], [0, 1]], [[0, 0], [1, 1], [2, 2]]]
    """
    indexing = parse_choice(indexing, "indexing", ("xy", "ij"))
    vecs = [
        a
        if isinstance(a, NDArray) and a.ndim == 1
        else np.asarray(a[...] if isinstance(a, NDArray) else a).reshape(-1)
        for a in arrays
    ]
    shape = [len(v) for v in vecs]
    axes = list(range(len(vecs)))
    if indexing == "xy" and len(vecs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
        axes[0], axes[1] = 1, 0
    grids = []
    for v, axis in zip(vecs, axes, strict=True):

        def piece(region: Region, v: Any = v, axis: int = axis) -> np.ndarray:
            part = _read(v, (region[axis],))
            return part.reshape([-1 if d == axis else 1 for d in range(len(region))])

        grids.append(fill_regions(_new(tuple(shape), v.dtype, None, None, {}), piece))
    return grids


def array(obj: Any, copy: bool | None = True, **kwargs: Any) -> NDArray:
    """python-blosc2's ``array``: like :func:`asarray` but copying an NDArray by default;
    ``copy=False`` refuses a change of dtype, partition or storage.

    >>> a = asarray([1, 2, 3])
    >>> array(a) is a, array(a, copy=False) is a
    (False, True)
    """
    return asarray(obj, copy=copy, **kwargs)


def expand_dims(array: Any, axis: int | tuple[int, ...] = 0) -> NDArray:
    """A view of ``array`` with length-1 axes inserted at ``axis`` (``np.expand_dims``);
    another array-like is stored as an NDArray first (as python-blosc2 does).

    The view shares the data: a length-1 axis of chunk and block length 1 does not change
    where any item is stored (frame-format.md §8.4), so the view is the same super-chunk
    described by another shape. It keeps a reference to the array owning the data.

    >>> a = asarray(np.arange(6).reshape(2, 3))
    >>> v = expand_dims(a, (0, 3))
    >>> v.shape, v[0, 1, :, 0]
    ((1, 2, 3, 1), array([3, 4, 5]))
    """
    if not isinstance(array, NDArray):
        array = asarray(array)
    axes = (axis,) if is_int(axis) else tuple(axis)  # type: ignore[arg-type]
    ndim = array.ndim + len(axes)
    if ndim > MAX_DIM:
        refuse("axis", f"at most {MAX_DIM - array.ndim} new axes (MAX_DIM={MAX_DIM})", axis)
    norm = sorted(parse_int(a, "axis", -ndim, ndim - 1) % ndim for a in axes)
    if len(set(norm)) != len(norm):
        refuse("axis", "distinct axes", axis)
    shape, chunks, blocks = list(array.shape), list(array.chunks), list(array.blocks)
    for a in norm:
        for part in (shape, chunks, blocks):
            part.insert(a, 1)
    meta = replace(
        array._geometry.to_meta(), shape=tuple(shape), chunks=tuple(chunks), blocks=tuple(blocks)
    )
    added = [d in array._axes for d in range(array.ndim)]  # the axes the stored array lacks
    for a in norm:
        added.insert(a, True)
    axes = tuple(d for d, a in enumerate(added) if a)
    view = NDArray(array.schunk, meta, _validate=False, _axes=axes, _dropped=array._dropped)
    base = getattr(array, "_base", None)
    view._base = array if base is None else base  # type: ignore[attr-defined]
    return view


def squeeze(x: Any, axis: int | Sequence[int] | None = None) -> NDArray:
    """A view of ``x`` without its length-1 axes ``axis`` (all of them by default), as
    ``np.squeeze``; another array-like is stored as an NDArray first. An axis of length 1
    chunked longer than 1 cannot be dropped from a view: ``NotImplementedError`` (see
    :mod:`.views`).

    >>> a = asarray(np.arange(6).reshape(1, 2, 3, 1))
    >>> squeeze(a, 0).shape, squeeze(a).shape, squeeze(a, (0, -1))[1]
    ((2, 3, 1), (2, 3), array([3, 4, 5]))
    """
    return squeeze_view(x if isinstance(x, NDArray) else asarray(x), axis)


def reshape(src: Any, shape: ShapeLike, c_order: bool = True, **kwargs: Any) -> NDArray:
    """A new array with the items of ``src`` (an NDArray or array-like) in a new ``shape``
    (one entry may be -1), read and written chunk by chunk. ``c_order=False`` lays the items
    out chunk after chunk in storage order instead of in C order.

    >>> reshape(asarray(np.arange(6)), (2, -1))[...]
    array([[0, 1, 2],
           [3, 4, 5]])
    """
    src = src if isinstance(src, NDArray) else np.asarray(src)
    new = resolve_shape(src.size, shape)
    arr = _new(new, src.dtype, kwargs.pop("chunks", None), kwargs.pop("blocks", None), kwargs)
    row = math.prod(src.shape[1:]) if src.ndim else 1

    def produce(lo: int, hi: int) -> np.ndarray:
        if not src.ndim:
            return np.asarray(src[()]).reshape(1)
        r0, r1 = lo // row, -(-hi // row)
        rows = _read(src, (slice(r0, r1),)).reshape(-1)
        return rows[lo - r0 * row : hi - r0 * row]

    return fill_flat(arr, produce, c_order)


def nans(shape: ShapeLike, dtype: DTypeLike = np.float64, **kwargs: Any) -> NDArray:
    """An array of NaNs (a floating dtype).

    >>> nans(2)[...]
    array([nan, nan])
    """
    if np.dtype(dtype).kind not in "fc":
        refuse("dtype", "a floating or complex dtype", dtype)
    return full(shape, np.nan, dtype, **kwargs)


def uninit(shape: ShapeLike, dtype: DTypeLike = np.float64, **kwargs: Any) -> NDArray:
    """An array whose items are unspecified (python-blosc2's ``uninit``; here as
    :func:`empty`).

    >>> uninit((2, 2), np.int8).shape
    (2, 2)
    """
    return empty(shape, dtype, **kwargs)


def _like(x: Any, dtype: DTypeLike | None, kwargs: dict[str, Any]) -> tuple[Any, np.dtype]:
    shape = kwargs.pop("shape", None)
    if shape is None:
        shape = x.shape
        if isinstance(x, NDArray):
            kwargs.setdefault("chunks", x.chunks)
            kwargs.setdefault("blocks", x.blocks)
    return shape, np.dtype(x.dtype if dtype is None else dtype)


def empty_like(x: Any, dtype: DTypeLike | None = None, **kwargs: Any) -> NDArray:
    """An empty array with the shape (and dtype, partition) of ``x``.

    >>> empty_like(np.zeros((2, 3), np.int8)).shape
    (2, 3)
    """
    shape, dt = _like(x, dtype, kwargs)
    return empty(shape, dt, **kwargs)


def zeros_like(x: Any, dtype: DTypeLike | None = None, **kwargs: Any) -> NDArray:
    """Zeros with the shape (and dtype, partition) of ``x``.

    >>> zeros_like(asarray(np.arange(3)))[...]
    array([0, 0, 0])
    """
    shape, dt = _like(x, dtype, kwargs)
    return zeros(shape, dt, **kwargs)


def ones_like(x: Any, dtype: DTypeLike | None = None, **kwargs: Any) -> NDArray:
    """Ones with the shape (and dtype, partition) of ``x``.

    >>> ones_like(np.zeros(2, np.float32))[...]
    array([1., 1.], dtype=float32)
    """
    shape, dt = _like(x, dtype, kwargs)
    return full(shape, 1, dt, **kwargs)


def full_like(x: Any, fill_value: Any, dtype: DTypeLike | None = None, **kwargs: Any) -> NDArray:
    """``fill_value`` with the shape (and dtype, partition) of ``x``.

    >>> full_like(np.zeros(2, np.int16), 7)[...]
    array([7, 7], dtype=int16)
    """
    shape, dt = _like(x, dtype, kwargs)
    return full(shape, fill_value, dt, **kwargs)


def are_partitions_aligned(shape: ShapeLike, chunks: ShapeLike, blocks: ShapeLike) -> bool:
    """Whether chunks divide the shape and blocks divide the chunks, in every dimension.

    >>> are_partitions_aligned((12,), (4,), (2,)), are_partitions_aligned((10, 8), (4, 4), (3, 2))
    (True, False)
    """
    sh, ch, bl = (
        parse_shape(v, n, 0) for v, n in ((shape, "shape"), (chunks, "chunks"), (blocks, "blocks"))
    )
    return all(c and s % c == 0 for s, c in zip(sh, ch, strict=True)) and all(
        b and c % b == 0 for c, b in zip(ch, bl, strict=True)
    )


def are_partitions_behaved(shape: ShapeLike, chunks: ShapeLike, blocks: ShapeLike) -> bool:
    """Whether blocks tile chunks and chunks tile the array so that each is a C-contiguous
    run of its container (same last dimension, the others dividing evenly).

    >>> are_partitions_behaved((10, 10), (5, 10), (1, 10)), are_partitions_behaved(8, 3, 3)
    (True, False)
    """
    sh, ch, bl = (
        parse_shape(v, n, 0) for v, n in ((shape, "shape"), (chunks, "chunks"), (blocks, "blocks"))
    )

    def contiguous(outer: tuple[int, ...], inner: tuple[int, ...]) -> bool:
        if outer and outer[-1] != inner[-1]:
            return False
        return all(u and o % u == 0 for o, u in zip(outer[:-1], inner[:-1], strict=True))

    return contiguous(ch, bl) and contiguous(sh, ch)


def compute_chunks_blocks(
    shape: ShapeLike,
    chunks: ShapeLike | None = None,
    blocks: ShapeLike | None = None,
    dtype: DTypeLike = np.uint8,
    **kwargs: Any,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ``(chunks, blocks)`` a new array of ``shape`` and ``dtype`` gets (pyblosc2's
    automatic partition where not given; it may differ from python-blosc2's choice).

    >>> compute_chunks_blocks((100, 100), dtype=np.float64)
    ((100, 100), (50, 100))
    """
    _, _, c, b = parse_geometry(shape, dtype, chunks, blocks)
    return c, b


def sort(a: NDArray, order: str | list[str] | None = None, **kwargs: Any) -> NDArray:
    """``a`` (a 1-d NDArray) sorted, as a new NDArray (see :meth:`NDArray.sort`).

    >>> from pyblosc2 import asarray
    >>> sort(asarray(np.array([3, 1, 2])))[...]
    array([1, 2, 3])
    """
    return _as_nd(a).sort(order=order, **kwargs)


def argsort(a: NDArray, order: str | list[str] | None = None, **kwargs: Any) -> NDArray:
    """The stable sorting permutation of ``a`` (1-d) as a new NDArray.

    >>> from pyblosc2 import asarray
    >>> argsort(asarray(np.array([3, 1, 2])))[...]
    array([1, 2, 0])
    """
    return _as_nd(a).argsort(order=order, **kwargs)


def _as_nd(a: Any) -> NDArray:
    return a if isinstance(a, NDArray) else asarray(a)


def take(a: NDArray, indices: Any, axis: int | None = None) -> NDArray:
    """numpy's ``take`` on an NDArray, as a new NDArray: with ``axis=None`` items of the
    flattened array (the result has the shape of ``indices``), else the indexed axis is
    replaced by the shape of ``indices``.

    >>> from pyblosc2 import asarray
    >>> a = asarray(np.arange(12).reshape(3, 4))
    >>> take(a, [[0, -1]])[...]
    array([[ 0, 11]])
    >>> take(a, [2, 0], axis=1)[...]
    array([[ 2,  0],
           [ 6,  4],
           [10,  8]])
    """
    if getattr(a, "_takes_rows", False):  # a CTable or a Column: rows, in their own type
        if axis is not None:
            raise ParamError("take of a CTable or a Column takes rows: axis is not supported")
        return a.take(indices)
    return asarray(take_numpy(a, indices, axis))


def take_along_axis(a: NDArray, indices: Any, axis: int) -> NDArray:
    """numpy's ``take_along_axis`` on an NDArray, as a new NDArray.

    >>> from pyblosc2 import asarray
    >>> a = asarray(np.array([[10, 30, 20], [60, 40, 50]]))
    >>> take_along_axis(a, np.array([[0], [1]]), axis=1)[...]
    array([[10],
           [40]])
    """
    ax = _normalize_axis(axis, a.ndim)
    idx = _normalize_indices(indices, a.shape[ax])
    if idx.ndim != a.ndim:
        raise ParamError(f"indices must have {a.ndim} dimensions, got {idx.ndim}")
    shape = np.broadcast_shapes(
        tuple(1 if d == ax else n for d, n in enumerate(a.shape)), idx.shape
    )
    shape = shape[:ax] + idx.shape[ax : ax + 1] + shape[ax + 1 :]
    idx = np.broadcast_to(idx, shape)
    grids = list(np.ogrid[tuple(slice(0, n) for n in shape)])
    grids[ax] = idx
    flat = np.ravel_multi_index(np.broadcast_arrays(*grids), a.shape)
    return asarray(gather_flat(a, flat))
