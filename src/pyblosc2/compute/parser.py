"""numexpr-style expression strings into :mod:`.tree` nodes, without evaluating anything.

The string is parsed with :mod:`ast` and every node is checked against an allow-list before
it becomes a tree node: arithmetic, comparison, bitwise and boolean operators; names (the
operands, and ``nan``/``inf``/``pi``/``e``); numbers, strings and bytes; calls of the
elementwise functions (:mod:`.functions`), the reductions, the constructors and the eager
functions (:mod:`.registry`); the methods ``.sum()`` & co., ``.slice()``, ``.reshape()``,
``.squeeze()`` and the attributes ``.T``/``.mT``; basic subscripts (``a[2:5, ::2]``); and
typed scalars ``np.int8(1)``. Keyword values and subscripts must be literals. Anything else —
attribute access to other names, ``__import__``, lambdas, comprehensions, statements — is a
:class:`~pyblosc2.errors.ParamError` naming it; so are strings over :data:`MAX_LENGTH`
characters and trees deeper than :data:`MAX_DEPTH` (checked before the recursive
conversion, so hostile nesting never reaches Python's recursion limit).

>>> parse("a + sin(b)")
Call(func='add', args=(Name(id='a'), Call(func='sin', args=(Name(id='b'),))))
>>> parse("__import__('os')")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pyblosc2.errors.ParamError: expression "__import__('os')" is not allowed: function '__import__' ...
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..errors import ParamError
from .functions import REDUCTIONS, is_elementwise
from .registry import CONSTRUCTORS, is_eager
from .tree import BINARY_OPS, UNARY_OPS, Call, Const, Eager, Index, Name, Node, Reduce, Seq

__all__ = [
    "CONSTANT_NAMES",
    "DTYPE_NAMES",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "get_expr_operands",
    "parse",
    "validate_expr",
]

#: the longest expression string accepted (characters)
MAX_LENGTH = 100_000
#: the deepest expression tree accepted (Python's own parser stops at 200 parentheses)
MAX_DEPTH = 256
#: names that are constants unless an operand has that name
CONSTANT_NAMES = {"nan": np.nan, "inf": np.inf, "pi": np.pi, "e": np.e}
#: dtype names an expression may use (``dtype=int8``, ``np.float32(1)``)
DTYPE_NAMES = frozenset(
    [
        *(f"{k}{n}" for k in ("int", "uint") for n in (8, 16, 32, 64)),
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "bool",
        "bool_",
        "str_",
        "bytes_",
        # numpy's codes, as python-blosc2's expressions take them (dtype=i2)
        *(f"{k}{n}" for k in "iu" for n in (1, 2, 4, 8)),
        "f2",
        "f4",
        "f8",
        "c8",
        "c16",
        "b1",
    ]
)
#: module prefixes that name numpy (and python-blosc2) in expressions
_MODULES = frozenset({"np", "numpy", "blosc2"})

_BIN = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_UN = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}
#: keywords a reduction takes, and those whose value may be a sub-expression
_REDUCE_KW = frozenset({"axis", "keepdims", "dtype", "ddof", "include_initial", "out", "where"})
_METHODS_EAGER = {"reshape", "squeeze"}
_ATTRS = {"T": "T", "mT": "mT"}


def short(text: Any) -> str:
    """``text`` as an error message quotes it (at most 200 characters)."""
    r = repr(text)
    return r if len(r) <= 200 else f"{r[:160]}...{r[-30:]} ({len(text)} characters)"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text

    def bad(self, what: str) -> ParamError:
        return ParamError(f"expression {short(self.text)} is not allowed: {what}")

    def node(self, n: ast.AST) -> Node:
        if isinstance(n, ast.Constant):
            if isinstance(n.value, bool | int | float | complex | str | bytes):
                return Const(n.value)
            raise self.bad(f"constant {n.value!r}")
        if isinstance(n, ast.Name):
            return Name(n.id)
        if isinstance(n, ast.BinOp) and type(n.op) in _BIN:
            return Call(BINARY_OPS[_BIN[type(n.op)]], (self.node(n.left), self.node(n.right)))
        if isinstance(n, ast.UnaryOp) and type(n.op) in _UN:
            inner = self.node(n.operand)
            if isinstance(n.op, ast.USub | ast.UAdd) and isinstance(inner, Const):
                v = inner.value
                if isinstance(v, int | float | complex) and not isinstance(v, bool):
                    return Const(-v if isinstance(n.op, ast.USub) else v)
            return Call(UNARY_OPS[_UN[type(n.op)]], (inner,))
        if isinstance(n, ast.BoolOp):
            func = "logical_and" if isinstance(n.op, ast.And) else "logical_or"
            out = self.node(n.values[0])
            for v in n.values[1:]:
                out = Call(func, (out, self.node(v)))
            return out
        if isinstance(n, ast.Compare):
            if not all(type(o) in _CMP for o in n.ops):
                raise self.bad("only <, <=, >, >=, == and != compare")
            left = self.node(n.left)
            result: Node | None = None
            for op, right_n in zip(n.ops, n.comparators, strict=True):
                right = self.node(right_n)
                cmp = Call(BINARY_OPS[_CMP[type(op)]], (left, right))
                result = cmp if result is None else Call("logical_and", (result, cmp))
                left = right
            assert result is not None
            return result
        if isinstance(n, ast.Call):
            return self.call(n)
        if isinstance(n, ast.Attribute):
            if isinstance(n.value, ast.Name) and n.value.id in _MODULES:
                if n.attr in CONSTANT_NAMES:
                    return Const(CONSTANT_NAMES[n.attr])
                raise self.bad(f"attribute {n.value.id}.{n.attr}")
            if n.attr in _ATTRS:
                return Eager(_ATTRS[n.attr], (self.node(n.value),), ())
            raise self.bad(f"attribute .{n.attr}")
        if isinstance(n, ast.Subscript):
            return Index(self.node(n.value), self.key(n.slice))
        if isinstance(n, ast.Tuple | ast.List):
            return Seq(tuple(self.node(e) for e in n.elts), isinstance(n, ast.List))
        raise self.bad(f"{type(n).__name__} ({ast.unparse(n)!r})")

    def call(self, n: ast.Call) -> Node:
        f = n.func
        if isinstance(f, ast.Name):
            name, receiver = f.id, None
        elif isinstance(f, ast.Attribute):
            name = f.attr
            if isinstance(f.value, ast.Name) and f.value.id in _MODULES:
                receiver = None
                if name in DTYPE_NAMES:  # np.int8(1): a typed scalar
                    if len(n.args) != 1 or n.keywords:
                        raise self.bad(f"{f.value.id}.{name}() takes one literal")
                    return Const(np.dtype(name).type(self.literal(n.args[0])))
            else:
                receiver = self.node(f.value)
        else:
            raise self.bad(f"call of {ast.unparse(f)!r}")
        if any(k.arg is None for k in n.keywords):
            raise self.bad("**kwargs in a call")
        if any(isinstance(a, ast.Starred) for a in n.args):
            raise self.bad("*args in a call")
        if receiver is not None:
            if name == "slice":
                if len(n.args) != 1 or n.keywords:
                    raise self.bad(".slice() takes one key")
                return Index(receiver, self.key(n.args[0]))
            if name in REDUCTIONS:
                return self.reduction(name, receiver, n.args, n.keywords)
            if name in _METHODS_EAGER:
                kw = tuple((str(k.arg), self.value(k.value)) for k in n.keywords)
                return Eager(name, (receiver, *[self.value(a) for a in n.args]), kw)
            raise self.bad(f"method .{name}()")
        if name in REDUCTIONS:
            if not n.args:
                raise self.bad(f"{name}() needs an operand")
            return self.reduction(name, self.node(n.args[0]), n.args[1:], n.keywords)
        if is_elementwise(name):
            if n.keywords:
                raise self.bad(f"keywords in {name}()")
            return Call(name, tuple(self.node(a) for a in n.args))
        if name in CONSTRUCTORS or is_eager(name):
            kw = tuple((str(k.arg), self.value(k.value)) for k in n.keywords)
            return Eager(name, tuple(self.value(a) for a in n.args), kw)
        raise self.bad(f"function {name!r} is not one the engine knows")

    def reduction(
        self, name: str, arg: Node, pos: list[ast.expr], kws: list[ast.keyword]
    ) -> Reduce:
        kw: dict[str, Any] = {}
        if len(pos) > 1:
            raise self.bad(f"{name}() takes the operand and axis positionally")
        if pos:
            kw["axis"] = self.literal(pos[0])
        for k in kws:
            if k.arg not in _REDUCE_KW:
                raise self.bad(f"{name}() has no keyword {k.arg!r}")
            if k.arg in ("out", "where"):
                kw[k.arg] = self.node(k.value)
            else:
                kw[k.arg] = self.literal(k.value, dtype=k.arg == "dtype")
        return Reduce(name, arg, tuple(sorted(kw.items())))

    def value(self, n: ast.AST) -> Any:
        """An eager function's argument: a literal where it is one, else a sub-expression."""
        try:
            return Const(self.literal(n))
        except ParamError:
            return self.node(n)

    def literal(self, n: ast.AST, dtype: bool = False) -> Any:
        """A literal value: numbers, strings, None, Ellipsis, tuples and lists of them,
        ``slice(...)``/``range(...)`` of ints, dtype names."""
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub | ast.UAdd):
            v = self.literal(n.operand)
            if isinstance(v, int | float | complex) and not isinstance(v, bool):
                return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.Tuple):
            return tuple(self.literal(e, dtype) for e in n.elts)
        if isinstance(n, ast.List):
            return [self.literal(e, dtype) for e in n.elts]
        if isinstance(n, ast.Name) and n.id in DTYPE_NAMES:
            return np.dtype(n.id)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            if n.value.id in _MODULES and n.attr in DTYPE_NAMES:
                return np.dtype(n.attr)
            if n.value.id in _MODULES and n.attr in CONSTANT_NAMES:
                return CONSTANT_NAMES[n.attr]
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and not n.keywords
            and n.func.id in ("slice", "range")
            and len(n.args) <= 3
        ):
            vals = [self.literal(a) for a in n.args]
            if all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in vals):
                if n.func.id == "slice":
                    return slice(*vals)
                if None not in vals:
                    return range(*vals)
        raise self.bad(f"{ast.unparse(n)!r} is not a literal")

    def key(self, n: ast.AST) -> tuple[Any, ...]:
        """A basic subscript: ints, slices of ints, Ellipsis, None (as literals)."""
        items = n.elts if isinstance(n, ast.Tuple) else [n]
        out: list[Any] = []
        for e in items:
            if isinstance(e, ast.Slice):
                parts = [None if p is None else self.literal(p) for p in (e.lower, e.upper, e.step)]
                if not all(
                    p is None or (isinstance(p, int) and not isinstance(p, bool)) for p in parts
                ):
                    raise self.bad(f"slice {ast.unparse(e)!r} must have integer bounds")
                out.append(slice(*parts))
                continue
            v = self.literal(e)
            if isinstance(v, tuple):
                out.extend(v)
                continue
            if not (
                v is None
                or v is Ellipsis
                or isinstance(v, slice)
                or (isinstance(v, int) and not isinstance(v, bool))
            ):
                raise self.bad(f"subscript {ast.unparse(e)!r} (only ints, slices, ... and None)")
            out.append(v)
        return tuple(out)


