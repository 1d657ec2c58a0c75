"""pandas' execution-engine protocol for ``jit`` (python-blosc2's ``PandasUdfEngine``):
``df.apply(f, engine=jit)``, ``s.map(f, engine=jit)``; pandas >= 3 looks for
``engine.__pandas_udf__`` and calls its ``map``/``apply`` with the decorator.

The function is taken as vectorized: it is called once with a whole array (a Series'
values; a column for ``axis=0``; a row for ``axis=1``; the whole frame for ``axis=None``),
not once per element. A function of a row that reads ``row["col"]`` (pandas' row idiom) is
called once with a :class:`RowProxy`, whose ``row["col"]`` is the whole column (its own
dtype, read from the frame, not from the frame's upcast ``values``): one expression over
all rows; with an ``if`` it is a DSL kernel over the columns (:mod:`pyblosc2.dsl.rowidiom`).
Such a function with a ``for``/``while`` is refused (tracing would unroll the loop).

pandas is never imported here: frames and series are used through their own methods.

>>> import numpy as np
>>> from pyblosc2.compute.jit import jit
>>> PandasUdfEngine.map(np.array([1, 2]), lambda x: x * 10, (), {}, jit, False).tolist()
[10, 20]
>>> PandasUdfEngine.apply(np.ones((2, 2)), lambda c: c + 1, (), {}, jit, 0).tolist()
[[2.0, 2.0], [2.0, 2.0]]
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from ..ndarray.operand import Operand
from .simpleproxy import SimpleProxy

__all__ = ["PandasUdfEngine", "RowProxy", "row_column", "wide_frame_hint"]

_AXES = (0, 1, "index", "columns", None)


def _is_string_column(col: Any) -> bool:
    """A pandas string column: pandas 3's ``str`` dtype (kind ``"O"``, named ``"str"``),
    ``StringDtype`` (``"string"``), an object column (as pandas' ``is_string_dtype``), or a
    numpy ``U``/``S`` array (a categorical is not one)."""
    dtype = getattr(col, "dtype", None)
    if getattr(dtype, "name", None) in ("str", "string"):
        return True
    return isinstance(dtype, np.dtype) and dtype.kind in "OUS"


def _string_values(col: Any, label: Any) -> np.ndarray:
    """A pandas string column as a fixed-width ``<U`` array; nulls refused (pandas' own row
    kernels raise on a null too)."""
    if hasattr(col, "isna") and bool(col.isna().any()):
        raise ParamError(
            f"jit: string column {label!r} contains nulls, and a row-wise kernel over a null "
            f"raises in pandas too; fill them first, e.g. df[{label!r}] = "
            f"df[{label!r}].fillna('')"
        )
    values = col.to_numpy(dtype=object) if hasattr(col, "to_numpy") else np.asarray(col)
    return np.asarray(values).astype(str)


def row_column(row: Any, label: Any) -> np.ndarray:
    """The whole column ``label`` behind a :class:`RowProxy` (or of a frame) as an array."""
    if isinstance(row, RowProxy):
        return row.column(label)
    col = row[label]
    if isinstance(col, np.ndarray):
        return col
    if _is_string_column(col):
        return _string_values(col, label)
    return np.asarray(col)


class RowProxy(Operand):
    """ "The current row" of ``df.apply(f, axis=1)``, backed by whole columns: ``row["a"]``
    is column ``a`` as an operand, so ``row["a"] + row["b"]`` is one expression over all
    rows. Only access by a column label is supported.

    >>> class Frame(dict):  # the two things RowProxy uses of a DataFrame
    ...     columns = np.array(["a", "b"], dtype=object)
    >>> row = RowProxy(Frame(a=np.array([1, 2]), b=np.array([10, 20])))
    >>> (row["a"] + row["b"])[:].tolist()
    [11, 22]
    """

    def __init__(self, frame: Any) -> None:
        self._frame = frame
        self._cache: dict[Any, SimpleProxy] = {}

    def column(self, label: Any) -> np.ndarray:
        """Column ``label`` as an array (a string column as ``<U``), checked unique."""
        matches = int(np.count_nonzero(np.asarray(self._frame.columns == label)))
        if matches == 0:
            raise KeyError(f"row[{label!r}]: no such column in the DataFrame")
        if matches > 1:
            raise KeyError(
                f"row[{label!r}]: column label is duplicated ({matches} matches); row "
                "proxies need unique column labels"
            )
        col = self._frame[label]
        if _is_string_column(col):
            return _string_values(col, label)
        return np.asarray(col.to_numpy() if hasattr(col, "to_numpy") else col)

    def __getitem__(self, key: Any) -> Any:
        if not isinstance(key, str):
            raise ParamTypeError(
                f"row[{key!r}]: axis=1 row proxies support column access by name (a str) "
                "only; call the jit function with the columns as separate arguments instead, "
                "e.g. func(df['a'], df['b'])"
            )
        if key not in self._cache:
            col = self.column(key)
            if col.dtype.kind not in "biufcUS":
                raise ParamError(
                    f"row[{key!r}]: column has dtype {col.dtype!r}, which the jit engine "
                    "cannot vectorize; numeric, boolean and string columns are supported"
                )
            self._cache[key] = SimpleProxy(col)
        return self._cache[key]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_frame", "_cache"):
            raise AttributeError(name)
        raise AttributeError(
            f"row.{name}: axis=1 row proxies support column access as row[{name!r}] only; "
            "attribute access, iteration and per-row methods (row.isna()...) are not "
            "supported. Call the jit function with the columns as separate arguments instead."
        )


def wide_frame_hint(exc: BaseException, name: str, params: Any) -> str | None:
    """The fix to name when a call got a keyword its function does not take: the usual
    cause is ``kernel(**df)`` over a frame with more columns than parameters."""
    if not isinstance(exc, TypeError) or "unexpected keyword argument" not in str(exc):
        return None
    params = list(params or ())
    if not params:
        return None
    cols = ", ".join(repr(p) for p in params)
    return (
        f"If you are calling {name}(**df), subset the frame to the kernel's parameters: "
        f"{name}(**df[[{cols}]])"
    )


def _undecorated(func: Any) -> Any:
    return getattr(func, "_blosc2_jit_wrapped", func)


def _decorate_once(func: Any, decorator: Callable[[Any], Any]) -> Any:
    return func if hasattr(func, "_blosc2_jit_wrapped") else decorator(func)


def _row_usage(func: Any) -> tuple[bool, bool]:
    """Whether ``func`` reads ``row["literal"]`` of its first parameter, and whether it has a
    ``for``/``while`` (both False when its source cannot be read)."""
    try:
        params = list(inspect.signature(func).parameters)
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False, False
    if not params:
        return False, False
    nodes = list(ast.walk(tree))
    subscript = any(
        isinstance(n, ast.Subscript)
        and isinstance(n.value, ast.Name)
        and n.value.id == params[0]
        and isinstance(n.slice, ast.Constant)
        and isinstance(n.slice.value, str)
        for n in nodes
    )
    return subscript, any(isinstance(n, ast.For | ast.While) for n in nodes)


def _numeric(data: Any) -> np.ndarray:
    if not isinstance(data, np.ndarray):
        values = getattr(data, "values", None)
        if values is None:
            raise ParamTypeError(
                f"jit got an object of type {type(data).__name__}, which is not supported; "
                "cast the Series or DataFrame to a NumPy dtype"
            )
        data = np.asarray(values)
    if data.dtype.kind not in "biufc":
        raise ParamTypeError(
            f"jit requires a numeric dtype, got {data.dtype!r}: the engine runs vectorized "
            "numeric computations only; cast non-numeric columns before engine=jit"
        )
    return data


class PandasUdfEngine:
    """pandas' ``__pandas_udf__`` protocol (``map`` and ``apply``) for ``jit``."""

    @classmethod
    def map(
        cls,
        data: Any,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        decorator: Callable[[Any], Any],
        skip_na: bool,
    ) -> Any:
        """``func`` over all of ``data`` at once (``Series.map(func, engine=jit)``)."""
        if skip_na:
            raise NotImplementedError("the jit engine does not support na_action='ignore'")
        values = _numeric(data)
        return _decorate_once(func, decorator)(values, *args, **kwargs)

    @classmethod
    def apply(
        cls,
        data: Any,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        decorator: Callable[[Any], Any],
        axis: Any,
    ) -> Any:
        """``func`` over ``data`` by column (``axis=0``), row (``axis=1``) or whole
        (``axis=None``, or 1-d data); a frame given gets a frame or series back."""
        if not any(axis is a or (a is not None and axis == a) for a in _AXES):
            raise ParamError(f"axis must be 0, 1, 'index', 'columns' or None, got {axis!r}")
        frame = hasattr(data, "columns")
        name = getattr(func, "__name__", "the function")
        subscript, loop = _row_usage(_undecorated(func)) if frame else (False, False)
        by_row = axis in (1, "columns")
        values = None if (subscript and by_row) else _numeric(data)
        func = _decorate_once(func, decorator)
        if values is not None and (values.ndim == 1 or axis is None):
            result = func(values, *args, **kwargs)
        elif not by_row:
            assert values is not None
            cols = [func(values[:, j], *args, **kwargs) for j in range(values.shape[1])]
            result = np.vstack(cols).transpose()
        elif subscript:
            if loop:
                raise ParamTypeError(
                    f"jit engine axis=1: {name!r} combines row['colname'] access with a "
                    "for/while loop, which cannot be traced per row; call the jit function "
                    "with the columns as separate arguments instead (name its parameters "
                    "after the columns and call kernel(**df))"
                )
            result = func(RowProxy(data), *args, **kwargs)
            nrows = len(data)
            if not (isinstance(result, np.ndarray) and result.shape == (nrows,)):
                raise ParamTypeError(
                    "jit engine axis=1: functions using row['colname'] must return one scalar "
                    f"per row (shape ({nrows},)); got {result!r}"
                )
        else:  # a function of a positional row: once per row
            assert values is not None
            result = np.vstack([func(values[i, :], *args, **kwargs) for i in range(len(values))])
        if isinstance(result, np.ndarray) and frame:
            if result.ndim == 2:
                return data.__class__(result, index=data.index, columns=data.columns)
            labels = data._get_agg_axis(data._get_axis_number(axis))
            return data._constructor_sliced(result, index=labels)
        return result
