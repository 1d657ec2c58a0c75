"""Rows into columns: what ``CTable.append`` and ``extend`` accept, turned into one NumPy
array per column, checked against the column's spec before anything is written.

A row is a dataclass instance, a mapping of column names, or a sequence in column order
(tuple, list, ``numpy.void``); a missing value takes the column's declared default. A batch
is a mapping of column names to sequences, a structured NumPy array, a sequence of rows, or
another CTable. Values are checked as python-blosc2 validates them: numeric bounds (``ge``,
``gt``, ``le``, ``lt``), string and bytes lengths (``min_length``, ``max_length``; longer
text would be cut by the fixed-width dtype), and the cast to the column's dtype.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import MISSING
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from .listcol import coerce_list_values, is_list_spec
from .ndcells import coerce_cells, is_cells
from .nested import flatten_mapping
from .nulls import NULL_MASK, null_kind, split_nulls, value_nulls
from .schema import TableColumn
from .strings import coerce_values, is_var

__all__ = ["batch_to_columns", "row_class", "row_to_values"]


def _default(col: TableColumn) -> Any:
    if col.default is MISSING:
        raise ParamError(
            f"column {col.name!r} has no value and no default declared; a value must be provided"
        )
    return col.default


def _fill(c: TableColumn, n: int) -> Any:
    """``n`` copies of ``c``'s default."""
    return [_default(c)] * n if is_var(c.spec) else np.full(n, _default(c), dtype=c.dtype)


def row_to_values(columns: list[TableColumn], row: Any) -> list[Any]:
    """The values of one row, in column order."""
    names = [c.name for c in columns]
    if dataclasses.is_dataclass(row) and not isinstance(row, type):
        found = {f.name for f in dataclasses.fields(row)}
        extra = found - set(names)
        if extra:
            raise ParamError(f"row fields {sorted(extra)} are not columns of the table")
        return [getattr(row, c.name) if c.name in found else _default(c) for c in columns]
    if isinstance(row, Mapping):
        row = flatten_mapping(row, names)  # nested mappings: dotted names (nested.py)
        extra = set(row) - set(names)
        if extra:
            raise ParamError(f"row keys {sorted(extra)} are not columns of the table {names}")
        return [row[c.name] if c.name in row else _default(c) for c in columns]
    if isinstance(row, np.void) and row.dtype.names:
        return row_to_values(columns, {k: row[k] for k in row.dtype.names})
    if isinstance(row, Sequence | np.void) and not isinstance(row, str | bytes):
        values: list[Any] = list(row.tolist()) if isinstance(row, np.void) else list(row)
        if len(values) > len(columns):
            raise ParamError(f"a row of {len(values)} values for {len(columns)} columns")
        return values + [_default(c) for c in columns[len(values) :]]
    raise ParamTypeError(
        f"a row must be a dataclass instance, a mapping or a sequence, got {type(row).__name__}"
    )


def batch_to_columns(
    columns: list[TableColumn], data: Any, *, bounds: bool = True
) -> dict[str, np.ndarray]:
    """One checked array per column for a batch of rows (all of the same length); the
    spec's numeric bounds unchecked with ``bounds=False`` (python-blosc2's
    ``validate=False``)."""
    if isinstance(data, np.ndarray) and data.dtype.names:
        data = {k: data[k] for k in data.dtype.names}
    if isinstance(data, Mapping):
        data = flatten_mapping(data, [c.name for c in columns])
        extra = set(data) - {c.name for c in columns}
        if extra and len(extra) == len(data):
            raise ParamError(f"No known stored columns in {sorted(extra)}: the table has none")
        if extra:
            raise ParamError(f"keys {sorted(extra)} are not columns of the table")
        lengths = {k: len(v) for k, v in data.items()}
        if len(set(lengths.values())) > 1:
            raise ParamError(f"columns of different lengths (all need the same length): {lengths}")
        n = next(iter(lengths.values()), 0)
        out = {}
        for c in columns:
            raw = data[c.name] if c.name in data else _fill(c, n)
            out[c.name] = to_column(c, raw, bounds=bounds)
        return out
    if isinstance(data, str | bytes) or not hasattr(data, "__iter__"):
        raise ParamTypeError(f"extend takes rows or a mapping of columns, got {type(data)}")
    rows = [row_to_values(columns, row) for row in data]
    return {
        c.name: to_column(c, [r[i] for r in rows], n=len(rows), bounds=bounds)
        for i, c in enumerate(columns)
    }


