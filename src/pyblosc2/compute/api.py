"""The engine's entry points as python-blosc2 names them: ``lazyexpr`` (a lazy expression of
a string, an NDArray or another expression), ``evaluate`` (numexpr's ``evaluate``, chunk by
chunk), ``ne_evaluate`` (numexpr with a numpy fallback, for numpy operands), the dtype helpers
``result_type``, ``can_cast``, ``isdtype``, and ``FPAccuracy``.

Names in a string are looked up in ``operands`` when given, else in ``local_dict`` and
``global_dict``, else in the caller's variables (as numexpr and python-blosc2 do); ``nan``,
``inf``, ``pi``, ``e`` and dtype names that no variable holds are constants.

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> a = asarray(np.arange(5.0)); b = np.ones(5)
>>> e = lazyexpr("a * 2 + b")
>>> e.expression, e[:3].tolist()
('(o0 * 2 + o1)', [1.0, 3.0, 5.0])
>>> evaluate("sum(a > 2)")
np.int64(2)
"""

from __future__ import annotations

import contextlib
import enum
import sys
from typing import Any

import numexpr
import numpy as np

from ..errors import ParamError, ParamTypeError
from ..ndarray.ndarray import NDArray
from .analysis import Analysis
from .blockwise import to_numpy
from .lazyarray import LazyArray
from .lazyexpr import LazyExpr
from .lower import lower
from .parser import CONSTANT_NAMES, DTYPE_NAMES, get_expr_operands, parse
from .plan import memory_bound
from .selection import Selection

__all__ = [
    "FPAccuracy",
    "can_cast",
    "evaluate",
    "isdtype",
    "lazyexpr",
    "ne_evaluate",
    "npcumprod",
    "npcumsum",
    "result_type",
    "seek_operands",
]


class FPAccuracy(enum.Enum):
    """python-blosc2's floating-point accuracy of its miniexpr kernels. Accepted by
    ``compute()`` and the reductions for its sake; numpy's and numexpr's functions (what
    pyblosc2 computes with) are accurate to about 1 ULP either way."""

    HIGH = 1
    MEDIUM = 2
    DEFAULT = MEDIUM


def seek_operands(
    names: Any,
    local_dict: dict[str, Any] | None = None,
    global_dict: dict[str, Any] | None = None,
    _frame_depth: int = 2,
) -> dict[str, Any]:
    """The values of ``names``: from ``local_dict`` then ``global_dict``, each defaulting to
    the variables of the caller ``_frame_depth`` frames up; names found nowhere are left
    out when they are constants or dtype names, else a :class:`ParamError`."""
    frame = sys._getframe(_frame_depth)
    local = frame.f_locals if local_dict is None else local_dict
    glob = frame.f_globals if global_dict is None else global_dict
    out: dict[str, Any] = {}
    for name in sorted(names):
        if name in local:
            out[name] = local[name]
        elif name in glob:
            out[name] = glob[name]
        elif name not in CONSTANT_NAMES and name not in DTYPE_NAMES:
            raise ParamError(
                f"the expression uses {name!r}, which is not a given or visible variable"
            )
    return out


def lazyexpr(
    expression: Any,
    operands: dict[str, Any] | None = None,
    out: Any = None,
    where: Any = None,
    local_dict: dict[str, Any] | None = None,
    global_dict: dict[str, Any] | None = None,
    ne_args: dict[str, Any] | None = None,
    _frame_depth: int = 2,
) -> LazyExpr:
    """A lazy expression of ``expression`` (a numexpr-style string, an NDArray or a lazy
    expression, whose operands ``operands`` updates). ``out``: where ``compute()`` writes;
    ``where``: ``(x, y)`` for ``where(expression, x, y)``.

    >>> import numpy as np
    >>> from pyblosc2 import asarray
    >>> lazyexpr("sin(x) ** 2 + cos(x) ** 2", {"x": asarray(np.arange(3.0))})[:].round(12).tolist()
    [1.0, 1.0, 1.0]
    """
    if isinstance(expression, LazyExpr):
        if operands is not None:
            expression.operands.update(operands)
            expression._cache = None
        if out is not None:
            expression._output = out
        expression._ne_args = ne_args
        if where is not None:
            new = expression.where(where[0], where[1])
            new._output = out
            return new
        return expression
    if isinstance(expression, LazyArray):
        return LazyExpr(new_op=(expression, None, None))
    if isinstance(expression, NDArray) or (
        hasattr(expression, "shape") and not isinstance(expression, str | bytes)
    ):
        return LazyExpr._new_expr(
            "o0", {"o0": expression}, guess=False, out=out, where=where, ne_args=ne_args
        )
    if isinstance(expression, bytes):
        expression = expression.decode()
    if not isinstance(expression, str):
        raise ParamTypeError(
            "an expression must be a str, an NDArray or a LazyExpr, "
            f"got {type(expression).__name__}"
        )
    parse(expression)  # the allow-list first: nothing is looked up for a refused string
    if operands is None:
        names = get_expr_operands(expression)
        operands = seek_operands(names, local_dict, global_dict, _frame_depth=_frame_depth)
    return LazyExpr._new_expr(
        expression, operands, guess=True, out=out, where=where, ne_args=ne_args
    )


