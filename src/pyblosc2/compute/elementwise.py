"""python-blosc2's elementwise functions (the array API's "element-wise functions" section
and python-blosc2's additions): each returns a :class:`~.lazyexpr.LazyExpr`, computed chunk by
chunk when it is sliced, converted or ``compute()``-d. Their values and dtypes are numpy's,
except where python-blosc2 defines the function otherwise (``reciprocal(x)`` is ``1.0 / x``,
a float for integers, as python-blosc2's).

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> x = asarray(np.linspace(0.1, 0.9, 5))
>>> e = add(sin(x), 1)
>>> type(e).__name__, e.expression, bool(np.allclose(e[:], np.sin(x[:]) + 1))
('LazyExpr', '(sin(o0) + 1)', True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .lazyexpr import LazyExpr
from .tree import BINARY_OPS

__all__ = [
    "abs",
    "acos",
    "acosh",
    "add",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "ceil",
    "clip",
    "conj",
    "contains",
    "copysign",
    "cos",
    "cosh",
    "divide",
    "endswith",
    "equal",
    "exp",
    "expm1",
    "floor",
    "floor_divide",
    "greater",
    "greater_equal",
    "hypot",
    "imag",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "lower",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "nextafter",
    "not_equal",
    "positive",
    "pow",
    "real",
    "reciprocal",
    "remainder",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "startswith",
    "subtract",
    "tan",
    "tanh",
    "trunc",
    "upper",
    "where",
]

_OP_OF = {v: k for k, v in BINARY_OPS.items()}

#: the sample an example of each function runs on: floats in (0, 1), small ints, booleans
_FLOAT, _INT, _BOOL = "f", "i", "b"
_UNARY = {
    **dict.fromkeys(
        [
            "abs",
            "acos",
            "acosh",
            "arccos",
            "arccosh",
            "arcsin",
            "arcsinh",
            "arctan",
            "arctanh",
            "asin",
            "asinh",
            "atan",
            "atanh",
            "ceil",
            "conj",
            "cos",
            "cosh",
            "exp",
            "expm1",
            "floor",
            "imag",
            "isfinite",
            "isinf",
            "isnan",
            "log",
            "log1p",
            "log2",
            "log10",
            "negative",
            "positive",
            "real",
            "sign",
            "signbit",
            "sin",
            "sinh",
            "sqrt",
            "square",
            "tan",
            "tanh",
            "trunc",
        ],
        _FLOAT,
    ),
    "bitwise_invert": _INT,
    "logical_not": _BOOL,
}
_BINARY = {
    **dict.fromkeys(
        [
            "add",
            "arctan2",
            "atan2",
            "copysign",
            "divide",
            "equal",
            "floor_divide",
            "greater",
            "greater_equal",
            "hypot",
            "less",
            "less_equal",
            "logaddexp",
            "maximum",
            "minimum",
            "multiply",
            "nextafter",
            "not_equal",
            "pow",
            "remainder",
            "subtract",
        ],
        _FLOAT,
    ),
    **dict.fromkeys(
        ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"],
        _INT,
    ),
    **dict.fromkeys(["logical_and", "logical_or", "logical_xor"], _BOOL),
}
_NUMPY = {
    "acos": "arccos",
    "acosh": "arccosh",
    "asin": "arcsin",
    "asinh": "arcsinh",
    "atan": "arctan",
    "atanh": "arctanh",
    "atan2": "arctan2",
    "bitwise_invert": "invert",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
    "pow": "power",
}
_ABOVE_ONE = "g"
_UNARY.update(dict.fromkeys(["acosh", "arccosh"], _ABOVE_ONE))
_SAMPLES = {
    _FLOAT: "asarray(np.linspace(0.1, 0.9, 5))",
    _ABOVE_ONE: "asarray(np.linspace(1.1, 1.9, 5))",
    _INT: "asarray(np.arange(5))",
    _BOOL: "asarray(np.array([True, False, True, False, False]))",
}


def _doc(name: str, nargs: int, kind: str) -> str:
    args = ", ".join(["x"] * nargs)
    ref = f"np.{_NUMPY.get(name, name)}({', '.join(['x[:]'] * nargs)})"
    return (
        f"Elementwise ``{name}`` ({'one operand' if nargs == 1 else 'two operands'}, numpy's "
        f"semantics: ``{ref[:-1].replace('x[:]', 'x')}``), as a lazy expression.\n\n"
        f"    >>> import numpy as np; from pyblosc2 import asarray\n"
        f"    >>> x = {_SAMPLES[kind]}\n"
        f"    >>> bool(np.allclose({name}({args})[:], {ref}, rtol=1e-12, equal_nan=True))\n"
        f"    True\n"
    )


def _unary(name: str) -> Callable[[Any], LazyExpr]:
    def fn(x: Any, /) -> LazyExpr:
        return LazyExpr(new_op=(x, name, None))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, 1, _UNARY[name])
    return fn


def _binary(name: str) -> Callable[[Any, Any], LazyExpr]:
    op = _OP_OF.get(name, name)

    def fn(x1: Any, x2: Any, /) -> LazyExpr:
        return LazyExpr(new_op=(x1, op, x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, 2, _BINARY[name])
    return fn


abs = _unary("abs")
arccos = _unary("arccos")
arccosh = _unary("arccosh")
arcsin = _unary("arcsin")
arcsinh = _unary("arcsinh")
arctan = _unary("arctan")
arctanh = _unary("arctanh")
ceil = _unary("ceil")
conj = _unary("conj")
cos = _unary("cos")
cosh = _unary("cosh")
exp = _unary("exp")
expm1 = _unary("expm1")
floor = _unary("floor")
imag = _unary("imag")
isfinite = _unary("isfinite")
isinf = _unary("isinf")
isnan = _unary("isnan")
log = _unary("log")
log1p = _unary("log1p")
log2 = _unary("log2")
log10 = _unary("log10")
negative = _unary("negative")
positive = _unary("positive")
real = _unary("real")
sign = _unary("sign")
signbit = _unary("signbit")
sin = _unary("sin")
sinh = _unary("sinh")
sqrt = _unary("sqrt")
square = _unary("square")
tan = _unary("tan")
tanh = _unary("tanh")
trunc = _unary("trunc")
bitwise_invert = _unary("bitwise_invert")
logical_not = _unary("logical_not")
add = _binary("add")
arctan2 = _binary("arctan2")
copysign = _binary("copysign")
divide = _binary("divide")
equal = _binary("equal")
floor_divide = _binary("floor_divide")
greater = _binary("greater")
greater_equal = _binary("greater_equal")
hypot = _binary("hypot")
less = _binary("less")
less_equal = _binary("less_equal")
logaddexp = _binary("logaddexp")
maximum = _binary("maximum")
minimum = _binary("minimum")
multiply = _binary("multiply")
nextafter = _binary("nextafter")
not_equal = _binary("not_equal")
pow = _binary("pow")
remainder = _binary("remainder")
subtract = _binary("subtract")
bitwise_and = _binary("bitwise_and")
bitwise_or = _binary("bitwise_or")
bitwise_xor = _binary("bitwise_xor")
bitwise_left_shift = _binary("bitwise_left_shift")
bitwise_right_shift = _binary("bitwise_right_shift")
logical_and = _binary("logical_and")
logical_or = _binary("logical_or")
logical_xor = _binary("logical_xor")


def reciprocal(x: Any, /) -> LazyExpr:
    """``1.0 / x`` (python-blosc2's ``reciprocal``: a float for integers too).

    >>> from pyblosc2 import asarray
    >>> reciprocal(asarray([1, 2, 4]))[:].tolist()
    [1.0, 0.5, 0.25]
    """
    return LazyExpr(new_op=(1.0, "/", x))


def round(x: Any, /) -> LazyExpr:
    """``x`` rounded to the nearest integer value, halves to even (``np.round``).

    >>> from pyblosc2 import asarray
    >>> round(asarray([0.5, 1.5, 2.4]))[:].tolist()
    [0.0, 2.0, 2.0]
    """
    return LazyExpr(new_op=(x, "round", None))


def clip(x: Any, min: Any = None, max: Any = None, /) -> LazyExpr:
    """``x`` limited to ``[min, max]`` (``np.clip``; a bound left None is not applied).

    >>> from pyblosc2 import asarray
    >>> clip(asarray([1, 5, 9]), 2, 6)[:].tolist()
    [2, 5, 6]
    """
    if min is None and max is None:
        return LazyExpr(new_op=(x, None, None))
    if min is None:
        return LazyExpr(new_op=(x, "minimum", max))
    if max is None:
        return LazyExpr(new_op=(x, "maximum", min))
    inner = LazyExpr(new_op=(x, "maximum", min))
    return LazyExpr(new_op=(inner, "minimum", max))


def where(condition: Any, x: Any = None, y: Any = None) -> LazyExpr:
    """``x`` where ``condition`` is true, else ``y`` (``np.where``); with ``x`` only, the
    items of ``x`` where ``condition`` is true (a filter).

    >>> from pyblosc2 import asarray
    >>> a = asarray([1, 5, 9])
    >>> where(a > 4, a, 0)[:].tolist(), where(a > 4, a)[:].tolist()
    ([0, 5, 9], [5, 9])
    """
    cond = (
        condition if isinstance(condition, LazyExpr) else LazyExpr(new_op=(condition, None, None))
    )
    return cond.where(x, y)


def _strings(name: str, doc: str) -> Callable[..., LazyExpr]:
    def fn(x1: Any, x2: Any, /) -> LazyExpr:
        return LazyExpr(new_op=(x1, name, x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


contains = _strings(
    "contains",
    """Whether each string of ``x1`` contains ``x2`` (``np.strings.find(x1, x2) != -1``).

    >>> import numpy as np; from pyblosc2 import asarray
    >>> contains(asarray(np.array(["abc", "xyz"])), "b")[:].tolist()
    [True, False]
    """,
)
startswith = _strings(
    "startswith",
    """Whether each string of ``x1`` starts with ``x2`` (``np.strings.startswith``).

    >>> import numpy as np; from pyblosc2 import asarray
    >>> startswith(asarray(np.array(["abc", "xyz"])), "a")[:].tolist()
    [True, False]
    """,
)
endswith = _strings(
    "endswith",
    """Whether each string of ``x1`` ends with ``x2`` (``np.strings.endswith``).

    >>> import numpy as np; from pyblosc2 import asarray
    >>> endswith(asarray(np.array(["abc", "xyz"])), "z")[:].tolist()
    [False, True]
    """,
)


def lower(a: Any, /) -> LazyExpr:
    """Each string of ``a`` in lower case (``np.strings.lower``).

    >>> import numpy as np; from pyblosc2 import asarray
    >>> lower(asarray(np.array(["AbC"])))[:].tolist()
    ['abc']
    """
    return LazyExpr(new_op=(a, "lower", None))


def upper(a: Any, /) -> LazyExpr:
    """Each string of ``a`` in upper case (``np.strings.upper``).

    >>> import numpy as np; from pyblosc2 import asarray
    >>> upper(asarray(np.array(["AbC"])))[:].tolist()
    ['ABC']
    """
    return LazyExpr(new_op=(a, "upper", None))


# the array API's names of the same functions, as in python-blosc2 (blosc2.acos is blosc2.arccos)
acos = arccos
acosh = arccosh
asin = arcsin
asinh = arcsinh
atan = arctan
atanh = arctanh
atan2 = arctan2
