"""``blosc2.asarray``, ``zeros``, ``empty``, ``ones`` and ``full`` as python-blosc2 4.x has
them at the top level: numpy's variable-length ``StringDType`` (a source's or the dtype
asked for) gives a 1-d :class:`~pyblosc2.UTF8Array` (offsets + UTF-8 bytes), every other
call the NDArray constructor (:mod:`pyblosc2.ndarray.constructors`). A ``UTF8Array`` given
to ``asarray`` comes back as is (a copy with ``copy=True``; a fixed-width NDArray for a
fixed-width ``dtype``).

The filled constructors write the offsets and bytes chunk by chunk, never a Python list of
the fill (``zeros(10_000_000, dtype=StringDType())`` holds one chunk at a time). N-d shapes
are refused (``ValueError``: 1-D only) and storage keywords too (``TypeError`` naming
``utf8_array``, which builds in memory only), as python-blosc2 does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .ctable.strings import DATA_CHUNKS, OFFSETS_CHUNKS
from .ctable.utf8array import UTF8Array, utf8_array
from .errors import ParamError, ParamTypeError
from .ndarray import constructors as _nd
from .ndarray.constructors import zeros as _nd_zeros

__all__ = ["asarray", "empty", "full", "ones", "zeros"]


def _is_string_dtype(dtype: Any) -> bool:
    try:
        return dtype is not None and np.dtype(dtype).kind == "T"
    except TypeError:
        return False


def _one_d(shape: Any, kwargs: dict[str, Any], what: str) -> int:
    if kwargs:
        raise ParamTypeError(
            f"{what} with StringDType builds an in-memory UTF8Array and takes no "
            f"{sorted(kwargs)}: build it with blosc2.utf8_array(...)"
        )
    dims = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    if len(dims) != 1:
        raise ParamError(f"{what} with StringDType is 1-D only, got shape {dims}")
    n = int(dims[0])
    if n < 0:
        raise ParamError(f"{what}: negative length {n}")
    return n


def _filled(n: int, text: str) -> UTF8Array:
    """``n`` rows of ``text``, written a chunk at a time."""
    raw = text.encode("utf-8")
    offsets = _nd_zeros((n + 1,), dtype=np.int64, chunks=OFFSETS_CHUNKS)
    data = _nd_zeros((max(n * len(raw), 1),), dtype=np.uint8, chunks=DATA_CHUNKS)
    if raw:
        step = OFFSETS_CHUNKS[0]
        for start in range(0, n, step):
            stop = min(start + step, n)
            offsets[start + 1 : stop + 1] = np.arange(start + 1, stop + 1, dtype=np.int64) * len(
                raw
            )
        per = max(DATA_CHUNKS[0] // len(raw), 1)
        pattern = np.frombuffer(raw * per, dtype=np.uint8)
        for start in range(0, n, per):
            rows = min(per, n - start)
            data[start * len(raw) : (start + rows) * len(raw)] = pattern[: rows * len(raw)]
    return UTF8Array(None, offsets, data)


def asarray(array: Any, *args: Any, **kwargs: Any) -> Any:
    """An NDArray of ``array``, or a :class:`UTF8Array` for numpy's ``StringDType``.

    >>> asarray(["a", "bb"]).dtype
    dtype('<U2')
    """
    dtype = kwargs.get("dtype")
    if isinstance(array, UTF8Array):
        if dtype is not None and not _is_string_dtype(dtype):
            return _nd.asarray(np.asarray(array[:]).astype(dtype), *args, **kwargs)
        rest = {k: v for k, v in kwargs.items() if k not in ("dtype", "copy")}
        _one_d(len(array), rest, "asarray")
        return utf8_array(array[:].tolist()) if kwargs.get("copy") else array
    src_dtype = getattr(array, "dtype", None)
    if _is_string_dtype(dtype) or (dtype is None and _is_string_dtype(src_dtype)):
        values = np.asarray(array)
        rest = {k: v for k, v in kwargs.items() if k not in ("dtype", "copy")}
        _one_d(values.shape, rest, "asarray")
        return utf8_array(values.tolist())
    if _is_string_dtype(src_dtype):  # StringDType to a fixed-width dtype
        array = np.asarray(array).astype(dtype)
    return _nd.asarray(array, *args, **kwargs)


def zeros(shape: Any, dtype: Any = np.float64, *args: Any, **kwargs: Any) -> Any:
    """``blosc2.zeros``; ``""`` rows for ``StringDType``.

    >>> zeros(3, dtype=np.int32)[:]
    array([0, 0, 0], dtype=int32)
    """
    if _is_string_dtype(dtype) and not args:
        return _filled(_one_d(shape, kwargs, "zeros"), "")
    return _nd.zeros(shape, dtype, *args, **kwargs)


def empty(shape: Any, dtype: Any = np.float64, *args: Any, **kwargs: Any) -> Any:
    """``blosc2.empty``; ``""`` rows for ``StringDType`` (as numpy's).

    >>> empty((2, 2), dtype=np.float32).shape
    (2, 2)
    """
    if _is_string_dtype(dtype) and not args:
        return _filled(_one_d(shape, kwargs, "empty"), "")
    return _nd.empty(shape, dtype, *args, **kwargs)


def ones(shape: Any, dtype: Any = np.float64, *args: Any, **kwargs: Any) -> Any:
    """``blosc2.ones``; ``"1"`` rows for ``StringDType`` (as numpy's).

    >>> ones(2)[:]
    array([1., 1.])
    """
    if _is_string_dtype(dtype) and not args:
        return _filled(_one_d(shape, kwargs, "ones"), "1")
    return _nd.ones(shape, dtype, *args, **kwargs)


def full(shape: Any, fill_value: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
    """``blosc2.full``; ``str(fill_value)`` rows for ``StringDType``.

    >>> full(2, 7).dtype
    dtype('int64')
    """
    if _is_string_dtype(dtype) and not args:
        return _filled(_one_d(shape, kwargs, "full"), str(fill_value))
    return _nd.full(shape, fill_value, dtype, *args, **kwargs)
