"""NumPy's advanced indexing over an NDArray: integer and boolean arrays (lists, numpy
arrays or NDArrays), ``None``, scalar booleans, strided slices, orthogonal selections
(``oindex``) and point gathers (``take``).

Two mechanisms, both reading through :func:`~pyblosc2.ndarray.reader.read_box` so only the
chunks (or blocks) a selection touches are decoded:

* a **bounding box**: each key entry is replaced by its extent over its axis, that box is
  read, and the key — translated into the box's coordinates, entry by entry, so numpy's own
  rules for broadcasting and placing advanced dimensions apply unchanged — selects from it;
  assignments write the box back.
* a **gather** of flat (C-order) item indices: the indices are grouped by chunk, and each
  chunk's items are read block by block (only the blocks holding one of them) or, when they
  touch more than half of a chunk's blocks, as the whole chunk (b2nd layout,
  frame-format.md §8.3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import BoundsError, ParamError, ParamTypeError
from ..params import is_int
from .core import ArrayCore
from .indexing import is_int_key
from .keys import _SUBSAMPLE_GATHER_MAX_COORDS
from .reader import read_box

__all__ = ["OIndex", "gather_flat", "getitem", "setitem", "take_numpy"]

_VALID = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)


def _is_scalar_bool(k: Any) -> bool:
    return isinstance(k, bool | np.bool_) or (
        isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype == np.bool_
    )


def _unwrap(k: Any) -> Any:
    """NDArrays and lists as numpy arrays (an empty list is an empty integer index)."""
    if isinstance(k, ArrayCore):
        return k[()]
    if isinstance(k, list):
        arr = np.asarray(k)
        return arr.astype(np.intp) if arr.size == 0 else arr
    return k


def _expand(key: Any, ndim: int) -> list[Any]:
    """The key's entries with NDArrays/lists as numpy arrays and Ellipsis expanded."""
    items = [_unwrap(k) for k in (key if isinstance(key, tuple) else (key,))]

    def width(k: Any) -> int:
        if k is None or k is Ellipsis or _is_scalar_bool(k):
            return 0
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            return k.ndim
        return 1

    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(width(k) for k in items)
    if used > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed"
        )
    fill = [slice(None)] * (ndim - used)
    pos = next((i for i, k in enumerate(items) if k is Ellipsis), len(items))
    return items[:pos] + fill + items[pos + 1 :]


def _translate(items: list[Any], shape: tuple[int, ...]) -> tuple[list[slice], list[Any]]:
    """The bounding box (one slice per axis) of expanded key entries, and the entries
    translated into that box's coordinates."""
    box: list[slice] = []
    local: list[Any] = []
    for k in items:
        d = len(box)
        if k is None or _is_scalar_bool(k):
            local.append(k)
        elif isinstance(k, slice):
            r = range(*k.indices(shape[d]))
            if not r:
                box.append(slice(0, 0))
                local.append(slice(0, 0))
                continue
            a, b = min(r[0], r[-1]), max(r[0], r[-1]) + 1
            box.append(slice(a, b))
            stop = r[-1] - a + (1 if r.step > 0 else -1)
            local.append(slice(r[0] - a, None if stop < 0 else stop, r.step))
        elif is_int_key(k) or (isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype.kind in "iu"):
            n, i = shape[d], int(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
            box.append(slice(i % n, i % n + 1))
            local.append(0)
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_:
            for j, (m, n) in enumerate(zip(k.shape, shape[d : d + k.ndim], strict=True)):
                if m not in (0, n):  # numpy lets an empty boolean axis through
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {d + j}; size "
                        f"of axis is {n} but size of corresponding boolean axis is {m}"
                    )
            nz = np.nonzero(k)
            ext = [slice(int(c.min()), int(c.max()) + 1) if c.size else slice(0, 0) for c in nz]
            box.extend(ext)
            local.append(k[tuple(ext)])
        elif isinstance(k, np.ndarray) and k.dtype.kind in "iu":
            n = shape[d]
            idx = k.astype(np.intp)
            bad = (idx < -n) | (idx >= n)
            if bad.any():
                raise IndexError(
                    f"index {int(idx[bad].flat[0])} is out of bounds for axis {d} with size {n}"
                )
            idx = np.where(idx < 0, idx + n, idx)
            lo = int(idx.min()) if idx.size else 0
            box.append(slice(lo, int(idx.max()) + 1 if idx.size else 0))
            local.append(idx - lo)
        else:
            raise IndexError(_VALID)
    return box, local


