"""The DSL of python-blosc2's ``dsl_kernel``, as an allow-list over Python's ``ast``.

A kernel is one function (python-blosc2's doc/reference/dsl_syntax.md). Its statements are
assignments to names (``=``, ``+=``, ``-=``, ``*=``, ``/=``, ``//=``, ``%=``, ``**=``),
``if``/``elif``/``else``, ``for NAME in range(...)`` (one to three arguments), ``while``,
``break``, ``continue``, ``return VALUE``, ``print(...)`` and bare expressions; its
expressions are names, numbers, the arithmetic, bitwise, comparison (one operator at a time)
and logical operators, the casts ``int``/``float``/``bool`` and the functions of
:mod:`.functions` (called by name, or as ``np.name``/``numpy.name``/``math.name``, without
keywords). Names are the inputs (the parameters), locals (assigned somewhere in the
function), the index symbols ``_i0``, ``_i1``... (the item's position along each axis),
``_n0``... (the array's shape), ``_ndim`` and ``_flat_idx`` (the C-order position), and the
constants ``pi``, ``e``, ``inf``, ``nan``.

Anything else — attributes, subscripts, keywords, ternaries, nested functions, lambdas,
comprehensions, ``for``/``else``, assignments to inputs, several statements on a line — is a
:class:`DSLSyntaxError` naming the line and column, with the source and a pointer, before
anything runs. Sources are parsed, never executed: a kernel read from a file
(:func:`parse_program`) is as safe as its allow-list. Expressions nested deeper than
:data:`MAX_DEPTH` and sources longer than :data:`MAX_SOURCE` are refused too.

>>> p = parse_program("def k(x, y):\\n    if x > y:\\n        return x\\n    return y * 2\\n")
>>> p.name, p.inputs, p.has_control_flow
('k', ('x', 'y'), True)
>>> parse_program("def k(x):\\n    return x.mean()\\n")
Traceback (most recent call last):
...
pyblosc2.dsl.syntax.DSLSyntaxError: Unsupported call target in DSL at line 2, column 12
<BLANKLINE>
DSL kernel source:
1 | def k(x):
2 |     return x.mean()
  |            ^
<BLANKLINE>
See: python-blosc2's doc/reference/dsl_syntax.md (pyblosc2: docs/udf.md)
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

from ..errors import Blosc2Error, ParamError
from .functions import CASTS, CONSTANTS, FUNCTIONS, NUMPY_ALIASES, canonical

__all__ = [
    "MAX_DEPTH",
    "MAX_SOURCE",
    "DSLRuntimeError",
    "DSLSyntaxError",
    "Program",
    "extract",
    "parse_program",
    "parse_source",
    "rewrite_numpy_calls",
    "symbol_axis",
    "target_name",
]

#: the deepest expression or statement nesting a kernel may have
MAX_DEPTH = 64
#: the longest source a kernel may have, in characters
MAX_SOURCE = 1 << 20
_SEE = "See: python-blosc2's doc/reference/dsl_syntax.md (pyblosc2: docs/udf.md)"
_SYMBOL = re.compile(r"_(?:i|n)\d+$")
_RESERVED = frozenset({"print", "int", "float", "bool", "range", "_ndim", "_flat_idx"})
_BINOPS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
    ast.LShift,
    ast.RShift,
)
_CMPOPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_MODULES = frozenset({"np", "numpy", "math"})


class DSLSyntaxError(ParamError):
    """A kernel outside the DSL (python-blosc2's ``DSLSyntaxError``, a ``ValueError``): the
    message names the rule, the line and column, and shows the source with a pointer."""


class DSLRuntimeError(Blosc2Error, RuntimeError):
    """A kernel that failed while it ran: a ``range()`` step of 0, a loop past the iteration
    cap, an element reaching the end without ``return``, a local read before it is set, an
    index symbol of an axis the array lacks. Also a ``RuntimeError``, as python-blosc2's."""


def is_symbol(name: str) -> bool:
    """Whether ``name`` is one of the DSL's index symbols (``_i0``, ``_n1``, ``_ndim``,
    ``_flat_idx``).

    >>> is_symbol("_i0"), is_symbol("_n12"), is_symbol("_flat_idx"), is_symbol("i0")
    (True, True, True, False)
    """
    return bool(_SYMBOL.match(name)) or name in ("_ndim", "_flat_idx")


def symbol_axis(name: str) -> int:
    """The axis of an index symbol ``_iN``/``_nN``.

    >>> symbol_axis("_n3")
    3
    """
    return int(name[2:])


@dataclass(frozen=True)
class Program:
    """A kernel that passed the allow-list: its name, source (python-blosc2's
    ``dsl_source``), inputs, checked function node (treat it as read-only), locals, the index
    symbols it reads, and whether it prints, has ``if``/``for``/``while``, has loops."""

    name: str
    source: str
    inputs: tuple[str, ...]
    tree: ast.FunctionDef
    locals: frozenset[str]
    symbols: frozenset[str]
    has_print: bool
    has_control_flow: bool
    has_loops: bool = False


def _pointer(source: str, line: int, col: int) -> str:
    lines = source.splitlines() or ["<empty>"]
    width = len(str(len(lines)))
    out = []
    for n, text in enumerate(lines, start=1):
        out.append(f"{n:>{width}} | {text}")
        if n == line:
            out.append(f"{' ' * width} | {' ' * max(col - 1, 0)}^")
    return "\n".join(out)


def syntax_error(source: str, msg: str, line: int, col: int) -> DSLSyntaxError:
    """The :class:`DSLSyntaxError` for ``msg`` at ``line``/``col`` (1-based) of ``source``."""
    return DSLSyntaxError(
        f"{msg} at line {line}, column {col}\n\nDSL kernel source:\n"
        f"{_pointer(source, line, col)}\n\n{_SEE}"
    )


class _Rewriter(ast.NodeTransformer):
    """``np.sin(x)`` -> ``sin(x)`` for the names bound to numpy (python-blosc2's rewrite)."""

    def __init__(self, aliases: set[str]) -> None:
        self.aliases = aliases
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id in self.aliases
        ):
            name = NUMPY_ALIASES.get(f.attr, f.attr)
            node.func = ast.copy_location(ast.Name(id=name, ctx=ast.Load()), f)
            self.changed = True
        return node


