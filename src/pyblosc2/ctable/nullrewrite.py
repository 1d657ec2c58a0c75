"""python-blosc2's string-predicate rewriter for nullable columns
(``blosc2.ctable_nulls.rewrite_null_predicates``, ``sentinel_guard_expr`` and
``CTable._rewrite_null_predicates``): a ``where`` string made to follow SQL's ``WHERE``,
where a comparison that reads a null matches nothing.

Each comparison that reads a nullable column gets that column's *guard* (an expression
true where the column is not null: ``(a != 999)``, ``(a == a)`` for a NaN sentinel, a
sidecar operand for a mask column) conjoined to it, per comparison, so that ``(a > 10) |
(b == 0)`` still keeps a row null in ``a`` whose ``b`` is 0. A comparison the null's
stand-in (the sentinel, a mask column's fill) cannot satisfy keeps no guard (``a > 10``
with ``null_value=-1``): the rewrite changes nothing there. ``and``/``or`` become ``&``/``|``.

Under a negation a guard is not enough: the rewrite carries two expressions per
subexpression, *definitely true* and *unknown* (Kleene's three values, as
:mod:`.kleene` evaluates them), so that ``~(a > 10)`` is false for a null ``a`` and
``~((a > 10) & (b == 999))`` is true where ``b != 999`` whatever ``a`` is.

pyblosc2's own ``where`` evaluates string conditions over nullable columns leaf by leaf
(:func:`.kleene.kleene_condition`) to the same rows; these functions give the rewritten
text python-blosc2 gives, for code that asks for it.
"""

from __future__ import annotations

import ast
import copy
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .. import schema as specs
from .nulls import NULL_MASK, NULL_SENTINEL, null_kind

__all__ = ["rewrite_null_predicates", "rewrite_table_predicates", "sentinel_guard_expr"]

Guards = Mapping[str, tuple[str, Any]]  # name -> (guard text, the null's stand-in value)
Pair = tuple[ast.expr, ast.expr | None]  # (definitely true, unknown or None: never)

_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne,
}  # fmt: skip


def sentinel_guard_expr(name: str, null_value: Any) -> str | None:
    """The text of a condition true where column ``name`` does not hold the sentinel
    ``null_value`` (None when the sentinel has no literal form).

    >>> sentinel_guard_expr("x", -1), sentinel_guard_expr("x", float("nan"))
    ('(x != -1)', '(x == x)')
    """
    if isinstance(null_value, float | np.floating) and math.isnan(null_value):
        return f"({name} == {name})"  # NaN is the one value unequal to itself
    if isinstance(null_value, np.generic):
        null_value = null_value.item()
    if isinstance(null_value, bool | int | float | str | bytes):
        return f"({name} != {null_value!r})"
    return None


def rewrite_null_predicates(expr: str, guards: Guards) -> str | None:
    """``expr`` with each comparison over a column of ``guards`` (name -> ``(guard text,
    the null's stand-in)``) made false for that column's nulls; None when nothing changed
    (``expr`` does not parse, reads no such column, or no stand-in could match).

    >>> rewrite_null_predicates("(a > 10) | (b == 0)", {"a": ("(a != 999)", 999)})
    '(a > 10) & (a != 999) | (b == 0)'
    >>> rewrite_null_predicates("~(a > 10)", {"a": ("(a != -1)", -1)})
    '~(a > 10) & (a != -1)'
    >>> rewrite_null_predicates("a > 10", {"a": ("(a != -1)", -1)}) is None
    True
    """
    if not guards:
        return None
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None
    rewriter = _Rewriter(guards)
    body = rewriter.truth(tree.body)
    return ast.unparse(body) if rewriter.changed else None


def _operand_names(node: ast.AST) -> set[str]:
    """The column names ``node`` reads, dotted paths whole (``trip.lon``, not ``trip``)."""
    if isinstance(node, ast.Name | ast.Attribute):
        return {ast.unparse(node)}
    out: set[str] = set()
    for child in ast.iter_child_nodes(node):
        out |= _operand_names(child)
    return out


def _could_match(node: ast.Compare, name: str, stand_in: Any) -> bool:
    """Whether a null of ``name`` (holding ``stand_in``) could satisfy ``node``: False only
    for ``name <op> literal`` (or the mirror) that the stand-in fails."""
    if len(node.ops) != 1 or type(node.ops[0]) not in _OPS:
        return True
    op = _OPS[type(node.ops[0])]
    left, right = node.left, node.comparators[0]
    try:
        if isinstance(left, ast.Name | ast.Attribute) and ast.unparse(left) == name:
            return bool(op(stand_in, ast.literal_eval(right)))
        if isinstance(right, ast.Name | ast.Attribute) and ast.unparse(right) == name:
            return bool(op(ast.literal_eval(left), stand_in))
    except Exception:  # not a literal, or values that do not compare
        return True
    return True


def _and(a: ast.expr, b: ast.expr) -> ast.expr:
    return ast.BinOp(copy.deepcopy(a), ast.BitAnd(), copy.deepcopy(b))


def _or(a: ast.expr, b: ast.expr) -> ast.expr:
    return ast.BinOp(copy.deepcopy(a), ast.BitOr(), copy.deepcopy(b))


def _not(a: ast.expr) -> ast.expr:
    """``~a``, with ``~~x`` written ``x`` (a guard's unknown channel is ``~guard``)."""
    if isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.Invert):
        return copy.deepcopy(a.operand)
    return ast.UnaryOp(ast.Invert(), copy.deepcopy(a))


def _is_negation(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.Invert)


