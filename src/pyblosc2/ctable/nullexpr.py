"""Arithmetic over nullable columns: ``t.score + 1`` is a :class:`NullableExpr`, a lazy
expression (float64, NaN where an operand is null) that carries the null rows beside it,
so that further arithmetic keeps them (``nan ** 0`` does not bring a null back), a
comparison of it is three-valued (:class:`~.kleene.NullableBoolExpr`), and its reductions
(``sum``, ``mean``, ``std``, ``min``, ``max``) skip the nulls and the table's deleted rows,
as python-blosc2's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..compute.api import lazyexpr
from ..compute.lazyexpr import LazyExpr
from ..errors import ParamError
from .kleene import NullableBoolExpr

__all__ = ["NullableExpr"]


def _null_of(x: Any) -> Any:
    return x._null if isinstance(x, NullableExpr) else None


def _union(a: Any, b: Any) -> Any:
    return b if a is None else (a if b is None else a | b)


def _arith(name: str) -> Callable[..., Any]:
    def method(self: NullableExpr, *other: Any) -> Any:
        result = getattr(LazyExpr, name)(self, *other)
        null = _union(self._null, _null_of(other[0])) if other else self._null
        if null is not None:  # a null stays NaN whatever the operation (nan ** 0 is 1)
            result = lazyexpr("where(n, nan, r)", {"n": null, "r": result})
        return NullableExpr.make(result, null, self._table)

    method.__name__ = name
    return method


def _compare(name: str) -> Callable[[Any, Any], Any]:
    def method(self: NullableExpr, other: Any) -> Any:
        result = getattr(LazyExpr, name)(self, other)
        null = _union(self._null, _null_of(other))
        return NullableBoolExpr.leaf(result, null, self._table)

    method.__name__ = name
    return method


class NullableExpr(LazyExpr):
    """Arithmetic over nullable columns, its null rows carried along.

    >>> import dataclasses
    >>> import pyblosc2 as blosc2
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = blosc2.field(blosc2.int64(nullable=True))
    >>> t = blosc2.CTable(Row, new_data=[(1,), (None,), (3,)])
    >>> float((t.x + 1).sum()), (t.x * 2).compute()[:3].tolist()
    (6.0, [2.0, nan, 6.0])
    """

    _null: Any
    _table: Any

    _defers_nulls = True  # ``ndarray + this`` is handed to this side (ndarray/operand.py)

    @classmethod
    def make(cls, expr: Any, null: Any, table: Any) -> Any:
        """``expr`` with the rows ``null`` null (a plain expression when None)."""
        if null is None:
            return expr
        expr = expr if isinstance(expr, LazyExpr) else LazyExpr(new_op=(expr, None, None))
        out = cls()
        out._set(expr.expression, dict(expr.operands))
        out._null, out._table = null, table
        return out

    for _name in (
        "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
        "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
        "__rmod__", "__pow__", "__rpow__", "__neg__", "__pos__", "__abs__",
    ):  # fmt: skip
        if hasattr(LazyExpr, _name):
            locals()[_name] = _arith(_name)
    for _name in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        locals()[_name] = _compare(_name)
    del _name
    __hash__ = None  # type: ignore[assignment]

    def _live_values(self) -> np.ndarray:
        """The values of the table's live rows that are not null."""
        live = self._table._live_positions()
        values = np.asarray(self.compute()[:])[live]
        null = self._null.compute() if isinstance(self._null, LazyExpr) else self._null
        return values[~np.asarray(null[:])[live]]

    def sum(self, *args: Any, **kwargs: Any) -> Any:
        """The sum of the non-null live values (0 when all are null)."""
        return np.sum(self._live_values())

    def mean(self, *args: Any, **kwargs: Any) -> Any:
        """The mean of the non-null live values (NaN when all are null)."""
        values = self._live_values()
        return np.mean(values) if values.size else np.float64(np.nan)

    def std(self, *args: Any, ddof: int = 0, **kwargs: Any) -> Any:
        """The standard deviation of the non-null live values."""
        values = self._live_values()
        return np.std(values, ddof=ddof) if values.size > ddof else np.float64(np.nan)

    def _extreme(self, op: str) -> Any:
        values = self._live_values()
        if values.size == 0:
            raise ParamError(f"{op}() of an expression: all values are null")
        return values.min() if op == "min" else values.max()

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """The smallest non-null live value."""
        return self._extreme("min")

    def max(self, *args: Any, **kwargs: Any) -> Any:
        """The largest non-null live value."""
        return self._extreme("max")