def _check_shape(tree: ast.AST, text: str) -> None:
    """Refuse trees deeper than :data:`MAX_DEPTH` (iteratively: no recursion here)."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ParamError(
                f"expression {text[:80]!r}... is nested deeper than {MAX_DEPTH} levels"
            )
        stack.extend((c, depth + 1) for c in ast.iter_child_nodes(node))


def _ast(text: Any) -> ast.Expression:
    if isinstance(text, bytes):
        text = text.decode()
    if not isinstance(text, str):
        raise ParamError(f"an expression must be a str, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ParamError(f"expression of {len(text)} characters, more than {MAX_LENGTH}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        msg = getattr(exc, "msg", None) or str(exc)
        raise ParamError(f"expression {short(text)} is not valid: {msg}") from None
    _check_shape(tree, text)
    return tree


def parse(text: Any) -> Node:
    """The tree of ``text`` (a numexpr-style expression); :class:`ParamError` for anything
    outside the allow-list."""
    return _Parser(text).node(_ast(text).body)


def validate_expr(text: Any) -> None:
    """Raise :class:`ParamError` (a ``ValueError``) naming the problem when ``text`` is not
    an expression the engine accepts (python-blosc2's ``validate_expr``).

    >>> validate_expr("a + b")
    >>> validate_expr("import os")
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: expression 'import os' is not valid: invalid syntax
    """
    parse(text)


def get_expr_operands(expression: str) -> set[str]:
    """The names an expression uses as operands: every name that is not called, not a
    keyword and not ``np``/``numpy``/``blosc2`` (python-blosc2's ``get_expr_operands``;
    functions need not be known to the engine here).

    >>> sorted(get_expr_operands("k + l.method1(m, n=3) + max(o, p=q)"))
    ['k', 'l', 'm', 'o', 'q']
    """
    tree = _ast(expression)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {
        n.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and id(n) not in called and n.id not in _MODULES
    }
