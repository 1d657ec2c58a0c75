"""``evaluate``: a numexpr-style string expression over NDArrays, numpy arrays and scalars,
computed chunk by chunk with numpy's casting rules (as python-blosc2's ``evaluate``).

The expression is parsed once with :mod:`ast` into a small tree of numpy calls; only
arithmetic, comparisons, bitwise/boolean operators, constants, operand names and the functions
of :data:`FUNCTIONS` are accepted (nothing is ``eval``-ed). Elementwise work runs one output
piece at a time on the thread pool, so each operand is decompressed one chunk at a time.
Reductions (``sum(a)``, ``max(a - b, axis=0)``, ...) anywhere in the expression are computed
first, chunk by chunk, and their results join the remaining expression as operands.
"""

from __future__ import annotations

import ast
import math
import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._threads import default_nthreads, run_parallel
from ..errors import Blosc2Error, ParamError
from .ndarray import NDArray
from .operators import _boxes, _partition, _shape, broadcast_parts, map_chunks, normalize_axis

__all__ = ["FUNCTIONS", "REDUCTIONS", "evaluate"]

#: elementwise functions an expression may call (numexpr's, plus a few numpy names)
FUNCTIONS: dict[str, Callable[..., Any]] = {
    name: getattr(np, name)
    for name in [
        "sin",
        "cos",
        "tan",
        "arcsin",
        "arccos",
        "arctan",
        "arctan2",
        "sinh",
        "cosh",
        "tanh",
        "arcsinh",
        "arccosh",
        "arctanh",
        "exp",
        "expm1",
        "log",
        "log10",
        "log1p",
        "log2",
        "sqrt",
        "square",
        "abs",
        "absolute",
        "conj",
        "real",
        "imag",
        "floor",
        "ceil",
        "where",
        "fmod",
        "hypot",
        "maximum",
        "minimum",
        "isnan",
        "isinf",
        "isfinite",
        "sign",
        "negative",
        "round",
        "trunc",
        "logical_and",
        "logical_or",
        "logical_not",
        "logical_xor",
    ]
}
FUNCTIONS["complex"] = lambda re, im: np.asarray(re) + 1j * np.asarray(im)
FUNCTIONS["conjugate"] = np.conjugate

#: reductions an expression may call; they are computed before the elementwise part
REDUCTIONS = frozenset({"sum", "prod", "min", "max", "mean", "std", "var", "any", "all"})

#: reductions computed as partial results per piece, then the same reduction of those
_SIMPLE: dict[str, Callable[..., Any]] = {
    n: getattr(np, n) for n in ("sum", "prod", "min", "max", "any", "all")
}

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.true_divide,
    ast.FloorDiv: np.floor_divide,
    ast.Mod: np.remainder,
    ast.Pow: np.power,
    ast.BitAnd: np.bitwise_and,
    ast.BitOr: np.bitwise_or,
    ast.BitXor: np.bitwise_xor,
    ast.LShift: np.left_shift,
    ast.RShift: np.right_shift,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: np.negative,
    ast.UAdd: np.positive,
    ast.Invert: np.invert,
    ast.Not: np.logical_not,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
}


