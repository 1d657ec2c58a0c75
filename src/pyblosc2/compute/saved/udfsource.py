"""A saved UDF's Python source made into a function — the one place pyblosc2 compiles code
read from a file, and only after :func:`check_source` has accepted it.

python-blosc2 saves a UDF of a plain Python function (``func(inputs_tuple, output,
offset)``) as its source text and, opening it with ``deserialize="full"``, executes that
text with every builtin but ``__import__``. pyblosc2 executes it only when the source is a
function of the small Python subset UDFs are written in, checked node by node on its
``ast`` before anything is compiled:

* the source is exactly one ``def NAME(...)`` (a docstring and ``import numpy [as np]`` /
  ``import math`` lines may precede it); no decorators, no annotations, no defaults other
  than literals;
* statements: assignments (plain, augmented, tuple unpacking, into subscripts), expression
  statements, ``if``, ``for``, ``while``, ``break``, ``continue``, ``pass``, ``return``;
  not: ``import``, ``global``/``nonlocal``, ``del``, ``with``, ``try``, ``raise``,
  ``class``, nested ``def``, ``lambda``, comprehensions, generators, ``yield``,
  ``await``, f-strings, walrus, ``assert``, ``match``;
* names: the parameters, names the function assigns, the builtins of :data:`BUILTINS`
  (pure functions on numbers and sequences), ``np``/``numpy`` and ``math``; no name
  starting with an underscore;
* attributes: ``np.NAME`` for the numpy functions and constants of :data:`NUMPY_NAMES`
  (ufuncs and array functions that neither read nor write files, run other code nor change
  numpy's global state: not ``load``/``save``/``fromfile``/``memmap``/``frompyfunc``/
  ``vectorize``/``seterr``...), ``math.NAME`` for math's public functions, and on any other
  value only the array attributes and methods of :data:`ARRAY_ATTRIBUTES` (no ``tofile``,
  ``dump``, ``ctypes``, ``base``, ``data``; no name starting with an underscore, so no
  ``__class__``/``__globals__``/``__subclasses__`` walk out of the sandbox);
* bounded: :data:`MAX_NODES` nodes, :data:`MAX_DEPTH` levels (checked without recursion).

The accepted source is compiled and its ``def`` executed in a fresh namespace holding only
those builtins, ``np``, ``numpy`` and ``math``: names the check let through are all there
is. What the check cannot bound is the function's running time and memory when it is
called (a ``while True`` loop runs when the UDF is computed): ``deserialize="full"`` remains
the user's statement that the file is trusted to that extent.

>>> src = "def f(inputs, output, offset):\\n    output[:] = inputs[0] + 1\\n"
>>> f = function_from_source(src, "f")
>>> import numpy as np; out = np.empty(3); f((np.arange(3.0),), out, (0,)); out.tolist()
[1.0, 2.0, 3.0]
>>> function_from_source("def f(i, o, off):\\n    o[:] = ().__class__\\n", "f")
Traceback (most recent call last):
...
pyblosc2.errors.FormatError: saved UDF 'f': source at line 2 is attribute '__class__', ...
"""

from __future__ import annotations

import ast
import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import FormatError
from .layout import MAX_SOURCE

__all__ = [
    "ARRAY_ATTRIBUTES",
    "BUILTINS",
    "MAX_DEPTH",
    "MAX_NODES",
    "NUMPY_NAMES",
    "check_source",
    "function_from_source",
]

#: the most ``ast`` nodes and the deepest nesting of a UDF's source
MAX_NODES = 20_000
MAX_DEPTH = 100

