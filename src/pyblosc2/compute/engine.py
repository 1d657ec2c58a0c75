"""The engine the operands' operators reach through :mod:`pyblosc2.ndarray.lazyhook`: every
operator, numpy ufunc and reduction of an NDArray (or NDField, or lazy expression) comes
here and becomes a :class:`~.lazyexpr.LazyExpr` (or a reduced value).

numpy's ufunc protocol: a ufunc call with one output becomes the elementwise function of the
ufunc's name (``np.sin(a)`` is ``sin(o0)``, ``np.add(a, b)`` is ``(o0 + o1)``); ``out=``
computes into it; ``ufunc.reduce`` is the matching reduction (``np.add.reduce(a)`` is
``a.sum(axis=0)``), ``ufunc.accumulate`` the cumulative one; a ufunc an eager function was
registered for (``np.matmul``, by :mod:`pyblosc2.linalg`) calls it. Anything else
(``ufunc.at``, several outputs, ``dtype=``/``where=`` keywords) is numpy's on the decompressed
operands.

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> a = asarray(np.arange(4.0))
>>> np.sin(a).expression, np.add.reduce(a), np.maximum(a, 2)[:].tolist()
('sin(o0)', np.float64(6.0), [2.0, 2.0, 2.0, 3.0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParamError
from .lazyarray import LazyArray
from .lazyexpr import LazyExpr
from .operands import is_array, is_scalar
from .parser import get_expr_operands
from .registry import eager_function, is_eager
from .statistical import as_lazy
from .tree import BINARY_OPS

__all__ = ["ComputeEngine"]

#: numpy ufunc -> python-blosc2's operator symbol (the others go by their names)
_UFUNC_OPS: dict[Any, str] = {
    getattr(np, {"pow": "power", "divide": "true_divide"}.get(f, f), None): op
    for op, f in BINARY_OPS.items()
}
_UFUNC_OPS[np.divide] = "/"
_UFUNC_OPS[np.left_shift] = "<<"
_UFUNC_OPS[np.right_shift] = ">>"
_UFUNC_OPS.pop(None, None)
#: ufunc -> the reduction its reduce method is
_REDUCE = {
    np.add: "sum",
    np.multiply: "prod",
    np.minimum: "min",
    np.maximum: "max",
    np.fmin: "min",
    np.fmax: "max",
    np.logical_or: "any",
    np.logical_and: "all",
}
_ACCUMULATE = {np.add: "cumulative_sum", np.multiply: "cumulative_prod"}
#: names numpy gives its ufuncs that differ from the expression's function names
_UFUNC_NAMES = {"absolute": "abs", "conjugate": "conj", "invert": "bitwise_invert"}


def _acceptable(v: Any) -> bool:
    return is_scalar(v) or is_array(v) or isinstance(v, LazyArray | list | tuple)


class ComputeEngine:
    """The engine registered into :mod:`pyblosc2.ndarray.lazyhook`."""

    def binary(self, op: str, left: Any, right: Any) -> Any:
        if not (_acceptable(left) and _acceptable(right)):
            return NotImplemented
        return LazyExpr(new_op=(left, op, right))

    def call(self, name: str, *args: Any) -> Any:
        if len(args) == 1:
            return LazyExpr(new_op=(args[0], name, None))
        if len(args) == 2:
            return LazyExpr(new_op=(args[0], name, args[1]))
        raise ParamError(f"{name}() with {len(args)} operands")

    def ufunc(
        self, ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        if not all(_acceptable(v) for v in inputs):
            return NotImplemented
        out = kwargs.pop("out", None)
        if isinstance(out, tuple):
            out = out[0] if len(out) == 1 else out
        if method == "__call__" and ufunc.nout == 1 and not kwargs:
            if ufunc.__name__ in ("matmul", "vecdot", "matvec", "vecmat") and is_eager(
                ufunc.__name__
            ):
                return eager_function(ufunc.__name__).fn(*inputs)
            name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
            if ufunc.nin == 1:
                expr = LazyExpr(new_op=(inputs[0], name, None))
            elif ufunc.nin == 2:
                expr = LazyExpr(new_op=(inputs[0], _UFUNC_OPS.get(ufunc, name), inputs[1]))
            else:
                return NotImplemented
            return expr if out is None else expr.compute(out=out)
        if (
            method == "reduce"
            and ufunc in _REDUCE
            and len(inputs) == 1
            and set(kwargs) <= {"axis", "dtype", "keepdims"}
        ):
            kwargs.setdefault("axis", 0)  # ufunc.reduce's default, unlike the functions'
            name = _REDUCE[ufunc]
            if name in ("min", "max", "any", "all"):
                kwargs.pop("dtype", None)
            return as_lazy(inputs[0])._reduce(name, out=out, **kwargs)
        if (
            method == "accumulate"
            and ufunc in _ACCUMULATE
            and len(inputs) == 1
            and set(kwargs) <= {"axis", "dtype"}
        ):
            kwargs.setdefault("axis", 0)
            return as_lazy(inputs[0])._reduce(_ACCUMULATE[ufunc], out=out, **kwargs)
        # anything else: numpy on the decompressed operands
        args = [
            np.asarray(v)
            if isinstance(v, LazyArray) or (is_array(v) and not isinstance(v, np.ndarray))
            else v
            for v in inputs
        ]
        if out is not None:
            kwargs["out"] = out if isinstance(out, tuple) else (out,)
            if any(not isinstance(o, np.ndarray) for o in kwargs["out"]):
                raise NotImplementedError(f"{ufunc.__name__}.{method} writing into an NDArray out=")
        return getattr(ufunc, method)(*args, **kwargs)

    def reduce(self, name: str, operand: Any, kwargs: dict[str, Any]) -> Any:
        return as_lazy(operand)._reduce(name, **kwargs)

    def where(self, cond: Any, x: Any, y: Any) -> Any:
        lx = cond if isinstance(cond, LazyExpr) else LazyExpr(new_op=(cond, None, None))
        return lx.where(x, y)

    def select(self, array: Any, key: Any) -> Any:
        """``array[key]``: a boolean lazy expression filters ``array``; a string is an
        expression over the fields of a structured array (a field name: that field)."""
        if isinstance(key, LazyArray):
            if not isinstance(key, LazyExpr):
                raise ParamError("only a lazy expression can select the items of an array")
            return key.where(array)
        if isinstance(key, str):
            base = getattr(array, "ndarr", array)
            names = base.dtype.names
            if not names:
                raise ParamError("an expression string selects in an array with fields only")
            fields = {n: base.fields[n] for n in names if n in get_expr_operands(key)}
            expr = LazyExpr._new_expr(key, fields, guess=True)
            if expr.dtype != np.bool_:
                raise ParamError(f"the expression {key!r} is not boolean (dtype {expr.dtype})")
            return expr.where(array)
        raise ParamError(f"cannot select with {type(key).__name__}")
