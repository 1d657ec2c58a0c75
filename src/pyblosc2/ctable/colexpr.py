"""Unbound column expressions (python-blosc2's ``blosc2.col``): ``col("x") + 1`` is a recipe
that, given a table, replays its operators on that table's columns, so ``t[col("x") > 0]``
and ``t.assign(y=col("x") * 2)`` mean ``t[t.x > 0]`` and a computed ``t.x * 2``. A name is
looked up when the expression is bound (an unknown one fails then, as ``t["nope"]`` does);
only operators are supported on an unbound expression.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

__all__ = ["ColExpr", "col"]


class ColExpr:
    """A column expression not yet bound to a table.

    >>> e = col("price") * col("qty") > 10
    >>> e
    ((price * qty) > 10)
    """

    def __init__(self, bind: Callable[[Any], Any], text: str) -> None:
        self._binder = bind
        self._repr = text

    def _bind(self, table: Any) -> Any:
        """The expression over ``table``'s columns."""
        return self._binder(table)

    def __repr__(self) -> str:
        return self._repr

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"{name!r} is not supported on an unbound column expression (only operators are); "
            f"bind it to a table first: t.{self._repr}.{name}(...)"
        )

    __hash__ = None  # type: ignore[assignment]


def _binary(op: Callable[[Any, Any], Any], symbol: str, reflected: bool) -> Any:
    def method(self: ColExpr, other: Any) -> ColExpr:
        other_text = other._repr if isinstance(other, ColExpr) else repr(other)

        def bind(t: Any) -> Any:
            left = self._bind(t)
            right = other._bind(t) if isinstance(other, ColExpr) else other
            return op(right, left) if reflected else op(left, right)

        pair = (other_text, self._repr) if reflected else (self._repr, other_text)
        return ColExpr(bind, f"({pair[0]} {symbol} {pair[1]})")

    return method


def _unary(op: Callable[[Any], Any], symbol: str) -> Any:
    def method(self: ColExpr) -> ColExpr:
        return ColExpr(lambda t: op(self._bind(t)), f"({symbol}{self._repr})")

    return method


_BINARY = {
    "add": (operator.add, "+"), "sub": (operator.sub, "-"), "mul": (operator.mul, "*"),
    "truediv": (operator.truediv, "/"), "floordiv": (operator.floordiv, "//"),
    "mod": (operator.mod, "%"), "pow": (operator.pow, "**"), "and": (operator.and_, "&"),
    "or": (operator.or_, "|"), "xor": (operator.xor, "^"),
}  # fmt: skip
for _name, (_op, _symbol) in _BINARY.items():
    setattr(ColExpr, f"__{_name}__", _binary(_op, _symbol, False))
    setattr(ColExpr, f"__r{_name}__", _binary(_op, _symbol, True))
for _name, (_op, _symbol) in {
    "lt": (operator.lt, "<"), "le": (operator.le, "<="), "gt": (operator.gt, ">"),
    "ge": (operator.ge, ">="), "eq": (operator.eq, "=="), "ne": (operator.ne, "!="),
}.items():  # fmt: skip
    setattr(ColExpr, f"__{_name}__", _binary(_op, _symbol, False))
setattr(ColExpr, "__neg__", _unary(operator.neg, "-"))  # noqa: B010
setattr(ColExpr, "__invert__", _unary(operator.invert, "~"))  # noqa: B010


def col(name: str) -> ColExpr:
    """An unbound expression of the column ``name`` (looked up when bound to a table).

    >>> import dataclasses
    >>> from pyblosc2.ctable import CTable
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = 0
    >>> t = CTable(Row, new_data=[(1,), (5,)])
    >>> t[col("x") > 2].x[:], t.assign(y=col("x") * 10).y[:]
    (array([5]), array([10, 50]))
    """
    return ColExpr(lambda t: t[name], name)