#: builtins a UDF may call: pure functions of numbers and sequences
BUILTINS = frozenset(
    {
        "abs",
        "all",
        "any",
        "bool",
        "complex",
        "divmod",
        "enumerate",
        "float",
        "int",
        "isinstance",
        "len",
        "list",
        "max",
        "min",
        "pow",
        "range",
        "reversed",
        "round",
        "slice",
        "sorted",
        "sum",
        "tuple",
        "zip",
        "True",
        "False",
        "None",
        "Ellipsis",
    }
)
_NUMPY_FUNCTIONS = frozenset(
    {
        "abs", "absolute", "all", "allclose", "amax", "amin", "any", "arange", "argmax",
        "argmin", "argsort", "around", "array", "array_equal", "asarray", "ascontiguousarray",
        "atleast_1d", "atleast_2d", "atleast_3d", "average", "broadcast_arrays",
        "broadcast_shapes", "broadcast_to", "clip", "column_stack", "concatenate", "copy",
        "copyto", "count_nonzero", "cross", "cumprod", "cumsum", "diag", "diff", "digitize",
        "dot", "dstack", "dtype", "einsum", "empty", "empty_like", "expand_dims", "eye", "flip",
        "full", "full_like", "gradient", "histogram", "hstack", "hypot", "identity", "indices",
        "inner", "interp", "isclose", "isscalar", "linspace", "logspace", "matmul", "max",
        "maximum", "mean", "median", "meshgrid", "min", "minimum", "moveaxis", "nan_to_num",
        "nanmax", "nanmean", "nanmin", "nansum", "ndim", "nonzero", "ones", "ones_like",
        "outer", "percentile", "piecewise_linear", "prod", "ptp", "quantile", "ravel",
        "ravel_multi_index", "repeat", "reshape", "result_type", "roll", "rollaxis",
        "round", "searchsorted", "select", "shape", "size", "sort", "squeeze", "stack", "std",
        "sum", "swapaxes", "take", "take_along_axis", "tensordot", "tile", "trace",
        "transpose", "tril", "triu", "trapezoid", "unique", "unravel_index", "var",
        "vstack", "where", "zeros", "zeros_like", "newaxis", "pi", "e", "inf",
        "nan", "euler_gamma", "iinfo", "finfo", "can_cast", "promote_types",
    }
)  # fmt: skip
_NUMPY_TYPES = frozenset(
    {
        *(f"{k}{n}" for k in ("int", "uint") for n in (8, 16, 32, 64)),
        "float16", "float32", "float64", "complex64", "complex128", "bool_", "intp", "uintp",
        "str_", "bytes_", "datetime64", "timedelta64", "longlong", "ulonglong", "double",
        "single", "half", "byte", "ubyte", "short", "ushort", "intc", "uintc",
    }
)  # fmt: skip
#: numpy names a UDF may use: the ufuncs, the functions and types above (the ufuncs from
#: numpy's namespace as loaded: ``getattr`` over ``dir(np)`` imported its lazy submodules,
#: f2py, testing and unittest among them, a tenth of ``import pyblosc2``)
NUMPY_NAMES = frozenset(
    {n for n, v in vars(np).items() if isinstance(v, np.ufunc)}
    | {n for n in _NUMPY_FUNCTIONS | _NUMPY_TYPES if hasattr(np, n)}
)
_MATH_NAMES = frozenset(n for n in dir(math) if not n.startswith("_"))
#: attributes and methods a UDF may use on values (arrays, scalars, dtypes)
ARRAY_ATTRIBUTES = frozenset(
    {
        "T", "all", "any", "argmax", "argmin", "argsort", "astype", "clip", "conj",
        "conjugate", "copy", "cumprod", "cumsum", "diagonal", "dot", "dtype", "fill",
        "flatten", "flat", "imag", "item", "itemsize", "kind", "max", "mean", "min", "nbytes",
        "ndim", "nonzero", "prod", "ptp", "ravel", "real", "repeat", "reshape", "round",
        "shape", "size", "sort", "squeeze", "std", "sum", "swapaxes", "take", "tolist",
        "trace", "transpose", "var", "view", "append", "index", "count", "start", "stop",
        "step", "is_integer", "bit_length", "char", "name", "names", "fields", "str",
        "itemset", "eps", "tiny", "bits",
    }
)  # fmt: skip
_MODULES = {"np": NUMPY_NAMES, "numpy": NUMPY_NAMES, "math": _MATH_NAMES}

_STATEMENTS = (
    ast.Assign,
    ast.AugAssign,
    ast.Expr,
    ast.If,
    ast.For,
    ast.While,
    ast.Break,
    ast.Continue,
    ast.Pass,
    ast.Return,
)
_EXPRESSIONS = (
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.Constant,
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.List,
    ast.Starred,
    ast.keyword,
)
_CONTEXT = (
    ast.Load,
    ast.Store,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
    ast.arguments,
    ast.arg,
)