def evaluate(
    ex: str,
    local_dict: dict[str, Any] | None = None,
    global_dict: dict[str, Any] | None = None,
    out: Any = None,
    **kwargs: Any,
) -> Any:
    """``ex`` (numexpr syntax, with reductions) computed chunk by chunk: a numpy array, or
    ``out`` (an NDArray or numpy array) filled. Operands come from the dicts or the caller's
    variables. numexpr's keywords (``optimization=``, ``truediv=``...) are accepted and
    ignored: casting follows numpy.

    >>> import numpy as np; from pyblosc2 import asarray
    >>> a = asarray(np.arange(10.0)); b = np.ones(10)
    >>> evaluate("a * 2 + b")[:4]
    array([1., 3., 5., 7.])
    """
    for k in list(kwargs):
        if k in ("optimization", "truediv", "order", "casting", "sanitize"):
            kwargs.pop(k)
    if kwargs:
        raise ParamError(f"unknown evaluate() arguments {sorted(kwargs)}")
    lexpr = lazyexpr(ex, local_dict=local_dict, global_dict=global_dict, out=out, _frame_depth=3)
    if out is not None:
        return lexpr.compute()
    return lexpr[()]


def ne_evaluate(expression: str, local_dict: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    """``expression`` on numpy operands (from ``local_dict`` and the caller's variables) with
    numexpr, or, where numexpr cannot (its missing functions, strings, datetimes...), with
    numpy through the engine's parser (python-blosc2's ``ne_evaluate``). Nothing is
    ``eval``-ed.

    >>> import numpy as np
    >>> x = np.arange(3.0)
    >>> ne_evaluate("x * 2 + 1").tolist(), ne_evaluate("fmod(x, 2)").tolist()
    ([1.0, 3.0, 5.0], [0.0, 1.0, 0.0])
    """
    frame = sys._getframe(kwargs.pop("_frame_depth", 1))
    env = dict(local_dict or {})
    for k, v in frame.f_locals.items():
        if k not in env and (hasattr(v, "shape") or np.isscalar(v)):
            env[k] = v
    out = kwargs.pop("out", None)
    with contextlib.suppress(Exception):
        return numexpr.evaluate(expression, local_dict=env, out=out, **kwargs)
    names = get_expr_operands(expression)
    ops = {k: v for k, v in env.items() if k in names}
    an = Analysis.of(expression, ops)
    bound = memory_bound()
    res = to_numpy(lower(an, bound), Selection.everything(an.shape), bound)
    if out is not None:
        out[...] = res
        return out
    return res


def npcumsum(
    x: Any, axis: Any = None, dtype: Any = None, include_initial: bool = False
) -> np.ndarray:
    """numpy's ``cumulative_sum`` (``cumsum`` with ``include_initial`` before numpy 2.1)."""
    fn = getattr(np, "cumulative_sum", None)
    if fn is not None:
        return fn(x, axis=axis, dtype=dtype, include_initial=include_initial)
    res = np.cumsum(x, axis=axis, dtype=dtype)
    return (
        np.concatenate([np.zeros_like(np.take(res, [0], axis=axis or 0)), res], axis=axis or 0)
        if include_initial
        else res
    )


def npcumprod(
    x: Any, axis: Any = None, dtype: Any = None, include_initial: bool = False
) -> np.ndarray:
    """numpy's ``cumulative_prod`` (``cumprod`` with ``include_initial`` before numpy 2.1)."""
    fn = getattr(np, "cumulative_prod", None)
    if fn is not None:
        return fn(x, axis=axis, dtype=dtype, include_initial=include_initial)
    res = np.cumprod(x, axis=axis, dtype=dtype)
    return (
        np.concatenate([np.ones_like(np.take(res, [0], axis=axis or 0)), res], axis=axis or 0)
        if include_initial
        else res
    )


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """numpy's ``result_type`` over arrays (their dtypes), dtypes and scalars (weak, as
    numpy takes Python scalars).

    >>> from pyblosc2 import asarray
    >>> result_type(asarray(np.arange(3, dtype=np.int8)), 1), result_type(np.float32, 1.0)
    (dtype('int8'), dtype('float32'))
    """
    args = [
        np.dtype(v)
        if isinstance(v, type | np.dtype)
        else (np.asarray(v).dtype if isinstance(v, str | bytes) else v)
        if np.isscalar(v) or not hasattr(v, "dtype")
        else np.dtype(v.dtype)
        for v in arrays_and_dtypes
    ]
    return np.result_type(*args)


def can_cast(from_: Any, to: Any) -> bool:
    """Whether ``from_`` (a dtype or an array) can be cast to ``to`` safely.

    >>> can_cast(np.int8, np.int16), can_cast(np.float64, np.float32)
    (True, False)
    """
    src = (
        np.dtype(from_.dtype)
        if hasattr(from_, "dtype") and not isinstance(from_, type | np.dtype)
        else np.dtype(from_)
    )
    return bool(np.can_cast(src, np.dtype(to)))


_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name of the array API, or a tuple of
    them).

    >>> isdtype(np.int32, "integral"), isdtype(np.float32, ("bool", "complex floating"))
    (True, False)
    """
    dt = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ParamError(f"unknown dtype kind {k!r}; one of {sorted(_KINDS)}")
            if dt.kind in _KINDS[k] and not (dt.kind == "f" and dt.itemsize < 2):
                return True
        elif dt == np.dtype(k):
            return True
    return False
