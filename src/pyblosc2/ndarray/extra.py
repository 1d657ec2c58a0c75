"""More NDArray constructors and array packing (python-blosc2's ``pack_array2`` & co.,
frame-format.md §9.3). ``evaluate`` lives in :mod:`.evaluate` (re-exported here)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .._bytes import BufferLike, as_view
from ..constants import header_typesize
from ..errors import FormatError, ParamError
from ..params import DParams, parse_int
from ..schunk import SChunk, schunk_from_cframe
from ..schunk import open as open_schunk
from .chunkfill import fill_flat
from .constructors import _new, asarray
from .evaluate import evaluate
from .geometry import ShapeLike
from .ndarray import NDArray

__all__ = [
    "arange",
    "evaluate",
    "frombuffer",
    "linspace",
    "load_array",
    "pack_array2",
    "save_array",
    "unpack_array2",
]

PACK_KEY = "__pack_tensor__"
#: the kinds of packed tensors python-blosc2 records (all stored as numpy data)
TENSOR_KINDS = ("numpy", "torch", "tensorflow")
MAX_PACK_CHUNKSIZE = 2**28


def frombuffer(
    buffer: BufferLike, shape: ShapeLike, dtype: DTypeLike = np.uint8, **kwargs: Any
) -> NDArray:
    """An NDArray from raw bytes (C order), reshaped to ``shape``.

    >>> frombuffer(bytes(range(6)), (2, 3))[...]
    array([[0, 1, 2],
           [3, 4, 5]], dtype=uint8)
    >>> frombuffer(np.arange(4, dtype="<f4").tobytes(), 4, "<f4")[2:]
    array([2., 3.], dtype=float32)
    """
    data = np.frombuffer(as_view(buffer, "buffer"), dtype=np.dtype(dtype))
    return asarray(data.reshape(shape), **kwargs)


def _flat_target(num: int, shape: ShapeLike | None) -> tuple[int, ...]:
    if shape is None:
        return (num,)
    dims = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    if math.prod(dims) != num:
        raise ParamError(f"shape {dims} must hold the {num} items, got {math.prod(dims)}")
    return dims


def arange(
    start: float,
    stop: float | None = None,
    step: float | None = 1,
    dtype: DTypeLike | None = None,
    shape: ShapeLike | None = None,
    c_order: bool = True,
    **kwargs: Any,
) -> NDArray:
    """Like ``np.arange``, optionally reshaped, built chunk by chunk.

    ``c_order=False`` is accepted as in python-blosc2 4.14.1, whose result is also in C order
    (the flag only allows a faster layout there).

    >>> arange(0, 12, 2, shape=(2, 3))[...]
    array([[ 0,  2,  4],
           [ 6,  8, 10]])
    >>> arange(5, dtype=np.float32)[-2:]
    array([3., 4.], dtype=float32)
    """
    step = 1 if step is None else step
    if step == 0:
        raise ParamError("step must not be 0")
    if stop is None:
        start, stop = 0, start
    num = max(0, math.ceil((stop - start) / step))
    if dtype is None:
        # np.arange's choice: the type of start, stop and step together (nothing allocated)
        dtype = (
            np.arange(start, stop, step)[:0].dtype
            if not num
            else np.result_type(*(np.asarray(v) for v in (start, stop, step)))
        )
    dt = np.dtype(dtype)
    delta = (start + step) - start
    arr = _new(
        _flat_target(num, shape), dt, kwargs.pop("chunks", None), kwargs.pop("blocks", None), kwargs
    )

    def produce(lo: int, hi: int) -> np.ndarray:
        idx = np.arange(lo, hi, dtype=np.int64)
        if dt.kind in "iub" and all(float(v).is_integer() for v in (start, step)):
            return (idx * int(step) + int(start)).astype(dt)
        return (start + idx * delta).astype(dt)

    return fill_flat(arr, produce, True)


def linspace(
    start: float,
    stop: float,
    num: int | None = None,
    dtype: DTypeLike | None = None,
    endpoint: bool = True,
    shape: ShapeLike | None = None,
    c_order: bool = True,
    **kwargs: Any,
) -> NDArray:
    """Like ``np.linspace``, optionally reshaped, built chunk by chunk; ``num`` defaults to
    the number of items of ``shape``. ``c_order=False`` is accepted as in :func:`arange`.

    >>> linspace(0, 1, 5)[...]
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    >>> linspace(0, 10, shape=(2, 3), endpoint=False)[1]
    array([5.        , 6.66666667, 8.33333333])
    """
    if num is None:
        if shape is None:
            raise ParamError("linspace needs num or shape, got neither")
        num = math.prod(shape if isinstance(shape, tuple | list) else (shape,))
    num = parse_int(num, "num", 0)
    target = _flat_target(num, shape)
    div = num - 1 if endpoint else num
    work = np.result_type(start, stop, float(num))
    dt = np.dtype(work if dtype is None else dtype)
    step = (np.asarray(stop, work) - np.asarray(start, work)) / div if div > 0 else 0
    arr = _new(target, dt, kwargs.pop("chunks", None), kwargs.pop("blocks", None), kwargs)

    def produce(lo: int, hi: int) -> np.ndarray:
        y = np.arange(lo, hi).astype(work) * step + start
        if endpoint and num > 1 and hi == num:
            y[-1] = stop
        if dt.kind in "iu":
            y = np.floor(y)
        return y.astype(dt)

    return fill_flat(arr, produce, True)


def _pack(arr: np.ndarray, chunksize: int | None, kwargs: dict, kind: str = "numpy") -> SChunk:
    arr = np.ascontiguousarray(arr)
    if chunksize is None:
        chunksize = max(1, min(arr.nbytes, MAX_PACK_CHUNKSIZE))
    cp = dict(kwargs.pop("cparams", None) or {})
    cp.setdefault("typesize", header_typesize(arr.dtype.itemsize))
    s = SChunk(chunksize=chunksize, data=arr, cparams=cp, **kwargs)
    dtype = arr.dtype.descr if arr.dtype.kind == "V" else arr.dtype.str
    s.vlmeta[PACK_KEY] = (kind, tuple(arr.shape), dtype)
    return s


def pack_array2(arr: np.ndarray, chunksize: int | None = None, **kwargs: Any) -> bytes:
    """A cframe holding ``arr`` as python-blosc2's ``pack_array2`` writes it.

    >>> unpack_array2(pack_array2(np.arange(6).reshape(2, 3))).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    return _pack(arr, chunksize, kwargs).to_cframe()


