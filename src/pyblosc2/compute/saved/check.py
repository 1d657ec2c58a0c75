"""The checks a saved expression string passes before any operand is opened or anything is
computed.

1. It is parsed by the engine's parser (:mod:`..parser`): ``ast`` and an allow-list of node
   kinds, operators, functions and methods, with bounded length and depth. ``__import__``,
   attribute access other than the engine's methods, lambdas, comprehensions, statements
   and unknown functions are refused there.
2. Every name it uses is one of its operands (or ``nan``/``inf``/``pi``/``e``): a name
   that would be looked up anywhere else is refused.
3. What the engine computes *while analysing* an expression is bounded: a constructor
   (``arange``, ``zeros``, ``linspace``...) or another eager function takes only literal
   arguments, only the value parameters of :data:`EAGER_PARAMETERS` (never ``urlpath``,
   ``mode``, ``storage``, ``chunks``...: a saved expression must not write files), and a
   constructor makes at most the memory bound's bytes (``max_memory``, by default the
   available memory); a reduction takes no ``out=`` (it would write into an operand).

>>> check_expression("a + sin(b)", ("a", "b"), "e")
>>> check_expression("zeros((10,), urlpath='/tmp/x.b2nd') + a", ("a",), "e")
Traceback (most recent call last):
...
pyblosc2.errors.FormatError: e: expression is zeros(...) with urlpath=, expected ...
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...errors import FormatError, ParamError
from ..parser import CONSTANT_NAMES, parse
from ..plan import memory_bound
from ..registry import CONSTRUCTORS
from ..tree import Call, Const, Eager, Index, Name, Node, Reduce, Seq

__all__ = ["EAGER_PARAMETERS", "check_expression", "constructed_items"]

#: the parameters a constructor or eager function of a saved expression may be given
EAGER_PARAMETERS = frozenset(
    {
        "start",
        "stop",
        "step",
        "num",
        "endpoint",
        "dtype",
        "shape",
        "c_order",
        "fill_value",
        "N",
        "M",
        "k",
        "iterable",
        "axis",
        "keepdims",
        "newshape",
        "x",
        "arrays",
    }
)


def _nodes(tree: Node) -> Iterator[Any]:
    """Every node, reduction keywords and eager keywords included, without recursion."""
    stack: list[Any] = [tree]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, Call):
            stack.extend(n.args)
        elif isinstance(n, Reduce):
            stack.append(n.arg)
            stack.extend(v for _, v in n.kwargs if isinstance(v, Name | Const | Call | Reduce))
        elif isinstance(n, Index):
            stack.append(n.arg)
        elif isinstance(n, Eager):
            stack.extend(n.args)
            stack.extend(v for _, v in n.kwargs)
        elif isinstance(n, Seq):
            stack.extend(n.items)


def _literal(v: Any) -> Any:
    return v.value if isinstance(v, Const) else v


def constructed_items(node: Eager) -> int:
    """The number of items constructor ``node`` makes (from its literal arguments).

    >>> from pyblosc2.compute.parser import parse
    >>> constructed_items(parse("arange(2, 10, 2)")), constructed_items(parse("zeros((3, 4))"))
    (4, 12)
    """
    fn = CONSTRUCTORS[node.func]
    args = [_literal(a) for a in node.args]
    kwargs = {k: _literal(v) for k, v in node.kwargs}
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    except TypeError as exc:
        raise ParamError(f"{node.func}(): {exc}") from None

    def count(shape: Any) -> int:
        dims = (shape,) if isinstance(shape, int) else shape
        if not isinstance(dims, tuple | list) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in dims
        ):
            raise ParamError(f"{node.func}(): shape {shape!r} is not integers")
        return math.prod(max(n, 0) for n in dims)

    if bound.get("shape") is not None:
        return count(bound["shape"])
    if node.func == "arange":
        given = [bound.get("start"), bound.get("stop"), bound.get("step", 1)]
        if given[1] is None:
            given[:2] = [0, given[0]]
        if given[2] is None:
            given[2] = 1
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in given):
            raise ParamError("arange(): start, stop and step must be numbers")
        start, stop, step = (float(v) for v in given)
        span = (stop - start) / step if step else math.inf
        if not math.isfinite(span):
            raise ParamError("arange(): start, stop and step must be finite, step not 0")
        return max(0, math.ceil(span))
    if node.func == "linspace":
        num = bound.get("num")
        if num is None:
            raise ParamError("linspace(): num or shape is needed")
        return count(int(num) if isinstance(num, float) and num.is_integer() else num)
    if node.func == "eye":
        n, m = bound.get("N"), bound.get("M")
        return count((n, n if m is None else m))
    raise ParamError(f"{node.func}(): no shape")


def _itemsize(node: Eager) -> int:
    dtype = dict(node.kwargs).get("dtype")
    try:
        return max(np.dtype(_literal(dtype) if dtype is not None else np.float64).itemsize, 1)
    except (TypeError, ValueError):
        return 8


def _eager(node: Eager, where: str, bound: int) -> None:
    def refuse(expected: str, got: str) -> FormatError:
        return FormatError(where, "expression", None, expected, got)

    for k, _ in node.kwargs:
        if k not in EAGER_PARAMETERS:
            raise refuse(
                "constructors and eager functions with value parameters only "
                f"({', '.join(sorted(EAGER_PARAMETERS))})",
                f"{node.func}(...) with {k}=",
            )
    if node.func not in CONSTRUCTORS:
        return
    if not all(isinstance(a, Const) for a in (*node.args, *(v for _, v in node.kwargs))):
        raise refuse("constructors with literal arguments", f"{node.func}(...) with an expression")
    try:
        sig = inspect.signature(CONSTRUCTORS[node.func])
        names = sig.bind(*node.args, **dict(node.kwargs)).arguments
    except TypeError as exc:
        raise refuse("a constructor call python-blosc2 accepts", f"{node.func}(): {exc}") from None
    extra = sorted(set(names) - EAGER_PARAMETERS)
    if extra:
        raise refuse("constructors with value parameters only", f"{node.func}(...) with {extra}")
    try:
        items = constructed_items(node)
    except ParamError as exc:
        raise refuse("a constructor with a literal size", str(exc)) from None
    if items * _itemsize(node) > bound:
        raise refuse(
            f"constructors making at most {bound} bytes (the memory bound)",
            f"{node.func}(...) making {items} items",
        )


def check_expression(
    text: str, names: tuple[str, ...], where: str, max_memory: int | None = None
) -> None:
    """Refuse ``text`` (a saved expression over operands ``names``) unless it passes the
    checks of the module docstring; a :class:`~pyblosc2.errors.FormatError` names the
    reason."""
    try:
        tree = parse(text)
    except ParamError as exc:
        allowed = "an expression the engine allows"
        raise FormatError(where, "expression", None, allowed, str(exc)) from None
    known = set(names)
    bound = memory_bound(max_memory)
    for node in _nodes(tree):
        if isinstance(node, Name) and node.id not in known and node.id not in CONSTANT_NAMES:
            raise FormatError(
                where, "expression", None, f"names among its operands {sorted(known)}", node.id
            )
        if isinstance(node, Reduce) and "out" in node.options:
            raise FormatError(where, "expression", None, "reductions without out=", node.op)
        if isinstance(node, Eager):
            _eager(node, where, bound)
