"""The functions a DSL kernel may call, by the names python-blosc2's DSL knows them
(doc/reference/dsl_syntax.md of python-blosc2; ``np.``/``numpy.``/``math.`` prefixes are
dropped, and numpy's ``maximum``/``minimum``/``absolute`` are its ``fmax``/``fmin``/``abs``).

One table serves both routes: each entry is a numpy ufunc (or a small function of ufuncs)
that the numpy route (:mod:`.interp`) applies to whole arrays and the numba route
(:mod:`.numba_route`) calls on one item at a time (numba compiles numpy's ufuncs for
scalars). The casts ``int``, ``float`` and ``bool`` are the DSL's own (:data:`CASTS`).

>>> FUNCTIONS["fmax"].nargs, FUNCTIONS["where"].nargs, canonical("atan2")
(2, 3, 'arctan2')
>>> FUNCTIONS["clip"].fn(np.array([-1.0, 0.5, 3.0]), 0.0, 1.0).tolist()
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "ALIASES",
    "CASTS",
    "CONSTANTS",
    "FUNCTIONS",
    "NUMPY_ALIASES",
    "DSLFunction",
    "canonical",
]


@dataclass(frozen=True, slots=True)
class DSLFunction:
    """A DSL function: how many arguments it takes, and its numpy implementation (the numba
    route calls the same object on scalars, or ``numba_fn`` when that differs)."""

    nargs: int
    fn: Callable[..., Any]
    numba_fn: Callable[..., Any] | None = None


def _where(c: Any, a: Any, b: Any) -> Any:
    """``a`` where ``c`` is true, else ``b`` (numpy's ``where``)."""
    return np.where(c, a, b)


def _where_scalar(c: Any, a: Any, b: Any) -> Any:  # pragma: no cover - compiled by numba
    return a if c else b


def _clip(x: Any, lo: Any, hi: Any) -> Any:
    """numpy's ``clip``: ``minimum(maximum(x, lo), hi)`` (NaN propagates)."""
    return np.minimum(np.maximum(x, lo), hi)


def _real(x: Any) -> Any:
    return np.real(x)


def _real_scalar(x: Any) -> Any:  # pragma: no cover - compiled by numba
    return x.real


def _imag(x: Any) -> Any:
    return np.imag(x)


def _imag_scalar(x: Any) -> Any:  # pragma: no cover - compiled by numba
    return x.imag


def _u(fn: Any) -> DSLFunction:
    return DSLFunction(fn.nin, fn)


#: name -> function (numpy's ufuncs, elementwise)
FUNCTIONS: dict[str, DSLFunction] = {
    **{
        name: _u(getattr(np, name))
        for name in (
            "sqrt",
            "cbrt",
            "exp",
            "exp2",
            "expm1",
            "log",
            "log1p",
            "log2",
            "log10",
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
            "floor",
            "ceil",
            "trunc",
            "rint",
            "fmax",
            "fmin",
            "maximum",
            "minimum",
            "power",
            "hypot",
            "fmod",
            "copysign",
            "sign",
            "isnan",
            "isinf",
            "isfinite",
            "square",
            "logaddexp",
            "conjugate",
        )
    },
    "abs": _u(np.absolute),
    "where": DSLFunction(3, _where, _where_scalar),
    "clip": DSLFunction(3, _clip),
    "real": DSLFunction(1, _real, _real_scalar),
    "imag": DSLFunction(1, _imag, _imag_scalar),
}

#: other names of the same functions (the array API's and C's)
ALIASES = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "atan2": "arctan2",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "pow": "power",
    "conj": "conjugate",
    "absolute": "abs",
    "fabs": "abs",
}

#: numpy names a kernel's ``np.name(...)`` calls are rewritten to (python-blosc2's aliases)
NUMPY_ALIASES = {"maximum": "fmax", "minimum": "fmin", "absolute": "abs"}

#: the casts (one argument each)
CASTS = frozenset({"int", "float", "bool"})

#: names of constants a kernel may read (when no input or local has that name)
CONSTANTS = {"pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan}


def canonical(name: str) -> str | None:
    """The table name of ``name`` (an alias resolved), or None when the DSL has no such
    function."""
    name = ALIASES.get(name, name)
    return name if name in FUNCTIONS else None
