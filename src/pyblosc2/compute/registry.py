"""The functions an expression computes whole, before its elementwise pass: python-blosc2's
constructors (``arange(10)``, ``linspace(0, 1, 100, shape=(10, 10))``...) and the "eager"
functions (``concat``, ``stack``, ``expand_dims``, ``squeeze``, ``reshape``, ``.T``...).

Each is computed into an NDArray (or a numpy array) that joins the expression as an operand.
Other packages add functions here (the linear algebra of :mod:`pyblosc2.linalg`, above this
package, registers ``matmul``, ``tensordot``...): :func:`register_function` takes the
callable and, optionally, a shape rule so that ``lazyexpr("matmul(a, b)").shape`` is known
without computing the product.

>>> "arange" in CONSTRUCTORS, is_eager("concat"), is_eager("eval")
(True, True, False)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParamError
from ..ndarray.combine import concat, stack
from ..ndarray.constructors import empty, full, ones, zeros
from ..ndarray.extra import arange, linspace
from ..ndarray.numpylike import expand_dims, eye, fromiter, nans, reshape

__all__ = [
    "CONSTRUCTORS",
    "EagerFunction",
    "eager_function",
    "is_eager",
    "register_function",
    "squeeze",
]

#: constructors an expression string may call (arguments must be literals)
CONSTRUCTORS: dict[str, Callable[..., Any]] = {
    "arange": arange,
    "linspace": linspace,
    "zeros": zeros,
    "ones": ones,
    "full": full,
    "empty": empty,
    "nans": nans,
    "eye": eye,
    "fromiter": fromiter,
}


@dataclass(frozen=True, slots=True)
class EagerFunction:
    """A function computed whole: ``fn(*args, **kwargs)`` on operands (NDArrays, numpy
    arrays, literals); ``shape(*arg_shapes, **kwargs)`` gives its result's shape without
    computing it (None: the shape is known only by computing)."""

    fn: Callable[..., Any]
    shape: Callable[..., tuple[int, ...]] | None = None


def _nd(x: Any) -> Any:
    """An operand the ndarray functions take (a lazy expression computed first)."""
    compute = getattr(x, "compute", None)
    return compute() if callable(compute) else x


def _norm_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, int | np.integer) or not -ndim <= a < ndim:
            raise ParamError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        out.append(int(a) % ndim)
    return tuple(out)


def squeeze(x: Any, axis: int | tuple[int, ...] | None = None, **kwargs: Any) -> Any:
    """``x`` without its length-1 axes (those of ``axis``; all by default), as a new NDArray
    read and written chunk by chunk (python-blosc2's ``squeeze``).

    >>> from pyblosc2 import zeros
    >>> squeeze(zeros((1, 3, 1)), axis=0).shape
    (3, 1)
    """
    x = _nd(x)
    axes = (
        tuple(d for d, n in enumerate(x.shape) if n == 1)
        if axis is None
        else _norm_axes(axis, x.ndim)
    )
    for a in axes:
        if x.shape[a] != 1:
            raise ParamError(
                f"cannot select an axis to squeeze out which has size not equal to one (axis {a})"
            )
    shape = tuple(n for d, n in enumerate(x.shape) if d not in axes)
    if not hasattr(x, "schunk"):
        return np.asarray(x).reshape(shape)
    return reshape(x, shape, **kwargs)


def _squeeze_shape(shape: tuple[int, ...], axis: Any = None) -> tuple[int, ...]:
    axes = (
        tuple(d for d, n in enumerate(shape) if n == 1)
        if axis is None
        else _norm_axes(axis, len(shape))
    )
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _whole(x: Any) -> np.ndarray:
    return np.asarray(x[()] if hasattr(x, "shape") and not isinstance(x, np.ndarray) else x)


def _expand_dims(x: Any, axis: Any = 0) -> Any:
    x = _nd(x)
    if hasattr(x, "schunk"):
        return expand_dims(x, axis)
    return np.expand_dims(np.asarray(x), axis)


def _expand_shape(shape: tuple[int, ...], axis: Any = 0) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    ndim = len(shape) + len(axes)
    out = list(shape)
    for a in sorted(int(a) % ndim for a in axes):
        out.insert(a, 1)
    return tuple(out)


def _concat_shape(shapes: list[tuple[int, ...]], axis: int = 0) -> tuple[int, ...]:
    ax = int(axis) % len(shapes[0])
    total = sum(s[ax] for s in shapes)
    return (*shapes[0][:ax], total, *shapes[0][ax + 1 :])


def _stack_shape(shapes: list[tuple[int, ...]], axis: int = 0) -> tuple[int, ...]:
    ndim = len(shapes[0]) + 1
    ax = int(axis) % ndim
    return (*shapes[0][:ax], len(shapes), *shapes[0][ax:])


def _reshape_shape(src_shape: tuple[int, ...], *new: Any, **kw: Any) -> tuple[int, ...]:
    target = kw.get("shape", new[0] if len(new) == 1 else new)
    target = (target,) if isinstance(target, int) else tuple(target)
    size = math.prod(src_shape)
    if -1 in target:
        known = math.prod(t for t in target if t != -1) or 1
        target = tuple(size // known if t == -1 else t for t in target)
    return target


def _reshape(x: Any, *new: Any, **kw: Any) -> Any:
    target = _reshape_shape(tuple(x.shape), *new, **kw)
    x = _nd(x)
    return reshape(x, target) if hasattr(x, "schunk") else np.asarray(x).reshape(target)


_EAGER: dict[str, EagerFunction] = {
    "concat": EagerFunction(
        lambda arrays, axis=0: concat([_nd(a) for a in arrays], axis=axis), _concat_shape
    ),
    "stack": EagerFunction(
        lambda arrays, axis=0: stack([_nd(a) for a in arrays], axis=axis), _stack_shape
    ),
    "expand_dims": EagerFunction(_expand_dims, _expand_shape),
    "squeeze": EagerFunction(squeeze, _squeeze_shape),
    "reshape": EagerFunction(_reshape, _reshape_shape),
    "T": EagerFunction(lambda x: _whole(x).T, lambda s: tuple(reversed(s))),
    "mT": EagerFunction(
        lambda x: np.swapaxes(_whole(x), -1, -2), lambda s: (*s[:-2], s[-1], s[-2])
    ),
}


def register_function(
    name: str, fn: Callable[..., Any], shape: Callable[..., tuple[int, ...]] | None = None
) -> EagerFunction | None:
    """Let expressions call ``name``: ``fn`` computes it whole on operands, ``shape`` (when
    given) gives its result shape from the operands' shapes. Returns the function it
    replaces, if any.

    >>> old = register_function("twice", lambda x: np.asarray(x) * 2, lambda s: s)
    >>> is_eager("twice"), old
    (True, None)
    >>> _ = _EAGER.pop("twice")
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ParamError(f"a function name must be an identifier, got {name!r}")
    old = _EAGER.get(name)
    _EAGER[name] = EagerFunction(fn, shape)
    return old


def is_eager(name: str) -> bool:
    """Whether ``name`` is an eager function expressions may call."""
    return name in _EAGER


def eager_function(name: str) -> EagerFunction:
    """The eager function ``name``."""
    return _EAGER[name]
