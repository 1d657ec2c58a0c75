"""An elementwise tree (:class:`~.tree.Call`, :class:`~.tree.Name`, :class:`~.tree.Const`
nodes only) evaluated on the parts of one piece: by numexpr where it gives numpy's result
(its virtual machine works in cache-sized blocks, without full-size temporaries, on its own
threads with the GIL released), else by numpy, node by node.

numexpr is used when every operand part is float64 or complex128 (or a Python number), every
function is in :data:`~.functions.NUMEXPR_FUNCS` and, with complex operands, nothing
compares; the result is cast to the dtype numpy's rules give. Everything else (integers,
float32, strings, datetimes, the functions numexpr lacks) is numpy's.

>>> from .tree import Call, Const, Name
>>> k = Kernel(Call("add", (Name("a"), Const(1))), {"a": np.dtype("f8")}, np.dtype("f8"))
>>> k.numexpr_text, k({"a": np.arange(3.0)}).tolist()
('(a + 1)', [1.0, 2.0, 3.0])
"""

from __future__ import annotations

import math
from typing import Any

import numexpr
import numpy as np

from ..errors import ParamTypeError
from .functions import NUMEXPR_FUNCS, function
from .tree import Call, Const, Name, Node, walk

__all__ = ["Kernel", "evaluate_numpy"]

_NE_INFIX = {
    "add": "+",
    "subtract": "-",
    "multiply": "*",
    "divide": "/",
    "pow": "**",
    "less": "<",
    "less_equal": "<=",
    "greater": ">",
    "greater_equal": ">=",
    "equal": "==",
    "not_equal": "!=",
    "logical_and": "&",
    "logical_or": "|",
}
_NE_PREFIX = {"negative": "-", "logical_not": "~"}
_COMPARES = frozenset({"less", "less_equal", "greater", "greater_equal"})
_NE_DTYPES = frozenset({np.dtype("f8"), np.dtype("c16")})


def evaluate_numpy(node: Node, parts: dict[str, Any]) -> Any:
    """``node`` on ``parts`` with numpy (recursion bounded by the parser's depth limit)."""
    if isinstance(node, Name):
        return parts[node.id]
    if isinstance(node, Const):
        return node.value
    if isinstance(node, Call):
        fn = function(node.func)
        if fn is None:
            raise ParamTypeError(f"{node.func} is not an elementwise function")
        return fn(*[evaluate_numpy(a, parts) for a in node.args])
    raise TypeError(f"{type(node).__name__} nodes are computed before the elementwise pass")


def _ne_text(node: Node) -> str:
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Const):
        return repr(node.value)
    assert isinstance(node, Call)
    args = [_ne_text(a) for a in node.args]
    if node.func in _NE_INFIX:
        return f"({args[0]} {_NE_INFIX[node.func]} {args[1]})"
    if node.func in _NE_PREFIX:
        return f"({_NE_PREFIX[node.func]}{args[0]})"
    return f"{node.func}({', '.join(args)})"


def _numexpr_ok(tree: Node, dtypes: dict[str, np.dtype]) -> bool:
    calls = [n for n in walk(tree) if isinstance(n, Call)]
    if not calls or any(n.func not in NUMEXPR_FUNCS for n in calls):
        return False
    for n in walk(tree):
        if isinstance(n, Name) and dtypes.get(n.id) not in _NE_DTYPES:
            return False
        if isinstance(n, Const):
            v = n.value
            if isinstance(v, bool) or not isinstance(v, int | float | complex):
                return False
            if not (math.isfinite(v.real) and math.isfinite(v.imag)):
                return False  # numexpr has no nan/inf literals
    if any(d.kind == "c" for d in dtypes.values()):
        return not any(n.func in _COMPARES for n in calls)
    return True


class Kernel:
    """``tree`` compiled for operands of ``dtypes`` (name -> dtype; scalars absent),
    producing ``dtype``."""

    def __init__(self, tree: Node, dtypes: dict[str, np.dtype], dtype: np.dtype) -> None:
        self.tree = tree
        self.dtype = dtype
        self.numexpr_text = _ne_text(tree) if _numexpr_ok(tree, dtypes) else None

    def __call__(self, parts: dict[str, Any]) -> Any:
        """The tree's value on ``parts`` (name -> numpy part or scalar)."""
        if self.numexpr_text is not None:
            out = numexpr.evaluate(self.numexpr_text, local_dict=parts)
        else:
            out = evaluate_numpy(self.tree, parts)
        out = np.asarray(out)
        if out.dtype != self.dtype:
            out = out.astype(self.dtype)
        return out