def parse_source(source: str) -> ast.Module:
    """``source`` parsed by Python (bounded: a :class:`DSLSyntaxError` for a source over
    :data:`MAX_SOURCE` characters, a syntax error, or one too deep to parse)."""
    if len(source) > MAX_SOURCE:
        raise DSLSyntaxError(
            f"a DSL kernel source of {len(source)} characters is over {MAX_SOURCE}"
        )
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise syntax_error(
            source, f"Python syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1
        ) from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise DSLSyntaxError(f"the DSL kernel source cannot be parsed: {exc}") from None


def function_node(tree: ast.Module, name: str | None, source: str) -> ast.FunctionDef:
    """The function ``name`` of ``tree`` (the first one when ``name`` is None or absent)."""
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    for node in defs:
        if name is None or node.name == name:
            return node
    if defs and name is not None:
        return defs[0]
    raise syntax_error(source, "A DSL kernel must be a function definition (def)", 1, 1)


def extract(func: Any) -> tuple[str, tuple[str, ...]]:
    """The DSL source of the function ``func`` (its ``def`` without decorators, numpy calls
    rewritten to the DSL's names) and its inputs; ``OSError``/``TypeError`` when Python
    has no source for it, :class:`DSLSyntaxError` when it does not parse."""
    raw = textwrap.dedent(inspect.getsource(func))
    node = function_node(parse_source(raw), getattr(func, "__name__", None), raw)
    lines = raw.splitlines()
    source = "\n".join(lines[node.lineno - 1 : node.end_lineno or len(lines)])
    tree = parse_source(source)
    node = function_node(tree, None, source)
    inputs = function_inputs(node, source)
    glob = getattr(func, "__globals__", {})
    aliases = {
        k for k, v in glob.items() if isinstance(v, types.ModuleType) and v.__name__ == "numpy"
    }
    return rewrite_numpy_calls(source, tree, aliases - set(inputs)), inputs


def rewrite_numpy_calls(source: str, tree: ast.Module, aliases: set[str]) -> str:
    """``source`` with ``alias.f(...)`` written ``f(...)`` for the names in ``aliases``
    (numpy's ``maximum``/``minimum``/``absolute`` as ``fmax``/``fmin``/``abs``), as
    python-blosc2 rewrites a kernel; ``tree`` (its parse) is rewritten in place.

    >>> src = "def k(x):\\n    return np.maximum(x, 1)\\n"
    >>> rewrite_numpy_calls(src, ast.parse(src), {"np"})
    'def k(x):\\n    return fmax(x, 1)'
    """
    rewriter = _Rewriter(aliases)
    rewriter.visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) if rewriter.changed else source


def function_inputs(node: ast.FunctionDef, source: str) -> tuple[str, ...]:
    """The parameter names of ``node`` (positional ones only: the DSL has no others)."""
    a = node.args
    if a.vararg or a.kwarg or a.kwonlyargs:
        raise syntax_error(
            source,
            "DSL kernel does not support *args/**kwargs/kwonly args",
            node.lineno,
            node.col_offset + 1,
        )
    return tuple(x.arg for x in (*a.posonlyargs, *a.args))