def _read(arr: ArrayCore, box: list[slice]) -> np.ndarray:
    if not arr.ndim:
        return read_box(arr, (), ())
    return read_box(arr, tuple(s.start for s in box), tuple(s.stop for s in box))


def _strided_gather(arr: ArrayCore, items: list[Any]) -> np.ndarray | None:
    """A coarse strided selection (positive steps, one at least a block long, at most
    ``_SUBSAMPLE_GATHER_MAX_COORDS`` items) read by gathering its items, else None."""
    if not all(k is None or is_int_key(k) or isinstance(k, slice) for k in items):
        return None
    axes = [k for k in items if k is not None]
    if not axes:
        return None
    pos, out_shape = [], []
    coarse = False
    for d, k in enumerate(axes):
        n = arr.shape[d]
        if isinstance(k, slice):
            r = range(*k.indices(n))
            if r.step <= 0:
                return None
            coarse |= r.step > 1 and r.step >= arr.blocks[d]
            pos.append(np.arange(r.start, r.stop, r.step, dtype=np.int64))
        else:
            if not -n <= k < n:
                return None  # the box path raises numpy's IndexError
            pos.append(np.array([int(k) % n], dtype=np.int64))
    count = math.prod(p.size for p in pos)
    if not coarse or not 0 < count <= _SUBSAMPLE_GATHER_MAX_COORDS:
        return None
    flat = np.ravel_multi_index(np.ix_(*pos), arr.shape).reshape(-1)
    d = 0
    for k in items:
        if k is None:
            out_shape.append(1)
        else:
            if isinstance(k, slice):
                out_shape.append(pos[d].size)
            d += 1
    return gather_flat(arr, flat).reshape(out_shape)


def getitem(arr: ArrayCore, key: Any) -> Any:
    """``arr[key]`` for any numpy key but a field name (the basic read path serves simple
    boxes itself).

    >>> from pyblosc2 import asarray
    >>> a = asarray(np.arange(20).reshape(4, 5), chunks=(2, 2), blocks=(1, 2))
    >>> a[[3, 0], 1:3]
    array([[16, 17],
           [ 1,  2]])
    >>> a[a[:, 0] > 5, None, -1]
    array([[14],
           [19]])
    """
    items = _expand(key, arr.ndim)
    gathered = _strided_gather(arr, items)
    if gathered is not None:
        return gathered
    k = items[0] if items else None
    if not isinstance(key, tuple) and isinstance(k, np.ndarray) and k.ndim:  # one array key
        if k.dtype == np.bool_ and k.shape == arr.shape:
            if np.count_nonzero(k) * 8 <= k.size:  # sparse: gather the items, not the box
                return gather_flat(arr, np.flatnonzero(k))
        elif k.dtype.kind in "iu":
            return take_numpy(arr, k, axis=None if arr.ndim == 1 else 0)
    points = _point_gather(arr, items)
    if points is not None:
        return points
    box, local = _translate(items, arr.shape)
    return _read(arr, box)[tuple(local)]


def _point_gather(arr: ArrayCore, items: list[Any]) -> np.ndarray | None:
    """A key of integer arrays (and ints) on every axis picks points: gather them instead
    of reading their bounding box; None for other keys."""
    if not items or not all(
        is_int_key(k) or (isinstance(k, np.ndarray) and k.dtype.kind in "iu") for k in items
    ):
        return None
    if all(is_int_key(k) for k in items):
        return None
    idx = []
    for d, k in enumerate(items):
        n = arr.shape[d]
        a = np.asarray(k, dtype=np.int64)
        bad = (a < -n) | (a >= n)
        if bad.any():
            raise IndexError(
                f"index {int(a[bad].flat[0])} is out of bounds for axis {d} with size {n}"
            )
        idx.append(np.where(a < 0, a + n, a))
    try:
        idx = list(np.broadcast_arrays(*idx))
    except ValueError as exc:
        raise IndexError(f"shape mismatch: {exc}") from None
    flat = np.ravel_multi_index(idx, arr.shape) if idx[0].size else idx[0]
    return gather_flat(arr, np.asarray(flat).reshape(-1)).reshape(idx[0].shape)


