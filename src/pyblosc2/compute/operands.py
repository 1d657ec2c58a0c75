"""What can be an operand of an expression, and the part of an operand a piece reads.

Operands are NDArrays, NDFields and other lazy arrays; numpy arrays; anything with ``shape``,
``dtype`` and ``__getitem__`` (python-blosc2's ``blosc2.Array`` protocol: a dask or zarr array,
an h5py dataset); lists and tuples (taken as numpy arrays); and scalars — Python's (which are
"weak" in numpy's promotion) and numpy's (typed). Operand shapes broadcast as numpy's do.

A piece of an expression is computed from each operand's *part*: the same key over the
expression's items, with the axes an operand lacks or has of length 1 read whole
(broadcasting). Numpy operands give views; NDArrays decode only the chunks the part covers.

>>> broadcast_shapes((3, 1), (4,))
(3, 4)
>>> part(np.arange(4), (slice(1, 3), slice(0, 2)), (3, 4)).tolist()
[0, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..constants import SpecialValue
from ..errors import ParamError, ParamTypeError
from .selection import Selection

__all__ = [
    "BroadcastError",
    "View",
    "as_operand",
    "broadcast_shapes",
    "chunks_of",
    "dtype_of",
    "is_array",
    "is_scalar",
    "part",
    "shape_of",
]


def is_scalar(v: Any) -> bool:
    """Whether ``v`` is a scalar operand (Python or numpy number, bool, str, bytes).

    >>> is_scalar(1.5), is_scalar(np.int8(3)), is_scalar(np.ones(3))
    (True, True, False)
    """
    return isinstance(v, int | float | complex | bool | str | bytes | np.generic)


def is_array(v: Any) -> bool:
    """Whether ``v`` follows the array protocol (``shape``, ``dtype``, ``__getitem__``)."""
    return (
        not is_scalar(v)
        and hasattr(v, "shape")
        and hasattr(v, "dtype")
        and callable(getattr(v, "__getitem__", None))
    )


def as_operand(v: Any) -> Any:
    """``v`` as the engine holds it: arrays and scalars as they are, lists and tuples (and
    objects numpy converts) as numpy arrays; :class:`ParamTypeError` for anything else.

    >>> as_operand([1, 2]).tolist(), as_operand(3)
    ([1, 2], 3)

    An object with an ``_operand_`` method (a CTable column) gives its operand through it.
    """
    hook = getattr(type(v), "_operand_", None)
    if hook is not None:
        v = hook(v)
    if is_scalar(v) or is_array(v):
        return v
    if isinstance(v, list | tuple) or hasattr(v, "__array__"):
        arr = np.asarray(v)
        if arr.dtype == object:
            raise ParamTypeError(f"an operand cannot hold Python objects, got {type(v).__name__}")
        return arr
    raise ParamTypeError(
        f"an operand must be an array (shape, dtype, __getitem__) or a scalar, "
        f"got {type(v).__name__}"
    )


def shape_of(v: Any) -> tuple[int, ...]:
    """The shape of an operand (``()`` for scalars)."""
    return () if is_scalar(v) else tuple(int(n) for n in v.shape)


def dtype_of(v: Any) -> np.dtype:
    """The dtype of an operand (numpy's default for a Python scalar's kind)."""
    if isinstance(v, str | bytes):
        return np.asarray(v).dtype
    if is_scalar(v):
        return np.result_type(v)
    return np.dtype(v.dtype)


def chunks_of(v: Any) -> tuple[int, ...] | None:
    """The chunk shape of a chunked operand (an NDArray, an NDField), else None."""
    chunks = getattr(v, "chunks", None)
    if chunks is None:
        base = getattr(v, "ndarr", None)
        chunks = getattr(base, "chunks", None)
    if isinstance(chunks, tuple | list) and all(isinstance(c, int | np.integer) for c in chunks):
        return tuple(int(c) for c in chunks)
    return None


class BroadcastError(ParamError):
    """Operands whose shapes do not broadcast together (a ``ValueError``, as numpy's)."""


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape operands of ``shapes`` broadcast to (numpy's rule); a :class:`ParamError`
    (a ``ValueError``) when they do not broadcast.

    >>> broadcast_shapes((5,), (2, 1))
    (2, 5)
    """
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise BroadcastError(
            f"operands of shapes {', '.join(str(tuple(s)) for s in shapes)} do not broadcast "
            "together"
        ) from None


def operand_key(op_shape: tuple[int, ...], key: tuple[slice, ...]) -> tuple[slice, ...]:
    """The key over an operand of ``op_shape`` that broadcasts onto ``key`` over the
    expression (one slice per expression axis)."""
    lead = len(key) - len(op_shape)
    return tuple(slice(None) if n == 1 else k for n, k in zip(op_shape, key[lead:], strict=True))


def special_part(op: Any, key: tuple[slice, ...]) -> np.ndarray | None:
    """The part of NDArray ``op`` at ``key`` as a zero-stride view of one value when it lies
    in one chunk that the frame's index records as all zeros or all NaNs (nothing is read or
    decoded, nothing the size of the part allocated), else None.

    >>> from pyblosc2 import zeros
    >>> v = special_part(zeros((100,), chunks=(10,)), (slice(20, 30),))
    >>> v.shape, v.strides, float(v.sum())
    ((10,), (0,), 0.0)
    """
    schunk = getattr(op, "schunk", None)
    geo = getattr(op, "_geometry", None)
    added: tuple[int, ...] = getattr(op, "_axes", ())  # an expand_dims view: read it
    if schunk is None or geo is None or not geo.ndim or added:
        return None
    coords, lens = [], []
    for k, n, c in zip(key, geo.shape, geo.chunks, strict=True):
        r = range(*k.indices(n))
        if not len(r) or not c:
            return None
        lo, hi = min(r[0], r[-1]), max(r[0], r[-1])
        if lo // c != hi // c:
            return None
        coords.append(lo // c)
        lens.append(len(r))
    nchunk = int(np.ravel_multi_index(coords, geo.grid))
    kind = schunk.index_special(nchunk)
    if kind == SpecialValue.ZERO:
        value = np.zeros((), geo.dtype)
    elif kind == SpecialValue.NAN and geo.dtype.kind in "fc":
        value = np.full((), np.nan, geo.dtype)
    else:
        return None
    return np.broadcast_to(value, tuple(lens))


def part(op: Any, key: tuple[slice, ...], shape: tuple[int, ...]) -> Any:
    """The part of operand ``op`` that broadcasts onto ``key`` (slices over an expression of
    ``shape``): scalars as they are, numpy views, other arrays read (NDArrays decode only the
    chunks it covers; a part inside one special chunk is a zero-stride view,
    :func:`special_part`)."""
    if is_scalar(op):
        return op
    op_shape = shape_of(op)
    if not op_shape:
        return op[()] if not isinstance(op, np.ndarray) else op
    k = operand_key(op_shape, key)
    if not isinstance(op, np.ndarray):
        const = special_part(op, k)
        if const is not None:
            return const
    out = op[k]
    return out if isinstance(out, np.ndarray | np.generic) else np.asarray(out)


class View:
    """A basic selection of an operand read lazily: ``View(a, Selection)[key]`` reads
    ``a[...]`` of the composed key only (an expression's ``a[10:20]`` or ``e.slice(...)``).

    >>> v = View(np.arange(10), Selection.of(slice(2, 8, 2), (10,)))
    >>> v.shape, v[1:].tolist()
    ((3,), [4, 6])
    """

    def __init__(self, base: Any, sel: Selection) -> None:
        self.base = base
        self.sel = sel

    @property
    def shape(self) -> tuple[int, ...]:
        return self.sel.result_shape

    @property
    def dtype(self) -> np.dtype:
        return dtype_of(self.base)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, key: Any) -> Any:
        if key is Ellipsis or key == ():
            key = tuple(slice(None) for _ in self.shape)
        inner = Selection.of(key, self.shape)
        if inner.newaxes:
            raise NotImplementedError("None in the key of a view of an operand")
        full = tuple(
            r.start
            if d in inner.squeeze
            else slice(r.start, r.stop if r.stop >= 0 else None, r.step)
            for d, r in enumerate(inner.ranges)
        )
        out = np.asarray(self.base[self.sel.compose(full)])
        return out.reshape(inner.result_shape)  # the view's new axes (None) put back

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[()]
        return out if dtype is None else out.astype(dtype)