class _Expr:
    """A parsed expression: ``run(env)`` evaluates it on the operand values in ``env``."""

    def __init__(self, text: str) -> None:
        self.text = text
        try:
            self.tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as exc:
            raise ParamError(f"expression {text!r} cannot be evaluated: {exc.msg}") from None

    def names(self) -> set[str]:
        """The operand names the expression uses (function names excluded)."""
        funcs = {
            id(n.func) for n in ast.walk(self.tree) if isinstance(n, ast.Call)
        }  # the Name nodes that are callees
        return {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name) and id(n) not in funcs}

    def run(self, env: Mapping[str, Any]) -> Any:
        return self._eval(self.tree, env)

    def _bad(self, node: ast.AST, what: str) -> ParamError:
        return ParamError(
            f"expression {self.text!r} cannot be evaluated: {what} "
            f"({ast.unparse(node)!r} is not supported)"
        )

    def _eval(self, node: ast.AST, env: Mapping[str, Any]) -> Any:
        ev = self._eval
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float | complex | bool):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](ev(node.left, env), ev(node.right, env))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](ev(node.operand, env))
        if isinstance(node, ast.BoolOp):
            func = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            values = [ev(v, env) for v in node.values]
            result = values[0]
            for v in values[1:]:
                result = func(result, v)
            return result
        if isinstance(node, ast.Compare) and all(type(o) in _COMPARE for o in node.ops):
            left, result = ev(node.left, env), True
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = ev(right_node, env)
                result = np.logical_and(result, _COMPARE[type(op)](left, right))
                left = right
            return result
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in FUNCTIONS
            and not node.keywords
        ):
            return FUNCTIONS[node.func.id](*[ev(a, env) for a in node.args])
        raise self._bad(node, "unknown operation or function")


def _caller_namespace(depth: int) -> dict[str, Any]:
    frame = sys._getframe(depth + 1)
    return {**frame.f_globals, **frame.f_locals}


