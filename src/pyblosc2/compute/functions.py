"""The elementwise functions an expression may call, by name, with numpy's semantics, and
which of them numexpr evaluates the same way.

A name is python-blosc2's (its ``elementwise_funcs`` and the array API's: ``acos``,
``atan2``, ``bitwise_invert``, ``pow``...), or the name of any numpy ufunc with one output
(``fmod``, ``deg2rad``...: every ufunc is a pure elementwise function, so all are safe in an
expression). Operators are functions too (``a + b`` is ``add``). String functions
(``contains``, ``startswith``, ``endswith``, ``lower``, ``upper``) use ``numpy.strings``.

numexpr evaluates a subtree only where it gives numpy's result: operands of float64 and
complex128 (and booleans from comparing them), Python scalar constants, and the operators and
functions in :data:`NUMEXPR_FUNCS`; everything else is numpy, one piece at a time.

>>> function("atan2") is np.arctan2, function("fmod") is np.fmod, function("open")
(True, True, None)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "CUMULATIVE",
    "NUMEXPR_FUNCS",
    "REDUCTIONS",
    "function",
    "is_elementwise",
]

_strings: Any = getattr(np, "strings", np.char)


def _contains(a: Any, b: Any) -> Any:
    return _strings.find(a, b) != -1


def _where(cond: Any, x: Any = None, y: Any = None) -> Any:
    return np.where(cond, x, y)


def _counts(compare: np.ufunc) -> Callable[[Any, Any], Any]:
    """``compare`` reading a plain integer against a datetime64/timedelta64 operand as a count
    of the operand's unit (python-blosc2's reading: an expression string cannot spell a
    datetime literal; numpy refuses the comparison). NaT compares as numpy compares it."""

    def fn(a: Any, b: Any) -> Any:
        try:
            return compare(a, b)
        except TypeError:
            ta, tb = np.asarray(a), np.asarray(b)
            if ta.dtype.kind in "mM" and tb.dtype.kind in "iu":
                return np.where(np.isnat(ta), compare is np.not_equal, compare(ta.view("i8"), tb))
            if tb.dtype.kind in "mM" and ta.dtype.kind in "iu":
                return np.where(np.isnat(tb), compare is np.not_equal, compare(ta, tb.view("i8")))
            raise

    fn.__name__ = compare.__name__
    return fn


#: functions whose numpy spelling differs from python-blosc2's / the array API's name
_ALIASES: dict[str, Callable[..., Any]] = {
    "abs": np.absolute,
    "acos": np.arccos,
    "acosh": np.arccosh,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atan2": np.arctan2,
    "atanh": np.arctanh,
    "bitwise_invert": np.invert,
    "bitwise_left_shift": np.left_shift,
    "bitwise_right_shift": np.right_shift,
    "divide": np.true_divide,
    "pow": np.power,
    "conj": np.conjugate,
    "real": np.real,
    "imag": np.imag,
    "round": np.round,
    "clip": np.clip,
    "where": _where,
    "contains": _contains,
    "startswith": _strings.startswith,
    "endswith": _strings.endswith,
    "lower": _strings.lower,
    "upper": _strings.upper,
    **{
        name: _counts(getattr(np, name))
        for name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
    },
}

#: reductions (computed chunk by chunk before the elementwise pass), numpy spellings included
REDUCTIONS = frozenset(
    {
        "sum",
        "prod",
        "min",
        "max",
        "mean",
        "std",
        "var",
        "any",
        "all",
        "argmin",
        "argmax",
        "count_nonzero",
        "cumulative_sum",
        "cumulative_prod",
        "cumsum",
        "cumprod",
    }
)
#: reductions whose result has the operand's shape
CUMULATIVE = frozenset({"cumulative_sum", "cumulative_prod", "cumsum", "cumprod"})

#: functions numexpr has under the same name and evaluates as numpy does (float64/complex128)
NUMEXPR_FUNCS = frozenset(
    {
        "bitwise_and",
        "bitwise_or",
        "bitwise_invert",
        "pow",
        "add",
        "subtract",
        "multiply",
        "divide",
        "negative",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
        "equal",
        "not_equal",
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
        "sqrt",
        "where",
        "logical_and",
        "logical_or",
        "logical_not",
    }
)


def function(name: str) -> Callable[..., Any] | None:
    """The numpy callable of the elementwise function ``name``, or None."""
    f = _ALIASES.get(name)
    if f is not None:
        return f
    f = getattr(np, name, None)
    if isinstance(f, np.ufunc) and f.nout == 1 and f.signature is None:
        return f  # (generalized ufuncs such as matmul are not elementwise)
    return None


def is_elementwise(name: str) -> bool:
    """Whether ``name`` is an elementwise function an expression may call.

    >>> is_elementwise("sin"), is_elementwise("sum"), is_elementwise("__import__")
    (True, False, False)
    """
    return function(name) is not None
