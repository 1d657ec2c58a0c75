"""The operands of :mod:`pyblosc2.linalg` and the arrays it returns.

An operand is anything with ``shape``, ``dtype`` and a ``__getitem__`` that returns numpy
(python-blosc2's Array protocol): an NDArray, a numpy array, a lazy expression, a field of a
structured array. It is read box by box, never whole. Other array-likes (lists, arrays of
libraries whose ``dtype`` is not numpy's) are taken through ``np.asarray`` first: they are in
memory already. Items must be numbers or booleans: Python objects, strings and dates are
refused before anything is read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParamTypeError
from ..ndarray.chunkfill import Region

__all__ = ["Operand", "as_operand", "is_scalar", "probe_dtype"]

#: dtype kinds the products take: booleans, integers, floats, complex numbers
NUMERIC_KINDS = "biufc"


@dataclass(frozen=True, slots=True)
class Operand:
    """An array read box by box: ``src[box]`` as numpy.

    >>> op = as_operand(np.arange(6).reshape(2, 3), "x")
    >>> op.shape, op.chunks, op.read((slice(1, 2), slice(0, 2))).tolist()
    ((2, 3), (2, 3), [[3, 4]])
    """

    src: Any
    shape: tuple[int, ...]
    dtype: np.dtype
    #: the grain reads should follow: the array's chunks (NDArray, lazy expression), else
    #: the whole shape (an array in memory, where any box is a view)
    chunks: tuple[int, ...]
    #: whether ``chunks`` are the array's own (False: the array has none)
    chunked: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def read(self, box: Region) -> np.ndarray:
        """The items of ``box`` (one slice per dimension) as numpy."""
        return np.asarray(self.src[box] if box else self.src[()])


def is_scalar(x: Any) -> bool:
    """Whether ``x`` is a scalar (a number, a string, a numpy scalar) rather than an array.

    >>> is_scalar(3), is_scalar(np.float32(1)), is_scalar(np.zeros(2)), is_scalar([1])
    (True, True, False, False)
    """
    return bool(np.isscalar(x)) or x is None


def _chunks_of(x: Any, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    chunks = getattr(x, "chunks", None) if not isinstance(x, np.ndarray) else None
    if (
        isinstance(chunks, tuple)
        and len(chunks) == len(shape)
        and all(isinstance(c, int | np.integer) and c > 0 for c in chunks)
    ):
        return tuple(int(c) for c in chunks)
    return None


def _array_like(x: Any) -> tuple[tuple[int, ...], np.dtype] | None:
    """``(shape, dtype)`` of an array read by ``__getitem__`` (numpy's dtypes only), else
    None."""
    shape = getattr(x, "shape", None)
    if shape is None or not hasattr(x, "dtype") or not hasattr(x, "__getitem__"):
        return None
    try:
        return tuple(int(n) for n in shape), np.dtype(x.dtype)
    except (TypeError, ValueError):
        return None


def as_operand(x: Any, name: str, numeric: bool = True) -> Operand:
    """``x`` as an :class:`Operand` (``name``: the argument, for errors); ``numeric``: only
    numbers and booleans (products), else any dtype without Python objects (permutations).

    >>> as_operand(np.array(["a"]), "x1")
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamTypeError: x1 must hold numbers or booleans, got an array of dtype <U1
    """
    src, found = x, _array_like(x)
    if found is None:
        try:
            src = np.asarray(x)
        except (TypeError, ValueError) as exc:
            raise ParamTypeError(
                f"{name} must be an array, got {type(x).__name__}: {exc}"
            ) from None
        found = src.shape, src.dtype
    shape, dtype = found
    if dtype.hasobject or (numeric and dtype.kind not in NUMERIC_KINDS):
        kind = "numbers or booleans" if numeric else "items without Python objects"
        raise ParamTypeError(f"{name} must hold {kind}, got an array of dtype {dtype}")
    chunks = _chunks_of(src, shape)
    return Operand(src, shape, dtype, shape if chunks is None else chunks, chunks is not None)


def probe_dtype(func: Callable[..., Any], *dtypes: np.dtype, **kwargs: Any) -> np.dtype:
    """The dtype numpy's ``func`` gives for operands of ``dtypes`` (called on one-item
    arrays of as many dimensions as it needs: ``kwargs`` may say ``ndims``), so results follow
    numpy's rules exactly.

    >>> probe_dtype(np.matmul, np.dtype("i1"), np.dtype("f4"))
    dtype('float32')
    """
    ndims = kwargs.pop("ndims", (2,) * len(dtypes))
    probes = [np.zeros((1,) * n, dt) for n, dt in zip(ndims, dtypes, strict=True)]
    try:
        return np.asarray(func(*probes, **kwargs)).dtype
    except TypeError as exc:
        names = ", ".join(str(dt) for dt in dtypes)
        raise ParamTypeError(f"{func.__name__} has no loop for dtypes {names}: {exc}") from None