def _literal(node: ast.AST, text: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ParamError(
            f"expression {text!r} cannot be evaluated: axis must be a literal, "
            f"got {ast.unparse(node)!r}"
        ) from None


def _reduce(name: str, inner: _Expr, env: dict[str, Any], axis: Any, nthreads: int) -> Any:
    """``name(inner, axis=axis)``; without an axis each output piece of ``inner`` is computed
    and reduced on its own (never the whole of ``inner`` at once)."""
    operands = {k: env[k] for k in inner.names() if k in env}
    shape = tuple(np.broadcast_shapes(*[_shape(v) for v in operands.values()]))
    if axis is None and shape and math.prod(shape) and name in (*_SIMPLE, "mean"):
        keys = list(operands)
        vals = [operands[k] for k in keys]

        def partial(box: tuple[slice, ...]) -> Any:
            part = inner.run(dict(zip(keys, broadcast_parts(vals, box), strict=True)))
            part = np.broadcast_to(part, tuple(b.stop - b.start for b in box))
            if name == "mean":
                dt = np.result_type(part.dtype, np.float64)
                return np.sum(part, dtype=dt if part.dtype.kind in "biuf" else None)
            return _SIMPLE[name](part)

        parts = run_parallel(partial, list(_boxes(shape, _partition(shape, vals))), nthreads)
        if name == "mean":
            return np.true_divide(np.sum(parts), math.prod(shape))
        return _SIMPLE[name](np.asarray(parts))  # partial results combine the same way
    value = _elementwise(inner, env, None, nthreads)
    if isinstance(axis, int | tuple | list):
        axis = normalize_axis(axis, np.ndim(value))
    return getattr(np, name)(value, axis=axis)


def _lift_reductions(expr: _Expr, env: dict[str, Any], nthreads: int) -> _Expr:
    """Compute the reduction calls of ``expr`` (innermost first) and put their results into
    ``env`` under fresh names; returns the expression that remains."""

    text = expr.text

    class Lift(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            if not (isinstance(node.func, ast.Name) and node.func.id in REDUCTIONS):
                return node
            if not node.args:
                raise ParamError(f"expression {text!r}: {node.func.id}() needs an operand")
            axis = _literal(node.args[1], text) if len(node.args) > 1 else None
            for kw in node.keywords:
                if kw.arg != "axis":
                    raise ParamError(f"expression {text!r}: {node.func.id}() takes only axis=")
                axis = _literal(kw.value, text)
            inner = _Expr(ast.unparse(node.args[0]))
            name = f"__reduction{len(env)}"
            env[name] = _reduce(node.func.id, inner, env, axis, nthreads)
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)

    tree = Lift().visit(ast.parse(text.strip(), mode="eval"))
    return _Expr(ast.unparse(tree))


def _elementwise(expr: _Expr, env: dict[str, Any], out: Any, nthreads: int) -> Any:
    keys = sorted(expr.names())
    vals = [env[k] for k in keys]

    def fn(*parts: Any) -> Any:
        return expr.run(dict(zip(keys, parts, strict=True)))

    if not vals:
        res = np.asarray(expr.run({}))
        if out is not None:
            out[...] = res
            return out
        return res
    if isinstance(out, NDArray):
        # pieces computed on the pool, stored one chunk of ``out`` at a time
        shape = tuple(np.broadcast_shapes(*[_shape(v) for v in vals]))
        if out.shape != shape:
            raise ParamError(f"out has shape {out.shape}, the expression gives {shape}")
        if not shape:
            out[()] = fn(*[v[()] if isinstance(v, NDArray) else v for v in vals])
            return out
        boxes = list(_boxes(shape, out.chunks)) if all(out.chunks) else []
        batch = max(1, nthreads)
        for i in range(0, len(boxes), batch):
            group = boxes[i : i + batch]
            pieces = run_parallel(lambda b: fn(*broadcast_parts(vals, b)), group, nthreads)
            for box, piece in zip(group, pieces, strict=True):
                out[box] = piece
        return out
    if out is not None and not isinstance(out, np.ndarray):
        raise ParamError(f"out must be an NDArray or a numpy array, got {type(out).__name__}")
    res = map_chunks(fn, vals, out=out, nthreads=nthreads)
    return res


def evaluate(
    expression: str,
    local_dict: Mapping[str, Any] | None = None,
    global_dict: Mapping[str, Any] | None = None,
    out: Any = None,
    **kwargs: Any,
) -> Any:
    """Evaluate ``expression`` (numexpr syntax) over NDArray/numpy/scalar operands, chunk by
    chunk; returns a numpy array, or ``out`` (an NDArray or numpy array) filled with it.

    Operand names are looked up in ``local_dict`` then ``global_dict``; when those are not
    given, in the caller's variables (as numexpr and python-blosc2 do). Operands broadcast
    together; casting follows numpy. Reductions (``sum``, ``prod``, ``min``, ``max``, ``mean``,
    ``std``, ``var``, ``any``, ``all``, with an optional ``axis``) may appear anywhere.

    >>> import numpy as np; from pyblosc2 import asarray
    >>> a = asarray(np.arange(10.0)); b = np.ones(10)
    >>> evaluate("a * 2 + b")[:4]
    array([1., 3., 5., 7.])
    >>> float(evaluate("sum(a > 4) / 2"))
    2.5
    """
    if kwargs:
        raise ParamError(f"unknown evaluate arguments {sorted(kwargs)}")
    if not isinstance(expression, str):
        raise ParamError(f"expression must be a str, got {type(expression).__name__}")
    expr = _Expr(expression)
    caller = _caller_namespace(1) if local_dict is None or global_dict is None else {}
    env: dict[str, Any] = {}
    for name in expr.names():
        for space in (local_dict, global_dict, caller):
            if space is not None and name in space:
                env[name] = space[name]
                break
        else:
            raise ParamError(
                f"expression {expression!r} uses {name!r}, which is not a given or visible variable"
            )
    for name, value in env.items():
        if not isinstance(value, NDArray | np.ndarray | np.generic | int | float | complex | bool):
            env[name] = np.asarray(value)
    nthreads = max(
        (v.schunk.dparams.nthreads for v in env.values() if isinstance(v, NDArray)),
        default=default_nthreads(),
    )
    try:
        expr = _lift_reductions(expr, env, nthreads)
        return _elementwise(expr, env, out, nthreads)
    except Blosc2Error:
        raise
    except (TypeError, ValueError, KeyError) as exc:
        raise ParamError(f"expression {expression!r} cannot be evaluated: {exc}") from None
