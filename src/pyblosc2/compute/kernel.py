"""An elementwise tree (:class:`~.tree.Call`, :class:`~.tree.Name`, :class:`~.tree.Const`
nodes only) evaluated on the parts of one piece: by numexpr where it gives numpy's result
(its virtual machine works in cache-sized blocks, without full-size temporaries, on its own
threads with the GIL released), else by numpy, node by node.

numexpr computes a tree when it gives python-blosc2's values or pays (its functions run in
cache-sized blocks without temporaries; exact arithmetic on wide types is numpy's, as fast and
identical), and when it can — every operand boolean, integer (but uint64), float32,
float64 or complex128 (or a Python number), every function in
:data:`~.functions.NUMEXPR_FUNCS`, logical operators on booleans only, no ordering of
complex numbers — and the result is cast to the dtype numpy's rules give. That is how
python-blosc2 computes (its tests compare with numexpr's results), and it differs from numpy
in one way, deliberately: numexpr computes int8/int16/uint8/uint16 operands in int32 and
uint32 in int64, so an intermediate result does not wrap at the narrow width (``a ** 2 > b``
over int8 compares the true squares; numpy's int8 squares wrap). The final cast to numpy's
dtype wraps as numpy's. Everything else (uint64, strings, datetimes, ``//``, ``%``, the
functions numexpr lacks, typed numpy scalars) is numpy's; a combination numexpr refuses at
run time falls back to numpy.

>>> from .tree import Call, Const, Name
>>> k = Kernel(Call("sin", (Name("a"),)), {"a": np.dtype("f8")}, np.dtype("f8"))
>>> k.numexpr_text, k({"a": np.zeros(3)}).tolist()
('sin(a)', [0.0, 0.0, 0.0])
>>> Kernel(Call("add", (Name("a"), Const(1))), {"a": np.dtype("f8")}, np.dtype("f8")).numexpr_text
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numexpr
import numpy as np

from ..errors import ParamTypeError
from .functions import NUMEXPR_FUNCS, function
from .tree import Call, Const, Name, Node, walk

__all__ = ["Kernel", "evaluate_numpy"]

_NE_INFIX = {
    "bitwise_and": "&",
    "bitwise_or": "|",
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
_NE_PREFIX = {"negative": "-", "logical_not": "~", "bitwise_invert": "~"}
_COMPARES = frozenset({"less", "less_equal", "greater", "greater_equal"})
_LOGICAL = frozenset(
    {"logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or", "bitwise_invert"}
)
#: operations numexpr and numpy compute identically (exact IEEE arithmetic, comparisons)
_CHEAP = frozenset(
    {
        "add",
        "subtract",
        "multiply",
        "divide",
        "negative",
        "where",
        "equal",
        "not_equal",
        *_COMPARES,
        *_LOGICAL,
    }
)
#: operand dtypes numexpr computes differently from numpy (wider, as python-blosc2 does)
_NARROW = frozenset(np.dtype(t) for t in ("i1", "i2", "u1", "u2", "u4", "f4"))
#: operand dtypes numexpr takes (the narrow integers it computes in int32, uint32 in int64)
_NE_DTYPES = frozenset(
    np.dtype(t) for t in ("?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "f4", "f8", "c16")
)


#: ``take(shape, dtype)``: a buffer for a call's result (see blockwise.PieceBuffers)
Take = Callable[[tuple[int, ...], np.dtype], np.ndarray]


def evaluate_numpy(
    node: Node,
    parts: dict[str, Any],
    take: Take | None = None,
    dtypes: dict[int, np.dtype] | None = None,
) -> Any:
    """``node`` on ``parts`` with numpy (recursion bounded by the parser's depth limit).
    With ``take`` and ``dtypes`` (the result dtype of each call node, by ``id``, as an
    earlier evaluation on parts of the same dtypes gave it), a ufunc writes its array result
    into a buffer of ``take`` (the same values: numpy's own dtype, no cast); the first
    evaluation of a node records its dtype."""
    if isinstance(node, Name):
        return parts[node.id]
    if isinstance(node, Const):
        return node.value
    if isinstance(node, Call):
        fn = function(node.func)
        if fn is None:
            raise ParamTypeError(f"{node.func} is not an elementwise function")
        args = [evaluate_numpy(a, parts, take, dtypes) for a in node.args]
        if take is None or dtypes is None or not isinstance(fn, np.ufunc):
            return fn(*args)
        dt = dtypes.get(id(node))
        shapes = [a.shape for a in args if isinstance(a, np.ndarray)]
        if dt is None or not shapes:
            res = fn(*args)
            if isinstance(res, np.ndarray):
                dtypes[id(node)] = res.dtype
            return res
        shape = np.broadcast_shapes(*shapes)
        if not shape:
            return fn(*args)
        return fn(*args, out=take(shape, dt))
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


def _ne_kind(node: Node, dtypes: dict[str, np.dtype]) -> str | None:
    """``"b"`` (boolean), ``"n"`` (numeric) or ``"c"`` (complex) for a subtree numexpr
    computes as python-blosc2 does, else None."""
    if isinstance(node, Name):
        dt = dtypes.get(node.id)
        if dt not in _NE_DTYPES:
            return None
        return "b" if dt.kind == "b" else ("c" if dt.kind == "c" else "n")
    if isinstance(node, Const):
        v = node.value
        if isinstance(v, np.generic) or not isinstance(v, bool | int | float | complex):
            return None  # a typed numpy scalar keeps numpy's promotion: numpy's
        if isinstance(v, bool):
            return "b"
        if not (math.isfinite(v.real) and math.isfinite(v.imag)):
            return None  # numexpr has no nan/inf literals
        return "c" if isinstance(v, complex) else "n"
    if not isinstance(node, Call) or node.func not in NUMEXPR_FUNCS:
        return None
    kinds = [_ne_kind(a, dtypes) for a in node.args]
    if None in kinds:
        return None
    f = node.func
    if f in _LOGICAL:
        return "b" if all(k == "b" for k in kinds) else None
    if f in _COMPARES:
        return "b" if all(k == "n" for k in kinds) else None
    if f in ("equal", "not_equal"):
        return "b" if len(set(kinds)) == 1 or "b" not in kinds else None
    if f == "where":
        return kinds[1] if kinds[0] == "b" and "b" not in kinds[1:] else None
    if "b" in kinds:
        return None  # numexpr has no arithmetic on booleans
    return "c" if "c" in kinds else "n"


class Kernel:
    """``tree`` compiled for operands of ``dtypes`` (name -> dtype; scalars absent),
    producing ``dtype``."""

    def __init__(self, tree: Node, dtypes: dict[str, np.dtype], dtype: np.dtype) -> None:
        self.tree = tree
        self.dtype = dtype
        calls = [n for n in walk(tree) if isinstance(n, Call)]
        # numexpr where it computes what python-blosc2 computes (narrow integers, float32)
        # or where it pays (functions); exact IEEE arithmetic on wide types is numpy's,
        # whose loops are faster than numexpr's threads for it (the result is the same)
        worth = any(d in _NARROW for d in dtypes.values()) or any(
            n.func not in _CHEAP for n in calls
        )
        ok = calls and worth and _ne_kind(tree, dtypes)
        self.numexpr_text = _ne_text(tree) if ok else None
        #: the result dtype of numexpr and of each numpy call, as their first run gave it
        self._ne_dtype: np.dtype | None = None
        self._dtypes: dict[int, np.dtype] = {}

    def _numexpr(self, parts: dict[str, Any], take: Take | None) -> Any:
        """numexpr's value, into a buffer of ``take`` once its dtype is known."""
        assert self.numexpr_text is not None
        dt = self._ne_dtype
        shapes = [p.shape for p in parts.values() if isinstance(p, np.ndarray)]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        if take is None or dt is None or not shape:
            out = numexpr.evaluate(self.numexpr_text, local_dict=parts)
            if isinstance(out, np.ndarray) and out.shape:
                self._ne_dtype = out.dtype
            return out
        return numexpr.evaluate(self.numexpr_text, local_dict=parts, out=take(shape, dt))

    def __call__(self, parts: dict[str, Any], take: Take | None = None) -> Any:
        """The tree's value on ``parts`` (name -> numpy part or scalar); with ``take``, the
        results of its calls are written into buffers ``take`` gives (the same values)."""
        out = None
        if self.numexpr_text is not None:
            try:
                out = self._numexpr(parts, take)
            except (NotImplementedError, TypeError, ValueError, KeyError):
                self.numexpr_text = None  # a combination numexpr lacks: numpy from now on
        if out is None:
            out = evaluate_numpy(self.tree, parts, take, self._dtypes)
        out = np.asarray(out)
        if out.dtype != self.dtype:
            out = out.astype(self.dtype)
        return out
