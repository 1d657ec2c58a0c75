"""More NDArray constructors: ``arange``, ``linspace``, ``frombuffer``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .._bytes import BufferLike, as_view
from ..errors import ParamError
from ..params import parse_int
from .chunkfill import fill_flat
from .constructors import _new, asarray
from .geometry import ShapeLike
from .ndarray import NDArray

__all__ = [
    "arange",
    "frombuffer",
    "linspace",
]


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
    num: int | float | None = None,
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
    if isinstance(num, float | np.floating) and float(num).is_integer():
        num = int(num)  # python-blosc2 takes a whole float (numpy does not)
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
