"""String conditions of ``CTable.where`` over text columns: ``'vendor == "Uber"'``,
``'"Acme" in company and amount > 8'``, ``'name >= "m" or not x < 3'``.

The expression is parsed (never evaluated by Python) and walked: comparisons of a column
with a literal or another column, ``"needle" in column`` (a substring test),
``startswith(col, "p")``, ``endswith(col, "s")``, ``contains(col, "x")``, ``and``,
``or``, ``not``, ``&``, ``|``, ``~``, and arithmetic between numeric columns and numbers.
Each column is read once, whole (its physical rows); a row where a column the expression
names is null (``None``) matches nothing, whatever the expression (``not`` included), as
in python-blosc2. Anything else raises :class:`NotImplementedError` naming it.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from .strings import null_mask
from .textops import compare_values

__all__ = ["mentions_text", "text_condition"]

_CMP = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}
_ARITH = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_TEXT_TESTS = {
    "startswith": lambda v, p: v.startswith(p),
    "endswith": lambda v, p: v.endswith(p),
    "contains": lambda v, p: p in v,
}
MAX_NODES = 1000  # an expression string from a user: bounded before it is walked


def _is_text(arr: Any) -> bool:
    return getattr(arr, "dtype", np.dtype(int)).kind in "USTO"


def mentions_text(tree_text: str, operands: dict[str, Any]) -> bool:
    """Whether ``tree_text`` names a text column of ``operands``."""
    try:
        tree = ast.parse(tree_text.strip(), mode="eval")
    except SyntaxError:
        return False
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return any(_is_text(operands[n]) for n in names if n in operands)


class _Walker:
    def __init__(self, operands: dict[str, Any], length: int) -> None:
        self.operands = operands
        self.length = length
        self.cache: dict[str, np.ndarray] = {}

    def column(self, name: str) -> np.ndarray:
        if name not in self.cache:
            if name not in self.operands:
                raise ParamError(f"Unknown symbol: {name} (not a column)")
            values = np.asarray(self.operands[name][: self.length])
            if values.dtype.kind == "T":  # StringDType: compared as Python str
                values = values.astype(object)
            self.cache[name] = values
        return self.cache[name]

    def value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Name):
            return self.column(node.id)
        if isinstance(node, ast.Constant) and isinstance(
            node.value, str | bytes | int | float | bool | type(None)
        ):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            left, right = self.value(node.left), self.value(node.right)
            if any(isinstance(v, np.ndarray) and v.dtype == object for v in (left, right)):
                raise NotImplementedError("arithmetic on text columns in a where() string")
            return _ARITH[type(node.op)](left, right)
        return self.mask(node)

    def mask(self, node: ast.AST) -> np.ndarray:
        if isinstance(node, ast.BoolOp):
            parts = [self.mask(v) for v in node.values]
            fn = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            out = parts[0]
            for p in parts[1:]:
                out = fn(out, p)
            return out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.Invert):
            return ~self.mask(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
            fn = np.logical_and if isinstance(node.op, ast.BitAnd) else np.logical_or
            return fn(self.mask(node.left), self.mask(node.right))
        if isinstance(node, ast.Compare):
            out = np.ones(self.length, dtype=np.bool_)
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=True):
                out &= self.compare(left, op, right)
                left = right
            return out
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Name):
            values = self.column(node.id)
            if values.dtype != np.bool_:
                raise ParamTypeError(f"where() needs a boolean condition, {node.id!r} is not")
            return values
        raise NotImplementedError(f"{type(node).__name__} in a where() string over text columns")

    def call(self, node: ast.Call) -> np.ndarray:
        """``startswith(col, "p")``, ``endswith(col, "s")``, ``contains(col, "x")``."""
        name = node.func.id if isinstance(node.func, ast.Name) else None
        test = _TEXT_TESTS.get(name or "")
        if test is None or len(node.args) != 2 or node.keywords:
            raise NotImplementedError(
                f"{ast.unparse(node.func)}() in a where() string over text columns "
                f"(only {', '.join(sorted(_TEXT_TESTS))}(column, text))"
            )
        hay, needle = self.value(node.args[0]), self.value(node.args[1])
        if not isinstance(hay, np.ndarray) or not isinstance(needle, str | bytes):
            raise ParamTypeError(f"{name}() takes a text column and a text literal")
        return np.fromiter(
            (v is not None and test(v, needle) for v in hay.tolist()), np.bool_, len(hay)
        )

    def compare(self, left_node: ast.AST, op: ast.cmpop, right_node: ast.AST) -> np.ndarray:
        if isinstance(op, ast.In | ast.NotIn):
            needle = self.value(left_node)
            hay = self.value(right_node)
            if not isinstance(needle, str | bytes) or not isinstance(hay, np.ndarray):
                raise NotImplementedError("'in' in a where() string: only '\"text\" in column'")
            found = np.fromiter(
                (v is not None and needle in v for v in hay.tolist()), np.bool_, len(hay)
            )
            return ~found if isinstance(op, ast.NotIn) else found
        symbol = _CMP.get(type(op))
        if symbol is None:
            raise NotImplementedError(f"{type(op).__name__} in a where() string")
        left, right = self.value(left_node), self.value(right_node)
        if not isinstance(left, np.ndarray):  # a literal on the left: flip the comparison
            flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
            left, right, symbol = right, left, flip.get(symbol, symbol)
        if not isinstance(left, np.ndarray):
            raise ParamError("a where() comparison needs a column")
        if _is_text(left) or _is_text(right) or isinstance(right, str | bytes):
            if not _is_text(left) or not (
                _is_text(right) or isinstance(right, str | bytes) or right is None
            ):
                raise ParamTypeError(f"text compared with a non-text value: {right!r}")
            return compare_values(left, symbol, right)
        return np.asarray(compare_values(left, symbol, right), dtype=np.bool_)


def text_condition(expr: str, operands: dict[str, Any], length: int) -> np.ndarray:
    """The bool mask (``length`` physical rows) of a where() string over text columns.

    >>> ops = {"s": np.array(["a", "bc", None], dtype=object), "x": np.arange(3)}
    >>> text_condition('s == "bc" or x == 0', ops, 3).tolist()
    [True, True, False]
    >>> text_condition('"c" in s', ops, 3).tolist()
    [False, True, False]
    """
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise ParamError(f"where() expression {expr!r}: {exc.msg}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ParamError(f"where() expression longer than {MAX_NODES} nodes")
    walker = _Walker(operands, length)
    out = np.asarray(walker.mask(tree.body), dtype=np.bool_)
    for name, values in walker.cache.items():  # a row with a null operand matches nothing
        if values.dtype == object:
            out &= ~null_mask(values)
        sentinel = getattr(getattr(operands[name], "spec", None), "null_value", None)
        if sentinel is not None:
            out &= values != sentinel
    return out