def setitem(arr: ArrayCore, key: Any, value: Any) -> None:
    """``arr[key] = value`` for any numpy key but a field name: the key's bounding box is
    read, assigned with numpy and written back.

    >>> from pyblosc2 import asarray
    >>> a = asarray(np.zeros((3, 4), np.int8))
    >>> a[[0, 2], [1, 3]] = 7
    >>> a[...]
    array([[0, 7, 0, 0],
           [0, 0, 0, 0],
           [0, 0, 0, 7]], dtype=int8)
    """
    if isinstance(value, ArrayCore):
        value = value[()]
    box, local = _translate(_expand(key, arr.ndim), arr.shape)
    data = _read(arr, box)
    if data.size == 0:
        return
    data[tuple(local)] = value
    arr[tuple(box)] = data


def _normalize_indices(indices: Any, size: int) -> np.ndarray:
    idx = np.asarray(_unwrap(indices))
    if idx.size == 0:
        return idx.astype(np.int64)
    if idx.dtype.kind not in "iu":
        raise ParamTypeError(f"take indices must be an integer array, got dtype {idx.dtype}")
    idx = idx.astype(np.int64)
    bad = (idx < -size) | (idx >= size)
    if bad.any():
        raise BoundsError(
            f"take index {int(idx[bad].flat[0])} is out of bounds for a size of {size}"
        )
    return np.where(idx < 0, idx + size, idx)


def _normalize_axis(axis: Any, ndim: int) -> int:
    if not is_int(axis):
        raise ParamTypeError(f"axis must be an integer or None, got {axis!r}")
    ax = int(axis) + (ndim if axis < 0 else 0)
    if not 0 <= ax < ndim:
        raise ParamError(f"axis {axis} is out of bounds for an array of dimension {ndim}")
    return ax


def take_numpy(arr: ArrayCore, indices: Any, axis: int | None = None) -> np.ndarray:
    """numpy's ``take``: with ``axis=None`` items of the flattened array (the result has the
    shape of ``indices``), else the indexed axis replaced by ``indices``' shape.

    >>> from pyblosc2 import asarray
    >>> take_numpy(asarray(np.arange(12).reshape(3, 4)), [[0, -1]], axis=1)
    array([[[ 0,  3]],
    <BLANKLINE>
           [[ 4,  7]],
    <BLANKLINE>
           [[ 8, 11]]])
    """
    if axis is None:
        idx = _normalize_indices(indices, arr.size)
        return gather_flat(arr, idx.reshape(-1)).reshape(idx.shape)
    ax = _normalize_axis(axis, arr.ndim)
    idx = _normalize_indices(indices, arr.shape[ax])
    shape = arr.shape[:ax] + idx.shape + arr.shape[ax + 1 :]
    if idx.size == 0:
        return np.empty(shape, arr.dtype)
    flat = idx.reshape(-1)
    lo = int(flat.min())
    box = [slice(0, n) for n in arr.shape]
    box[ax] = slice(lo, int(flat.max()) + 1)
    if arr.ndim == 1:
        return gather_flat(arr, flat).reshape(shape)
    return np.take(_read(arr, box), flat - lo, axis=ax).reshape(shape)


