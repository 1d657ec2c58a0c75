"""Three-valued (Kleene) logic for conditions over nullable columns.

A comparison that reads a null is neither true nor false but *unknown*. A comparison over
a nullable column is a :class:`NullableBoolExpr`: a lazy bool expression whose values are
the rows where it is definitely true (what ``CTable.where`` keeps, SQL's ``WHERE``), with
the unknown rows carried beside them so that ``&``, ``|``, ``^`` and ``~`` combine by
Kleene's rules: ``unknown & false`` is false, ``unknown | true`` is true, ``~unknown`` is
unknown (so ``~(a > 5)`` never keeps a row where ``a`` is null), ``p | ~p`` is not a
tautology. A nullable bool column is such an operand itself. String conditions
(``t.where("~(a > 5) | b")``) are evaluated leaf by leaf (:func:`kleene_condition`) to the
same answer.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..compute.lazyexpr import LazyExpr

__all__ = ["NullableBoolExpr", "kleene_condition"]


def _lazy(x: Any) -> LazyExpr:
    return x if isinstance(x, LazyExpr) else LazyExpr(new_op=(x, None, None))


def _channels(x: Any) -> tuple[Any, Any]:
    """``(definitely true, unknown or None)`` of an operand."""
    if isinstance(x, NullableBoolExpr):
        return x._true, x._null
    kleene = getattr(x, "_kleene_operand", None)
    if kleene is not None:  # a Column
        x = kleene()
        return _channels(x) if isinstance(x, NullableBoolExpr) else (x, None)
    return x, None


class NullableBoolExpr(LazyExpr):
    """A three-valued condition: its values are the definitely-true rows (over the
    table's physical rows), :meth:`is_null` the unknown ones.

    >>> import dataclasses
    >>> import pyblosc2 as blosc2
    >>> @dataclasses.dataclass
    ... class Row:
    ...     a: int = blosc2.field(blosc2.int64(nullable=True))
    >>> t = blosc2.CTable(Row, new_data=[(1,), (None,), (9,)])
    >>> p = t.a > 5
    >>> p.is_null().tolist(), t.where(~p)["a"][:].tolist()
    ([False, True, False], [1])
    """

    _true: Any
    _null: Any
    _table: Any
    _defers_nulls = True  # ``ndarray & this`` is handed to this side (ndarray/operand.py)

    @classmethod
    def make(cls, true: Any, null: Any, table: Any) -> NullableBoolExpr:
        """The condition true at ``true`` (already false where unknown), unknown at
        ``null`` (None: nowhere)."""
        true = _lazy(true)
        out = cls()
        out._set(true.expression, dict(true.operands))
        out._true, out._null, out._table = true, null, table
        return out

    @classmethod
    def leaf(cls, value: Any, null: Any, table: Any) -> Any:
        """A comparison's values ``value`` with the rows ``null`` unknown (a plain
        expression when no row can be)."""
        if null is None:
            return value
        return cls.make(value & ~null, null, table)

    def __repr__(self) -> str:
        return f"NullableBoolExpr({self.expression!r})"

    def _wrap(self, true: Any, null: Any) -> NullableBoolExpr:
        return NullableBoolExpr.make(true, null, self._table)

    def __and__(self, other: Any) -> NullableBoolExpr:
        (ta, na), (tb, nb) = (self._true, self._null), _channels(other)
        if na is None and nb is None:
            null = None
        elif nb is None:
            null = na & tb  # unknown & false is false
        elif na is None:
            null = nb & ta
        else:
            null = (na & (tb | nb)) | (nb & (ta | na))
        return self._wrap(ta & tb, null)

    __rand__ = __and__

    def __or__(self, other: Any) -> NullableBoolExpr:
        (ta, na), (tb, nb) = (self._true, self._null), _channels(other)
        if na is None and nb is None:
            null = None
        elif nb is None:
            null = na & ~tb  # unknown | true is true
        elif na is None:
            null = nb & ~ta
        else:
            null = (na & ~tb) | (nb & ~ta)
        return self._wrap(ta | tb, null)

    __ror__ = __or__

    def __xor__(self, other: Any) -> NullableBoolExpr:
        (ta, na), (tb, nb) = (self._true, self._null), _channels(other)
        if na is None and nb is None:
            return self._wrap(ta ^ tb, None)
        null = na if nb is None else (nb if na is None else na | nb)
        return self._wrap((ta ^ tb) & ~null, null)

    __rxor__ = __xor__

    def __invert__(self) -> NullableBoolExpr:
        if self._null is None:
            return self._wrap(~self._true, None)
        return self._wrap(~self._true & ~self._null, self._null)

    # -- the third value --------------------------------------------------------------------
    def is_null(self) -> np.ndarray:
        """True where the condition is unknown, one flag per live row."""
        live = self._table._live_positions()
        if self._null is None:
            return np.zeros(live.size, dtype=np.bool_)
        values = self._null.compute() if isinstance(self._null, LazyExpr) else self._null
        return np.asarray(values[:])[live]

    def notnull(self) -> np.ndarray:
        """True where the condition is true or false."""
        return ~self.is_null()

    def null_count(self) -> int:
        """How many live rows the condition is unknown for."""
        return int(self.is_null().sum())

    def fillna(self, value: bool) -> LazyExpr:
        """A two-valued condition: the unknown rows read as ``value``."""
        if value and self._null is not None:
            return _lazy(self._true | self._null)
        return self._true


# -- string conditions ----------------------------------------------------------------------
def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def kleene_condition(table: Any, text: str) -> Any:
    """The string condition ``text`` over ``table``'s columns with Kleene logic where it
    reads a nullable column (None when it reads none: the plain evaluation is exact)."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    nullable = {c.name for c in table._columns if table[c.name].null_storage != "none"} & _names(
        tree
    )
    if not nullable:
        return None
    return _evaluate(table, tree, nullable)