def to_column(
    col: TableColumn, values: Any, n: int | None = None, *, bounds: bool = True
) -> np.ndarray:
    """``values`` as a 1-d array of ``col``'s dtype, checked against its spec (its numeric
    bounds too unless ``bounds`` is False: python-blosc2 checks them on append and extend,
    not when values are written into a column)."""
    if is_list_spec(col.spec):  # list: listcol.py's
        return coerce_list_values(col.name, col.spec, values)  # type: ignore[arg-type]
    if is_var(col.spec):  # utf8, vlstring, vlbytes, dictionary: strings.py's
        return coerce_values(col.name, col.spec, values)  # type: ignore[arg-type]
    if is_cells(col.spec):  # N-d cells: ndcells.py's
        return coerce_cells(col.name, col.spec, values, n)  # type: ignore[arg-type]
    dtype = col.dtype
    values, nulls = split_nulls(col, values)  # None/NA -> the sentinel or the mask's fill
    raw = np.asarray(values) if not isinstance(values, np.ndarray) else values
    if dtype.kind == "u" and raw.dtype.kind == "f" and not isinstance(values, np.ndarray):
        raw = _uint64_ints(values, raw)  # Python ints above 2**63: numpy takes them as floats
    if n is not None and raw.shape == (n, 0):  # an empty list per row
        raise ParamError(f"column {col.name!r}: empty values")
    if raw.ndim != 1:
        raise ParamError(f"column {col.name!r}: expected 1-d values, got shape {raw.shape}")
    if getattr(col.spec, "kind", None) == "timestamp" and raw.dtype.kind in "MOU":
        unit = col.spec.unit  # type: ignore[attr-defined]
        try:  # times (datetime64, datetime) as epoch offsets in the column's unit
            raw = raw.astype(f"datetime64[{unit}]").astype(np.int64)
        except (TypeError, ValueError) as exc:
            raise ParamTypeError(f"column {col.name!r}: not times: {exc}") from None
    _check_text(col, raw if nulls is None else raw[~nulls])  # a null is no text
    try:
        if dtype.kind in "iu" and raw.dtype.kind == "f" and not np.all(np.mod(raw, 1) == 0):
            raise ParamError(f"column {col.name!r}: non-integral values for {dtype}")
        if dtype.kind in "iu" and raw.dtype.kind in "iuf" and raw.size:
            info = np.iinfo(dtype)
            if raw.min() < info.min or raw.max() > info.max:
                raise ParamError(f"column {col.name!r}: values out of the range of {dtype}")
        if dtype.kind in "iufcb" and raw.dtype.kind in "USO" and raw.size:
            raise ParamTypeError(f"column {col.name!r}: {raw.dtype} values for {dtype}")
        arr = raw.astype(dtype, copy=False)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, ParamError):
            raise
        raise ParamTypeError(f"column {col.name!r}: values do not cast to {dtype}: {exc}") from None
    if bounds:
        _check_bounds(col, arr[~value_nulls(col, arr, nulls)])
    if nulls is None or null_kind(col.spec) != NULL_MASK:
        return arr
    return np.ma.MaskedArray(arr, mask=nulls)  # the nulls of a mask column ride along


def _uint64_ints(values: Any, raw: np.ndarray) -> np.ndarray:
    """``values`` as exact uint64 when they are all Python ints in its range, else ``raw``.

    >>> _uint64_ints([1, 2**64 - 1], np.asarray([1, 2**64 - 1])).tolist()
    [1, 18446744073709551615]
    """
    items = list(values)
    if not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in items):
        return raw
    if items and not 0 <= min(items) <= max(items) < 2**64:
        return raw
    return np.asarray(items, dtype=np.uint64)


def _check_text(col: TableColumn, raw: np.ndarray) -> None:
    if col.dtype.kind not in "US" or raw.size == 0:
        return
    if raw.dtype.kind == "O":
        wrong = [
            v for v in raw.tolist() if not isinstance(v, str if col.dtype.kind == "U" else bytes)
        ]
        if wrong:
            raise ParamTypeError(
                f"column {col.name!r}: {type(wrong[0]).__name__} value {wrong[0]!r}"
            )
        raw = raw.astype(col.dtype.kind)
    if raw.dtype.kind not in "US":
        raise ParamTypeError(f"column {col.name!r}: {raw.dtype} values for {col.dtype}")
    lengths = np.char.str_len(raw)
    longest, shortest = int(lengths.max()), int(lengths.min())
    max_length = getattr(col.spec, "max_length", None)
    min_length = getattr(col.spec, "min_length", None)
    if max_length is not None and longest > max_length:
        raise ParamError(
            f"column {col.name!r}: a value of length {longest} exceeds max_length={max_length}"
        )
    if min_length is not None and shortest < min_length:
        raise ParamError(
            f"column {col.name!r}: a value of length {shortest} is under min_length={min_length}"
        )


_BOUNDS = {
    "ge": (np.less, ">="),
    "gt": (np.less_equal, ">"),
    "le": (np.greater, "<="),
    "lt": (np.greater_equal, "<"),
}


def _check_bounds(col: TableColumn, arr: np.ndarray) -> None:
    for attr, (bad, sign) in _BOUNDS.items():
        limit = getattr(col.spec, attr, None)
        if limit is not None and arr.size and np.any(bad(arr, limit)):
            worst = arr[bad(arr, limit)][0]
            raise ParamError(
                f"column {col.name!r}: value {worst!r} violates constraint {attr}={limit} "
                f"(must be {sign} {limit})"
            )


class _RowBase:
    """What python-blosc2's rows add to a named tuple: ``row["name"]`` and ``as_dict()``."""

    __slots__ = ()
    _fields: tuple[str, ...]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._fields.index(key))  # type: ignore[call-overload]
            except ValueError:
                raise KeyError(key) from None
        return tuple.__getitem__(self, key)  # type: ignore[call-overload]

    def as_dict(self) -> dict[str, Any]:
        """The row as a mapping of column names to values."""
        return dict(zip(self._fields, self, strict=True))  # type: ignore[call-overload]


@functools.lru_cache(maxsize=64)
def row_class(names: tuple[str, ...]) -> type:
    """The named-tuple class of a table's rows (``row.x``, ``row["x"]``, ``row[0]``).

    >>> r = row_class(("x", "y"))(1, 2)
    >>> r.y, r["x"], r[1], r.as_dict()
    (2, 1, 2, {'x': 1, 'y': 2})
    """
    base = collections.namedtuple("Row", names, rename=True)  # type: ignore[misc]
    return type("Row", (_RowBase, base), {"__slots__": ()})