def _connective(node: ast.AST) -> tuple[str, list[ast.expr]] | None:
    """``("&" or "|", operands)`` of ``and``/``or``/``&``/``|``, else None."""
    if isinstance(node, ast.BoolOp):
        return ("&" if isinstance(node.op, ast.And) else "|"), list(node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
        return ("&" if isinstance(node.op, ast.BitAnd) else "|"), [node.left, node.right]
    return None


class _Rewriter:
    def __init__(self, guards: Guards) -> None:
        self.guards = guards
        self.changed = False

    def _guard_node(self, name: str) -> ast.expr:
        return ast.parse(self.guards[name][0], mode="eval").body  # a fresh tree each time

    def guarded(self, node: ast.Compare) -> ast.expr:
        """The comparison with the guard of each column whose null could satisfy it."""
        out: ast.expr = node
        for name in sorted(_operand_names(node) & set(self.guards)):
            if _could_match(node, name, self.guards[name][1]):
                out = ast.BinOp(out, ast.BitAnd(), self._guard_node(name))
                self.changed = True
        return out

    def unknown(self, node: ast.Compare) -> ast.expr | None:
        """Where the comparison reads a null (any guarded column's), or None."""
        out: ast.expr | None = None
        for name in sorted(_operand_names(node) & set(self.guards)):
            term = _not(self._guard_node(name))
            out = term if out is None else _or(out, term)
        return out

    def truth(self, node: ast.expr) -> ast.expr:
        """``node`` rewritten where only its true rows matter."""
        if isinstance(node, ast.Compare):
            return self.guarded(node)
        if _is_negation(node):
            true, null = self.pair(node)
            self.changed |= null is not None
            return true
        if isinstance(node, ast.BoolOp):
            parts = [self.truth(v) for v in node.values]
            out = parts[0]
            for part in parts[1:]:
                out = ast.BinOp(
                    out, ast.BitAnd() if isinstance(node.op, ast.And) else ast.BitOr(), part
                )
            return out
        for field, value in ast.iter_fields(node):  # anything else: its subexpressions
            if isinstance(value, ast.expr):
                setattr(node, field, self.truth(value))
            elif isinstance(value, list):
                setattr(
                    node, field, [self.truth(v) if isinstance(v, ast.expr) else v for v in value]
                )
        return node

    def pair(self, node: ast.expr) -> Pair:
        """(definitely true, unknown) of a condition, for a negation above it."""
        if _is_negation(node):
            assert isinstance(node, ast.UnaryOp)
            if isinstance(node.operand, ast.Compare):  # ~leaf: ~leaf & ~unknown
                null = self.unknown(node.operand)
                negated = ast.UnaryOp(node.op, node.operand)
                return (negated, None) if null is None else (_and(negated, _not(null)), null)
            true, null = self.pair(node.operand)
            negated = ast.UnaryOp(node.op, true)
            return (negated, None) if null is None else (_and(negated, _not(null)), null)
        parts = _connective(node)
        if parts is not None:
            op, values = parts
            out = self.pair(values[0])
            for value in values[1:]:
                out = _kleene(op, out, self.pair(value))
            return out
        if isinstance(node, ast.Compare):
            return self.guarded(node), self.unknown(node)
        return self.truth(node), None  # a bool column, a call: two-valued as far as told


def _kleene(op: str, a: Pair, b: Pair) -> Pair:
    """Kleene's ``&`` / ``|`` of two (true, unknown) pairs: ``unknown & false`` is false,
    ``unknown | true`` is true."""
    (ta, na), (tb, nb) = a, b
    if op == "&":
        true = _and(ta, tb)
        if na is None and nb is None:
            return true, None
        if nb is None:
            return true, _and(na, tb)  # type: ignore[arg-type]
        if na is None:
            return true, _and(nb, ta)
        return true, _or(_and(na, _or(tb, nb)), _and(nb, _or(ta, na)))
    true = _or(ta, tb)
    if na is None and nb is None:
        return true, None
    if nb is None:
        return true, _and(na, _not(tb))  # type: ignore[arg-type]
    if na is None:
        return true, _and(nb, _not(ta))
    return true, _or(_and(na, _not(tb)), _and(nb, _not(ta)))


def rewrite_table_predicates(
    table: Any, expr: str, operands: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """``(expr, operands)`` of a ``where`` string over ``table`` with its nullable columns'
    guards (python-blosc2's ``CTable._rewrite_null_predicates``): a sentinel column's is
    its literal comparison, a mask column's an operand ``__nv<i>`` (its sidecar), the fill
    standing in for the null in the could-it-match test; unchanged when nothing applies."""
    try:
        read = _operand_names(ast.parse(expr, mode="eval"))
    except SyntaxError:
        return expr, operands
    guards: dict[str, tuple[str, Any]] = {}
    extended = dict(operands)
    for i, name in enumerate(operands):
        col = table._column_defs.get(name)
        if col is None or name not in read or name in table._computed_cols:
            continue
        kind = null_kind(col.spec)
        text = sentinel_guard_expr(name, col.spec.null_value) if kind == NULL_SENTINEL else None
        if kind == NULL_MASK or (kind == NULL_SENTINEL and text is None):
            valid = table[name]._nulls.valid_pred()
            if valid is None:  # no sidecar yet: no null to guard against
                continue
            text = f"__nv{i}"
            extended[text] = valid
        if text is not None:
            stand_in = specs.fill_value_for(col.spec) if kind == NULL_MASK else col.spec.null_value
            guards[name] = (text, stand_in)
    rewritten = rewrite_null_predicates(expr, guards)
    if rewritten is None:
        return expr, operands
    used = {k: v for k, v in extended.items() if not k.startswith("__nv") or k in rewritten}
    return rewritten, used
