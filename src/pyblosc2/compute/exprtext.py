"""A lazy expression's serializable form, as python-blosc2 writes it: an ``expression``
string over operand names ``o0``, ``o1``... and the ``operands`` dict they name.

Operators compose the strings (``a + b`` is ``"(o0 + o1)"``; ``sin`` of that is
``"sin((o0 + o1))"``), merging the operand dicts: an operand already present (the same
object) keeps its name, the others are renamed after the left side's (``o2``...). Python
scalars are written into the string (``repr``); typed numpy scalars and arrays are operands.
A string given by the user is renamed the same way (its names, in order of appearance,
become ``o0``, ``o1``...; ``a[2:5]`` becomes ``o0.slice((slice(2, 5, None),))``), parenthesized
as python-blosc2 does.

>>> ops = {"o0": "A"}
>>> text, ops = merge("(o0 + 1)", ops, "(o0 * o1)", {"o0": "A", "o1": "B"})
>>> text, ops
('(o0 * o1)', {'o0': 'A', 'o1': 'B'})
>>> rename_names("sin(x) + x * y", {"x": "o0", "y": "o1"})
'sin(o0) + o0 * o1'
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..errors import ParamError
from .parser import parse

__all__ = ["format_scalar", "merge", "rebase_user_expression", "rename_names"]


def format_scalar(value: Any) -> str:
    """A Python scalar as it appears in an expression string (python-blosc2's
    ``format_expr_scalar``).

    >>> format_scalar(2.5), format_scalar("a b"), format_scalar(True)
    ('2.5', "'a b'", 'True')
    """
    return repr(value.item() if isinstance(value, np.generic) else value)


def _name_spans(text: str, names: set[str]) -> list[tuple[int, int, str]]:
    """(start, end, name) of each use of an operand name in ``text`` (one line)."""
    tree = ast.parse(text.strip(), mode="eval")
    lead = len(text) - len(text.lstrip())
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    spans = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in names and id(n) not in called:
            if n.lineno != 1 or n.end_lineno != 1:
                raise ParamError("an expression string must be one line")
            spans.append((lead + n.col_offset, lead + (n.end_col_offset or 0), n.id))
    return spans


def rename_names(text: str, mapping: dict[str, str]) -> str:
    """``text`` with each operand name of ``mapping`` replaced (only names: strings, function
    names and attributes are left alone; the rest of the text is kept as it is)."""
    if not mapping:
        return text
    spans = sorted(_name_spans(text, set(mapping)), reverse=True)
    out = text
    for a, b, name in spans:
        out = out[:a] + mapping[name] + out[b:]
    return out


def merge(
    left: str, left_ops: dict[str, Any], right: str, right_ops: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """``right`` rebased onto ``left``'s operands: the merged operand dict and ``right``'s
    text with its names renamed (an operand present on the left, the same object, keeps the
    left's name)."""
    ops = dict(left_ops)
    by_id = {id(v): k for k, v in ops.items()}
    mapping: dict[str, str] = {}
    for k, v in right_ops.items():
        if id(v) in by_id:
            mapping[k] = by_id[id(v)]
            continue
        i = len(ops)
        while f"o{i}" in ops:
            i += 1
        mapping[k] = f"o{i}"
        ops[f"o{i}"] = v
        by_id[id(v)] = f"o{i}"
    identity = all(k == v for k, v in mapping.items())
    return (right if identity else rename_names(right, mapping)), ops


class _Rebase(ast.NodeTransformer):
    """User names -> ``o<i>`` in order of appearance; subscripts -> ``.slice(...)``."""

    def __init__(self, operands: dict[str, Any]) -> None:
        self.operands = operands
        self.mapping: dict[str, str] = {}
        self.called: set[int] = set()

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.called.add(id(node.func))
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if id(node) in self.called or node.id not in self.operands:
            return node
        new = self.mapping.setdefault(node.id, f"o{len(self.mapping)}")
        return ast.copy_location(ast.Name(id=new, ctx=ast.Load()), node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        value = self.visit(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        elts: list[ast.expr] = []
        for e in items:
            if isinstance(e, ast.Slice):
                parts = [e.lower, e.upper, e.step]
                args = [p if p is not None else ast.Constant(None) for p in parts]
                elts.append(ast.Call(ast.Name("slice", ast.Load()), args, []))
            else:
                elts.append(e)
        key = ast.Tuple(elts, ast.Load())
        call = ast.Call(ast.Attribute(value, "slice", ast.Load()), [key], [])
        return ast.copy_location(call, node)


def _in_order(tree: ast.AST) -> list[ast.Name]:
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    return sorted(names, key=lambda n: (n.lineno, n.col_offset))


def rebase_user_expression(text: str, operands: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A user's expression string and operands in python-blosc2's rebased form.

    >>> rebase_user_expression("a1 + a2 - (a3 * a4)", dict.fromkeys(["a1", "a2", "a3", "a4"], 0))
    ('(o0 + o1 - o2 * o3)', {'o0': 0, 'o1': 0, 'o2': 0, 'o3': 0})
    >>> rebase_user_expression("a1[:10]", {"a1": 0})[0]
    '(o0.slice((slice(None, 10, None),)))'
    """
    parse(text)  # the allow-list first: nothing else is looked at before it passes
    tree = ast.parse(text.strip(), mode="eval")
    rebase = _Rebase(operands)
    # names take numbers in order of appearance
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for n in _in_order(tree):
        if id(n) not in called and n.id in operands:
            rebase.mapping.setdefault(n.id, f"o{len(rebase.mapping)}")
    new = rebase.visit(tree)
    ast.fix_missing_locations(new)
    out = f"({ast.unparse(new)})"
    ops = {
        rebase.mapping[k]: operands[k]
        for k in sorted(rebase.mapping, key=lambda k: int(rebase.mapping[k][1:]))
    }
    return out, ops