def _unpack(s: SChunk) -> np.ndarray:
    try:
        kind, shape, dtype = s.vlmeta[PACK_KEY]
    except KeyError:
        raise FormatError("packed array", "vlmeta", None, f"a {PACK_KEY!r} entry", "none") from None
    if kind not in TENSOR_KINDS:
        raise FormatError("packed array", "vlmeta kind", None, f"one of {TENSOR_KINDS}", kind)
    descr: Any = dtype if isinstance(dtype, str) else [tuple(f) for f in dtype]
    dt = np.lib.format.descr_to_dtype(descr)
    out = np.empty(shape, dt)
    if out.nbytes != s.nbytes:
        raise FormatError("packed array", "nbytes", 30, out.nbytes, s.nbytes)
    s.get_slice(0, s.nbytes // s.typesize, out=out)
    return out


def unpack_array2(cframe: BufferLike) -> np.ndarray:
    """Inverse of :func:`pack_array2` (also reads python-blosc2's ``pack_array2`` output).

    >>> a = np.array([(1, 2.5), (3, 4.5)], dtype=[("i", "<i4"), ("f", "<f8")])
    >>> unpack_array2(pack_array2(a))["f"]
    array([2.5, 4.5])
    """
    return _unpack(schunk_from_cframe(cframe))


def save_array(arr: np.ndarray, urlpath: str, chunksize: int | None = None, **kwargs: Any) -> int:
    """Write ``arr`` to a frame file as python-blosc2's ``save_array`` does (overwriting it
    unless ``mode`` says otherwise); returns the file size.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.b2frame")
    >>> save_array(np.arange(1000), path) == os.path.getsize(path)
    True
    >>> load_array(path)[-3:]
    array([997, 998, 999])
    """
    import os

    kwargs.setdefault("mode", "w")
    _pack(arr, chunksize, {**kwargs, "urlpath": urlpath, "contiguous": True})
    return os.stat(urlpath).st_size


def load_array(urlpath: str, dparams: DParams | Mapping[str, Any] | None = None) -> np.ndarray:
    """Read an array written by :func:`save_array` (or python-blosc2's ``save_array``).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "m.b2frame")
    >>> _ = save_array(np.eye(3, dtype=np.int8), path)
    >>> load_array(path, dparams={"nthreads": 1})
    array([[1, 0, 0],
           [0, 1, 0],
           [0, 0, 1]], dtype=int8)
    """
    return _unpack(open_schunk(urlpath, "r", dparams=dparams))
