"""A column of a CTable as its users index it: by logical row (deleted rows skipped).

``t["x"][:]`` (or ``t.x[:]``) reads the live values as a NumPy array, ``t["x"][i]`` one
value, ``t["x"][a:b]``, a list of rows or a boolean mask some of them; ``t["x"][i] = v``
writes in place, ``t["x"].view[a:b]`` is a column over some of the rows that writes through.
Where no row was deleted the logical rows are the leading physical ones and a read is one
slice of the stored NDArray; otherwise the live positions come from ``_valid_rows`` (or
the view's ordered positions). Arithmetic and comparisons build lazy expressions
(:mod:`pyblosc2.compute`) over the physical column arrays, as python-blosc2 does: a
comparison is a condition for ``CTable.where``. Aggregates are :mod:`.colstats`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..compute.lazyexpr import LazyExpr
from ..errors import BoundsError, ParamError, ParamTypeError
from ..ndarray.constructors import asarray
from ..ndarray.ndarray import NDArray
from .base import TableBase, mask_from_positions
from .colarith import ColumnArithmetic
from .colstats import ColumnStats
from .info import InfoReporter, column_info_items
from .ndcells import ColumnCells
from .nullcol import ColumnNulls
from .rows import to_column
from .strings import is_var
from .textops import (
    TextColumnMixin,
    check_utf8_operand,
    compare_values,
    list_label,
    present_values,
)

__all__ = ["Column", "ColumnViewIndexer", "read_positions", "write_positions"]


def write_positions(arr: NDArray, where: np.ndarray, values: Any) -> None:
    """``arr[where] = values`` for physical positions ``where`` (any order; a repeated one
    takes its last value): one read and one write (one commit) of the span they cover.

    >>> import pyblosc2
    >>> a = pyblosc2.zeros(10, dtype=np.int64)
    >>> write_positions(a, np.array([2, 5]), 7)
    >>> a[:].tolist()
    [0, 0, 7, 0, 0, 7, 0, 0, 0, 0]
    """
    if where.size == 0:
        return
    lo, hi = int(where.min()), int(where.max()) + 1
    span = np.array(arr[lo:hi], dtype=arr.dtype)
    span[where - lo] = values
    arr[lo:hi] = span


def read_positions(arr: Any, where: np.ndarray) -> np.ndarray:
    """``arr[where]`` for physical positions ``where`` (an NDArray or a lazy expression):
    one read of the span they cover.

    >>> import pyblosc2
    >>> read_positions(pyblosc2.arange(10), np.array([7, 2])).tolist()
    [7, 2]
    """
    if where.size == 0:
        return np.empty((0, *arr.shape[1:]), dtype=arr.dtype)
    lo, hi = int(where.min()), int(where.max()) + 1
    if hi - lo == where.size and where[0] == lo and np.all(np.diff(where) == 1):
        return np.asarray(arr[lo:hi])
    return np.asarray(arr[lo:hi])[where - lo]


def _check_rows(key: Any, n: int) -> np.ndarray:
    """An int list/array of logical rows, negative ones counted from the end."""
    arr = np.asarray(key)
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise ParamTypeError(f"rows are selected by int, slice, int list or bool mask: {key!r}")
    if arr.min() < -n or arr.max() >= n:
        raise BoundsError(f"index out of bounds: rows {key!r} for a column of size {n}")
    return np.where(arr < 0, arr + n, arr).astype(np.int64)


class ColumnViewIndexer:
    """``column.view[key]``: a :class:`Column` over some of the column's rows.

    >>> import dataclasses
    >>> from pyblosc2.ctable import CTable
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = 0
    >>> t = CTable(Row, new_data=[(i,) for i in range(5)])
    >>> t.x.view[1:3][:]
    array([1, 2])
    """

    def __init__(self, column: Column) -> None:
        self._column = column

    def __getitem__(self, key: Any) -> Column:
        return self._column._view_from_key(key)

    def __repr__(self) -> str:
        return f"ColumnViewIndexer({self._column._col_name!r})"


class Column(ColumnCells, ColumnNulls, ColumnStats, TextColumnMixin, ColumnArithmetic):
    """One column of a :class:`CTable`, indexed by logical row.

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = 0
    >>> from pyblosc2.ctable import CTable
    >>> t = CTable(Row)
    >>> t.extend({"x": [5, 6, 7]})
    >>> t.delete(0)
    >>> t["x"][:], t["x"][-1], t.x.sum()
    (array([6, 7]), np.int64(7), np.int64(13))
    """

    _REPR_PREVIEW_ITEMS = 8
    _takes_rows = True  # pyblosc2.take(column, rows) is column.take(rows)

    def __init__(self, table: TableBase, col_name: str, mask: NDArray | None = None) -> None:
        self._table = table
        self._col_name = col_name
        self._mask = mask

    @property
    def name(self) -> str:
        """The column's name."""
        return self._col_name

    # -- what the column is ---------------------------------------------------------------
    @property
    def is_computed(self) -> bool:
        """Whether this is a computed (virtual, read-only) column."""
        return self._col_name in self._table._computed_cols

    @property
    def _raw_col(self) -> Any:
        if self._col_name in self._table._computed_cols:
            return self._table._computed_lazy(self._col_name)
        return self._table._cols[self._col_name]

    @property
    def raw(self) -> NDArray:
        """The stored NDArray (physical rows, spare capacity and deleted rows included)."""
        if self.is_computed:
            raise AttributeError(
                f"Column {self._col_name!r} is a computed column and has no underlying array"
            )
        return self._table._cols[self._col_name]

    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of the values."""
        cc = self._table._computed_cols.get(self._col_name)
        return np.dtype(cc["dtype"]) if cc is not None else self._table._cols[self._col_name].dtype

    @property
    def _valid_rows(self) -> Any:
        if self._mask is None:
            return self._table._valid_rows
        return mask_from_positions(self._resolve_live_positions(), self._table._physical_len())

    def _resolve_live_positions(self) -> np.ndarray:
        """The physical positions of this column's live rows, in row order."""
        live = self._table._live_positions()
        if self._mask is None:
            return live
        if live.size == 0:
            return live
        return live[read_positions(self._mask, live)]

    def _has_identity_positions(self) -> bool:
        return self._mask is None and self._table._dense()

    def __len__(self) -> int:
        return len(self._table) if self._mask is None else int(self._resolve_live_positions().size)

    @property
    def shape(self) -> tuple[int, ...]:
        """The logical shape, ``(len(column), *item_shape)``."""
        return (len(self), *self.item_shape)

    @property
    def ndim(self) -> int:
        """1 for a scalar column, one more than the cell's for N-d cells."""
        return 1 + self.item_ndim

    @property
    def size(self) -> int:
        """The number of live values (items of all cells, for N-d cells)."""
        return len(self) * self.item_size

    # -- reading --------------------------------------------------------------------------
    def _read(self, where: np.ndarray) -> np.ndarray:
        return self._cast(read_positions(self._raw_col, where))

    def _cast(self, values: np.ndarray) -> np.ndarray:
        """A computed column's values in its declared dtype; a timestamp column's epoch
        offsets as ``datetime64`` of its unit."""
        unit = self._timestamp_unit()
        if unit is not None:
            return values.astype(f"datetime64[{unit}]")
        if values.dtype == object and self._col_name not in self._table._computed_cols:
            return present_values(self._table._column_defs[self._col_name].spec, values)
        return values if values.dtype == self.dtype else values.astype(self.dtype)

    def _timestamp_unit(self) -> str | None:
        col = self._table._column_defs.get(self._col_name)
        if col is None or getattr(col.spec, "kind", None) != "timestamp":
            return None
        return str(col.spec.unit)

    def __getitem__(self, key: Any) -> Any:
        """Values by logical row: an int gives a NumPy scalar, anything else an array."""
        if isinstance(key, int | np.integer) and not isinstance(key, bool | np.bool_):
            n = len(self)
            i = int(key)
            if not -n <= i < n:
                raise BoundsError(f"index {i} is out of bounds for column with size {n}")
            i = i + n if i < 0 else i
            pos = i if self._has_identity_positions() else int(self._resolve_live_positions()[i])
            return self._cast(np.asarray(self._raw_col[pos : pos + 1]))[0]
        if isinstance(key, slice):
            if self._has_identity_positions():  # logical rows are physical: no position scan
                start, stop, step = key.indices(len(self))
                if step == 1:
                    return self._cast(np.asarray(self._raw_col[start : max(start, stop)]))
                return self._read(np.arange(len(self), dtype=np.int64)[key])
            return self._read(self._resolve_live_positions()[key])
        if isinstance(key, tuple) and self.is_ndarray:
            return self._cells_getitem(key)
        if isinstance(key, LazyExpr | NDArray):
            key = np.asarray(key[:])
        arr = np.asarray(key)
        if arr.dtype == np.bool_:
            if arr.shape != (len(self),):
                raise BoundsError(
                    f"Boolean mask length {arr.size} does not match number of live rows "
                    f"{len(self)}."
                )
            return self._read(self._resolve_live_positions()[arr])
        if isinstance(key, list | tuple | np.ndarray | range):
            rows = _check_rows(key, len(self))
            return self._read(self._resolve_live_positions()[rows])
        raise ParamTypeError(f"Invalid index type: {type(key).__name__}")

    def _logical_rows(self, key: Any) -> np.ndarray:
        """The positions (into this column's rows) ``key`` selects."""
        n = len(self)
        if isinstance(key, slice):
            return np.arange(n, dtype=np.int64)[key]
        arr = np.asarray(key)
        if arr.dtype == np.bool_:
            if arr.shape != (n,):
                raise BoundsError(
                    f"Boolean mask length {arr.size} does not match number of live rows {n}."
                )
            return np.flatnonzero(arr)
        return _check_rows(key, n)

    def _view_from_key(self, key: Any) -> Column:
        if not isinstance(key, slice | list | tuple | np.ndarray):
            raise ParamTypeError(
                f"Column.view[] does not support key type {type(key).__name__!r}. "
                "Supported: slice, boolean array, list / integer array."
            )
        chosen = self._resolve_live_positions()[self._logical_rows(key)]
        mask = mask_from_positions(chosen, self._table._physical_len())
        return Column(self._table, self._col_name, mask=mask)

    @property
    def view(self) -> ColumnViewIndexer:
        """``column.view[key]``: a column over the rows ``key`` selects (writes go through)."""
        return ColumnViewIndexer(self)

    def take(self, indices: Any, /) -> Column:
        """The values at logical rows ``indices`` (order and repeats kept), as a column of
        a new table.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row, new_data=[(i,) for i in range(5)])
        >>> t.x.take([4, 0, 4])[:]
        array([4, 0, 4])
        """
        if self.is_computed:
            raise ParamError("Column.take is not supported for computed columns yet.")
        table: Any = self._table
        sub = table.select([self._col_name])
        if self._mask is not None:
            sub = sub._view_from_positions(self._resolve_live_positions())
        return sub.take(indices)[self._col_name]

    def __iter__(self) -> Iterator[Any]:
        for chunk in self.iter_chunks():
            yield from chunk

    def iter_chunks(self, size: int = 65536) -> Iterator[np.ndarray]:
        """The live values, ``size`` at a time (the last chunk may be shorter).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row, new_data=[(i,) for i in range(5)])
        >>> [c.tolist() for c in t.x.iter_chunks(size=2)]
        [[0, 1], [2, 3], [4]]
        """
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ParamError(f"size must be a positive int, got {size!r}")
        n = len(self)
        if self._has_identity_positions():
            raw = self._raw_col
            for start in range(0, n, size):
                yield self._cast(np.asarray(raw[start : min(start + size, n)]))
            return
        positions = self._resolve_live_positions()
        for start in range(0, n, size):
            yield self._read(positions[start : start + size])

    def to_numpy(self, *, masked: bool = False) -> np.ndarray:
        """The live values as a NumPy array (a ``numpy.ma.MaskedArray`` marking the nulls
        with ``masked=True``)."""
        out = np.asarray(self[:])
        return np.ma.MaskedArray(out, mask=self.is_null()) if masked else out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.to_numpy()
        return out if dtype is None else out.astype(dtype)

    # -- writing --------------------------------------------------------------------------
    def __setitem__(self, key: Any, value: Any) -> None:
        table = self._table
        if table._read_only:
            raise ParamError("Table is read-only (opened with mode='r').")
        if table.base is not None:
            raise ParamError(
                "Cannot assign values through a view. Use .take(indices) or .copy() "
                "to get an independent, writable table first."
            )
        if self.is_computed:
            raise ParamError(
                f"Column {self._col_name!r} is a computed column and cannot be written to."
            )
        table._check_writable()
        col = table._column_defs[self._col_name]
        arr = table._cols[self._col_name]
        if isinstance(value, NDArray | LazyExpr):
            value = np.asarray(value[:])
        if isinstance(key, int | np.integer) and not isinstance(key, bool | np.bool_):
            n = len(self)
            i = int(key)
            if not -n <= i < n:
                raise BoundsError(f"index {i} is out of bounds for column with size {n}")
            i = i + n if i < 0 else i
            pos = i if self._has_identity_positions() else int(self._resolve_live_positions()[i])
            checked = to_column(col, [value], bounds=False)
            arr[pos] = np.asarray(checked)[0]
            table._write_nulls(self._col_name, slice(pos, pos + 1), checked)
            table._changed()
            return
        if not isinstance(key, slice | list | tuple | np.ndarray | range):
            raise ParamTypeError(f"Invalid index type: {type(key).__name__}")
        rows = self._logical_rows(key)
        shape = (*rows.shape, *self.item_shape)  # N-d cells: one cell per row
        values = to_column(col, np.broadcast_to(np.asarray(value), shape), bounds=False)
        if (
            self._has_identity_positions()
            and isinstance(key, slice)
            and rows.size
            and key.step in (None, 1)
        ):
            where: slice | np.ndarray = slice(int(rows[0]), int(rows[-1]) + 1)
            arr[where] = np.asarray(values)
        else:
            positions = self._resolve_live_positions()[rows]
            write_positions(arr, positions, np.asarray(values))
            where = positions
        table._write_nulls(self._col_name, where, values)
        table._changed()

    def assign(self, data: Any) -> None:
        """Replace all live values with ``data`` (as many values as live rows).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row, new_data=[(i,) for i in range(3)])
        >>> t.x.assign([7, 8, 9])
        >>> t.x[:]
        array([7, 8, 9])
        """
        if data is None or isinstance(data, str | bytes | int | float | complex | np.generic):
            raise ParamError(  # python-blosc2's words
                f"assign() requires {len(self)} values (live rows), got a single value. "
                "Use col[:] = value to write one value to every row."
            )
        if isinstance(data, NDArray | LazyExpr):
            values = np.asarray(data[:])
        elif is_var(self._spec()):  # Python values kept as they are (b"\x00" is not b"")
            items = list(data)
            values = np.empty(len(items), dtype=object)
            values[:] = items
        else:
            values = np.asarray(list(data))
        if len(values) != len(self):
            raise ParamError(f"assign() requires {len(self)} values (live rows), got {len(values)}")
        self[:] = values

    # -- display --------------------------------------------------------------------------
    @property
    def info_items(self) -> list[tuple[str, object]]:
        """What ``info`` reports, as (name, value) pairs."""
        return column_info_items(self)

    @property
    def info(self) -> InfoReporter:
        """A summary of the column (dtype, rows, storage); call it to print."""
        return InfoReporter(self)

    def __repr__(self) -> str:
        n = len(self)
        shown = self[: self._REPR_PREVIEW_ITEMS + 1]
        if isinstance(shown, list):  # vlstring, vlbytes, dictionary, list reads
            shown = np.array([*shown, None], dtype=object)[:-1]
        more = shown.size > self._REPR_PREVIEW_ITEMS
        shown = shown[: self._REPR_PREVIEW_ITEMS]
        if self.dtype.kind in "biufc" and shown.size:
            preview = np.array2string(shown, separator=", ", max_line_width=10_000)[1:-1]
        else:
            label = list_label(self._spec())  # a list column: its type, not its values
            preview = ", ".join(label or repr(v) for v in shown.tolist())
        if more:
            preview = f"{preview}, ..." if preview else "..."
        return f"Column({self._col_name!r}, dtype={self.dtype}, len={n}, values=[{preview}])"

    # -- expressions ----------------------------------------------------------------------
    def _operand_(self) -> Any:
        """What the compute engine takes for this column: its physical rows."""
        return self._raw_col

    def _operand(self) -> Any:
        if self.dtype.kind in "US":
            raise NotImplementedError(
                f"CTable string column {self._col_name!r} in an arithmetic expression"
            )
        return self._kleene_operand()  # a nullable bool column: three-valued

    @staticmethod
    def _other(other: Any) -> Any:
        return other._kleene_operand() if isinstance(other, Column) else other

    def _compare(self, op: str, other: Any) -> Any:
        return self._kleene_compare(self._compare2(op, other), other)  # nulls: unknown

    def _compare2(self, op: str, other: Any) -> Any:
        if self.is_ndarray:
            raise ParamTypeError(
                f"Cannot compare ndarray column {self._col_name!r} directly; "
                "index an item first (col[:, i])"
            )
        raw = self._raw_col
        right = other._raw_col if isinstance(other, Column) else other
        unit = self._timestamp_unit()
        if unit is not None and not isinstance(other, Column):  # a time: its epoch offset
            right = np.asarray(right).astype(f"datetime64[{unit}]").astype(np.int64)[()]
        if self.dtype.kind in "USTO" or getattr(right, "dtype", np.dtype(int)).kind in "USTO":
            return _string_compare(self, op, other)
        if isinstance(right, str | bytes):
            raise ParamTypeError(
                f"column {self._col_name!r} ({self.dtype}) compared with {right!r}"
            )
        return _OPS[op](raw, right)

    def __lt__(self, other: Any) -> Any:
        return self._compare("<", other)

    def __le__(self, other: Any) -> Any:
        return self._compare("<=", other)

    def __gt__(self, other: Any) -> Any:
        return self._compare(">", other)

    def __ge__(self, other: Any) -> Any:
        return self._compare(">=", other)

    def __eq__(self, other: object) -> Any:
        return self._compare("==", other)

    def __ne__(self, other: object) -> Any:
        return self._compare("!=", other)

    __hash__ = None  # type: ignore[assignment]


_OPS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def _string_compare(col: Column, op: str, other: Any) -> NDArray:
    """A comparison of a fixed-width string column, evaluated now over the physical rows
    (the compute engine's expressions are numeric): a bool NDArray."""
    right = other
    other_spec = other._spec() if isinstance(other, Column) else None
    check_utf8_operand(col._col_name, col._spec(), other, other_spec)
    if isinstance(other, Column):
        right = np.asarray(other._raw_col[:])
    left = np.asarray(col._raw_col[:])
    if isinstance(right, np.ndarray) and right.shape != left.shape:
        n = min(len(left), len(right))
        left, right = left[:n], right[:n]
    specs = [c._table._column_defs.get(c._col_name) for c in (col, other) if isinstance(c, Column)]
    nulls = [getattr(c.spec, "null_value", None) for c in specs if c and is_var(c.spec)]
    return asarray(compare_values(left, op, right, nulls))