class _Checker:
    def __init__(self, source: str, name: str) -> None:
        self.source, self.name = source, name
        self.where = f"saved UDF {name!r}"

    def bad(self, node: ast.AST | None, what: str) -> FormatError:
        line = getattr(node, "lineno", None)
        field = f"source at line {line}" if line else "source"
        return FormatError(self.where, field, None, "a function of the UDF subset of Python", what)

    def tree(self) -> ast.FunctionDef:
        try:
            tree = ast.parse(self.source, mode="exec")
        except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            raise self.bad(None, f"not valid Python ({getattr(exc, 'msg', exc)})") from None
        defs: list[ast.FunctionDef] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                defs.append(node)
            elif isinstance(node, ast.Import) and all(
                a.name in ("numpy", "math") and (a.asname or a.name) in _MODULES for a in node.names
            ):
                continue
            elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
                raise self.bad(node, f"{type(node).__name__} outside the function")
        if len(defs) != 1 or defs[0].name != self.name:
            raise self.bad(None, f"{len(defs)} function definitions (one named {self.name!r})")
        return defs[0]

    def check(self) -> ast.Module:
        fdef = self.tree()
        if fdef.decorator_list or fdef.returns or fdef.type_comment:
            raise self.bad(fdef, "decorators, return annotations or type comments")
        a = fdef.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
        params += [p for p in (a.vararg, a.kwarg) if p is not None]
        if any(p.annotation is not None for p in params):
            raise self.bad(fdef, "parameter annotations")
        if any(not isinstance(d, ast.Constant) for d in (*a.defaults, *a.kw_defaults) if d):
            raise self.bad(fdef, "parameter defaults that are not literals")
        local = {p.arg for p in params}
        local |= {
            t.id
            for n in ast.walk(fdef)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            for t in (n,)
        }
        self.walk(fdef, local)
        return ast.Module(body=[fdef], type_ignores=[])

    def walk(self, fdef: ast.FunctionDef, local: set[str]) -> None:
        stack: list[tuple[ast.AST, int]] = [(s, 1) for s in fdef.body]
        stack += [(p, 1) for p in ast.iter_child_nodes(fdef.args)]
        count = 0
        while stack:
            node, depth = stack.pop()
            count += 1
            if count > MAX_NODES or depth > MAX_DEPTH:
                raise self.bad(None, f"more than {MAX_NODES} nodes or {MAX_DEPTH} levels")
            self.node(node, local)
            stack.extend((c, depth + 1) for c in ast.iter_child_nodes(node))

    def node(self, node: ast.AST, local: set[str]) -> None:
        if isinstance(node, ast.Name):
            if node.id.startswith("_"):
                raise self.bad(node, f"name {node.id!r}")
            if node.id not in local and node.id not in BUILTINS and node.id not in _MODULES:
                raise self.bad(node, f"name {node.id!r} (not a parameter, local or allowed name)")
            return
        if isinstance(node, ast.Attribute):
            attr = node.attr
            if attr.startswith("_"):
                raise self.bad(node, f"attribute {attr!r}")
            v = node.value
            if isinstance(v, ast.Name) and v.id in _MODULES and v.id not in local:
                if attr not in _MODULES[v.id]:
                    raise self.bad(node, f"{v.id}.{attr}")
            elif attr not in ARRAY_ATTRIBUTES:
                raise self.bad(node, f"attribute {attr!r}")
            return
        if isinstance(node, ast.Constant):
            value = node.value
            scalar = isinstance(value, int | float | complex | str | bytes)
            if not (value is None or value is ... or scalar):
                raise self.bad(node, f"constant {value!r}")
            return
        if isinstance(node, ast.keyword) and node.arg is None:
            raise self.bad(node, "**kwargs in a call")
        if isinstance(node, ast.For | ast.While) and node.orelse:
            raise self.bad(node, "else of a loop")
        if isinstance(node, _STATEMENTS + _EXPRESSIONS + _CONTEXT):
            return
        raise self.bad(node, type(node).__name__)


def check_source(source: Any, name: str) -> ast.Module:
    """The module of ``source`` (one function ``name``) if it is in the UDF subset (see the
    module docstring), else a :class:`~pyblosc2.errors.FormatError` naming the line and
    the construct."""
    where = f"saved UDF {name!r}"
    if not isinstance(source, str):
        raise FormatError(where, "source", None, "a string", type(source).__name__)
    if len(source) > MAX_SOURCE:
        raise FormatError(where, "source", None, f"at most {MAX_SOURCE} characters", len(source))
    return _Checker(source, name).check()


def _namespace() -> dict[str, Any]:
    allowed = {k: getattr(builtins, k) for k in BUILTINS}
    return {"__builtins__": allowed, "np": np, "numpy": np, "math": math}


def function_from_source(source: Any, name: str) -> Callable[..., Any]:
    """The function ``name`` defined by ``source``, after :func:`check_source`, in a fresh
    namespace (see the module docstring)."""
    module = check_source(source, name)
    code = compile(module, f"<saved UDF {name}>", "exec")
    namespace = _namespace()
    exec(code, namespace)  # the checked subset only (the module docstring)
    func: Callable[..., Any] = namespace[name]
    func.__source__ = source  # type: ignore[attr-defined]
    return func