def gather_flat(arr: ArrayCore, flat: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The items at flat C-order positions ``flat`` (non-negative, in bounds), read chunk by
    chunk and, within a chunk, only the blocks holding one of them.

    >>> from pyblosc2 import asarray
    >>> a = asarray(np.arange(100).reshape(10, 10), chunks=(5, 5), blocks=(2, 2))
    >>> gather_flat(a, np.array([99, 0, 55, 0]))
    array([99,  0, 55,  0])
    """
    geo = arr._geometry
    flat = np.asarray(flat, dtype=np.int64)
    res = np.empty(flat.shape, geo.dtype) if out is None else out
    if flat.size == 0:
        return res
    if not geo.ndim:
        res[...] = read_box(arr, (), ())[()]
        return res
    dst = res.reshape(-1)
    coords = np.unravel_index(flat.reshape(-1), geo.shape)
    ccoords = [c // k for c, k in zip(coords, geo.chunks, strict=True)]
    cid = np.ravel_multi_index(ccoords, geo.grid)
    order = np.argsort(cid, kind="stable")
    bounds = np.flatnonzero(np.diff(cid[order])) + 1
    for group in np.split(order, bounds):
        nc = [int(c[group[0]]) for c in ccoords]
        lo = [c * k for c, k in zip(nc, geo.chunks, strict=True)]
        hi = [min(o + k, n) for o, k, n in zip(lo, geo.chunks, geo.shape, strict=True)]
        local = [c[group] - o for c, o in zip(coords, lo, strict=True)]
        bc = [lc // b for lc, b in zip(local, geo.blocks, strict=True)]
        bid = np.ravel_multi_index(bc, geo.bgrid)
        ublocks = np.unique(bid)
        if ublocks.size * 2 > math.prod(geo.bgrid):
            chunk = read_box(arr, tuple(lo), tuple(hi))
            dst[group] = chunk[tuple(local)]
            continue
        for b in ublocks:
            sel = bid == b
            bco = np.unravel_index(int(b), geo.bgrid)
            blo = [o + c * k for o, c, k in zip(lo, bco, geo.blocks, strict=True)]
            bhi = [min(a + k, h) for a, k, h in zip(blo, geo.blocks, hi, strict=True)]
            block = read_box(arr, tuple(blo), tuple(bhi))
            inner = tuple(c[group[sel]] - a for c, a in zip(coords, blo, strict=True))
            dst[group[sel]] = block[inner]
    return res


def _ortho(
    items: list[Any], shape: tuple[int, ...]
) -> tuple[list[slice], list[np.ndarray], list[int]]:
    """The bounding box of an orthogonal key, per-axis index arrays into it, and the axes
    an integer removes."""
    box, comps, squeeze = [], [], []
    for d, k in enumerate(items):
        n = shape[d]
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            if k.shape != (n,):
                raise IndexError(f"boolean index of shape {k.shape} does not match axis {d} ({n})")
            k = np.flatnonzero(k)
        if isinstance(k, slice):
            r = np.arange(*k.indices(n))
        elif is_int_key(k):
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
            r = np.array([int(k) % n])
            squeeze.append(d)
        elif isinstance(k, np.ndarray) and k.dtype.kind in "iu" and k.ndim <= 1:
            r = np.asarray(_normalize_indices(k.reshape(-1), n))
        else:
            raise IndexError(f"oindex takes ints, slices and 1-d arrays per axis, got {k!r}")
        lo = int(r.min()) if r.size else 0
        box.append(slice(lo, int(r.max()) + 1 if r.size else 0))
        comps.append(r - lo)
    return box, comps, squeeze


class OIndex:
    """Orthogonal indexing (``a.oindex[...]``): each axis is selected on its own, as with
    ``np.ix_``.

    >>> from pyblosc2 import asarray
    >>> a = asarray(np.arange(12).reshape(3, 4))
    >>> a.oindex[[0, 2], [1, 3]]
    array([[ 1,  3],
           [ 9, 11]])
    >>> a.oindex[[0, 2], 1] = -1
    >>> a[:, 1]
    array([-1,  5, -1])
    """

    def __init__(self, arr: ArrayCore) -> None:
        self.arr = arr

    def _items(self, key: Any) -> list[Any]:
        if isinstance(key, list) and any(isinstance(k, Sequence | np.ndarray) for k in key):
            key = tuple(key)
        items = _expand(key, self.arr.ndim)
        if any(k is None or _is_scalar_bool(k) for k in items):
            raise IndexError("oindex does not take None or scalar booleans")
        return items

    def __getitem__(self, key: Any) -> np.ndarray:
        box, comps, squeeze = _ortho(self._items(key), self.arr.shape)
        out = _read(self.arr, box)[np.ix_(*comps)]
        return out.reshape([c.size for d, c in enumerate(comps) if d not in squeeze])

    def __setitem__(self, key: Any, value: Any) -> None:
        box, comps, squeeze = _ortho(self._items(key), self.arr.shape)
        if any(c.size == 0 for c in comps):
            return
        if isinstance(value, ArrayCore):
            value = value[()]
        visible = [c.size for d, c in enumerate(comps) if d not in squeeze]
        val = np.broadcast_to(np.asarray(value, self.arr.dtype), visible)
        data = _read(self.arr, box)
        data[np.ix_(*comps)] = val.reshape([c.size for c in comps])
        self.arr[tuple(box)] = data