def parse_program(source: str, name: str | None = None) -> Program:
    """The checked kernel of ``source`` (the function ``name``, or the first); a
    :class:`DSLSyntaxError` for anything outside the DSL. ``source`` is never executed."""
    if not isinstance(source, str):
        raise DSLSyntaxError(f"a DSL kernel source must be a str, got {type(source).__name__}")
    tree = parse_source(source)
    node = function_node(tree, name, source)
    inputs = function_inputs(node, source)
    return _Checker(source, inputs).check(node)


class _Checker:
    """One pass over a function node, raising at the first construct outside the DSL."""

    def __init__(self, source: str, inputs: tuple[str, ...]) -> None:
        self.source = source
        self.inputs = inputs
        self.locals: set[str] = set()
        self.reads: list[ast.Name] = []
        self.has_print = False
        self.has_cf = False
        self.has_loops = False

    def fail(self, node: Any, msg: str, col: int | None = None) -> NoReturn:
        line = getattr(node, "lineno", 1)
        raise syntax_error(self.source, msg, line, col or getattr(node, "col_offset", 0) + 1)

    def check(self, node: ast.FunctionDef) -> Program:
        if len(set(self.inputs)) != len(self.inputs):
            self.fail(node, "DSL kernel parameters must have distinct names")
        for name in self.inputs:
            if is_symbol(name) or name in _RESERVED:
                self.fail(node, f"{name!r} is a reserved DSL name and cannot be a parameter")
        self._depth(node)
        self.block(node.body, node, loops=0)
        known = set(self.inputs) | self.locals | set(CONSTANTS)
        symbols = set()
        for n in self.reads:
            if is_symbol(n.id):
                symbols.add(n.id)
            elif n.id not in known:
                self.fail(
                    n, f"Unknown name {n.id!r} in DSL (not an input, a local or a DSL symbol)"
                )
        return Program(
            node.name,
            self.source,
            self.inputs,
            node,
            frozenset(self.locals),
            frozenset(symbols),
            self.has_print,
            self.has_cf,
            self.has_loops,
        )

    def _depth(self, root: ast.AST) -> None:
        stack: list[tuple[ast.AST, int]] = [(root, 0)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_DEPTH:
                self.fail(node, f"DSL kernel nested deeper than {MAX_DEPTH} levels")
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))

    def block(self, body: list[ast.stmt], owner: ast.AST, loops: int) -> None:
        if not body:
            self.fail(owner, "Empty blocks are not supported in DSL kernels")
        prev = None
        for stmt in body:
            if prev is not None and stmt.lineno == prev:
                self.fail(
                    stmt,
                    "Only one statement per line is supported in DSL kernels; "
                    "split ';'-joined statements onto separate lines",
                )
            prev = stmt.lineno
            self.stmt(stmt, loops)

    def target(self, node: ast.AST, stmt: ast.AST) -> None:
        if not isinstance(node, ast.Name):
            self.fail(stmt, "Only simple assignments are supported in DSL kernels")
        if node.id in self.inputs:
            self.fail(
                node,
                f"Cannot assign to input parameter '{node.id}'; "
                f"copy it into a local variable first (e.g. 'tmp = {node.id}')",
            )
        if is_symbol(node.id) or node.id in _RESERVED:
            self.fail(node, f"{node.id!r} is a reserved DSL name")
        self.locals.add(node.id)

    def stmt(self, node: ast.stmt, loops: int) -> None:
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                self.fail(node, "Only simple assignments are supported in DSL kernels")
            self.target(node.targets[0], node)
            self.expr(node.value)
        elif isinstance(node, ast.AugAssign):
            self.target(node.target, node)
            self.binop(node.op, node)
            self.expr(node.value)
            self.reads.append(ast.copy_location(ast.Name(id=target_name(node.target)), node))
        elif isinstance(node, ast.Return):
            if node.value is None:
                self.fail(node, "DSL kernel return must have a value")
            self.expr(node.value)
        elif isinstance(node, ast.Expr):
            v = node.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "print":
                self.print_call(v)
            elif not (isinstance(v, ast.Constant) and isinstance(v.value, str)):  # docstrings
                self.expr(v)
        elif isinstance(node, ast.If):
            self.has_cf = True
            self.expr(node.test)
            self.block(node.body, node, loops)
            if node.orelse:
                self.block(node.orelse, node, loops)
        elif isinstance(node, ast.For):
            self.has_cf = self.has_loops = True
            self.for_loop(node, loops)
        elif isinstance(node, ast.While):
            self.has_cf = self.has_loops = True
            if node.orelse:
                self.fail(node, "while/else is not supported in DSL kernels")
            self.expr(node.test)
            self.block(node.body, node, loops + 1)
        elif isinstance(node, ast.Break | ast.Continue):
            if not loops:
                self.fail(node, f"'{type(node).__name__.lower()}' outside a loop")
        else:
            self.fail(node, f"Unsupported DSL statement: {type(node).__name__}")

    def for_loop(self, node: ast.For, loops: int) -> None:
        if node.orelse:
            self.fail(node, "for/else is not supported in DSL kernels")
        if not isinstance(node.target, ast.Name):
            self.fail(node, "DSL for-loop target must be a simple name")
        it = node.iter
        if not (
            isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
        ):
            self.fail(node, "DSL for-loop must iterate over range()")
        if it.keywords or not 1 <= len(it.args) <= 3:
            self.fail(node, "DSL range() must take 1 to 3 positional arguments")
        for a in it.args:
            self.expr(a)
        self.target(node.target, node)
        self.block(node.body, node, loops + 1)

    def print_call(self, node: ast.Call) -> None:
        self.has_print = True
        if node.keywords or not node.args:
            self.fail(node, "DSL print() takes one or more positional arguments")
        for i, a in enumerate(node.args):
            if i == 0 and isinstance(a, ast.Constant) and isinstance(a.value, str):
                continue
            self.expr(a)

    def binop(self, op: ast.operator, node: ast.AST) -> None:
        if not isinstance(op, _BINOPS):
            self.fail(node, "Unsupported binary operator in DSL")

    def expr(self, node: ast.AST) -> None:
        # an explicit stack: expression depth is bounded by _depth, but no recursion anyway
        stack = [node]
        while stack:
            n = stack.pop()
            stack.extend(self._expr_children(n))

    def _expr_children(self, n: ast.AST) -> Iterator[ast.AST]:
        if isinstance(n, ast.Name):
            self.reads.append(n)
        elif isinstance(n, ast.Constant):
            if isinstance(n.value, str | bytes) or not isinstance(
                n.value, bool | int | float | complex
            ):
                self.fail(n, "Unsupported constant in DSL expression")
        elif isinstance(n, ast.UnaryOp):
            if not isinstance(n.op, ast.UAdd | ast.USub | ast.Not):
                self.fail(n, "Unsupported unary operator in DSL expression")
            yield n.operand
        elif isinstance(n, ast.BinOp):
            self.binop(n.op, n)
            yield n.left
            yield n.right
        elif isinstance(n, ast.BoolOp):
            yield from n.values
        elif isinstance(n, ast.Compare):
            if len(n.ops) != 1 or not isinstance(n.ops[0], _CMPOPS):
                self.fail(n, "Chained comparisons are not supported in DSL")
            yield n.left
            yield n.comparators[0]
        elif isinstance(n, ast.Call):
            self.call(n)
            yield from n.args
        elif isinstance(n, ast.IfExp):
            seg = ast.get_source_segment(self.source, n) or ""
            rel = seg.find(" if ")
            col = n.col_offset + 1 + (rel + 1 if rel >= 0 else 0)
            self.fail(n, "Ternary expressions are not supported in DSL; use where(cond, a, b)", col)
        else:
            self.fail(n, f"Unsupported DSL expression: {type(n).__name__}")

    def call(self, n: ast.Call) -> None:
        f = n.func
        if isinstance(f, ast.Name):
            name = f.id
        elif (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id in _MODULES
        ):
            name = f.attr
        else:
            self.fail(f, "Unsupported call target in DSL")
        if n.keywords:
            self.fail(n, "Keyword arguments are not supported in DSL calls")
        if name in CASTS:
            nargs = 1
        elif name in ("print", "range"):
            self.fail(n, f"{name}() is a statement of its own in DSL kernels")
        else:
            canon = canonical(name)
            if canon is None:
                self.fail(f, f"Unsupported function {name!r} in DSL")
            nargs = FUNCTIONS[canon].nargs
        if len(n.args) != nargs:
            self.fail(n, f"{name}() takes {nargs} argument{'s' if nargs != 1 else ''} in DSL")


def target_name(node: ast.AST) -> str:
    """The name a checked assignment or loop assigns to."""
    if not isinstance(node, ast.Name):
        raise DSLSyntaxError(f"a DSL assignment target must be a name, got {type(node).__name__}")
    return node.id


def call_name(node: ast.Call) -> str:
    """The DSL name of a checked call (``np.sin`` -> ``sin``, aliases resolved)."""
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr  # type: ignore[attr-defined]
    return name if name in CASTS else (canonical(name) or name)