def _evaluate(table: Any, node: ast.AST, nullable: set[str]) -> Any:
    if isinstance(node, ast.BoolOp):
        parts = [_evaluate(table, v, nullable) for v in node.values]
        out = parts[0]
        for p in parts[1:]:
            out = _kleene(out) & p if isinstance(node.op, ast.And) else _kleene(out) | p
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr | ast.BitXor):
        left = _kleene(_evaluate(table, node.left, nullable))
        right = _evaluate(table, node.right, nullable)
        if isinstance(node.op, ast.BitAnd):
            return left & right
        return left | right if isinstance(node.op, ast.BitOr) else left ^ right
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.Invert):
        return ~_kleene(_evaluate(table, node.operand, nullable))
    if isinstance(node, ast.Name) and node.id in nullable:
        return table[node.id]._kleene_operand()
    names = sorted(_names(node) & nullable)
    value = table._string_condition(ast.unparse(node))
    null = None
    for name in names:
        pred = table[name]._null_pred()
        if pred is not None:
            null = pred if null is None else null | pred
    return NullableBoolExpr.leaf(value, null, table)


def _kleene(x: Any) -> Any:
    """``x`` as an operand whose ``&``/``|``/``^``/``~`` are Kleene's (a two-valued
    condition is one with no unknown rows)."""
    return x if isinstance(x, NullableBoolExpr) else _TwoValued(x)


class _TwoValued:
    """A two-valued condition on the left of a Kleene operator."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __and__(self, other: Any) -> Any:
        return other & self.value if isinstance(other, NullableBoolExpr) else self.value & other

    def __or__(self, other: Any) -> Any:
        return other | self.value if isinstance(other, NullableBoolExpr) else self.value | other

    def __xor__(self, other: Any) -> Any:
        return other ^ self.value if isinstance(other, NullableBoolExpr) else self.value ^ other

    def __invert__(self) -> Any:
        return ~self.value
